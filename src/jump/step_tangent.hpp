// StepTangent: the derivative of the integration step just taken with respect to its start
// state, its start time and its size — what makes the event derivatives discrete-exact.
//
// An event ends the step that located it and starts the next one, so the computed trajectory
// depends on the event time τ through exactly those two steps:
//   u⁻ = X(t_n, u_n, h = τ − t_n)           and   u_{n+1} = X(τ, u⁺, h = t_{n+1} − τ)
// (the engine keeps the step grid fixed around events). The continuous jump (docs/theory.md §3)
// uses u̇⁻ and u̇⁺ where ∂X/∂h and ∂X/∂t_start belong; the gap is O(h^order) and is what kept
// backward Euler from matching finite differences. This class differentiates the step the
// integrator actually took, in a direction (δu, α = δt_start, β = δh):
//   theta, endpoint form:  M(X − u) = h[θ f(t + h, X) + (1 − θ) f(t, u)]
//     (M − hθ J_e) Ẋ = M δu + h(1−θ) J_s δu + β[θ f_e + (1−θ) f_s] + h[θ f_t,e (α+β) + (1−θ) f_t,s α]
//   explicit RK:  Y_i = u + h Σ_j a_ij k_j,  k_i = f(t + c_i h, Y_i),  X = u + h Σ_i b_i k_i
//     Ẏ_i = δu + Σ_j a_ij (β k_j + h k̇_j),  k̇_i = J_i Ẏ_i + f_t,i (α + c_i β),  Ẋ = δu + Σ_i b_i (β k_i + h k̇_i)
// and, the same way, the step's quadrature of every integral cost (weights w = h·b, nodes
// t + c h): q̇ = Σ (β b r + w (r_u·Ẏ + r_t (α + c β))).
#pragma once

#include "engine/dynamics.hpp"
#include "engine/cost_evaluator.hpp"

#include <petscts.h>

#include <vector>

namespace hybridsens {

struct StepDirection {
  Vec du = nullptr;     // δu (nullptr: 0)
  PetscReal alpha = 0;  // δ(start time)
  PetscReal beta = 0;   // δ(step size)
};

class StepTangent {
public:
  StepTangent(Dynamics &dyn, CostEvaluator &costs, TS ts);
  ~StepTangent();
  StepTangent(const StepTangent &) = delete;
  StepTangent &operator=(const StepTangent &) = delete;

  // The step from (t, u) of size h to X, taken in discrete state d, must be the integrator's
  // last step (its stages are read from the TS). dX (like u) and dq (one entry per cost) get
  // the tangent of the end state and of the step's quadratures in direction dir.
  PetscErrorCode apply(PetscReal t, PetscReal h, Vec u, Vec X, const DiscreteState &d, const StepDirection &dir, Vec dX,
                       std::vector<PetscScalar> &dq);

private:
  PetscErrorCode setUp(Vec like);
  PetscErrorCode theta(PetscReal th, PetscReal t, PetscReal h, Vec u, Vec X, const DiscreteState &d, const StepDirection &dir,
                       Vec dX, std::vector<PetscScalar> &dq);
  PetscErrorCode rungeKutta(PetscReal t, PetscReal h, const DiscreteState &d, const StepDirection &dir, Vec dX,
                            std::vector<PetscScalar> &dq);
  // dq_k += dw r_k + w (r_u,k · dY + r_t,k dtau) at the quadrature node (tau, Y).
  PetscErrorCode quadratureNode(PetscReal w, PetscReal dw, PetscReal tau, PetscReal dtau, Vec Y, Vec dY, const DiscreteState &d,
                                std::vector<PetscScalar> &dq);

  Dynamics &dyn_;
  CostEvaluator &costs_;
  TS ts_;
  Mat J_ = nullptr;  // f_u at one point (own copy: the TS's Jacobian and its cache stay untouched)
  KSP ksp_ = nullptr;
  Vec f_ = nullptr, ft_ = nullptr, ru_ = nullptr, rhs_ = nullptr, zero_ = nullptr, rowScale_ = nullptr;
  std::vector<Vec> k_, dk_, dY_;
};

} // namespace hybridsens
