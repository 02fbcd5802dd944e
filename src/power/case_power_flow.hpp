// The AC power flow of a case's start (CaseGrid::PowerFlowData), solved sparsely in any scalar
// type: Newton in double with the Jacobian from forward AD bus by bus (sparse_lu.hpp), then, for
// a Sacado type, the derivatives by the implicit function theorem, dx = −F_x⁻¹ F_p ṗ, one solve
// with the factors at the solution per derivative direction. For a nested type (second order)
// the same recursively: the inner level's solution, then F_p ṗ and F_x in the inner type, and
// the linear solve differentiated forward (y' = F_x⁻¹ (r' − F_x' y)) — exact to round-off, where
// the former dense start repeated Newton steps in the AD type at O(n³) per derivative direction.
#pragma once

#include "sparse_lu.hpp"

#include <hybridsens/power/admittance.hpp>
#include <hybridsens/power/case_grid.hpp>

#include <Sacado_No_Kokkos.hpp>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

// Unknowns x: θ of every non-slack bus (bus order), then |V| of every PQ bus (bus order).
// Equations: P_i(V) − P_i^spec for every non-slack bus, then Q_i(V) − Q_i^spec for every PQ bus,
// with S_i = V_i conj(Σ_j Y_ij V_j); equation k belongs to the bus whose unknown k is, so F_x has
// its diagonal. spec = (|V|, θ of the slack; P of every generator at a PV bus (generator order);
// |V| of each PV bus (bus order)); a PV bus's P is the sum of its generators' P.
struct CaseGrid::PowerFlowData {
  PetscInt nB = 0, slack = -1, nUnknowns = 0;
  std::vector<PetscInt> pvBus;                 // PV buses (bus order)
  std::vector<PetscInt> pvGen;                 // generators at PV buses (generator order): spec 2 + k
  std::vector<std::vector<PetscInt>> pSpecsAt; // per bus: the spec positions of its generators' P
  std::vector<PetscInt> thIdx, vmIdx;          // per bus: its unknown θ / |V| in x, or -1
  std::vector<PetscInt> pvOf;                  // per bus: its position in pvBus, or -1
  std::vector<AdmittanceEntry> Y;
  std::vector<PetscReal> Pd, Qd, guessVm, guessTh;
  // Set by finishPattern(): each bus's row of Y (file order), the unknowns its P and Q depend
  // on (sorted), and the CSR pattern of F_x (the rows of bus b have the columns unknownsOf[b]).
  std::vector<std::vector<AdmittanceEntry>> rowY;
  std::vector<std::vector<PetscInt>> unknownsOf;
  std::vector<PetscInt> rowStart, cols;

  PetscInt numSpecs() const { return 2 + (PetscInt)pvGen.size() + (PetscInt)pvBus.size(); }
  void finishPattern();

  // |V| and θ of bus b from the unknowns and spec.
  template <class T> T vm(PetscInt b, const T *x, const T *spec) const {
    if (b == slack) return spec[0];
    if (pvOf[b] >= 0) return spec[2 + (PetscInt)pvGen.size() + pvOf[b]];
    return x[vmIdx[b]];
  }
  template <class T> T th(PetscInt b, const T *x, const T *spec) const { return b == slack ? spec[1] : x[thIdx[b]]; }
  template <class T> void voltages(const T *x, const T *spec, std::vector<T> &Vm, std::vector<T> &th) const {
    Vm.resize(nB), th.resize(nB);
    for (PetscInt b = 0; b < nB; ++b) Vm[b] = vm(b, x, spec), th[b] = this->th(b, x, spec);
  }
  // The injection P + jQ at bus b; voltage(j, Vm, θ) gives bus j's.
  template <class A, class Voltage> void injection(PetscInt b, const Voltage &voltage, A &P, A &Q) const {
    using std::cos;
    using std::sin;
    A Ir = 0.0, Ii = 0.0, m, a;
    for (const AdmittanceEntry &y : rowY[b]) {
      voltage((PetscInt)y.j, m, a);
      const A Vr = m * cos(a), Vi = m * sin(a);
      const PetscReal G = y.y.real(), B = y.y.imag();
      Ir += G * Vr - B * Vi, Ii += G * Vi + B * Vr;
    }
    voltage(b, m, a);
    const A Vr = m * cos(a), Vi = m * sin(a);
    P = Vr * Ir + Vi * Ii, Q = Vi * Ir - Vr * Ii;
  }
  // The rows of bus b's equations from its injection.
  template <class A, class T> void busMismatch(PetscInt b, const A &P, const A &Q, const T *spec, A *F) const {
    if (thIdx[b] >= 0) {
      T Pg = 0.0;
      for (PetscInt k : pSpecsAt[b]) Pg += spec[k];
      F[thIdx[b]] = P - (Pg - Pd[b]);
    }
    if (vmIdx[b] >= 0) F[vmIdx[b]] = Q + Qd[b];
  }
  template <class T> void mismatch(const T *x, const T *spec, T *F) const {
    const auto voltage = [&](PetscInt j, T &m, T &a) { m = vm(j, x, spec), a = th(j, x, spec); };
    for (PetscInt b = 0; b < nB; ++b) {
      if (b == slack) continue;
      T P, Q;
      injection(b, voltage, P, Q);
      busMismatch(b, P, Q, spec, F);
    }
  }
  // F and F_x (CSR values) at (x, spec), F_x by forward AD over the unknowns each bus reads.
  template <class T> void jacobian(const T *x, const T *spec, T *F, T *J) const {
    using A = Sacado::Fad::DFad<T>;
    std::vector<A> Fb(nUnknowns);
    for (PetscInt b = 0; b < nB; ++b) {
      if (b == slack) continue;
      const std::vector<PetscInt> &u = unknownsOf[b];
      const int nu = (int)u.size();
      const auto seeded = [&](PetscInt k, const T &v) -> A {
        if (k < 0) return A(v);
        return A(nu, (int)(std::lower_bound(u.begin(), u.end(), k) - u.begin()), v);
      };
      const auto voltage = [&](PetscInt j, A &m, A &a) {
        m = seeded(vmIdx[j], vm(j, x, spec));
        a = seeded(thIdx[j], th(j, x, spec));
      };
      A P, Q;
      injection(b, voltage, P, Q);
      busMismatch(b, P, Q, spec, Fb.data());
      for (PetscInt r : {thIdx[b], vmIdx[b]}) {
        if (r < 0) continue;
        F[r] = Fb[r].val();
        for (int k = 0; k < nu; ++k) J[rowStart[r] + k] = Fb[r].size() ? Fb[r].fastAccessDx(k) : T(0.0);
      }
    }
  }

  template <class S> struct Solution {
    std::vector<S> Vm, th;  // every bus's voltage
    bool converged = false;
    PetscReal norm = 0;      // ‖F‖∞ before the last Newton step
    PetscErrorCode error = 0;  // a PETSc error of the sparse LU (reported where it occurred)
  };
  // Newton in double from the RAW voltages until one step after ‖F‖∞ < 1e-12 (at most 30 steps);
  // lu then holds the factors of F_x at the solution.
  PetscErrorCode newton(const PetscReal *spec, std::vector<PetscReal> &x, SparseLU &lu, PetscReal *norm, bool *converged) const;

  // x in S: the double solution with the derivatives the spec's carry (see the file comment).
  template <class S> PetscErrorCode lift(const S *spec, const std::vector<PetscReal> &xd, const SparseLU &lu, std::vector<S> &x) const {
    PetscFunctionBeginUser;
    if constexpr (std::is_same_v<S, PetscReal>) x = xd;
    else {
      using T = typename S::value_type;
      const PetscInt n = nUnknowns, ns = numSpecs();
      std::vector<T> specT(ns), xT;
      int nd = 0;
      for (PetscInt k = 0; k < ns; ++k) specT[k] = spec[k].val(), nd = std::max(nd, (int)spec[k].size());
      PetscCall(lift<T>(specT.data(), xd, lu, xT));
      x.assign(n, S(0.0));
      for (PetscInt i = 0; i < n; ++i) x[i] = nd ? S(nd, xT[i]) : S(xT[i]);
      if (!nd) PetscFunctionReturn(0);
      // F_p ṗ: F at the passive solution with the spec's derivatives; F_x in T there.
      std::vector<S> xp(xT.begin(), xT.end()), F(n);
      mismatch<S>(xp.data(), spec, F.data());
      std::vector<T> FT(n), J(cols.size()), r(n), y(n);
      jacobian<T>(xT.data(), specT.data(), FT.data(), J.data());
      for (int j = 0; j < nd; ++j) {
        for (PetscInt i = 0; i < n; ++i) r[i] = F[i].size() ? F[i].fastAccessDx(j) : T(0.0);
        PetscCall(linearSolve<T>(J, r, lu, y));
        for (PetscInt i = 0; i < n; ++i) x[i].fastAccessDx(j) = -y[i];
      }
    }
    PetscFunctionReturn(0);
  }
  // y = J⁻¹ r in T, J's double part factored in lu: y = J⁻¹ r, y' = J⁻¹ (r' − J' y) recursively.
  template <class T> PetscErrorCode linearSolve(const std::vector<T> &J, const std::vector<T> &r, const SparseLU &lu, std::vector<T> &y) const {
    PetscFunctionBeginUser;
    y.resize(r.size());
    if constexpr (std::is_same_v<T, PetscReal>) PetscCall(lu.solve(r.data(), y.data()));
    else {
      using U = typename T::value_type;
      const PetscInt n = nUnknowns;
      int nd = 0;
      for (const T &v : J) nd = std::max(nd, (int)v.size());
      for (const T &v : r) nd = std::max(nd, (int)v.size());
      std::vector<U> Jv(J.size()), rv(n), yv, t(n), yk;
      for (size_t c = 0; c < J.size(); ++c) Jv[c] = J[c].val();
      for (PetscInt i = 0; i < n; ++i) rv[i] = r[i].val();
      PetscCall(linearSolve<U>(Jv, rv, lu, yv));
      for (PetscInt i = 0; i < n; ++i) y[i] = nd ? T(nd, yv[i]) : T(yv[i]);
      for (int k = 0; k < nd; ++k) {
        for (PetscInt i = 0; i < n; ++i) {
          t[i] = r[i].size() ? r[i].fastAccessDx(k) : U(0.0);
          for (PetscInt c = rowStart[i]; c < rowStart[i + 1]; ++c)
            if (J[c].size()) t[i] -= J[c].fastAccessDx(k) * yv[cols[c]];
        }
        PetscCall(linearSolve<U>(Jv, t, lu, yk));
        for (PetscInt i = 0; i < n; ++i) y[i].fastAccessDx(k) = yk[i];
      }
    }
    PetscFunctionReturn(0);
  }

  // The power flow at spec: the bus voltages in S (with the derivatives spec carries).
  template <class S> Solution<S> solve(const S *spec) const {
    Solution<S> s;
    const PetscInt ns = numSpecs();
    std::vector<PetscReal> sd(ns), xd;
    for (PetscInt k = 0; k < ns; ++k) sd[k] = Sacado::ScalarValue<S>::eval(spec[k]);
    SparseLU lu(rowStart, cols);
    s.error = newton(sd.data(), xd, lu, &s.norm, &s.converged);
    if (s.error || !s.converged) return s;
    std::vector<S> x;
    s.error = lift<S>(spec, xd, lu, x);
    if (s.error) return s;
    voltages<S>(x.data(), spec, s.Vm, s.th);
    return s;
  }
  // ---- transposed products (the adjoint's (∂u0/∂p)ᵀ w) -------------------------------------
  // ∂(P_b, Q_b)/∂(|V|_j, θ_j) of the injection at bus b for the buses it reads (b and its row of
  // Y, sorted): dP, dQ hold (∂/∂|V|_j, ∂/∂θ_j) per bus.
  void injectionGradient(PetscInt b, const std::vector<PetscReal> &Vm, const std::vector<PetscReal> &th, std::vector<PetscInt> &buses,
                         std::vector<PetscReal> &dP, std::vector<PetscReal> &dQ) const;
  // Adds to out[k][0, numSpecs()) the spec part of barVm[k]ᵀ d|V|/dspec + barTh[k]ᵀ dθ/dspec at the
  // solution x (lu: F_x there): the direct part where a voltage is a spec, and through the
  // unknowns by one transposed solve per k, λ = F_x⁻ᵀ x̄, spec̄ −= F_specᵀ λ.
  PetscErrorCode voltagesTranspose(const PetscReal *spec, const std::vector<PetscReal> &x, const SparseLU &lu,
                                   const std::vector<std::vector<PetscReal>> &barVm, const std::vector<std::vector<PetscReal>> &barTh,
                                   PetscScalar *const *out) const;

  // The generation at bus b (injection plus load) on a solution.
  template <class S> void generation(const Solution<S> &s, PetscInt b, S &P, S &Q) const {
    injection(b, [&](PetscInt j, S &m, S &a) { m = s.Vm[j], a = s.th[j]; }, P, Q);
    P += Pd[b], Q += Qd[b];
  }
};

} // namespace grid
} // namespace power
} // namespace hybridsens
