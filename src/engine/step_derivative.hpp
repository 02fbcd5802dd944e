// The derivative of a theta-method step's end state with respect to its size, for event location.
//
// Location solves g(h) = 0 for the guard at the end of a step of size h from a fixed start. On
// a stiff DAE integrated by Crank–Nicolson g(h) is far from a low-degree polynomial, so a model
// of g built from values alone places the first re-taken step 1e-3–1e-2 of the guard's change
// away from the surface. Its slope g'(h) = γ_t + γ_u du/dh at every sample makes the model
// Hermite data (double nodes) at no extra step: du/dh follows from one solve with the step's
// Newton matrix, evaluated again at the converged stage. Differentiating the step equation
//     F(t0 + c h, X, (X − u0)/(θh)) = b   (c = 1, X = u1 with the endpoint; c = θ, u1 = u0 + (X − u0)/θ otherwise)
// in h gives, for both forms,  (F_u + F_u̇/(θh)) du1/dh = F_u̇ (u1 − u0)/(θh²) − F_t.
// The matrix the Newton iteration factored last lags one iterate: its slope was 1e-3 off on a
// stiff grid, and the location then gains only three digits per re-take instead of converging
// quadratically; one Jacobian evaluation and factorization at the converged stage make it exact.
// The slope only places candidates, never decides convergence (the guard's value does).
#pragma once

#include "engine/dynamics.hpp"

#include <petscts.h>

namespace hybridsens {

class StepDerivative {
public:
  explicit StepDerivative(Dynamics &dyn) : dyn_(dyn) {}
  ~StepDerivative();
  // After TSStep: note the state of the matrix the step's Newton iteration factored last. A
  // slope is computed later only while that matrix is untouched (another solve re-assembling
  // it would make the factorization belong to a different matrix).
  PetscErrorCode noteStepTaken(TS ts);
  // du1/dh of the step just taken from (t0, u0) with size h and end state u1 into dudh.
  // *available = false (dudh untouched) for a method it does not apply to (not theta-type),
  // a matrix re-assembled since the step, or a linear solve that did not converge.
  PetscErrorCode compute(TS ts, PetscReal t0, Vec u0, PetscReal h, Vec u1, Vec dudh, bool *available);
  // d²u1/dh² right after a compute() that set *available (same t0, h, dudh): one more solve with
  // the matrix compute() factored. The step equation's second derivative needs f's second
  // derivative along the stage's path, taken here by central differences (it only places
  // candidates). *d2udh2 is this object's work vector (no copy): the caller may overwrite it, and
  // it is valid until the next compute(). *available = false when compute() did not succeed last.
  PetscErrorCode secondDerivative(PetscReal t0, PetscReal h, Vec dudh, Vec *d2udh2, bool *available);

private:
  PetscErrorCode refreshStepMatrix(TS ts, KSP ksp, PetscReal t0, Vec u0, PetscReal h, Vec u1, PetscReal theta, PetscBool endpoint);

  Dynamics &dyn_;
  Vec rhs_ = nullptr, work_ = nullptr, ft_ = nullptr, stage_ = nullptr, stageDot_ = nullptr;
  PetscObjectState matState_ = -1;
  KSP factored_ = nullptr;  // the KSP compute() solved with last (nullptr: no second derivative)
  PetscReal theta_ = 0;
  PetscBool endpoint_ = PETSC_FALSE;
};

} // namespace hybridsens
