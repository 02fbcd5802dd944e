// Peer: the Hessian of hybridsens against PETSc 3.18's own second-order adjoint
// (TSSetCostHessianProducts + TSAdjointSetForward + TSSetRHSHessianProduct, the pattern of
// PETSc's ts/tutorials/ex20opt_p.c), on the van der Pol problem of that tutorial:
//   u0' = u1,  u1' = μ ((1 − u0²) u1 − u0),  u(0) = (2, −2/3),  T = 0.5,
//   J(μ) = |u(T) − ob|², ob = (1.9, −0.7)  (residual not zero, so λ-terms matter),
// with the same integrator and step in both codes: RK4 at μ = 10, dt = 0.01, and
// Crank–Nicolson at μ = 100, dt = 0.01 (the tutorial's test configurations).
// Printed per method: d²J/dμ² by PETSc, by hybridsens (forward-over-adjoint and hybrid), and
// by central differences of hybridsens' adjoint gradient (Richardson), and the gradients.
// Exit status: nonzero if hybridsens disagrees with its finite differences (≤ 1e-7) or, for
// RK4, with PETSc (≤ 1e-10; PETSc's RK second-order adjoint is believed correct without
// quadratures). PETSc's Crank–Nicolson result is reported, not asserted (docs/petsc-3.18.md §7:
// its theta second-order adjoint reads the tangent history one step off).
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cmath>
#include <cstring>

using namespace hybridsens;

namespace {

const PetscReal kOb[2] = {1.9, -0.7};

// ---- PETSc side ---------------------------------------------------------------------------

struct Peer {
  PetscReal mu;
};

PetscErrorCode RHS(TS, PetscReal, Vec U, Vec F, void *ctx) {
  const PetscReal mu = static_cast<Peer *>(ctx)->mu;
  const PetscScalar *u;
  PetscScalar *f;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(U, &u));
  PetscCall(VecGetArray(F, &f));
  f[0] = u[1];
  f[1] = mu * ((1 - u[0] * u[0]) * u[1] - u[0]);
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscFunctionReturn(0);
}

PetscErrorCode Jac(TS, PetscReal, Vec U, Mat A, Mat, void *ctx) {
  const PetscReal mu = static_cast<Peer *>(ctx)->mu;
  const PetscScalar *u;
  const PetscInt idx[2] = {0, 1};
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(U, &u));
  const PetscScalar a[4] = {0, 1, mu * (-2 * u[0] * u[1] - 1), mu * (1 - u[0] * u[0])};
  PetscCall(MatSetValues(A, 2, idx, 2, idx, a, INSERT_VALUES));
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode JacP(TS, PetscReal, Vec U, Mat A, void *) {
  const PetscScalar *u;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(U, &u));
  PetscCall(MatSetValue(A, 0, 0, 0.0, INSERT_VALUES));
  PetscCall(MatSetValue(A, 1, 0, (1 - u[0] * u[0]) * u[1] - u[0], INSERT_VALUES));
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

// The second derivatives of h = w·f (w = Vl[0]) applied to Vr, in PETSc's four blocks:
// h_u0u0 = −2 w1 μ u1, h_u0u1 = −2 w1 μ u0, h_u1u1 = 0; h_u0μ = w1 (−2 u0 u1 − 1), h_u1μ = w1 (1 − u0²); h_μμ = 0.
struct Second {
  PetscReal uu[2][2], up[2];
};
static Second second(PetscReal mu, const PetscScalar *u, const PetscScalar *w) {
  Second s;
  s.uu[0][0] = -2 * w[1] * mu * u[1], s.uu[0][1] = s.uu[1][0] = -2 * w[1] * mu * u[0], s.uu[1][1] = 0;
  s.up[0] = w[1] * (-2 * u[0] * u[1] - 1), s.up[1] = w[1] * (1 - u[0] * u[0]);
  return s;
}

template <int Kind> PetscErrorCode HessProd(TS, PetscReal, Vec U, Vec *Vl, Vec Vr, Vec *VHV, void *ctx) {
  const PetscReal mu = static_cast<Peer *>(ctx)->mu;
  const PetscScalar *u, *w, *v;
  PetscScalar *out;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(U, &u));
  PetscCall(VecGetArrayRead(Vl[0], &w));
  PetscCall(VecGetArrayRead(Vr, &v));
  PetscCall(VecGetArray(VHV[0], &out));
  const Second s = second(mu, u, w);
  if (Kind == 0) out[0] = s.uu[0][0] * v[0] + s.uu[0][1] * v[1], out[1] = s.uu[1][0] * v[0] + s.uu[1][1] * v[1];  // uu
  if (Kind == 1) out[0] = s.up[0] * v[0], out[1] = s.up[1] * v[0];                                                 // up (v: 1 entry)
  if (Kind == 2) out[0] = s.up[0] * v[0] + s.up[1] * v[1];                                                         // pu
  if (Kind == 3) out[0] = 0;                                                                                       // pp
  PetscCall(VecRestoreArray(VHV[0], &out));
  PetscCall(VecRestoreArrayRead(Vr, &v));
  PetscCall(VecRestoreArrayRead(Vl[0], &w));
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscFunctionReturn(0);
}

// d²J/dμ² (and dJ/dμ) by PETSc's second-order adjoint.
PetscErrorCode petscHessian(const char *type, PetscReal mu, PetscReal dt, PetscReal *H, PetscReal *g) {
  Peer ctx{mu};
  TS ts;
  Mat A, Jp, S;
  Vec U, lam, lam2, m, m2, dir, ws[4];
  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, 2, 2, nullptr, &A));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, 2, 1, nullptr, &Jp));
  PetscCall(MatCreateVecs(A, &U, nullptr));
  PetscCall(VecDuplicate(U, &lam));
  PetscCall(VecDuplicate(U, &lam2));
  PetscCall(VecDuplicate(U, &ws[0]));
  PetscCall(VecDuplicate(U, &ws[1]));
  PetscCall(MatCreateVecs(Jp, &m, nullptr));
  PetscCall(VecDuplicate(m, &m2));
  PetscCall(VecDuplicate(m, &dir));
  PetscCall(VecDuplicate(m, &ws[2]));
  PetscCall(VecDuplicate(m, &ws[3]));
  PetscCall(TSCreate(PETSC_COMM_SELF, &ts));
  PetscCall(TSSetOptionsPrefix(ts, "peer_"));
  PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
  PetscCall(TSSetRHSFunction(ts, nullptr, RHS, &ctx));
  PetscCall(TSSetRHSJacobian(ts, A, A, Jac, &ctx));
  PetscCall(TSSetRHSJacobianP(ts, Jp, JacP, &ctx));
  PetscCall(TSSetType(ts, type));
  if (!std::strcmp(type, TSRK)) PetscCall(TSRKSetType(ts, TSRK4));
  PetscCall(TSSetTimeStep(ts, dt));
  PetscCall(TSSetMaxTime(ts, 0.5));
  PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_MATCHSTEP));
  {
    SNES snes;
    KSP ksp;
    PC pc;
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESSetTolerances(snes, 1e-12, 1e-12, 0, 50, 1000));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCLU));
  }
  PetscCall(TSSetSaveTrajectory(ts));
  PetscCall(VecSetValue(U, 0, 2.0, INSERT_VALUES));
  PetscCall(VecSetValue(U, 1, -2.0 / 3.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(U));
  PetscCall(VecAssemblyEnd(U));
  PetscCall(TSSetSolution(ts, U));  // TSAdjointSetForward sizes its tangent from it
  PetscCall(VecSet(dir, 1.0));
  PetscCall(TSSetCostHessianProducts(ts, 1, &lam2, &m2, dir));
  PetscCall(TSAdjointSetForward(ts, nullptr));  // u(0) does not depend on μ: the tangent starts at 0
  PetscCall(TSSetFromOptions(ts));
  PetscCall(TSSolve(ts, U));
  // λ(T) = ψ_u = 2 (u − ob), μ(T) = 0; λ2(T) = ψ_uu S dir = 2 S(T), μ2(T) = 0.
  const PetscScalar *u, *s;
  PetscCall(TSForwardGetSensitivities(ts, nullptr, &S));
  PetscCall(VecGetArrayRead(U, &u));
  PetscCall(MatDenseGetArrayRead(S, &s));
  PetscCall(VecSetValue(lam, 0, 2 * (u[0] - kOb[0]), INSERT_VALUES));
  PetscCall(VecSetValue(lam, 1, 2 * (u[1] - kOb[1]), INSERT_VALUES));
  PetscCall(VecSetValue(lam2, 0, 2 * s[0], INSERT_VALUES));
  PetscCall(VecSetValue(lam2, 1, 2 * s[1], INSERT_VALUES));
  PetscCall(MatDenseRestoreArrayRead(S, &s));
  PetscCall(VecRestoreArrayRead(U, &u));
  for (Vec v : {lam, lam2}) {
    PetscCall(VecAssemblyBegin(v));
    PetscCall(VecAssemblyEnd(v));
  }
  PetscCall(VecSet(m, 0.0));
  PetscCall(VecSet(m2, 0.0));
  PetscCall(TSSetCostGradients(ts, 1, &lam, &m));
  PetscCall(TSSetRHSHessianProduct(ts, &ws[0], HessProd<0>, &ws[1], HessProd<1>, &ws[2], HessProd<2>, &ws[3], HessProd<3>, &ctx));
  PetscCall(TSAdjointSolve(ts));
  const PetscScalar *a;
  PetscCall(VecGetArrayRead(m2, &a));
  *H = a[0];
  PetscCall(VecRestoreArrayRead(m2, &a));
  PetscCall(VecGetArrayRead(m, &a));
  *g = a[0];
  PetscCall(VecRestoreArrayRead(m, &a));
  PetscCall(TSDestroy(&ts));
  for (Vec *v : {&U, &lam, &lam2, &m, &m2, &dir, &ws[0], &ws[1], &ws[2], &ws[3]}) PetscCall(VecDestroy(v));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Jp));
  PetscFunctionReturn(0);
}

// ---- hybridsens side ----------------------------------------------------------------------

class VanDerPol : public HybridModel, public SecondOrderModel {
public:
  explicit VanDerPol(PetscReal mu) : mu_(mu) {}
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }
  PetscInt localSize() const override { return 2; }
  std::vector<PetscReal> defaultParameters() const override { return {mu_}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscFunctionBeginUser;
    PetscCall(VecSetValue(u0, 0, 2.0, INSERT_VALUES));
    PetscCall(VecSetValue(u0, 1, -2.0 / 3.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const override {
    Peer ctx{c.p[0]};
    return RHS(nullptr, t, u, f, &ctx);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    const PetscInt idx[2] = {0, 1};
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    const PetscScalar a[4] = {0, 1, c.p[0] * (-2 * x[0] * x[1] - 1), c.p[0] * (1 - x[0] * x[0])};
    PetscCall(MatSetValues(J, 2, idx, 2, idx, a, INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(MatSetValue(Jp, 1, 0, (1 - x[0] * x[0]) * x[1] - x[0], INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsHessianProduct(PetscReal, Vec u, const ModeContext &c, Vec w, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const override {
    const PetscScalar *x, *W, *V;
    PetscFunctionBeginUser;
    PetscCheck(dir.du && dir.dp && out.u && out.p, PETSC_COMM_SELF, PETSC_ERR_SUP, "peer: full direction only");
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArrayRead(w, &W));
    PetscCall(VecGetArrayRead(dir.du, &V));
    const Second s = second(c.p[0], x, W);
    PetscScalar *h;
    PetscCall(VecGetArray(out.u, &h));
    for (int i = 0; i < 2; ++i) h[i] = s.uu[i][0] * V[0] + s.uu[i][1] * V[1] + s.up[i] * dir.dp[0];
    PetscCall(VecRestoreArray(out.u, &h));
    out.p[0] = s.up[0] * V[0] + s.up[1] * V[1];
    PetscCall(VecRestoreArrayRead(dir.du, &V));
    PetscCall(VecRestoreArrayRead(w, &W));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec, const PetscScalar *, PetscScalar *outP) const override {
    outP[0] = 0;
    return 0;
  }

private:
  PetscReal mu_;
};

class Misfit : public CostFunction, public SecondOrderCost {
public:
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    *v = (x[0] - kOb[0]) * (x[0] - kOb[0]) + (x[1] - kOb[1]) * (x[1] - kOb[1]);
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &, Vec g, PetscScalar *) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(u, g));
    PetscCall(VecSetValue(g, 0, -kOb[0], ADD_VALUES));
    PetscCall(VecSetValue(g, 1, -kOb[1], ADD_VALUES));
    PetscCall(VecAssemblyBegin(g));
    PetscCall(VecAssemblyEnd(g));
    PetscCall(VecScale(g, 2.0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalHessianProduct(PetscReal, Vec, const ModeContext &, const SecondOrderDirection &dir,
                                        const SecondOrderOutput &out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecAXPBY(out.u, 2.0, 0.0, dir.du));
    if (out.p) out.p[0] = 0;
    PetscFunctionReturn(0);
  }
};

PetscErrorCode compare(const char *type, PetscReal mu, PetscReal dt, bool assertPetsc, int *failures) {
  PetscReal Hp, gp;
  PetscFunctionBeginUser;
  PetscCall(petscHessian(type, mu, dt, &Hp, &gp));
  VanDerPol model(mu);
  Misfit cost;
  Solver solver(model);
  solver.addCost(cost);
  PetscCall(solver.setFromOptions());
  PetscCall(TSSetType(solver.ts(), type));
  if (!std::strcmp(type, TSRK)) PetscCall(TSRKSetType(solver.ts(), TSRK4));
  PetscCall(TSSetTimeStep(solver.ts(), dt));
  PetscCall(TSSetMaxTime(solver.ts(), 0.5));
  {
    SNES snes;
    PetscCall(TSGetSNES(solver.ts(), &snes));
    PetscCall(SNESSetTolerances(snes, 1e-12, 1e-12, 0, 50, 1000));
  }
  solver.setInitialStateSensitivities({});
  solver.setAdjoint(true);  // checkHessian leaves the solver solved at μ, with the adjoint gradient
  HessianCheckOptions opt;
  opt.relativeStep = 1e-4;
  HessianCheckReport rep;
  PetscCall(checkHessian(solver, opt, rep));  // also asserts FoA = hybrid, symmetry, FD (errors if not)
  const PetscReal H = rep.foa[0][0][0], ga = solver.result().gradient[0].adjointP[0];
  const PetscReal dPetsc = std::fabs(Hp - H) / std::fabs(H), dFD = std::fabs(rep.finiteDifference[0][0][0] - H) / std::fabs(H);
  const PetscReal dGrad = std::fabs(gp - ga) / std::fabs(ga);
  PetscCall(PetscPrintf(PETSC_COMM_SELF,
                        "peer %s mu=%g dt=%g: d2J/dmu2 hybridsens %.15e (FD of gradients %.15e, rel %.2e), PETSc %.15e (rel %.2e); "
                        "dJ/dmu hybridsens %.15e PETSc %.15e (rel %.2e)\n",
                        type, (double)mu, (double)dt, (double)H, (double)rep.finiteDifference[0][0][0], (double)dFD, (double)Hp,
                        (double)dPetsc, (double)ga, (double)gp, (double)dGrad));
  if (dFD > 1e-7) ++*failures;
  if (dGrad > 1e-10) ++*failures;
  if (assertPetsc && dPetsc > 1e-10) ++*failures;
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "hybridsens Hessian vs PETSc's second-order adjoint (van der Pol).\n"));
  int failures = 0;
  PetscCall(compare(TSRK, 10.0, 0.01, true, &failures));
  PetscCall(compare(TSCN, 100.0, 0.01, false, &failures));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "peer_second_order: %s\n", failures ? "FAILED" : "PASSED"));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
