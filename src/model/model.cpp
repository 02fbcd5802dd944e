// Default behaviour of a HybridModel: no parameters, no events, no resets. A default derivative
// either refuses (the model declared the function, it must differentiate it) or verifies the
// "does not depend on it" it stands for (model.hpp, "Derivative callbacks and their defaults").
#include "hybridsens/model.hpp"

#include "util/user_call.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace hybridsens {

namespace {

// The parameter probe: all entries perturbed at once by a relative 1e-3 (1e-3 for a zero
// entry), each by a slightly different factor so that effects of two parameters on one row do
// not cancel by symmetry; only entry `only` when only >= 0 (used to name the culprit).
PetscReal probeStep(const std::vector<PetscReal> &p, size_t i) {
  const PetscReal size = p[i] != 0 ? std::fabs(p[i]) : 1;
  return 1e-3 * size * (1 + (PetscReal)i / (2 * (PetscReal)p.size()));
}

std::vector<PetscReal> perturbed(const std::vector<PetscReal> &p, PetscInt only) {
  std::vector<PetscReal> q = p;
  for (size_t i = 0; i < p.size(); ++i)
    if (only < 0 || (PetscInt)i == only) q[i] += probeStep(p, i);
  return q;
}

// An evaluation F(p) into a Vec laid out like u, made by the probe at p and at perturbed p.
using ParameterFunction = std::function<PetscErrorCode(const std::vector<PetscReal> &, Vec)>;

// max |F(p') - F(p)| over the rows not in `ignoredRows` (global indices owned by this rank);
// exact: a function that does not read p returns bit-identical values. Collective.
PetscErrorCode changeUnderPerturbation(Vec like, const std::vector<PetscReal> &p, PetscInt only, const ParameterFunction &F,
                                       const std::vector<PetscInt> &ignoredRows, PetscReal *change) {
  Vec a, b;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(like, &a));
  PetscCall(VecDuplicate(like, &b));
  PetscCall(VecZeroEntries(a));
  PetscCall(VecZeroEntries(b));
  PetscCall(F(p, a));
  PetscCall(F(perturbed(p, only), b));
  PetscCall(VecAXPY(b, -1.0, a));
  if (!ignoredRows.empty()) {
    PetscInt lo;
    PetscScalar *d;
    PetscCall(VecGetOwnershipRange(b, &lo, nullptr));
    PetscCall(VecGetArray(b, &d));
    for (PetscInt i : ignoredRows) d[i - lo] = 0;
    PetscCall(VecRestoreArray(b, &d));
  }
  PetscCall(VecNorm(b, NORM_INFINITY, change));
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

// Refuses a default that assumed F has no p when F changes with p; names the first parameter
// that changes it alone (the search runs only on the error path). Collective.
PetscErrorCode refuseParameterDependence(MPI_Comm comm, Vec like, const std::vector<PetscReal> &p,
                                         const std::vector<std::string> &names, const ParameterFunction &F,
                                         const std::vector<PetscInt> &ignoredRows, const char *what, const char *callback,
                                         const std::string &where) {
  PetscReal change;
  PetscFunctionBeginUser;
  if (p.empty()) PetscFunctionReturn(0);
  PetscCall(changeUnderPerturbation(like, p, -1, F, ignoredRows, &change));
  if (change == 0) PetscFunctionReturn(0);
  std::string culprit = "all parameters together";
  for (size_t i = 0; i < p.size(); ++i) {
    PetscReal ci;
    PetscCall(changeUnderPerturbation(like, p, (PetscInt)i, F, ignoredRows, &ci));
    if (ci != 0) {
      culprit = "parameter '" + (i < names.size() ? names[i] : "p" + std::to_string(i)) + "'";
      change = ci;
      break;
    }
  }
  SETERRQ(comm, PETSC_ERR_USER_INPUT,
          "%s depends on the parameters (it changes by %g when %s is perturbed by a relative 1e-3%s), but the model does "
          "not override %s(), whose default assumes no dependence: override HybridModel::%s() (the derivative enters "
          "every parameter sensitivity)",
          what, (double)change, culprit.c_str(), where.c_str(), callback, callback);
}

} // namespace

std::vector<std::string> HybridModel::parameterNames() const {
  std::vector<std::string> names;
  const auto p = defaultParameters();
  for (size_t i = 0; i < p.size(); ++i) names.push_back("p" + std::to_string(i));
  return names;
}

PetscErrorCode HybridModel::initialStateJacobianP(const ModeContext &c, Mat du0dp) const {
  Vec like;
  PetscFunctionBeginUser;
  if (c.p.empty()) PetscFunctionReturn(0);
  PetscCall(MatCreateVecs(du0dp, nullptr, &like));
  // For a DAE only the differential rows of u0 matter (the engine solves for the algebraic ones).
  const std::vector<PetscInt> algebraic = algebraicIndices();
  const ParameterFunction u0 = [&](const std::vector<PetscReal> &p, Vec out) -> PetscErrorCode {
    PetscFunctionBeginUser;
    HS_USER_CALL(comm(), "initialState", initialState({p, c.d}, out));
    PetscFunctionReturn(0);
  };
  PetscCall(refuseParameterDependence(comm(), like, c.p, parameterNames(), u0, algebraic, "the initial state u0",
                                      "initialStateJacobianP", ""));
  PetscCall(VecDestroy(&like));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::initialStateJacobianPTranspose(const ModeContext &c, const std::vector<Vec> &w,
                                                           std::vector<std::vector<PetscScalar>> &outP) const {
  const PetscInt np = (PetscInt)c.p.size(), n = localSize();
  Mat M;
  PetscInt lda;
  const PetscScalar *a;
  PetscFunctionBeginUser;
  outP.assign(w.size(), std::vector<PetscScalar>(np, 0.0));
  if (!np) PetscFunctionReturn(0);
  PetscCall(MatCreateDense(comm(), n, PETSC_DECIDE, PETSC_DETERMINE, np, nullptr, &M));
  PetscCall(MatZeroEntries(M));
  PetscCall(initialStateJacobianP(c, M));
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatDenseGetLDA(M, &lda));
  PetscCall(MatDenseGetArrayRead(M, &a));  // this rank's rows, all np columns
  for (size_t k = 0; k < w.size(); ++k) {
    const PetscScalar *wk;
    PetscCall(VecGetArrayRead(w[k], &wk));
    for (PetscInt j = 0; j < np; ++j)
      for (PetscInt i = 0; i < n; ++i) outP[k][j] += a[i + j * lda] * wk[i];
    PetscCall(VecRestoreArrayRead(w[k], &wk));
  }
  PetscCall(MatDenseRestoreArrayRead(M, &a));
  PetscCall(MatDestroy(&M));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat) const {
  PetscFunctionBeginUser;
  PetscCall(checkRhsIndependentOfParameters(t, u, c));
  PetscFunctionReturn(0);
}

// Once per (p, d): rhsJacobianP is called at every step (and stage), the probe costs two rhs
// evaluations. The memo is the same on every rank (p and d are replicated), so all ranks probe
// together.
PetscErrorCode HybridModel::checkRhsIndependentOfParameters(PetscReal t, Vec u, const ModeContext &c) const {
  PetscFunctionBeginUser;
  if (c.p.empty()) PetscFunctionReturn(0);
  if (probedParameters_ != c.p) {
    probedParameters_ = c.p;
    probedModes_.clear();
  }
  if (std::find(probedModes_.begin(), probedModes_.end(), c.d) != probedModes_.end()) PetscFunctionReturn(0);
  const ParameterFunction f = [&](const std::vector<PetscReal> &p, Vec out) -> PetscErrorCode {
    PetscFunctionBeginUser;
    HS_USER_CALL(comm(), "rhs", rhs(t, u, {p, c.d}, out));
    PetscFunctionReturn(0);
  };
  std::ostringstream where;
  where.precision(17);
  where << " at t = " << t << " in discrete state " << describe(c.d);
  PetscCall(refuseParameterDependence(comm(), u, c.p, parameterNames(), f, {}, "the right-hand side f", "rhsJacobianP",
                                      where.str()));
  probedModes_.push_back(c.d);
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::createParameterJacobian(PetscInt, Mat *Jp) const {
  *Jp = nullptr;
  return 0;
}

PetscErrorCode HybridModel::rhsTimeDerivative(PetscReal, Vec, const ModeContext &, Vec) const {
  SETERRQ(comm(), PETSC_ERR_SUP,
          "explicitTime() is true but the model does not implement rhsTimeDerivative() (∂f/∂t enters the event derivatives)");
}

PetscErrorCode HybridModel::createJacobian(Mat *J) const {
  PetscInt n = localSize(), N;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&n, &N, 1, MPIU_INT, MPI_SUM, comm()));
  PetscCall(MatCreateAIJ(comm(), n, n, N, N, n, nullptr, N - n, nullptr, J));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscFunctionReturn(0);
}

GuardInfo HybridModel::guardInfo(PetscInt j) const { return {"guard" + std::to_string(j), Direction::Both}; }

bool HybridModel::guardActive(PetscInt, const DiscreteState &) const { return true; }

PetscErrorCode HybridModel::guards(PetscReal, Vec, const ModeContext &, PetscScalar *) const { return 0; }

PetscErrorCode HybridModel::guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec, PetscScalar *,
                                          PetscScalar *) const {
  SETERRQ(comm(), PETSC_ERR_SUP, "Model declares guard %" PetscInt_FMT " but does not implement guardGradient()", j);
}

PetscErrorCode HybridModel::guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec work, PetscScalar *rates) const {
  const PetscInt ng = numGuards();
  std::vector<PetscScalar> gp(c.p.size());
  PetscInt nl;
  const PetscScalar *ud;
  PetscFunctionBeginUser;
  if (!ng) PetscFunctionReturn(0);
  PetscCall(VecGetLocalSize(u, &nl));
  PetscCall(VecGetArrayRead(udot, &ud));
  for (PetscInt j = 0; j < ng; ++j) {
    if (!guardActive(j, c.d)) continue;
    const PetscScalar *g;
    PetscScalar gt = 0, dot = 0;
    std::fill(gp.begin(), gp.end(), 0.0);
    PetscCall(VecZeroEntries(work));
    PetscCall(guardGradient(j, t, u, c, work, &gt, gp.empty() ? nullptr : gp.data()));
    PetscCall(VecGetArrayRead(work, &g));
    // This rank's part of γ_u·u̇ over the entries the guard depends on: u̇ entries it does not
    // read stay out (the engine probes with ẏ = NaN, see GuardEvaluator::rates).
    for (PetscInt i = 0; i < nl; ++i)
      if (g[i] != 0) dot += g[i] * ud[i];
    PetscCall(VecRestoreArrayRead(work, &g));
    rates[j] = gt + dot;
  }
  PetscCall(VecRestoreArrayRead(udot, &ud));
  PetscFunctionReturn(0);
}

// Called only for k < numTimeEvents(): a model that declares time events must say when they
// fire (a default time would silently move or drop the event). The engine calls it inside a
// try block and turns the exception into a PETSc error naming timeEvent.
TimeEventInfo HybridModel::timeEvent(PetscInt k, const std::vector<PetscReal> &) const {
  throw std::logic_error("numTimeEvents() is " + std::to_string(numTimeEvents()) + " but the model does not override timeEvent() (asked for time event " +
                         std::to_string(k) + ")");
}

PetscErrorCode HybridModel::transition(const EventId &, PetscReal, Vec, DiscreteState &) const { return 0; }

bool HybridModel::hasReset(const EventId &) const {
  markDefaultUsed(DefaultCallback::HasReset);
  return false;
}

PetscErrorCode HybridModel::reset(const EventId &, PetscReal, Vec uminus, const ModeContext &, Vec uplus) const {
  PetscFunctionBeginUser;
  markDefaultUsed(DefaultCallback::Reset);
  PetscCall(VecCopy(uminus, uplus));
  PetscFunctionReturn(0);
}

// The reset derivatives are called only when hasReset(id) is true: the identity/zero a default
// would return is exactly the wrong gradient of a forgotten derivative.
static PetscErrorCode missingResetDerivative(const HybridModel &m, const EventId &id, const ModeContext &c, const char *callback,
                                             const char *what) {
  SETERRQ(m.comm(), PETSC_ERR_SUP,
          "hasReset() is true for event '%s' but the model does not implement %s() (%s of its reset); every model with a "
          "reset implements resetJacobianAction, resetJacobianTransposeAction, resetJacobianP and resetTimeDerivative",
          m.eventName(id, c.p).c_str(), callback, what);
}

PetscErrorCode HybridModel::resetJacobianAction(const EventId &id, PetscReal, Vec, const ModeContext &c, Vec, Vec) const {
  return missingResetDerivative(*this, id, c, "resetJacobianAction", "R_u v");
}

PetscErrorCode HybridModel::resetJacobianTransposeAction(const EventId &id, PetscReal, Vec, const ModeContext &c, Vec, Vec) const {
  return missingResetDerivative(*this, id, c, "resetJacobianTransposeAction", "R_u^T w");
}

PetscErrorCode HybridModel::resetJacobianP(const EventId &id, PetscReal, Vec, const ModeContext &c, Mat) const {
  return missingResetDerivative(*this, id, c, "resetJacobianP", "R_p");
}

PetscErrorCode HybridModel::resetTimeDerivative(const EventId &id, PetscReal, Vec, const ModeContext &c, Vec) const {
  return missingResetDerivative(*this, id, c, "resetTimeDerivative", "R_t");
}

std::string HybridModel::eventName(const EventId &id, const std::vector<PetscReal> &p) const {
  return id.kind == EventId::Guard ? guardInfo(id.index).name : timeEvent(id.index, p).name;
}

std::string describe(const DiscreteState &d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << "]";
  return os.str();
}

} // namespace hybridsens
