// callback_contract — a hand-coded model that can "forget" one derivative callback at a time
// (-model NAME), run by tests/bad_inputs/cases_callbacks.py. Each forgotten callback used to
// fall back to a default that guessed (identity reset, no p in f or u0, ∂f/∂t = 0) and gave a
// wrong gradient with exit code 0; the library must now refuse it with an error naming the
// callback. "complete" and "f_without_p" are the controls: they must run and give the exact
// gradient.
//
// Model: ẋ = a (ẋ = 1 in f_without_p), x(0) = x0; guard 'ceiling' γ = x − 1 (rising) with the
// reset x⁺ = e·x⁻ + b·t, b = −0.1 (R_u = e, R_t = b, R_e = x⁻); cost J = x(T), T = 1.4 (one
// event: after it x restarts at 0.4). Parameters (a, e, x0) = (1, 0.5, 0):
//   τ = (1 − x0)/a,  J = e + bτ + a(T − τ) = 0.8
//   dJ/da = T − τ − (b − a)(1 − x0)/a² = 1.5,  dJ/de = 1,  dJ/dx0 = (a − b)/a = 1.1
// (f_without_p: J = e + bτ + T − τ, dJ/da = 0, the rest unchanged). Everything lives on rank 0.
#include <hybridsens/hybridsens.hpp>

#include <cstring>
#include <string>

using namespace hybridsens;

namespace {

struct Forgets {
  bool rhsJacobianP = false, initialStateJacobianP = false, hasReset = false, reset = false;
  bool resetAction = false, resetTranspose = false, resetP = false, resetTime = false;
  bool rhsTimeDerivative = false;  // with explicitTime() true
  bool timeEvent = false;          // numTimeEvents() = 1 without timeEvent()
  bool fWithoutP = false;          // f does not read a (the default rhsJacobianP is then right)
};

// Calling the base class is exactly "not overriding": the library's default runs.
class Ceiling : public HybridModel {
public:
  explicit Ceiling(Forgets f) : f_(f) { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  PetscInt localSize() const override { return rank_ == 0 ? 1 : 0; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 0.5, 0.0}; }
  std::vector<std::string> parameterNames() const override { return {"a", "e", "x0"}; }

  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override { return setFirst(u0, c.p[2]); }
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const override {
    if (f_.initialStateJacobianP) return HybridModel::initialStateJacobianP(c, du0dp);
    return setEntry(du0dp, 2, 1.0);
  }
  PetscErrorCode rhs(PetscReal, Vec, const ModeContext &c, Vec f) const override { return setFirst(f, f_.fWithoutP ? 1.0 : c.p[0]); }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &, Mat) const override { return 0; }
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const override {
    if (f_.rhsJacobianP || f_.fWithoutP) return HybridModel::rhsJacobianP(t, u, c, Jp);
    return setEntry(Jp, 0, 1.0);
  }
  bool explicitTime() const override { return f_.rhsTimeDerivative; }
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const override {
    return HybridModel::rhsTimeDerivative(t, u, c, ft);  // only called in the variant that forgets it
  }

  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"ceiling", Direction::Rising}; }
  PetscInt numTimeEvents() const override { return f_.timeEvent ? 1 : 0; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    PetscScalar x;
    PetscFunctionBeginUser;
    PetscCall(first(u, &x));
    if (rank_ == 0) g[0] = x - 1.0;
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    *gt = 0;
    return setFirst(gu, 1.0);
  }

  bool hasReset(const EventId &id) const override { return f_.hasReset ? HybridModel::hasReset(id) : true; }
  PetscErrorCode reset(const EventId &id, PetscReal t, Vec um, const ModeContext &c, Vec up) const override {
    PetscScalar x;
    PetscFunctionBeginUser;
    if (f_.reset) return HybridModel::reset(id, t, um, c, up);
    PetscCall(first(um, &x));
    PetscCall(setFirst(up, c.p[1] * x + kB * t));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec um, const ModeContext &c, Vec v, Vec out) const override {
    if (f_.resetAction) return HybridModel::resetJacobianAction(id, t, um, c, v, out);
    return scaled(v, c.p[1], out);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec um, const ModeContext &c, Vec w,
                                              Vec out) const override {
    if (f_.resetTranspose) return HybridModel::resetJacobianTransposeAction(id, t, um, c, w, out);
    return scaled(w, c.p[1], out);
  }
  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec um, const ModeContext &c, Mat Rp) const override {
    PetscScalar x;
    PetscFunctionBeginUser;
    if (f_.resetP) return HybridModel::resetJacobianP(id, t, um, c, Rp);
    PetscCall(first(um, &x));
    PetscCall(setEntry(Rp, 1, x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec um, const ModeContext &c, Vec Rt) const override {
    if (f_.resetTime) return HybridModel::resetTimeDerivative(id, t, um, c, Rt);
    return setFirst(Rt, kB);
  }

private:
  static constexpr PetscReal kB = -0.1;  // ∂R/∂t: the reset depends on the event time

  PetscErrorCode first(Vec v, PetscScalar *x) const {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(v, &a));
    *x = rank_ == 0 ? a[0] : 0.0;
    PetscCall(VecRestoreArrayRead(v, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode setFirst(Vec v, PetscScalar x) const {
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(v, &a));
    if (rank_ == 0) a[0] = x;
    PetscCall(VecRestoreArray(v, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode setEntry(Mat M, PetscInt col, PetscScalar value) const {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(M, 0, col, value, INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  static PetscErrorCode scaled(Vec v, PetscScalar s, Vec out) {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(v, out));
    PetscCall(VecScale(out, s));
    PetscFunctionReturn(0);
  }

  Forgets f_;
  PetscMPIInt rank_ = 0;
};

class FinalX : public CostFunction {
public:
  FinalX() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  std::string name() const override { return "x_T"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    if (rank_ == 0) *v = a[0];
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(psi_u, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(psi_u));
    PetscCall(VecAssemblyEnd(psi_u));
    PetscFunctionReturn(0);
  }

private:
  PetscMPIInt rank_ = 0;
};

PetscErrorCode parseVariant(const char *name, Forgets *f) {
  PetscFunctionBeginUser;
  const std::string v = name;
  if (v == "complete") {
  } else if (v == "f_without_p") f->fWithoutP = true;
  else if (v == "no_rhs_jacobian_p") f->rhsJacobianP = true;
  else if (v == "no_initial_state_jacobian_p") f->initialStateJacobianP = true;
  else if (v == "no_has_reset") f->hasReset = true;
  else if (v == "no_reset") f->reset = true;
  else if (v == "no_reset_jacobian_action") f->resetAction = true;
  else if (v == "no_reset_jacobian_transpose_action") f->resetTranspose = true;
  else if (v == "no_reset_jacobian_p") f->resetP = true;
  else if (v == "no_reset_time_derivative") f->resetTime = true;
  else if (v == "no_rhs_time_derivative") f->rhsTimeDerivative = true;
  else if (v == "no_time_event") f->timeEvent = true;
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-model %s: unknown variant", name);
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "A model forgetting one derivative callback (-model NAME).\n"));
  {
    char name[64] = "complete";
    Forgets forgets;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-model", name, sizeof(name), nullptr));
    PetscCall(parseVariant(name, &forgets));
    Ceiling model(forgets);
    FinalX cost;
    Solver solver(model);
    solver.addCost(cost);
    PetscCall(solver.setFromOptions());
    TS ts = solver.ts();
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK4));
    PetscCall(TSSetTimeStep(ts, 0.05));
    PetscCall(TSSetMaxTime(ts, 1.4));
    PetscCall(solver.setFromOptions());
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();
    const std::vector<const char *> names = {"a", "e", "x0"};
    const std::vector<double> expected = {forgets.fWithoutP ? 0.0 : 1.5, 1.0, 1.1};
    PetscScalar xT;
    PetscCall(globalEntry(result.finalState(), 0, &xT));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "callback_contract %s: x(T) = %.17g (exact 0.8), %zu events\n", name, (double)xT,
                          result.events().size()));
    for (size_t k = 0; k < names.size(); ++k) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "exact dJ/d%s = %.17g\n", names[k], expected[k]));
      if (result.forwardComputed)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "forward dJ/d%s = %.17g\n", names[k], (double)result.gradient[0].forwardP[k]));
      if (result.adjointComputed)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adjoint dJ/d%s = %.17g\n", names[k], (double)result.gradient[0].adjointP[k]));
    }
  }
  PetscCall(PetscFinalize());
  return 0;
}
