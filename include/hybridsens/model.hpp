// HybridModel: what a user describes once — state layout, parameters, discrete state,
// dynamics, guards, transitions, resets and time events. The engine and the sensitivity
// drivers call it; they never need anything else from the user.
//
// Dynamics are semi-explicit:   M u̇ = f(t, u, p; d),   M = diag(1 on differential rows,
// 0 on algebraic rows). With no algebraic rows this is an explicit ODE u̇ = f; with algebraic
// rows it is a semi-explicit index-1 DAE whose algebraic rows read 0 = g(t, x, y, p; d) with
// g_y nonsingular. Writing the residual in this form lets the library derive u̇ on either side
// of an event (needed by every jump condition).
//
// Every callback returns a PetscErrorCode. A C++ exception thrown by a callback is caught by
// the library at the PETSc boundary and turned into a PETSc error naming the callback.
//
// Derivative callbacks and their defaults: a default never guesses a derivative. Each one is
//   * an error when called (guardGradient, the reset derivatives, rhsTimeDerivative): a model
//     that declares the function (numGuards() > 0, hasReset(id), explicitTime()) must provide
//     its derivative; or
//   * "the function does not depend on this argument", VERIFIED by the library before it is
//     used (rhsJacobianP, initialStateJacobianP, and ∂f/∂t when explicitTime() is false): the
//     function is evaluated at a perturbed argument and the run is refused if the value changes.
//     A model whose function truly does not depend on p may rely on the default; one that
//     overrides a derivative takes responsibility for it (an override writing zeros is trusted).
//
// Ownership (several ranks). Every callback is called on every rank of comm(). Its outputs are
//   * Vec outputs (f, ft, u0, u⁺, R_u v, γ_u, ψ_u, r_u …): distributed like u; each rank writes
//     the entries it owns (or sets values and assembles);
//   * Mat outputs (J, ∂f/∂p, ∂u0/∂p, R_p): rows distributed like u; MatSetValues with global
//     indices, the library assembles;
//   * raw-array and scalar outputs (guard values and rates, γ_t, γ_p, parameter derivatives of
//     costs and adjoint products, cost values): THIS RANK'S CONTRIBUTION, zero on entry and
//     summed across ranks by the library — write each quantity on exactly one rank (the owner of
//     what it reads), leave it zero elsewhere.
// Get/Restore of a Vec's array happens on every rank, also ranks that own nothing: restoring a
// written vector bumps its state, and a rank whose state did not move would answer a later
// norm from its cache and skip a reduction the others wait in. OwnedEntries, readOwned and
// writeOwned (hybridsens/vec_entry.hpp) follow these rules; SmallModel
// (hybridsens/small_model.hpp) hides them for a model of a few states.
#pragma once

#include <petscmat.h>
#include <petscvec.h>

#include <string>
#include <vector>

namespace hybridsens {

// One integer flag per discrete component (a power grid has one limiter flag per exciter).
using DiscreteState = std::vector<PetscInt>;

// Everything a callback may depend on besides (t, u): parameters and the discrete state of the
// phase it is evaluated in (the step before or after an event — the engine decides).
struct ModeContext {
  const std::vector<PetscReal> &p;
  const DiscreteState &d;
};

// Crossing directions of a guard (PETSc's convention): +1 rising (negative → positive),
// -1 falling, 0 both.
enum class Direction : int { Falling = -1, Both = 0, Rising = +1 };

struct GuardInfo {
  std::string name;
  Direction direction = Direction::Both;
};

// A time event fires when t reaches time(p); its time sensitivity dT/dp enters the jumps.
struct TimeEventInfo {
  std::string name;
  PetscReal time = 0;
  std::vector<PetscReal> dtime_dp;  // empty: fixed time (∂T/∂p = 0)
};

// Identifies what fired: a guard (state event) or a time event.
struct EventId {
  enum Kind { Guard, Time } kind = Guard;
  PetscInt index = 0;
  bool operator==(const EventId &o) const { return kind == o.kind && index == o.index; }
};

class HybridModel {
public:
  virtual ~HybridModel() = default;

  // ---- layout -------------------------------------------------------------------------
  virtual MPI_Comm comm() const { return PETSC_COMM_WORLD; }
  // Number of continuous state entries owned by this rank.
  virtual PetscInt localSize() const = 0;
  // Global indices (owned by this rank) of algebraic components; empty for an ODE.
  virtual std::vector<PetscInt> algebraicIndices() const { return {}; }
  // 1 (default): the algebraic rows are 0 = g(t, x, y, p; d) with g_y nonsingular.
  // 2: Hessenberg index 2, x' = f(t, x, y, p; d), 0 = k(t, x, p; d) with k_x f_y nonsingular;
  // the algebraic rows must not read y (k_y = 0). Then (docs/index2-daes.md): only backward
  // Euler is accepted; initialState and every reset must deliver a differential part on the
  // constraint (k = 0 to 1e-10, checked, an error otherwise) and the derivative of any
  // projection a reset does is part of its Jacobian; the library recomputes y from the hidden
  // constraint k_x f + k_t = 0; guards and costs must not read y at an event instant.
  virtual PetscInt daeIndex() const { return 1; }
  virtual DiscreteState initialDiscreteState() const { return {}; }
  // Parameters are small and replicated on every rank.
  virtual std::vector<PetscReal> defaultParameters() const { return {}; }
  virtual std::vector<std::string> parameterNames() const;

  // ---- initial state u0(p) --------------------------------------------------------------
  // For a DAE only the differential part must be right: the engine solves g = 0 for y.
  virtual PetscErrorCode initialState(const ModeContext &c, Vec u0) const = 0;
  // ∂u0/∂p as a dense n × np matrix (only the differential rows matter for a DAE).
  // Default: u0 does not depend on p (the matrix stays zero) — verified at each call, i.e. once
  // per sensitivity solve: u0 is evaluated at p and at a perturbed p, and a change in a
  // differential row is refused with an error naming initialStateJacobianP.
  virtual PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const;
  // outP[k] = (∂u0/∂p)ᵀ w[k] for every k (np entries each, overwritten; this rank's
  // contribution, the library sums over ranks): all the adjoint needs of ∂u0/∂p. Default: from
  // initialStateJacobianP, i.e. through a dense n × np matrix — a model with many parameters
  // should override it (LocalKernelModel does, kernel by kernel).
  virtual PetscErrorCode initialStateJacobianPTranspose(const ModeContext &c, const std::vector<Vec> &w,
                                                        std::vector<std::vector<PetscScalar>> &outP) const;

  // ---- dynamics -------------------------------------------------------------------------
  virtual PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const = 0;
  // ∂f/∂u into J (created by createJacobian); called collectively.
  virtual PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const = 0;
  // ∂f/∂p into an n × N matrix whose first np columns are the parameters (the rest, if any,
  // belong to initial-state sensitivities and must stay zero). Called collectively.
  // Default: f does not depend on p (the matrix stays zero) — verified once per parameter
  // vector and discrete state: f is evaluated at p and at a perturbed p at the first (t, u) the
  // library asks about, and any change is refused with an error naming rhsJacobianP.
  virtual PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const;
  // The matrix rhsJacobianP fills (n rows like u, ncols columns). Default (*Jp = nullptr): a
  // dense matrix. A model in which each parameter touches few equations should return a
  // preallocated AIJ matrix: the reverse sweep multiplies by its transpose several times per
  // step, which then costs O(nonzeros) instead of O(n·np).
  virtual PetscErrorCode createParameterJacobian(PetscInt ncols, Mat *Jp) const;
  // Whether f (or, for a DAE, g) depends on t other than through u: periodic forcing, a
  // time-varying load. Such a model must override rhsTimeDerivative; the event derivatives
  // need ∂f/∂t. A model that says false but whose rhs changes with t is refused at the first
  // event (the library compares f(t) and f(t + δ) there), never silently differentiated.
  virtual bool explicitTime() const { return false; }
  // ∂f/∂t on every row (∂g/∂t on algebraic rows). Only called when explicitTime() is true;
  // the default is an error (a model that says it depends on t must say how).
  virtual PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const;
  // The matrix that rhsJacobian fills. Default: AIJ with a dense row pattern (small models).
  virtual PetscErrorCode createJacobian(Mat *J) const;

  // ---- guards (state events) --------------------------------------------------------------
  virtual PetscInt numGuards() const { return 0; }
  virtual GuardInfo guardInfo(PetscInt j) const;
  // Whether guard j can fire in discrete state d (e.g. "leave the limit" only while at it).
  virtual bool guardActive(PetscInt j, const DiscreteState &d) const;
  // values has numGuards() entries, zero on entry. Each guard is written by exactly one rank
  // (the one owning what it watches); the engine sums over ranks. Called collectively.
  virtual PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const;
  // γ_u into gu (distributed like u, zero on entry), γ_t and γ_p (np entries) written by the
  // owning rank only (summed over ranks). Called collectively.
  virtual PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                                       PetscScalar *gp) const;
  // ġ_j = γ_t + γ_u·u̇ of every guard active in c.d, this rank's contribution (summed over
  // ranks by the engine, like guards()); rates has numGuards() entries, zero on entry; entries of
  // inactive guards are ignored. work is a scratch vector laid out like u (the engine's, so
  // nothing is allocated per call). Called collectively at every step end, so its cost is per
  // step. Default: guardGradient for each active guard (γ_u into work) and a local dot product
  // with u̇ over γ_u's nonzero entries — O(guards × (n + np)) per call; a model with many guards
  // should override it (the AD front ends do, with one directional derivative per guard).
  // For a DAE the engine first passes u̇ with ẏ = NaN (ẏ costs a factorization) and computes ẏ
  // only if an active guard's rate comes back NaN: a rate must carry a NaN of an entry of u̇ it
  // reads into its value, as plain arithmetic does — do not branch on, clamp (max/min) or
  // check the entries of u̇.
  virtual PetscErrorCode guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec work, PetscScalar *rates) const;

  // ---- time events ------------------------------------------------------------------------
  virtual PetscInt numTimeEvents() const { return 0; }
  // Time event k < numTimeEvents() (no default: a model that declares time events says when).
  virtual TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &p) const;

  // ---- transitions ------------------------------------------------------------------------
  // Update the discrete state when `id` fires (d holds the pre-event state on entry).
  virtual PetscErrorCode transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const;
  // Resets. The contract, which the library enforces at every event (a user's reset is never
  // ignored, a declared one never replaced by the identity):
  //   * hasReset(id) true: the library calls reset(id, …), which must be overridden, and at the
  //     sensitivity sweeps the four derivatives below, which must be overridden too (those a
  //     sweep needs: the forward sweep R_u v, the adjoint R_uᵀ w, both R_t and, with
  //     parameters, R_p). A missing one is an error naming the callback and the event —
  //     never the identity/zero a default would have to guess.
  //   * hasReset(id) false (overridden): no reset at `id`; reset is not called for it. A model
  //     whose reset() handles some events only says which ones here.
  //   * hasReset not overridden: the library calls reset(id, …) anyway to find out whether it
  //     is overridden; if it is, the run is refused (override hasReset) instead of silently
  //     dropping the reset; if not, the event has no reset.
  // Whether `id` has a reset map other than the identity.
  virtual bool hasReset(const EventId &id) const;
  // u⁺ = R(t, u⁻, p; d⁻). `c` carries the pre-event discrete state.
  virtual PetscErrorCode reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const;
  // Jacobian actions of R at (t, u⁻): out = R_u v, out = R_uᵀ w, Rp = R_p (dense n × N,
  // first np columns, zero on entry), Rt = R_t. Called only when hasReset(id); no defaults
  // (a reset that does not depend on t or p still says so: Rt = 0, Rp left untouched).
  virtual PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v,
                                             Vec out) const;
  virtual PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c,
                                                      Vec w, Vec out) const;
  virtual PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const;
  virtual PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c,
                                             Vec Rt) const;

  // Human-readable name of an event source (for messages, the monitor and JSON).
  std::string eventName(const EventId &id, const std::vector<PetscReal> &p) const;

  // ---- for the library: which "did the user write it?" defaults ran ------------------------
  // hasReset and reset cannot refuse by default (most models have no reset), so their defaults
  // record that they ran and the library asks afterwards (applyReset, src/model/reset_call.hpp).
  enum class DefaultCallback : unsigned { HasReset = 1u, Reset = 2u };
  void clearDefaultsUsed() const { defaultsUsed_ = 0; }
  bool defaultUsed(DefaultCallback cb) const { return (defaultsUsed_ & (unsigned)cb) != 0; }

private:
  void markDefaultUsed(DefaultCallback cb) const { defaultsUsed_ |= (unsigned)cb; }
  // Verifies the default rhsJacobianP's assumption (f has no p) at (t, u, d), once per (p, d).
  PetscErrorCode checkRhsIndependentOfParameters(PetscReal t, Vec u, const ModeContext &c) const;

  mutable unsigned defaultsUsed_ = 0;
  mutable std::vector<PetscReal> probedParameters_;    // p at which the modes below were verified
  mutable std::vector<DiscreteState> probedModes_;
};

std::string describe(const DiscreteState &d);

} // namespace hybridsens
