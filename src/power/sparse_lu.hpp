// A sequential sparse LU of a matrix with a fixed CSR pattern (PETSc AIJ, nested-dissection
// ordering, PETSc's own factorization): the start's power flow factors its Jacobian once per
// Newton step and then solves once per derivative direction (the implicit function theorem)
// with the factors at the solution. Private to the grid model.
#pragma once

#include <petscmat.h>

#include <vector>

namespace hybridsens {
namespace power {

class SparseLU {
public:
  // rowStart: n + 1 offsets into cols (column indices of each row, every row with its diagonal).
  SparseLU(std::vector<PetscInt> rowStart, std::vector<PetscInt> cols) : rowStart_(std::move(rowStart)), cols_(std::move(cols)) {}
  ~SparseLU();
  SparseLU(const SparseLU &) = delete;
  SparseLU &operator=(const SparseLU &) = delete;

  PetscInt size() const { return (PetscInt)rowStart_.size() - 1; }
  // Factors the matrix with these values (CSR order); a zero pivot is an error naming its row.
  PetscErrorCode factor(const PetscReal *values);
  // x = A⁻¹ b with the last factors (b and x may alias).
  PetscErrorCode solve(const PetscReal *b, PetscReal *x) const;
  // x = A⁻ᵀ b with the last factors.
  PetscErrorCode solveTranspose(const PetscReal *b, PetscReal *x) const;
  // The factors without pivoting are refused when unstable: the backward error
  // ‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞) of a solve with b = 1 must not exceed tol. *error: its value.
  PetscErrorCode checkBackwardError(PetscReal tol, PetscReal *error) const;

private:
  std::vector<PetscInt> rowStart_, cols_;
  Mat A_ = nullptr, F_ = nullptr;
  Vec b_ = nullptr, x_ = nullptr;
  PetscErrorCode apply(PetscBool transpose, const PetscReal *b, PetscReal *x) const;
};

} // namespace power
} // namespace hybridsens
