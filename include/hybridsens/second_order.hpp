// hybridsens/second_order.hpp — second-derivative products of the model and of the costs, the
// interface the Hessian driver (hybridsens/hessian.hpp) calls. Core header: no Sacado; any model may implement
// it by hand, and the AD front ends implement it exactly by nested forward-mode AD:
//   * ADModel / ADCost (hybridsens/ad.hpp)                — dense, whole state on rank 0;
//   * LocalKernelModel / LocalKernelCost (hybridsens/ad_local.hpp) — sparse, distributed.
//
// ---- What is differentiated --------------------------------------------------------------
// f is HybridModel::rhs (M u̇ = f(t, u, p; d); on algebraic rows f is the constraint g). With
// z = (t, u, p) and a weight λ distributed like u, the scalar Λ(z) = λᵀ f(z) has the Hessian
//   H = ∂²Λ/∂z² = [[Λ_tt Λ_tu Λ_tp], [Λ_ut Λ_uu Λ_up], [Λ_pt Λ_pu Λ_pp]]
// and ONE call computes H δz for a direction δz = (δt, δu, δp), split into its three blocks:
//   out.u = Λ_ut δt + Λ_uu δu + Λ_up δp       (Vec like u: owned entries, overwritten)
//   out.p = Λ_pt δt + Λ_pu δu + Λ_pp δp       (np entries: THIS RANK'S contribution, overwritten)
//   out.t = Λ_tt δt + Λ_tu δu + Λ_tp δp       (scalar: this rank's contribution, overwritten)
// The four products PETSc's second-order adjoint names (TSSetRHSHessianProduct) are the special
// cases below (rhsHessianProductUU/UP/PU/PP): e.g. δz = (0, v, 0) gives (λ·f)_uu v in out.u and
// (λ·f)_pu v in out.p from the same evaluation — ask for both when you need both.
// Sign for the implicit form: PETSc's IFunction is F = M u̇ − f, so (λ·F)_zz = −(λ·f)_zz; the
// driver applies the sign.
//
// ---- Conventions (all members) --------------------------------------------------------------
// * Every call is COLLECTIVE on the model's communicator (implementations scatter ghost values
//   and touch Vecs on every rank).
// * Direction: dt (0 = none), du (Vec like u; nullptr = 0), dp (np replicated entries; nullptr
//   = 0). Output: any of out.u, out.p, out.t may be nullptr (not wanted).
// * Parameter-space and time outputs are this rank's contribution (as guardGradient's γ_p and
//   the cost gradients' p parts in model.hpp/objective.hpp): the caller sums them over ranks
//   (MPI_Allreduce on comm()). Vec outputs are complete (owned entries) — no summation.
// * Products are exact second derivatives (to round-off) of the functions the model evaluates,
//   in the discrete state c.d (branches taken as evaluated, like first derivatives).
// * Defaults are errors, not zeros: a model that does not provide a product says so when asked.
//
// ---- Beyond the dynamics (for second-order jump conditions through events) ------------------
//   guardHessianProduct(j, …)   H(γ_j) δz                     (scalar guard, no weight)
//   resetHessianProduct(id, …, w, …)  H(wᵀR) δz at (t, u⁻)   (R the reset map; identity resets
//                                      have H = 0 — implementations return zeros for them)
//   initialStateHessianProduct(λ, δp) (λᵀu0)_pp δp           (u0(p) the initial state)
//   timeEventHessianProduct(k, δp)    T_pp δp                  (T(p) the time of time event k)
// Costs (SecondOrderCost): H(ψ) δz, H(r) δz, H(g_i) δz for the terminal, integrand and
// measurement parts, with the same direction/output conventions (no weight: the cost is scalar).
//
// How the driver finds it: `dynamic_cast<const SecondOrderModel *>(&model)` (the AD models
// derive from both HybridModel and SecondOrderModel), or the user passes it explicitly.
#pragma once

#include "hybridsens/model.hpp"

#include <petscvec.h>

namespace hybridsens {

// δz = (δt, δu, δp). du: Vec distributed like u, or nullptr (zero). dp: np replicated entries,
// or nullptr (zero).
struct SecondOrderDirection {
  PetscReal dt = 0;
  Vec du = nullptr;
  const PetscScalar *dp = nullptr;
};

// H δz split by block. Any member may be nullptr (not wanted). u: owned entries (overwritten);
// p (np entries) and t: this rank's contribution (overwritten; the caller sums over ranks).
struct SecondOrderOutput {
  Vec u = nullptr;
  PetscScalar *p = nullptr;
  PetscScalar *t = nullptr;
};

class SecondOrderModel {
public:
  virtual ~SecondOrderModel() = default;

  // H(λᵀf) δz at (t, u, p; d). Collective.
  virtual PetscErrorCode rhsHessianProduct(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const = 0;
  // H(γ_j) δz. Default: error (not provided).
  virtual PetscErrorCode guardHessianProduct(PetscInt j, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                             const SecondOrderOutput &out) const {
    (void)t, (void)u, (void)c, (void)dir, (void)out;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "guardHessianProduct(%" PetscInt_FMT ") is not provided by this model", j);
  }
  // H(wᵀR) δz at (t, u⁻), R the reset map of event id (w like u). Default: error.
  virtual PetscErrorCode resetHessianProduct(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                             const SecondOrderDirection &dir, const SecondOrderOutput &out) const {
    (void)t, (void)uminus, (void)c, (void)w, (void)dir, (void)out;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "resetHessianProduct(%s %" PetscInt_FMT ") is not provided by this model",
            id.kind == EventId::Guard ? "guard" : "time event", id.index);
  }
  // outP = (λᵀu0)_pp δp (np entries, this rank's contribution, overwritten). Default: error.
  virtual PetscErrorCode initialStateHessianProduct(const ModeContext &c, Vec lambda, const PetscScalar *dp, PetscScalar *outP) const {
    (void)c, (void)lambda, (void)dp, (void)outP;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "initialStateHessianProduct is not provided by this model");
  }

  // outP = ∂²T_k/∂p² δp (np entries, the same on every rank — T(p) is replicated), T_k the
  // time of time event k. Not collective. Default: error.
  virtual PetscErrorCode timeEventHessianProduct(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscScalar *outP) const {
    (void)p, (void)dp, (void)outP;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "timeEventHessianProduct(%" PetscInt_FMT ") is not provided by this model", k);
  }

  // ---- the four blocks of PETSc's second-order adjoint (wrappers of rhsHessianProduct) -------
  // out = (λ·f)_uu v
  PetscErrorCode rhsHessianProductUU(PetscReal t, Vec u, const ModeContext &c, Vec lambda, Vec v, Vec out) const {
    SecondOrderDirection d;
    SecondOrderOutput o;
    d.du = v, o.u = out;
    return rhsHessianProduct(t, u, c, lambda, d, o);
  }
  // out = (λ·f)_up w   (w: np entries)
  PetscErrorCode rhsHessianProductUP(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const PetscScalar *w, Vec out) const {
    SecondOrderDirection d;
    SecondOrderOutput o;
    d.dp = w, o.u = out;
    return rhsHessianProduct(t, u, c, lambda, d, o);
  }
  // out = (λ·f)_pu v   (np entries, this rank's contribution)
  PetscErrorCode rhsHessianProductPU(PetscReal t, Vec u, const ModeContext &c, Vec lambda, Vec v, PetscScalar *out) const {
    SecondOrderDirection d;
    SecondOrderOutput o;
    d.du = v, o.p = out;
    return rhsHessianProduct(t, u, c, lambda, d, o);
  }
  // out = (λ·f)_pp w   (np entries, this rank's contribution)
  PetscErrorCode rhsHessianProductPP(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const PetscScalar *w, PetscScalar *out) const {
    SecondOrderDirection d;
    SecondOrderOutput o;
    d.dp = w, o.p = out;
    return rhsHessianProduct(t, u, c, lambda, d, o);
  }
};

// Second-derivative products of a CostFunction's parts (scalar functions of (t, u, p)).
// Same conventions as SecondOrderModel. Defaults: error (not provided).
class SecondOrderCost {
public:
  virtual ~SecondOrderCost() = default;
  // H(ψ) δz, ψ the terminal part.
  virtual PetscErrorCode terminalHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                                const SecondOrderOutput &out) const {
    (void)t, (void)u, (void)c, (void)dir, (void)out;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "terminalHessianProduct is not provided by this cost");
  }
  // H(r) δz, r the integrand (in discrete state c.d).
  virtual PetscErrorCode integrandHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                                 const SecondOrderOutput &out) const {
    (void)t, (void)u, (void)c, (void)dir, (void)out;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "integrandHessianProduct is not provided by this cost");
  }
  // H(g_i) δz, g_i the i-th measurement.
  virtual PetscErrorCode measurementHessianProduct(PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                                   const SecondOrderOutput &out) const {
    (void)t, (void)u, (void)c, (void)dir, (void)out;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "measurementHessianProduct(%" PetscInt_FMT ") is not provided by this cost", i);
  }
};

} // namespace hybridsens
