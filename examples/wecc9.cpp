// wecc9 — transient stability of the WECC 3-generator 9-bus system with exciter limiters and a
// fault, and the exact sensitivities of the frequency-violation metrics of [Zhang2017] (eq. 30).
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
// Governors (-governors; [Zhang2017] §V.C uses TGOV1): per generator a TGOV1 steam turbine-governor
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
//   voltages, [Zhang2017]'s 24 with the dispatch), with -governors R1..R3 (droops). With the power-flow
//   start the outputs of the power flow — P1 (slack), Q1..Q3, Vm4..Vm9, θ2..θ9 — have zero
//   sensitivity, like [Zhang2017] Table V's P_g^1 column (exactly 0: generator 1 is the slack);
//   θ1 turns every angle alike, to which the model is invariant (its sensitivity is round-off).
//   With the closed form the voltages enter u0 through the generators (generator buses) and the
//   loads' reference |V0| (load buses); buses 4, 7, 9 carry neither. No initial-state
//   columns by default (u0 follows from p; -hs_forward_u0 i,j,... asks for some).
// Costs ([Zhang2017] eq. 30): H_i = σ ∫ max(0, f_i − f⁺, f⁻ − f_i)^η dt per generator, f_i = ω_i/2π
//   in Hz, f± = 60 ± 0.5 Hz, σ = 1, η = 2 (options -freq_max, -freq_min, -sigma, -eta).
//   After them, user-chosen costs of named quantities (see Expression below; generators and buses
//   numbered globally): -wecc9_terminal_cost e1,e2,... adds ψ = e_i(u(T)) each, and
//   -wecc9_integral_cost e1,... adds ∫_0^T e_i(u)² dt each, e.g. delta2-delta1 (rotor-angle
//   spread), dw3 (speed deviation ω − ω_s), Vm9-1 (bus-voltage deviation from 1 pu), VR3.
//   Unknown names, out-of-range indices and malformed expressions are refused.
// Sensitivity trajectories ([Zhang2017] Figs. 6-7, bottom): -wecc9_sensitivities FILE writes, at
//   every step end and after every transition (Solver::setForwardMonitor), the running integral
//   of every integral cost with its gradient, and the values and rows of S = du/dp of the
//   quantities of -wecc9_sensitivity_rows (default VR1..3, omega1..3); -wecc9_adjoint FILE
//   writes λ of every cost at those rows that are one state entry (Solver::setAdjointMonitor). Rank 0 writes.
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
// -hs_check_gradient moves each parameter by at most -hs_check_gradient_taylor_step (1e-3) of
// its own size in the Taylor test; run it with off-grid fault times for the reason above
// (tests/example_wecc9.py runs its own Taylor test with steps of 1e-3: order 2.0).
//
// Run:
//   build/examples/wecc9                                          # limiter events, H_i
//   build/examples/wecc9 -hs_adjoint -hs_forward                  # ∂H_i/∂p both ways
//   mpiexec -n 3 build/examples/wecc9 -hs_adjoint -pc_factor_mat_solver_type mumps
//     (without a -pc_type / -pc_factor_mat_solver_type, grids under 200000 states run redundant LU in parallel)
//   build/examples/wecc9 -t_on 0.1 -t_off 0.2 -ts_max_time 1 -hs_adjoint   # [Zhang2017]'s scenario: H1 = 0, P_g^1 column 0
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
// -help lists them with their defaults; a value outside its domain (-areas >= 1, -rfault, time
// constants T1, T3, gains KA, magnitudes Vm and droops R > 0, -eta >= 1, ...) is refused by name.
//   build/examples/wecc9 -hs_forward -hs_adjoint -wecc9_terminal_cost VR1,VR2,VR3 -wecc9_integral_cost dw3
//     -wecc9_states s.csv -hs_summary s.json -wecc9_sensitivities sens.csv -wecc9_adjoint adj.csv
//   python3 scripts/plot_wecc9.py s.csv s.json --sensitivities sens.csv --adjoint adj.csv
#include "power/wecc9_output.hpp"

#include "example_options.hpp"

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
using namespace wecc9;

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "WECC 9-bus transient stability with exciter limiters and a fault; sensitivities of frequency violations.\n"));
  {
    // The grid's structure, its data and the costs exist before the Solver and its TS: their
    // options are read without the TS's options prefix (the TS has none in this example).
    Settings s;
    const Layout &L = s.layout;
    PetscInt faultBus1 = s.faultBus + 1, costGens;
    PetscBool governors = PETSC_FALSE;
    const char *const initModes[] = {"power_flow", "closed_form", "Init", "", nullptr};
    PetscEnum init = (PetscEnum)s.init;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "WECC 9-bus: the grid", "");
    // Up to 63 states per area (57 without governors): the state count must fit PetscInt.
    PetscCall(examples::intOption(PetscOptionsObject, "-areas", "number of coupled 9-bus areas", &s.layout.areas, examples::intRange(1, PETSC_MAX_INT / 64)));
    s.layout.paramAreas = s.layout.areas;
    PetscCall(examples::intOption(PetscOptionsObject, "-param_areas", "the first K areas carry parameters (default all)", &s.layout.paramAreas,
                                  examples::intRange(1, L.areas)));
    PetscCall(examples::intOption(PetscOptionsObject, "-fault_bus", "faulted bus, 1-based global (bus b of area a is 9(a-1)+b)", &faultBus1,
                                  examples::intRange(1, L.numBuses())));
    s.faultBus = faultBus1 - 1;
    PetscCall(examples::realOption(PetscOptionsObject, "-rfault", "fault resistance (pu)", &s.rfault, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-tie_r", "series resistance of each tie line between areas (pu)", &s.tieR, examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-tie_x", "series reactance of each tie line between areas (pu)", &s.tieX));
    PetscCall(examples::realOption(PetscOptionsObject, "-freq_max", "upper frequency limit f+ of the violation metric (Hz)", &s.fmax, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-freq_min", "lower frequency limit f- of the violation metric (Hz)", &s.fmin, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-sigma", "weight sigma of the violation metric", &s.sigma, examples::nonNegative()));
    // eta >= 1: the metric max(0, f - f+, f- - f)^eta must be differentiable.
    PetscCall(examples::realOption(PetscOptionsObject, "-eta", "exponent eta of the violation metric (>= 1: differentiable)", &s.eta, examples::notBelow(1)));
    PetscCall(examples::enumOption(PetscOptionsObject, "-wecc9_init", "initial state: re-solved power flow, or ex9bus' closed form", initModes, &init));
    s.init = (Init)init;
    PetscCall(examples::boolOption(PetscOptionsObject, "-governors", "a TGOV1 turbine-governor per generator", &governors));
    s.layout.governors = governors;
    PetscCall(examples::realOption(PetscOptionsObject, "-tgov_T1", "TGOV1 valve time constant T1 (s)", &s.tgov.T1, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-tgov_T2", "TGOV1 lead time constant T2 (s)", &s.tgov.T2, examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-tgov_T3", "TGOV1 lag time constant T3 (s)", &s.tgov.T3, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-tgov_Dt", "TGOV1 turbine damping Dt", &s.tgov.Dt));
    PetscCall(examples::realOption(PetscOptionsObject, "-tgov_Vmin", "TGOV1 lower valve limit Vmin (pu)", &s.tgov.Vmin));
    PetscCall(examples::realOption(PetscOptionsObject, "-tgov_Vmax", "TGOV1 upper valve limit Vmax (pu)", &s.tgov.Vmax));
    costGens = L.numGens();
    PetscCall(examples::intOption(PetscOptionsObject, "-cost_generators", "keep the frequency costs H_1..H_M (default all)", &costGens,
                                  examples::intRange(0, L.numGens())));
    // Reversed, every frequency would count as a violation.
    PetscCheck(s.fmin < s.fmax, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: need -freq_min < -freq_max (got %g, %g)", (double)s.fmin,
               (double)s.fmax);
    PetscCheck(s.tgov.Vmin < s.tgov.Vmax, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: TGOV1 needs -tgov_Vmin < -tgov_Vmax (got %g, %g)",
               (double)s.tgov.Vmin, (double)s.tgov.Vmax);
    PetscOptionsEnd();

    Grid grid(s);
    PetscCall(grid.build());
    std::vector<std::unique_ptr<LocalKernelCost>> costs;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "WECC 9-bus: costs", "");
    for (PetscInt g = 0; g < costGens; ++g) {
      costs.push_back(std::make_unique<FrequencyCost>(grid, g, s));
      PetscCall(costs.back()->setUp());
    }
    // User-chosen costs after H_1..H_M: terminal values and integrals of squares of expressions.
    for (const char *option : {"-wecc9_terminal_cost", "-wecc9_integral_cost"}) {
      std::vector<std::string> items;
      hybridsens::OptionReader r(PetscOptionsObject);
      PetscCall(r.textList(option, std::string(option) == "-wecc9_terminal_cost" ? "costs psi = e(u(T)), one per expression e1,e2,..."
                                                                                 : "costs int_0^T e(u)^2 dt, one per expression e1,e2,...",
                           &items));
      for (const std::string &text : items) {
        Expression e;
        PetscCall(parseExpression(L, text, option, e));
        costs.push_back(std::make_unique<ExpressionCost>(grid, e, std::string(option) == "-wecc9_integral_cost"));
        PetscCall(costs.back()->setUp());
      }
    }
    PetscOptionsEnd();
    std::vector<std::string> costNames;
    for (auto &c : costs) costNames.push_back(c->name());

    Solver solver(grid);
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    std::vector<PetscReal> p = grid.defaultParameters();
    const auto pnames = grid.parameterNames();
    PetscBool checkStart = PETSC_FALSE;
    // -wecc9_sensitivities / -wecc9_adjoint: trajectories of sensitivities (see TrajectoryCSV).
    char fwdFile[PETSC_MAX_PATH_LEN] = "", adjFile[PETSC_MAX_PATH_LEN] = "", statesFile[PETSC_MAX_PATH_LEN] = "";
    PetscBool writeFwd = PETSC_FALSE, writeAdj = PETSC_FALSE, writeTrajectory = PETSC_FALSE;
    std::vector<std::string> rowTexts;
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "WECC 9-bus options", "");
    for (PetscInt k = 0; k < L.numParams(); ++k) {
      const std::string &n = pnames[k];
      // Exciter gains, voltage magnitudes and droops are positive; the rest (dispatch, angles,
      // fault times: checked below) any finite number.
      const bool positive = n.rfind("KA", 0) == 0 || n.rfind("Vm", 0) == 0 || n[0] == 'R';
      PetscCall(examples::realOption(PetscOptionsObject, ("-" + n).c_str(), ("parameter " + n).c_str(), &p[k], positive ? examples::positive() : examples::anyReal()));
    }
    PetscCall(examples::boolOption(PetscOptionsObject, "-wecc9_check_start", "print |f(u0)| and check du0/dp by central differences", &checkStart));
    PetscCall(examples::stringOption(PetscOptionsObject, "-wecc9_sensitivities", "write the forward sensitivity trajectory to this CSV file (needs -hs_forward)",
                                     fwdFile, sizeof fwdFile, &writeFwd));
    PetscCall(examples::stringOption(PetscOptionsObject, "-wecc9_adjoint", "write the adjoint trajectory to this CSV file (needs -hs_adjoint)", adjFile,
                                     sizeof adjFile, &writeAdj));
    {
      hybridsens::OptionReader r(PetscOptionsObject);
      PetscCall(r.textList("-wecc9_sensitivity_rows", "quantities e1,e2,... of the sensitivity CSV files (default VR1..3, omega1..3)", &rowTexts));
    }
    PetscCall(examples::stringOption(PetscOptionsObject, "-wecc9_states", "write the post-event state at every step start to this CSV file", statesFile,
                                     sizeof statesFile, &writeTrajectory));
    PetscOptionsEnd();
    PetscCheck(p[L.pTon()] < p[L.pToff()], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: the fault must be applied before it is cleared (t_on < t_off)");
    // A time event at or before the start never fires: the run would have no fault at all.
    PetscCheck(p[L.pTon()] > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: the fault must be applied after the start t = 0 (-t_on %g)",
               (double)p[L.pTon()]);
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
    if (checkStart) PetscCall(checkInitialState(grid, p));

    for (auto &c : costs) solver.addCost(*c);
    PetscCall(solver.setParameters(p));
    // u0 follows from the parameters: no initial-state columns unless -hs_forward_u0 asks.
    solver.setInitialStateSensitivities({});
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    TrajectoryCSV fwdCSV, adjCSV;
    if (writeFwd || writeAdj) {
      PetscCheck(!writeFwd || solver.forwardSensitivities(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: -wecc9_sensitivities needs -hs_forward");
      PetscCheck(!writeAdj || solver.adjoint(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: -wecc9_adjoint needs -hs_adjoint");
      std::vector<std::string> texts = rowTexts;
      if (texts.empty())
        for (const char *q : {"VR", "omega"})
          for (PetscInt g = 0; g < areaGens; ++g) texts.push_back(q + std::to_string(g + 1));
      std::vector<Expression> quantities(texts.size());
      for (size_t i = 0; i < texts.size(); ++i) PetscCall(parseExpression(L, texts[i], "-wecc9_sensitivity_rows", quantities[i]));
      for (TrajectoryCSV *w : {&fwdCSV, &adjCSV}) w->quantities = quantities, w->np = L.numParams();
      for (size_t k = 0; k < costs.size(); ++k)
        if (costs[k]->hasIntegrand()) fwdCSV.integralCosts.push_back(k);
    }
    if (writeFwd) {
      PetscCall(openCSV("-wecc9_sensitivities", fwdFile, fwdCSV));
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
      PetscCall(openCSV("-wecc9_adjoint", adjFile, adjCSV));
      if (adjCSV.file) {
        std::fprintf(adjCSV.file, "t,kind,event");
        for (const auto &c : costNames)
          for (const Expression &e : adjCSV.quantities)
            if (e.isStateEntry()) std::fprintf(adjCSV.file, ",lambda[%s]:%s", c.c_str(), e.text.c_str());
        std::fprintf(adjCSV.file, "\n");
      }
      solver.setAdjointMonitor([&adjCSV](const AdjointSample &x) { return writeAdjointSample(adjCSV, x); });
    }
    StateWriter writer;
    if (writeTrajectory) {
      PetscCall(writer.out.open(PETSC_COMM_WORLD, "-wecc9_states", statesFile));
      writer.file = writer.out.file();
      PetscCall(TSMonitorSet(ts, writeStates, &writer, nullptr));
    }
    const double wall0 = MPI_Wtime();
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();
    const double wall = MPI_Wtime() - wall0;
    for (TrajectoryCSV *w : {&fwdCSV, &adjCSV}) PetscCall(commitOutput(*w));
    // The trajectories are of this solve only (-hs_check_gradient solves again).
    solver.setForwardMonitor(nullptr);
    solver.setAdjointMonitor(nullptr);
    if (writeTrajectory) {
      PetscCall(TSMonitorCancel(ts));
      PetscCall(commitOutput(writer));
      PetscCall(VecScatterDestroy(&writer.toZero));
      PetscCall(VecDestroy(&writer.all));
    }

    PetscReal tf = result.finalTime;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "wecc9: fault at bus %" PetscInt_FMT " on [%g, %g], T = %g, %" PetscInt_FMT " steps, %zu events\n",
                          s.faultBus + 1, (double)p[L.pTon()], (double)p[L.pToff()], (double)tf, result.stats.steps, result.events().size()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "limiter events:\n"));
    for (const auto &r : result.events().records()) {
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
      PetscCall(globalEntry(result.finalState(), L.gs(g, 2), &delta));
      PetscCall(globalEntry(result.finalState(), L.gs(g, 3), &w));
      PetscCall(globalEntry(result.finalState(), L.gs(g, 8), &VR));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  gen %" PetscInt_FMT ": delta = %.10f  f = %.10f Hz  VR = %.10f\n", g + 1, (double)delta,
                            (double)(w / (2 * PETSC_PI)), (double)VR));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "frequency violations H_i: f in [%g, %g] Hz, sigma %g, eta %g\n", (double)s.fmin, (double)s.fmax,
                          (double)s.sigma, (double)s.eta));
    if (L.areas > 1 && !result.objective.empty()) {  // one area: viewGradients prints the objective
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "objective:"));
      for (size_t k = 0; k < result.objective.size(); ++k)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s = %.12e", costNames[k].c_str(), (double)result.objective[k]));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
    // Parameters only (u0 follows from them); larger grids: the summary JSON has the full gradients.
    if (L.areas == 1) PetscCall(solver.viewGradients(nullptr, false));
    else if (result.adjointForwardDifference() >= 0)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adjoint vs forward: max relative difference %.2e\n", (double)result.adjointForwardDifference()));
    // The layout of Zhang et al. (2017), Table V: ∂H_i/∂P_g (rows H_i, columns the dispatch of generator g).
    const std::vector<PetscScalar> CostGradient::*dP = result.adjointComputed ? &CostGradient::adjointP : &CostGradient::forwardP;
    if ((result.adjointComputed || result.forwardComputed) && !result.gradient.empty()) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sensitivities of frequency violations to dispatch at t = %g (%s):\n        %12s %12s %12s\n", (double)tf,
                            result.adjointComputed ? "adjoint" : "forward", "P_g^1", "P_g^2", "P_g^3"));
      for (PetscInt k = 0; k < std::min(areaGens, costGens); ++k) {
        const std::vector<PetscScalar> &gP = result.gradient[k].*dP;
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  H%-4" PetscInt_FMT " %12.6f %12.6f %12.6f\n", k + 1, (double)gP[L.pP(0)], (double)gP[L.pP(1)],
                              (double)gP[L.pP(2)]));
      }
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "timing: solve%s%s %.4f s\n", solver.forwardSensitivities() ? " + forward sensitivities" : "",
                          solver.adjoint() ? " + adjoint" : "", wall));
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
