// JumpAlgebra: the jump conditions of docs/theory.md §3–§8, in one place for the forward (tangent-
// linear) and the reverse (adjoint) sweeps, so the two cannot drift apart: the adjoint jump
// is the transpose of the forward jump, built from the same ingredients.
//
// At one transition at τ with composite reset Φ (the user's reset R followed, for a DAE, by
// re-solving the algebraic part in the new mode):
//   c     = Φ_t + Φ_u v⁻ − u̇⁺                    (plus q⁻ − r⁺ for each integral cost)
//   state event:  D = γ_t + γ_u v⁻,  τ_p = −(γ_u S⁻ + γ_p)/D
// v⁻ is ∂X/∂h of the step that ended at τ and q⁻ its quadrature's ∂/∂h (EventTangents: the
// discrete-exact derivative), or u̇⁻ and r⁻ (the continuous one, -hs_event_derivative
// continuous, and for transitions after the first at one instant). The −u̇⁺ τ_p, −r⁺ τ_p part is
// corrected after the next step (EventTangents::nextCorrection), by the sweeps.
//   time  event:  τ_p = ∂T/∂p
//   forward:  S⁺ = Φ_u S⁻ + Φ_p + c τ_p,   q_p⁺ = q_p⁻ + (r⁻ − r⁺) τ_p
//   adjoint:  state: w = (cᵀλ⁺ + (r⁻ − r⁺))/D, λ⁻ = Φ_uᵀλ⁺ − γ_uᵀw, μ⁻ = μ⁺ + Φ_pᵀλ⁺ − γ_pᵀw
//             time:  λ⁻ = Φ_uᵀλ⁺, μ⁻ = μ⁺ + Φ_pᵀλ⁺ + (∂T/∂p)ᵀ(cᵀλ⁺ + (r⁻ − r⁺))
// For a DAE with A⁺ = [I 0; g⁺_x g⁺_y]: Φ_u = A⁺⁻¹ P_x R_u, Φ_p = A⁺⁻¹(P_x R_p − P_y g⁺_p),
// Φ_t = A⁺⁻¹(P_x R_t − P_y g⁺_t); y⁻ has no influence.
#pragma once

#include "engine/cost_evaluator.hpp"
#include "engine/dynamics.hpp"
#include "engine/guard_evaluator.hpp"
#include "hybridsens/event_log.hpp"
#include "jump/event_tangents.hpp"

#include <vector>

namespace hybridsens {

// Testing switches: dropping a term must make the derivative checks fail (must-fail tests).
struct JumpTerms {
  bool eventTime = true;  // the c τ_p term (and its integral part)
  bool reset = true;      // Φ_u, Φ_p of the reset map (identity / zero when off)
};

struct JumpIngredients {
  bool stateEvent = false;
  GuardGradient guard;             // γ_u, γ_t, γ_p (state event)
  PetscScalar D = 0;               // γ_t + γ_u v⁻
  std::vector<PetscReal> dTdp;     // ∂T/∂p (time event; np entries)
  Vec c = nullptr;                 // state part of the jump vector
  std::vector<PetscScalar> cq;     // r_k⁻ − r_k⁺ per cost
};

class JumpAlgebra {
public:
  // tangents: the discrete event derivatives recorded by the forward run (nullptr: continuous).
  JumpAlgebra(Dynamics &dyn, GuardEvaluator &guards, CostEvaluator &costs, JumpTerms terms, const EventTangents *tangents);
  ~JumpAlgebra();

  // Everything the jump of record r (log index `index`) needs; leaves the consistency matrix at
  // (τ, u⁺, d⁺). forwardSweep: also build Φ_p column by column (the adjoint only needs Φ_pᵀλ).
  PetscErrorCode prepare(const EventRecord &r, size_t index, JumpIngredients &J, bool forwardSweep);
  // Forward jump applied to the dense sensitivity matrix S (N columns: np parameters, then
  // initial-state columns) and to the integral sensitivities dq[k][j]; tau gets τ_p per column.
  PetscErrorCode forward(const EventRecord &r, const JumpIngredients &J, Mat S, std::vector<std::vector<PetscScalar>> &dq,
                         std::vector<PetscScalar> &tau);
  // Reverse jump for one cost k: λ ← λ⁻, μ ← μ⁻ (μ has np entries). `deferred` is what the
  // step after this instant contributed to the event time's multiplier (δᵀλ_{n+1} + δq_k;
  // 0 unless r is the last transition at its instant).
  PetscErrorCode adjoint(const EventRecord &r, const JumpIngredients &J, size_t k, Vec lambda, std::vector<PetscScalar> &mu,
                         PetscScalar deferred);
  const EventTangents *tangents() const { return tangents_; }
  // S[:, j] += δ τ_j and dq[k][j] += δq_k τ_j for the event whose next step just ended.
  PetscErrorCode forwardCorrection(const EventTangent &e, const std::vector<PetscScalar> &tau, Mat S,
                                   std::vector<std::vector<PetscScalar>> &dq);
  // Its transpose for cost k: δᵀλ + δq_k.
  PetscErrorCode adjointCorrection(const EventTangent &e, size_t k, Vec lambda, PetscScalar *deferred);
  PetscErrorCode destroy(JumpIngredients &J);

private:
  PetscErrorCode applyPhiU(const EventRecord &r, Vec v, Vec out);   // Φ_u v
  PetscErrorCode parameterJacobians(const EventRecord &r);         // R_p into Rp_, g⁺_p (DAE)
  PetscErrorCode phiP();                                            // Φ_p into phiP_ (n × N)
  PetscErrorCode phiT(const EventRecord &r, Vec out);               // Φ_t

  Dynamics &dyn_;
  GuardEvaluator &guards_;
  CostEvaluator &costs_;
  JumpTerms terms_;
  const EventTangents *tangents_;
  Vec w1_ = nullptr, w2_ = nullptr;
  Mat Rp_ = nullptr, phiP_ = nullptr;
  bool hasRp_ = false;
};

} // namespace hybridsens
