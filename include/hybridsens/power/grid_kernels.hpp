// Dynamic grid components as local AD kernels (hybridsens/ad_local.hpp), written once as
// templates so that Sacado gives every derivative: two-axis synchronous machine, IEEE type-1
// exciter and TGOV1 governor with their non-windup limiter, bus admittance entries,
// constant-impedance loads, a fault shunt, the generator steady state and initial-state kernels,
// and the frequency-violation integrand H_i of Zhang et al. (2017), eq. 30. Used by the case
// builder (case_grid.hpp, the hybridsens-grid command) and by examples/wecc9.
#pragma once

#include <hybridsens/ad_local.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscsys.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace hybridsens {
namespace power {
namespace grid {

constexpr PetscReal omegaS = 2 * PETSC_PI * 60;  // synchronous speed (rad/s)

// Machine and exciter constants of one generator (Sauer & Pai; ex9bus).
struct GenData {
  PetscReal H, Rs, Xd, Xdp, Xq, Xqp, Td0p, Tq0p;
  PetscReal TA, KE, TE, KF, TF, k1, k2, VRmin, VRmax;
  PetscReal M() const { return 2 * H / omegaS; }
  // Damping D (ω − ω_s) in the swing equation: D = dampingPerM · M (the examples: 0.1 M; a DYR
  // record's D in per unit power per per-unit speed on the system base gives D / (2 H)).
  PetscReal dampingPerM = 0.1;
  PetscReal D() const { return dampingPerM * M(); }
};
// Guards of a non-windup limiter, in this order: hit max, hit min, leave max, leave min.
enum GuardKind : PetscInt { HitMax = 0, HitMin = 1, LeaveMax = 2, LeaveMin = 3 };

// The model-side rules of a limiter with flag 0 (free), +1 (at max), −1 (at min), shared by the
// grid models: the name and direction of its guard of this kind, whether that guard is active
// for the flag, the flag after it fired, and the release after a network jump (a limiter at a
// bound whose free rate now points back into the band: no crossing would ever report it).
inline GuardInfo limiterGuardInfo(const std::string &limiter, PetscInt kind) {
  switch (kind) {
  case HitMax: return {limiter + "_hits_max", Direction::Rising};
  case HitMin: return {limiter + "_hits_min", Direction::Falling};
  case LeaveMax: return {limiter + "_leaves_max", Direction::Falling};
  default: return {limiter + "_leaves_min", Direction::Rising};
  }
}
inline bool limiterGuardActive(PetscInt kind, PetscInt flag) {
  switch (kind) {
  case HitMax:
  case HitMin: return flag == 0;
  case LeaveMax: return flag == 1;
  default: return flag == -1;
  }
}
inline PetscInt limiterFlagAfter(PetscInt kind) { return kind == HitMax ? 1 : kind == HitMin ? -1 : 0; }
inline void releaseIfReversed(PetscInt &flag, PetscScalar freeRate) {
  if ((flag == 1 && freeRate < 0) || (flag == -1 && freeRate > 0)) flag = 0;
}

// Steady state of a generator from its dispatch (P, Q) and terminal voltage (Vr, Vi): the
// closed form ex9bus uses for its initial state; differentiated through P and Q.
template <class S> struct SteadyState {
  S Eqp, Edp, delta, Id, Iq, Efd, RF, VR, Vm;
};
template <class S> SteadyState<S> steadyState(const GenData &c, const S &P, const S &Q, const S &Vm, const S &angle) {
  using std::atan2;
  using std::cos;
  using std::exp;
  using std::sin;
  using std::sqrt;
  SteadyState<S> s;
  const S Vr = Vm * cos(angle), Vi = Vm * sin(angle), Vm2 = Vm * Vm;
  const S IGr = (Vr * P + Vi * Q) / Vm2, IGi = (Vi * P - Vr * Q) / Vm2;  // generator current (network frame)
  s.delta = atan2(Vi + c.Xq * IGr, Vr - c.Xq * IGi);                      // rotor angle: q axis along E = V + jXq I
  const S theta = PETSC_PI / 2.0 - s.delta;
  s.Id = IGr * cos(theta) - IGi * sin(theta);
  s.Iq = IGr * sin(theta) + IGi * cos(theta);
  const S Vd = Vr * cos(theta) - Vi * sin(theta), Vq = Vr * sin(theta) + Vi * cos(theta);
  s.Edp = Vd + c.Rs * s.Id - c.Xqp * s.Iq;
  s.Eqp = Vq + c.Rs * s.Iq + c.Xdp * s.Id;
  s.Efd = s.Eqp + (c.Xd - c.Xdp) * s.Id;
  s.VR = c.KE * s.Efd + c.k1 * exp(c.k2 * s.Efd);
  s.RF = c.KF * s.Efd / c.TF;
  s.Vm = Vm;
  return s;
}

// ---- kernels -------------------------------------------------------------------------------
// Machine g: reads (E'q, E'd, δ, ω, Id, Iq, Efd, Vr, Vi, Pm), writes (E'q, E'd, δ, ω, Id, Iq rows
// and the two current-balance rows of its bus). TM = Pm (a constant state) unless a governor
// supplies the mechanical power (governed: the Governor kernel adds TM/M to ω's row).
struct Machine {
  static constexpr int numReads = 10, numWrites = 8, numParams = 0;
  GenData c;
  bool governed;
  // Classical machine (PSS/E GENCLS): constant E' behind X'd (c with Xd = Xq = X'q = X'd): E'q,
  // E'd are constant states (rows 0, 1 stay 0), no exciter.
  bool classical = false;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    using std::cos;
    using std::sin;
    const S &Eqp = u[0], &Edp = u[1], &delta = u[2], &w = u[3], &Id = u[4], &Iq = u[5], &Efd = u[6], &Vr = u[7], &Vi = u[8];
    const S TM = governed ? S(0.0) : u[9];
    if (!classical) {
      f[0] = (-Eqp - (c.Xd - c.Xdp) * Id + Efd) / c.Td0p;
      f[1] = (-Edp + (c.Xq - c.Xqp) * Iq) / c.Tq0p;
    }
    f[2] = w - omegaS;
    f[3] = (TM - Edp * Id - Eqp * Iq - (c.Xqp - c.Xdp) * Id * Iq - c.D() * (w - omegaS)) / c.M();
    const S Vd = Vr * sin(delta) - Vi * cos(delta), Vq = Vr * cos(delta) + Vi * sin(delta);
    const PetscReal det = c.Rs * c.Rs + c.Xdp * c.Xqp;  // stator: (Id, Iq) = Z⁻¹ (E' − V) in the dq frame
    f[4] = (c.Rs * (Vd - Edp) + c.Xqp * (Vq - Eqp)) / det + Id;
    f[5] = (-c.Xdp * (Vd - Edp) + c.Rs * (Vq - Eqp)) / det + Iq;
    const S IGr = Id * sin(delta) + Iq * cos(delta), IGi = -Id * cos(delta) + Iq * sin(delta);
    f[6] = -IGi;  // injection leaves the balance Y V − I_gen + I_load = 0
    f[7] = -IGr;
  }
};

// Non-windup limiter on a state x ∈ [lo, hi] with free rate r (the exciters' VR, the governors'
// valve): x' = r while free (flag 0), x' = 0 while held at a limit (flag ±1; the hit is located
// as a state event, so x sits on the limit exactly). Guards: hit max x − hi (rising) and hit min
// x − lo (falling) while free; leave max when r falls through 0 while at max, leave min when r
// rises through 0 while at min.
struct NonWindupLimiter {
  PetscReal lo, hi;
  PetscInt flag;  // index of the limiter's flag in d
  template <class S> void rate(const DiscreteState &d, const S &r, S &f) const {
    if (d[flag] == 0) f = r;
  }
  template <class S> S guard(PetscInt k, const S &x, const S &r) const {
    switch (k) {
    case HitMax: return x - hi;
    case HitMin: return x - lo;
    default: return r;
    }
  }
};

// The free right-hand side of VR (what the limiter holds at zero while active).
template <class S> S freeVRRate(const GenData &c, const S &Efd, const S &RF, const S &VR, const S &Vm, const S &Vref, const S &KA) {
  return (-VR + KA * RF - KA * c.KF * Efd / c.TF + KA * (Vref - Vm)) / c.TA;
}

// Exciter g: reads (Efd, RF, VR, Vr, Vi, Vref, KA), writes (Efd, RF, VR, Vref, KA), guards
// 4g..4g+3 (its limiter's).
struct Exciter {
  static constexpr int numReads = 7, numWrites = 5, numParams = 0;
  GenData c;
  NonWindupLimiter lim;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    using std::exp;
    using std::sqrt;
    const S &Efd = u[0], &RF = u[1], &VR = u[2], &Vr = u[3], &Vi = u[4], &Vref = u[5], &KA = u[6];
    f[0] = (-c.KE * Efd - c.k1 * exp(c.k2 * Efd) + VR) / c.TE;
    f[1] = (-RF + c.KF * Efd / c.TF) / c.TF;
    lim.rate(d, freeVRRate<S>(c, Efd, RF, VR, sqrt(Vr * Vr + Vi * Vi), Vref, KA), f[2]);
    // rows Vref, KA: constant states (f = 0); VR at a limit: VR' = 0.
  }
  template <class S> S guard(PetscInt k, S, const S *u, const S *, const DiscreteState &) const {
    using std::sqrt;
    return lim.guard<S>(k, u[2], freeVRRate<S>(c, u[0], u[1], u[2], sqrt(u[3] * u[3] + u[4] * u[4]), u[5], u[6]));
  }
};

// TGOV1 steam-turbine governor of one generator (PSS/E TGOV1; data on the machine base, k =
// rating / 100 MVA converts to the system base of P and TM):
//   T1 x1' = Pref − k Δω/R − x1, valve x1 ∈ k [Vmin, Vmax] (non-windup limiter),
//   T3 x2' = x1 − x2,   TM = x2 + (T2/T3)(x1 − x2) − k Dt Δω,   Δω = (ω − ω_s)/ω_s,
// with Pref = Pm (the dispatch, a constant state), so the governor is at rest at t = 0.
// Reads (x1, x2, ω, Pm), writes (x1, x2 rows; ω's row: + TM/M), param R_g, its limiter's guards.
struct TGOV1Data {
  PetscReal T1, T2, T3, Dt, Vmin, Vmax;
};
struct Governor {
  static constexpr int numReads = 4, numWrites = 3, numParams = 1;
  TGOV1Data c;
  PetscReal k, M;
  NonWindupLimiter lim;  // in system-base units: k Vmin, k Vmax
  template <class S> S freeValveRate(const S *u, const S &R) const { return (u[3] - k * (u[2] - omegaS) / (omegaS * R) - u[0]) / c.T1; }
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &d, S *f) const {
    lim.rate(d, freeValveRate<S>(u, p[0]), f[0]);
    f[1] = (u[0] - u[1]) / c.T3;
    f[2] = (u[1] + c.T2 / c.T3 * (u[0] - u[1]) - k * c.Dt * (u[2] - omegaS) / omegaS) / M;
  }
  template <class S> S guard(PetscInt kind, S, const S *u, const S *p, const DiscreteState &) const {
    return lim.guard<S>(kind, u[0], freeValveRate<S>(u, p[0]));
  }
};

// ---- initial state -------------------------------------------------------------------------
// The generator rows at rest for dispatch (P, Q) at terminal voltage (|V|, θ): machine (E'q,
// E'd, δ, ω, Id, Iq), exciter (Efd, RF, VR, Vref = |V| + VR/KA, KA), Pm = P and, with a
// governor, x1 = x2 = P. Id, Iq (algebraic) are the engine's Newton guess.
constexpr int genStartRows = 12, govStartRows = 2;
template <class S> void generatorStart(const GenData &c, const S &P, const S &Q, const S &Vm, const S &th, const S &KA, bool governed, S *u0) {
  const auto s = steadyState<S>(c, P, Q, Vm, th);
  u0[0] = s.Eqp, u0[1] = s.Edp, u0[2] = s.delta, u0[3] = omegaS, u0[4] = s.Id, u0[5] = s.Iq;
  u0[6] = s.Efd, u0[7] = s.RF, u0[8] = s.VR, u0[9] = s.Vm + s.VR / KA, u0[10] = KA, u0[11] = P;
  if (governed) u0[12] = P, u0[13] = P;
}

// A constant state that starts at a parameter (closed_form: a load's reference |V0|).
struct ParameterStart {
  static constexpr int numReads = 0, numWrites = 1, numParams = 1;
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[0]; }
};
// One admittance entry Y_ij: reads (Vr_j, Vi_j), writes the current-balance rows of bus i
// (imaginary part B Vr + G Vi first, then the real part G Vr − B Vi, as in ex9bus). With the
// closed-form start the diagonal entries also carry ex9bus' V0 of bus i as the Newton guess.
struct Admittance {
  static constexpr int numReads = 2, numWrites = 2, numParams = 0;
  PetscReal G, B, guessVr, guessVi;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    f[0] = B * u[0] + G * u[1];
    f[1] = G * u[0] - B * u[1];
  }
  template <class S> void initialState(const S *, S *u0) const {
    u0[0] = guessVr;
    u0[1] = guessVi;
  }
};

// Constant-impedance load: I = (P − jQ)* / V* with P, Q ∝ |V|², i.e. a fixed admittance
// scaled by the power-flow voltage |V0| of its bus (a constant state: its value comes from the
// parameter Vm_b or from the power flow, depending on the initialization).
struct Load {
  static constexpr int numReads = 3, numWrites = 2, numParams = 0;
  PetscReal P0, Q0;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    const S &Vr = u[0], &Vi = u[1], &Vm0 = u[2];
    const S Vm2 = Vr * Vr + Vi * Vi;
    const S P = P0 * Vm2 / (Vm0 * Vm0), Q = Q0 * Vm2 / (Vm0 * Vm0);
    f[0] = (-Q * Vr + P * Vi) / Vm2;  // imaginary part of the load current
    f[1] = (P * Vr + Q * Vi) / Vm2;   // real part
  }
};

// Fault: a shunt conductance at the faulted bus while d[0] = 1.
struct FaultShunt {
  static constexpr int numReads = 2, numWrites = 2, numParams = 0;
  PetscReal Gf;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    if (d[0] != 1) return;
    f[0] = Gf * u[1];
    f[1] = Gf * u[0];
  }
};

// A kernel of an area without parameters: its parameters are fixed numbers (the nominal
// data), so the kernel declares none and contributes no ∂f/∂p columns. Each method exists only
// if the wrapped kernel has it (the kernel detection of ad_local.hpp looks for them).
template <class K> struct FixedParameters {
  static constexpr int numReads = K::numReads, numWrites = K::numWrites, numParams = 0;
  K kernel;
  std::array<PetscReal, K::numParams> values;
  template <class S> std::array<S, K::numParams> fixed() const {
    std::array<S, K::numParams> q;
    for (int i = 0; i < K::numParams; ++i) q[i] = values[i];
    return q;
  }
  template <class S>
  auto residual(S t, const S *u, const S *, const DiscreteState &d, S *f) const
      -> decltype(std::declval<const K &>().template residual<S>(t, u, u, d, f)) {
    kernel.template residual<S>(t, u, fixed<S>().data(), d, f);
  }
  template <class S>
  auto guard(PetscInt k, S t, const S *u, const S *, const DiscreteState &d) const
      -> decltype(std::declval<const K &>().template guard<S>(k, t, u, u, d)) {
    return kernel.template guard<S>(k, t, u, fixed<S>().data(), d);
  }
  template <class S> auto initialState(const S *, S *u0) const -> decltype(std::declval<const K &>().template initialState<S>(u0, u0)) {
    kernel.template initialState<S>(fixed<S>().data(), u0);
  }
};

// Frequency violation of generator g: σ max(0, f − f⁺, f⁻ − f)^η with f = ω/2π (Hz).
// A generator out of service (flag outOfService of d is 1: tripped) adds nothing: its frozen
// frequency is no longer one of the grid's.
struct FrequencyViolation {
  static constexpr int numReads = 1;
  PetscReal fmax, fmin, sigma, eta;
  PetscInt outOfService = -1;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &d) const {
    using std::pow;
    if (outOfService >= 0 && d[outOfService] == 1) return S(0.0);
    const S f = u[0] / (2 * PETSC_PI);
    S v = 0.0;
    if (f > fmax) v = f - fmax;
    else if (f < fmin) v = fmin - f;
    else return S(0.0);
    return eta == 2.0 ? S(sigma * v * v) : S(sigma * pow(v, eta));
  }
};

} // namespace grid
} // namespace power
} // namespace hybridsens
