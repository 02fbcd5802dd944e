// hybridsens/detail/ad_traits.hpp — implementation detail of the AD front ends
// (hybridsens/ad.hpp, hybridsens/ad_local.hpp): which member templates a user class provides.
// One set of traits serves ADModel/ADCost (whole models) and LocalKernelModel/LocalKernelCost
// (kernels): the templates have the same signatures in both.
#pragma once

#include "hybridsens/model.hpp"

#include <type_traits>
#include <utility>

namespace hybridsens {
namespace ad {
namespace detail {

using R = PetscReal;
template <class T> T &lvalue();  // declval as lvalue (unevaluated contexts only)

// ---- detection of the templates, by calling them with S = PetscReal ------------------------
#define HYBRIDSENS_AD_HAS(Trait, call)                                                                  \
  template <class C, class = void> struct Trait : std::false_type {};                                  \
  template <class C> struct Trait<C, std::void_t<decltype(std::declval<const C &>().template call)>> : std::true_type {};

HYBRIDSENS_AD_HAS(HasResidual, residual<R>(R(0), (const R *)nullptr, (const R *)nullptr, lvalue<const DiscreteState>(), (R *)nullptr))
HYBRIDSENS_AD_HAS(HasInitialState, initialState<R>((const R *)nullptr, (R *)nullptr))
HYBRIDSENS_AD_HAS(HasGuard, guard<R>(PetscInt(0), R(0), (const R *)nullptr, (const R *)nullptr, lvalue<const DiscreteState>()))
HYBRIDSENS_AD_HAS(HasReset, reset<R>(lvalue<const EventId>(), R(0), (const R *)nullptr, (const R *)nullptr, lvalue<const DiscreteState>(),
                                     (R *)nullptr))
HYBRIDSENS_AD_HAS(HasEventTime, eventTime<R>(PetscInt(0), (const R *)nullptr))
HYBRIDSENS_AD_HAS(HasTerminal, terminal<R>(R(0), (const R *)nullptr, (const R *)nullptr, lvalue<const DiscreteState>()))
HYBRIDSENS_AD_HAS(HasIntegrand, integrand<R>(R(0), (const R *)nullptr, (const R *)nullptr, lvalue<const DiscreteState>()))
HYBRIDSENS_AD_HAS(HasMeasurement, measurement<R>(PetscInt(0), R(0), (const R *)nullptr, (const R *)nullptr, lvalue<const DiscreteState>()))
#undef HYBRIDSENS_AD_HAS
// A plain member (no S): the transposed start product of a kernel whose u0 comes from an
// implicit solve (hybridsens/ad_local.hpp).
template <class C, class = void> struct HasInitialStateTranspose : std::false_type {};
template <class C>
struct HasInitialStateTranspose<C, std::void_t<decltype(std::declval<const C &>().initialStateTranspose((const R *)nullptr, (const R *const *)nullptr,
                                                                                                      (R *const *)nullptr, int(0)))>> : std::true_type {};

// ---- refusing a template that does not match -----------------------------------------------
// Detection by call (above) cannot tell "absent" from "misspelled": a reset<S> without its
// EventId argument would be ignored and every reset taken as the identity, a guard<S> with
// another signature leave its guards unclaimed. So the front ends also check at compile time
// that the user class declares nothing else under these names:
//   Declares<Name><C>: C declares a member under the name (its address, or the address of its
//     single template <R>, is well-formed) — for names the library does not declare itself;
//   Keeps<Name><C, Own>: &C::name is still the library's own member Own — for names the
//     library declares (ADModel's Vec-based reset, ADCost's terminal/integrand/measurement);
//     anything C declares under the name (a template, an overload, another signature) hides it.
#define HYBRIDSENS_AD_NAMES(Name, member)                                                                              \
  template <class C, class = void> struct Names##Name##Function : std::false_type {};                                 \
  template <class C> struct Names##Name##Function<C, std::void_t<decltype(&C::member)>> : std::true_type {};           \
  template <class C, class = void> struct Names##Name##Template : std::false_type {};                                 \
  template <class C> struct Names##Name##Template<C, std::void_t<decltype(&C::template member<R>)>> : std::true_type {}; \
  template <class C> inline constexpr bool Declares##Name = Names##Name##Function<C>::value || Names##Name##Template<C>::value; \
  template <class C, class Own, class = void> struct Keeps##Name : std::false_type {};                                \
  template <class C, class Own> struct Keeps##Name<C, Own, std::void_t<decltype(&C::member)>> : std::is_same<decltype(&C::member), Own> {};

HYBRIDSENS_AD_NAMES(Residual, residual)
HYBRIDSENS_AD_NAMES(InitialState, initialState)
HYBRIDSENS_AD_NAMES(InitialStateTranspose, initialStateTranspose)
HYBRIDSENS_AD_NAMES(Guard, guard)
HYBRIDSENS_AD_NAMES(Reset, reset)
HYBRIDSENS_AD_NAMES(EventTime, eventTime)
HYBRIDSENS_AD_NAMES(Terminal, terminal)
HYBRIDSENS_AD_NAMES(Integrand, integrand)
HYBRIDSENS_AD_NAMES(Measurement, measurement)
#undef HYBRIDSENS_AD_NAMES

// The signatures, for the static_assert and error messages (they need literals).
#define HYBRIDSENS_AD_RESET_SIGNATURE                                                                                   \
  "template <class S> void reset(const EventId &id, S t, const S *u, const S *p, const DiscreteState &d, S *uplus) const"
#define HYBRIDSENS_AD_GUARD_SIGNATURE "template <class S> S guard(PetscInt j, S t, const S *u, const S *p, const DiscreteState &d) const"
#define HYBRIDSENS_AD_EVENT_TIME_SIGNATURE "template <class S> S eventTime(PetscInt k, const S *p) const"
#define HYBRIDSENS_AD_TERMINAL_SIGNATURE "template <class S> S terminal(S t, const S *u, const S *p, const DiscreteState &d) const"
#define HYBRIDSENS_AD_INTEGRAND_SIGNATURE "template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &d) const"
#define HYBRIDSENS_AD_MEASUREMENT_SIGNATURE \
  "template <class S> S measurement(PetscInt i, S t, const S *u, const S *p, const DiscreteState &d) const"
#define HYBRIDSENS_AD_RESIDUAL_SIGNATURE "template <class S> void residual(S t, const S *u, const S *p, const DiscreteState &d, S *f) const"
#define HYBRIDSENS_AD_INITIAL_STATE_SIGNATURE "template <class S> void initialState(const S *p, S *u0) const"
#define HYBRIDSENS_AD_INITIAL_STATE_TRANSPOSE_SIGNATURE \
  "void initialStateTranspose(const PetscReal *p, const PetscScalar *const *w, PetscScalar *const *out, int count) const"

// ---- kernel sizes (hybridsens/ad_local.hpp) -------------------------------------------------
inline constexpr int DynamicSize = -1;  // = hybridsens::Dynamic
template <class K, class = void> struct NumWrites { static constexpr int value = 0; };  // cost kernels write nothing
template <class K> struct NumWrites<K, std::void_t<decltype(K::numWrites)>> { static constexpr int value = K::numWrites; };
template <class K, class = void> struct NumParams { static constexpr int value = 0; };
template <class K> struct NumParams<K, std::void_t<decltype(K::numParams)>> { static constexpr int value = K::numParams; };

template <class K> struct Sizes {
  static constexpr int reads = K::numReads, writes = NumWrites<K>::value, params = NumParams<K>::value;
  static constexpr bool fixed = reads >= 0 && writes >= 0 && params >= 0;
  // Sizes of the work arrays: the static ones, or DynamicSize for all when any is dynamic.
  static constexpr int R = fixed ? reads : DynamicSize, W = fixed ? writes : DynamicSize, P = fixed ? params : DynamicSize;
  static constexpr int all = fixed ? reads + params + 1 : DynamicSize;  // (u, p, t)
};

} // namespace detail
} // namespace ad
} // namespace hybridsens
