// hybridsens/ad.hpp — automatic-differentiation front end (optional component hybridsens::ad,
// built when Trilinos Sacado is found; see README "Automatic differentiation").
//
// A user writes each model function ONCE, as a member template over the scalar type S, on
// small dense local arrays; ADModel derives every derivative callback of HybridModel exactly
// (to round-off) with Sacado forward mode. Nothing is ever differenced.
//
//   class Ball : public hybridsens::ADModel<Ball> {
//   public:
//     PetscInt stateSize() const override { return 2; }
//     template <class S> void rhs(S t, const S *u, const S *p, const DiscreteState &d, S *f) const;
//     template <class S> void initialState(const S *p, S *u0) const;
//     // optional:
//     template <class S> S guard(PetscInt j, S t, const S *u, const S *p, const DiscreteState &d) const;
//     template <class S> void reset(const EventId &id, S t, const S *u, const S *p,
//                                   const DiscreteState &d, S *uplus) const;   // with hasReset()
//   A member named reset, guard or eventTime that does not match these signatures does not
//   compile (it would otherwise be ignored); a reset template needs hasReset(id) (true where it
//   applies), a hasReset(id) without a reset template is a runtime error, as is
//   numTimeEvents() > 0 without an eventTime template.
//     template <class S> S eventTime(PetscInt k, const S *p) const;          // time events T(p)
//     ... plus the ordinary HybridModel overrides that carry no derivative: numGuards(),
//     guardInfo(), guardActive(), transition(), hasReset(), numTimeEvents(), timeEventName(),
//     initialDiscreteState(), defaultParameters(), parameterNames(), algebraicIndices().
//   };
//
// Design (CRTP rather than a separate "Functions" object): ADModel<Derived> IS the HybridModel,
// and Derived is both the function container and the model. Everything that has no derivative
// (names, directions, activity, transitions of d, sizes) stays an ordinary virtual override
// exactly as for a hand-coded model, so there is no forwarding layer to learn or maintain; only
// the functions that have derivatives are templates. The templates deliberately carry the same
// names as the HybridModel callbacks they replace (rhs, reset, initialState); inside Derived they
// hide the Vec-based virtuals, which ADModel implements (and marks final).
//
// Derived, per callback (S = PetscReal for values; S = Fad for derivatives):
//   rhsJacobian       ∂f/∂u         (u seeded)                 into J (all n×n entries, rank 0)
//   rhsJacobianP      ∂f/∂p         (p seeded)                 first np columns of Jp
//   rhsTimeDerivative         ∂f/∂t (t seeded); ∂r/∂t likewise for costs
//   initialStateJacobianP     ∂u0/∂p
//   guardGradient     γ_u, γ_t, γ_p in ONE evaluation (n + np + 1 derivatives)
//   guardRates        γ_t + γ_u u̇ of the active guards (one directional derivative each)
//   resetJacobianAction        R_u v  (one directional derivative: u seeded with v)
//   resetJacobianTransposeAction R_uᵀ w (R_u by n derivatives, then the transposed product)
//   resetJacobianP, resetTimeDerivative    R_p, R_t
//   timeEvent(k, p)   T(p) and ∂T/∂p
//
// Second-derivative products (hybridsens/second_order.hpp): ADModel is also a SecondOrderModel
// (H(λᵀf) δz, H(γ_j) δz, H(wᵀR) δz, (λᵀu0)_pp δp) and ADCost a SecondOrderCost (H(ψ) δz, H(r) δz,
// H(g_i) δz), each from ONE evaluation of the same user template with the nested Fad
// DFad<SFad<1>> (z = (u, p, t) in the outer Fad, δz in the inner one).
//
// Scope: small dense systems whose whole state lives on rank 0 of comm() (other ranks own
// nothing), as the examples do; every callback is still called collectively and touches the
// Vecs on every rank (VecGetArray/Restore bump object state everywhere). Large sparse models
// made of many small components use hybridsens/ad_local.hpp (LocalKernelModel) instead.
//
// Fad type: MaxDerivatives = 0 (default) uses Sacado::Fad::DFad<PetscReal> (heap, any size);
// MaxDerivatives = K > 0 uses Sacado::Fad::SLFad<PetscReal, K> (stack storage; every
// derivative evaluation must need ≤ K directions: guardGradient needs n + np + 1 — checked, a
// PETSc error otherwise).
//
// Writing the templates: use S for anything that can depend on (t, u, p); PetscReal constants
// and int literals mix freely with S. For elementary functions write `using std::sin; sin(x)`
// (Sacado overloads are found by ADL). Branching on values (`if (u[0] > 0)`) is fine: the
// derivative is the one of the branch taken, as for a hand-coded model.
//
// ADCost<Derived> does the same for CostFunction: terminal ψ, integrand r and measurements g_i
// written once (each optional, detected at compile time: a member under one of these names that
// does not match is a compile error; hasTerminal()/hasIntegrand() default to whether the template
// exists, Derived overrides measurementTimes() and name()), gradients with respect to u and p derived:
//   template <class S> S terminal(S t, const S *u, const S *p, const DiscreteState &d) const;
//   template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &d) const;
//   template <class S> S measurement(PetscInt i, S t, const S *u, const S *p, const DiscreteState &d) const;
#pragma once

#include "hybridsens/detail/ad_dense.hpp"
#include "hybridsens/detail/ad_seed.hpp"
#include "hybridsens/detail/ad_traits.hpp"
#include "hybridsens/model.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/second_order.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace hybridsens {

template <class Derived, int MaxDerivatives = 0> class ADModel : public HybridModel, public SecondOrderModel {
public:
  using Fad = typename ad::FadSelect<MaxDerivatives>::type;

  // Derived is complete here (the constructor is instantiated with Derived's): refuse an
  // optional template whose signature does not match, which would otherwise be ignored.
  ADModel() {
    static_assert(ad::detail::HasReset<Derived>::value || ad::detail::KeepsReset<Derived, decltype(&ADModel::reset)>::value,
                  "ADModel: the model declares a member named 'reset' that ADModel cannot call (it would be ignored and every "
                  "reset taken as the identity); the reset template must read " HYBRIDSENS_AD_RESET_SIGNATURE);
    static_assert(ad::detail::HasGuard<Derived>::value || !ad::detail::DeclaresGuard<Derived>,
                  "ADModel: the model declares a member named 'guard' that ADModel cannot call; the guard template must "
                  "read " HYBRIDSENS_AD_GUARD_SIGNATURE);
    static_assert(ad::detail::HasEventTime<Derived>::value || !ad::detail::DeclaresEventTime<Derived>,
                  "ADModel: the model declares a member named 'eventTime' that ADModel cannot call; the time-event template "
                  "must read " HYBRIDSENS_AD_EVENT_TIME_SIGNATURE);
  }

  // ---- what Derived provides besides its templates ----------------------------------------
  // Global number of continuous state entries (all on rank 0 of comm()).
  virtual PetscInt stateSize() const = 0;
  // Name of time event k (its time comes from the eventTime template).
  virtual std::string timeEventName(PetscInt k) const { return "time_event" + std::to_string(k); }

  // ---- everything below is derived from the templates (final: Derived does not override it) --
  PetscInt localSize() const final { return rank() == 0 ? stateSize() : 0; }
  // AD gives ∂f/∂t exactly, so an AD model may depend on t freely.
  bool explicitTime() const final { return true; }

  // initial state u0(p) and ∂u0/∂p (p seeded)
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const final {
    std::vector<PetscReal> x(localSize(), 0.0);
    PetscFunctionBeginUser;
    if (!x.empty()) self().template initialState<PetscReal>(c.p.data(), x.data());
    PetscCall(ad::detail::writeLocal(u0, x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const final {
    const PetscInt n = localSize(), np = (PetscInt)c.p.size();
    PetscFunctionBeginUser;
    if (!n || !np) PetscFunctionReturn(0);
    PetscCall(ad::detail::checkDirections((int)np, MaxDerivatives));
    In<Fad> in;
    in.seed(ad::detail::WrtP, 0.0, {}, ad::detail::whole(c.p));
    std::vector<Fad> u0(n);
    self().template initialState<Fad>(in.p.data(), u0.data());
    PetscCall(ad::detail::setDerivativeBlock(du0dp, u0, 0, np));
    PetscFunctionReturn(0);
  }

  // dynamics f, ∂f/∂u (u seeded, all n×n entries on rank 0), ∂f/∂p (p seeded, the first np
  // columns of Jp), ∂f/∂t (t seeded)
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const final {
    std::vector<PetscReal> x, y;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    y.assign(x.size(), 0.0);
    if (!x.empty()) self().template rhs<PetscReal>(t, x.data(), c.p.data(), c.d, y.data());
    PetscCall(ad::detail::writeLocal(f, y));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const final {
    std::vector<PetscReal> x;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    const PetscInt n = (PetscInt)x.size();
    if (!n) PetscFunctionReturn(0);
    PetscCall(ad::detail::checkDirections((int)n, MaxDerivatives));
    PetscCall(ad::detail::setDerivativeBlock(J, rhsOf<Fad>(ad::detail::WrtU, t, x, c), 0, n));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const final {
    std::vector<PetscReal> x;
    const PetscInt np = (PetscInt)c.p.size();
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    if (x.empty() || !np) PetscFunctionReturn(0);
    PetscCall(ad::detail::checkDirections((int)np, MaxDerivatives));
    PetscCall(ad::detail::setDerivativeBlock(Jp, rhsOf<Fad>(ad::detail::WrtP, t, x, c), 0, np));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const final {
    std::vector<PetscReal> x, out;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    out.assign(x.size(), 0.0);
    if (!x.empty()) {
      const std::vector<Fad> f = rhsOf<Fad>(ad::detail::WrtT, t, x, c);
      for (size_t i = 0; i < x.size(); ++i) out[i] = f[i].dx(0);
    }
    PetscCall(ad::detail::writeLocal(ft, out));
    PetscFunctionReturn(0);
  }

  // guards γ_j, their gradients (γ_u, γ_p, γ_t from one evaluation with n + np + 1 directions)
  // and the rates γ_t + γ_u·u̇ of the active ones (one directional derivative: u seeded with u̇, t with 1)
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const final {
    std::vector<PetscReal> x;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (!x.empty())
        for (PetscInt j = 0; j < numGuards(); ++j) values[j] = self().template guard<PetscReal>(j, t, x.data(), c.p.data(), c.d);
    } else PetscCall(requireNoGuards());
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const final {
    std::vector<PetscReal> x;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    std::vector<PetscReal> g(n, 0.0);
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (n) {
        PetscCall(ad::detail::checkDirections((int)(n + np + 1), MaxDerivatives));
        In<Fad> in;
        in.seed(ad::detail::WrtU | ad::detail::WrtP | ad::detail::WrtT, t, ad::detail::whole(x), ad::detail::whole(c.p));
        const Fad gam = self().template guard<Fad>(j, in.t, in.u.data(), in.p.data(), c.d);
        for (PetscInt i = 0; i < n; ++i) g[i] = gam.dx((int)i);
        for (PetscInt k = 0; k < np; ++k) gp[k] = gam.dx(in.pAt + (int)k);
        *gt = gam.dx(in.tAt);
      }
    } else SETERRQ(comm(), PETSC_ERR_SUP, "guardGradient(%" PetscInt_FMT ") called but the model has no guard<S>() template", j);
    PetscCall(ad::detail::writeLocal(gu, g));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec, PetscScalar *rates) const final {
    std::vector<PetscReal> x, xd;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(ad::detail::readLocal(udot, xd));
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (!x.empty()) {
        PetscCall(ad::detail::checkDirections(1, MaxDerivatives));
        In<Fad> in;
        in.seedTangent(t, true, ad::detail::whole(x), ad::detail::whole(xd), ad::detail::whole(c.p));
        for (PetscInt j = 0; j < numGuards(); ++j)
          if (guardActive(j, c.d)) rates[j] = self().template guard<Fad>(j, in.t, in.u.data(), in.p.data(), c.d).dx(0);
      }
    } else PetscCall(requireNoGuards());
    PetscFunctionReturn(0);
  }

  // time event k: T(p) and ∂T/∂p (p seeded)
  TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &p) const final {
    TimeEventInfo info;
    info.name = timeEventName(k);
    if constexpr (ad::detail::HasEventTime<Derived>::value) {
      // Always DFad here (called once per event, any number of parameters).
      using DFad = Sacado::Fad::DFad<PetscReal>;
      In<DFad> in;
      in.seed(ad::detail::WrtP, 0.0, {}, ad::detail::whole(p));
      const DFad T = self().template eventTime<DFad>(k, in.p.data());
      info.time = T.val();
      for (size_t i = 0; i < p.size(); ++i) info.dtime_dp.push_back(T.dx((int)i));
    } else {
      // Called only for k < numTimeEvents(); the library turns the exception into a PETSc error.
      throw std::logic_error("numTimeEvents() > 0 but the model has no eventTime template: " HYBRIDSENS_AD_EVENT_TIME_SIGNATURE);
    }
    return info;
  }

  // ---- resets: u⁺ = ρ(t, u⁻, p); rows the template does not write keep u⁻ -------------------
  // Without a reset template this is HybridModel's default (the library then knows the model has
  // no reset), unless hasReset(id) declares one: that is refused, never taken as the identity.
  // The derivatives below are called only when hasReset(id); without a template they are
  // HybridModel's refusing defaults.
  PetscErrorCode reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const final {
    std::vector<PetscReal> x, y;
    PetscFunctionBeginUser;
    if constexpr (!ad::detail::HasReset<Derived>::value) {
      PetscCheck(!hasReset(id), comm(), PETSC_ERR_SUP,
                 "hasReset() is true for event '%s' but the model has no reset template: " HYBRIDSENS_AD_RESET_SIGNATURE,
                 eventName(id, c.p).c_str());
      PetscCall(HybridModel::reset(id, t, uminus, c, uplus));
    } else {
      PetscCall(ad::detail::readLocal(uminus, x));
      y = x;
      if (!x.empty()) self().template reset<PetscReal>(id, t, x.data(), c.p.data(), c.d, y.data());
      PetscCall(ad::detail::writeLocal(uplus, y));
    }
    PetscFunctionReturn(0);
  }
  // R_u v as one directional derivative (u seeded with v).
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const final {
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetJacobianAction(id, t, uminus, c, v, out);
    std::vector<PetscReal> x, dv, y;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    PetscCall(ad::detail::readLocal(v, dv));
    y = dv;
    if (!x.empty()) {
      In<Fad> in;
      in.seedTangent(t, false, ad::detail::whole(x), ad::detail::whole(dv), ad::detail::whole(c.p));
      const std::vector<Fad> up = resetOf(id, in, c);
      for (size_t i = 0; i < x.size(); ++i) y[i] = up[i].dx(0);
    }
    PetscCall(ad::detail::writeLocal(out, y));
    PetscFunctionReturn(0);
  }
  // R_uᵀ w: R_u by n directions, then out_j = Σ_i (R_u)_ij w_i.
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                              Vec out) const final {
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetJacobianTransposeAction(id, t, uminus, c, w, out);
    std::vector<PetscReal> x, dw, y;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    PetscCall(ad::detail::readLocal(w, dw));
    y = dw;
    const PetscInt n = (PetscInt)x.size();
    if (n) {
      PetscCall(ad::detail::checkDirections((int)n, MaxDerivatives));
      In<Fad> in;
      in.seed(ad::detail::WrtU, t, ad::detail::whole(x), ad::detail::whole(c.p));
      const std::vector<Fad> up = resetOf(id, in, c);
      for (PetscInt j = 0; j < n; ++j) {
        PetscReal s = 0;
        for (PetscInt i = 0; i < n; ++i) s += up[i].dx((int)j) * dw[i];
        y[j] = s;
      }
    }
    PetscCall(ad::detail::writeLocal(out, y));
    PetscFunctionReturn(0);
  }
  // R_p (p seeded) and R_t (t seeded).
  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const final {
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetJacobianP(id, t, uminus, c, Rp);
    std::vector<PetscReal> x;
    const PetscInt np = (PetscInt)c.p.size();
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    if (!x.empty() && np) {
      PetscCall(ad::detail::checkDirections((int)np, MaxDerivatives));
      In<Fad> in;
      in.seed(ad::detail::WrtP, t, ad::detail::whole(x), ad::detail::whole(c.p));
      PetscCall(ad::detail::setDerivativeBlock(Rp, resetOf(id, in, c), 0, np));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const final {
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetTimeDerivative(id, t, uminus, c, Rt);
    std::vector<PetscReal> x, y;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    y.assign(x.size(), 0.0);
    if (!x.empty()) {
      In<Fad> in;
      in.seed(ad::detail::WrtT, t, ad::detail::whole(x), ad::detail::whole(c.p));
      const std::vector<Fad> up = resetOf(id, in, c);
      for (size_t i = 0; i < x.size(); ++i) y[i] = up[i].dx(0);
    }
    PetscCall(ad::detail::writeLocal(Rt, y));
    PetscFunctionReturn(0);
  }

  // ---- second-derivative products (hybridsens/second_order.hpp) by nested Fad ---------------
  // One evaluation of the user's template with S = DFad<SFad<1>>: z = (u, p, t) seeded in the
  // outer Fad (n + np + 1 directions), δz in the inner one; H δz = Λ.dx(k).dx(0).

  // H(λᵀf) δz.
  PetscErrorCode rhsHessianProduct(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const final {
    std::vector<PetscReal> x, lam;
    In<Fad2> in;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(ad::detail::readLocal(lambda, lam));
    PetscCall(seedSecondOrder(t, x, c.p, dir, in));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    if (n) {
      std::vector<Fad2> f(n);
      self().template rhs<Fad2>(in.t, in.u.data(), in.p.data(), c.d, f.data());
      Fad2 L(0.0);
      for (PetscInt i = 0; i < n; ++i) L += lam[i] * f[i];
      PetscCall(ad::detail::writeHessianOutput(&L, n, np, out));
    } else PetscCall(ad::detail::writeHessianOutput(nullptr, n, np, out));
    PetscFunctionReturn(0);
  }
  // H(γ_j) δz.
  PetscErrorCode guardHessianProduct(PetscInt j, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                     const SecondOrderOutput &out) const final {
    std::vector<PetscReal> x;
    In<Fad2> in;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(seedSecondOrder(t, x, c.p, dir, in));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (n) {
        const Fad2 L = self().template guard<Fad2>(j, in.t, in.u.data(), in.p.data(), c.d);
        PetscCall(ad::detail::writeHessianOutput(&L, n, np, out));
      } else PetscCall(ad::detail::writeHessianOutput(nullptr, n, np, out));
    } else SETERRQ(comm(), PETSC_ERR_SUP, "guardHessianProduct(%" PetscInt_FMT ") called but the model has no guard<S>() template", j);
    PetscFunctionReturn(0);
  }
  // H(wᵀR) δz at (t, u⁻); zero for models without a reset template (identity resets).
  PetscErrorCode resetHessianProduct(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                     const SecondOrderDirection &dir, const SecondOrderOutput &out) const final {
    std::vector<PetscReal> x, wl;
    In<Fad2> in;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    PetscCall(ad::detail::readLocal(w, wl));
    PetscCall(seedSecondOrder(t, x, c.p, dir, in));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    Fad2 L(0.0);
    bool any = false;
    if constexpr (ad::detail::HasReset<Derived>::value) {
      if (n) {
        const std::vector<Fad2> up = resetOf(id, in, c);
        for (PetscInt i = 0; i < n; ++i) L += wl[i] * up[i];
        any = true;
      }
    }
    PetscCall(ad::detail::writeHessianOutput(any ? &L : nullptr, n, np, out));
    PetscFunctionReturn(0);
  }
  // outP = T_pp δp of time event k (zeros without an eventTime template).
  PetscErrorCode timeEventHessianProduct(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp,
                                         PetscScalar *outP) const final {
    const int np = (int)p.size();
    PetscFunctionBeginUser;
    for (int i = 0; i < np; ++i) outP[i] = 0;
    if constexpr (ad::detail::HasEventTime<Derived>::value) {
      In<Fad2> in;
      in.seedSecond(ad::detail::WrtP, 0.0, 0.0, {}, {}, ad::detail::whole(p), ad::detail::whole(dp, p.size()));
      const Fad2 T = self().template eventTime<Fad2>(k, in.p.data());
      for (int i = 0; i < np; ++i) outP[i] = ad::detail::second(T, i);
    }
    PetscFunctionReturn(0);
  }
  // outP = (λᵀu0)_pp δp.
  PetscErrorCode initialStateHessianProduct(const ModeContext &c, Vec lambda, const PetscScalar *dp, PetscScalar *outP) const final {
    std::vector<PetscReal> lam;
    const PetscInt np = (PetscInt)c.p.size();
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(lambda, lam));
    const PetscInt n = (PetscInt)lam.size();
    for (PetscInt k = 0; k < np; ++k) outP[k] = 0;
    if (n && np) {
      In<Fad2> in;
      in.seedSecond(ad::detail::WrtP, 0.0, 0.0, {}, {}, ad::detail::whole(c.p), ad::detail::whole(dp, c.p.size()));
      std::vector<Fad2> u0(n);
      self().template initialState<Fad2>(in.p.data(), u0.data());
      Fad2 L(0.0);
      for (PetscInt i = 0; i < n; ++i) L += lam[i] * u0[i];
      for (PetscInt k = 0; k < np; ++k) outP[k] = ad::detail::second(L, (int)k);
    }
    PetscFunctionReturn(0);
  }

protected:
  using Fad2 = ad::detail::Fad2;
  const Derived &self() const { return static_cast<const Derived &>(*this); }
  int rank() const {
    PetscMPIInt r = 0;
    MPI_Comm_rank(comm(), &r);
    return (int)r;
  }

private:
  template <class S> using In = ad::detail::Inputs<S>;

  // f(t, u, p) with the inputs in wrt seeded.
  template <class S> std::vector<S> rhsOf(unsigned wrt, PetscReal t, const std::vector<PetscReal> &x, const ModeContext &c) const {
    In<S> in;
    in.seed(wrt, t, ad::detail::whole(x), ad::detail::whole(c.p));
    std::vector<S> f(x.size());
    self().template rhs<S>(in.t, in.u.data(), in.p.data(), c.d, f.data());
    return f;
  }
  // u⁺ = ρ(t, u, p) at the seeded inputs, u⁺ preset to u (identity where the user writes nothing).
  template <class S> std::vector<S> resetOf(const EventId &id, const In<S> &in, const ModeContext &c) const {
    std::vector<S> up(in.u.a);
    if constexpr (ad::detail::HasReset<Derived>::value) self().template reset<S>(id, in.t, in.u.data(), in.p.data(), c.d, up.data());
    return up;
  }
  // Seeds z = (u, p, t) for a second-order evaluation along dir (dir.du read on every rank).
  static PetscErrorCode seedSecondOrder(PetscReal t, const std::vector<PetscReal> &x, const std::vector<PetscReal> &p,
                                        const SecondOrderDirection &dir, In<Fad2> &in) {
    std::vector<PetscReal> du;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocalOrZero(dir.du, (PetscInt)x.size(), du));
    in.seedSecond(ad::detail::WrtU | ad::detail::WrtP | ad::detail::WrtT, t, dir.dt, ad::detail::whole(x), ad::detail::whole(du),
                  ad::detail::whole(p), ad::detail::whole(dir.dp, p.size()));
    PetscFunctionReturn(0);
  }
  PetscErrorCode requireNoGuards() const {
    PetscFunctionBeginUser;
    PetscCheck(numGuards() == 0, comm(), PETSC_ERR_SUP, "numGuards() > 0 but the model has no guard<S>() template");
    PetscFunctionReturn(0);
  }
};

// CostFunction whose terminal, integrand and measurement parts are written once as templates.
template <class Derived, int MaxDerivatives = 0> class ADCost : public CostFunction, public SecondOrderCost {
public:
  using Fad = typename ad::FadSelect<MaxDerivatives>::type;

  // As for ADModel: a terminal/integrand/measurement member that does not match the template
  // ADCost calls would be ignored (the part silently missing from the cost and its gradient).
  ADCost() {
    static_assert(ad::detail::HasTerminal<Derived>::value || ad::detail::KeepsTerminal<Derived, decltype(&ADCost::terminal)>::value,
                  "ADCost: the cost declares a member named 'terminal' that ADCost cannot call; the template must "
                  "read " HYBRIDSENS_AD_TERMINAL_SIGNATURE);
    static_assert(ad::detail::HasIntegrand<Derived>::value || ad::detail::KeepsIntegrand<Derived, decltype(&ADCost::integrand)>::value,
                  "ADCost: the cost declares a member named 'integrand' that ADCost cannot call; the template must "
                  "read " HYBRIDSENS_AD_INTEGRAND_SIGNATURE);
    static_assert(ad::detail::HasMeasurement<Derived>::value ||
                      ad::detail::KeepsMeasurement<Derived, decltype(&ADCost::measurement)>::value,
                  "ADCost: the cost declares a member named 'measurement' that ADCost cannot call; the template must "
                  "read " HYBRIDSENS_AD_MEASUREMENT_SIGNATURE);
  }

  // A written template is used unless Derived says otherwise (a hand-coded cost must override
  // these; here the template itself is the declaration, so it cannot be forgotten).
  bool hasTerminal() const override { return ad::detail::HasTerminal<Derived>::value; }
  bool hasIntegrand() const override { return ad::detail::HasIntegrand<Derived>::value; }
  // AD gives ∂r/∂t exactly: integrands may depend on t freely.
  bool explicitTime() const final { return true; }

  // ---- everything below is derived from the templates -------------------------------------
  // Values and gradients on the owning rank (this rank's contribution; nothing elsewhere);
  // gradients from one evaluation with n + np directions (u, p seeded).
  PetscErrorCode terminal(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    if (!hasTerminal()) return CostFunction::terminal(t, u, c, value);  // undeclared: the default answers
    return value_(Part::Terminal, 0, t, u, c, value);
  }
  PetscErrorCode terminalGradient(PetscReal t, Vec u, const ModeContext &c, Vec psi_u, PetscScalar *psi_p) const final {
    return gradient(Part::Terminal, 0, t, u, c, psi_u, psi_p);
  }
  PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    if (!hasIntegrand()) return CostFunction::integrand(t, u, c, value);  // undeclared: the default answers
    return value_(Part::Integrand, 0, t, u, c, value);
  }
  PetscErrorCode integrandGradient(PetscReal t, Vec u, const ModeContext &c, Vec r_u, PetscScalar *r_p) const final {
    return gradient(Part::Integrand, 0, t, u, c, r_u, r_p);
  }
  // ∂r/∂t (t seeded).
  PetscErrorCode integrandTimeDerivative(PetscReal t, Vec u, const ModeContext &c, PetscScalar *r_t) const final {
    std::vector<PetscReal> x;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    *r_t = 0;
    if constexpr (ad::detail::HasIntegrand<Derived>::value) {
      PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
      PetscCall(ad::detail::readLocal(u, x));
      if (owner) {
        ad::detail::Inputs<Fad> in;
        in.seed(ad::detail::WrtT, t, ad::detail::whole(x), ad::detail::whole(c.p));
        *r_t = part(Part::Integrand, 0, in, c.d).dx(0);
      }
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurement(PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    return value_(Part::Measurement, i, t, u, c, value);
  }
  PetscErrorCode measurementGradient(PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec g_u, PetscScalar *g_p) const final {
    return gradient(Part::Measurement, i, t, u, c, g_u, g_p);
  }

  // H δz of each part, one nested-Fad evaluation (owning rank; zeros elsewhere).
  PetscErrorCode terminalHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                        const SecondOrderOutput &out) const final {
    return hessian(Part::Terminal, 0, t, u, c, dir, out);
  }
  PetscErrorCode integrandHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                         const SecondOrderOutput &out) const final {
    return hessian(Part::Integrand, 0, t, u, c, dir, out);
  }
  PetscErrorCode measurementHessianProduct(PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const final {
    return hessian(Part::Measurement, i, t, u, c, dir, out);
  }

protected:
  const Derived &self() const { return static_cast<const Derived &>(*this); }

private:
  enum class Part { Terminal, Integrand, Measurement };

  bool has(Part which) const {
    switch (which) {
    case Part::Terminal: return ad::detail::HasTerminal<Derived>::value;
    case Part::Integrand: return ad::detail::HasIntegrand<Derived>::value;
    default: return ad::detail::HasMeasurement<Derived>::value;
    }
  }
  PetscErrorCode missing(Part which) const {
    static const char *const what[] = {"hasTerminal() but no terminal<S>() template", "hasIntegrand() but no integrand<S>() template",
                                       "measurementTimes() but no measurement<S>() template"};
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': %s", name().c_str(), what[(int)which]);
  }
  // The requested part at the seeded inputs (a part Derived lacks is never evaluated: has()).
  template <class S> S part(Part which, PetscInt i, const ad::detail::Inputs<S> &in, const DiscreteState &d) const {
    switch (which) {
    case Part::Terminal:
      if constexpr (ad::detail::HasTerminal<Derived>::value) return self().terminal(in.t, in.u.data(), in.p.data(), d);
      break;
    case Part::Integrand:
      if constexpr (ad::detail::HasIntegrand<Derived>::value) return self().integrand(in.t, in.u.data(), in.p.data(), d);
      break;
    case Part::Measurement:
      if constexpr (ad::detail::HasMeasurement<Derived>::value) return self().measurement(i, in.t, in.u.data(), in.p.data(), d);
      break;
    }
    return S(0.0);
  }

  PetscErrorCode value_(Part which, PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const {
    std::vector<PetscReal> x;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    if (!has(which)) PetscCall(missing(which));
    PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
    PetscCall(ad::detail::readLocal(u, x));
    if (owner) {
      ad::detail::Inputs<PetscReal> in;
      in.seed(0, t, ad::detail::whole(x), ad::detail::whole(c.p));
      *value = part(which, i, in, c.d);
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode gradient(Part which, PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const {
    std::vector<PetscReal> x, g;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    if (!has(which)) PetscCall(missing(which));
    PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
    PetscCall(ad::detail::readLocal(u, x));
    g.assign(x.size(), 0.0);
    if (owner && n) {
      const PetscInt np = (PetscInt)c.p.size();
      PetscCall(ad::detail::checkDirections((int)(n + np), MaxDerivatives));
      ad::detail::Inputs<Fad> in;
      in.seed(ad::detail::WrtU | ad::detail::WrtP, t, ad::detail::whole(x), ad::detail::whole(c.p));
      const Fad v = part(which, i, in, c.d);
      for (PetscInt k = 0; k < n; ++k) g[k] = v.dx((int)k);
      for (PetscInt k = 0; k < np; ++k) gp[k] = v.dx(in.pAt + (int)k);
    }
    PetscCall(ad::detail::writeLocal(gu, g));
    PetscFunctionReturn(0);
  }
  PetscErrorCode hessian(Part which, PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                         const SecondOrderOutput &out) const {
    using Fad2 = ad::detail::Fad2;
    std::vector<PetscReal> x, du;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    if (!has(which)) PetscCall(missing(which));
    PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(ad::detail::readLocalOrZero(dir.du, (PetscInt)x.size(), du));
    const PetscInt nl = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    if (owner && nl) {
      ad::detail::Inputs<Fad2> in;
      in.seedSecond(ad::detail::WrtU | ad::detail::WrtP | ad::detail::WrtT, t, dir.dt, ad::detail::whole(x), ad::detail::whole(du),
                    ad::detail::whole(c.p), ad::detail::whole(dir.dp, c.p.size()));
      const Fad2 L = part(which, i, in, c.d);
      PetscCall(ad::detail::writeHessianOutput(&L, nl, np, out));
    } else PetscCall(ad::detail::writeHessianOutput(nullptr, nl, np, out));
    PetscFunctionReturn(0);
  }
};

} // namespace hybridsens
