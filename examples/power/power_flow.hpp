// The 9-bus AC power flow (Newton), written for any
// scalar type so that Sacado differentiates them (∂u0/∂p of the power-flow start).
#pragma once

#include "wecc9_layout.hpp"

#include <hybridsens/power/newton.hpp>

#include <type_traits>

namespace wecc9 {
using namespace hybridsens;

// ---- AC power flow (initialization mode power_flow) -----------------------------------------
// Bus 1 is the slack (|V1|, θ1 given), buses 2 and 3 are PV (P, |V| given), the others PQ with
// the loads' (P, Q) drawn at their power-flow voltage. Unknowns x = (θ2..θ9, |V4|..|V9|);
// mismatch F = (P_i(V) − P_i^spec, i = 2..9; Q_i(V) − Q_i^spec, i = 4..9) with the injections
// S_i = V_i conj(Σ_j Y_ij V_j) from the same Ybus data as the network kernels.
// spec = (|V1|, θ1, P2, P3, |V2|, |V3|).
constexpr int pfUnknowns = 14, pfSpecs = 6;
template <class T> struct BusVoltages {
  T Vm[areaBuses], th[areaBuses];
};
template <class T> BusVoltages<T> pfVoltages(const T *x, const T *spec) {
  BusVoltages<T> v;
  v.Vm[0] = spec[0], v.th[0] = spec[1], v.Vm[1] = spec[4], v.Vm[2] = spec[5];
  for (PetscInt b = 1; b < areaBuses; ++b) v.th[b] = x[b - 1];
  for (PetscInt b = 3; b < areaBuses; ++b) v.Vm[b] = x[8 + b - 3];
  return v;
}
// Complex power injected at every bus.
template <class T> void pfInjections(const BusVoltages<T> &v, T *P, T *Q) {
  using std::cos;
  using std::sin;
  T Vr[areaBuses], Vi[areaBuses], Ir[areaBuses], Ii[areaBuses];
  for (PetscInt b = 0; b < areaBuses; ++b) Vr[b] = v.Vm[b] * cos(v.th[b]), Vi[b] = v.Vm[b] * sin(v.th[b]), Ir[b] = 0.0, Ii[b] = 0.0;
  for (const YEntry &y : Ybus) Ir[y.i] += y.G * Vr[y.j] - y.B * Vi[y.j], Ii[y.i] += y.G * Vi[y.j] + y.B * Vr[y.j];
  for (PetscInt b = 0; b < areaBuses; ++b) P[b] = Vr[b] * Ir[b] + Vi[b] * Ii[b], Q[b] = Vi[b] * Ir[b] - Vr[b] * Ii[b];
}
template <class T> void pfMismatch(const T *x, const T *spec, T *F) {
  T P[areaBuses], Q[areaBuses];
  pfInjections<T>(pfVoltages<T>(x, spec), P, Q);
  PetscReal Pd[areaBuses] = {0}, Qd[areaBuses] = {0};
  for (PetscInt l = 0; l < 3; ++l) Pd[loadBus[l]] = loadP[l], Qd[loadBus[l]] = loadQ[l];
  F[0] = P[1] - spec[2], F[1] = P[2] - spec[3];
  for (PetscInt b = 3; b < areaBuses; ++b) F[b - 1] = P[b] + Pd[b], F[8 + b - 3] = Q[b] + Qd[b];
}
// One Newton step of the 9-bus power flow (hybridsens::power::newtonStep). Returns ‖F(x)‖∞ before the step.
template <class T> PetscReal pfNewtonStep(T *x, const T *spec) {
  return power::newtonStep<T>(pfUnknowns, x, [spec](const auto *xf, auto *F) {
    using J = std::remove_const_t<std::remove_pointer_t<decltype(xf)>>;
    J sf[pfSpecs];
    for (int k = 0; k < pfSpecs; ++k) sf[k] = J(spec[k]);
    pfMismatch<J>(xf, sf, F);
  });
}

// The power flow for spec, with the generators' (P, Q). Newton in double from ex9bus' V0 to
// round-off; then two Newton steps in S from that solution x*: the first one,
// x* − F_x⁻¹ F(x*, spec), carries exactly the implicit derivative dx/dspec = −F_x⁻¹ F_spec (F(x*)
// = 0 to round-off), the second one makes second derivatives exact too (the Newton map has zero
// derivative in x at the solution, so each step squares the error of the Taylor coefficients).
template <class S> struct PowerFlow {
  BusVoltages<S> v;
  S P[areaGens], Q[areaGens];
  bool converged = false;
  PetscReal mismatch = 0;  // ‖F‖∞ at the double solution
};
template <class S> PowerFlow<S> solvePowerFlow(const S *spec) {
  PowerFlow<S> pf;
  PetscReal xd[pfUnknowns], sd[pfSpecs];
  for (int k = 0; k < pfSpecs; ++k) sd[k] = Sacado::ScalarValue<S>::eval(spec[k]);
  for (PetscInt b = 1; b < areaBuses; ++b) xd[b - 1] = std::atan2(V0[2 * b + 1], V0[2 * b]);
  for (PetscInt b = 3; b < areaBuses; ++b) xd[8 + b - 3] = std::hypot(V0[2 * b], V0[2 * b + 1]);
  PetscReal norm = 0;
  for (int it = 0; it < 30; ++it) {  // stop one step after the mismatch reached round-off
    const bool small = (norm = pfNewtonStep<PetscReal>(xd, sd)) < 1e-12;
    if (small && it > 0) {
      pf.converged = true;
      break;
    }
  }
  S x[pfUnknowns];
  for (int i = 0; i < pfUnknowns; ++i) x[i] = xd[i];
  pf.mismatch = norm;
  if (!pf.converged) return pf;
  pfNewtonStep<S>(x, spec);
  pfNewtonStep<S>(x, spec);
  pf.v = pfVoltages<S>(x, spec);
  S P[areaBuses], Q[areaBuses];
  pfInjections<S>(pf.v, P, Q);
  for (PetscInt g = 0; g < areaGens; ++g) pf.P[g] = P[genBus[g]], pf.Q[g] = Q[genBus[g]];
  return pf;
}

} // namespace wecc9
