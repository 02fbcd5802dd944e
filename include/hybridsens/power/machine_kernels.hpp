// The PSS/E dynamic models of the case builder (case_grid.hpp) beyond the two-axis machine and
// IEEE type-1 exciter of grid_kernels.hpp, as local AD kernels (hybridsens/ad_local.hpp):
// GENCLS, GENROU with subtransient dynamics and quadratic saturation, GENSAL, the DC exciters
// IEEET1 (general form), EXDC1 and ESDC1A, SEXS, the IEEEG1 governor; and the steady state of every machine and
// exciter at a power-flow point (the initial state, differentiated through P, Q, |V|, θ, gains).
//
// Conventions (those of grid_kernels.hpp): per unit on the system base, generator convention,
// rotor angle δ with the q axis leading, dq quantities x_d + j x_q = (x_r + j x_i) e^{j(π/2 − δ)},
// the stator algebraic with ω = 1 in the stator voltages, swing 2H/ω_s ω' = T_m − T_e − D (ω − ω_s).
// The equations are written out in docs/power-grids.md ("Dynamic models").
#pragma once

#include <hybridsens/power/grid_kernels.hpp>

#include <cmath>

namespace hybridsens {
namespace power {
namespace grid {

// PSS/E's quadratic saturation: Sat(x) = B (x − A)² for x > A, else 0; the saturation factor is
// S(x) = Sat(x)/x. Through two points (x1, Sat1), (x2, Sat2) with 0 ≤ Sat1 < Sat2 (both 0: none).
struct QuadraticSaturation {
  PetscReal A = 0, B = 0;
  bool none() const { return B == 0; }
  template <class S> S value(const S &x) const {
    if (B == 0 || !(x > A)) return S(0.0);
    return B * (x - A) * (x - A);
  }
  // Returns false if the points do not define an increasing curve (the caller refuses the record).
  bool through(PetscReal x1, PetscReal sat1, PetscReal x2, PetscReal sat2) {
    A = 0, B = 0;
    if (sat1 == 0 && sat2 == 0) return true;
    if (!(x1 > 0 && x2 > x1 && sat1 >= 0 && sat2 > sat1)) return false;
    if (sat1 == 0) {
      A = x1, B = sat2 / ((x2 - x1) * (x2 - x1));
      return true;
    }
    const PetscReal r = std::sqrt(sat2 / sat1);  // (x2 − A)/(x1 − A)
    A = (r * x1 - x2) / (r - 1), B = sat1 / ((x1 - A) * (x1 - A));
    return A < x1;
  }
};

// Exciter saturation Sat(E) = SE(E)·E: the exponential k1 exp(k2 E) (hybridsens' IEEET1, as the
// wecc9 example) or PSS/E's quadratic (EXDC1, ESDC1A).
struct ExciterSaturation {
  bool exponential = true;
  PetscReal k1 = 0, k2 = 0;
  QuadraticSaturation quad;
  template <class S> S value(const S &E) const {
    using std::exp;
    return exponential ? S(k1 * exp(k2 * E)) : quad.value(E);
  }
};

// Machine data on the system base (X · S_base/MBASE, H · MBASE/S_base).
struct MachineData {
  PetscReal H = 1, dampingPerM = 0, Rs = 0;
  PetscReal Xd = 1, Xq = 1, Xdp = 1, Xqp = 1, Xpp = 1, Xl = 0;
  PetscReal Tdop = 1, Tqop = 1, Tdopp = 1, Tqopp = 1;
  QuadraticSaturation sat;  // GENROU: on |ψ''|; GENSAL: on E'q
  PetscReal M() const { return 2 * H / omegaS; }
  PetscReal D() const { return dampingPerM * M(); }
};

// Machine slots of every machine: rows 0..5 of a generator's block (slot 1 is E''d for GENSAL).
enum MachineSlot : PetscInt { SlotEqp = 0, SlotEdp = 1, SlotDelta = 2, SlotOmega = 3, SlotId = 4, SlotIq = 5 };

// The stator of a machine with internal voltage E (dq) behind Rs + j(Xd_, Xq_): the algebraic
// rows of Id and Iq, and the machine's current into its bus's two balance rows (imaginary first).
template <class S>
void statorRows(PetscReal Rs, PetscReal Xd_, PetscReal Xq_, const S &Ed, const S &Eq, const S &delta, const S &Id, const S &Iq, const S &Vr,
                const S &Vi, S *fI, S *fBus) {
  using std::cos;
  using std::sin;
  const S Vd = Vr * sin(delta) - Vi * cos(delta), Vq = Vr * cos(delta) + Vi * sin(delta);
  const PetscReal det = Rs * Rs + Xd_ * Xq_;
  fI[0] = (Rs * (Vd - Ed) + Xq_ * (Vq - Eq)) / det + Id;
  fI[1] = (-Xd_ * (Vd - Ed) + Rs * (Vq - Eq)) / det + Iq;
  const S IGr = Id * sin(delta) + Iq * cos(delta), IGi = -Id * cos(delta) + Iq * sin(delta);
  fBus[0] = -IGi;
  fBus[1] = -IGr;
}

// GENCLS: constant E' behind X'd (Xd = Xq = X'd); E'q, E'd rows stay 0.
// Reads (E'q, E'd, δ, ω, Id, Iq, Vr, Vi, Pm); writes (E'q, E'd, δ, ω, Id, Iq, bus rows).
struct ClassicalMachine {
  static constexpr int numReads = 9, numWrites = 8, numParams = 0;
  MachineData c;
  bool governed;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    const S TM = governed ? S(0.0) : u[8];
    f[2] = u[3] - omegaS;
    f[3] = (TM - u[1] * u[4] - u[0] * u[5] - c.D() * (u[3] - omegaS)) / c.M();
    statorRows<S>(c.Rs, c.Xdp, c.Xdp, u[1], u[0], u[2], u[4], u[5], u[6], u[7], f + 4, f + 6);
  }
};

// GENROU with subtransient dynamics (X''q = X''d = Xpp), PSS/E's form:
//   ψ''d = γd1 E'q + (1 − γd1) ψ1d,   ψ''q = −γq1 E'd + (1 − γq1) ψ2q,   |ψ''| = √(ψ''d² + ψ''q²),
//   Se = Sat(|ψ''|)/|ψ''| (quadratic through S(1.0), S(1.2)),
//   T'do E'q' = Efd − E'q − (Xd − X'd)(Id − γd2 (ψ1d + (X'd − Xl) Id − E'q)) − Se ψ''d,
//   T''do ψ1d' = −ψ1d + E'q − (X'd − Xl) Id,
//   T'qo E'd' = −E'd + (Xq − X'q)(Iq − γq2 (ψ2q + (X'q − Xl) Iq + E'd)) + Se ψ''q (Xq − Xl)/(Xd − Xl),
//   T''qo ψ2q' = −ψ2q − E'd − (X'q − Xl) Iq,
//   T_e = ψ''d Iq − ψ''q Id, stator: E'' = (−ψ''q, ψ''d) behind Rs + j X''.
// γd1 = (X'' − Xl)/(X'd − Xl), γq1 = (X'' − Xl)/(X'q − Xl), γd2 = (X'd − X'')/(X'd − Xl)²,
// γq2 = (X'q − X'')/(X'q − Xl)².
// Reads (E'q, E'd, δ, ω, Id, Iq, ψ1d, ψ2q, Efd, Vr, Vi, Pm); writes (E'q, E'd, δ, ω, Id, Iq, ψ1d,
// ψ2q, bus rows).
struct RoundRotorMachine {
  static constexpr int numReads = 12, numWrites = 10, numParams = 0;
  MachineData c;
  bool governed;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    using std::sqrt;
    const S &Eqp = u[0], &Edp = u[1], &delta = u[2], &w = u[3], &Id = u[4], &Iq = u[5], &p1d = u[6], &p2q = u[7], &Efd = u[8];
    const S TM = governed ? S(0.0) : u[11];
    const PetscReal gd1 = (c.Xpp - c.Xl) / (c.Xdp - c.Xl), gq1 = (c.Xpp - c.Xl) / (c.Xqp - c.Xl);
    const PetscReal gd2 = (c.Xdp - c.Xpp) / ((c.Xdp - c.Xl) * (c.Xdp - c.Xl)), gq2 = (c.Xqp - c.Xpp) / ((c.Xqp - c.Xl) * (c.Xqp - c.Xl));
    const S psd = gd1 * Eqp + (1 - gd1) * p1d, psq = -gq1 * Edp + (1 - gq1) * p2q;
    S Se = 0.0;
    if (!c.sat.none()) {
      const S psi = sqrt(psd * psd + psq * psq);
      Se = c.sat.value(psi) / psi;
    }
    f[0] = (Efd - Eqp - (c.Xd - c.Xdp) * (Id - gd2 * (p1d + (c.Xdp - c.Xl) * Id - Eqp)) - Se * psd) / c.Tdop;
    f[1] = (-Edp + (c.Xq - c.Xqp) * (Iq - gq2 * (p2q + (c.Xqp - c.Xl) * Iq + Edp)) + Se * psq * ((c.Xq - c.Xl) / (c.Xd - c.Xl))) / c.Tqop;
    f[2] = w - omegaS;
    f[3] = (TM - (psd * Iq - psq * Id) - c.D() * (w - omegaS)) / c.M();
    f[6] = (-p1d + Eqp - (c.Xdp - c.Xl) * Id) / c.Tdopp;
    f[7] = (-p2q - Edp - (c.Xqp - c.Xl) * Iq) / c.Tqopp;
    S fs[2], fb[2];
    statorRows<S>(c.Rs, c.Xpp, c.Xpp, S(-psq), psd, delta, Id, Iq, u[9], u[10], fs, fb);
    f[4] = fs[0], f[5] = fs[1], f[8] = fb[0], f[9] = fb[1];
  }
};

// GENSAL (salient pole, PSS/E's form): d axis as GENROU's, saturation on E'q
// (T'do E'q' = Efd − E'q − (Xd − X'd)(Id − γd2 (ψkd + (X'd − Xl) Id − E'q)) − Sat(E'q)), q axis
// subtransient only: T''qo E''d' = −E''d + (Xq − X'') Iq; T_e = ψ''d Iq + E''d Id; stator:
// (E''d, ψ''d) behind Rs + j X''. Reads (E'q, E''d, δ, ω, Id, Iq, ψkd, Efd, Vr, Vi, Pm); writes
// (E'q, E''d, δ, ω, Id, Iq, ψkd, bus rows).
struct SalientPoleMachine {
  static constexpr int numReads = 11, numWrites = 9, numParams = 0;
  MachineData c;
  bool governed;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    const S &Eqp = u[0], &Edpp = u[1], &delta = u[2], &w = u[3], &Id = u[4], &Iq = u[5], &pkd = u[6], &Efd = u[7];
    const S TM = governed ? S(0.0) : u[10];
    const PetscReal gd1 = (c.Xpp - c.Xl) / (c.Xdp - c.Xl), gd2 = (c.Xdp - c.Xpp) / ((c.Xdp - c.Xl) * (c.Xdp - c.Xl));
    const S psd = gd1 * Eqp + (1 - gd1) * pkd;
    f[0] = (Efd - Eqp - (c.Xd - c.Xdp) * (Id - gd2 * (pkd + (c.Xdp - c.Xl) * Id - Eqp)) - c.sat.value(Eqp)) / c.Tdop;
    f[1] = (-Edpp + (c.Xq - c.Xpp) * Iq) / c.Tqopp;
    f[2] = w - omegaS;
    f[3] = (TM - (psd * Iq + Edpp * Id) - c.D() * (w - omegaS)) / c.M();
    f[6] = (-pkd + Eqp - (c.Xdp - c.Xl) * Id) / c.Tdopp;
    S fs[2], fb[2];
    statorRows<S>(c.Rs, c.Xpp, c.Xpp, Edpp, psd, delta, Id, Iq, u[8], u[9], fs, fb);
    f[4] = fs[0], f[5] = fs[1], f[7] = fb[0], f[8] = fb[1];
  }
};

// DC exciters IEEE DC1A as PSS/E's IEEET1 (general form), EXDC1 and ESDC1A:
//   TR Vc' = |V| − Vc (TR = 0: Vc = |V|, an algebraic row),
//   u = Vref − Vc − (KF/TF Efd − RF) (rate feedback KF s/(1 + s TF) through the state RF:
//   TF RF' = −RF + KF/TF Efd), lead-lag (1 + s TC)/(1 + s TB): y = TC/TB u + xLL,
//   TB xLL' = (1 − TC/TB) u − xLL (TB = 0: bypassed, y = u, xLL = 0 an algebraic row),
//   TA VR' = KA y − VR with a non-windup limiter [VRMIN, VRMAX],
//   TE Efd' = VR − KE Efd − Sat(Efd); KE is a constant state: the record's KE, or with KE = 0
//   PSS/E's rule: KE = −Sat(Efd0)/Efd0 so that VR starts at 0.
// Reads (Efd, RF, VR, Vc, xLL, Vr, Vi, Vref, KA, KE); writes (Efd, RF, VR, Vc, xLL).
struct DCExciter {
  static constexpr int numReads = 10, numWrites = 5, numParams = 0;
  PetscReal TR, TA, TB, TC, TE, KF, TF;
  ExciterSaturation sat;
  NonWindupLimiter lim;
  template <class S> S input(const S *u) const { return u[7] - u[3] - (KF / TF * u[0] - u[1]); }
  template <class S> S regulatorInput(const S *u) const { return TB > 0 ? S(TC / TB * input<S>(u) + u[4]) : input<S>(u); }
  template <class S> S freeRate(const S *u) const { return (u[8] * regulatorInput<S>(u) - u[2]) / TA; }
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    using std::sqrt;
    const S Vm = sqrt(u[5] * u[5] + u[6] * u[6]);
    f[0] = (u[2] - u[9] * u[0] - sat.value(u[0])) / TE;
    f[1] = (-u[1] + KF / TF * u[0]) / TF;
    lim.rate(d, freeRate<S>(u), f[2]);
    f[3] = TR > 0 ? S((Vm - u[3]) / TR) : S(Vm - u[3]);
    f[4] = TB > 0 ? S(((1 - TC / TB) * input<S>(u) - u[4]) / TB) : S(-u[4]);
  }
  template <class S> S guard(PetscInt k, S, const S *u, const S *, const DiscreteState &) const { return lim.guard<S>(k, u[2], freeRate<S>(u)); }
};

// SEXS (PSS/E): u = Vref − |V|, lead-lag (1 + s TA)/(1 + s TB): y = (TA/TB) u + xLL,
// TB xLL' = (1 − TA/TB) u − xLL (TB = 0: bypassed, xLL = 0 algebraic), TE Efd' = K y − Efd with a
// non-windup limiter [EMIN, EMAX] on Efd. Reads (Efd, xLL, Vr, Vi, Vref, K); writes (Efd, xLL).
struct SexsExciter {
  static constexpr int numReads = 6, numWrites = 2, numParams = 0;
  PetscReal TA_TB, TB, TE;
  NonWindupLimiter lim;
  template <class S> S input(const S *u) const {
    using std::sqrt;
    return u[4] - sqrt(u[2] * u[2] + u[3] * u[3]);
  }
  template <class S> S freeRate(const S *u) const {
    const S y = TB > 0 ? S(TA_TB * input<S>(u) + u[1]) : input<S>(u);
    return (u[5] * y - u[0]) / TE;
  }
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    lim.rate(d, freeRate<S>(u), f[0]);
    f[1] = TB > 0 ? S(((1 - TA_TB) * input<S>(u) - u[1]) / TB) : S(-u[1]);
  }
  template <class S> S guard(PetscInt k, S, const S *u, const S *, const DiscreteState &) const { return lim.guard<S>(k, u[0], freeRate<S>(u)); }
};

// IEEEG1 (PSS/E, single shaft: JBUS = 0), on the machine base (k = MBASE/S_base converts P_m):
//   Δω = (ω − ω_s)/ω_s, y = K ((T2/T1) Δω + xLL), T1 xLL' = (1 − T2/T1) Δω − xLL (T1 = 0: y = K Δω,
//   xLL = 0 algebraic); gate rate s = (P_ref − y − P)/T3 clipped to [Uc, Uo] (a rate limit: the
//   clip switches at state events), gate position P' = clip(s) with a non-windup limiter
//   [PMIN, PMAX]; four stages T_i x_i' = x_{i−1} − x_i (x_3 = P; T_i = 0: x_i = x_{i−1}, an
//   algebraic row); T_m = k Σ_i (K_{2i−1} + K_{2i}) x_i; P_ref = P_m/(k ΣK) with P_m the dispatch (a
//   constant state), so the governor is at rest at t = 0.
// Reads (xLL, P, x4, x5, x6, x7, ω, P_m); writes (xLL, P, x4, x5, x6, x7, ω's row: + T_m/M);
// param K; guards: the position limiter's four, then the rate limit's four (hit Uo, hit Uc,
// leave Uo, leave Uc: s − Uo, s − Uc).
struct IEEEG1Data {
  PetscReal T1, T2, T3, Uo, Uc, Pmax, Pmin, T[4], Kstage[4];  // Kstage[i] = K_{2i+1} + K_{2i+2}
  PetscReal sumK() const { return Kstage[0] + Kstage[1] + Kstage[2] + Kstage[3]; }
};
struct IEEEG1Governor {
  static constexpr int numReads = 8, numWrites = 7, numParams = 1;
  IEEEG1Data c;
  PetscReal k, M;
  PetscInt positionFlag, rateFlag;
  template <class S> S gateRate(const S *u, const S &K) const {
    const S dw = (u[6] - omegaS) / omegaS;
    const S y = c.T1 > 0 ? S(K * (c.T2 / c.T1 * dw + u[0])) : S(K * dw);
    return (u[7] / (k * c.sumK()) - y - u[1]) / c.T3;
  }
  template <class S> S clippedRate(const S &s, const DiscreteState &d) const { return d[rateFlag] == 1 ? S(c.Uo) : d[rateFlag] == -1 ? S(c.Uc) : s; }
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &d, S *f) const {
    const S dw = (u[6] - omegaS) / omegaS;
    f[0] = c.T1 > 0 ? S(((1 - c.T2 / c.T1) * dw - u[0]) / c.T1) : S(-u[0]);
    if (d[positionFlag] == 0) f[1] = clippedRate<S>(gateRate<S>(u, p[0]), d);
    S in = u[1], TM = 0.0;
    for (int i = 0; i < 4; ++i) {
      f[2 + i] = c.T[i] > 0 ? S((in - u[2 + i]) / c.T[i]) : S(in - u[2 + i]);
      TM += c.Kstage[i] * u[2 + i];
      in = u[2 + i];
    }
    f[6] = k * TM / M;
  }
  template <class S> S guard(PetscInt kind, S, const S *u, const S *p, const DiscreteState &d) const {
    const S s = gateRate<S>(u, p[0]);
    switch (kind) {
    case HitMax: return u[1] - c.Pmax;
    case HitMin: return u[1] - c.Pmin;
    case LeaveMax:
    case LeaveMin: return clippedRate<S>(s, d);
    case 4 + HitMax:
    case 4 + LeaveMax: return s - c.Uo;
    default: return s - c.Uc;
    }
  }
};

// ---- steady state at a power-flow point ------------------------------------------------------
enum class MachineKind { Classical, TwoAxis, RoundRotor, SalientPole };
enum class ExciterKind { None, IEEET1Simple, DC, SEXS };

// The machine at rest for terminal power P + jQ at voltage |V|∠θ: the machine block's values
// (E'q, E'd or E''d, δ, ω_s, Id, Iq, then ψ1d, ψ2q (GENROU) or ψkd (GENSAL)), the field voltage
// Efd it needs and the mechanical power Pm = T_e (= P + Rs |I|²).
template <class S> struct MachineRest {
  S rows[8];
  int numRows = 6;
  S Efd, Pm;
};
template <class S> MachineRest<S> machineAtRest(MachineKind kind, const MachineData &c, const S &P, const S &Q, const S &Vm, const S &th) {
  using std::atan2;
  using std::cos;
  using std::sin;
  using std::sqrt;
  MachineRest<S> m;
  const S Vr = Vm * cos(th), Vi = Vm * sin(th), Vm2 = Vm * Vm;
  const S IGr = (Vr * P + Vi * Q) / Vm2, IGi = (Vi * P - Vr * Q) / Vm2;
  // The reactance that puts the q axis along V + (Rs + j Xqs) I: Xq, X'd for GENCLS, and for a
  // saturated GENROU X'' + (Xq − X'')/(1 + Se (Xq − Xl)/(Xd − Xl)) with Se at |E''| (E'' = V +
  // (Rs + jX'') I is known before δ).
  PetscReal XqsConst = kind == MachineKind::Classical ? c.Xdp : c.Xq;
  S Xqs = XqsConst, Se = 0.0;
  if (kind == MachineKind::RoundRotor && !c.sat.none()) {
    const S Er = Vr + c.Rs * IGr - c.Xpp * IGi, Ei = Vi + c.Rs * IGi + c.Xpp * IGr;
    const S psi = sqrt(Er * Er + Ei * Ei);
    Se = c.sat.value(psi) / psi;
    Xqs = c.Xpp + (c.Xq - c.Xpp) / (1 + Se * ((c.Xq - c.Xl) / (c.Xd - c.Xl)));
  }
  const S delta = atan2(Vi + Xqs * IGr + c.Rs * IGi, Vr - Xqs * IGi + c.Rs * IGr);
  const S theta = PETSC_PI / 2.0 - delta;
  const S Id = IGr * cos(theta) - IGi * sin(theta), Iq = IGr * sin(theta) + IGi * cos(theta);
  const S Vd = Vr * cos(theta) - Vi * sin(theta), Vq = Vr * sin(theta) + Vi * cos(theta);
  m.rows[SlotDelta] = delta, m.rows[SlotOmega] = omegaS, m.rows[SlotId] = Id, m.rows[SlotIq] = Iq;
  switch (kind) {
  case MachineKind::Classical:
  case MachineKind::TwoAxis: {
    const PetscReal Xdp = c.Xdp, Xqp = kind == MachineKind::Classical ? c.Xdp : c.Xqp;
    const S Edp = Vd + c.Rs * Id - Xqp * Iq, Eqp = Vq + c.Rs * Iq + Xdp * Id;
    m.rows[SlotEqp] = Eqp, m.rows[SlotEdp] = Edp;
    m.Efd = Eqp + (c.Xd - c.Xdp) * Id;
    break;
  }
  case MachineKind::RoundRotor: {
    const S psd = Vq + c.Rs * Iq + c.Xpp * Id, psq = -(Vd + c.Rs * Id - c.Xpp * Iq);
    const S Eqp = psd + (c.Xdp - c.Xpp) * Id, Edp = -psq - (c.Xqp - c.Xpp) * Iq;
    m.rows[SlotEqp] = Eqp, m.rows[SlotEdp] = Edp;
    m.rows[6] = Eqp - (c.Xdp - c.Xl) * Id, m.rows[7] = -Edp - (c.Xqp - c.Xl) * Iq, m.numRows = 8;
    m.Efd = Eqp + (c.Xd - c.Xdp) * Id + Se * psd;
    break;
  }
  case MachineKind::SalientPole: {
    const S psd = Vq + c.Rs * Iq + c.Xpp * Id, Edpp = Vd + c.Rs * Id - c.Xpp * Iq;
    const S Eqp = psd + (c.Xdp - c.Xpp) * Id;
    m.rows[SlotEqp] = Eqp, m.rows[SlotEdp] = Edpp;
    m.rows[6] = Eqp - (c.Xdp - c.Xl) * Id, m.numRows = 7;
    m.Efd = Eqp + (c.Xd - c.Xdp) * Id + c.sat.value(Eqp);
    break;
  }
  }
  // T_e at rest: the terminal power plus the armature loss (exactly P when Rs = 0).
  m.Pm = P + c.Rs * (Id * Id + Iq * Iq);
  return m;
}

} // namespace grid
} // namespace power
} // namespace hybridsens
