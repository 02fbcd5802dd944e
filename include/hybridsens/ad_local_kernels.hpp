// hybridsens/ad_local_kernels.hpp — implementation detail of hybridsens/ad_local.hpp: all
// instances of one kernel type (KernelGroup<K>, CostGroup<K>), evaluated and differentiated
// with the Fad type their sizes allow. Users never name these classes.
//
// Fad types per kernel type K with R reads, P parameters (compile-time constants or Dynamic):
//   Jacobian ∂f/∂u          SFad<R>            (DFad if any size is Dynamic)
//   ∂f/∂p                   SFad<P>
//   ∂f/∂t, directional      SFad<1>
//   guard/cost gradients    SFad<R + P + 1>    (u, p and t in one evaluation)
//   second-order products   SFad<SFad<1>, R + P + 1>   (z = (u, p, t) outer, δz inner)
// Work arrays are indexed by IndexSpace positions: reads at readPos, writes at writePos.
#pragma once

#include "hybridsens/ad_local_space.hpp"
#include "hybridsens/model.hpp"

#include <Sacado_No_Kokkos.hpp>

#include <petscmat.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace hybridsens {

// A kernel size known only per instance (the kernel is differentiated with DFad).
inline constexpr int Dynamic = -1;

namespace ad {
namespace local {

using R = PetscReal;
template <class T> T &lv();  // declval as lvalue (unevaluated contexts only)

// ---- which optional templates a kernel type provides ------------------------------------
template <class K, class = void> struct HasResidual : std::false_type {};
template <class K>
struct HasResidual<K, std::void_t<decltype(std::declval<const K &>().template residual<R>(
                          R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>(), (R *)nullptr))>> : std::true_type {};
template <class K, class = void> struct HasGuard : std::false_type {};
template <class K>
struct HasGuard<K, std::void_t<decltype(std::declval<const K &>().template guard<R>(
                       PetscInt(0), R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>> : std::true_type {};
template <class K, class = void> struct HasInitial : std::false_type {};
template <class K>
struct HasInitial<K, std::void_t<decltype(std::declval<const K &>().template initialState<R>((const R *)nullptr, (R *)nullptr))>>
    : std::true_type {};
template <class K, class = void> struct HasReset : std::false_type {};
template <class K>
struct HasReset<K, std::void_t<decltype(std::declval<const K &>().template reset<R>(
                       lv<const EventId>(), R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>(), (R *)nullptr))>>
    : std::true_type {};
template <class K, class = void> struct HasTerminal : std::false_type {};
template <class K>
struct HasTerminal<K, std::void_t<decltype(std::declval<const K &>().template terminal<R>(
                          R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>> : std::true_type {};
template <class K, class = void> struct HasIntegrand : std::false_type {};
template <class K>
struct HasIntegrand<K, std::void_t<decltype(std::declval<const K &>().template integrand<R>(
                           R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>> : std::true_type {};
template <class K, class = void> struct HasMeasurement : std::false_type {};
template <class K>
struct HasMeasurement<K, std::void_t<decltype(std::declval<const K &>().template measurement<R>(
                             PetscInt(0), R(0), (const R *)nullptr, (const R *)nullptr, lv<const DiscreteState>()))>>
    : std::true_type {};

// ---- refusing a template that does not match ----------------------------------------------
// Detection by call cannot tell "absent" from "misspelled": a kernel reset<S> without its
// EventId argument would be ignored (no reset), a guard<S> with another signature leave its
// guards unclaimed. A kernel that names a member residual/guard/initialState/reset (resp. a
// cost kernel terminal/integrand/measurement) that the call above does not find is refused at
// compile time. "Names" = the address of the member or of its single template <R> is
// well-formed.
#define HYBRIDSENS_KERNEL_NAMES(Trait, member)                                                                  \
  template <class K, class = void> struct Trait##Function : std::false_type {};                                  \
  template <class K> struct Trait##Function<K, std::void_t<decltype(&K::member)>> : std::true_type {};            \
  template <class K, class = void> struct Trait##Template : std::false_type {};                                  \
  template <class K> struct Trait##Template<K, std::void_t<decltype(&K::template member<R>)>> : std::true_type {}; \
  template <class K> inline constexpr bool Trait = Trait##Function<K>::value || Trait##Template<K>::value;
HYBRIDSENS_KERNEL_NAMES(NamesResidual, residual)
HYBRIDSENS_KERNEL_NAMES(NamesGuard, guard)
HYBRIDSENS_KERNEL_NAMES(NamesInitial, initialState)
HYBRIDSENS_KERNEL_NAMES(NamesReset, reset)
HYBRIDSENS_KERNEL_NAMES(NamesTerminal, terminal)
HYBRIDSENS_KERNEL_NAMES(NamesIntegrand, integrand)
HYBRIDSENS_KERNEL_NAMES(NamesMeasurement, measurement)
#undef HYBRIDSENS_KERNEL_NAMES

// ---- sizes ---------------------------------------------------------------------------------
template <class K, class = void> struct NumWrites { static constexpr int value = 0; };  // cost kernels write nothing
template <class K> struct NumWrites<K, std::void_t<decltype(K::numWrites)>> { static constexpr int value = K::numWrites; };
template <class K, class = void> struct NumParams { static constexpr int value = 0; };
template <class K> struct NumParams<K, std::void_t<decltype(K::numParams)>> { static constexpr int value = K::numParams; };

template <class K> struct Sizes {
  static constexpr int reads = K::numReads, writes = NumWrites<K>::value, params = NumParams<K>::value;
  static constexpr bool fixed = reads >= 0 && writes >= 0 && params >= 0;
  static constexpr int all = fixed ? reads + params + 1 : Dynamic;  // (u, p, t)
};

// Sacado types: static storage when the number of directions is a compile-time constant.
template <int N> struct FadN { using type = Sacado::Fad::SFad<R, N>; };
template <> struct FadN<Dynamic> { using type = Sacado::Fad::DFad<R>; };
template <> struct FadN<0> { using type = Sacado::Fad::SFad<R, 1>; };  // unused placeholder
using Dir = Sacado::Fad::SFad<R, 1>;  // one direction (δz of second-order products, ∂/∂t)
template <int N> struct Fad2N { using type = Sacado::Fad::SFad<Dir, N>; };
template <> struct Fad2N<Dynamic> { using type = Sacado::Fad::DFad<Dir>; };

// Stack buffer of N entries (heap vector when N is Dynamic).
template <class T, int N> struct Buf {
  std::array<T, (N > 0 ? N : 1)> a{};
  void resize(int) {}
  T *data() { return a.data(); }
  T &operator[](int i) { return a[i]; }
};
template <class T> struct Buf<T, Dynamic> {
  std::vector<T> a;
  void resize(int n) { a.resize(n); }
  T *data() { return a.data(); }
  T &operator[](int i) { return a[i]; }
};

// Seeds: value x as direction i of nd (passive when i < 0).
template <class F> inline F seeded(int nd, int i, R x) { return i < 0 ? F(x) : F(nd, i, x); }
template <class F2> inline F2 seeded2(int nd, int i, R x, R dx) {
  Dir in(1, x);
  in.fastAccessDx(0) = dx;
  return F2(nd, i, in);
}

// Where one instance's indices sit in the flat arrays of its group.
struct Slots {
  PetscInt r0 = 0, w0 = 0, p0 = 0, g0 = 0;
  int nr = 0, nw = 0, np = 0, ng = 0;
};

// Everything one evaluation sees (values at the kernel's local positions).
struct Point {
  PetscReal t;
  const PetscScalar *x;             // gathered state, IndexSpace positions
  const std::vector<PetscReal> &p;  // all parameters
  const DiscreteState &d;
};

// Second-order inputs (gathered weights/directions at IndexSpace positions; dp may be null).
struct Direction2 {
  const PetscScalar *weight;  // λ or w at write positions (unused for guards)
  const PetscScalar *du;      // δu at read positions (zeros when the caller passed none)
  const PetscScalar *dp;      // δp (np entries) or nullptr
  PetscReal dt;
};
struct Output2 {
  PetscScalar *u;  // += at read positions
  PetscScalar *p;  // += (np entries)
  PetscScalar *t;  // +=
};

// ---------------------------------------------------------------------------------------------
class KernelGroupBase {
public:
  virtual ~KernelGroupBase() = default;
  virtual PetscInt count() const = 0;
  virtual bool hasGuards() const = 0;
  virtual bool hasInitialState() const = 0;
  virtual bool hasReset() const = 0;
  virtual const char *typeName() const = 0;
  // Global guard indices of instance k (for the ownership map).
  virtual std::vector<PetscInt> guardsOf(PetscInt k) const = 0;

  // ∂f/∂u as a list of blocks (writes × reads, row-major, one per instance): jacobianEntries
  // appends the blocks' global (row, col) pairs, jacobianValues writes their values in the same
  // order (jacobianValueCount of them); addJacobianValues adds such values into J block by block
  // (MatSetValues, for a matrix without the COO layout).
  virtual PetscCount jacobianValueCount() const = 0;
  virtual void jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const = 0;
  virtual void jacobianValues(const Point &z, PetscScalar *v) const = 0;
  virtual PetscErrorCode addJacobianValues(const PetscScalar *v, Mat J) const = 0;
  // fw[writePos] += f (value).
  virtual void residual(const Point &z, PetscScalar *fw) const = 0;
  // Jw[col * m + writePos] += ∂f/∂p_col (column-major m × np).
  virtual void jacobianP(const Point &z, PetscInt m, PetscScalar *Jw) const = 0;
  // The same into a sparse matrix: Jp(writes, params) += ∂f/∂p (MatSetValues, ADD_VALUES), and
  // its pattern (rows = writes, cols = params, per instance).
  virtual PetscErrorCode jacobianP(const Point &z, Mat Jp) const = 0;
  virtual PetscErrorCode parameterPattern(Mat P) const = 0;
  // fw[writePos] += ∂f/∂t.
  virtual void timeDerivative(const Point &z, PetscScalar *fw) const = 0;
  // H(λᵀf) δz, λ = dir.weight at write positions.
  virtual void hessian(const Point &z, const Direction2 &dir, const Output2 &out) const = 0;

  // Guards: values[global] = γ; gradient / Hessian of guard slot (k, local index kk).
  virtual void guards(const Point &z, PetscScalar *values) const = 0;
  virtual void guardGradient(PetscInt k, int kk, const Point &z, PetscScalar *gw, PetscScalar *gt, PetscScalar *gp) const = 0;
  // rates[global] = γ_t + γ_u·u̇ of every guard active[global] (one directional derivative per
  // instance: u seeded with u̇ = xdot at IndexSpace positions, t with 1).
  virtual void guardRates(const Point &z, const PetscScalar *xdot, const std::vector<char> &active, PetscScalar *rates) const = 0;
  virtual void guardHessian(PetscInt k, int kk, const Point &z, const Direction2 &dir, const Output2 &out) const = 0;

  // Initial state: u0w[writePos] += u0; Jw += ∂u0/∂p; (λᵀu0)_pp δp.
  virtual void initialState(const std::vector<PetscReal> &p, PetscScalar *u0w) const = 0;
  virtual void initialStateJacobianP(const std::vector<PetscReal> &p, PetscInt m, PetscScalar *Jw) const = 0;
  // out[k][param] += Σ_w w[k][writePos] ∂u0_w/∂p_param for every k (u0's transposed p-derivative).
  virtual void initialStateJacobianPTranspose(const std::vector<PetscReal> &p, const std::vector<const PetscScalar *> &w,
                                              const std::vector<PetscScalar *> &out) const = 0;
  virtual void initialStateHessian(const std::vector<PetscReal> &p, const PetscScalar *lam, const PetscScalar *dp,
                                   PetscScalar *outp) const = 0;

  // Resets as changes δ = ρ(t, u⁻, p) − u⁻[writes] (summed over kernels) at write positions:
  //   value: out[writePos] += δ;  action: out[writePos] += δ_u v;  transpose: out[readPos] += δ_uᵀ w;
  //   Rp: Jw += δ_p;  Rt: out[writePos] += δ_t;  Hessian: H(wᵀδ) δz.
  virtual void resetDelta(const EventId &id, const Point &z, PetscScalar *out) const = 0;
  virtual void resetAction(const EventId &id, const Point &z, const PetscScalar *v, PetscScalar *out) const = 0;
  virtual void resetTransposeAction(const EventId &id, const Point &z, const PetscScalar *w, PetscScalar *out) const = 0;
  virtual void resetJacobianP(const EventId &id, const Point &z, PetscInt m, PetscScalar *Jw) const = 0;
  virtual void resetTimeDerivative(const EventId &id, const Point &z, PetscScalar *out) const = 0;
  virtual void resetHessian(const EventId &id, const Point &z, const Direction2 &dir, const Output2 &out) const = 0;
};

template <class K> class KernelGroup final : public KernelGroupBase {
  using Sz = Sizes<K>;
  static constexpr int NR = Sz::reads, NW = Sz::writes, NP = Sz::params;
  static constexpr int NR_ = Sz::fixed ? NR : Dynamic, NW_ = Sz::fixed ? NW : Dynamic, NP_ = Sz::fixed ? NP : Dynamic;
  using FadU = typename FadN<NR_>::type;
  using FadP = typename FadN<NP_>::type;
  using FadZ = typename FadN<Sz::all>::type;
  using Fad2 = typename Fad2N<Sz::all>::type;

public:
  static_assert(HasResidual<K>::value || HasGuard<K>::value || HasInitial<K>::value || HasReset<K>::value,
                "a model kernel needs at least one of residual<S>, guard<S>, initialState<S>, reset<S>");
  static_assert(HasResidual<K>::value || !NamesResidual<K>,
                "model kernel: its member 'residual' does not match "
                "template <class S> void residual(S t, const S *u, const S *p, const DiscreteState &d, S *f) const");
  static_assert(HasGuard<K>::value || !NamesGuard<K>,
                "model kernel: its member 'guard' does not match "
                "template <class S> S guard(PetscInt k, S t, const S *u, const S *p, const DiscreteState &d) const");
  static_assert(HasInitial<K>::value || !NamesInitial<K>,
                "model kernel: its member 'initialState' does not match template <class S> void initialState(const S *p, S *u0) const");
  static_assert(HasReset<K>::value || !NamesReset<K>,
                "model kernel: its member 'reset' does not match (it would be ignored: no reset) "
                "template <class S> void reset(const EventId &id, S t, const S *u, const S *p, const DiscreteState &d, S *uplus) const");

  const char *typeName() const override { return typeid(K).name(); }
  PetscInt count() const override { return (PetscInt)k_.size(); }
  bool hasGuards() const override { return HasGuard<K>::value; }
  bool hasInitialState() const override { return HasInitial<K>::value; }
  bool hasReset() const override { return HasReset<K>::value; }

  // Adds one instance (indices already validated by the model). readPos/writePos: IndexSpace.
  void add(const K &k, const std::vector<PetscInt> &reads, const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &writes,
           const std::vector<PetscInt> &writePos, const std::vector<PetscInt> &params, const std::vector<PetscInt> &guards) {
    Slots s;
    s.r0 = (PetscInt)readGlob_.size(), s.w0 = (PetscInt)writeGlob_.size(), s.p0 = (PetscInt)par_.size(), s.g0 = (PetscInt)guard_.size();
    s.nr = (int)reads.size(), s.nw = (int)writes.size(), s.np = (int)params.size(), s.ng = (int)guards.size();
    readGlob_.insert(readGlob_.end(), reads.begin(), reads.end());
    readPos_.insert(readPos_.end(), readPos.begin(), readPos.end());
    writeGlob_.insert(writeGlob_.end(), writes.begin(), writes.end());
    writePos_.insert(writePos_.end(), writePos.begin(), writePos.end());
    par_.insert(par_.end(), params.begin(), params.end());
    guard_.insert(guard_.end(), guards.begin(), guards.end());
    // For resets: where each written row sits among the reads (the model checked it does).
    for (PetscInt w : writes) {
      const auto it = std::find(reads.begin(), reads.end(), w);
      writeInReads_.push_back(it == reads.end() ? -1 : (PetscInt)(it - reads.begin()));
    }
    slots_.push_back(s);
    k_.push_back(k);
  }
  std::vector<PetscInt> guardsOf(PetscInt k) const override {
    const Slots &s = slots_[k];
    return {guard_.begin() + s.g0, guard_.begin() + s.g0 + s.ng};
  }

  PetscCount jacobianValueCount() const override {
    PetscCount c = 0;
    if constexpr (HasResidual<K>::value)
      for (const Slots &s : slots_) c += (PetscCount)s.nr * s.nw;
    return c;
  }
  void jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const override {
    if constexpr (HasResidual<K>::value)
      for (const Slots &s : slots_)
        for (int w = 0; w < s.nw; ++w)
          for (int i = 0; i < s.nr; ++i) {
            rows.push_back(writeGlob_[s.w0 + w]);
            cols.push_back(readGlob_[s.r0 + i]);
          }
  }
  PetscErrorCode addJacobianValues(const PetscScalar *v, Mat J) const override {
    PetscFunctionBeginUser;
    if constexpr (HasResidual<K>::value)
      for (const Slots &s : slots_) {
        if (s.nr && s.nw) PetscCall(MatSetValues(J, s.nw, &writeGlob_[s.w0], s.nr, &readGlob_[s.r0], v, ADD_VALUES));
        v += (PetscCount)s.nr * s.nw;
      }
    PetscFunctionReturn(0);
  }

  void residual(const Point &z, PetscScalar *fw) const override {
    if constexpr (HasResidual<K>::value) {
      Buf<R, NR_> u;
      Buf<R, NP_> p;
      Buf<R, NW_> f;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        load(s, z, u, p);
        f.resize(s.nw);
        for (int w = 0; w < s.nw; ++w) f[w] = 0;
        k_[k].template residual<R>(z.t, u.data(), p.data(), z.d, f.data());
        for (int w = 0; w < s.nw; ++w) fw[writePos_[s.w0 + w]] += f[w];
      }
    }
  }

  void jacobianValues(const Point &z, PetscScalar *v) const override {
    if constexpr (HasResidual<K>::value) {
      Buf<FadU, NR_> u;
      Buf<FadU, NP_> p;
      Buf<FadU, NW_> f;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        const int nr = Sz::fixed ? NR : s.nr, nw = Sz::fixed ? NW : s.nw, np = Sz::fixed ? NP : s.np;  // constants when fixed
        if (!nr || !nw) continue;
        u.resize(nr), p.resize(np), f.resize(nw);
        for (int i = 0; i < nr; ++i) u[i] = seeded<FadU>(nr, i, z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < np; ++i) p[i] = FadU(z.p[par_[s.p0 + i]]);
        for (int w = 0; w < nw; ++w) f[w] = 0.0;
        k_[k].template residual<FadU>(FadU(z.t), u.data(), p.data(), z.d, f.data());
        for (int w = 0; w < nw; ++w, v += nr) {
          const FadU &fw = f[w];
          for (int i = 0; i < nr; ++i) v[i] = fw.dx(i);
        }
      }
    }
  }

  void jacobianP(const Point &z, PetscInt m, PetscScalar *Jw) const override {
    if constexpr (HasResidual<K>::value && (NP != 0)) {
      Buf<FadP, NR_> u;
      Buf<FadP, NP_> p;
      Buf<FadP, NW_> f;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        if (!s.np || !s.nw) continue;
        u.resize(s.nr), p.resize(s.np), f.resize(s.nw);
        for (int i = 0; i < s.nr; ++i) u[i] = FadP(z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < s.np; ++i) p[i] = seeded<FadP>(s.np, i, z.p[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) f[w] = 0.0;
        k_[k].template residual<FadP>(FadP(z.t), u.data(), p.data(), z.d, f.data());
        for (int w = 0; w < s.nw; ++w)
          for (int i = 0; i < s.np; ++i) Jw[par_[s.p0 + i] * m + writePos_[s.w0 + w]] += f[w].dx(i);
      }
    }
  }

  PetscErrorCode jacobianP(const Point &z, Mat Jp) const override {
    PetscFunctionBeginUser;
    if constexpr (HasResidual<K>::value && (NP != 0)) {
      Buf<FadP, NR_> u;
      Buf<FadP, NP_> p;
      Buf<FadP, NW_> f;
      Buf<PetscScalar, (Sz::fixed ? NP * NW : Dynamic)> vals;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        const int nr = Sz::fixed ? NR : s.nr, nw = Sz::fixed ? NW : s.nw, np = Sz::fixed ? NP : s.np;  // constants when fixed
        if (!np || !nw) continue;
        u.resize(nr), p.resize(np), f.resize(nw), vals.resize(np * nw);
        for (int i = 0; i < nr; ++i) u[i] = FadP(z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < np; ++i) p[i] = seeded<FadP>(np, i, z.p[par_[s.p0 + i]]);
        for (int w = 0; w < nw; ++w) f[w] = 0.0;
        k_[k].template residual<FadP>(FadP(z.t), u.data(), p.data(), z.d, f.data());
        PetscScalar *row = vals.data();
        for (int w = 0; w < nw; ++w, row += np) {
          const FadP &fw = f[w];
          for (int i = 0; i < np; ++i) row[i] = fw.dx(i);
        }
        PetscCall(MatSetValues(Jp, nw, &writeGlob_[s.w0], np, &par_[s.p0], vals.data(), ADD_VALUES));
      }
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode parameterPattern(Mat P) const override {
    PetscFunctionBeginUser;
    if constexpr (HasResidual<K>::value && (NP != 0)) {
      std::vector<PetscScalar> zeros;
      for (const Slots &s : slots_) {
        zeros.assign((size_t)s.np * s.nw, 0.0);
        if (s.np && s.nw) PetscCall(MatSetValues(P, s.nw, &writeGlob_[s.w0], s.np, &par_[s.p0], zeros.data(), INSERT_VALUES));
      }
    }
    PetscFunctionReturn(0);
  }

  void timeDerivative(const Point &z, PetscScalar *fw) const override {
    if constexpr (HasResidual<K>::value) {
      Buf<Dir, NR_> u;
      Buf<Dir, NP_> p;
      Buf<Dir, NW_> f;
      const Dir t(1, 0, z.t);
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        u.resize(s.nr), p.resize(s.np), f.resize(s.nw);
        for (int i = 0; i < s.nr; ++i) u[i] = Dir(z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < s.np; ++i) p[i] = Dir(z.p[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) f[w] = 0.0;
        k_[k].template residual<Dir>(t, u.data(), p.data(), z.d, f.data());
        for (int w = 0; w < s.nw; ++w) fw[writePos_[s.w0 + w]] += f[w].dx(0);
      }
    }
  }

  void hessian(const Point &z, const Direction2 &dir, const Output2 &out) const override {
    if constexpr (HasResidual<K>::value) {
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        second(s, z, dir, out, [&](const Fad2 &t, const Fad2 *u, const Fad2 *p) {
          Buf<Fad2, NW_> f;
          f.resize(s.nw);
          for (int w = 0; w < s.nw; ++w) f[w] = 0.0;
          k_[k].template residual<Fad2>(t, u, p, z.d, f.data());
          Fad2 L(0.0);
          for (int w = 0; w < s.nw; ++w) L += dir.weight[writePos_[s.w0 + w]] * f[w];
          return L;
        });
      }
    }
  }

  void guards(const Point &z, PetscScalar *values) const override {
    if constexpr (HasGuard<K>::value) {
      Buf<R, NR_> u;
      Buf<R, NP_> p;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        if (!s.ng) continue;
        load(s, z, u, p);
        for (int g = 0; g < s.ng; ++g) values[guard_[s.g0 + g]] = k_[k].template guard<R>(g, z.t, u.data(), p.data(), z.d);
      }
    }
  }

  void guardGradient(PetscInt k, int kk, const Point &z, PetscScalar *gw, PetscScalar *gt, PetscScalar *gp) const override {
    if constexpr (HasGuard<K>::value) {
      const Slots &s = slots_[k];
      const int nd = s.nr + s.np + 1;
      Buf<FadZ, NR_> u;
      Buf<FadZ, NP_> p;
      u.resize(s.nr), p.resize(s.np);
      for (int i = 0; i < s.nr; ++i) u[i] = seeded<FadZ>(nd, i, z.x[readPos_[s.r0 + i]]);
      for (int i = 0; i < s.np; ++i) p[i] = seeded<FadZ>(nd, s.nr + i, z.p[par_[s.p0 + i]]);
      const FadZ g = k_[k].template guard<FadZ>(kk, seeded<FadZ>(nd, s.nr + s.np, z.t), u.data(), p.data(), z.d);
      for (int i = 0; i < s.nr; ++i) gw[readPos_[s.r0 + i]] += g.dx(i);
      for (int i = 0; i < s.np; ++i) gp[par_[s.p0 + i]] += g.dx(s.nr + i);
      *gt += g.dx(s.nr + s.np);
    }
  }

  void guardRates(const Point &z, const PetscScalar *xdot, const std::vector<char> &active, PetscScalar *rates) const override {
    if constexpr (HasGuard<K>::value) {
      Buf<Dir, NR_> u;
      Buf<Dir, NP_> p;
      const Dir t(1, 0, z.t);
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        bool any = false;
        for (int g = 0; g < s.ng; ++g) any = any || active[guard_[s.g0 + g]];
        if (!any) continue;
        u.resize(s.nr), p.resize(s.np);
        for (int i = 0; i < s.nr; ++i) {
          const PetscInt pos = readPos_[s.r0 + i];
          u[i] = Dir(1, z.x[pos]);
          u[i].fastAccessDx(0) = xdot[pos];
        }
        for (int i = 0; i < s.np; ++i) p[i] = Dir(z.p[par_[s.p0 + i]]);
        for (int g = 0; g < s.ng; ++g)
          if (active[guard_[s.g0 + g]]) rates[guard_[s.g0 + g]] = k_[k].template guard<Dir>(g, t, u.data(), p.data(), z.d).dx(0);
      }
    }
  }

  void guardHessian(PetscInt k, int kk, const Point &z, const Direction2 &dir, const Output2 &out) const override {
    if constexpr (HasGuard<K>::value) {
      second(slots_[k], z, dir, out, [&](const Fad2 &t, const Fad2 *u, const Fad2 *p) {
        return Fad2(k_[k].template guard<Fad2>(kk, t, u, p, z.d));
      });
    }
  }

  void initialState(const std::vector<PetscReal> &pv, PetscScalar *u0w) const override {
    if constexpr (HasInitial<K>::value) {
      Buf<R, NP_> p;
      Buf<R, NW_> u0;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        p.resize(s.np), u0.resize(s.nw);
        for (int i = 0; i < s.np; ++i) p[i] = pv[par_[s.p0 + i]];
        for (int w = 0; w < s.nw; ++w) u0[w] = 0;
        k_[k].template initialState<R>(p.data(), u0.data());
        for (int w = 0; w < s.nw; ++w) u0w[writePos_[s.w0 + w]] += u0[w];
      }
    }
  }

  void initialStateJacobianP(const std::vector<PetscReal> &pv, PetscInt m, PetscScalar *Jw) const override {
    forEachInitialStateJacobianP(pv, [&](const Slots &s, const FadP *u0) {
      for (int w = 0; w < s.nw; ++w)
        for (int i = 0; i < s.np; ++i) Jw[par_[s.p0 + i] * m + writePos_[s.w0 + w]] += u0[w].dx(i);
    });
  }
  void initialStateJacobianPTranspose(const std::vector<PetscReal> &pv, const std::vector<const PetscScalar *> &w,
                                      const std::vector<PetscScalar *> &out) const override {
    forEachInitialStateJacobianP(pv, [&](const Slots &s, const FadP *u0) {
      for (size_t k = 0; k < w.size(); ++k)
        for (int r = 0; r < s.nw; ++r) {
          const PetscScalar wr = w[k][writePos_[s.w0 + r]];
          for (int i = 0; i < s.np; ++i) out[k][par_[s.p0 + i]] += wr * u0[r].dx(i);
        }
    });
  }

  void initialStateHessian(const std::vector<PetscReal> &pv, const PetscScalar *lam, const PetscScalar *dp,
                           PetscScalar *outp) const override {
    if constexpr (HasInitial<K>::value && (NP != 0)) {
      using F2 = typename Fad2N<NP_>::type;
      Buf<F2, NP_> p;
      Buf<F2, NW_> u0;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        if (!s.np) continue;
        p.resize(s.np), u0.resize(s.nw);
        for (int i = 0; i < s.np; ++i) {
          const PetscInt g = par_[s.p0 + i];
          p[i] = seeded2<F2>(s.np, i, pv[g], dp ? dp[g] : 0.0);
        }
        for (int w = 0; w < s.nw; ++w) u0[w] = 0.0;
        k_[k].template initialState<F2>(p.data(), u0.data());
        F2 L(0.0);
        for (int w = 0; w < s.nw; ++w) L += lam[writePos_[s.w0 + w]] * u0[w];
        for (int i = 0; i < s.np; ++i) outp[par_[s.p0 + i]] += L.dx(i).dx(0);
      }
    }
  }

  void resetDelta(const EventId &id, const Point &z, PetscScalar *out) const override {
    if constexpr (HasReset<K>::value) {
      Buf<R, NR_> u;
      Buf<R, NP_> p;
      Buf<R, NW_> up;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        load(s, z, u, p);
        up.resize(s.nw);
        for (int w = 0; w < s.nw; ++w) up[w] = u[writeInReads_[s.w0 + w]];
        k_[k].template reset<R>(id, z.t, u.data(), p.data(), z.d, up.data());
        for (int w = 0; w < s.nw; ++w) out[writePos_[s.w0 + w]] += up[w] - u[writeInReads_[s.w0 + w]];
      }
    }
  }

  void resetAction(const EventId &id, const Point &z, const PetscScalar *v, PetscScalar *out) const override {
    if constexpr (HasReset<K>::value) {
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        // One directional derivative: u seeded with v.
        Buf<Dir, NR_> u;
        Buf<Dir, NP_> p;
        Buf<Dir, NW_> up;
        u.resize(s.nr), p.resize(s.np), up.resize(s.nw);
        for (int i = 0; i < s.nr; ++i) {
          u[i] = Dir(1, z.x[readPos_[s.r0 + i]]);
          u[i].fastAccessDx(0) = v[readPos_[s.r0 + i]];
        }
        for (int i = 0; i < s.np; ++i) p[i] = Dir(z.p[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) up[w] = u[writeInReads_[s.w0 + w]];
        k_[k].template reset<Dir>(id, Dir(z.t), u.data(), p.data(), z.d, up.data());
        for (int w = 0; w < s.nw; ++w) out[writePos_[s.w0 + w]] += up[w].dx(0) - v[readPos_[s.r0 + writeInReads_[s.w0 + w]]];
      }
    }
  }

  void resetTransposeAction(const EventId &id, const Point &z, const PetscScalar *wv, PetscScalar *out) const override {
    if constexpr (HasReset<K>::value) {
      Buf<FadU, NR_> u;
      Buf<FadU, NP_> p;
      Buf<FadU, NW_> up;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        u.resize(s.nr), p.resize(s.np), up.resize(s.nw);
        for (int i = 0; i < s.nr; ++i) u[i] = seeded<FadU>(s.nr, i, z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < s.np; ++i) p[i] = FadU(z.p[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) up[w] = u[writeInReads_[s.w0 + w]];
        k_[k].template reset<FadU>(id, FadU(z.t), u.data(), p.data(), z.d, up.data());
        for (int w = 0; w < s.nw; ++w) {
          const PetscScalar ww = wv[writePos_[s.w0 + w]];
          for (int i = 0; i < s.nr; ++i) out[readPos_[s.r0 + i]] += up[w].dx(i) * ww;
          out[readPos_[s.r0 + writeInReads_[s.w0 + w]]] -= ww;  // minus the identity part of δ
        }
      }
    }
  }

  void resetJacobianP(const EventId &id, const Point &z, PetscInt m, PetscScalar *Jw) const override {
    if constexpr (HasReset<K>::value && (NP != 0)) {
      Buf<FadP, NR_> u;
      Buf<FadP, NP_> p;
      Buf<FadP, NW_> up;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        if (!s.np) continue;
        u.resize(s.nr), p.resize(s.np), up.resize(s.nw);
        for (int i = 0; i < s.nr; ++i) u[i] = FadP(z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < s.np; ++i) p[i] = seeded<FadP>(s.np, i, z.p[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) up[w] = u[writeInReads_[s.w0 + w]];
        k_[k].template reset<FadP>(id, FadP(z.t), u.data(), p.data(), z.d, up.data());
        for (int w = 0; w < s.nw; ++w)
          for (int i = 0; i < s.np; ++i) Jw[par_[s.p0 + i] * m + writePos_[s.w0 + w]] += up[w].dx(i);
      }
    }
  }

  void resetTimeDerivative(const EventId &id, const Point &z, PetscScalar *out) const override {
    if constexpr (HasReset<K>::value) {
      Buf<Dir, NR_> u;
      Buf<Dir, NP_> p;
      Buf<Dir, NW_> up;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        u.resize(s.nr), p.resize(s.np), up.resize(s.nw);
        for (int i = 0; i < s.nr; ++i) u[i] = Dir(z.x[readPos_[s.r0 + i]]);
        for (int i = 0; i < s.np; ++i) p[i] = Dir(z.p[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) up[w] = u[writeInReads_[s.w0 + w]];
        k_[k].template reset<Dir>(id, Dir(1, 0, z.t), u.data(), p.data(), z.d, up.data());
        for (int w = 0; w < s.nw; ++w) out[writePos_[s.w0 + w]] += up[w].dx(0);
      }
    }
  }

  void resetHessian(const EventId &id, const Point &z, const Direction2 &dir, const Output2 &out) const override {
    if constexpr (HasReset<K>::value) {
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        second(s, z, dir, out, [&](const Fad2 &t, const Fad2 *u, const Fad2 *p) {
          Buf<Fad2, NW_> up;
          up.resize(s.nw);
          for (int w = 0; w < s.nw; ++w) up[w] = u[writeInReads_[s.w0 + w]];
          k_[k].template reset<Fad2>(id, t, u, p, z.d, up.data());
          Fad2 L(0.0);
          for (int w = 0; w < s.nw; ++w) L += dir.weight[writePos_[s.w0 + w]] * up[w];
          return L;
        });
      }
    }
  }

private:
  // use(slots, u0) for every instance with parameters, u0 (its writes) seeded in its params.
  template <class Use> void forEachInitialStateJacobianP(const std::vector<PetscReal> &pv, Use &&use) const {
    if constexpr (HasInitial<K>::value && (NP != 0)) {
      Buf<FadP, NP_> p;
      Buf<FadP, NW_> u0;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Slots &s = slots_[k];
        if (!s.np) continue;
        p.resize(s.np), u0.resize(s.nw);
        for (int i = 0; i < s.np; ++i) p[i] = seeded<FadP>(s.np, i, pv[par_[s.p0 + i]]);
        for (int w = 0; w < s.nw; ++w) u0[w] = 0.0;
        k_[k].template initialState<FadP>(p.data(), u0.data());
        use(s, u0.data());
      }
    }
  }

  template <class BU, class BP> void load(const Slots &s, const Point &z, BU &u, BP &p) const {
    u.resize(s.nr), p.resize(s.np);
    for (int i = 0; i < s.nr; ++i) u[i] = z.x[readPos_[s.r0 + i]];
    for (int i = 0; i < s.np; ++i) p[i] = z.p[par_[s.p0 + i]];
  }
  // H δz of the scalar L(t, u, p) = fn(...) for one instance: z = (u, p, t) seeded in the outer
  // Fad, δz in the inner one; accumulated into out at the instance's positions.
  template <class Fn> void second(const Slots &s, const Point &z, const Direction2 &dir, const Output2 &out, Fn &&fn) const {
    const int nd = s.nr + s.np + 1;
    Buf<Fad2, NR_> u;
    Buf<Fad2, NP_> p;
    u.resize(s.nr), p.resize(s.np);
    for (int i = 0; i < s.nr; ++i) {
      const PetscInt q = readPos_[s.r0 + i];
      u[i] = seeded2<Fad2>(nd, i, z.x[q], dir.du[q]);
    }
    for (int i = 0; i < s.np; ++i) {
      const PetscInt g = par_[s.p0 + i];
      p[i] = seeded2<Fad2>(nd, s.nr + i, z.p[g], dir.dp ? dir.dp[g] : 0.0);
    }
    const Fad2 t = seeded2<Fad2>(nd, s.nr + s.np, z.t, dir.dt);
    const Fad2 L = fn(t, u.data(), p.data());
    for (int i = 0; i < s.nr; ++i) out.u[readPos_[s.r0 + i]] += L.dx(i).dx(0);
    for (int i = 0; i < s.np; ++i) out.p[par_[s.p0 + i]] += L.dx(s.nr + i).dx(0);
    *out.t += L.dx(s.nr + s.np).dx(0);
  }

  std::vector<K> k_;
  std::vector<Slots> slots_;
  std::vector<PetscInt> readGlob_, readPos_, writeGlob_, writePos_, par_, guard_, writeInReads_;
};

// ---------------------------------------------------------------------------------------------
// Cost kernels: scalar terms ψ, r, g_i of (t, u[reads], p[params]); the cost is their sum.
enum class CostPart { Terminal, Integrand, Measurement };

class CostGroupBase {
public:
  virtual ~CostGroupBase() = default;
  virtual bool has(CostPart part) const = 0;
  virtual PetscScalar value(CostPart part, PetscInt i, const Point &z) const = 0;
  // gw[readPos] += ∂/∂u, gp += ∂/∂p.
  virtual void gradient(CostPart part, PetscInt i, const Point &z, PetscScalar *gw, PetscScalar *gp) const = 0;
  // Σ ∂/∂t over the instances.
  virtual PetscScalar timeDerivative(CostPart part, PetscInt i, const Point &z) const = 0;
  virtual void hessian(CostPart part, PetscInt i, const Point &z, const Direction2 &dir, const Output2 &out) const = 0;
};

template <class K> class CostGroup final : public CostGroupBase {
  using Sz = Sizes<K>;
  static constexpr int NR_ = Sz::fixed ? Sz::reads : Dynamic, NP_ = Sz::fixed ? Sz::params : Dynamic;
  using FadZ = typename FadN<Sz::all>::type;
  using Fad2 = typename Fad2N<Sz::all>::type;

public:
  static_assert(HasTerminal<K>::value || HasIntegrand<K>::value || HasMeasurement<K>::value,
                "a cost kernel needs at least one of terminal<S>, integrand<S>, measurement<S>");
  static_assert(HasTerminal<K>::value || !NamesTerminal<K>,
                "cost kernel: its member 'terminal' does not match "
                "template <class S> S terminal(S t, const S *u, const S *p, const DiscreteState &d) const");
  static_assert(HasIntegrand<K>::value || !NamesIntegrand<K>,
                "cost kernel: its member 'integrand' does not match "
                "template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &d) const");
  static_assert(HasMeasurement<K>::value || !NamesMeasurement<K>,
                "cost kernel: its member 'measurement' does not match "
                "template <class S> S measurement(PetscInt i, S t, const S *u, const S *p, const DiscreteState &d) const");

  void add(const K &k, const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &params) {
    Slots s;
    s.r0 = (PetscInt)readPos_.size(), s.p0 = (PetscInt)par_.size();
    s.nr = (int)readPos.size(), s.np = (int)params.size();
    readPos_.insert(readPos_.end(), readPos.begin(), readPos.end());
    par_.insert(par_.end(), params.begin(), params.end());
    slots_.push_back(s);
    k_.push_back(k);
  }

  bool has(CostPart part) const override {
    switch (part) {
    case CostPart::Terminal: return HasTerminal<K>::value;
    case CostPart::Integrand: return HasIntegrand<K>::value;
    default: return HasMeasurement<K>::value;
    }
  }

  PetscScalar value(CostPart part, PetscInt i, const Point &z) const override {
    PetscScalar sum = 0;
    Buf<R, NR_> u;
    Buf<R, NP_> p;
    for (size_t k = 0; k < k_.size(); ++k) {
      const Slots &s = slots_[k];
      u.resize(s.nr), p.resize(s.np);
      for (int j = 0; j < s.nr; ++j) u[j] = z.x[readPos_[s.r0 + j]];
      for (int j = 0; j < s.np; ++j) p[j] = z.p[par_[s.p0 + j]];
      sum += eval<R>(k_[k], part, i, z.t, u.data(), p.data(), z.d);
    }
    return sum;
  }

  void gradient(CostPart part, PetscInt i, const Point &z, PetscScalar *gw, PetscScalar *gp) const override {
    Buf<FadZ, NR_> u;
    Buf<FadZ, NP_> p;
    for (size_t k = 0; k < k_.size(); ++k) {
      const Slots &s = slots_[k];
      const int nd = s.nr + s.np + 1;
      u.resize(s.nr), p.resize(s.np);
      for (int j = 0; j < s.nr; ++j) u[j] = seeded<FadZ>(nd, j, z.x[readPos_[s.r0 + j]]);
      for (int j = 0; j < s.np; ++j) p[j] = seeded<FadZ>(nd, s.nr + j, z.p[par_[s.p0 + j]]);
      const FadZ v = eval<FadZ>(k_[k], part, i, seeded<FadZ>(nd, s.nr + s.np, z.t), u.data(), p.data(), z.d);
      for (int j = 0; j < s.nr; ++j) gw[readPos_[s.r0 + j]] += v.dx(j);
      for (int j = 0; j < s.np; ++j) gp[par_[s.p0 + j]] += v.dx(s.nr + j);
    }
  }

  PetscScalar timeDerivative(CostPart part, PetscInt i, const Point &z) const override {
    PetscScalar sum = 0;
    Buf<Dir, NR_> u;
    Buf<Dir, NP_> p;
    const Dir t(1, 0, z.t);
    for (size_t k = 0; k < k_.size(); ++k) {
      const Slots &s = slots_[k];
      u.resize(s.nr), p.resize(s.np);
      for (int j = 0; j < s.nr; ++j) u[j] = Dir(z.x[readPos_[s.r0 + j]]);
      for (int j = 0; j < s.np; ++j) p[j] = Dir(z.p[par_[s.p0 + j]]);
      sum += eval<Dir>(k_[k], part, i, t, u.data(), p.data(), z.d).dx(0);
    }
    return sum;
  }

  void hessian(CostPart part, PetscInt i, const Point &z, const Direction2 &dir, const Output2 &out) const override {
    Buf<Fad2, NR_> u;
    Buf<Fad2, NP_> p;
    for (size_t k = 0; k < k_.size(); ++k) {
      const Slots &s = slots_[k];
      const int nd = s.nr + s.np + 1;
      u.resize(s.nr), p.resize(s.np);
      for (int j = 0; j < s.nr; ++j) {
        const PetscInt q = readPos_[s.r0 + j];
        u[j] = seeded2<Fad2>(nd, j, z.x[q], dir.du[q]);
      }
      for (int j = 0; j < s.np; ++j) {
        const PetscInt g = par_[s.p0 + j];
        p[j] = seeded2<Fad2>(nd, s.nr + j, z.p[g], dir.dp ? dir.dp[g] : 0.0);
      }
      const Fad2 L = eval<Fad2>(k_[k], part, i, seeded2<Fad2>(nd, s.nr + s.np, z.t, dir.dt), u.data(), p.data(), z.d);
      for (int j = 0; j < s.nr; ++j) out.u[readPos_[s.r0 + j]] += L.dx(j).dx(0);
      for (int j = 0; j < s.np; ++j) out.p[par_[s.p0 + j]] += L.dx(s.nr + j).dx(0);
      *out.t += L.dx(s.nr + s.np).dx(0);
    }
  }

private:
  // The requested part of kernel k (a part the kernel type lacks contributes nothing).
  template <class S> static S eval(const K &k, CostPart part, PetscInt i, const S &t, const S *u, const S *p, const DiscreteState &d) {
    switch (part) {
    case CostPart::Terminal:
      if constexpr (HasTerminal<K>::value) return S(k.template terminal<S>(t, u, p, d));
      break;
    case CostPart::Integrand:
      if constexpr (HasIntegrand<K>::value) return S(k.template integrand<S>(t, u, p, d));
      break;
    case CostPart::Measurement:
      if constexpr (HasMeasurement<K>::value) return S(k.template measurement<S>(i, t, u, p, d));
      break;
    }
    return S(0.0);
  }

  std::vector<K> k_;
  std::vector<Slots> slots_;
  std::vector<PetscInt> readPos_, par_;
};

} // namespace local
} // namespace ad
} // namespace hybridsens
