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

#include "hybridsens/model.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/second_order.hpp"

#include <Sacado_No_Kokkos.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hybridsens {

namespace ad {

template <int MaxDerivatives> struct FadSelect { using type = Sacado::Fad::SLFad<PetscReal, MaxDerivatives>; };
template <> struct FadSelect<0> { using type = Sacado::Fad::DFad<PetscReal>; };

namespace detail {

using R = PetscReal;
template <class T> T &lv();  // declval as lvalue (unevaluated contexts only)

// ---- detection of the optional templates (SFINAE on `.template name<PetscReal>(...)`) ------
template <class D, class = void> struct HasGuard : std::false_type {};
template <class D>
struct HasGuard<D, std::void_t<decltype(std::declval<const D &>().template guard<R>(
                       PetscInt(0), R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>>
    : std::true_type {};

template <class D, class = void> struct HasReset : std::false_type {};
template <class D>
struct HasReset<D, std::void_t<decltype(std::declval<const D &>().template reset<R>(
                       lv<const EventId>(), R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>(), (R *)nullptr))>>
    : std::true_type {};

template <class D, class = void> struct HasEventTime : std::false_type {};
template <class D>
struct HasEventTime<D, std::void_t<decltype(std::declval<const D &>().template eventTime<R>(PetscInt(0), (const R *)nullptr))>>
    : std::true_type {};

template <class D, class = void> struct HasTerminal : std::false_type {};
template <class D>
struct HasTerminal<D, std::void_t<decltype(std::declval<const D &>().template terminal<R>(
                          R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>> : std::true_type {};

template <class D, class = void> struct HasIntegrand : std::false_type {};
template <class D>
struct HasIntegrand<D, std::void_t<decltype(std::declval<const D &>().template integrand<R>(
                           R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>> : std::true_type {};

template <class D, class = void> struct HasMeasurement : std::false_type {};
template <class D>
struct HasMeasurement<D, std::void_t<decltype(std::declval<const D &>().template measurement<R>(
                             PetscInt(0), R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>>
    : std::true_type {};

// ---- refusing an optional template that does not match --------------------------------------
// Detection by call (above) cannot tell "absent" from "misspelled": a reset<S> without the
// EventId argument would be ignored and every reset taken as the identity. So ADModel/ADCost
// also check at compile time that the Derived class declares nothing else under these names.
// A name the library itself declares (reset, terminal, integrand, measurement: the Vec-based
// callbacks) is "kept" when &D::name is still the library's own member; anything Derived
// declares under it (a template, an overload, another signature) changes that.
template <class D, class Own, class = void> struct KeepsLibraryReset : std::false_type {};
template <class D, class Own>
struct KeepsLibraryReset<D, Own, std::void_t<decltype(&D::reset)>> : std::is_same<decltype(&D::reset), Own> {};
template <class D, class Own, class = void> struct KeepsLibraryTerminal : std::false_type {};
template <class D, class Own>
struct KeepsLibraryTerminal<D, Own, std::void_t<decltype(&D::terminal)>> : std::is_same<decltype(&D::terminal), Own> {};
template <class D, class Own, class = void> struct KeepsLibraryIntegrand : std::false_type {};
template <class D, class Own>
struct KeepsLibraryIntegrand<D, Own, std::void_t<decltype(&D::integrand)>> : std::is_same<decltype(&D::integrand), Own> {};
template <class D, class Own, class = void> struct KeepsLibraryMeasurement : std::false_type {};
template <class D, class Own>
struct KeepsLibraryMeasurement<D, Own, std::void_t<decltype(&D::measurement)>> : std::is_same<decltype(&D::measurement), Own> {};
// A name the library does not declare (guard, eventTime) is declared by Derived when its
// address is well-formed: a single member function, or a single template (&D::name<R>).
template <class D, class = void> struct NamesGuardFunction : std::false_type {};
template <class D> struct NamesGuardFunction<D, std::void_t<decltype(&D::guard)>> : std::true_type {};
template <class D, class = void> struct NamesGuardTemplate : std::false_type {};
template <class D> struct NamesGuardTemplate<D, std::void_t<decltype(&D::template guard<R>)>> : std::true_type {};
template <class D, class = void> struct NamesEventTimeFunction : std::false_type {};
template <class D> struct NamesEventTimeFunction<D, std::void_t<decltype(&D::eventTime)>> : std::true_type {};
template <class D, class = void> struct NamesEventTimeTemplate : std::false_type {};
template <class D> struct NamesEventTimeTemplate<D, std::void_t<decltype(&D::template eventTime<R>)>> : std::true_type {};
template <class D> inline constexpr bool DeclaresGuard = NamesGuardFunction<D>::value || NamesGuardTemplate<D>::value;
template <class D> inline constexpr bool DeclaresEventTime = NamesEventTimeFunction<D>::value || NamesEventTimeTemplate<D>::value;

// The signatures, for the messages below (static_assert needs literals).
#define HYBRIDSENS_AD_RESET_SIGNATURE                                                                                   \
  "template <class S> void reset(const EventId &id, S t, const S *u, const S *p, const DiscreteState &d, S *uplus) const"
#define HYBRIDSENS_AD_GUARD_SIGNATURE "template <class S> S guard(PetscInt j, S t, const S *u, const S *p, const DiscreteState &d) const"
#define HYBRIDSENS_AD_EVENT_TIME_SIGNATURE "template <class S> S eventTime(PetscInt k, const S *p) const"

// ---- rank-0 dense state access ------------------------------------------------------------
// The whole state lives on rank 0 of the vector's communicator. Returns in *owner whether this
// rank holds it (and checks that it holds all of it).
inline PetscErrorCode ownsWholeState(Vec v, PetscInt *n, PetscBool *owner) {
  PetscInt nl, N;
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &nl));
  PetscCall(VecGetSize(v, &N));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)v), &rank));
  *owner = rank == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscCheck(rank == 0 ? nl == N : nl == 0, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "hybridsens AD (dense path): the whole state must live on rank 0 (rank %d owns %" PetscInt_FMT " of %" PetscInt_FMT ")",
             (int)rank, nl, N);
  *n = N;
  PetscFunctionReturn(0);
}

// Copies the local entries of v (all of them on rank 0, none elsewhere); Get/Restore on every rank.
inline PetscErrorCode readLocal(Vec v, std::vector<PetscReal> &x) {
  const PetscScalar *a;
  PetscInt nl;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &nl));
  PetscCall(VecGetArrayRead(v, &a));
  x.assign(a, a + nl);
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(0);
}

// Writes y into the local entries of v (y empty off rank 0); Get/Restore on every rank.
inline PetscErrorCode writeLocal(Vec v, const std::vector<PetscReal> &y) {
  PetscScalar *a;
  PetscInt nl;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &nl));
  PetscCheck((size_t)nl == y.size() || nl == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "AD write: size mismatch");
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < nl; ++i) a[i] = y[i];
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

// Fad helpers: independent variables x[i] seeded at direction offset+i of nd directions;
// passive values (constants, no derivative storage).
template <class Fad> void seed(std::vector<Fad> &out, const std::vector<PetscReal> &x, int nd, int offset) {
  out.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = nd > 0 ? Fad(nd, offset + (int)i, x[i]) : Fad(x[i]);
}
template <class Fad> void passive(std::vector<Fad> &out, const std::vector<PetscReal> &x) {
  out.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = Fad(x[i]);
}
// A static Fad (MaxDerivatives > 0) holds at most MaxDerivatives directions.
template <int MaxDerivatives> PetscErrorCode checkDirections(int nd) {
  PetscFunctionBeginUser;
  PetscCheck(MaxDerivatives == 0 || nd <= MaxDerivatives, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "hybridsens AD: %d derivative directions needed, the static Fad holds %d (raise MaxDerivatives)", nd, MaxDerivatives);
  PetscFunctionReturn(0);
}


// ---- second order (nested Fad): z = (t, u, p) seeded in the outer Fad, the direction δz in
// the inner one; for a scalar Λ(z), Λ.dx(k).dx(0) = (∂²Λ/∂z∂z δz)_k. The inner Fad carries
// one direction (static storage); the outer one as many as needed.
using Fad2Inner = Sacado::Fad::SFad<PetscReal, 1>;
using Fad2 = Sacado::Fad::DFad<Fad2Inner>;

// z_k = value, seeded as outer direction k of nd, with inner (directional) derivative dz.
inline Fad2 seed2(int nd, int k, PetscReal value, PetscReal dz) {
  Fad2Inner in(1, value);
  in.fastAccessDx(0) = dz;
  return Fad2(nd, k, in);
}

// Reads the local entries of an optional direction Vec (zeros of length nl when v is null;
// Get/Restore on every rank otherwise).
inline PetscErrorCode readLocalOrZero(Vec v, PetscInt nl, std::vector<PetscReal> &x) {
  PetscFunctionBeginUser;
  if (v) PetscCall(readLocal(v, x));
  else x.assign(nl, 0.0);
  PetscFunctionReturn(0);
}

// Splits (H δz) of a scalar Λ seeded as [u (n) | p (np) | t] into the SecondOrderOutput blocks.
// The Vec part is written on every rank (empty off the owner), p and t overwritten everywhere
// (zero where this rank evaluated nothing: its contribution).
inline PetscErrorCode writeHessianOutput(const Fad2 *L, PetscInt n, PetscInt np, const SecondOrderOutput &out) {
  std::vector<PetscReal> hu(n, 0.0);
  PetscFunctionBeginUser;
  if (L)
    for (PetscInt i = 0; i < n; ++i) hu[i] = L->dx((int)i).dx(0);
  if (out.u) PetscCall(writeLocal(out.u, hu));
  if (out.p)
    for (PetscInt k = 0; k < np; ++k) out.p[k] = L ? L->dx((int)(n + k)).dx(0) : 0.0;
  if (out.t) *out.t = L ? L->dx((int)(n + np)).dx(0) : 0.0;
  PetscFunctionReturn(0);
}

} // namespace detail
} // namespace ad

template <class Derived, int MaxDerivatives = 0> class ADModel : public HybridModel, public SecondOrderModel {
public:
  using Fad = typename ad::FadSelect<MaxDerivatives>::type;

  // Derived is complete here (the constructor is instantiated with Derived's): refuse an
  // optional template whose signature does not match, which would otherwise be ignored.
  ADModel() {
    static_assert(ad::detail::HasReset<Derived>::value ||
                      ad::detail::KeepsLibraryReset<Derived, decltype(&ADModel::reset)>::value,
                  "ADModel: the model declares a member named 'reset' that ADModel cannot call (it would be ignored and every "
                  "reset taken as the identity); the reset template must read " HYBRIDSENS_AD_RESET_SIGNATURE);
    static_assert(ad::detail::HasGuard<Derived>::value || !ad::detail::DeclaresGuard<Derived>,
                  "ADModel: the model declares a member named 'guard' that ADModel cannot call; the guard template must "
                  "read " HYBRIDSENS_AD_GUARD_SIGNATURE);
    static_assert(ad::detail::HasEventTime<Derived>::value || !ad::detail::DeclaresEventTime<Derived>,
                  "ADModel: the model declares a member named 'eventTime' that ADModel cannot call; the time-event template "
                  "must read " HYBRIDSENS_AD_EVENT_TIME_SIGNATURE);
  }

  // Global number of continuous state entries (all on rank 0 of comm()).
  virtual PetscInt stateSize() const = 0;
  // Name of time event k (its time comes from the eventTime template).
  virtual std::string timeEventName(PetscInt k) const { return "time_event" + std::to_string(k); }

  PetscInt localSize() const final { return rank() == 0 ? stateSize() : 0; }

  // ---- initial state ------------------------------------------------------------------------
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
    PetscCall(ad::detail::checkDirections<MaxDerivatives>((int)np));
    std::vector<Fad> p, u0(n);
    ad::detail::seed(p, c.p, (int)np, 0);
    self().template initialState<Fad>(p.data(), u0.data());
    PetscCall(setBlock(du0dp, u0, 0, np));
    PetscFunctionReturn(0);
  }

  // ---- dynamics -----------------------------------------------------------------------------
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
    PetscCall(ad::detail::checkDirections<MaxDerivatives>((int)n));
    std::vector<Fad> uf, pf, f(n);
    ad::detail::seed(uf, x, (int)n, 0);
    ad::detail::passive(pf, c.p);
    self().template rhs<Fad>(Fad(t), uf.data(), pf.data(), c.d, f.data());
    PetscCall(setBlock(J, f, 0, n));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const final {
    std::vector<PetscReal> x;
    const PetscInt np = (PetscInt)c.p.size();
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    const PetscInt n = (PetscInt)x.size();
    if (!n || !np) PetscFunctionReturn(0);
    PetscCall(ad::detail::checkDirections<MaxDerivatives>((int)np));
    std::vector<Fad> uf, pf, f(n);
    ad::detail::passive(uf, x);
    ad::detail::seed(pf, c.p, (int)np, 0);
    self().template rhs<Fad>(Fad(t), uf.data(), pf.data(), c.d, f.data());
    PetscCall(setBlock(Jp, f, 0, np));
    PetscFunctionReturn(0);
  }

  // AD gives ∂f/∂t exactly, so an AD model may depend on t freely.
  bool explicitTime() const final { return true; }
  // ∂f/∂t on every row (t seeded).
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const final {
    std::vector<PetscReal> x, out;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    const PetscInt n = (PetscInt)x.size();
    out.assign(n, 0.0);
    if (n) {
      std::vector<Fad> uf, pf, f(n);
      ad::detail::passive(uf, x);
      ad::detail::passive(pf, c.p);
      self().template rhs<Fad>(Fad(1, 0, t), uf.data(), pf.data(), c.d, f.data());
      for (PetscInt i = 0; i < n; ++i) out[i] = f[i].dx(0);
    }
    PetscCall(ad::detail::writeLocal(ft, out));
    PetscFunctionReturn(0);
  }

  // ---- guards -------------------------------------------------------------------------------
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const final {
    std::vector<PetscReal> x;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (!x.empty())
        for (PetscInt j = 0; j < numGuards(); ++j) values[j] = self().template guard<PetscReal>(j, t, x.data(), c.p.data(), c.d);
    } else {
      PetscCheck(numGuards() == 0, comm(), PETSC_ERR_SUP, "numGuards() > 0 but the model has no guard<S>() template");
    }
    PetscFunctionReturn(0);
  }

  // γ_u, γ_p and γ_t from one evaluation with n + np + 1 directions.
  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const final {
    std::vector<PetscReal> x;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    std::vector<PetscReal> g(n, 0.0);
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (n) {
        const int nd = (int)(n + np + 1);
        PetscCall(ad::detail::checkDirections<MaxDerivatives>(nd));
        std::vector<Fad> uf, pf;
        ad::detail::seed(uf, x, nd, 0);
        ad::detail::seed(pf, c.p, nd, (int)n);
        const Fad gam = self().template guard<Fad>(j, Fad(nd, (int)(n + np), t), uf.data(), pf.data(), c.d);
        for (PetscInt i = 0; i < n; ++i) g[i] = gam.dx((int)i);
        for (PetscInt k = 0; k < np; ++k) gp[k] = gam.dx((int)(n + k));
        *gt = gam.dx((int)(n + np));
      }
    } else {
      SETERRQ(comm(), PETSC_ERR_SUP, "guardGradient(%" PetscInt_FMT ") called but the model has no guard<S>() template", j);
    }
    PetscCall(ad::detail::writeLocal(gu, g));
    PetscFunctionReturn(0);
  }

  // γ_t + γ_u·u̇ of each active guard as one directional derivative (u seeded with u̇, t with 1).
  PetscErrorCode guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec, PetscScalar *rates) const final {
    std::vector<PetscReal> x, xd;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(ad::detail::readLocal(udot, xd));
    const PetscInt n = (PetscInt)x.size();
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (n) {
        PetscCall(ad::detail::checkDirections<MaxDerivatives>(1));
        std::vector<Fad> uf(n), pf;
        for (PetscInt i = 0; i < n; ++i) {
          uf[i] = Fad(1, x[i]);
          uf[i].fastAccessDx(0) = xd[i];
        }
        ad::detail::passive(pf, c.p);
        const Fad tf(1, 0, t);
        for (PetscInt j = 0; j < numGuards(); ++j)
          if (guardActive(j, c.d)) rates[j] = self().template guard<Fad>(j, tf, uf.data(), pf.data(), c.d).dx(0);
      }
    } else {
      PetscCheck(numGuards() == 0, comm(), PETSC_ERR_SUP, "numGuards() > 0 but the model has no guard<S>() template");
    }
    PetscFunctionReturn(0);
  }

  // ---- time events --------------------------------------------------------------------------
  TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &p) const final {
    TimeEventInfo info;
    info.name = timeEventName(k);
    if constexpr (ad::detail::HasEventTime<Derived>::value) {
      // Always DFad here (called once per event, any number of parameters).
      using DFad = Sacado::Fad::DFad<PetscReal>;
      const int np = (int)p.size();
      std::vector<DFad> pf;
      ad::detail::seed(pf, p, np, 0);
      const DFad T = self().template eventTime<DFad>(k, pf.data());
      info.time = T.val();
      if (np) {
        info.dtime_dp.resize(np);
        for (int i = 0; i < np; ++i) info.dtime_dp[i] = T.dx(i);
      }
    } else {
      // Called only for k < numTimeEvents(); the library turns the exception into a PETSc error.
      throw std::logic_error("numTimeEvents() > 0 but the model has no eventTime template: " HYBRIDSENS_AD_EVENT_TIME_SIGNATURE);
    }
    return info;
  }

  // ---- resets -------------------------------------------------------------------------------
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
      PetscFunctionReturn(0);
    }
    PetscCall(ad::detail::readLocal(uminus, x));
    y = x;
    if constexpr (ad::detail::HasReset<Derived>::value)
      if (!x.empty()) self().template reset<PetscReal>(id, t, x.data(), c.p.data(), c.d, y.data());
    PetscCall(ad::detail::writeLocal(uplus, y));
    PetscFunctionReturn(0);
  }

  // R_u v as one directional derivative (u seeded with v).
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v,
                                     Vec out) const final {
    std::vector<PetscReal> x, dv, y;
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetJacobianAction(id, t, uminus, c, v, out);
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    PetscCall(ad::detail::readLocal(v, dv));
    y = dv;
    if constexpr (ad::detail::HasReset<Derived>::value) {
      const PetscInt n = (PetscInt)x.size();
      if (n) {
        std::vector<Fad> uf(n), pf, up(n);
        for (PetscInt i = 0; i < n; ++i) {
          uf[i] = Fad(1, x[i]);
          uf[i].fastAccessDx(0) = dv[i];
        }
        ad::detail::passive(pf, c.p);
        for (PetscInt i = 0; i < n; ++i) up[i] = uf[i];  // identity where the user writes nothing
        self().template reset<Fad>(id, Fad(t), uf.data(), pf.data(), c.d, up.data());
        for (PetscInt i = 0; i < n; ++i) y[i] = up[i].dx(0);
      }
    }
    PetscCall(ad::detail::writeLocal(out, y));
    PetscFunctionReturn(0);
  }

  // R_uᵀ w: R_u by n directions, then out_j = Σ_i (R_u)_ij w_i.
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                              Vec out) const final {
    std::vector<PetscReal> x, dw, y;
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetJacobianTransposeAction(id, t, uminus, c, w, out);
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    PetscCall(ad::detail::readLocal(w, dw));
    y = dw;
    if constexpr (ad::detail::HasReset<Derived>::value) {
      const PetscInt n = (PetscInt)x.size();
      if (n) {
        PetscCall(ad::detail::checkDirections<MaxDerivatives>((int)n));
        std::vector<Fad> uf, pf, up;
        ad::detail::seed(uf, x, (int)n, 0);
        ad::detail::passive(pf, c.p);
        up = uf;
        self().template reset<Fad>(id, Fad(t), uf.data(), pf.data(), c.d, up.data());
        for (PetscInt j = 0; j < n; ++j) {
          PetscReal s = 0;
          for (PetscInt i = 0; i < n; ++i) s += up[i].dx((int)j) * dw[i];
          y[j] = s;
        }
      }
    }
    PetscCall(ad::detail::writeLocal(out, y));
    PetscFunctionReturn(0);
  }

  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const final {
    std::vector<PetscReal> x;
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetJacobianP(id, t, uminus, c, Rp);
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    if constexpr (ad::detail::HasReset<Derived>::value) {
      const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
      if (n && np) {
        PetscCall(ad::detail::checkDirections<MaxDerivatives>((int)np));
        std::vector<Fad> uf, pf, up;
        ad::detail::passive(uf, x);
        ad::detail::seed(pf, c.p, (int)np, 0);
        up = uf;
        self().template reset<Fad>(id, Fad(t), uf.data(), pf.data(), c.d, up.data());
        PetscCall(setBlock(Rp, up, 0, np));
      }
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const final {
    std::vector<PetscReal> x, y;
    if constexpr (!ad::detail::HasReset<Derived>::value) return HybridModel::resetTimeDerivative(id, t, uminus, c, Rt);
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    y.assign(x.size(), 0.0);
    if constexpr (ad::detail::HasReset<Derived>::value) {
      const PetscInt n = (PetscInt)x.size();
      if (n) {
        std::vector<Fad> uf, pf, up;
        ad::detail::passive(uf, x);
        ad::detail::passive(pf, c.p);
        up = uf;
        self().template reset<Fad>(id, Fad(1, 0, t), uf.data(), pf.data(), c.d, up.data());
        for (PetscInt i = 0; i < n; ++i) y[i] = up[i].dx(0);
      }
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
    std::vector<Fad2> uf, pf;
    Fad2 tf;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(ad::detail::readLocal(lambda, lam));
    PetscCall(seedSecondOrder(t, x, c.p, dir, uf, pf, tf));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    if (n) {
      std::vector<Fad2> f(n);
      self().template rhs<Fad2>(tf, uf.data(), pf.data(), c.d, f.data());
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
    std::vector<Fad2> uf, pf;
    Fad2 tf;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(seedSecondOrder(t, x, c.p, dir, uf, pf, tf));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    if constexpr (ad::detail::HasGuard<Derived>::value) {
      if (n) {
        const Fad2 L = self().template guard<Fad2>(j, tf, uf.data(), pf.data(), c.d);
        PetscCall(ad::detail::writeHessianOutput(&L, n, np, out));
      } else PetscCall(ad::detail::writeHessianOutput(nullptr, n, np, out));
    } else {
      SETERRQ(comm(), PETSC_ERR_SUP, "guardHessianProduct(%" PetscInt_FMT ") called but the model has no guard<S>() template", j);
    }
    PetscFunctionReturn(0);
  }

  // H(wᵀR) δz at (t, u⁻); zero for models without a reset template (identity resets).
  PetscErrorCode resetHessianProduct(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                     const SecondOrderDirection &dir, const SecondOrderOutput &out) const final {
    std::vector<PetscReal> x, wl;
    std::vector<Fad2> uf, pf;
    Fad2 tf;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocal(uminus, x));
    PetscCall(ad::detail::readLocal(w, wl));
    PetscCall(seedSecondOrder(t, x, c.p, dir, uf, pf, tf));
    const PetscInt n = (PetscInt)x.size(), np = (PetscInt)c.p.size();
    Fad2 L(0.0);
    bool any = false;
    if constexpr (ad::detail::HasReset<Derived>::value) {
      if (n) {
        std::vector<Fad2> up = uf;  // identity where the user writes nothing
        self().template reset<Fad2>(id, tf, uf.data(), pf.data(), c.d, up.data());
        for (PetscInt i = 0; i < n; ++i) L += wl[i] * up[i];
        any = true;
      }
    }
    PetscCall(ad::detail::writeHessianOutput(any ? &L : nullptr, n, np, out));
    PetscFunctionReturn(0);
  }

  // outP = T_pp δp of time event k (eventTime template with nested Fad; zeros without one).
  PetscErrorCode timeEventHessianProduct(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscScalar *outP) const final {
    const int np = (int)p.size();
    PetscFunctionBeginUser;
    for (int i = 0; i < np; ++i) outP[i] = 0;
    if constexpr (ad::detail::HasEventTime<Derived>::value) {
      std::vector<Fad2> pf(np);
      for (int i = 0; i < np; ++i) pf[i] = ad::detail::seed2(np, i, p[i], dp ? dp[i] : 0.0);
      const Fad2 T = self().template eventTime<Fad2>(k, pf.data());
      for (int i = 0; i < np; ++i) outP[i] = T.dx(i).dx(0);
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
      std::vector<Fad2> pf(np), u0(n);
      for (PetscInt k = 0; k < np; ++k) pf[k] = ad::detail::seed2((int)np, (int)k, c.p[k], dp ? dp[k] : 0.0);
      self().template initialState<Fad2>(pf.data(), u0.data());
      Fad2 L(0.0);
      for (PetscInt i = 0; i < n; ++i) L += lam[i] * u0[i];
      for (PetscInt k = 0; k < np; ++k) outP[k] = L.dx((int)k).dx(0);
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
  // Seeds z = (u, p, t) for a second-order evaluation along dir (dir.du read on every rank).
  static PetscErrorCode seedSecondOrder(PetscReal t, const std::vector<PetscReal> &x, const std::vector<PetscReal> &p,
                                        const SecondOrderDirection &dir, std::vector<Fad2> &uf, std::vector<Fad2> &pf, Fad2 &tf) {
    std::vector<PetscReal> du;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::readLocalOrZero(dir.du, (PetscInt)x.size(), du));
    const int n = (int)x.size(), np = (int)p.size(), nd = n + np + 1;
    uf.resize(n);
    pf.resize(np);
    for (int i = 0; i < n; ++i) uf[i] = ad::detail::seed2(nd, i, x[i], du[i]);
    for (int k = 0; k < np; ++k) pf[k] = ad::detail::seed2(nd, n + k, p[k], dir.dp ? dir.dp[k] : 0.0);
    tf = ad::detail::seed2(nd, n + np, t, dir.dt);
    PetscFunctionReturn(0);
  }
  // M(i, col0 + k) = y[i].dx(k), k < ncols, rows 0..n-1 (rank 0 only; the caller assembles).
  // Every entry is inserted, zeros included: the dense pattern stays the same between calls.
  static PetscErrorCode setBlock(Mat M, const std::vector<Fad> &y, PetscInt col0, PetscInt ncols) {
    const PetscInt n = (PetscInt)y.size();
    std::vector<PetscInt> rows(n), cols(ncols);
    std::vector<PetscScalar> a(n * ncols);
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n; ++i) rows[i] = i;
    for (PetscInt k = 0; k < ncols; ++k) cols[k] = col0 + k;
    for (PetscInt i = 0; i < n; ++i)
      for (PetscInt k = 0; k < ncols; ++k) a[i * ncols + k] = y[i].dx((int)k);
    PetscCall(MatSetValues(M, n, rows.data(), ncols, cols.data(), a.data(), INSERT_VALUES));
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
    static_assert(ad::detail::HasTerminal<Derived>::value || ad::detail::KeepsLibraryTerminal<Derived, decltype(&ADCost::terminal)>::value,
                  "ADCost: the cost declares a member named 'terminal' that ADCost cannot call; the template must read "
                  "template <class S> S terminal(S t, const S *u, const S *p, const DiscreteState &d) const");
    static_assert(ad::detail::HasIntegrand<Derived>::value ||
                      ad::detail::KeepsLibraryIntegrand<Derived, decltype(&ADCost::integrand)>::value,
                  "ADCost: the cost declares a member named 'integrand' that ADCost cannot call; the template must read "
                  "template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &d) const");
    static_assert(ad::detail::HasMeasurement<Derived>::value ||
                      ad::detail::KeepsLibraryMeasurement<Derived, decltype(&ADCost::measurement)>::value,
                  "ADCost: the cost declares a member named 'measurement' that ADCost cannot call; the template must read "
                  "template <class S> S measurement(PetscInt i, S t, const S *u, const S *p, const DiscreteState &d) const");
  }

  // A written template is used unless Derived says otherwise (a hand-coded cost must override
  // these; here the template itself is the declaration, so it cannot be forgotten).
  bool hasTerminal() const override { return ad::detail::HasTerminal<Derived>::value; }
  bool hasIntegrand() const override { return ad::detail::HasIntegrand<Derived>::value; }

  PetscErrorCode terminal(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasTerminal<Derived>::value) {
      PetscCall(evaluate(u, c, value, [&](auto tt, const auto *x, const auto *p) { return self().terminal(tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': hasTerminal() but no terminal<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal t, Vec u, const ModeContext &c, Vec psi_u, PetscScalar *psi_p) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasTerminal<Derived>::value) {
      PetscCall(gradient(u, c, psi_u, psi_p, [&](auto tt, const auto *x, const auto *p) { return self().terminal(tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': hasTerminal() but no terminal<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasIntegrand<Derived>::value) {
      PetscCall(evaluate(u, c, value, [&](auto tt, const auto *x, const auto *p) { return self().integrand(tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': hasIntegrand() but no integrand<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal t, Vec u, const ModeContext &c, Vec r_u, PetscScalar *r_p) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasIntegrand<Derived>::value) {
      PetscCall(gradient(u, c, r_u, r_p, [&](auto tt, const auto *x, const auto *p) { return self().integrand(tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': hasIntegrand() but no integrand<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  bool explicitTime() const final { return true; }
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
        std::vector<Fad> uf, pf;
        ad::detail::passive(uf, x);
        ad::detail::passive(pf, c.p);
        *r_t = self().integrand(Fad(1, 0, t), uf.data(), pf.data(), c.d).dx(0);
      }
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurement(PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasMeasurement<Derived>::value) {
      PetscCall(evaluate(u, c, value, [&](auto tt, const auto *x, const auto *p) { return self().measurement(i, tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': measurementTimes() but no measurement<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementGradient(PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec g_u, PetscScalar *g_p) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasMeasurement<Derived>::value) {
      PetscCall(gradient(u, c, g_u, g_p, [&](auto tt, const auto *x, const auto *p) { return self().measurement(i, tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': measurementTimes() but no measurement<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }

  PetscErrorCode terminalHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                        const SecondOrderOutput &out) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasTerminal<Derived>::value) {
      PetscCall(hessian(u, c, dir, out, [&](auto tt, const auto *x, const auto *p) { return self().terminal(tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': no terminal<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                         const SecondOrderOutput &out) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasIntegrand<Derived>::value) {
      PetscCall(hessian(u, c, dir, out, [&](auto tt, const auto *x, const auto *p) { return self().integrand(tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': no integrand<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementHessianProduct(PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const final {
    PetscFunctionBeginUser;
    if constexpr (ad::detail::HasMeasurement<Derived>::value) {
      PetscCall(hessian(u, c, dir, out, [&](auto tt, const auto *x, const auto *p) { return self().measurement(i, tt, x, p, c.d); }, t));
    } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': no measurement<S>() template", name().c_str());
    PetscFunctionReturn(0);
  }

protected:
  const Derived &self() const { return static_cast<const Derived &>(*this); }

private:
  // H δz of the scalar f(t, u, p) (owning rank; zeros elsewhere), one nested-Fad evaluation.
  template <class F>
  static PetscErrorCode hessian(Vec u, const ModeContext &c, const SecondOrderDirection &dir, const SecondOrderOutput &out, F &&f,
                                PetscReal t) {
    using Fad2 = ad::detail::Fad2;
    std::vector<PetscReal> x, du;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
    PetscCall(ad::detail::readLocal(u, x));
    PetscCall(ad::detail::readLocalOrZero(dir.du, (PetscInt)x.size(), du));
    const int nl = (int)x.size(), np = (int)c.p.size(), nd = nl + np + 1;
    if (owner && nl) {
      std::vector<Fad2> uf(nl), pf(np);
      for (int i = 0; i < nl; ++i) uf[i] = ad::detail::seed2(nd, i, x[i], du[i]);
      for (int k = 0; k < np; ++k) pf[k] = ad::detail::seed2(nd, nl + k, c.p[k], dir.dp ? dir.dp[k] : 0.0);
      const Fad2 L = f(ad::detail::seed2(nd, nl + np, t, dir.dt), uf.data(), pf.data());
      PetscCall(ad::detail::writeHessianOutput(&L, nl, np, out));
    } else PetscCall(ad::detail::writeHessianOutput(nullptr, nl, np, out));
    PetscFunctionReturn(0);
  }

  // Value on the owning rank (this rank's contribution; nothing elsewhere).
  template <class F> static PetscErrorCode evaluate(Vec u, const ModeContext &c, PetscScalar *value, F &&f, PetscReal t) {
    std::vector<PetscReal> x;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
    PetscCall(ad::detail::readLocal(u, x));
    if (owner) *value = f(t, x.data(), c.p.data());
    PetscFunctionReturn(0);
  }
  // (∂/∂u, ∂/∂p) from one evaluation with n + np directions; written on the owning rank only.
  template <class F> static PetscErrorCode gradient(Vec u, const ModeContext &c, Vec gu, PetscScalar *gp, F &&f, PetscReal t) {
    std::vector<PetscReal> x, g;
    PetscInt n;
    PetscBool owner;
    PetscFunctionBeginUser;
    PetscCall(ad::detail::ownsWholeState(u, &n, &owner));
    PetscCall(ad::detail::readLocal(u, x));
    g.assign(x.size(), 0.0);
    if (owner && n) {
      const PetscInt np = (PetscInt)c.p.size();
      const int nd = (int)(n + np);
      PetscCall(ad::detail::checkDirections<MaxDerivatives>(nd));
      std::vector<Fad> uf, pf;
      ad::detail::seed(uf, x, nd, 0);
      ad::detail::seed(pf, c.p, nd, (int)n);
      const Fad v = f(Fad(t), uf.data(), pf.data());
      for (PetscInt i = 0; i < n; ++i) g[i] = v.dx((int)i);
      for (PetscInt k = 0; k < np; ++k) gp[k] = v.dx((int)(n + k));
    }
    PetscCall(ad::detail::writeLocal(gu, g));
    PetscFunctionReturn(0);
  }
};

} // namespace hybridsens
