// wecc9 — transient stability of the WECC 3-generator 9-bus system with exciter limiters and a
// fault, and the exact sensitivities of the frequency-violation metrics of seed 002 (eq. 30).
//
// The model is the DAE of PETSc's power_grid/stability_9bus/ex9bus.c (data of Sauer & Pai,
// Power System Dynamics and Stability, ch. 7), re-expressed as local AD kernels
// (hybridsens/ad_local.hpp): every component is written once as a template and all derivatives
// (Jacobian, ∂f/∂p, guard gradients, ∂u0/∂p) come from Sacado.
//
// State (ex9bus' ordering, 45 entries + 6 constant states):
//   generator g (rows 9g..9g+8): E'q, E'd, δ, ω (differential), Id, Iq (algebraic stator
//   currents), Efd, RF, VR (IEEE type-1 exciter, differential);
//   bus b (rows 27+2b, 27+2b+1): Vr, Vi (algebraic, rectangular coordinates);
//   rows 45+2g, 46+2g: Vref_g and KA_g held as constant states (ẋ = 0, x(0) from p) so that the
//   limiter tests run at a fault clearing need only the state (see limiter_check below).
// Generator g (two-axis model, M = 2H/ω_s, D = 0.1 M, TM = P_g):
//   T'd0 E'q' = −E'q − (Xd − X'd) Id + Efd        T'q0 E'd' = −E'd + (Xq − X'q) Iq
//   δ' = ω − ω_s                                  M ω' = TM − E'd Id − E'q Iq − (X'q − X'd) Id Iq − D (ω − ω_s)
//   0 = stator: [Rs, −X'q; X'd, Rs]⁻¹ applied to (Vd − E'd, Vq − E'q) + (Id, Iq)
//   with (Vd, Vq) the terminal voltage in the machine frame: Vd = Vr sin δ − Vi cos δ, Vq = Vr cos δ + Vi sin δ.
// Exciter (IEEE type 1, saturation SE = k1 exp(k2 Efd)):
//   TE Efd' = −KE Efd − SE + VR     TF RF' = −RF + KF Efd / TF
//   TA VR'  = −VR + KA RF − KA KF Efd / TF + KA (Vref − |V|)          (free)
//   VR' = 0                                                         (at VRmax or VRmin)
//   Non-windup limiter as state events: free → at max when VR rises through VRmax, free → at
//   min when VR falls through VRmin; at max → free when the free VR' (right-hand side above)
//   falls through 0, at min → free when it rises through 0. ex9bus writes VR' = VR − VRmax at the
//   limit; with the event located exactly both hold VR on the limit.
// Network: current balance at every bus, 0 = Y V − I_gen + I_load (+ G_f V at the fault bus while
//   the fault is on), in ex9bus' row convention (imaginary part first); constant-impedance loads
//   P = P0 (|V|/|V0|)², Q = Q0 (|V|/|V0|)²; the fault is a shunt conductance 1/Rfault.
// Events: time events fault_on at t_on, fault_off at t_off (both parameters, so ∂T/∂p enters),
//   then limiter_check_on / limiter_check_off at the same instants: applied after the network
//   was re-solved, they release a limiter whose free VR' points back into the band (the
//   algebraic jump at a fault can reverse it without any crossing; ex9bus does the same check at
//   fault clearing only — its check evaluates the pre-clearing voltages with the reversed sign,
//   so it releases a limiter at VRmax whenever the free VR' was still positive before the
//   clearing; in the default scenario both release at the clearing).
// Initial state: ex9bus' power-flow solution V0 and dispatch (P, Q); the generator and exciter
//   states, Vref = |V| + VR/KA and TM = P follow from (P_g, Q_g, V0) by the same closed form,
//   differentiated; the engine re-solves the network (algebraic part) consistently.
// Parameters p (29): P1..P3, Q1..Q3 (dispatch), t_on, t_off (fault times), KA1..KA3 (exciter gains),
//   Vm1..Vm9, th1..th9 (magnitudes and angles of the initial bus voltages, seed 002's 24 with the
//   dispatch). The voltages enter u0 through the generator closed form (generator buses) and the
//   loads' reference |V0| (load buses); buses 4, 7, 9 carry neither (zero sensitivity). A changed
//   voltage or dispatch is NOT re-solved into a new power flow: u0(p) follows the closed form and
//   the engine makes the network consistent at t = 0, so away from the nominal p the system
//   starts slightly off equilibrium (as in seed 002, where these are parameters of u0).
// Costs (seed 002 eq. 30): H_i = σ ∫ max(0, f_i − f⁺, f⁻ − f_i)^η dt per generator, f_i = ω_i/2π
//   in Hz, f± = 60 ± 0.5 Hz, σ = 1, η = 2 (options -freq_max, -freq_min, -sigma, -eta).
//
// Defaults as ex9bus: Crank–Nicolson, dt = 0.01, T = 5, fault at bus 9 from 1.0 to 1.2 s, Rfault = 1e-4.
//
// Several areas (-areas N): N copies of the 9-bus system, area a+1 tied to area a by two lines
// (R + jX = 0.01 + 0.1j by default, -tie_r/-tie_x) between their buses 5 and between their buses 8.
// The ties join buses of equal power-flow voltage, so they carry no current at t = 0 and every
// area starts at ex9bus' equilibrium (tested: drift 2e-11 without a fault). Generators and buses
// are numbered globally (bus b of area a is 9(a−1)+b; -fault_bus 16 faults bus 7 of area 2); the
// parameters of the first K areas are parameters (-param_areas K, default all: 27K + 2), the other
// areas use the nominal data as constants; -cost_generators M keeps H_1..H_M (default all).
// 112 areas = 1008 buses, 5712 states, 336 generators: the benchmark system of bench/grid_timing.py.
//
// Verified (tests/example_wecc9.py, tests/peer_wecc9_ex9bus.py): same limiter events as ex9bus
// (times to 1.8e-9, states to 2.4e-8 relative); adjoint = forward to ~5e-14; adjoint vs central
// differences ≤ 2e-8 (dispatch, voltages, KA, fault times), also with 4 hits and 4 releases;
// 1-3 ranks equal to ≤ 1e-13. Fault times ON the step grid (the default 1.0 and 1.2 with dt =
// 0.01): the computed H_i has a kink in t_on/t_off there (the step that holds the event changes
// side); the gradient is the right derivative (event moved later; left one differs by 5.5e-5
// relative), so check it against differences with off-grid times (-t_on 1.0025 -t_off 1.2025).
// -hs_check_gradient's Taylor test steps by 1e-2·max|p| (0.2 here, as KA = 20), which moves the
// fault by ~0.1 s and changes the event sequence: it reports FAILED for this model although its
// finite-difference columns agree (2.7e-8 at off-grid times); tests/example_wecc9.py runs a
// Taylor test with steps of 1e-3 instead (order 2.0).
//
// Run:
//   build/examples/wecc9                                          # limiter events, H_i
//   build/examples/wecc9 -hs_adjoint -hs_forward                  # ∂H_i/∂p both ways
//   mpiexec -n 3 build/examples/wecc9 -hs_adjoint -pc_factor_mat_solver_type mumps
//   build/examples/wecc9 -fault_bus 7 -t_off 1.1 -ts_max_time 3 -hs_summary wecc9.json
//   build/examples/wecc9 -areas 112 -param_areas 1 -cost_generators 3 -hs_adjoint   # 1008 buses
// Options: -areas, -param_areas, -cost_generators, -tie_r, -tie_x, -fault_bus (1-based global, default 9), -rfault, every parameter by its name (-P2 1.7,
// -t_off 1.15, -KA3 25, -Vm5 1.0, ...), -freq_max, -freq_min, -sigma, -eta,
// -wecc9_states FILE (post-event state at every step start, CSV; scripts/plot_wecc9.py).
#include <hybridsens/ad_local.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace hybridsens;

namespace wecc9 {

constexpr PetscReal omegaS = 2 * PETSC_PI * 60;  // synchronous speed (rad/s)
// One area is ex9bus' 9-bus system; -areas N couples N identical copies (see Layout).
constexpr PetscInt areaGens = 3, areaBuses = 9, genStates = 9;
constexpr PetscInt areaStates = areaGens * genStates + 2 * areaBuses + 2 * areaGens;  // 51
constexpr PetscInt genBus[areaGens] = {0, 1, 2};
constexpr PetscInt loadBus[3] = {4, 5, 7};

// Dispatch from ex9bus' load flow, and its power-flow voltages V0 (bus b: Vr, Vi).
const PetscReal P0[areaGens] = {0.716786142395021, 1.630000000000000, 0.850000000000000};
const PetscReal Q0[areaGens] = {0.270702180178785, 0.066120127797275, -0.108402221791588};
const PetscReal V0[2 * areaBuses] = {1.04, 0.0, 1.0115856072004659, 0.16528629496995645, 1.0216048295777422, 0.08335809608923525,
                                1.0249353469218594, -0.03967289055406254, 0.9931096437804608, -0.06926811030369806,
                                1.0104641368769802, -0.06513369436653811, 1.0234726765728006, 0.06652686979784567,
                                1.0156774020826715, 0.012874998897784764, 1.0316489469094174, 0.03541042096750376};

// Bus admittance matrix Y = G + jB (ex9bus' Ybus.bin, lines and transformers), nonzeros (i, j, G, B).
struct YEntry {
  PetscInt i, j;
  PetscReal G, B;
};
const YEntry Ybus[] = {
    {0, 0, 0.030140727054618014, -17.361008783459972}, {0, 3, -0.030140727054618014, 17.361058783459974},
    {1, 1, 0.025599934464167775, -15.999909040104857}, {1, 6, -0.025599934464167775, 15.999959040104857},
    {2, 2, 0.02912081351904647, -17.064746722161228},  {2, 8, -0.02912081351904647, 17.06479672216123},
    {3, 0, -0.030140727054618014, 17.361058783459974}, {3, 3, 3.337519689079925, -39.30878639846784},
    {3, 4, -1.3651877133105799, 11.60409556313993},    {3, 5, -1.9421912487147268, 10.510682051867933},
    {4, 3, -1.3651877133105799, 11.60409556313993},    {4, 4, 2.5527920926017282, -17.338230096448523},
    {4, 6, -1.1876043792911486, 5.975134533308591},    {5, 3, -1.9421912487147268, 10.510682051867933},
    {5, 5, 3.2242003871388416, -15.840927014229457},   {5, 8, -1.2820091384241146, 5.588244962361526},
    {6, 1, -0.025599934464167775, 15.999959040104857}, {6, 4, -1.1876043792911486, 5.975134533308591},
    {6, 6, 2.830326787001452, -35.445522170321894},    {6, 7, -1.6171224732461358, 13.697978596908442},
    {7, 6, -1.6171224732461358, 13.697978596908442},   {7, 7, 2.7722099541362324, -23.30324902327161},
    {7, 8, -1.1550874808900968, 9.784270426363172},    {8, 2, -0.02912081351904647, 17.06479672216123},
    {8, 5, -1.2820091384241146, 5.588244962361526},    {8, 7, -1.1550874808900968, 9.784270426363172},
    {8, 8, 2.4662174328332576, -32.15376211088593}};

// Machine and exciter constants of one generator (Sauer & Pai; ex9bus).
struct GenData {
  PetscReal H, Rs, Xd, Xdp, Xq, Xqp, Td0p, Tq0p;
  PetscReal TA, KE, TE, KF, TF, k1, k2, VRmin, VRmax;
  PetscReal M() const { return 2 * H / omegaS; }
  PetscReal D() const { return 0.1 * M(); }
};
const GenData gen[areaGens] = {
    {23.64, 0.0, 0.146, 0.0608, 0.4360, 0.0969, 8.96, 0.31, 0.2, 1.0, 0.314, 0.063, 0.35, 0.0039, 1.555, -4.0, 7.0},
    {6.4, 0.0, 0.8958, 0.1198, 0.8645, 0.1969, 6.0, 0.535, 0.2, 1.0, 0.314, 0.063, 0.35, 0.0039, 1.555, -4.0, 7.0},
    {3.01, 0.0, 1.3125, 0.1813, 1.2578, 0.25, 5.89, 0.6, 0.2, 1.0, 0.314, 0.063, 0.35, 0.0039, 1.555, -4.0, 7.0}};
const PetscReal loadP[3] = {1.25, 0.9, 1.0}, loadQ[3] = {0.5, 0.3, 0.35};

// Where everything lives, for N areas of which the first K carry parameters.
// State: area a occupies rows [51a, 51a + 51): its generators (9 rows each: 0 E'q 1 E'd 2 δ 3 ω
// 4 Id 5 Iq 6 Efd 7 RF 8 VR), its buses (Vr, Vi each; Vr's row is also the bus' "imaginary
// current" balance, Vi's the "real current" one), then (Vref, KA) per generator. Generators and
// buses are numbered globally: generator g is generator g % 3 of area g / 3, bus b is bus b % 9
// of area b / 9. Contiguous areas keep a rank's rows together in parallel.
// Parameters: P_g, Q_g, KA_g of the 3K generators and Vm_b, θ_b of the 9K buses of the
// parameter areas, and the two fault times; for K = 1 the order is (P1..3, Q1..3, t_on, t_off,
// KA1..3, Vm1..9, th1..9) — 29 in all. Areas beyond K use the nominal data as constants.
struct Layout {
  PetscInt areas = 1, paramAreas = 1;
  PetscInt numGens() const { return areaGens * areas; }
  PetscInt numBuses() const { return areaBuses * areas; }
  PetscInt numStates() const { return areaStates * areas; }
  PetscInt gs(PetscInt g, PetscInt k) const { return areaStates * (g / areaGens) + genStates * (g % areaGens) + k; }
  PetscInt vr(PetscInt b) const { return areaStates * (b / areaBuses) + areaGens * genStates + 2 * (b % areaBuses); }
  PetscInt vi(PetscInt b) const { return vr(b) + 1; }
  PetscInt vref(PetscInt g) const { return areaStates * (g / areaGens) + areaGens * genStates + 2 * areaBuses + 2 * (g % areaGens); }
  PetscInt ka(PetscInt g) const { return vref(g) + 1; }
  PetscInt genBusOf(PetscInt g) const { return areaBuses * (g / areaGens) + genBus[g % areaGens]; }
  // Parameter indices (only for generators/buses of the parameter areas: hasParams).
  bool hasParams(PetscInt areaOf) const { return areaOf < paramAreas; }
  PetscInt pP(PetscInt g) const { return g; }
  PetscInt pQ(PetscInt g) const { return areaGens * paramAreas + g; }
  PetscInt pTon() const { return 2 * areaGens * paramAreas; }
  PetscInt pToff() const { return pTon() + 1; }
  PetscInt pKA(PetscInt g) const { return pToff() + 1 + g; }
  PetscInt pVm(PetscInt b) const { return pKA(areaGens * paramAreas) + b; }
  PetscInt pTh(PetscInt b) const { return pVm(areaBuses * paramAreas) + b; }
  PetscInt numParams() const { return pTh(areaBuses * paramAreas); }
};

// Discrete state: d[0] fault on (0/1); d[1+g] limiter of exciter g: 0 free, +1 at VRmax, −1 at VRmin.
inline PetscInt limiterFlag(PetscInt g) { return 1 + g; }
// Guards of exciter g: 4g hit max, 4g+1 hit min, 4g+2 leave max, 4g+3 leave min.
enum GuardKind : PetscInt { HitMax = 0, HitMin = 1, LeaveMax = 2, LeaveMin = 3 };
// Time events (applied in this order at one instant).
enum TimeEvent : PetscInt { FaultOn = 0, FaultOff = 1, LimiterCheckOn = 2, LimiterCheckOff = 3 };

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
// Machine g: reads (E'q, E'd, δ, ω, Id, Iq, Efd, Vr, Vi), writes (E'q, E'd, δ, ω, Id, Iq rows and
// the two current-balance rows of its bus), params (P_g, Q_g, |V|, θ of its bus at t = 0).
struct Machine {
  static constexpr int numReads = 9, numWrites = 8, numParams = 4;
  GenData c;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    using std::cos;
    using std::sin;
    const S &Eqp = u[0], &Edp = u[1], &delta = u[2], &w = u[3], &Id = u[4], &Iq = u[5], &Efd = u[6], &Vr = u[7], &Vi = u[8];
    const S &TM = p[0];
    f[0] = (-Eqp - (c.Xd - c.Xdp) * Id + Efd) / c.Td0p;
    f[1] = (-Edp + (c.Xq - c.Xqp) * Iq) / c.Tq0p;
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
  template <class S> void initialState(const S *p, S *u0) const {
    const auto s = steadyState<S>(c, p[0], p[1], p[2], p[3]);
    u0[0] = s.Eqp, u0[1] = s.Edp, u0[2] = s.delta, u0[3] = omegaS, u0[4] = s.Id, u0[5] = s.Iq;  // Id, Iq: Newton guess
  }
};

// The free right-hand side of VR (what the limiter holds at zero while active).
template <class S> S freeVRRate(const GenData &c, const S &Efd, const S &RF, const S &VR, const S &Vm, const S &Vref, const S &KA) {
  return (-VR + KA * RF - KA * c.KF * Efd / c.TF + KA * (Vref - Vm)) / c.TA;
}

// Exciter g: reads (Efd, RF, VR, Vr, Vi, Vref, KA), writes (Efd, RF, VR, Vref, KA), params
// (P_g, Q_g, KA_g, |V|, θ of its bus at t = 0) for the initial state, guards 4g..4g+3.
struct Exciter {
  static constexpr int numReads = 7, numWrites = 5, numParams = 5;
  GenData c;
  PetscInt g;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    using std::exp;
    using std::sqrt;
    const S &Efd = u[0], &RF = u[1], &VR = u[2], &Vr = u[3], &Vi = u[4], &Vref = u[5], &KA = u[6];
    f[0] = (-c.KE * Efd - c.k1 * exp(c.k2 * Efd) + VR) / c.TE;
    f[1] = (-RF + c.KF * Efd / c.TF) / c.TF;
    if (d[limiterFlag(g)] == 0) f[2] = freeVRRate<S>(c, Efd, RF, VR, sqrt(Vr * Vr + Vi * Vi), Vref, KA);
    // rows Vref, KA: constant states (f = 0); VR at a limit: VR' = 0.
  }
  template <class S> S guard(PetscInt k, S, const S *u, const S *, const DiscreteState &) const {
    using std::sqrt;
    switch (k) {
    case HitMax: return u[2] - c.VRmax;
    case HitMin: return u[2] - c.VRmin;
    default: return freeVRRate<S>(c, u[0], u[1], u[2], sqrt(u[3] * u[3] + u[4] * u[4]), u[5], u[6]);
    }
  }
  template <class S> void initialState(const S *p, S *u0) const {
    const auto s = steadyState<S>(c, p[0], p[1], p[3], p[4]);
    u0[0] = s.Efd, u0[1] = s.RF, u0[2] = s.VR;
    u0[3] = s.Vm + s.VR / p[2];  // Vref: the regulator is at rest at t = 0
    u0[4] = p[2];
  }
};

// One admittance entry Y_ij: reads (Vr_j, Vi_j), writes the current-balance rows of bus i
// (imaginary part B Vr + G Vi first, then the real part G Vr − B Vi, as in ex9bus). The
// diagonal entries also carry the power-flow voltage of bus i as the Newton guess at t = 0.
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
// scaled by the power-flow voltage |V0| of its bus (param).
struct Load {
  static constexpr int numReads = 2, numWrites = 2, numParams = 1;
  PetscReal P0, Q0;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    const S &Vr = u[0], &Vi = u[1], &Vm0 = p[0];
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
struct FrequencyViolation {
  static constexpr int numReads = 1;
  PetscReal fmax, fmin, sigma, eta;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    using std::pow;
    const S f = u[0] / (2 * PETSC_PI);
    S v = 0.0;
    if (f > fmax) v = f - fmax;
    else if (f < fmin) v = fmin - f;
    else return S(0.0);
    return eta == 2.0 ? S(sigma * v * v) : S(sigma * pow(v, eta));
  }
};

struct Settings {
  PetscInt faultBus = 8;  // 0-based global bus (bus 9 of area 1)
  PetscReal rfault = 1e-4;
  PetscReal fmax = 60.5, fmin = 59.5, sigma = 1.0, eta = 2.0;
  Layout layout;           // -areas N, -param_areas K
  PetscReal tieR = 0.01, tieX = 0.1;  // series impedance of each tie line between areas (pu)
};

// Tie lines between consecutive areas a and a+1 join the same bus of both (buses 5 and 8):
// identical areas have identical power-flow voltages there, so the ties carry no current in the
// initial state and every area starts at ex9bus' equilibrium; the fault then spreads through them.
constexpr PetscInt tieBuses[2] = {4, 7};

class Grid : public LocalKernelModel {
public:
  explicit Grid(const Settings &s) : s_(s) {}
  const Layout &layout() const { return s_.layout; }
  const Settings &settings() const { return s_; }

  // Collective.
  PetscErrorCode build() {
    const Layout &L = s_.layout;
    PetscFunctionBeginUser;
    PetscCheck(L.areas >= 1 && L.paramAreas >= 0 && L.paramAreas <= L.areas, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: need -areas >= 1 and 0 <= -param_areas <= -areas (got %" PetscInt_FMT ", %" PetscInt_FMT ")", L.areas, L.paramAreas);
    PetscCheck(s_.faultBus >= 0 && s_.faultBus < L.numBuses(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: -fault_bus must be 1..%" PetscInt_FMT " (bus b of area a is 9(a-1)+b)", L.numBuses());
    PetscCheck(s_.rfault > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: -rfault must be positive");
    PetscCheck(L.paramAreas >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: -param_areas must be >= 1 (the fault times are parameters of area 1)");
    PetscCall(setSizes(L.numStates()));
    std::vector<PetscInt> alg;
    for (PetscInt g = 0; g < L.numGens(); ++g) alg.push_back(L.gs(g, 4)), alg.push_back(L.gs(g, 5));
    for (PetscInt b = 0; b < L.numBuses(); ++b) alg.push_back(L.vr(b)), alg.push_back(L.vi(b));
    std::sort(alg.begin(), alg.end());
    setAlgebraic(alg);
    for (PetscInt g = 0; g < L.numGens(); ++g) {
      const PetscInt b = L.genBusOf(g), local = g % areaGens;
      const bool param = L.hasParams(g / areaGens);
      const PetscReal Vm = std::hypot(V0[2 * genBus[local]], V0[2 * genBus[local] + 1]), th = std::atan2(V0[2 * genBus[local] + 1], V0[2 * genBus[local]]);
      const Coupling machine{{L.gs(g, 0), L.gs(g, 1), L.gs(g, 2), L.gs(g, 3), L.gs(g, 4), L.gs(g, 5), L.gs(g, 6), L.vr(b), L.vi(b)},
                             {L.gs(g, 0), L.gs(g, 1), L.gs(g, 2), L.gs(g, 3), L.gs(g, 4), L.gs(g, 5), L.vr(b), L.vi(b)},
                             param ? std::vector<PetscInt>{L.pP(g), L.pQ(g), L.pVm(b), L.pTh(b)} : std::vector<PetscInt>{},
                             {}};
      const Coupling exciter{{L.gs(g, 6), L.gs(g, 7), L.gs(g, 8), L.vr(b), L.vi(b), L.vref(g), L.ka(g)},
                             {L.gs(g, 6), L.gs(g, 7), L.gs(g, 8), L.vref(g), L.ka(g)},
                             param ? std::vector<PetscInt>{L.pP(g), L.pQ(g), L.pKA(g), L.pVm(b), L.pTh(b)} : std::vector<PetscInt>{},
                             {4 * g + HitMax, 4 * g + HitMin, 4 * g + LeaveMax, 4 * g + LeaveMin}};
      if (param) {
        add(Machine{gen[local]}, machine);
        add(Exciter{gen[local], g}, exciter);
      } else {
        add(FixedParameters<Machine>{Machine{gen[local]}, {P0[local], Q0[local], Vm, th}}, machine);
        add(FixedParameters<Exciter>{Exciter{gen[local], g}, {P0[local], Q0[local], 20.0, Vm, th}}, exciter);
      }
    }
    for (PetscInt a = 0; a < L.areas; ++a) {
      const PetscInt first = areaBuses * a;
      for (const YEntry &y : Ybus) {
        const bool diag = y.i == y.j;
        add(Admittance{y.G, y.B, diag ? V0[2 * y.i] : 0.0, diag ? V0[2 * y.i + 1] : 0.0},
            {{L.vr(first + y.j), L.vi(first + y.j)}, {L.vr(first + y.i), L.vi(first + y.i)}, {}, {}});
      }
      for (PetscInt l = 0; l < 3; ++l) {
        const PetscInt b = first + loadBus[l];
        const Coupling c{{L.vr(b), L.vi(b)}, {L.vr(b), L.vi(b)}, L.hasParams(a) ? std::vector<PetscInt>{L.pVm(b)} : std::vector<PetscInt>{}, {}};
        if (L.hasParams(a)) add(Load{loadP[l], loadQ[l]}, c);
        else add(FixedParameters<Load>{Load{loadP[l], loadQ[l]}, {std::hypot(V0[2 * loadBus[l]], V0[2 * loadBus[l] + 1])}}, c);
      }
      if (a + 1 == L.areas) continue;
      const PetscReal z2 = s_.tieR * s_.tieR + s_.tieX * s_.tieX, G = s_.tieR / z2, B = -s_.tieX / z2;  // y = 1/(R + jX)
      for (PetscInt t : tieBuses) {
        const PetscInt i = first + t, j = first + areaBuses + t;
        for (auto [row, col, sign] : {std::tuple{i, i, 1.0}, std::tuple{i, j, -1.0}, std::tuple{j, j, 1.0}, std::tuple{j, i, -1.0}})
          add(Admittance{sign * G, sign * B, 0.0, 0.0}, {{L.vr(col), L.vi(col)}, {L.vr(row), L.vi(row)}, {}, {}});
      }
    }
    add(FaultShunt{1.0 / s_.rfault}, {{L.vr(s_.faultBus), L.vi(s_.faultBus)}, {L.vr(s_.faultBus), L.vi(s_.faultBus)}, {}, {}});
    const PetscInt on = L.pTon(), off = L.pToff();
    addTimeEvent("fault_on", [on](const TimeScalar *p) -> TimeScalar { return p[on]; });
    addTimeEvent("fault_off", [off](const TimeScalar *p) -> TimeScalar { return p[off]; });
    addTimeEvent("limiter_check_on", [on](const TimeScalar *p) -> TimeScalar { return p[on]; });
    addTimeEvent("limiter_check_off", [off](const TimeScalar *p) -> TimeScalar { return p[off]; });
    PetscCall(setUp());
    PetscFunctionReturn(0);
  }

  DiscreteState initialDiscreteState() const override { return DiscreteState(1 + s_.layout.numGens(), 0); }
  std::vector<PetscReal> defaultParameters() const override {
    const Layout &L = s_.layout;
    std::vector<PetscReal> p(L.numParams());
    for (PetscInt g = 0; g < areaGens * L.paramAreas; ++g) p[L.pP(g)] = P0[g % areaGens], p[L.pQ(g)] = Q0[g % areaGens], p[L.pKA(g)] = 20.0;
    p[L.pTon()] = 1.0, p[L.pToff()] = 1.2;
    for (PetscInt b = 0; b < areaBuses * L.paramAreas; ++b) {
      const PetscInt k = b % areaBuses;
      p[L.pVm(b)] = std::hypot(V0[2 * k], V0[2 * k + 1]), p[L.pTh(b)] = std::atan2(V0[2 * k + 1], V0[2 * k]);
    }
    return p;
  }
  std::vector<std::string> parameterNames() const override {
    const Layout &L = s_.layout;
    std::vector<std::string> n(L.numParams());
    for (PetscInt g = 0; g < areaGens * L.paramAreas; ++g) {
      const std::string k = std::to_string(g + 1);
      n[L.pP(g)] = "P" + k, n[L.pQ(g)] = "Q" + k, n[L.pKA(g)] = "KA" + k;
    }
    n[L.pTon()] = "t_on", n[L.pToff()] = "t_off";
    for (PetscInt b = 0; b < areaBuses * L.paramAreas; ++b) n[L.pVm(b)] = "Vm" + std::to_string(b + 1), n[L.pTh(b)] = "th" + std::to_string(b + 1);
    return n;
  }

  PetscInt numGuards() const override { return 4 * s_.layout.numGens(); }
  GuardInfo guardInfo(PetscInt j) const override {
    const std::string g = std::to_string(j / 4 + 1);
    switch (j % 4) {
    case HitMax: return {"VR" + g + "_hits_max", Direction::Rising};
    case HitMin: return {"VR" + g + "_hits_min", Direction::Falling};
    case LeaveMax: return {"VR" + g + "_leaves_max", Direction::Falling};
    default: return {"VR" + g + "_leaves_min", Direction::Rising};
    }
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override {
    const PetscInt flag = d[limiterFlag(j / 4)];
    switch (j % 4) {
    case HitMax:
    case HitMin: return flag == 0;
    case LeaveMax: return flag == 1;
    default: return flag == -1;
    }
  }

  // Collective (the engine calls it on every rank with the replicated d).
  PetscErrorCode transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const override {
    PetscFunctionBeginUser;
    if (id.kind == EventId::Guard) {
      const PetscInt g = id.index / 4;
      const PetscInt k = id.index % 4;
      d[limiterFlag(g)] = k == HitMax ? 1 : k == HitMin ? -1 : 0;
      PetscFunctionReturn(0);
    }
    switch (id.index) {
    case FaultOn: d[0] = 1; break;
    case FaultOff: d[0] = 0; break;
    default: {
      // u is the state after the fault switched and the network was re-solved. A limiter whose
      // free VR' now points back into the band is released (no crossing would ever report it).
      // The leave-guards depend on the state only (Vref, KA are states), so p is not needed.
      std::vector<PetscScalar> local(numGuards(), 0.0), all(numGuards(), 0.0);
      const std::vector<PetscReal> unused(s_.layout.numParams(), 0.0);
      PetscCall(guards(t, u, ModeContext{unused, d}, local.data()));
      PetscCallMPI(MPI_Allreduce(local.data(), all.data(), (int)numGuards(), MPIU_SCALAR, MPIU_SUM, comm()));
      for (PetscInt g = 0; g < s_.layout.numGens(); ++g) {
        const PetscScalar rate = all[4 * g + LeaveMax];  // = free VR' (same value for LeaveMin)
        PetscInt &flag = d[limiterFlag(g)];
        if ((flag == 1 && rate < 0) || (flag == -1 && rate > 0)) flag = 0;
      }
    }
    }
    PetscFunctionReturn(0);
  }

private:
  Settings s_;
};

class FrequencyCost : public LocalKernelCost {
public:
  FrequencyCost(const Grid &grid, PetscInt g, const Settings &s) : LocalKernelCost(grid), g_(g) {
    add(FrequencyViolation{s.fmax, s.fmin, s.sigma, s.eta}, {{grid.layout().gs(g, 3)}, {}, {}, {}});
  }
  std::string name() const override { return "H" + std::to_string(g_ + 1); }

private:
  PetscInt g_;
};

} // namespace wecc9

#ifndef HYBRIDSENS_EXAMPLE_NO_MAIN
using namespace wecc9;

// Value of global entry i of v on every rank.
static PetscErrorCode globalEntry(Vec v, PetscInt i, PetscScalar *value) {
  PetscInt lo, hi;
  PetscScalar mine = 0;
  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  if (i >= lo && i < hi) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(v, &a));
    mine = a[i - lo];
    PetscCall(VecRestoreArrayRead(v, &a));
  }
  PetscCallMPI(MPI_Allreduce(&mine, value, 1, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)v)));
  PetscFunctionReturn(0);
}

// -wecc9_states FILE: every step start (post-event state) and the final state, one CSV line
// "t,u_0,...,u_50" each, written by rank 0 (for the PETSc peer test and the plotting script).
struct StateWriter {
  FILE *file = nullptr;
  VecScatter toZero = nullptr;
  Vec all = nullptr;
  PetscReal lastT = -1;
  PetscInt lastStep = -1;
};
static PetscErrorCode writeStates(TS, PetscInt step, PetscReal t, Vec u, void *ctx) {
  auto *w = static_cast<StateWriter *>(ctx);
  PetscFunctionBeginUser;
  if (step == w->lastStep && t == w->lastT) PetscFunctionReturn(0);  // the final monitor call repeats the last start
  w->lastStep = step, w->lastT = t;
  if (!w->toZero) PetscCall(VecScatterCreateToZero(u, &w->toZero, &w->all));
  PetscCall(VecScatterBegin(w->toZero, u, w->all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(w->toZero, u, w->all, INSERT_VALUES, SCATTER_FORWARD));
  if (w->file) {
    const PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(w->all, &n));
    PetscCall(VecGetArrayRead(w->all, &a));
    std::fprintf(w->file, "%.17g", (double)t);
    for (PetscInt i = 0; i < n; ++i) std::fprintf(w->file, ",%.17g", (double)a[i]);
    std::fprintf(w->file, "\n");
    PetscCall(VecRestoreArrayRead(w->all, &a));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode printGradientTable(const char *title, const std::vector<std::vector<PetscScalar>> &g, const std::vector<std::string> &names) {
  PetscFunctionBeginUser;
  if (g.empty()) PetscFunctionReturn(0);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s:\n", title));
  for (size_t j0 = 0; j0 < names.size(); j0 += 10) {  // blocks of 10 columns
    const size_t j1 = std::min(names.size(), j0 + 10);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-4s", "cost"));
    for (size_t j = j0; j < j1; ++j) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %13s", ("d/d" + names[j]).c_str()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    for (size_t k = 0; k < g.size(); ++k) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  H%-3zu", k + 1));
      for (size_t j = j0; j < j1; ++j) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " % 13.6e", (double)g[k][j]));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "WECC 9-bus transient stability with exciter limiters and a fault; sensitivities of frequency violations.\n"));
  {
    Settings s;
    PetscInt faultBus1 = s.faultBus + 1;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-areas", &s.layout.areas, nullptr));
    s.layout.paramAreas = s.layout.areas;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-param_areas", &s.layout.paramAreas, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-fault_bus", &faultBus1, nullptr));
    s.faultBus = faultBus1 - 1;
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-rfault", &s.rfault, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tie_r", &s.tieR, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tie_x", &s.tieX, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-freq_max", &s.fmax, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-freq_min", &s.fmin, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-sigma", &s.sigma, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-eta", &s.eta, nullptr));
    PetscCheck(s.eta >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: -eta must be >= 1 (the metric must be differentiable)");
    const Layout &L = s.layout;
    PetscInt costGens = L.numGens();
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-cost_generators", &costGens, nullptr));
    PetscCheck(costGens >= 0 && costGens <= L.numGens(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: -cost_generators must be 0..%" PetscInt_FMT, L.numGens());

    Grid grid(s);
    PetscCall(grid.build());
    std::vector<std::unique_ptr<FrequencyCost>> costs;
    for (PetscInt g = 0; g < costGens; ++g) {
      costs.push_back(std::make_unique<FrequencyCost>(grid, g, s));
      PetscCall(costs.back()->setUp());
    }

    std::vector<PetscReal> p = grid.defaultParameters();
    const auto pnames = grid.parameterNames();
    for (PetscInt k = 0; k < L.numParams(); ++k) PetscCall(PetscOptionsGetReal(nullptr, nullptr, ("-" + pnames[k]).c_str(), &p[k], nullptr));
    PetscCheck(p[L.pTon()] < p[L.pToff()], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: the fault must be applied before it is cleared (t_on < t_off)");

    Solver solver(grid);
    for (auto &c : costs) solver.addCost(*c);
    PetscCall(solver.setParameters(p));
    PetscCall(solver.setFromOptions());
    TS ts = solver.ts();
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(solver.setFromOptions());
    char statesFile[PETSC_MAX_PATH_LEN] = "";
    PetscBool writeTrajectory = PETSC_FALSE;
    StateWriter writer;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-wecc9_states", statesFile, sizeof statesFile, &writeTrajectory));
    if (writeTrajectory) {
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
      if (!rank) {
        writer.file = std::fopen(statesFile, "w");
        PetscCheck(writer.file, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "wecc9: cannot write %s", statesFile);
      }
      PetscCall(TSMonitorSet(ts, writeStates, &writer, nullptr));
    }
    const double wall0 = MPI_Wtime();
    PetscCall(solver.solve());
    const double wall = MPI_Wtime() - wall0;
    if (writeTrajectory) {
      PetscCall(TSMonitorCancel(ts));
      if (writer.file) std::fclose(writer.file);
      PetscCall(VecScatterDestroy(&writer.toZero));
      PetscCall(VecDestroy(&writer.all));
    }

    PetscReal tf = solver.finalTime();
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "wecc9: fault at bus %" PetscInt_FMT " on [%g, %g], T = %g, %" PetscInt_FMT " steps, %zu events\n",
                          s.faultBus + 1, (double)p[L.pTon()], (double)p[L.pToff()], (double)tf, solver.stats().steps, solver.events().size()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "limiter events:\n"));
    for (const auto &r : solver.events().records()) {
      bool limiterChanged = false;
      for (PetscInt g = 0; g < L.numGens(); ++g) limiterChanged = limiterChanged || r.before[limiterFlag(g)] != r.after[limiterFlag(g)];
      if (!limiterChanged) continue;
      for (PetscInt g = 0; g < L.numGens(); ++g) {
        const PetscInt a = r.before[limiterFlag(g)], b = r.after[limiterFlag(g)];
        if (a == b) continue;
        PetscScalar VR;
        PetscCall(globalEntry(r.uplus, L.gs(g, 8), &VR));
        const char *what = b == 1 ? "hits VRmax" : b == -1 ? "hits VRmin" : a == 1 ? "leaves VRmax" : "leaves VRmin";
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.12f  VR%" PetscInt_FMT " %s (%s)  VR = %.10g\n", (double)r.time, g + 1, what,
                              r.name.c_str(), (double)VR));
      }
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final generator states%s:\n", L.areas > 1 ? " (area 1)" : ""));
    for (PetscInt g = 0; g < areaGens; ++g) {
      PetscScalar delta, w, VR;
      PetscCall(globalEntry(solver.finalState(), L.gs(g, 2), &delta));
      PetscCall(globalEntry(solver.finalState(), L.gs(g, 3), &w));
      PetscCall(globalEntry(solver.finalState(), L.gs(g, 8), &VR));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  gen %" PetscInt_FMT ": delta = %.10f  f = %.10f Hz  VR = %.10f\n", g + 1, (double)delta,
                            (double)(w / (2 * PETSC_PI)), (double)VR));
    }
    if (!solver.objective().empty()) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "frequency violations (f in [%g, %g] Hz, sigma %g, eta %g):", (double)s.fmin, (double)s.fmax,
                            (double)s.sigma, (double)s.eta));
      for (size_t k = 0; k < solver.objective().size(); ++k)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  H%zu = %.12e", k + 1, (double)solver.objective()[k]));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
    const auto names = grid.parameterNames();
    if (L.areas == 1) {  // larger grids: the summary JSON has the full gradients
      PetscCall(printGradientTable("forward sensitivities dH/dp", solver.forwardGradientP(), names));
      PetscCall(printGradientTable("adjoint gradients dH/dp", solver.adjointGradientP(), names));
    }
    if (!solver.forwardGradientP().empty() && !solver.adjointGradientP().empty()) {
      PetscReal diff = 0, scale = 0;
      for (size_t k = 0; k < solver.adjointGradientP().size(); ++k)
        for (size_t j = 0; j < names.size(); ++j) {
          diff = std::max(diff, (PetscReal)std::fabs(solver.adjointGradientP()[k][j] - solver.forwardGradientP()[k][j]));
          scale = std::max(scale, (PetscReal)std::fabs(solver.adjointGradientP()[k][j]));
        }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max |adjoint - forward| = %.3e (relative %.3e)\n", (double)diff, (double)(scale > 0 ? diff / scale : diff)));
    }
    // Seed 002 Table V layout: ∂H_i/∂P_g (rows H_i, columns the dispatch of generator g).
    const auto &gP = !solver.adjointGradientP().empty() ? solver.adjointGradientP() : solver.forwardGradientP();
    if (!gP.empty()) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sensitivities of frequency violations to dispatch at t = %g (%s):\n        %12s %12s %12s\n", (double)tf,
                            !solver.adjointGradientP().empty() ? "adjoint" : "forward", "P_g^1", "P_g^2", "P_g^3"));
      for (PetscInt k = 0; k < std::min<PetscInt>(areaGens, (PetscInt)gP.size()); ++k)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  H%-4" PetscInt_FMT " %12.6f %12.6f %12.6f\n", k + 1, (double)gP[k][L.pP(0)], (double)gP[k][L.pP(1)],
                              (double)gP[k][L.pP(2)]));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "timing: solve%s%s %.4f s\n", solver.forwardSensitivities() ? " + forward sensitivities" : "",
                          solver.adjoint() ? " + adjoint" : "", wall));
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
#endif
