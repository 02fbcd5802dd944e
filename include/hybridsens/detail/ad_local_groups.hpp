// hybridsens/detail/ad_local_groups.hpp — implementation detail of hybridsens/ad_local.hpp:
// all instances of one kernel type (KernelGroup<K>, CostGroup<K>), evaluated and
// differentiated with the Fad type their sizes allow. Users never name these classes.
//
// Fad types per kernel type K with R reads, P parameters (compile-time constants or Dynamic):
//   Jacobian ∂f/∂u          SFad<R>            (DFad if any size is Dynamic)
//   ∂f/∂p                   SFad<P>
//   ∂f/∂t, directional      SFad<1>
//   guard/cost gradients    SFad<R + P + 1>    (u, p and t in one evaluation)
//   second-order products   SFad<SFad<1>, R + P + 1>   (z = (u, p, t) outer, δz inner)
// Work arrays are indexed by IndexSpace positions: reads at readPos, writes at writePos.
//
// What does not depend on K — where each instance reads and writes, the Jacobian pattern, the
// block-wise matrix fill — lives in the non-template bases (KernelGroupBase, CostGroupBase),
// compiled once in src/ad/local_groups.cpp. KernelGroup<K> adds one loop per user template
// (eachResidual, eachReset, eachInitialState, and the guard and cost calls): seed the inputs
// with detail::Inputs, evaluate, hand the result to the callback's extraction.
#pragma once

#include "hybridsens/detail/ad_local_space.hpp"
#include "hybridsens/detail/ad_seed.hpp"
#include "hybridsens/detail/ad_traits.hpp"
#include "hybridsens/model.hpp"

#include <petscmat.h>

#include <typeinfo>
#include <vector>

namespace hybridsens {
namespace ad {
namespace local {

using detail::DynamicSize;
using detail::R;
using detail::Slots;
using detail::Values;

// What LocalKernelModel/LocalKernelCost::add check an instance's coupling against: the kernel
// type's static sizes (DynamicSize: any) and which templates it has.
struct KernelShape {
  const char *type;
  int reads, writes, params;
  bool guard, reset, terminal, integrand;
  template <class K> static KernelShape of() {
    using Sz = detail::Sizes<K>;
    return {typeid(K).name(),           Sz::reads,
            Sz::writes,                 Sz::params,
            detail::HasGuard<K>::value, detail::HasReset<K>::value,
            detail::HasTerminal<K>::value, detail::HasIntegrand<K>::value};
  }
};

// Where one instance's indices sit in the flat arrays of its group.
struct Instance {
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

  // ---- bookkeeping (compiled) ----------------------------------------------------------------
  // Adds one instance (indices already validated by the model). readPos/writePos: IndexSpace.
  void addInstance(const std::vector<PetscInt> &reads, const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &writes,
                   const std::vector<PetscInt> &writePos, const std::vector<PetscInt> &params, const std::vector<PetscInt> &guards);
  PetscInt count() const { return (PetscInt)inst_.size(); }
  // Global guard indices of instance k (for the ownership map).
  std::vector<PetscInt> guardsOf(PetscInt k) const;

  // ∂f/∂u as a list of blocks (writes × reads, row-major, one per instance): jacobianEntries
  // appends the blocks' global (row, col) pairs, jacobianValues writes their values in the same
  // order (jacobianValueCount of them); addJacobianValues adds such values into J block by block
  // (MatSetValues, for a matrix without the COO layout).
  PetscCount jacobianValueCount() const;
  void jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const;
  PetscErrorCode addJacobianValues(const PetscScalar *v, Mat J) const;
  // The pattern of ∂f/∂p: rows = writes, cols = params, per instance.
  PetscErrorCode parameterPattern(Mat P) const;

  // ---- what the kernel type provides ---------------------------------------------------------
  virtual bool hasResidual() const = 0;
  virtual bool hasGuards() const = 0;
  virtual bool hasInitialState() const = 0;
  virtual bool hasReset() const = 0;
  virtual const char *typeName() const = 0;

  // fw[writePos] += f (value).
  virtual void residual(const Point &z, PetscScalar *fw) const = 0;
  virtual void jacobianValues(const Point &z, PetscScalar *v) const = 0;
  // Jw[col * m + writePos] += ∂f/∂p_col (column-major m × np).
  virtual void jacobianP(const Point &z, PetscInt m, PetscScalar *Jw) const = 0;
  // The same into a sparse matrix: Jp(writes, params) += ∂f/∂p (MatSetValues, ADD_VALUES).
  virtual PetscErrorCode jacobianP(const Point &z, Mat Jp) const = 0;
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

protected:
  // Instance k's inputs and outputs as views: reads (u), params (p), and rows it writes.
  Values reads(const Instance &s, const PetscScalar *x, int n) const { return {x, readPos_.data() + s.r0, n}; }
  Values params(const Instance &s, const PetscReal *p, int n) const { return {p, par_.data() + s.p0, n}; }
  Slots readSlots(const Instance &s, PetscScalar *base) const { return {base, readPos_.data() + s.r0}; }
  Slots paramSlots(const Instance &s, PetscScalar *base) const { return {base, par_.data() + s.p0}; }
  Slots writeSlots(const Instance &s, PetscScalar *base) const { return {base, writePos_.data() + s.w0}; }

  std::vector<Instance> inst_;
  std::vector<PetscInt> readGlob_, readPos_, writeGlob_, writePos_, par_, guard_;
  std::vector<PetscInt> writeInReads_;  // for resets: where each written row sits among the reads
};

template <class K> class KernelGroup final : public KernelGroupBase {
  using Sz = detail::Sizes<K>;
  static constexpr int NR = Sz::R, NW = Sz::W, NP = Sz::P;  // DynamicSize unless all sizes are static
  using FadU = typename detail::FadN<NR>::type;
  using FadP = typename detail::FadN<NP>::type;
  using FadZ = typename detail::FadN<Sz::all>::type;
  using Dir = detail::Dir;
  using Fad2 = typename detail::Fad2N<Sz::all>::type;
  template <class S> using In = detail::Inputs<S, NR, NP>;
  static constexpr unsigned all = detail::WrtU | detail::WrtP | detail::WrtT;

public:
  static_assert(detail::HasResidual<K>::value || detail::HasGuard<K>::value || detail::HasInitialState<K>::value ||
                    detail::HasReset<K>::value,
                "a model kernel needs at least one of residual<S>, guard<S>, initialState<S>, reset<S>");
  static_assert(detail::HasResidual<K>::value || !detail::DeclaresResidual<K>,
                "model kernel: its member 'residual' does not match " HYBRIDSENS_AD_RESIDUAL_SIGNATURE);
  static_assert(detail::HasGuard<K>::value || !detail::DeclaresGuard<K>,
                "model kernel: its member 'guard' does not match " HYBRIDSENS_AD_GUARD_SIGNATURE);
  static_assert(detail::HasInitialState<K>::value || !detail::DeclaresInitialState<K>,
                "model kernel: its member 'initialState' does not match " HYBRIDSENS_AD_INITIAL_STATE_SIGNATURE);
  static_assert((detail::HasInitialStateTranspose<K>::value && detail::HasInitialState<K>::value) || !detail::DeclaresInitialStateTranspose<K>,
                "model kernel: its member 'initialStateTranspose' does not match " HYBRIDSENS_AD_INITIAL_STATE_TRANSPOSE_SIGNATURE
                " (or the kernel has no initialState)");
  static_assert(detail::HasReset<K>::value || !detail::DeclaresReset<K>,
                "model kernel: its member 'reset' does not match (it would be ignored: no reset) " HYBRIDSENS_AD_RESET_SIGNATURE);

  void add(const K &k, const std::vector<PetscInt> &reads, const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &writes,
           const std::vector<PetscInt> &writePos, const std::vector<PetscInt> &params, const std::vector<PetscInt> &guards) {
    addInstance(reads, readPos, writes, writePos, params, guards);
    k_.push_back(k);
  }

  const char *typeName() const override { return typeid(K).name(); }
  bool hasResidual() const override { return detail::HasResidual<K>::value; }
  bool hasGuards() const override { return detail::HasGuard<K>::value; }
  bool hasInitialState() const override { return detail::HasInitialState<K>::value; }
  bool hasReset() const override { return detail::HasReset<K>::value; }

  // ---- dynamics --------------------------------------------------------------------------------
  void residual(const Point &z, PetscScalar *fw) const override {
    eachResidual<R>(z, [&](In<R> &in, const Instance &s) { return seed(in, 0, z, s), true; },
                    [&](const Instance &s, const In<R> &, const R *f) {
                      const Slots out = writeSlots(s, fw);
                      for (int w = 0; w < s.nw; ++w) out[w] += f[w];
                    });
  }
  void jacobianValues(const Point &z, PetscScalar *v) const override {
    // nr, nw, np: compile-time constants when the kernel's sizes are static
    eachResidual<FadU>(
        z, [&](In<FadU> &in, const Instance &s) { return nonEmpty(s.nr, s.nw) && (seed(in, detail::WrtU, z, s, true), true); },
        [&](const Instance &s, const In<FadU> &, const FadU *f) {
          const int nr = static_ ? NR : s.nr, nw = static_ ? NW : s.nw;
          for (int w = 0; w < nw; ++w, v += nr)
            for (int i = 0; i < nr; ++i) v[i] = f[w].dx(i);
        });
  }
  void jacobianP(const Point &z, PetscInt m, PetscScalar *Jw) const override {
    if constexpr (NP != 0)
      eachResidualP(z, [&](const Instance &s, const FadP *f) {
        for (int w = 0; w < s.nw; ++w)
          for (int i = 0; i < s.np; ++i) Jw[par_[s.p0 + i] * m + writePos_[s.w0 + w]] += f[w].dx(i);
      });
  }
  PetscErrorCode jacobianP(const Point &z, Mat Jp) const override {
    PetscErrorCode ierr = 0;
    PetscFunctionBeginUser;
    if constexpr (NP != 0) {
      detail::Buf<PetscScalar, (Sz::fixed ? NP * NW : DynamicSize)> vals;
      eachResidualP(z, [&](const Instance &s, const FadP *f) {
        const int nw = static_ ? NW : s.nw, np = static_ ? NP : s.np;
        vals.resize(np * nw);
        PetscScalar *row = vals.data();
        for (int w = 0; w < nw; ++w, row += np)
          for (int i = 0; i < np; ++i) row[i] = f[w].dx(i);
        if (!ierr) ierr = MatSetValues(Jp, nw, &writeGlob_[s.w0], np, &par_[s.p0], vals.data(), ADD_VALUES);
      });
    }
    PetscCall(ierr);
    PetscFunctionReturn(0);
  }
  void timeDerivative(const Point &z, PetscScalar *fw) const override {
    eachResidual<Dir>(z, [&](In<Dir> &in, const Instance &s) { return seed(in, detail::WrtT, z, s), true; },
                      [&](const Instance &s, const In<Dir> &, const Dir *f) {
                        const Slots out = writeSlots(s, fw);
                        for (int w = 0; w < s.nw; ++w) out[w] += f[w].dx(0);
                      });
  }
  void hessian(const Point &z, const Direction2 &dir, const Output2 &out) const override {
    eachResidual<Fad2>(z, [&](In<Fad2> &in, const Instance &s) { return seedSecond(in, z, dir, s), true; },
                       [&](const Instance &s, const In<Fad2> &, const Fad2 *f) {
                         Fad2 L(0.0);
                         for (int w = 0; w < s.nw; ++w) L += dir.weight[writePos_[s.w0 + w]] * f[w];
                         addSecond(L, s, out);
                       });
  }

  // ---- guards ----------------------------------------------------------------------------------
  void guards(const Point &z, PetscScalar *values) const override {
    if constexpr (detail::HasGuard<K>::value) {
      In<R> in;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Instance &s = inst_[k];
        if (!s.ng) continue;
        seed(in, 0, z, s);
        for (int g = 0; g < s.ng; ++g) values[guard_[s.g0 + g]] = guardOf(k, g, in, z);
      }
    }
  }
  void guardGradient(PetscInt k, int kk, const Point &z, PetscScalar *gw, PetscScalar *gt, PetscScalar *gp) const override {
    if constexpr (detail::HasGuard<K>::value) {
      const Instance &s = inst_[k];
      In<FadZ> in;
      seed(in, all, z, s);
      const FadZ g = guardOf(k, kk, in, z);
      const Slots ou = readSlots(s, gw), op = paramSlots(s, gp);
      for (int i = 0; i < s.nr; ++i) ou[i] += g.dx(i);
      for (int i = 0; i < s.np; ++i) op[i] += g.dx(in.pAt + i);
      *gt += g.dx(in.tAt);
    }
  }
  void guardRates(const Point &z, const PetscScalar *xdot, const std::vector<char> &active, PetscScalar *rates) const override {
    if constexpr (detail::HasGuard<K>::value) {
      In<Dir> in;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Instance &s = inst_[k];
        bool any = false;
        for (int g = 0; g < s.ng; ++g) any = any || active[guard_[s.g0 + g]];
        if (!any) continue;
        in.seedTangent(z.t, true, reads(s, z.x, s.nr), reads(s, xdot, s.nr), params(s, z.p.data(), s.np));
        for (int g = 0; g < s.ng; ++g)
          if (active[guard_[s.g0 + g]]) rates[guard_[s.g0 + g]] = guardOf(k, g, in, z).dx(0);
      }
    }
  }
  void guardHessian(PetscInt k, int kk, const Point &z, const Direction2 &dir, const Output2 &out) const override {
    if constexpr (detail::HasGuard<K>::value) {
      const Instance &s = inst_[k];
      In<Fad2> in;
      seedSecond(in, z, dir, s);
      addSecond(guardOf(k, kk, in, z), s, out);
    }
  }

  // ---- initial state ---------------------------------------------------------------------------
  void initialState(const std::vector<PetscReal> &pv, PetscScalar *u0w) const override {
    eachInitialState<R>([&](In<R> &in, const Instance &s) { return in.seed(0, 0.0, {}, params(s, pv.data(), s.np)), true; },
                        [&](const Instance &s, const R *u0) {
                          const Slots out = writeSlots(s, u0w);
                          for (int w = 0; w < s.nw; ++w) out[w] += u0[w];
                        });
  }
  void initialStateJacobianP(const std::vector<PetscReal> &pv, PetscInt m, PetscScalar *Jw) const override {
    eachInitialStateP(pv, [&](const Instance &s, const FadP *u0) {
      for (int w = 0; w < s.nw; ++w)
        for (int i = 0; i < s.np; ++i) Jw[par_[s.p0 + i] * m + writePos_[s.w0 + w]] += u0[w].dx(i);
    });
  }
  void initialStateJacobianPTranspose(const std::vector<PetscReal> &pv, const std::vector<const PetscScalar *> &w,
                                      const std::vector<PetscScalar *> &out) const override {
    if constexpr (detail::HasInitialStateTranspose<K>::value) {  // the kernel's own product (no ∂u0/∂p formed)
      const size_t nk = w.size();
      std::vector<std::vector<PetscScalar>> wl(nk), ol(nk);
      std::vector<const PetscScalar *> wp(nk);
      std::vector<PetscScalar *> op(nk);
      std::vector<PetscReal> pl;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Instance &s = inst_[k];
        if (!s.np) continue;
        pl.resize(s.np);
        for (int i = 0; i < s.np; ++i) pl[i] = pv[par_[s.p0 + i]];
        for (size_t j = 0; j < nk; ++j) {
          wl[j].resize(s.nw), ol[j].assign(s.np, 0.0);
          for (int r = 0; r < s.nw; ++r) wl[j][r] = w[j][writePos_[s.w0 + r]];
          wp[j] = wl[j].data(), op[j] = ol[j].data();
        }
        k_[k].initialStateTranspose(pl.data(), wp.data(), op.data(), (int)nk);
        for (size_t j = 0; j < nk; ++j)
          for (int i = 0; i < s.np; ++i) out[j][par_[s.p0 + i]] += ol[j][i];
      }
      return;
    }
    eachInitialStateP(pv, [&](const Instance &s, const FadP *u0) {
      for (size_t k = 0; k < w.size(); ++k)
        for (int r = 0; r < s.nw; ++r) {
          const PetscScalar wr = w[k][writePos_[s.w0 + r]];
          for (int i = 0; i < s.np; ++i) out[k][par_[s.p0 + i]] += wr * u0[r].dx(i);
        }
    });
  }
  void initialStateHessian(const std::vector<PetscReal> &pv, const PetscScalar *lam, const PetscScalar *dp,
                           PetscScalar *outp) const override {
    if constexpr (NP != 0) {
      using F2 = typename detail::Fad2N<NP>::type;
      eachInitialState<F2>(
          [&](In<F2> &in, const Instance &s) {
            if (!s.np) return false;
            in.seedSecond(detail::WrtP, 0.0, 0.0, {}, {}, params(s, pv.data(), s.np), params(s, dp, s.np));
            return true;
          },
          [&](const Instance &s, const F2 *u0) {
            F2 L(0.0);
            for (int w = 0; w < s.nw; ++w) L += lam[writePos_[s.w0 + w]] * u0[w];
            const Slots op = paramSlots(s, outp);
            for (int i = 0; i < s.np; ++i) op[i] += detail::second(L, i);
          });
    }
  }

  // ---- resets ----------------------------------------------------------------------------------
  void resetDelta(const EventId &id, const Point &z, PetscScalar *out) const override {
    eachReset<R>(id, z, [&](In<R> &in, const Instance &s) { return seed(in, 0, z, s), true; },
                 [&](const Instance &s, const In<R> &in, const R *up) {
                   const Slots o = writeSlots(s, out);
                   for (int w = 0; w < s.nw; ++w) o[w] += up[w] - in.u[writeInReads_[s.w0 + w]];
                 });
  }
  void resetAction(const EventId &id, const Point &z, const PetscScalar *v, PetscScalar *out) const override {
    // one directional derivative: u seeded with v
    eachReset<Dir>(
        id, z,
        [&](In<Dir> &in, const Instance &s) {
          in.seedTangent(z.t, false, reads(s, z.x, s.nr), reads(s, v, s.nr), params(s, z.p.data(), s.np));
          return true;
        },
        [&](const Instance &s, const In<Dir> &, const Dir *up) {
          const Slots o = writeSlots(s, out);
          for (int w = 0; w < s.nw; ++w) o[w] += up[w].dx(0) - v[readPos_[s.r0 + writeInReads_[s.w0 + w]]];
        });
  }
  void resetTransposeAction(const EventId &id, const Point &z, const PetscScalar *wv, PetscScalar *out) const override {
    eachReset<FadU>(id, z, [&](In<FadU> &in, const Instance &s) { return seed(in, detail::WrtU, z, s), true; },
                    [&](const Instance &s, const In<FadU> &, const FadU *up) {
                      const Slots o = readSlots(s, out);
                      for (int w = 0; w < s.nw; ++w) {
                        const PetscScalar ww = wv[writePos_[s.w0 + w]];
                        for (int i = 0; i < s.nr; ++i) o[i] += up[w].dx(i) * ww;
                        o[writeInReads_[s.w0 + w]] -= ww;  // minus the identity part of δ
                      }
                    });
  }
  void resetJacobianP(const EventId &id, const Point &z, PetscInt m, PetscScalar *Jw) const override {
    if constexpr (NP != 0)
      eachReset<FadP>(id, z, [&](In<FadP> &in, const Instance &s) { return s.np && (seed(in, detail::WrtP, z, s), true); },
                      [&](const Instance &s, const In<FadP> &, const FadP *up) {
                        for (int w = 0; w < s.nw; ++w)
                          for (int i = 0; i < s.np; ++i) Jw[par_[s.p0 + i] * m + writePos_[s.w0 + w]] += up[w].dx(i);
                      });
  }
  void resetTimeDerivative(const EventId &id, const Point &z, PetscScalar *out) const override {
    eachReset<Dir>(id, z, [&](In<Dir> &in, const Instance &s) { return seed(in, detail::WrtT, z, s), true; },
                   [&](const Instance &s, const In<Dir> &, const Dir *up) {
                     const Slots o = writeSlots(s, out);
                     for (int w = 0; w < s.nw; ++w) o[w] += up[w].dx(0);
                   });
  }
  void resetHessian(const EventId &id, const Point &z, const Direction2 &dir, const Output2 &out) const override {
    eachReset<Fad2>(id, z, [&](In<Fad2> &in, const Instance &s) { return seedSecond(in, z, dir, s), true; },
                    [&](const Instance &s, const In<Fad2> &, const Fad2 *up) {
                      Fad2 L(0.0);
                      for (int w = 0; w < s.nw; ++w) L += dir.weight[writePos_[s.w0 + w]] * up[w];
                      addSecond(L, s, out);
                    });
  }

private:
  static constexpr bool static_ = Sz::fixed;
  static bool nonEmpty(int a, int b) { return a && b; }

  // ---- seeding instance s's inputs (u = its reads, p = its params) ------------------------------
  // sizesConstant: use the static sizes (constants for the optimizer) when K has them.
  template <class S> void seed(In<S> &in, unsigned wrt, const Point &z, const Instance &s, bool sizesConstant = false) const {
    const int nr = sizesConstant && static_ ? NR : s.nr, np = sizesConstant && static_ ? NP : s.np;
    in.seed(wrt, z.t, reads(s, z.x, nr), params(s, z.p.data(), np));
  }
  // z = (u, p, t) in the outer Fad, δz (dir) in the inner one.
  void seedSecond(In<Fad2> &in, const Point &z, const Direction2 &dir, const Instance &s) const {
    in.seedSecond(all, z.t, dir.dt, reads(s, z.x, s.nr), reads(s, dir.du, s.nr), params(s, z.p.data(), s.np), params(s, dir.dp, s.np));
  }
  // H δz of L (seeded by seedSecond) accumulated at the instance's positions.
  void addSecond(const Fad2 &L, const Instance &s, const Output2 &out) const {
    detail::addSecond(L, s.nr, s.np, readSlots(s, out.u), paramSlots(s, out.p), out.t);
  }

  // ---- the evaluate loops, one per kernel template ---------------------------------------------
  // For every instance for which seed(in, s) returns true: f = residual<S>(in) (f arriving
  // zeroed), then use(s, in, f).
  template <class S, class Seed, class Use> void eachResidual(const Point &z, Seed &&seed, Use &&use) const {
    if constexpr (detail::HasResidual<K>::value) {
      In<S> in;
      detail::Buf<S, NW> f;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Instance &s = inst_[k];
        if (!seed(in, s)) continue;
        const int nw = static_ ? NW : s.nw;
        f.resize(nw);
        for (int w = 0; w < nw; ++w) f[w] = 0.0;
        k_[k].template residual<S>(in.t, in.u.data(), in.p.data(), z.d, f.data());
        use(s, in, f.data());
      }
    }
  }
  // ∂f/∂p of every instance with parameters and writes (p seeded).
  template <class Use> void eachResidualP(const Point &z, Use &&use) const {
    eachResidual<FadP>(
        z, [&](In<FadP> &in, const Instance &s) { return nonEmpty(s.np, s.nw) && (seed(in, detail::WrtP, z, s, true), true); },
        [&](const Instance &s, const In<FadP> &, const FadP *f) { use(s, f); });
  }
  // For every instance for which seed(in, s) returns true: u⁺ = reset<S>(in), u⁺ preset to u⁻
  // at the rows the instance writes, then use(s, in, u⁺).
  template <class S, class Seed, class Use> void eachReset(const EventId &id, const Point &z, Seed &&seed, Use &&use) const {
    if constexpr (detail::HasReset<K>::value) {
      In<S> in;
      detail::Buf<S, NW> up;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Instance &s = inst_[k];
        if (!seed(in, s)) continue;
        up.resize(s.nw);
        for (int w = 0; w < s.nw; ++w) up[w] = in.u[writeInReads_[s.w0 + w]];
        k_[k].template reset<S>(id, in.t, in.u.data(), in.p.data(), z.d, up.data());
        use(s, in, up.data());
      }
    }
  }
  // For every instance for which seed(in, s) returns true: u0 = initialState<S>(in.p) (u0
  // arriving zeroed), then use(s, u0).
  template <class S, class Seed, class Use> void eachInitialState(Seed &&seed, Use &&use) const {
    if constexpr (detail::HasInitialState<K>::value) {
      In<S> in;
      detail::Buf<S, NW> u0;
      for (size_t k = 0; k < k_.size(); ++k) {
        const Instance &s = inst_[k];
        if (!seed(in, s)) continue;
        u0.resize(s.nw);
        for (int w = 0; w < s.nw; ++w) u0[w] = 0.0;
        k_[k].template initialState<S>(in.p.data(), u0.data());
        use(s, u0.data());
      }
    }
  }
  // ∂u0/∂p of every instance with parameters (p seeded).
  template <class Use> void eachInitialStateP(const std::vector<PetscReal> &pv, Use &&use) const {
    if constexpr (NP != 0)
      eachInitialState<FadP>(
          [&](In<FadP> &in, const Instance &s) { return s.np && (in.seed(detail::WrtP, 0.0, {}, params(s, pv.data(), s.np)), true); },
          [&](const Instance &s, const FadP *u0) { use(s, u0); });
  }
  // Guard g of instance k at the seeded inputs.
  template <class S> S guardOf(size_t k, int g, const In<S> &in, const Point &z) const {
    return S(k_[k].template guard<S>(g, in.t, in.u.data(), in.p.data(), z.d));
  }

  std::vector<K> k_;
};

// ---------------------------------------------------------------------------------------------
// Cost kernels: scalar terms ψ, r, g_i of (t, u[reads], p[params]); the cost is their sum.
enum class CostPart { Terminal, Integrand, Measurement };

class CostGroupBase {
public:
  virtual ~CostGroupBase() = default;
  // Adds one instance (indices already validated by the cost). readPos: IndexSpace.
  void addInstance(const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &params);

  virtual bool has(CostPart part) const = 0;
  virtual PetscScalar value(CostPart part, PetscInt i, const Point &z) const = 0;
  // gw[readPos] += ∂/∂u, gp += ∂/∂p.
  virtual void gradient(CostPart part, PetscInt i, const Point &z, PetscScalar *gw, PetscScalar *gp) const = 0;
  // Σ ∂/∂t over the instances.
  virtual PetscScalar timeDerivative(CostPart part, PetscInt i, const Point &z) const = 0;
  virtual void hessian(CostPart part, PetscInt i, const Point &z, const Direction2 &dir, const Output2 &out) const = 0;

protected:
  Values reads(const Instance &s, const PetscScalar *x) const { return {x, readPos_.data() + s.r0, s.nr}; }
  Values params(const Instance &s, const PetscReal *p) const { return {p, par_.data() + s.p0, s.np}; }
  Slots readSlots(const Instance &s, PetscScalar *base) const { return {base, readPos_.data() + s.r0}; }
  Slots paramSlots(const Instance &s, PetscScalar *base) const { return {base, par_.data() + s.p0}; }

  std::vector<Instance> inst_;
  std::vector<PetscInt> readPos_, par_;
};

template <class K> class CostGroup final : public CostGroupBase {
  using Sz = detail::Sizes<K>;
  using FadZ = typename detail::FadN<Sz::all>::type;
  using Fad2 = typename detail::Fad2N<Sz::all>::type;
  template <class S> using In = detail::Inputs<S, Sz::R, Sz::P>;
  static constexpr unsigned all = detail::WrtU | detail::WrtP | detail::WrtT;

public:
  static_assert(detail::HasTerminal<K>::value || detail::HasIntegrand<K>::value || detail::HasMeasurement<K>::value,
                "a cost kernel needs at least one of terminal<S>, integrand<S>, measurement<S>");
  static_assert(detail::HasTerminal<K>::value || !detail::DeclaresTerminal<K>,
                "cost kernel: its member 'terminal' does not match " HYBRIDSENS_AD_TERMINAL_SIGNATURE);
  static_assert(detail::HasIntegrand<K>::value || !detail::DeclaresIntegrand<K>,
                "cost kernel: its member 'integrand' does not match " HYBRIDSENS_AD_INTEGRAND_SIGNATURE);
  static_assert(detail::HasMeasurement<K>::value || !detail::DeclaresMeasurement<K>,
                "cost kernel: its member 'measurement' does not match " HYBRIDSENS_AD_MEASUREMENT_SIGNATURE);

  void add(const K &k, const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &params) {
    addInstance(readPos, params);
    k_.push_back(k);
  }

  bool has(CostPart part) const override {
    switch (part) {
    case CostPart::Terminal: return detail::HasTerminal<K>::value;
    case CostPart::Integrand: return detail::HasIntegrand<K>::value;
    default: return detail::HasMeasurement<K>::value;
    }
  }

  PetscScalar value(CostPart part, PetscInt i, const Point &z) const override {
    PetscScalar sum = 0;
    each<R>(part, i, z, [&](In<R> &in, const Instance &s) { in.seed(0, z.t, reads(s, z.x), params(s, z.p.data())); },
            [&](const Instance &, const R &v) { sum += v; });
    return sum;
  }
  void gradient(CostPart part, PetscInt i, const Point &z, PetscScalar *gw, PetscScalar *gp) const override {
    each<FadZ>(part, i, z, [&](In<FadZ> &in, const Instance &s) { in.seed(all, z.t, reads(s, z.x), params(s, z.p.data())); },
               [&](const Instance &s, const FadZ &v) {
                 const Slots ou = readSlots(s, gw), op = paramSlots(s, gp);
                 for (int j = 0; j < s.nr; ++j) ou[j] += v.dx(j);
                 for (int j = 0; j < s.np; ++j) op[j] += v.dx(s.nr + j);
               });
  }
  PetscScalar timeDerivative(CostPart part, PetscInt i, const Point &z) const override {
    PetscScalar sum = 0;
    each<detail::Dir>(
        part, i, z, [&](In<detail::Dir> &in, const Instance &s) { in.seed(detail::WrtT, z.t, reads(s, z.x), params(s, z.p.data())); },
        [&](const Instance &, const detail::Dir &v) { sum += v.dx(0); });
    return sum;
  }
  void hessian(CostPart part, PetscInt i, const Point &z, const Direction2 &dir, const Output2 &out) const override {
    each<Fad2>(
        part, i, z,
        [&](In<Fad2> &in, const Instance &s) {
          in.seedSecond(all, z.t, dir.dt, reads(s, z.x), reads(s, dir.du), params(s, z.p.data()), params(s, dir.dp));
        },
        [&](const Instance &s, const Fad2 &L) { detail::addSecond(L, s.nr, s.np, readSlots(s, out.u), paramSlots(s, out.p), out.t); });
  }

private:
  // For every instance: seed(in, s), v = the requested part at in, use(s, v).
  template <class S, class Seed, class Use> void each(CostPart part, PetscInt i, const Point &z, Seed &&seed, Use &&use) const {
    In<S> in;
    for (size_t k = 0; k < k_.size(); ++k) {
      const Instance &s = inst_[k];
      seed(in, s);
      use(s, eval<S>(k_[k], part, i, in.t, in.u.data(), in.p.data(), z.d));
    }
  }
  // The requested part of kernel k (a part the kernel type lacks contributes nothing).
  template <class S> static S eval(const K &k, CostPart part, PetscInt i, const S &t, const S *u, const S *p, const DiscreteState &d) {
    switch (part) {
    case CostPart::Terminal:
      if constexpr (detail::HasTerminal<K>::value) return S(k.template terminal<S>(t, u, p, d));
      break;
    case CostPart::Integrand:
      if constexpr (detail::HasIntegrand<K>::value) return S(k.template integrand<S>(t, u, p, d));
      break;
    case CostPart::Measurement:
      if constexpr (detail::HasMeasurement<K>::value) return S(k.template measurement<S>(i, t, u, p, d));
      break;
    }
    return S(0.0);
  }

  std::vector<K> k_;
};

} // namespace local
} // namespace ad
} // namespace hybridsens
