// SmallModel: a tiny serial model (everything on rank 0 of PETSC_COMM_WORLD) whose dynamics
// and Jacobian are given as lambdas on raw arrays; tests derive guards and resets from it.
#pragma once

#include <hybridsens/hybridsens.hpp>

#include <functional>
#include <vector>

namespace hstest {

using namespace hybridsens;

class SmallModel : public HybridModel {
public:
  explicit SmallModel(PetscInt n) : n_(n) { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  PetscInt localSize() const override { return rank_ == 0 ? n_ : 0; }
  DiscreteState initialDiscreteState() const override { return {0}; }

  std::function<void(PetscReal, const PetscScalar *, PetscScalar *, const ModeContext &)> f;
  std::function<void(PetscReal, const PetscScalar *, PetscScalar *, const ModeContext &)> dfdu;  // row-major n×n
  std::function<void(PetscReal, const PetscScalar *, PetscScalar *, const ModeContext &)> dfdp;  // row-major n×np
  std::vector<PetscReal> x0, params;

  std::vector<PetscReal> defaultParameters() const override { return params; }
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const override {
    const PetscScalar *x;
    const PetscInt np = (PetscInt)params.size();
    std::vector<PetscScalar> a(n_ * np, 0.0);
    std::vector<PetscInt> rows(n_), cols(np);
    PetscFunctionBeginUser;
    if (!dfdp) PetscFunctionReturn(0);
    for (PetscInt i = 0; i < n_; ++i) rows[i] = i;
    for (PetscInt j = 0; j < np; ++j) cols[j] = j;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      dfdp(t, x, a.data(), c);
      PetscCall(MatSetValues(Jp, n_, rows.data(), np, cols.data(), a.data(), INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0)
      for (PetscInt i = 0; i < n_; ++i) PetscCall(VecSetValue(u0, i, x0[i], INSERT_VALUES));
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec fv) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(fv, &y));
    if (rank_ == 0) f(t, x, y, c);
    PetscCall(VecRestoreArray(fv, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    std::vector<PetscScalar> a(n_ * n_, 0.0);
    std::vector<PetscInt> idx(n_);
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n_; ++i) idx[i] = i;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      dfdu(t, x, a.data(), c);
      PetscCall(MatSetValues(J, n_, idx.data(), n_, idx.data(), a.data(), INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

protected:
  // A guard on the first state component, g = x[0] - level, written on rank 0 (gradient e_0).
  PetscErrorCode firstComponentGuard(Vec u, PetscReal level, PetscScalar *g) const {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) g[0] = x[0] - level;
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode firstComponentGradient(Vec gu, PetscScalar *gt) const {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(gu, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }

  PetscInt n_;
  PetscMPIInt rank_ = 0;
};


} // namespace hstest
