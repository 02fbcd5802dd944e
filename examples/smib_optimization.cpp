// smib_optimization — maximize the mechanical power P_m of a single machine connected to an
// infinite bus (SMIB) while a fault is on the line, with PETSc TAO (BLMVM) and hybridsens'
// discrete adjoint gradient ([Zhang2017] §V.B, Table III; docs/validation.md, SMIB; PETSc's
// src/ts/tutorials/power_grid/ex3opt.c is the same problem, hand-coded).
//
// Model (swing equations; state u = (δ, ω) on rank 0, ω in per unit):
//   δ̇ = ω_B (ω − ω_S)
//   ω̇ = ω_S / (2H) · (P_m − P_max(d) sin δ − D (ω − ω_S))
// with H = 5, D = 5, ω_B = 120π, ω_S = 1, P_max = E V / X = 1.1378 / 0.545 = 2.08770642…
// Discrete state d = {phase}: 0 before the fault, 1 while it is on (P_max(1) = 0: the
// machine is cut off from the bus), 2 after it is cleared (P_max again).
// Initial state: the pre-fault equilibrium δ0 = asin(P_m / P_max), ω0 = ω_S — it depends on
// P_m, so dJ/dP_m includes (∂u0/∂P_m)ᵀ λ(0).
// Events: fault on at t_f = 0.1 (fixed), cleared at t_cl = p[1] = 0.2, both TIME events (the
// step lands on them). ∂t_cl/∂t_cl = 1, so the clearing-time derivative is exactly the
// event-time jump term μ += cᵀλ⁺ (docs/theory.md §4), with c the library's discrete-exact jump
// vector (the derivative of the steps before and after the event with respect to its time;
// -hs_event_derivative continuous gives §4's u̇⁻ − u̇⁺ instead) — switched off by
// -hs_test_drop_event_time_term (must-fail test).
// Parameters p = (P_m, t_cl). TAO optimizes P_m only (bounds [0, 1.1], as ex3opt);
// dJ/dt_cl is reported alongside.
// Cost (to be minimized; ex3opt's FormFunctionGradient):
//   J = −P_m + σ ∫₀ᵀ max(0, δ − δ_max)^η dt,   σ = 1e4, η = 2, δ_max = 1 rad, T = 1.
// Every derivative (∂f/∂u, ∂f/∂p, ∂u0/∂p, ∂T/∂p, r_u) comes from hybridsens/ad.hpp (Sacado).
//
// Settings (match ex3opt.c): Crank–Nicolson (-ts_type cn), dt = 0.03125, T = 1, LU solves,
// TAO BLMVM from P_m = 1.06 with TAO's default tolerances. In parallel the state stays on
// rank 0 and the library's default for so small a system is a redundant LU (each rank factors
// the 2 × 2 Jacobian with PETSc's LU; bit-identical to serial and 5× faster with 3 ranks on 2
// cores than MUMPS, which -pc_type lu -pc_factor_mat_solver_type mumps selects).
//
// What it prints:
//   1. at the start point: J, and dJ/dP_m, dJ/dt_cl by the adjoint, forward sensitivities and
//      central finite differences (-smib_fd_step, relative; default 1e-6);
//   2. the TAO iteration table (iteration, P_m, J, dJ/dP_m by adjoint, forward, central FD);
//   3. the optimum and the same gradient table there.
// -hs_summary FILE writes the library's JSON summary of a final solve at the final P_m (with
// -hs_forward / -hs_adjoint as given: objective, gradient, forward_gradient, events, …).
//
// Measured on this machine (CN, LU; tests/example_smib.py asserts the comparisons):
//   J(1.06) = 2.03778340061013;
//   dJ/dP_m  = 144.12501228486985 (adjoint; forward: 0 apart; central FD: 3.4e-9 apart),
//              PETSc's ex3opt (hand-coded adjoint): 144.12501228486977 (6e-16; its -sa_method
//              tlm: 1e-15) — same model, same 34-step grid (0.09375, 0.1, 0.125, …, 0.1875, 0.2,
//              0.21875, …, 1: a step cut by an event is completed by a remainder step);
//   dJ/dt_cl = 768.989280125265 (adjoint = forward; central FD 768.989277163401, 3.9e-9 apart;
//              it is the event-time jump term alone; with -hs_event_derivative continuous, the
//              u̇⁻/u̇⁺ form of docs/theory.md §3, 770.177 — 1.5e-3 off the computed objective);
//   TAO: 8 iterations (CONVERGED_GATOL) to P_m* = 1.00792560722176, J* = −1.00732579854835, and
//   every line of -tao_monitor equals ex3opt's (2.03778/144.125, −0.552947/43.1456, …, "1.00793")
//   except the round-off-level last residual (4.4289e-12 vs 4.42962e-12).
//   BEULER and RK4 at dt = 1/32 and CN at 1/128: adjoint = forward, FD ≤ 6e-8.
//
// Zhang et al. (2017), Table III, was computed with the 2016 ex3opt, whose step was dt = 0.01 (the faults on
// grid points). With -ts_dt 0.01:
//   iteration   P_m (paper)                      dJ/dP_m adjoint = forward (paper)
//   0           1.06                             140.048795759452  (140.0487958)
//   1           1.032130008886  (1.032130009)     45.4076537111178  (45.40765371)
//   2           1.018758330586  (1.018758331)     14.8469850312717  (14.84698503)
// and the optimum 1.00790124418685 (paper 1.0079). PETSc 3.18's BLMVM gets there in 9 iterations
// with TAO's default tolerances (10 with -tao_gatol 1e-14 -tao_grtol 1e-14 -tao_gttol 1e-14, the
// paper's "all tolerances 1e-14"); the paper reports 13. Iterations 0–2 agree with Table III to
// every printed digit, so the gap lies in the later BLMVM iterations of the 2016 TAO (BLMVM was
// rebuilt on PETSc's MatLMVM framework in 2018). The paper's finite differences (one-sided,
// h = 7.45e-9) are limited by the nonlinear-solver tolerance; the central differences printed here
// (h = 1e-6 · P_m) agree with the adjoint to ≤ 1e-8 relative to the start gradient at every
// iteration. (t_cl = 0.2 is a grid point at dt = 0.01: J is then only one-sidedly differentiable
// in t_cl, so check dJ/dt_cl at a step that does not put it on the grid, e.g. the default.)
//
// Options (besides all -ts_*, -tao_*, -hs_* options; -help lists them with their defaults; a
// value outside its domain — H, P_max, t_f, the FD step <= 0, D or sigma < 0 — is refused by
// name; -tao_type takes the bound-constrained methods fed by objective and gradient: blmvm,
// bqnls, bncg, bqnkls, bqnktr, bqnktl):
//   -Pm <1.06> -tcl <0.2> -tf <0.1>       start value of P_m, clearing time, fault time
//   -Inertia <5> -D <5> -Pmax <E V / X>   machine data (option names as ex3opt; -Pmax applies
//                                         before and after the fault — in ex3opt it only changes
//                                         the first evaluation's pre-fault value)
//   -sigma <1e4> -eta <2> -delta_max <1>  penalty
//   -smib_optimize <true>                 run TAO (false: only the start-point table)
//   -smib_gradient adjoint|forward|fd     the gradient TAO uses (default adjoint)
//   -smib_fd <true>                       compute the central finite-difference columns
//   -smib_fd_step <1e-6>                  relative central-difference step of the FD columns
//   -smib_fault_events time|guard         time events (default), or the same instants as
//                                         state events γ = t − t_f, γ = t − t_cl (rising), located
//                                         by the engine (what ex3opt does with TSEvent); the
//                                         results are identical (a cross-check of both paths)
//
// Run:
//   build/examples/smib_optimization
//   build/examples/smib_optimization -tao_monitor -tao_converged_reason
//   build/examples/smib_optimization -smib_optimize 0 -hs_forward -hs_adjoint -hs_summary s.json
//   build/examples/smib_optimization -smib_optimize 0 -hs_check_gradient
//   build/examples/smib_optimization -ts_dt 0.01 -tao_gatol 1e-14 -tao_grtol 1e-14 -tao_gttol 1e-14
//                                                                      ([Zhang2017] Table III)
//   mpiexec -n 3 build/examples/smib_optimization
#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscsys.h>
#include <petsctao.h>
#include <petscts.h>

#include "example_options.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

using namespace hybridsens;

// Machine, fault and penalty data (replicated on every rank).
struct SmibData {
  PetscReal H = 5.0, D = 5.0, omegaB = 120.0 * PETSC_PI, omegaS = 1.0;
  PetscReal Pmax = 1.1378 * 1.0 / 0.545;  // E V / X
  PetscReal tFault = 0.1;
  PetscReal sigma = 1e4, deltaMax = 1.0;
  PetscInt eta = 2;
  bool faultsAsGuards = false;
};

enum Phase : PetscInt { PreFault = 0, FaultOn = 1, PostFault = 2 };

class Smib : public ADModel<Smib> {
public:
  explicit Smib(const SmibData &data) : s_(data) {}

  PetscInt stateSize() const override { return 2; }  // (δ, ω), on rank 0
  DiscreteState initialDiscreteState() const override { return {PreFault}; }
  std::vector<PetscReal> defaultParameters() const override { return {1.06, 0.2}; }
  std::vector<std::string> parameterNames() const override { return {"Pm", "tcl"}; }

  template <class S> void initialState(const S *p, S *u0) const {
    using std::asin;
    u0[0] = asin(p[0] / s_.Pmax);  // pre-fault equilibrium: P_m = P_max sin δ0
    u0[1] = s_.omegaS;
  }
  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &d, S *f) const {
    using std::sin;
    const PetscReal pmax = d[0] == FaultOn ? 0.0 : s_.Pmax;
    f[0] = s_.omegaB * (u[1] - s_.omegaS);
    f[1] = s_.omegaS / (2.0 * s_.H) * (p[0] - pmax * sin(u[0]) - s_.D * (u[1] - s_.omegaS));
  }

  // Fault on at t_f, cleared at t_cl = p[1]: time events (default) ...
  PetscInt numTimeEvents() const override { return s_.faultsAsGuards ? 0 : 2; }
  std::string timeEventName(PetscInt k) const override { return k == 0 ? "fault_on" : "fault_cleared"; }
  template <class S> S eventTime(PetscInt k, const S *p) const { return k == 0 ? S(s_.tFault) : p[1]; }
  // ... or the same instants as rising state events γ = t − T_k(p), located by the engine
  // (γ_t = 1, so τ_p = ∂T/∂p as for the time event). Guard k is armed only in phase k.
  PetscInt numGuards() const override { return s_.faultsAsGuards ? 2 : 0; }
  GuardInfo guardInfo(PetscInt j) const override { return {j == 0 ? "fault_on" : "fault_cleared", Direction::Rising}; }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j; }
  template <class S> S guard(PetscInt j, S t, const S *, const S *p, const DiscreteState &) const {
    return t - eventTime<S>(j, p);
  }

  PetscErrorCode transition(const EventId &id, PetscReal t, Vec, DiscreteState &d) const override {
    PetscFunctionBeginUser;
    // Event k moves phase k to k + 1; anything else means t_cl ≤ t_f or a repeated event.
    PetscCheck(d[0] == id.index, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "smib: event '%s' at t = %g in phase %" PetscInt_FMT " (the fault must be applied before it is cleared: t_f < t_cl)",
               id.index == 0 ? "fault_on" : "fault_cleared", (double)t, d[0]);
    d[0] = id.index + 1;
    PetscFunctionReturn(0);
  }

private:
  SmibData s_;
};

// J = −P_m + σ ∫ max(0, δ − δ_max)^η dt.
class SmibCost : public ADCost<SmibCost> {
public:
  explicit SmibCost(const SmibData &data) : s_(data) {}
  std::string name() const override { return "J"; }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  template <class S> S terminal(S, const S *, const S *p, const DiscreteState &) const { return -p[0]; }
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    const S excess = u[0] - s_.deltaMax;
    if (!(excess > 0)) return S(0.0);
    S r = s_.sigma;
    for (PetscInt i = 0; i < s_.eta; ++i) r *= excess;  // integer power, as ex3opt's PetscPowScalarInt
    return r;
  }

private:
  SmibData s_;
};

enum GradientSource { ADJOINT, FORWARD, FD };
static const char *const GradientSources[] = {"adjoint", "forward", "fd", "GradientSource", "", nullptr};
enum FaultEvents { TIME, GUARD };
static const char *const FaultEventKinds[] = {"time", "guard", "FaultEvents", "", nullptr};

// J and its gradient at one point, three ways.
struct Evaluation {
  std::vector<PetscReal> p;
  PetscReal J = 0;
  std::vector<PetscReal> adjoint, forward, fd;  // dJ/d(P_m, t_cl)
};

// The optimization problem as TAO sees it: one Solver re-run at each parameter point.
struct SmibProblem {
  Solver &solver;
  std::vector<PetscReal> p;  // current parameters; p[0] = P_m is TAO's variable
  PetscReal fdStep = 1e-6;
  GradientSource source = ADJOINT;
  bool withFD = true;

  // J at p with the gradient by the chosen means (none: values only).
  PetscErrorCode evaluate(const std::vector<PetscReal> &p, bool forward, bool adjoint, PetscReal *J) {
    PetscFunctionBeginUser;
    PetscCall(solver.setParameters(p));
    solver.setForwardSensitivities(forward);
    solver.setAdjoint(adjoint);
    PetscCall(solver.solve());
    *J = solver.result().objective.at(0);
    PetscFunctionReturn(0);
  }

  // Central differences of J at p in the parameters vars (hybridsens::centralDifferences, step
  // fdStep · max(|p_j|, 1e-2)).
  PetscErrorCode centralDifference(const std::vector<PetscReal> &p, const std::vector<PetscInt> &vars, std::vector<PetscReal> &dJ) {
    std::vector<std::vector<PetscScalar>> fd;
    PetscFunctionBeginUser;
    PetscCall(solver.setParameters(p));
    PetscCall(centralDifferences(solver, vars, fdStep, fd));
    dJ.assign(fd.at(0).begin(), fd.at(0).end());
    PetscFunctionReturn(0);
  }

  // Everything at p: one solve with forward and adjoint (same trajectory), FD in every parameter.
  PetscErrorCode evaluateAll(const std::vector<PetscReal> &p, Evaluation &e) {
    PetscFunctionBeginUser;
    e.p = p;
    e.fd.assign(p.size(), NAN);
    if (withFD) PetscCall(centralDifference(p, {0, 1}, e.fd));
    // Last, so that the solver's event log and statistics describe the point itself.
    PetscCall(evaluate(p, true, true, &e.J));
    e.adjoint = solver.result().gradient.at(0).adjointP;
    e.forward = solver.result().gradient.at(0).forwardP;
    PetscFunctionReturn(0);
  }
};

// TAO's variable P_m lives on rank 0 (global size 1); every rank needs its value.
static PetscErrorCode readPm(Vec X, PetscReal *Pm) {
  std::vector<PetscReal> x;
  PetscFunctionBeginUser;
  PetscCall(taoVectorValues(X, x));
  *Pm = x.at(0);
  PetscFunctionReturn(0);
}

static PetscErrorCode objectiveAndGradient(Vec X, PetscReal *f, Vec G, SmibProblem *prob) {
  PetscReal g = 0;
  PetscFunctionBeginUser;
  PetscCall(readPm(X, &prob->p[0]));
  switch (prob->source) {
  case ADJOINT:
    PetscCall(prob->evaluate(prob->p, false, true, f));
    g = prob->solver.result().gradient.at(0).adjointP.at(0);
    break;
  case FORWARD:
    PetscCall(prob->evaluate(prob->p, true, false, f));
    g = prob->solver.result().gradient.at(0).forwardP.at(0);
    break;
  case FD:
    std::vector<PetscReal> fd;
    PetscCall(prob->centralDifference(prob->p, {0}, fd));
    g = fd[0];
    PetscCall(prob->evaluate(prob->p, false, false, f));
    break;
  }
  PetscCall(setTaoVectorValues({g}, G));
  PetscFunctionReturn(0);
}

// TAO calls back from C: a C++ exception (std::vector::at, allocation) must not escape.
static PetscErrorCode FormFunctionGradient(Tao tao, Vec X, PetscReal *f, Vec G, void *ctx) {
  PetscFunctionBeginUser;
  try {
    PetscCall(objectiveAndGradient(X, f, G, static_cast<SmibProblem *>(ctx)));
  } catch (const std::exception &e) {
    SETERRQ(PetscObjectComm((PetscObject)tao), PETSC_ERR_LIB, "objective and gradient: C++ exception: %s", e.what());
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode printRow(MPI_Comm comm, PetscInt it, const Evaluation &e, PetscInt j) {
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "%4" PetscInt_FMT "  %17.15f  %19.15g  %21.15g  %21.15g  %21.15g\n", it, (double)e.p[0], (double)e.J,
                        (double)e.adjoint[j], (double)e.forward[j], (double)e.fd[j]));
  PetscFunctionReturn(0);
}

static PetscErrorCode printTableHeader(MPI_Comm comm, const char *wrt) {
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "%4s  %17s  %19s  %21s  %21s  %21s\n", "it", "P_m", "J", ("dJ/d" + std::string(wrt) + " adjoint").c_str(),
                        "forward", "central FD"));
  PetscFunctionReturn(0);
}

// One row of the iteration table per TAO iteration (at TAO's current iterate).
static PetscErrorCode iterationRow(Tao tao, SmibProblem *prob) {
  PetscInt it;
  PetscReal f, gnorm, cnorm, xdiff;
  TaoConvergedReason reason;
  Vec X;
  Evaluation e;
  PetscFunctionBeginUser;
  PetscCall(TaoGetSolutionStatus(tao, &it, &f, &gnorm, &cnorm, &xdiff, &reason));
  PetscCall(TaoGetSolution(tao, &X));
  std::vector<PetscReal> p = prob->p;
  PetscCall(readPm(X, &p[0]));
  PetscCall(prob->evaluateAll(p, e));
  PetscCall(printRow(PetscObjectComm((PetscObject)tao), it, e, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode IterationTable(Tao tao, void *ctx) {
  PetscFunctionBeginUser;
  try {
    PetscCall(iterationRow(tao, static_cast<SmibProblem *>(ctx)));
  } catch (const std::exception &e) {
    SETERRQ(PetscObjectComm((PetscObject)tao), PETSC_ERR_LIB, "iteration table: C++ exception: %s", e.what());
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode printPoint(MPI_Comm comm, const char *title, const Evaluation &e, const std::vector<std::string> &names) {
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(comm, "%s: P_m = %.15g, t_cl = %.15g, J = %.15g\n", title, (double)e.p[0], (double)e.p[1], (double)e.J));
  PetscCall(PetscPrintf(comm, "  %-10s %22s %22s %22s %12s %12s\n", "parameter", "adjoint", "forward", "central FD", "adj-fwd rel",
                        "adj-FD rel"));
  for (size_t j = 0; j < names.size(); ++j) {
    const PetscReal a = e.adjoint[j], scale = std::max({std::fabs(a), std::fabs(e.forward[j]), std::fabs(e.fd[j]), (PetscReal)1e-300});
    PetscCall(PetscPrintf(comm, "  dJ/d%-6s %22.15g %22.15g %22.15g %12.3e %12.3e\n", names[j].c_str(), (double)a, (double)e.forward[j],
                          (double)e.fd[j], (double)(std::fabs(a - e.forward[j]) / scale), (double)(std::fabs(a - e.fd[j]) / scale)));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "SMIB: maximize P_m under a rotor-angle limit through a fault (TAO + hybridsens adjoint).\n"));
  {
    MPI_Comm comm = PETSC_COMM_WORLD;
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    SmibData data;
    std::vector<PetscReal> p = {1.06, 0.2};
    PetscBool optimize = PETSC_TRUE, withFD = PETSC_TRUE;
    PetscReal fdStep = 1e-6;
    PetscEnum source = (PetscEnum)ADJOINT, faults = (PetscEnum)TIME;
    // The machine, fault and penalty data shape the model and the cost, which exist before the
    // Solver and its TS: they are read without the TS's options prefix (the TS has none here).
    PetscOptionsBegin(comm, nullptr, "SMIB: machine, fault and penalty", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-tf", "fault time", &data.tFault, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-Inertia", "inertia constant H", &data.H, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-D", "damping D", &data.D, examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-Pmax", "maximum electrical power E V / X", &data.Pmax, examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-sigma", "penalty weight", &data.sigma, examples::nonNegative()));
    PetscCall(examples::intOption(PetscOptionsObject, "-eta", "penalty exponent (integer >= 2: the integrand is then C1)", &data.eta, examples::atLeast(2)));
    PetscCall(examples::realOption(PetscOptionsObject, "-delta_max", "rotor angle limit [rad]", &data.deltaMax));
    PetscCall(examples::enumOption(PetscOptionsObject, "-smib_fault_events", "fault on/off as time events or as guards t - T", FaultEventKinds, &faults));
    PetscOptionsEnd();
    data.faultsAsGuards = faults == (PetscEnum)GUARD;

    Smib model(data);
    SmibCost cost(data);
    Solver solver(model);
    solver.addCost(cost);
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(comm, prefix, "SMIB optimization options", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-Pm", "start value of the mechanical power P_m", &p[0], examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-tcl", "fault clearing time (a parameter)", &p[1]));
    PetscCall(examples::boolOption(PetscOptionsObject, "-smib_optimize", "run TAO", &optimize));
    PetscCall(examples::enumOption(PetscOptionsObject, "-smib_gradient", "gradient used by TAO", GradientSources, &source));
    PetscCall(examples::realOption(PetscOptionsObject, "-smib_fd_step", "relative central-difference step", &fdStep, examples::positive()));
    PetscCall(examples::boolOption(PetscOptionsObject, "-smib_fd", "central finite-difference columns (start, iteration table, optimum)", &withFD));
    PetscOptionsEnd();
    PetscCheck(p[0] < data.Pmax, comm, PETSC_ERR_ARG_OUTOFRANGE, "-Pm %g: need 0 <= P_m < P_max = %g (pre-fault equilibrium)", (double)p[0],
               (double)data.Pmax);
    PetscCall(solver.setParameters(p));
    // ex3opt's settings as defaults.
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, 0.03125));
    PetscCall(TSSetMaxTime(ts, 1.0));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    const bool userForward = solver.forwardSensitivities(), userAdjoint = solver.adjoint();
    PetscReal T;
    PetscCall(TSGetMaxTime(ts, &T));
    PetscCheck(data.tFault < p[1] && p[1] < T, comm, PETSC_ERR_ARG_OUTOFRANGE, "need t_f < t_cl < T (t_f = %g, t_cl = %g, T = %g)",
               (double)data.tFault, (double)p[1], (double)T);

    SmibProblem prob{solver, p, fdStep, (GradientSource)source, (bool)withFD};
    const std::vector<std::string> names = model.parameterNames();

    PetscCall(PetscPrintf(comm, "smib_optimization: H = %g, D = %g, P_max = %.15g, t_f = %g, t_cl = %g, sigma = %g, eta = %" PetscInt_FMT
                                ", delta_max = %g, fault events as %s\n",
                          (double)data.H, (double)data.D, (double)data.Pmax, (double)data.tFault, (double)p[1], (double)data.sigma, data.eta,
                          (double)data.deltaMax, FaultEventKinds[faults]));
    Evaluation start;
    PetscCall(prob.evaluateAll(p, start));
    PetscCall(PetscPrintf(comm, "events:"));
    for (const auto &r : solver.result().events().records()) PetscCall(PetscPrintf(comm, " %s at t = %.17g (step %" PetscInt_FMT ");", r.name.c_str(), (double)r.time, r.step));
    PetscCall(PetscPrintf(comm, " %" PetscInt_FMT " steps\n", solver.result().stats.steps));
    PetscCall(printPoint(comm, "start", start, names));

    if (optimize) {
      // TAO may try the upper bound; there the pre-fault equilibrium asin(P_m / P_max) must exist.
      PetscCheck(data.Pmax > 1.1, comm, PETSC_ERR_ARG_OUTOFRANGE, "the bounds P_m in [0, 1.1] need -Pmax > 1.1 (got %g)", (double)data.Pmax);
      Tao tao;
      Vec X, lo, hi;
      PetscCall(VecCreateMPI(comm, rank == 0 ? 1 : 0, 1, &X));
      PetscCall(VecDuplicate(X, &lo));
      PetscCall(VecDuplicate(X, &hi));
      PetscCall(setTaoVectorValues({p[0]}, X));
      PetscCall(VecSet(lo, 0.0));
      PetscCall(VecSet(hi, 1.1));
      PetscCall(TaoCreate(comm, &tao));
      PetscCall(TaoSetType(tao, TAOBLMVM));
      PetscCall(TaoSetSolution(tao, X));
      PetscCall(TaoSetVariableBounds(tao, lo, hi));
      PetscCall(TaoSetObjectiveAndGradient(tao, nullptr, FormFunctionGradient, &prob));
      PetscCall(TaoSetMonitor(tao, IterationTable, &prob, nullptr));
      PetscCall(TaoSetFromOptions(tao));
      PetscCall(checkTaoType(tao));  // -tao_type: a bound-constrained method fed by objective and gradient
      PetscCall(PetscPrintf(comm, "TAO (%s gradient):\n", GradientSources[source]));
      PetscCall(printTableHeader(comm, "Pm"));
      PetscCall(TaoSolve(tao));
      TaoConvergedReason reason;
      PetscInt its;
      PetscCall(TaoGetConvergedReason(tao, &reason));
      PetscCall(TaoGetIterationNumber(tao, &its));
      PetscCall(readPm(X, &prob.p[0]));
      PetscCall(PetscPrintf(comm, "TAO %s after %" PetscInt_FMT " iterations (%s): P_m = %.15g\n", reason > 0 ? "converged" : "did NOT converge", its,
                            TaoConvergedReasons[reason], (double)prob.p[0]));
      Evaluation opt;
      PetscCall(prob.evaluateAll(prob.p, opt));
      PetscCall(printPoint(comm, "optimum", opt, names));
      PetscCall(TaoDestroy(&tao));
      PetscCall(VecDestroy(&X));
      PetscCall(VecDestroy(&lo));
      PetscCall(VecDestroy(&hi));
    }

    // The JSON summary (and -hs_check_gradient) describe one solve at the final P_m with the
    // user's -hs_forward / -hs_adjoint.
    PetscReal J;
    PetscCall(prob.evaluate(prob.p, userForward, userAdjoint, &J));
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
