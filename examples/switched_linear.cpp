// switched_linear — the switched linear system of Hiskens & Pai (docs/validation.md, [Zhang2017]
// §V.A; PETSc's src/ts/tutorials/hybrid/ex1.c is the same model with hand-coded events).
//
// Model:  u̇ = A_d u,  d ∈ {1, 2},
//   A_1 = [ 1  -100 ]      A_2 = [    1  10 ]
//         [10     1 ]            [ -100   1 ]
// Guards (either crossing direction, as in ex1.c):
//   d = 1:  γ_0 = u_1 - p_0 u_0   (p_0 = 2.75)  → d = 2
//   d = 2:  γ_1 = u_1 - p_1 u_0   (p_1 = 0.36)  → d = 1
// u(0) = (0, 1), d(0) = 1, T = 0.125, Crank–Nicolson with dt = 1/256 by default.
// The parameters appear only in the guards: their influence on u(T) comes entirely from the
// event-time sensitivities (the jump conditions of docs/theory.md §3).
// Costs: J_0 = x_0(T) and J_1 = x_1(T). With -hs_forward the tangent-linear model gives
// dJ/dp (through the event-time terms τ_p = -(γ_u S⁻ + γ_p)/D) and dJ/du0.
//
// Run:
//   build/examples/switched_linear -hs_monitor
//   build/examples/switched_linear -ts_type rk -ts_rk_type 4 -ts_dt 1e-4 -hs_summary out.json
//   build/examples/switched_linear -p0 2.5 -ts_max_time 0.2 -ts_monitor
//   build/examples/switched_linear -hs_forward          (gradients of x(T) w.r.t. p and u0)
//   build/examples/switched_linear -hs_adjoint -hs_forward   (discrete adjoint, compared)
// Options: -p0, -p1 (the switching slopes, finite; -help lists them with their defaults).
// Prints the event list, the final state and, with -hs_forward, the gradient table.
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

using namespace hybridsens;

class SwitchedLinear : public HybridModel {
public:
  SwitchedLinear() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  // The whole (two-entry) state lives on rank 0; other ranks own nothing.
  PetscInt localSize() const override { return rank_ == 0 ? 2 : 0; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  std::vector<PetscReal> defaultParameters() const override { return {2.75, 0.36}; }
  std::vector<std::string> parameterNames() const override { return {"p0_switch_1_to_2", "p1_switch_2_to_1"}; }

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecSetValue(u0, 0, 0.0, INSERT_VALUES));
      PetscCall(VecSetValue(u0, 1, 1.0, INSERT_VALUES));
    }
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }

  static void matrix(PetscInt mode, PetscScalar A[2][2]) {
    const PetscScalar A1[2][2] = {{1, -100}, {10, 1}}, A2[2][2] = {{1, 10}, {-100, 1}};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) A[i][j] = mode == 1 ? A1[i][j] : A2[i][j];
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    PetscFunctionBeginUser;
    PetscCall(MatMultWithMode(c.d[0], u, f));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscScalar A[2][2];
    const PetscInt idx[2] = {0, 1};
    PetscFunctionBeginUser;
    matrix(c.d[0], A);
    if (rank_ == 0) PetscCall(MatSetValues(J, 2, idx, 2, idx, &A[0][0], INSERT_VALUES));
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override {
    return {j == 0 ? "switch_1_to_2" : "switch_2_to_1", Direction::Both};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j + 1; }

  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecGetArrayRead(u, &x));
      g[0] = x[1] - c.p[0] * x[0];
      g[1] = x[1] - c.p[1] * x[0];
      PetscCall(VecRestoreArrayRead(u, &x));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt j, PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecGetArrayRead(u, &x));
      PetscCall(VecSetValue(gu, 0, -c.p[j], INSERT_VALUES));
      PetscCall(VecSetValue(gu, 1, 1.0, INSERT_VALUES));
      gp[j] = -x[0];
      PetscCall(VecRestoreArrayRead(u, &x));
    }
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }

  // ġ_j = γ_u·u̇ straight from u̇ (the same arithmetic as the default, which goes through
  // guardGradient: a vector assembly per guard, collective, at every step end).
  PetscErrorCode guardRates(PetscReal, Vec, Vec udot, const ModeContext &c, Vec, PetscScalar *r) const override {
    const PetscScalar *xd;
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecGetArrayRead(udot, &xd));
      for (PetscInt j = 0; j < 2; ++j)
        if (guardActive(j, c.d)) r[j] = -c.p[j] * xd[0] + xd[1];
      PetscCall(VecRestoreArrayRead(udot, &xd));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = id.index == 0 ? 2 : 1;
    return 0;
  }

private:
  PetscErrorCode MatMultWithMode(PetscInt mode, Vec u, Vec f) const {
    PetscScalar A[2][2];
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    matrix(mode, A);
    // Get/Restore on every rank (they are collective in effect: they bump the object state).
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    if (rank_ == 0) {
      y[0] = A[0][0] * x[0] + A[0][1] * x[1];
      y[1] = A[1][0] * x[0] + A[1][1] * x[1];
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscMPIInt rank_ = 0;
};

// J = x_i(T): the state component itself, read on the rank that owns it.
class ComponentAtFinalTime : public CostFunction {
public:
  explicit ComponentAtFinalTime(PetscInt i) : i_(i) {}
  std::string name() const override { return "x" + std::to_string(i_) + "(T)"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override { return readOwned(u, i_, value); }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    return writeOwned(psi_u, i_, 1.0);
  }

private:
  PetscInt i_;
};

// tests/test_ad_examples.cpp includes this file (without main) to reuse the hand-coded model
// and cost as the oracle of their AD versions.
#ifndef HYBRIDSENS_EXAMPLE_NO_MAIN
int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Switched linear system (Hiskens & Pai) with hybridsens.\n"));
  {
    SwitchedLinear model;
    Solver solver(model);
    ComponentAtFinalTime x0(0), x1(1);
    solver.addCost(x0);
    solver.addCost(x1);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Switched linear system options", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-p0", "slope p0 of the switching line u1 = p0 u0 (mode 1 to 2)", &p[0]));
    PetscCall(examples::realOption(PetscOptionsObject, "-p1", "slope p1 of the switching line u1 = p1 u0 (mode 2 to 1)", &p[1]));
    PetscOptionsEnd();
    PetscCall(solver.setParameters(p));
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, 1.0 / 256.0));
    PetscCall(TSSetMaxTime(ts, 0.125));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "switched_linear: p = (%g, %g), %zu events\n", (double)p[0], (double)p[1],
                          result.events().size()));
    for (const auto &e : result.events().records())
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.12f  %-14s mode %s -> %s\n", (double)e.time, e.name.c_str(),
                            describe(e.before).c_str(), describe(e.after).c_str()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final state at t = %g:\n", (double)result.finalTime));
    PetscCall(VecView(result.finalState(), PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
#endif
