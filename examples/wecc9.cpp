// wecc9 — transient stability of the WECC 3-generator 9-bus system with exciter limiters and a
// fault, and the exact sensitivities of the frequency-violation metrics of seed 002 (eq. 30).
//
// The model is the DAE of PETSc's power_grid/stability_9bus/ex9bus.c (data of Sauer & Pai,
// Power System Dynamics and Stability, ch. 7), re-expressed as local AD kernels
// (hybridsens/ad_local.hpp): every component is written once as a template and all derivatives
// (Jacobian, ∂f/∂p, guard gradients, ∂u0/∂p) come from Sacado.
//
// State (ex9bus' ordering, 45 entries, then 12 constant states, then 6 governor states):
//   generator g (rows 9g..9g+8): E'q, E'd, δ, ω (differential), Id, Iq (algebraic stator
//   currents), Efd, RF, VR (IEEE type-1 exciter, differential);
//   bus b (rows 27+2b, 27+2b+1): Vr, Vi (algebraic, rectangular coordinates);
//   constant states (ẋ = 0, x(0) from the initialization): rows 45+2g, 46+2g Vref_g and KA_g (so
//   that the limiter tests run at a fault clearing need only the state, see limiter_check
//   below), rows 51+g Pm_g (mechanical power: TM, or the governor's Pref), rows 54+l the loads'
//   reference |V0| (they come out of the power flow, so they cannot be parameters);
//   with -governors rows 57+2g, 58+2g the TGOV1 valve x1 and turbine x2 of generator g.
// Generator g (two-axis model, M = 2H/ω_s, D = 0.1 M, TM = Pm_g without governors):
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
// Governors (-governors; seed 002 §V.C uses TGOV1): per generator a TGOV1 steam turbine-governor
//   (PSS/E TGOV1, data per unit of the machine rating S_g, k = S_g / 100 MVA):
//     T1 x1' = Pref − k Δω/R − x1  with the valve x1 ∈ k [Vmin, Vmax] (non-windup limiter: the
//     same kernel code and hit/leave state events as the exciters' VR, guards named Pv<g>_...),
//     T3 x2' = x1 − x2,   TM = x2 + (T2/T3)(x1 − x2) − k Dt Δω,   Δω = (ω − ω_s)/ω_s,
//   Pref = Pm_g (at rest at t = 0). Data: R = 0.05, T1 = 0.5, T2 = 3, T3 = 10, Vmax = 1, Vmin = 0,
//   Dt = 0 — the typical values of IEC 61970 CIM GovSteam0 (the CIM form of PSS/E TGOV1);
//   ratings 247.5, 192, 128 MVA (Anderson & Fouad, Power System Control and Stability, Table 2.1).
//   R_g are parameters; -tgov_T1, -tgov_T2, -tgov_T3, -tgov_Dt, -tgov_Vmin, -tgov_Vmax set the rest.
//   With the defaults no valve limit is reached in the default scenario (the valve of
//   generator 3 closes to 0.26 of 1.28); -tgov_Vmin 0.5 makes it hit its minimum at 2.25 s and
//   leave it at 2.31 s. Measured (T = 20): H_i drop from (0.104, 0.211, 0.256) to (0.057, 0.131,
//   0.176), and the centre-of-inertia frequency error over [15, 20] s from 1.5e-2 to 1.8e-3 Hz.
// Initial state (-wecc9_init power_flow, the default): the AC power flow for the current p —
//   slack bus 1 (Vm1, θ1 given), PV buses 2, 3 (P2, P3, Vm2, Vm3 given), PQ buses with the loads'
//   (P, Q) drawn at their power-flow |V| — solved by Newton on the 14 mismatch equations (θ2..θ9,
//   Vm4..Vm9 unknown) built from the same Ybus data; P1, Q1..Q3 and the loads' reference |V| come
//   out of it, then every generator is put at rest by ex9bus' closed form (Vref = |V| + VR/KA,
//   Pm = P). ∂u0/∂p is exact: after the double Newton solve two Newton steps are repeated in the
//   Sacado type of the start kernel, the first of which is x* − F_x⁻¹F(x*, p) with F(x*) = 0, i.e.
//   exactly the implicit derivative −F_x⁻¹F_p (the second makes second derivatives exact as
//   well: (λᵀu0)_pp δp agrees with differences of λᵀ∂u0/∂p to 1.4e-9, with one step only it is
//   off by 79 %); chained with the closed form by the same AD. u0 is then an equilibrium for every p
//   (|f(u0)| ≤ 3e-14 measured at P2 = 1.7); at the default p the power flow reproduces ex9bus' V0
//   to 3.5e-14 and the trajectory of the closed form below (H_i to 8.5e-11).
//   (The model's initialState callbacks are final in LocalKernelModel; the power flow lives in a
//   start kernel with an initialState template like any other, so ∂u0/∂p and the second-order
//   product come from the library's machinery.)
//   -wecc9_init closed_form: no re-solve; each generator's state follows the closed form from its
//   own (P_g, Q_g, Vm, θ of its bus), the loads' reference |V0| is the parameter Vm of the load bus,
//   and the engine makes the network consistent at t = 0 — away from the nominal p the system then
//   starts off equilibrium (|f(u0)| = 6.7e-2 at P2 = 1.7). The original formulation of this
//   example; tests/example_wecc9.py and example_wecc9_areas.py run it so that every voltage
//   parameter moves u0.
//   -wecc9_check_start prints |f(u0)| and compares ∂u0/∂p with central differences of u0, and
//   (λᵀu0)_pp δp with central differences of λᵀ∂u0/∂p.
// Parameters p (29, 32 with governors): P1..P3, Q1..Q3 (dispatch), t_on, t_off (fault times),
//   KA1..KA3 (exciter gains), Vm1..Vm9, th1..th9 (magnitudes and angles of the initial bus
//   voltages, seed 002's 24 with the dispatch), with -governors R1..R3 (droops). With the power-flow
//   start the outputs of the power flow — P1 (slack), Q1..Q3, Vm4..Vm9, θ2..θ9 — have zero
//   sensitivity, like seed 002 Table V's P_g^1 column (exactly 0: generator 1 is the slack);
//   θ1 turns every angle alike, to which the model is invariant (its sensitivity is round-off).
//   With the closed form the voltages enter u0 through the generators (generator buses) and the
//   loads' reference |V0| (load buses); buses 4, 7, 9 carry neither.
// Costs (seed 002 eq. 30): H_i = σ ∫ max(0, f_i − f⁺, f⁻ − f_i)^η dt per generator, f_i = ω_i/2π
//   in Hz, f± = 60 ± 0.5 Hz, σ = 1, η = 2 (options -freq_max, -freq_min, -sigma, -eta).
//   After them, user-chosen costs of named quantities (see Expression below; generators and buses
//   numbered globally): -wecc9_terminal_cost e1,e2,... adds ψ = e_i(u(T)) each, and
//   -wecc9_integral_cost e1,... adds ∫_0^T e_i(u)² dt each, e.g. delta2-delta1 (rotor-angle
//   spread), dw3 (speed deviation ω − ω_s), Vm9-1 (bus-voltage deviation from 1 pu), VR3.
//   Unknown names, out-of-range indices and malformed expressions are refused.
// Sensitivity trajectories (seed 002 Figs. 6-7, bottom): -wecc9_sensitivities FILE writes, at
//   every step end and after every transition (Solver::setForwardMonitor), the running integral
//   of every integral cost with its gradient, and the values and rows of S = du/dp of the
//   quantities of -wecc9_sensitivity_rows (default VR1..3, omega1..3); -wecc9_adjoint FILE
//   writes λ of every cost at those rows over time (Solver::setAdjointMonitor). Rank 0 writes.
//   scripts/plot_wecc9.py draws dH_i/dP_g(t), dV_R^i/dVm_i(t) and λ of V_R^i(T) from them.
//
// Defaults as ex9bus: Crank–Nicolson, dt = 0.01, T = 5, fault at bus 9 from 1.0 to 1.2 s, Rfault = 1e-4.
//
// Several areas (-areas N): N copies of the 9-bus system, area a+1 tied to area a by two lines
// (R + jX = 0.01 + 0.1j by default, -tie_r/-tie_x) between their buses 5 and between their buses 8.
// The ties join buses of equal power-flow voltage, so they carry no current at t = 0 and every
// area starts at ex9bus' equilibrium (tested: drift 2e-11 without a fault). The power-flow start
// solves each area's own 9-bus power flow (the ties are not part of it): with off-nominal
// parameters in one area the ties then carry current at t = 0 and the start is off equilibrium
// (|f(u0)| = 0.13 at P2 = 1.7 with 3 areas). Generators and buses
// are numbered globally (bus b of area a is 9(a−1)+b; -fault_bus 16 faults bus 7 of area 2); the
// parameters of the first K areas are parameters (-param_areas K, default all: 27K + 2), the other
// areas use the nominal data as constants; -cost_generators M keeps H_1..H_M (default all).
// 112 areas = 1008 buses, 6384 states (57 per area), 336 generators: the benchmark system of bench/grid_timing.py.
//
// Verified (tests/example_wecc9.py, example_wecc9_init_gov.py, peer_wecc9_ex9bus.py): same limiter events as ex9bus
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
//   build/examples/wecc9 -P2 1.7 -wecc9_check_start              # re-solved power flow, ∂u0/∂p vs FD
//   build/examples/wecc9 -governors -tgov_Vmin 0.5 -hs_adjoint -hs_forward   # TGOV1, valve limit hit
// Options: -wecc9_init power_flow|closed_form, -wecc9_check_start, -governors, -tgov_T1 ... -tgov_Vmax,
// -areas, -param_areas, -cost_generators, -tie_r, -tie_x, -fault_bus (1-based global, default 9), -rfault, every parameter by its name (-P2 1.7,
// -t_off 1.15, -KA3 25, -Vm5 1.0, ...), -freq_max, -freq_min, -sigma, -eta,
// -wecc9_states FILE (post-event state at every step start, CSV; scripts/plot_wecc9.py),
// -wecc9_terminal_cost, -wecc9_integral_cost, -wecc9_sensitivities FILE (needs -hs_forward),
// -wecc9_adjoint FILE (needs -hs_adjoint), -wecc9_sensitivity_rows e1,e2,...
//   build/examples/wecc9 -hs_forward -hs_adjoint -wecc9_terminal_cost VR1,VR2,VR3 -wecc9_integral_cost dw3
//     -wecc9_states s.csv -hs_summary s.json -wecc9_sensitivities sens.csv -wecc9_adjoint adj.csv
//   python3 scripts/plot_wecc9.py s.csv s.json --sensitivities sens.csv --adjoint adj.csv
#include <hybridsens/ad_local.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace hybridsens;

namespace wecc9 {

constexpr PetscReal omegaS = 2 * PETSC_PI * 60;  // synchronous speed (rad/s)
// One area is ex9bus' 9-bus system; -areas N couples N identical copies (see Layout).
constexpr PetscInt areaGens = 3, areaBuses = 9, genStates = 9;
// Per area: generators, buses, then constant states (Vref, KA) per generator, Pm per generator,
// the loads' reference |V0| (57 rows), then with -governors (x1, x2) per generator.
constexpr PetscInt areaConstStart = areaGens * genStates + 2 * areaBuses;  // 45
constexpr PetscInt areaBaseStates = areaConstStart + 3 * areaGens + 3;     // 57
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
// State: area a occupies rows [na, na + n) (n = 57, 63 with -governors): its generators (9 rows
// each: 0 E'q 1 E'd 2 δ 3 ω 4 Id 5 Iq 6 Efd 7 RF 8 VR), its buses (Vr, Vi each; Vr's row is also
// the bus' "imaginary current" balance, Vi's the "real current" one), then constant states
// (ẋ = 0, x(0) from the initialization): (Vref, KA) per generator, Pm per generator (mechanical
// power, the governor's Pref), the loads' reference |V0|; then with -governors (x1 valve, x2
// turbine) per generator. Generators and buses are numbered globally: generator g is generator
// g % 3 of area g / 3, bus b is bus b % 9 of area b / 9. Contiguous areas keep a rank's rows
// together in parallel.
// Parameters: P_g, Q_g, KA_g of the 3K generators and Vm_b, θ_b of the 9K buses of the
// parameter areas, and the two fault times; for K = 1 the order is (P1..3, Q1..3, t_on, t_off,
// KA1..3, Vm1..9, th1..9) — 29 in all; with -governors the droops R_g follow (32 for K = 1).
// Areas beyond K use the nominal data as constants.
struct Layout {
  PetscInt areas = 1, paramAreas = 1;
  bool governors = false;
  PetscInt areaStates() const { return areaBaseStates + (governors ? 2 * areaGens : 0); }
  PetscInt numGens() const { return areaGens * areas; }
  PetscInt numBuses() const { return areaBuses * areas; }
  PetscInt numStates() const { return areaStates() * areas; }
  PetscInt gs(PetscInt g, PetscInt k) const { return areaStates() * (g / areaGens) + genStates * (g % areaGens) + k; }
  PetscInt vr(PetscInt b) const { return areaStates() * (b / areaBuses) + areaGens * genStates + 2 * (b % areaBuses); }
  PetscInt vi(PetscInt b) const { return vr(b) + 1; }
  PetscInt vref(PetscInt g) const { return areaStates() * (g / areaGens) + areaConstStart + 2 * (g % areaGens); }
  PetscInt ka(PetscInt g) const { return vref(g) + 1; }
  PetscInt pm(PetscInt g) const { return areaStates() * (g / areaGens) + areaConstStart + 2 * areaGens + g % areaGens; }
  PetscInt loadRef(PetscInt a, PetscInt l) const { return areaStates() * a + areaConstStart + 3 * areaGens + l; }
  PetscInt gov(PetscInt g, PetscInt k) const { return areaStates() * (g / areaGens) + areaBaseStates + 2 * (g % areaGens) + k; }  // k: 0 x1, 1 x2
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
  PetscInt pR(PetscInt g) const { return pTh(areaBuses * paramAreas) + g; }
  PetscInt numParams() const { return pR(governors ? areaGens * paramAreas : 0); }
  // Limiters: ℓ = g the exciter VR of generator g, ℓ = numGens() + g its governor valve.
  PetscInt numLimiters() const { return governors ? 2 * numGens() : numGens(); }
};

// Discrete state: d[0] fault on (0/1); d[1+ℓ] limiter ℓ: 0 free, +1 at max, −1 at min.
inline PetscInt limiterFlag(PetscInt l) { return 1 + l; }
// Guards of limiter ℓ: 4ℓ hit max, 4ℓ+1 hit min, 4ℓ+2 leave max, 4ℓ+3 leave min.
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
// One Newton step x ← x − F_x⁻¹ F in the scalar type T (partial pivoting on the values); F_x by
// forward AD over T. Returns ‖F(x)‖∞ before the step.
template <class T> PetscReal pfNewtonStep(T *x, const T *spec) {
  using J = Sacado::Fad::SFad<T, pfUnknowns>;
  constexpr int n = pfUnknowns;
  J xf[n], sf[pfSpecs], F[n];
  for (int i = 0; i < n; ++i) xf[i] = J(n, i, x[i]);
  for (int k = 0; k < pfSpecs; ++k) sf[k] = J(spec[k]);
  pfMismatch<J>(xf, sf, F);
  T A[n][n], b[n];
  PetscReal norm = 0;
  for (int i = 0; i < n; ++i) {
    b[i] = F[i].val();
    norm = std::max(norm, (PetscReal)std::fabs(Sacado::ScalarValue<T>::eval(b[i])));
    for (int j = 0; j < n; ++j) A[i][j] = F[i].dx(j);
  }
  for (int k = 0; k < n; ++k) {  // LU with partial pivoting; forward elimination on b alongside
    int piv = k;
    for (int i = k + 1; i < n; ++i)
      if (std::fabs(Sacado::ScalarValue<T>::eval(A[i][k])) > std::fabs(Sacado::ScalarValue<T>::eval(A[piv][k]))) piv = i;
    if (piv != k) {
      for (int j = 0; j < n; ++j) std::swap(A[k][j], A[piv][j]);
      std::swap(b[k], b[piv]);
    }
    for (int i = k + 1; i < n; ++i) {
      const T l = A[i][k] / A[k][k];
      for (int j = k + 1; j < n; ++j) A[i][j] -= l * A[k][j];
      b[i] -= l * b[k];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int j = i + 1; j < n; ++j) b[i] -= A[i][j] * b[j];
    b[i] /= A[i][i];
    x[i] -= b[i];
  }
  return norm;
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


// ---- kernels -------------------------------------------------------------------------------
// Machine g: reads (E'q, E'd, δ, ω, Id, Iq, Efd, Vr, Vi, Pm), writes (E'q, E'd, δ, ω, Id, Iq rows
// and the two current-balance rows of its bus). TM = Pm (a constant state) unless a governor
// supplies the mechanical power (governed: the Governor kernel adds TM/M to ω's row).
struct Machine {
  static constexpr int numReads = 10, numWrites = 8, numParams = 0;
  GenData c;
  bool governed;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    using std::cos;
    using std::sin;
    const S &Eqp = u[0], &Edp = u[1], &delta = u[2], &w = u[3], &Id = u[4], &Iq = u[5], &Efd = u[6], &Vr = u[7], &Vi = u[8];
    const S TM = governed ? S(0.0) : u[9];
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

// -wecc9_init closed_form: generator g from its own parameters (P_g, Q_g, Vm_b, θ_b, KA_g).
struct ClosedFormStart {
  static constexpr int numReads = 0, numWrites = Dynamic, numParams = 5;
  GenData c;
  bool governed;
  template <class S> void initialState(const S *p, S *u0) const { generatorStart<S>(c, p[0], p[1], p[2], p[3], p[4], governed, u0); }
};
// A constant state that starts at a parameter (closed_form: a load's reference |V0|).
struct ParameterStart {
  static constexpr int numReads = 0, numWrites = 1, numParams = 1;
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[0]; }
};
// -wecc9_init power_flow: the power flow of the area for params (Vm1, θ1, P2, P3, Vm2, Vm3, KA1,
// KA2, KA3), then every generator at rest on it and the loads' reference |V|; writes the
// generator rows (generatorStart order) of generators 1..3, the 3 load references, and (Vr, Vi)
// of the 9 buses (so u0 is consistent on the algebraic rows as well).
struct PowerFlowStart {
  static constexpr int numReads = 0, numWrites = Dynamic, numParams = pfSpecs + areaGens;
  bool governed;
  template <class S> void initialState(const S *p, S *u0) const {
    const PowerFlow<S> pf = solvePowerFlow<S>(p);
    const int rows = genStartRows + (governed ? govStartRows : 0);
    if (!pf.converged) {  // main() refuses such a p before the solve; never a silent number here
      for (int w = 0; w < areaGens * rows + 3 + 2 * areaBuses; ++w) u0[w] = std::numeric_limits<PetscReal>::quiet_NaN();
      return;
    }
    for (PetscInt g = 0; g < areaGens; ++g) {
      const PetscInt b = genBus[g];
      generatorStart<S>(gen[g], pf.P[g], pf.Q[g], pf.v.Vm[b], pf.v.th[b], p[pfSpecs + g], governed, u0 + g * rows);
    }
    for (PetscInt l = 0; l < 3; ++l) u0[areaGens * rows + l] = pf.v.Vm[loadBus[l]];
    using std::cos;
    using std::sin;
    for (PetscInt b = 0; b < areaBuses; ++b) {
      u0[areaGens * rows + 3 + 2 * b] = pf.v.Vm[b] * cos(pf.v.th[b]);
      u0[areaGens * rows + 3 + 2 * b + 1] = pf.v.Vm[b] * sin(pf.v.th[b]);
    }
  }
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

enum class Init { PowerFlow, ClosedForm };

struct Settings {
  PetscInt faultBus = 8;  // 0-based global bus (bus 9 of area 1)
  PetscReal rfault = 1e-4;
  PetscReal fmax = 60.5, fmin = 59.5, sigma = 1.0, eta = 2.0;
  Layout layout;           // -areas N, -param_areas K, -governors
  PetscReal tieR = 0.01, tieX = 0.1;  // series impedance of each tie line between areas (pu)
  Init init = Init::PowerFlow;        // -wecc9_init
  // TGOV1 typical data (IEC 61970 CIM GovSteam0 = PSS/E TGOV1: R 0.05, T1 0.5, T2 3, T3 10,
  // Vmax 1, Vmin 0, Dt 0, per unit of the machine rating); R is a parameter (R_g, default R).
  TGOV1Data tgov{0.5, 3.0, 10.0, 0.0, 0.0, 1.0};
  PetscReal R = 0.05;
};

// Machine ratings (MVA) of the WECC 9-bus system (Anderson & Fouad, Power System Control and
// Stability, Table 2.1): the governors' machine base.
const PetscReal ratingMVA[areaGens] = {247.5, 192.0, 128.0};

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
    const bool closedForm = s_.init == Init::ClosedForm;
    for (PetscInt g = 0; g < L.numGens(); ++g) {
      const PetscInt b = L.genBusOf(g), local = g % areaGens;
      const bool param = L.hasParams(g / areaGens);
      add(Machine{gen[local], L.governors},
          {{L.gs(g, 0), L.gs(g, 1), L.gs(g, 2), L.gs(g, 3), L.gs(g, 4), L.gs(g, 5), L.gs(g, 6), L.vr(b), L.vi(b), L.pm(g)},
           {L.gs(g, 0), L.gs(g, 1), L.gs(g, 2), L.gs(g, 3), L.gs(g, 4), L.gs(g, 5), L.vr(b), L.vi(b)},
           {},
           {}});
      add(Exciter{gen[local], {gen[local].VRmin, gen[local].VRmax, limiterFlag(g)}},
          {{L.gs(g, 6), L.gs(g, 7), L.gs(g, 8), L.vr(b), L.vi(b), L.vref(g), L.ka(g)}, {L.gs(g, 6), L.gs(g, 7), L.gs(g, 8), L.vref(g), L.ka(g)}, {}, guardsOf(g)});
      if (L.governors) {
        const PetscReal k = ratingMVA[local] / 100.0;
        const Governor tg{s_.tgov, k, gen[local].M(), {k * s_.tgov.Vmin, k * s_.tgov.Vmax, limiterFlag(L.numGens() + g)}};
        const Coupling c{{L.gov(g, 0), L.gov(g, 1), L.gs(g, 3), L.pm(g)}, {L.gov(g, 0), L.gov(g, 1), L.gs(g, 3)},
                         param ? std::vector<PetscInt>{L.pR(g)} : std::vector<PetscInt>{}, guardsOf(L.numGens() + g)};
        if (param) add(tg, c);
        else add(FixedParameters<Governor>{tg, {s_.R}}, c);
      }
      if (closedForm) {
        const PetscReal Vm = std::hypot(V0[2 * genBus[local]], V0[2 * genBus[local] + 1]), th = std::atan2(V0[2 * genBus[local] + 1], V0[2 * genBus[local]]);
        const ClosedFormStart start{gen[local], L.governors};
        const Coupling c{{}, generatorStartRows(g), param ? std::vector<PetscInt>{L.pP(g), L.pQ(g), L.pVm(b), L.pTh(b), L.pKA(g)} : std::vector<PetscInt>{}, {}};
        if (param) add(start, c);
        else add(FixedParameters<ClosedFormStart>{start, {P0[local], Q0[local], Vm, th, 20.0}}, c);
      }
    }
    for (PetscInt a = 0; a < L.areas; ++a) {
      const PetscInt first = areaBuses * a;
      // Initial state of the area (see the header): its own power flow, or the closed form.
      if (!closedForm) {
        std::vector<PetscInt> rows;
        for (PetscInt g = areaGens * a; g < areaGens * (a + 1); ++g) {
          const auto r = generatorStartRows(g);
          rows.insert(rows.end(), r.begin(), r.end());
        }
        for (PetscInt l = 0; l < 3; ++l) rows.push_back(L.loadRef(a, l));
        for (PetscInt b = first; b < first + areaBuses; ++b) rows.push_back(L.vr(b)), rows.push_back(L.vi(b));
        const PetscInt g0 = areaGens * a;
        const Coupling c{{}, rows,
                         L.hasParams(a) ? std::vector<PetscInt>{L.pVm(first), L.pTh(first), L.pP(g0 + 1), L.pP(g0 + 2), L.pVm(first + 1),
                                                                L.pVm(first + 2), L.pKA(g0), L.pKA(g0 + 1), L.pKA(g0 + 2)}
                                        : std::vector<PetscInt>{},
                         {}};
        const PowerFlowStart start{L.governors};
        if (L.hasParams(a)) add(start, c);
        else {
          std::array<PetscReal, PowerFlowStart::numParams> nominal{};
          const auto q = nominalParameters();
          const std::vector<PetscInt> idx{L.pVm(0), L.pTh(0), L.pP(1), L.pP(2), L.pVm(1), L.pVm(2), L.pKA(0), L.pKA(1), L.pKA(2)};
          for (size_t i = 0; i < idx.size(); ++i) nominal[i] = q[idx[i]];
          add(FixedParameters<PowerFlowStart>{start, nominal}, c);
        }
      }
      for (const YEntry &y : Ybus) {
        const bool diag = y.i == y.j && closedForm;  // power_flow: the start kernel writes V
        add(Admittance{y.G, y.B, diag ? V0[2 * y.i] : 0.0, diag ? V0[2 * y.i + 1] : 0.0},
            {{L.vr(first + y.j), L.vi(first + y.j)}, {L.vr(first + y.i), L.vi(first + y.i)}, {}, {}});
      }
      for (PetscInt l = 0; l < 3; ++l) {
        const PetscInt b = first + loadBus[l];
        add(Load{loadP[l], loadQ[l]}, {{L.vr(b), L.vi(b), L.loadRef(a, l)}, {L.vr(b), L.vi(b)}, {}, {}});
        if (!closedForm) continue;
        const Coupling c{{}, {L.loadRef(a, l)}, L.hasParams(a) ? std::vector<PetscInt>{L.pVm(b)} : std::vector<PetscInt>{}, {}};
        if (L.hasParams(a)) add(ParameterStart{}, c);
        else add(FixedParameters<ParameterStart>{ParameterStart{}, {std::hypot(V0[2 * loadBus[l]], V0[2 * loadBus[l] + 1])}}, c);
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

  // The power flow of parameter area a at p (power_flow initialization), in double: main()
  // refuses a p for which it does not converge, before the solve (the start kernel can only
  // return NaN then).
  PowerFlow<PetscReal> powerFlow(const std::vector<PetscReal> &p, PetscInt a) const {
    const Layout &L = s_.layout;
    const PetscInt b0 = areaBuses * a, g0 = areaGens * a;
    const PetscReal spec[pfSpecs] = {p[L.pVm(b0)], p[L.pTh(b0)], p[L.pP(g0 + 1)], p[L.pP(g0 + 2)], p[L.pVm(b0 + 1)], p[L.pVm(b0 + 2)]};
    return solvePowerFlow<PetscReal>(spec);
  }

  DiscreteState initialDiscreteState() const override { return DiscreteState(1 + s_.layout.numLimiters(), 0); }
  std::vector<PetscReal> defaultParameters() const override { return nominalParameters(); }
  std::vector<std::string> parameterNames() const override {
    const Layout &L = s_.layout;
    std::vector<std::string> n(L.numParams());
    for (PetscInt g = 0; g < areaGens * L.paramAreas; ++g) {
      const std::string k = std::to_string(g + 1);
      n[L.pP(g)] = "P" + k, n[L.pQ(g)] = "Q" + k, n[L.pKA(g)] = "KA" + k;
      if (L.governors) n[L.pR(g)] = "R" + k;
    }
    n[L.pTon()] = "t_on", n[L.pToff()] = "t_off";
    for (PetscInt b = 0; b < areaBuses * L.paramAreas; ++b) n[L.pVm(b)] = "Vm" + std::to_string(b + 1), n[L.pTh(b)] = "th" + std::to_string(b + 1);
    return n;
  }

  // Limiter ℓ's name: VRg (exciter) or Pvg (governor valve of generator g).
  std::string limiterName(PetscInt l) const {
    const PetscInt n = s_.layout.numGens();
    return (l < n ? "VR" : "Pv") + std::to_string(l % n + 1);
  }
  // The state limiter ℓ holds.
  PetscInt limitedState(PetscInt l) const {
    const PetscInt n = s_.layout.numGens();
    return l < n ? s_.layout.gs(l, 8) : s_.layout.gov(l - n, 0);
  }

  PetscInt numGuards() const override { return 4 * s_.layout.numLimiters(); }
  GuardInfo guardInfo(PetscInt j) const override {
    const std::string n = limiterName(j / 4);
    switch (j % 4) {
    case HitMax: return {n + "_hits_max", Direction::Rising};
    case HitMin: return {n + "_hits_min", Direction::Falling};
    case LeaveMax: return {n + "_leaves_max", Direction::Falling};
    default: return {n + "_leaves_min", Direction::Rising};
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
      const PetscInt k = id.index % 4;
      d[limiterFlag(id.index / 4)] = k == HitMax ? 1 : k == HitMin ? -1 : 0;
      PetscFunctionReturn(0);
    }
    switch (id.index) {
    case FaultOn: d[0] = 1; break;
    case FaultOff: d[0] = 0; break;
    default: {
      // u is the state after the fault switched and the network was re-solved. An exciter
      // limiter whose free VR' now points back into the band is released (no crossing would ever
      // report it). The exciters' leave-guards depend on the state only (Vref, KA are states), so
      // p is not needed (the placeholder below only keeps the governors' guards finite). A
      // governor valve's free rate reads differential states only (x1, ω, Pm), which do not jump
      // at a fault: nothing to check there.
      std::vector<PetscScalar> local(numGuards(), 0.0), all(numGuards(), 0.0);
      const std::vector<PetscReal> placeholder(s_.layout.numParams(), 1.0);
      PetscCall(guards(t, u, ModeContext{placeholder, d}, local.data()));
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
  std::vector<PetscReal> nominalParameters() const {
    const Layout &L = s_.layout;
    std::vector<PetscReal> p(L.numParams());
    for (PetscInt g = 0; g < areaGens * L.paramAreas; ++g) {
      p[L.pP(g)] = P0[g % areaGens], p[L.pQ(g)] = Q0[g % areaGens], p[L.pKA(g)] = 20.0;
      if (L.governors) p[L.pR(g)] = s_.R;
    }
    p[L.pTon()] = 1.0, p[L.pToff()] = 1.2;
    for (PetscInt b = 0; b < areaBuses * L.paramAreas; ++b) {
      const PetscInt k = b % areaBuses;
      p[L.pVm(b)] = std::hypot(V0[2 * k], V0[2 * k + 1]), p[L.pTh(b)] = std::atan2(V0[2 * k + 1], V0[2 * k]);
    }
    return p;
  }
  static std::vector<PetscInt> guardsOf(PetscInt l) { return {4 * l + HitMax, 4 * l + HitMin, 4 * l + LeaveMax, 4 * l + LeaveMin}; }
  // Rows written by generatorStart for generator g.
  std::vector<PetscInt> generatorStartRows(PetscInt g) const {
    const Layout &L = s_.layout;
    std::vector<PetscInt> r;
    for (PetscInt k = 0; k < genStates; ++k) r.push_back(L.gs(g, k));
    r.push_back(L.vref(g)), r.push_back(L.ka(g)), r.push_back(L.pm(g));
    if (L.governors) r.push_back(L.gov(g, 0)), r.push_back(L.gov(g, 1));
    return r;
  }

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

// ---- user-chosen costs and sensitivity rows: named quantities --------------------------------
// Names (generators g and buses b numbered globally from 1: generator k of area a is 3(a−1)+k,
// bus k of area a is 9(a−1)+k, as for -fault_bus):
//   Eqp<g> E'q, Edp<g> E'd, delta<g> δ (rad), omega<g> ω (rad/s), dw<g> ω − ω_s (speed
//   deviation, rad/s), Id<g>, Iq<g>, Efd<g>, RF<g>, VR<g>;   Vr<b>, Vi<b>, Vm<b> = |V_b| (pu).
// An expression is a sum of terms ±name, ±c*name or ±c: delta2-delta1 (rotor-angle spread),
// Vm9-1 (voltage deviation from 1 pu), 0.5*dw1+0.5*dw2. (Vm<b> here is the bus voltage along
// the trajectory, not the parameter Vm<b> of the initial power flow.)
struct Expression {
  enum Kind { Plain, SpeedDeviation, Magnitude };
  struct Term {
    PetscReal coef;
    Kind kind;
    PetscInt a, b;  // positions in reads (b: Magnitude only)
  };
  std::string text;
  std::vector<PetscInt> reads;  // global state rows, each once
  std::vector<Term> terms;
  PetscReal constant = 0;
  template <class S> S value(const S *u) const {
    using std::sqrt;
    S v = constant;
    for (const Term &t : terms) {
      if (t.kind == Plain) v += t.coef * u[t.a];
      else if (t.kind == SpeedDeviation) v += t.coef * (u[t.a] - omegaS);
      else v += t.coef * sqrt(u[t.a] * u[t.a] + u[t.b] * u[t.b]);
    }
    return v;
  }
  // Position of global row r in reads (added if new).
  PetscInt slot(PetscInt r) {
    const auto it = std::find(reads.begin(), reads.end(), r);
    if (it != reads.end()) return (PetscInt)(it - reads.begin());
    reads.push_back(r);
    return (PetscInt)reads.size() - 1;
  }
};

// Collective (every rank parses the same option); `option` names the source in errors.
inline PetscErrorCode parseExpression(const Layout &L, const std::string &text, const char *option, Expression &e) {
  static const char *genNames[] = {"Eqp", "Edp", "delta", "omega", "Id", "Iq", "Efd", "RF", "VR"};  // = the state order
  const char *help = "names: Eqp Edp delta omega dw Id Iq Efd RF VR + generator 1..%" PetscInt_FMT ", Vr Vi Vm + bus 1..%" PetscInt_FMT;
  PetscFunctionBeginUser;
  e = Expression{};
  e.text = text;
  size_t i = 0;
  PetscCheck(!text.empty(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: empty expression in %s", option);
  while (i < text.size()) {
    PetscReal sign = 1;
    if (text[i] == '+' || text[i] == '-') sign = text[i++] == '-' ? -1 : 1;
    else PetscCheck(i == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': expected + or - at position %zu", option, text.c_str(), i + 1);
    PetscReal coef = sign;
    bool haveNumber = false;
    if (i < text.size() && (std::isdigit((unsigned char)text[i]) || text[i] == '.')) {
      char *end;
      const double c = std::strtod(text.c_str() + i, &end);
      PetscCheck(end != text.c_str() + i, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': bad number at position %zu", option, text.c_str(), i + 1);
      i = (size_t)(end - text.c_str());
      coef *= c, haveNumber = true;
      if (i < text.size() && text[i] == '*') ++i;
      else {
        e.constant += coef;
        continue;
      }
    }
    size_t j = i;
    while (j < text.size() && std::isalpha((unsigned char)text[j])) ++j;
    const std::string base = text.substr(i, j - i);
    size_t k = j;
    while (k < text.size() && std::isdigit((unsigned char)text[k])) ++k;
    PetscCheck(!base.empty() && k > j, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': expected a quantity%s at position %zu (%s)", option,
               text.c_str(), haveNumber ? " after '*'" : "", i + 1, help, L.numGens(), L.numBuses());
    const PetscInt n = std::atoi(text.substr(j, k - j).c_str()) - 1;
    i = k;
    Expression::Term term{coef, Expression::Plain, 0, 0};
    const auto gen = std::find(std::begin(genNames), std::end(genNames), base);
    if (gen != std::end(genNames) || base == "dw") {
      PetscCheck(n >= 0 && n < L.numGens(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: %s '%s': no generator %" PetscInt_FMT " (1..%" PetscInt_FMT ")", option,
                 text.c_str(), n + 1, L.numGens());
      term.a = e.slot(L.gs(n, base == "dw" ? 3 : (PetscInt)(gen - std::begin(genNames))));
      if (base == "dw") term.kind = Expression::SpeedDeviation;
    } else {
      PetscCheck(base == "Vr" || base == "Vi" || base == "Vm", PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': unknown quantity '%s' (%s)", option,
                 text.c_str(), base.c_str(), help, L.numGens(), L.numBuses());
      PetscCheck(n >= 0 && n < L.numBuses(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: %s '%s': no bus %" PetscInt_FMT " (1..%" PetscInt_FMT ")", option,
                 text.c_str(), n + 1, L.numBuses());
      if (base == "Vm") term.kind = Expression::Magnitude, term.a = e.slot(L.vr(n)), term.b = e.slot(L.vi(n));
      else term.a = e.slot(base == "Vr" ? L.vr(n) : L.vi(n));
    }
    e.terms.push_back(term);
  }
  PetscCheck(!e.terms.empty(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s' names no quantity", option, text.c_str());
  PetscFunctionReturn(0);
}

// ψ = e(u(T)).
struct TerminalExpression {
  static constexpr int numReads = Dynamic;
  Expression e;
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return e.value(u); }
};
// r = e(u(t))².
struct SquaredExpression {
  static constexpr int numReads = Dynamic;
  Expression e;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    const S v = e.value(u);
    return v * v;
  }
};

// -wecc9_terminal_cost e1,e2,...: one cost e_i(u(T)) each; -wecc9_integral_cost: ∫_0^T e_i² dt each.
class ExpressionCost : public LocalKernelCost {
public:
  ExpressionCost(const Grid &grid, const Expression &e, bool integral)
      : LocalKernelCost(grid), name_(integral ? "int[" + e.text + "]^2" : "[" + e.text + "](T)") {
    if (integral) add(SquaredExpression{e}, {e.reads, {}, {}, {}});
    else add(TerminalExpression{e}, {e.reads, {}, {}, {}});
  }
  std::string name() const override { return name_; }

private:
  std::string name_;
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

// Values on rank 0 of the given global rows of u and, if S is given, of S's first np columns:
// out[r (1 + np) + 0] = u_row, out[r (1 + np) + 1 + j] = S_row,j (zeros elsewhere). Collective.
static PetscErrorCode gatherRows(Vec u, Mat S, PetscInt np, const std::vector<PetscInt> &rows, std::vector<PetscReal> &out) {
  PetscInt lo, hi, lda = 0;
  const PetscScalar *ua, *sa = nullptr;
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)u), &rank));
  std::vector<PetscReal> mine(rows.size() * (1 + np), 0.0);
  PetscCall(VecGetOwnershipRange(u, &lo, &hi));
  PetscCall(VecGetArrayRead(u, &ua));
  if (S) {
    PetscCall(MatDenseGetArrayRead(S, &sa));
    PetscCall(MatDenseGetLDA(S, &lda));
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] < lo || rows[r] >= hi) continue;
    mine[r * (1 + np)] = ua[rows[r] - lo];
    for (PetscInt j = 0; S && j < np; ++j) mine[r * (1 + np) + 1 + j] = sa[(rows[r] - lo) + j * lda];
  }
  if (S) PetscCall(MatDenseRestoreArrayRead(S, &sa));
  PetscCall(VecRestoreArrayRead(u, &ua));
  out.assign(mine.size(), 0.0);
  PetscCallMPI(MPI_Reduce(mine.data(), out.data(), (int)mine.size(), MPIU_REAL, MPIU_SUM, 0, PetscObjectComm((PetscObject)u)));
  PetscFunctionReturn(0);
}

// -wecc9_sensitivities FILE (needs -hs_forward): the forward sensitivities over time, from
// Solver::setForwardMonitor. One CSV line (after a header) per step end and per transition:
//   t, kind (step|event), event name, then for every cost with an integral its running value
//   ∫_0^t r dt and d/dp of it by every parameter (Fig. 6 bottom: dH_i/dP_g over time), then for
//   every quantity of -wecc9_sensitivity_rows (default VR and omega of generators 1-3) its
//   value and its derivative by every parameter, i.e. rows of S = du/dp (Fig. 7 bottom).
// -wecc9_adjoint FILE (needs -hs_adjoint): from Solver::setAdjointMonitor, one line per
//   adjoint sample (time decreasing): t, kind (arrived|measurements|event), event name, then
//   λ_k at the state row of every single-state quantity of -wecc9_sensitivity_rows, for every
//   cost k (∂J_k/∂u(t); e.g. for -wecc9_terminal_cost VR3 it jumps at VR3's limiter events).
struct TrajectoryCSV {
  FILE *file = nullptr;  // rank 0 only
  std::vector<Expression> quantities;
  std::vector<PetscInt> rows;  // union of the quantities' reads
  std::vector<size_t> integralCosts;
  PetscInt np = 0;
  // Value and gradient (np) of expression e from gathered rows.
  void expression(const Expression &e, const std::vector<PetscReal> &g, std::vector<PetscReal> &out) const {
    using AD = Sacado::Fad::DFad<PetscReal>;
    const PetscInt nr = (PetscInt)e.reads.size();
    std::vector<AD> x(nr);
    std::vector<size_t> at(nr);
    for (PetscInt i = 0; i < nr; ++i) {
      at[i] = (size_t)(std::find(rows.begin(), rows.end(), e.reads[i]) - rows.begin());
      x[i] = AD(nr, i, g[at[i] * (1 + np)]);
    }
    const AD v = e.value(x.data());
    out.assign(1 + np, 0.0);
    out[0] = v.val();
    for (PetscInt j = 0; j < np; ++j)
      for (PetscInt i = 0; i < nr; ++i) out[1 + j] += v.dx(i) * g[at[i] * (1 + np) + 1 + j];
  }
};

static PetscErrorCode openCSV(const char *name, TrajectoryCSV &w) {
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) {
    w.file = std::fopen(name, "w");
    PetscCheck(w.file, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "wecc9: cannot write %s", name);
  }
  for (const Expression &e : w.quantities)
    for (PetscInt r : e.reads)
      if (std::find(w.rows.begin(), w.rows.end(), r) == w.rows.end()) w.rows.push_back(r);
  PetscFunctionReturn(0);
}

static PetscErrorCode writeForwardSample(TrajectoryCSV &w, const ForwardSample &s) {
  std::vector<PetscReal> g, q;
  PetscFunctionBeginUser;
  PetscCall(gatherRows(s.u, s.S, w.np, w.rows, g));
  if (!w.file) PetscFunctionReturn(0);
  const char *kind = s.kind == ForwardSample::AfterTransition ? "event" : s.kind == ForwardSample::StepEnd ? "step" : "measurements";
  std::fprintf(w.file, "%.17g,%s,%s", (double)s.time, kind, s.event ? s.event->name.c_str() : "");
  for (size_t k : w.integralCosts) {
    std::fprintf(w.file, ",%.17g", (double)s.running[k]);
    for (PetscInt j = 0; j < w.np; ++j) std::fprintf(w.file, ",%.17g", (double)s.runningGradient[k][j]);
  }
  for (const Expression &e : w.quantities) {
    w.expression(e, g, q);
    for (PetscReal x : q) std::fprintf(w.file, ",%.17g", (double)x);
  }
  std::fprintf(w.file, "\n");
  PetscFunctionReturn(0);
}

static PetscErrorCode writeAdjointSample(TrajectoryCSV &w, const AdjointSample &s) {
  std::vector<PetscReal> g;
  PetscFunctionBeginUser;
  const char *kind = s.kind == AdjointSample::AfterTransition ? "event" : s.kind == AdjointSample::Arrived ? "arrived" : "measurements";
  if (w.file) std::fprintf(w.file, "%.17g,%s,%s", (double)s.time, kind, s.event ? s.event->name.c_str() : "");
  for (Vec lambda : s.lambda) {
    PetscCall(gatherRows(lambda, nullptr, 0, w.rows, g));
    for (const Expression &e : w.quantities)
      if (e.terms.size() == 1 && e.terms[0].kind != Expression::Magnitude && w.file) {
        const size_t at = (size_t)(std::find(w.rows.begin(), w.rows.end(), e.reads[0]) - w.rows.begin());
        std::fprintf(w.file, ",%.17g", (double)g[at]);
      }
  }
  if (w.file) std::fprintf(w.file, "\n");
  PetscFunctionReturn(0);
}

static PetscErrorCode printGradientTable(const char *title, const std::vector<std::vector<PetscScalar>> &g, const std::vector<std::string> &names,
                                         const std::vector<std::string> &costNames) {
  PetscFunctionBeginUser;
  if (g.empty()) PetscFunctionReturn(0);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s:\n", title));
  for (size_t j0 = 0; j0 < names.size(); j0 += 10) {  // blocks of 10 columns
    const size_t j1 = std::min(names.size(), j0 + 10);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-4s", "cost"));  // long names of user costs shift their row
    for (size_t j = j0; j < j1; ++j) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %13s", ("d/d" + names[j]).c_str()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    for (size_t k = 0; k < g.size(); ++k) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-4s", costNames[k].c_str()));
      for (size_t j = j0; j < j1; ++j) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " % 13.6e", (double)g[k][j]));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
  }
  PetscFunctionReturn(0);
}

// -wecc9_check_start: the initial state as the engine receives it. Prints ‖f(u0)‖∞ (all rows:
// at rest and a consistent network means an equilibrium) and compares ∂u0/∂p from the model's
// callback with central differences of the re-computed u0 (h = 1e-6 max(|p_j|, 1)), per
// parameter and overall (max error relative to max |∂u0/∂p|).
static PetscErrorCode checkInitialState(const Grid &grid, const std::vector<PetscReal> &p) {
  const PetscInt np = (PetscInt)p.size();
  const auto names = grid.parameterNames();
  const DiscreteState d0 = grid.initialDiscreteState();
  Vec u0, f, up, um;
  Mat J;
  PetscInt nloc, N;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(grid.templateVec(), &u0));
  PetscCall(VecDuplicate(u0, &f));
  PetscCall(VecDuplicate(u0, &up));
  PetscCall(VecDuplicate(u0, &um));
  PetscCall(grid.initialState(ModeContext{p, d0}, u0));
  PetscCall(grid.rhs(0.0, u0, ModeContext{p, d0}, f));
  PetscReal fnorm;
  PetscCall(VecNorm(f, NORM_INFINITY, &fnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: |f(u0)|_inf = %.3e\n", (double)fnorm));
  PetscCall(VecGetLocalSize(u0, &nloc));
  PetscCall(VecGetSize(u0, &N));
  PetscCall(MatCreateDense(grid.comm(), nloc, PETSC_DECIDE, N, np, nullptr, &J));
  PetscCall(MatZeroEntries(J));
  PetscCall(grid.initialStateJacobianP(ModeContext{p, d0}, J));
  PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  PetscReal Jmax;
  PetscCall(MatNorm(J, NORM_MAX, &Jmax));
  PetscReal worst = 0;
  for (PetscInt j = 0; j < np; ++j) {
    const PetscReal h = 1e-6 * std::max(std::fabs(p[j]), (PetscReal)1.0);
    std::vector<PetscReal> pp(p), pm(p);
    pp[j] += h, pm[j] -= h;
    PetscCall(grid.initialState(ModeContext{pp, d0}, up));
    PetscCall(grid.initialState(ModeContext{pm, d0}, um));
    PetscCall(VecAXPY(up, -1.0, um));
    PetscCall(VecScale(up, 1.0 / (2 * h)));  // central difference
    Vec col;
    PetscReal colNorm, err;
    PetscCall(MatDenseGetColumnVecRead(J, j, &col));
    PetscCall(VecNorm(col, NORM_INFINITY, &colNorm));
    PetscCall(VecAXPY(up, -1.0, col));
    PetscCall(MatDenseRestoreColumnVecRead(J, j, &col));
    PetscCall(VecNorm(up, NORM_INFINITY, &err));
    worst = std::max(worst, err);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: du0/d%-5s |column|_inf = %.6e  |column - FD|_inf = %.3e\n", names[j].c_str(), (double)colNorm, (double)err));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: du0/dp vs central differences: max error %.3e (relative %.3e)\n", (double)worst, (double)(worst / Jmax)));

  // Second order: (λᵀu0)_pp δp (initialStateHessianProduct) vs central differences of λᵀ ∂u0/∂p
  // along δp, for fixed pseudo-random λ (λ_i = sin(i + 1)) and δp (δp_j = cos(j + 1) max(|p_j|, 1)).
  Vec lambda;
  PetscInt lo, hi;
  PetscCall(VecDuplicate(u0, &lambda));
  PetscCall(VecGetOwnershipRange(lambda, &lo, &hi));
  for (PetscInt i = lo; i < hi; ++i) PetscCall(VecSetValue(lambda, i, std::sin((PetscReal)(i + 1)), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(lambda));
  PetscCall(VecAssemblyEnd(lambda));
  std::vector<PetscScalar> dp(np), hp(np, 0.0), fd(np, 0.0);
  for (PetscInt j = 0; j < np; ++j) dp[j] = std::cos((PetscReal)(j + 1)) * std::max(std::fabs(p[j]), (PetscReal)1.0);
  PetscCall(grid.initialStateHessianProduct(ModeContext{p, d0}, lambda, dp.data(), hp.data()));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hp.data(), (int)np, MPIU_SCALAR, MPIU_SUM, grid.comm()));  // this rank's contribution
  const PetscReal h2 = 1e-6;
  for (int side = -1; side <= 1; side += 2) {
    std::vector<PetscReal> q(p);
    for (PetscInt j = 0; j < np; ++j) q[j] += side * h2 * dp[j];
    Mat Jq;
    Vec w;
    PetscCall(MatCreateDense(grid.comm(), nloc, PETSC_DECIDE, N, np, nullptr, &Jq));
    PetscCall(MatZeroEntries(Jq));
    PetscCall(grid.initialStateJacobianP(ModeContext{q, d0}, Jq));
    PetscCall(MatAssemblyBegin(Jq, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jq, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(Jq, &w, nullptr));
    PetscCall(MatMultTranspose(Jq, lambda, w));  // (∂u0/∂p)ᵀ λ
    const PetscScalar *a;
    PetscInt wlo, whi;
    PetscCall(VecGetOwnershipRange(w, &wlo, &whi));
    std::vector<PetscScalar> mine(np, 0.0);
    PetscCall(VecGetArrayRead(w, &a));
    for (PetscInt j = wlo; j < whi; ++j) mine[j] = a[j - wlo];
    PetscCall(VecRestoreArrayRead(w, &a));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mine.data(), (int)np, MPIU_SCALAR, MPIU_SUM, grid.comm()));
    for (PetscInt j = 0; j < np; ++j) fd[j] += side * mine[j] / (2 * h2);
    PetscCall(VecDestroy(&w));
    PetscCall(MatDestroy(&Jq));
  }
  PetscReal err2 = 0, scale2 = 0;
  for (PetscInt j = 0; j < np; ++j) err2 = std::max(err2, (PetscReal)std::fabs(hp[j] - fd[j])), scale2 = std::max(scale2, (PetscReal)std::fabs(hp[j]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: (lambda^T u0)_pp dp vs central differences of lambda^T du0/dp: max error %.3e (relative %.3e, max |Hv| %.3e)\n",
                        (double)err2, (double)(err2 / scale2), (double)scale2));
  PetscCall(VecDestroy(&lambda));
  PetscCall(MatDestroy(&J));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&f));
  PetscCall(VecDestroy(&up));
  PetscCall(VecDestroy(&um));
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
    const char *const initModes[] = {"power_flow", "closed_form", "Init", "", nullptr};
    PetscEnum init = (PetscEnum)s.init;
    PetscCall(PetscOptionsGetEnum(nullptr, nullptr, "-wecc9_init", initModes, &init, nullptr));
    s.init = (Init)init;
    PetscBool governors = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-governors", &governors, nullptr));
    s.layout.governors = governors;
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tgov_T1", &s.tgov.T1, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tgov_T2", &s.tgov.T2, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tgov_T3", &s.tgov.T3, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tgov_Dt", &s.tgov.Dt, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tgov_Vmin", &s.tgov.Vmin, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tgov_Vmax", &s.tgov.Vmax, nullptr));
    PetscCheck(s.tgov.T1 > 0 && s.tgov.T3 > 0 && s.tgov.T2 >= 0 && s.tgov.Vmin < s.tgov.Vmax, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: TGOV1 needs T1 > 0, T3 > 0, T2 >= 0 and Vmin < Vmax");
    const Layout &L = s.layout;
    PetscInt costGens = L.numGens();
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-cost_generators", &costGens, nullptr));
    PetscCheck(costGens >= 0 && costGens <= L.numGens(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: -cost_generators must be 0..%" PetscInt_FMT, L.numGens());

    Grid grid(s);
    PetscCall(grid.build());
    std::vector<std::unique_ptr<LocalKernelCost>> costs;
    for (PetscInt g = 0; g < costGens; ++g) {
      costs.push_back(std::make_unique<FrequencyCost>(grid, g, s));
      PetscCall(costs.back()->setUp());
    }
    // User-chosen costs after H_1..H_M: terminal values and integrals of squares of expressions.
    for (const char *option : {"-wecc9_terminal_cost", "-wecc9_integral_cost"}) {
      char *items[64];
      PetscInt n = 64;
      PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, option, items, &n, nullptr));
      for (PetscInt i = 0; i < n; ++i) {
        Expression e;
        const std::string text = items[i];
        PetscCall(PetscFree(items[i]));
        PetscCall(parseExpression(L, text, option, e));
        costs.push_back(std::make_unique<ExpressionCost>(grid, e, std::string(option) == "-wecc9_integral_cost"));
        PetscCall(costs.back()->setUp());
      }
    }
    std::vector<std::string> costNames;
    for (auto &c : costs) costNames.push_back(c->name());

    std::vector<PetscReal> p = grid.defaultParameters();
    const auto pnames = grid.parameterNames();
    for (PetscInt k = 0; k < L.numParams(); ++k) PetscCall(PetscOptionsGetReal(nullptr, nullptr, ("-" + pnames[k]).c_str(), &p[k], nullptr));
    PetscCheck(p[L.pTon()] < p[L.pToff()], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: the fault must be applied before it is cleared (t_on < t_off)");
    if (L.governors)
      for (PetscInt g = 0; g < areaGens * L.paramAreas; ++g)
        PetscCheck(p[L.pR(g)] > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: the droop R%" PetscInt_FMT " must be positive", g + 1);
    if (s.init == Init::PowerFlow)
      for (PetscInt a = 0; a < L.paramAreas; ++a) {
        const auto pf = grid.powerFlow(p, a);
        PetscCheck(pf.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
                   "wecc9: the initial power flow of area %" PetscInt_FMT " does not converge for these parameters (mismatch %g after 30 Newton steps)", a + 1,
                   (double)pf.mismatch);
        if (a) continue;
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "wecc9: power flow (slack bus 1): P1 = %.12f, Q1..Q3 = %.12f %.12f %.12f\n", (double)pf.P[0],
                              (double)pf.Q[0], (double)pf.Q[1], (double)pf.Q[2]));
        PetscReal dV = 0;  // distance to ex9bus' V0 (its power flow at the default parameters)
        for (PetscInt b = 0; b < areaBuses; ++b)
          dV = std::max(dV, std::hypot(pf.v.Vm[b] * std::cos(pf.v.th[b]) - V0[2 * b], pf.v.Vm[b] * std::sin(pf.v.th[b]) - V0[2 * b + 1]));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "wecc9: power flow: max |V - V0(ex9bus)| = %.3e\n", (double)dV));
      }
    PetscBool checkStart = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-wecc9_check_start", &checkStart, nullptr));
    if (checkStart) PetscCall(checkInitialState(grid, p));

    Solver solver(grid);
    for (auto &c : costs) solver.addCost(*c);
    PetscCall(solver.setParameters(p));
    PetscCall(solver.setFromOptions());
    TS ts = solver.ts();
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(solver.setFromOptions());
    // -wecc9_sensitivities / -wecc9_adjoint: trajectories of sensitivities (see TrajectoryCSV).
    char fwdFile[PETSC_MAX_PATH_LEN] = "", adjFile[PETSC_MAX_PATH_LEN] = "";
    PetscBool writeFwd = PETSC_FALSE, writeAdj = PETSC_FALSE;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-wecc9_sensitivities", fwdFile, sizeof fwdFile, &writeFwd));
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-wecc9_adjoint", adjFile, sizeof adjFile, &writeAdj));
    TrajectoryCSV fwdCSV, adjCSV;
    if (writeFwd || writeAdj) {
      PetscCheck(!writeFwd || solver.forwardSensitivities(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: -wecc9_sensitivities needs -hs_forward");
      PetscCheck(!writeAdj || solver.adjoint(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: -wecc9_adjoint needs -hs_adjoint");
      std::vector<std::string> texts;
      char *items[64];
      PetscInt n = 64;
      PetscBool set;
      PetscCall(PetscOptionsGetStringArray(nullptr, nullptr, "-wecc9_sensitivity_rows", items, &n, &set));
      for (PetscInt i = 0; set && i < n; ++i) {
        texts.push_back(items[i]);
        PetscCall(PetscFree(items[i]));
      }
      if (!set)
        for (const char *q : {"VR", "omega"})
          for (PetscInt g = 0; g < areaGens; ++g) texts.push_back(q + std::to_string(g + 1));
      std::vector<Expression> quantities(texts.size());
      for (size_t i = 0; i < texts.size(); ++i) PetscCall(parseExpression(L, texts[i], "-wecc9_sensitivity_rows", quantities[i]));
      for (TrajectoryCSV *w : {&fwdCSV, &adjCSV}) w->quantities = quantities, w->np = L.numParams();
      for (size_t k = 0; k < costs.size(); ++k)
        if (costs[k]->hasIntegrand()) fwdCSV.integralCosts.push_back(k);
    }
    if (writeFwd) {
      PetscCall(openCSV(fwdFile, fwdCSV));
      if (fwdCSV.file) {
        std::fprintf(fwdCSV.file, "t,kind,event");
        for (size_t k : fwdCSV.integralCosts) {
          std::fprintf(fwdCSV.file, ",%s", costNames[k].c_str());
          for (const auto &n : pnames) std::fprintf(fwdCSV.file, ",d%s/d%s", costNames[k].c_str(), n.c_str());
        }
        for (const Expression &e : fwdCSV.quantities) {
          std::fprintf(fwdCSV.file, ",%s", e.text.c_str());
          for (const auto &n : pnames) std::fprintf(fwdCSV.file, ",d%s/d%s", e.text.c_str(), n.c_str());
        }
        std::fprintf(fwdCSV.file, "\n");
      }
      solver.setForwardMonitor([&fwdCSV](const ForwardSample &x) { return writeForwardSample(fwdCSV, x); });
    }
    if (writeAdj) {
      PetscCall(openCSV(adjFile, adjCSV));
      if (adjCSV.file) {
        std::fprintf(adjCSV.file, "t,kind,event");
        for (const auto &c : costNames)
          for (const Expression &e : adjCSV.quantities)
            if (e.terms.size() == 1 && e.terms[0].kind != Expression::Magnitude) std::fprintf(adjCSV.file, ",lambda[%s]:%s", c.c_str(), e.text.c_str());
        std::fprintf(adjCSV.file, "\n");
      }
      solver.setAdjointMonitor([&adjCSV](const AdjointSample &x) { return writeAdjointSample(adjCSV, x); });
    }
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
    for (TrajectoryCSV *w : {&fwdCSV, &adjCSV})
      if (w->file) std::fclose(w->file), w->file = nullptr;
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
      for (PetscInt l = 0; l < L.numLimiters(); ++l) {
        const PetscInt a = r.before[limiterFlag(l)], b = r.after[limiterFlag(l)];
        if (a == b) continue;
        PetscScalar x;
        PetscCall(globalEntry(r.uplus, grid.limitedState(l), &x));
        const std::string n = grid.limiterName(l), kind = l < L.numGens() ? "VR" : "Pv";
        const std::string what = (b != 0 ? "hits " : "leaves ") + kind + ((b == 1 || a == 1) ? "max" : "min");
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.12f  %s %s (%s)  %s = %.10g\n", (double)r.time, n.c_str(), what.c_str(), r.name.c_str(),
                              kind.c_str(), (double)x));
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
      for (size_t k = 0; k < solver.objective().size(); ++k) {
        if (k == (size_t)costGens) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\nuser costs:"));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s = %.12e", costNames[k].c_str(), (double)solver.objective()[k]));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
    const auto names = grid.parameterNames();
    if (L.areas == 1) {  // larger grids: the summary JSON has the full gradients
      PetscCall(printGradientTable("forward sensitivities dH/dp", solver.forwardGradientP(), names, costNames));
      PetscCall(printGradientTable("adjoint gradients dH/dp", solver.adjointGradientP(), names, costNames));
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
      for (PetscInt k = 0; k < std::min(areaGens, costGens); ++k)
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
