// MemoryModel: a HybridModel whose dynamics depend on values captured at transitions — the
// displacement and stress at the last load reversal of a hysteretic material, the sample held
// by an event-triggered controller, the state at the last mode switch.
//
// The pattern (docs/theory.md §9): every captured value is an extra continuous state m_k ("memory
// slot") with zero dynamics, ṁ_k = 0, and a reset m_k⁺ = c_k(t, u⁻, p; d⁻) at the transitions
// that capture it; the other entries keep their values. The dynamics then read m_k like any
// other state. Nothing new is needed in the library: the reset's jump conditions (docs/theory.md §3)
// give the forward jump of a captured slot as
//     S_m⁺ = c_u S⁻ + c_p + (c_t + c_u u̇⁻ − ṁ⁺) τ_p = c_u (S⁻ + u̇⁻ τ_p) + c_t τ_p + c_p,
// the TOTAL derivative d/dp c(τ(p), u(τ(p)), p) of the captured value, and the adjoint its
// transpose (with the default discrete-exact event derivative, u̇⁻ is the derivative of the
// located step with respect to its size: the total derivative of the captured value as
// computed). Serban & Recuero (2019, §4) take s⁺ = S⁻ there, which is wrong whenever u̇⁻ τ_p ≠ 0; its
// hysteresis example hides it because u̇ = 0 at a load reversal.
//
// What a model declares (besides the usual HybridModel callbacks):
//   * memoryIndices(): the global state indices of the slots (differential components);
//   * capturesAt(id, k): whether transition `id` captures slot k (default: all, every time);
//   * capture(): the captured values c_k(t, u⁻, p; d⁻);
//   * captureGradient(): ∂c_k/∂u, ∂c_k/∂t, ∂c_k/∂p.
// Its rhs must be exactly zero on the memory rows (and rhsJacobian, rhsJacobianP zero rows
// there); reset() checks this at every transition and stops with an error otherwise. The
// initial state sets the initial memory (initialStateJacobianP its p-dependence).
//
// MemoryModel implements hasReset and the whole reset family from the captures, with the
// identity on every other row. A model with a physical reset as well (an impact that also
// records something) overrides the reset family, applies its own map to the other rows and
// calls the protected building blocks below for the captured rows:
//   R = P_o R_phys + P_m C  →  R_u v = P_o R_phys,u v + P_m C_u v,
//                              R_uᵀ w = R_phys,uᵀ (P_o w) + C_uᵀ (P_m w),
// with P_m the captured rows and P_o the others.
//
// Parallel: every rank returns the same memoryIndices(); slot k lives on the rank owning its
// index. capture() and captureGradient() follow the guard convention: each value and each
// ∂c/∂t, ∂c/∂p entry is written by exactly one rank (the library sums over ranks); ∂c/∂u is a
// distributed Vec. All of them are called collectively.
//
// Testing switch (must-fail tests, ODE models only): -hs_test_memory_partial_derivative makes
// the captured slots jump with [SerbanRecuero2019]'s partial derivative S_m⁺ = c_u S⁻ + c_p, in forward and
// adjoint alike: it sets the memory rows of R_t to −c_u u̇⁻, which cancels the event-time term
// of those rows (exactly with -hs_event_derivative continuous; up to the O(h^order) difference
// between u̇⁻ and the located step's derivative with the default discrete one).
#pragma once

#include "hybridsens/model.hpp"

#include <vector>

namespace hybridsens {

class MemoryModel : public HybridModel {
public:
  MemoryModel() = default;
  MemoryModel(const MemoryModel &) = delete;  // owns cached PETSc vectors
  MemoryModel &operator=(const MemoryModel &) = delete;
  ~MemoryModel() override;

  // ---- the memory ---------------------------------------------------------------------------
  virtual std::vector<PetscInt> memoryIndices() const = 0;
  virtual bool capturesAt(const EventId &id, PetscInt k) const { return true; }
  // values[k] = c_k(t, u⁻, p; d⁻) for every slot k captured at `id` (one entry per slot, zero
  // on entry; entries of slots not captured at `id` are ignored).
  virtual PetscErrorCode capture(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c,
                                 PetscScalar *values) const = 0;
  // ∂c_k/∂u into cu (distributed like u, zero on entry), ∂c_k/∂t into *ct, ∂c_k/∂p into cp
  // (np entries, zero on entry). Only called for slots captured at `id`.
  virtual PetscErrorCode captureGradient(const EventId &id, PetscInt k, PetscReal t, Vec uminus, const ModeContext &c,
                                         Vec cu, PetscScalar *ct, PetscScalar *cp) const = 0;

  // ---- the reset family, derived from the captures -----------------------------------------
  bool hasReset(const EventId &id) const override;
  PetscErrorCode reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const override;
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v,
                                     Vec out) const override;
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                              Vec out) const override;
  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const override;
  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c,
                                     Vec Rt) const override;

protected:
  // Building blocks acting on the rows of the slots captured at `id` only.
  // Write the captured values into those rows of uplus (and check ṁ = 0 at u⁻).
  PetscErrorCode writeCaptures(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const;
  // Those rows of out = C_u v.
  PetscErrorCode captureJacobianRows(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const;
  // Zero those rows of w (P_o w).
  PetscErrorCode zeroCapturedRows(const EventId &id, Vec w) const;
  // out += C_uᵀ (P_m w).
  PetscErrorCode addCaptureJacobianTranspose(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                             Vec out) const;
  // Those rows of Rp (dense n × N, first np columns) = ∂c/∂p.
  PetscErrorCode captureJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const;
  // Those rows of Rt = ∂c/∂t (or −c_u u̇⁻ under -hs_test_memory_partial_derivative).
  PetscErrorCode captureTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const;

private:
  // ∂c_k/∂(u, t, p) of the slots captured at one transition, computed once per transition
  // and reused by every sensitivity column (the key identifies the transition and the point).
  struct CaptureGradients {
    EventId id;
    PetscReal t = 0;
    PetscObjectId vecId = 0;
    PetscObjectState vecState = 0;
    std::vector<PetscReal> p;
    DiscreteState d;
    std::vector<PetscInt> slots;  // captured slots, ascending
    std::vector<Vec> cu;          // one per captured slot
    std::vector<PetscScalar> ct;
    std::vector<std::vector<PetscScalar>> cp;
  };
  PetscErrorCode capturedSlots(const EventId &id, std::vector<PetscInt> &slots) const;
  PetscErrorCode gradients(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c) const;
  PetscErrorCode checkLayout(Vec u) const;
  PetscErrorCode clearCache() const;
  mutable CaptureGradients cache_;
};

} // namespace hybridsens
