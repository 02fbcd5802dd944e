// Gradient verification for users' own models: the adjoint gradient against the forward
// (tangent-linear) gradient, against central finite differences of the full hybrid solve,
// and a Taylor remainder test. Run it with -hs_check_gradient on any example or program that
// calls Solver::solve(), or call checkGradient() directly.
#pragma once

#include "hybridsens/solver.hpp"

#include <vector>

namespace hybridsens {

// GradientCheckOptions: hybridsens/options.hpp.

struct GradientCheckReport {
  std::vector<std::vector<PetscScalar>> adjoint, forward, finiteDifference;  // [cost][parameter]
  // The Taylor test runs on the cost with the largest scaled gradient (taylorCost), along that
  // gradient: a cost that is identically zero near p (a frequency that never leaves its band)
  // has no order to show and is not chosen while another cost has one.
  std::vector<PetscReal> taylorRemainders, taylorSteps;
  size_t taylorCost = 0;
  PetscReal adjointVsForward = 0, adjointVsFD = 0, taylorOrder = 0;
  bool passed = false;
};

// Central differences (J_k(p + h_j e_j) − J_k(p − h_j e_j)) / (2 h_j) of every cost for the
// parameters in `indices`, h_j = relativeStep · max(|p_j|, 1e-2), around the solver's
// parameters: two value-only solves per parameter. The solver's parameters and sensitivity
// switches are restored (its last solve is the last perturbed one). fd[k][i] is for indices[i].
PetscErrorCode centralDifferences(Solver &solver, const std::vector<PetscInt> &indices, PetscReal relativeStep,
                                  std::vector<std::vector<PetscScalar>> &fd);

// Runs the solver several times (at p and at perturbed p) and restores p afterwards. Prints a
// table on the solver's communicator. Returns an error (PETSC_ERR_NOT_CONVERGED) when a check
// fails, after printing.
PetscErrorCode checkGradient(Solver &solver, const GradientCheckOptions &opt, GradientCheckReport &report);

} // namespace hybridsens
