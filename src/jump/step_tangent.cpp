#include "jump/step_tangent.hpp"

#include "util/linear_solve_defaults.hpp"

namespace hybridsens {

StepTangent::StepTangent(Dynamics &dyn, CostEvaluator &costs, TS ts) : dyn_(dyn), costs_(costs), ts_(ts) {}

StepTangent::~StepTangent() {
  MatDestroy(&J_);
  KSPDestroy(&ksp_);
  VecDestroy(&f_);
  VecDestroy(&ft_);
  VecDestroy(&ru_);
  VecDestroy(&rhs_);
  VecDestroy(&zero_);
  VecDestroy(&rowScale_);
  for (auto *v : {&k_, &dk_, &dY_})
    for (Vec &x : *v) VecDestroy(&x);
}

PetscErrorCode StepTangent::setUp(Vec like) {
  PetscFunctionBeginUser;
  if (J_) PetscFunctionReturn(0);
  PetscCall(MatDuplicate(dyn_.J(), MAT_DO_NOT_COPY_VALUES, &J_));
  PetscCall(MatSetOption(J_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (Vec *v : {&f_, &ft_, &ru_, &rhs_, &zero_, &rowScale_}) PetscCall(VecDuplicate(like, v));
  PetscCall(VecZeroEntries(zero_));
  // Solves exact to round-off, like the integrator's: the tangent must be.
  PetscCall(KSPCreate(dyn_.comm(), &ksp_));
  PetscCall(KSPSetOptionsPrefix(ksp_, "hs_tangent_"));
  PetscInt N;
  PetscCall(VecGetSize(like, &N));
  // The step's matrix has zeros on an index-2 DAE's algebraic diagonal: pivoting LU.
  PetscCall(setLinearSolveDefaults(ksp_, N, dyn_.isIndex2()));
  PetscCall(KSPSetFromOptions(ksp_));
  PetscCall(requireExactSolve(ksp_, "the step tangent at events"));
  PetscFunctionReturn(0);
}

PetscErrorCode StepTangent::apply(PetscReal t, PetscReal h, Vec u, Vec X, const DiscreteState &d, const StepDirection &dir, Vec dX,
                                  std::vector<PetscScalar> &dq) {
  TSType type;
  PetscBool isRK;
  PetscFunctionBeginUser;
  PetscCall(setUp(X));
  dq.assign(costs_.size(), 0.0);
  PetscCall(TSGetType(ts_, &type));
  PetscCall(PetscStrcmp(type, TSRK, &isRK));
  if (isRK) PetscCall(rungeKutta(t, h, d, dir, dX, dq));
  else {
    PetscReal th;
    PetscCall(TSThetaGetTheta(ts_, &th));  // BEULER and CN are theta methods (endpoint; checked elsewhere)
    PetscCall(theta(th, t, h, u, X, d, dir, dX, dq));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode StepTangent::theta(PetscReal th, PetscReal t, PetscReal h, Vec u, Vec X, const DiscreteState &d,
                                  const StepDirection &dir, Vec dX, std::vector<PetscScalar> &dq) {
  const PetscReal te = t + h, a = dir.alpha, b = dir.beta;
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(rhs_));
  // β[θ f_e + (1−θ) f_s] on the differential rows only: on the algebraic rows it is β times the
  // step's constraint residual θ g_e + (1−θ) g_s, zero for the exact step (see below).
  if (b != 0) {
    PetscCall(dyn_.rhs(te, X, d, f_));
    if (dyn_.isDAE()) PetscCall(VecPointwiseMult(f_, dyn_.massDiagonal(), f_));
    PetscCall(VecAXPY(rhs_, b * th, f_));
    if (th < 1) {
      PetscCall(dyn_.rhs(t, u, d, f_));
      if (dyn_.isDAE()) PetscCall(VecPointwiseMult(f_, dyn_.massDiagonal(), f_));
      PetscCall(VecAXPY(rhs_, b * (1 - th), f_));
    }
  }
  if (a + b != 0) {
    PetscCall(dyn_.rhsTimeDerivative(te, X, d, ft_));
    PetscCall(VecAXPY(rhs_, h * th * (a + b), ft_));
  }
  if (a != 0 && th < 1) {
    PetscCall(dyn_.rhsTimeDerivative(t, u, d, ft_));
    PetscCall(VecAXPY(rhs_, h * (1 - th) * a, ft_));
  }
  if (dir.du) {
    PetscCall(VecPointwiseMult(f_, dyn_.massDiagonal(), dir.du));
    PetscCall(VecAXPY(rhs_, 1.0, f_));
    if (th < 1) {
      PetscCall(dyn_.rhsJacobian(t, u, d, J_));
      PetscCall(MatMult(J_, dir.du, f_));
      PetscCall(VecAXPY(rhs_, h * (1 - th), f_));
    }
  }
  // M − hθ J(t + h, X): the matrix of the step's own Newton system (up to the factor hθ).
  PetscCall(dyn_.rhsJacobian(te, X, d, J_));
  PetscCall(MatScale(J_, -h * th));
  PetscCall(MatDiagonalSet(J_, dyn_.massDiagonal(), ADD_VALUES));
  // A DAE's algebraic rows divided by hθ. The integrator solves them without h: PETSc's endpoint
  // theta step is F(X) = M(X − u)/(θh) − f_e − (1−θ)/θ f_s = 0, whose algebraic rows read
  // θ g_e + (1−θ) g_s = 0. Written, like the differential rows, as h[θ g_e + (1−θ) g_s] = 0 they
  // scale with h, and for a tiny step (an event just after a step point: the located step; just
  // before one: the remainder step) M − hθJ has algebraic pivots hθ g_y below LU's zero-pivot
  // threshold (DIVERGED_PC_FAILED), or nearly so, and the tangent amplifies the round-off of the
  // right-hand side by 1/h. Divided by hθ they are the derivative of the equations actually
  // solved: the matrix is the step's Newton matrix (shift M − J, shift = 1/(hθ)) with its
  // differential rows multiplied by hθ — as well conditioned as the step itself for every h —
  // and the solution is unchanged in exact arithmetic (a row scaling of the same system).
  if (dyn_.isDAE()) {
    const PetscReal inv = 1 / (h * th);
    PetscCall(VecCopy(dyn_.massDiagonal(), rowScale_));  // 1 on differential rows, 0 on algebraic rows
    PetscCall(VecShift(rowScale_, -1.0));
    PetscCall(VecScale(rowScale_, -inv));
    PetscCall(VecAXPY(rowScale_, 1.0, dyn_.massDiagonal()));  // exactly 1 on differential rows, 1/(hθ) on algebraic rows
    PetscCall(MatDiagonalScale(J_, rowScale_, nullptr));
    PetscCall(VecPointwiseMult(rhs_, rhs_, rowScale_));
  }
  PetscCall(KSPSetOperators(ksp_, J_, J_));
  PetscCall(KSPSolve(ksp_, rhs_, dX));
  PetscCall(KSPGetConvergedReason(ksp_, &reason));
  PetscCheck(reason >= 0, dyn_.comm(), PETSC_ERR_NOT_CONVERGED, "step-tangent solve at t = %.17g failed (%s)", (double)te,
             KSPConvergedReasons[reason]);
  if (th < 1) PetscCall(quadratureNode(h * (1 - th), b * (1 - th), t, a, u, dir.du ? dir.du : zero_, d, dq));
  PetscCall(quadratureNode(h * th, b * th, te, a + b, X, dX, d, dq));
  PetscFunctionReturn(0);
}

PetscErrorCode StepTangent::rungeKutta(PetscReal t, PetscReal h, const DiscreteState &d, const StepDirection &dir, Vec dX,
                                       std::vector<PetscScalar> &dq) {
  PetscInt s, ns;
  const PetscReal *A, *b, *c;
  Vec *Y;
  PetscFunctionBeginUser;
  PetscCall(TSRKGetTableau(ts_, &s, &A, &b, &c, nullptr, nullptr, nullptr, nullptr));
  PetscCall(TSGetStages(ts_, &ns, &Y));
  for (auto *v : {&k_, &dk_, &dY_})
    while ((PetscInt)v->size() < s) {
      v->push_back(nullptr);
      PetscCall(VecDuplicate(dX, &v->back()));
    }
  const PetscReal a = dir.alpha, be = dir.beta;
  for (PetscInt i = 0; i < s; ++i) {
    const PetscReal ti = t + c[i] * h;
    if (dir.du) PetscCall(VecCopy(dir.du, dY_[i]));
    else PetscCall(VecZeroEntries(dY_[i]));
    for (PetscInt j = 0; j < i; ++j) {
      const PetscReal aij = A[i * s + j];
      if (aij == 0) continue;
      PetscCall(VecAXPBYPCZ(dY_[i], aij * be, aij * h, 1.0, k_[j], dk_[j]));
    }
    PetscCall(dyn_.rhs(ti, Y[i], d, k_[i]));
    PetscCall(dyn_.rhsJacobian(ti, Y[i], d, J_));
    PetscCall(MatMult(J_, dY_[i], dk_[i]));
    if (a + c[i] * be != 0) {
      PetscCall(dyn_.rhsTimeDerivative(ti, Y[i], d, ft_));
      PetscCall(VecAXPY(dk_[i], a + c[i] * be, ft_));
    }
  }
  if (dir.du) PetscCall(VecCopy(dir.du, dX));
  else PetscCall(VecZeroEntries(dX));
  for (PetscInt i = 0; i < s; ++i) {
    if (b[i] == 0) continue;
    PetscCall(VecAXPBYPCZ(dX, b[i] * be, b[i] * h, 1.0, k_[i], dk_[i]));
    PetscCall(quadratureNode(h * b[i], be * b[i], t + c[i] * h, a + c[i] * be, Y[i], dY_[i], d, dq));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode StepTangent::quadratureNode(PetscReal w, PetscReal dw, PetscReal tau, PetscReal dtau, Vec Y, Vec dY, const DiscreteState &d,
                                           std::vector<PetscScalar> &dq) {
  std::vector<PetscScalar> r, rp;
  PetscFunctionBeginUser;
  if (!costs_.anyIntegrand()) PetscFunctionReturn(0);
  if (dw != 0) {
    PetscCall(costs_.integrands(tau, Y, d, r));
    for (size_t k = 0; k < dq.size(); ++k) dq[k] += dw * r[k];
  }
  if (dtau != 0) {
    PetscCall(costs_.integrandTimeDerivatives(tau, Y, d, r));
    for (size_t k = 0; k < dq.size(); ++k) dq[k] += w * dtau * r[k];
  }
  for (size_t k = 0; k < dq.size(); ++k) {
    PetscScalar dot;
    if (!costs_.cost(k).hasIntegrand()) continue;
    PetscCall(costs_.integrandGradient(k, tau, Y, d, ru_, rp));
    PetscCall(VecDot(ru_, dY, &dot));
    dq[k] += w * dot;
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
