// TestModel: the tests' small models — hybridsens::SmallModel (a tiny model on rank 0 of
// PETSC_COMM_WORLD, given by lambdas on raw arrays) with discrete state {0}, and helpers for
// tests that write their own guard callbacks on the first state component.
#pragma once

#include <hybridsens/hybridsens.hpp>
#include <hybridsens/small_model.hpp>

namespace hstest {

using namespace hybridsens;

class TestModel : public hybridsens::SmallModel {
public:
  explicit TestModel(PetscInt n) : hybridsens::SmallModel(n) {
    d0 = {0};
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
  }

protected:
  // A guard on the first state component, g = x[0] - level, written on rank 0 (gradient e_0).
  PetscErrorCode firstComponentGuard(Vec u, PetscReal level, PetscScalar *g) const {
    PetscScalar x0 = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, 0, &x0));
    if (rank_ == 0) g[0] = x0 - level;
    PetscFunctionReturn(0);
  }
  PetscErrorCode firstComponentGradient(Vec gu, PetscScalar *gt) const {
    PetscFunctionBeginUser;
    PetscCall(writeOwned(gu, 0, 1.0));
    *gt = 0;
    PetscFunctionReturn(0);
  }

  PetscMPIInt rank_ = 0;
};

} // namespace hstest
