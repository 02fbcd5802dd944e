// GuardEvaluator: guard values, gradients and time derivatives, identical on every rank
// (each guard is computed by its owning rank and summed over the communicator), so that
// event detection and location take the same decisions everywhere.
#pragma once

#include "engine/dynamics.hpp"

#include <string>
#include <vector>

namespace hybridsens {

struct GuardGradient {
  Vec gu = nullptr;              // γ_u (distributed like u)
  PetscScalar gt = 0;            // γ_t
  std::vector<PetscScalar> gp;   // γ_p (np entries)
};

class GuardEvaluator {
public:
  explicit GuardEvaluator(Dynamics &dyn);
  ~GuardEvaluator();
  PetscInt size() const { return n_; }
  // Whether guard j is watched in d (HybridModel::guardActive). A bool for the engine's loops; an
  // exception from the model's guardActive is recorded instead of crossing into PETSc (the guard
  // counts as active meanwhile) and is raised as a PETSc error naming the callback by the next
  // values(), rates(), gradient() or checkCallbacks() — within the same step, before any result.
  bool active(PetscInt j, const DiscreteState &d) const noexcept;
  PetscErrorCode checkCallbacks() const;
  int direction(PetscInt j) const { return direction_[j]; }

  PetscErrorCode values(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> &g);
  // γ_u, γ_t, γ_p of guard j at (t, u) in d. `out.gu` must be a vector like u.
  PetscErrorCode gradient(PetscInt j, PetscReal t, Vec u, const DiscreteState &d, GuardGradient &out);
  // ġ_j = γ_t + γ_u·u̇ for every active guard (0 for inactive ones): HybridModel::guardRates.
  // udot is scratch (like u); it holds the u̇ used (ẏ only if it was needed, NaN otherwise).
  PetscErrorCode rates(PetscReal t, Vec u, const DiscreteState &d, Vec udot, std::vector<PetscScalar> &rate);
  // γ_t + γ_u·v for a given v (every active guard, 0 for inactive ones), without the checks of
  // rates(): event location's slope of a guard along a step's du/dh, which only places candidates.
  PetscErrorCode ratesAlong(PetscReal t, Vec u, const DiscreteState &d, Vec v, std::vector<PetscScalar> &rate) {
    return modelRates(t, u, v, d, rate);
  }
  // How many rates() calls of a DAE needed ẏ (a consistency solve); the others did without.
  PetscInt ydotSolves() const { return ydotSolves_; }
  void resetCounters() { ydotSolves_ = 0; }
  // Transversality denominator D = γ_t + γ_u u̇ and its scale |γ_t| + ‖γ_u‖‖u̇‖.
  PetscErrorCode transversality(PetscInt j, PetscReal t, Vec u, Vec udot, const DiscreteState &d, PetscScalar *D,
                                PetscReal *scale);

private:
  PetscErrorCode modelRates(PetscReal t, Vec u, Vec udot, const DiscreteState &d, std::vector<PetscScalar> &rate);

  Dynamics &dyn_;
  PetscInt n_;
  std::vector<int> direction_;
  GuardGradient work_;
  PetscInt ydotSolves_ = 0;
  mutable std::string activeFailure_;  // first exception from guardActive, if any
};

} // namespace hybridsens
