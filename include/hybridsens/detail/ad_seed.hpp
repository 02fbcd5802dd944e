// hybridsens/detail/ad_seed.hpp — implementation detail of the AD front ends: the Sacado
// scalar types and the one seed/evaluate/extract machinery every derivative callback uses.
//
// A derivative callback (1) seeds: it builds the user's arguments (t, u, p) as Fad scalars,
// some inputs carrying derivative directions, the others passive; (2) evaluates the user's
// template with that scalar type; (3) extracts v.dx(k) (first order) or v.dx(k).dx(0)
// (second order, nested Fad) into its outputs. Inputs<S, NU, NP> does (1) for every callback
// of both front ends; Values/Slots view the numbers wherever they live (the dense path's whole
// state, or the local path's gathered work arrays at a kernel's positions).
//
// Seeding modes (every callback uses exactly one):
//   seed(wrt, …)        first order with respect to the inputs in wrt (WrtU | WrtP | WrtT), their
//                       directions numbered u first, then p, then t; values only for S = PetscReal;
//   seedTangent(…)      one direction: u carries a given tangent, t optionally 1, p passive
//                       (directional derivatives: guard rates, R_u v);
//   seedSecond(wrt, …)  nested Fad: the inputs in wrt seeded in the outer Fad as above, the
//                       direction δz in the inner one, so that v.dx(k).dx(0) = (∂²v/∂z∂z δz)_k.
#pragma once

#include "hybridsens/detail/ad_traits.hpp"

// Sacado's Fad traits otherwise pull in Kokkos core and Teuchos' communication adapters for
// Kokkos views of Fad scalars, which hybridsens never uses: half the parse time of every AD
// translation unit (1.2 of 2.4 s CPU). The Fad types are the same either way. A translation
// unit that needs Kokkos views of Fads includes Sacado before any hybridsens AD header.
#ifndef SACADO_DISABLE_FAD_VIEW_SPEC
#define SACADO_DISABLE_FAD_VIEW_SPEC
#endif
#include <Sacado_No_Kokkos.hpp>

#include <array>
#include <type_traits>
#include <vector>

namespace hybridsens {
namespace ad {

// The dense path's first-order Fad (ADModel/ADCost MaxDerivatives): 0 = DFad (heap, any
// number of directions), K > 0 = SLFad<K> (stack storage, at most K directions).
template <int MaxDerivatives> struct FadSelect { using type = Sacado::Fad::SLFad<PetscReal, MaxDerivatives>; };
template <> struct FadSelect<0> { using type = Sacado::Fad::DFad<PetscReal>; };

namespace detail {

// ---- scalar types ----------------------------------------------------------------------------
// Static storage when the number of directions is a compile-time constant (local kernels).
using Dir = Sacado::Fad::SFad<R, 1>;  // one direction: ∂/∂t, directional derivatives, the inner δz
template <int N> struct FadN { using type = Sacado::Fad::SFad<R, N>; };
template <> struct FadN<DynamicSize> { using type = Sacado::Fad::DFad<R>; };
template <> struct FadN<0> { using type = Dir; };  // unused placeholder (no directions)
// Second order: z in the outer Fad, the direction δz in the inner one (one direction).
template <int N> struct Fad2N { using type = Sacado::Fad::SFad<Dir, N>; };
template <> struct Fad2N<DynamicSize> { using type = Sacado::Fad::DFad<Dir>; };
using Fad2 = Fad2N<DynamicSize>::type;  // dense path and time events: any number of directions

// ---- storage and views ---------------------------------------------------------------------
// N values of T: a stack array when N is a compile-time size, a vector when DynamicSize.
template <class T, int N> struct Buf {
  std::array<T, (N > 0 ? N : 1)> a{};
  void resize(int) {}
  T *data() { return a.data(); }
  const T *data() const { return a.data(); }
  T &operator[](int i) { return a[i]; }
  const T &operator[](int i) const { return a[i]; }
};
template <class T> struct Buf<T, DynamicSize> {
  std::vector<T> a;
  void resize(int n) { a.resize(n); }
  T *data() { return a.data(); }
  const T *data() const { return a.data(); }
  T &operator[](int i) { return a[i]; }
  const T &operator[](int i) const { return a[i]; }
};

// n numbers read as base[at[i]] (at == nullptr: base[i]); a null base reads zeros (an absent
// direction).
struct Values {
  const PetscScalar *base = nullptr;
  const PetscInt *at = nullptr;
  int n = 0;
  PetscReal operator[](int i) const { return base ? base[at ? at[i] : i] : 0.0; }
};
// Destinations base[at[i]] (at == nullptr: base[i]).
struct Slots {
  PetscScalar *base;
  const PetscInt *at = nullptr;
  PetscScalar &operator[](int i) const { return base[at ? at[i] : i]; }
};

// ---- seeding -------------------------------------------------------------------------------
enum Wrt : unsigned { WrtU = 1, WrtP = 2, WrtT = 4 };

// value x as derivative direction k of nd
template <class S> S independent(int nd, int k, R x) {
  if constexpr (std::is_floating_point_v<S>) return x;
  else return S(nd, k, x);
}
// value x with the inner (directional) derivative dx, as outer direction k of nd
template <class S2> S2 independent2(int nd, int k, R x, R dx) {
  Dir in(1, x);
  in.fastAccessDx(0) = dx;
  return S2(nd, k, in);
}
// value x with derivative dx in the single direction
template <class S> S tangent(R x, R dx) {
  S v(1, x);
  v.fastAccessDx(0) = dx;
  return v;
}

// The arguments (t, u, p) of one evaluation of a user template with scalar type S, and where
// each input's derivative directions start (u at 0).
template <class S, int NU = DynamicSize, int NP = DynamicSize> struct Inputs {
  S t;
  Buf<S, NU> u;
  Buf<S, NP> p;
  int nd = 0, pAt = 0, tAt = 0;

  void seed(unsigned wrt, R tv, const Values &uv, const Values &pv) {
    number(wrt, uv.n, pv.n);
    u.resize(uv.n), p.resize(pv.n);
    for (int i = 0; i < uv.n; ++i) u[i] = (wrt & WrtU) ? independent<S>(nd, i, uv[i]) : S(uv[i]);
    for (int i = 0; i < pv.n; ++i) p[i] = (wrt & WrtP) ? independent<S>(nd, pAt + i, pv[i]) : S(pv[i]);
    t = (wrt & WrtT) ? independent<S>(nd, tAt, tv) : S(tv);
  }
  void seedTangent(R tv, bool tSeeded, const Values &uv, const Values &du, const Values &pv) {
    nd = 1, pAt = tAt = 0;
    u.resize(uv.n), p.resize(pv.n);
    for (int i = 0; i < uv.n; ++i) u[i] = tangent<S>(uv[i], du[i]);
    for (int i = 0; i < pv.n; ++i) p[i] = S(pv[i]);
    t = tSeeded ? S(1, 0, tv) : S(tv);
  }
  void seedSecond(unsigned wrt, R tv, R dt, const Values &uv, const Values &du, const Values &pv, const Values &dp) {
    number(wrt, uv.n, pv.n);
    u.resize(uv.n), p.resize(pv.n);
    for (int i = 0; i < uv.n; ++i) u[i] = independent2<S>(nd, i, uv[i], du[i]);
    for (int i = 0; i < pv.n; ++i) p[i] = independent2<S>(nd, pAt + i, pv[i], dp[i]);
    if (wrt & WrtT) t = independent2<S>(nd, tAt, tv, dt);
  }

private:
  void number(unsigned wrt, int nu, int np) {
    nd = (wrt & WrtU) ? nu : 0;
    pAt = nd, nd += (wrt & WrtP) ? np : 0;
    tAt = nd, nd += (wrt & WrtT) ? 1 : 0;
  }
};

// ---- extracting ----------------------------------------------------------------------------
// (H δz)_k of a second-order result (nested Fad).
template <class S2> R second(const S2 &v, int k) { return v.dx(k).dx(0); }

// out.u[i] += (H δz) at u_i, out.p[i] at p_i, *out.t at t, for L seeded by seedSecond(WrtU |
// WrtP | WrtT, …) with nu, np entries.
template <class S2> void addSecond(const S2 &L, int nu, int np, const Slots &ou, const Slots &op, PetscScalar *ot) {
  for (int i = 0; i < nu; ++i) ou[i] += second(L, i);
  for (int i = 0; i < np; ++i) op[i] += second(L, nu + i);
  *ot += second(L, nu + np);
}

} // namespace detail
} // namespace ad
} // namespace hybridsens
