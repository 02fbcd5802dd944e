// hybridsens-grid — transient stability of a power-system case with exact sensitivities.
//
//   hybridsens-grid CASE.raw|CASE.m [CASE.dyr] [EVENTS.json] [options]
//
// Reads a PSS/E RAW (v32/v33) or MATPOWER (.m) network and its DYR dynamic records, builds the hybrid DAE of
// hybridsens::power::grid::CaseGrid (two-axis machines from GENROU with T''do = T''qo = 0 and
// classical ones from GENCLS, IEEET1 exciters and TGOV1 governors with non-windup limiters as
// state events, constant-impedance or ZIP loads (-load_model), the current balance of the network; the initial state
// from the case's AC power flow with exact ∂u0/∂p) and applies the disturbances of the events
// file (grid_events.hpp: bus faults, setpoint steps, line and generator trips) or, without one, the default disturbance: a
// three-phase fault (a shunt 1/-rfault at -fault_bus, default the last bus of the RAW file, on at
// -t_on 1.0 s, off at -t_off 1.1 s; -no_fault for a flat run). Every event time must lie before
// -ts_max_time. Costs: the frequency violation H_<bus> of every generator (σ ∫ max(0, f − f⁺,
// f⁻ − f)^η dt, Zhang et al. 2017, eq. 30), the centre-of-inertia rotor-angle spread and the
// voltage-dip integral (grid_costs.hpp; -grid_costs chooses some by name), with their gradients through the Solver (-hs_forward,
// -hs_adjoint, -hs_summary FILE, -hs_check_gradient as for every model). It prints the events,
// the final generator states and the sensitivity table (dispatch and the disturbances' times
// and sizes), writes it as CSV (-grid_csv FILE) and the trajectory for scripts/plot_grid.py
// (-grid_trajectory FILE); -grid_progress S prints a progress line to stderr every S seconds.
// Parameters (each settable by name): P<bus> (dispatch of the PV generators), t_on, t_off,
// KA<bus>, Vm<bus> and th<bus> of the slack and Vm<bus> of the PV buses, R<bus> (TGOV1 droops),
// the events file's times and sizes; those the power flow determines (Q<bus>, the slack's P,
// the other voltages) are refused by name.
// -help (also without a case) lists the options with their defaults.
#include "grid_report.hpp"

#include <hybridsens/atomic_file.hpp>
#include <hybridsens/hybridsens.hpp>
#include <hybridsens/option_reader.hpp>
#include <hybridsens/power/case_grid.hpp>
#include <hybridsens/power/grid_costs.hpp>
#include <hybridsens/power/grid_expression_cost.hpp>
#include <hybridsens/power/grid_events.hpp>
#include <hybridsens/power/readers.hpp>
#include <hybridsens/small_model.hpp>
#include <hybridsens/vec_entry.hpp>

#include <petscts.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace hybridsens;
using namespace hybridsens::power;

static const char help[] =
    "hybridsens-grid CASE.raw CASE.dyr [EVENTS.json] [options]: transient stability of a PSS/E case with a fault (or the events of EVENTS.json); "
    "frequency violations, rotor-angle spread and voltage dips with their sensitivities.\n";

// -help without a case: the parameters by pattern (their names come from the case), then the
// options of the library and of PETSc's TS, read from a one-state stand-in model.
static PetscErrorCode helpWithoutCase() {
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "hybridsens-grid: parameters (named after the case's buses; each also an option -NAME VALUE):\n"
                        "  -P<bus>: active power of a PV generator (pu; the slack's is an output of the power flow)\n"
                        "  -Vm<bus>: |V| of the slack and PV buses (pu); -th<bus>: angle of the slack bus (rad)\n"
                        "  -KA<bus>: IEEET1 exciter gain; -R<bus>: TGOV1 droop (pu on the system base)\n"
                        "  -t_on, -t_off: the fault's times (s); events file: -fault<n>_t_on, -fault<n>_t_off, -step<n>_t, -step<n>_size, -trip<n>_t, -gentrip<n>_t\n"
                        "  (Q<bus>, the slack's P and the other voltages are outputs of the power flow: setting them is refused)\n"));
  SmallModel standIn(1);
  standIn.x0 = {0.0};
  standIn.f = [](PetscReal, const PetscScalar *, PetscScalar *out, const ModeContext &) { out[0] = 0; };
  standIn.dfdu = [](PetscReal, const PetscScalar *, PetscScalar *out, const ModeContext &) { out[0] = 0; };
  Solver solver(standIn);
  PetscCall(solver.setFromOptions());
  PetscFunctionReturn(0);
}

// An output path the run cannot write is an error before the run, not after it (a temporary
// file next to it is opened and dropped; the target is left alone).
static PetscErrorCode checkWritable(const char *what, const std::string &path) {
  PetscFunctionBeginUser;
  if (path.empty()) PetscFunctionReturn(0);
  AtomicFile probe;
  PetscCall(probe.open(PETSC_COMM_WORLD, what, path));
  probe.discard();
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  // The leading arguments that are not options are the case files; PETSc sees the rest.
  std::vector<std::string> files;
  std::vector<char *> petscArgs = {argv[0]};
  std::string stray;
  {
    int i = 1;
    for (; i < argc && argv[i][0] != '-'; ++i) files.emplace_back(argv[i]);
    for (; i < argc; ++i) petscArgs.push_back(argv[i]);
    // Two words in a row after the options: the second is no option's value (PETSc would ignore it
    // silently, e.g. an events file after "-grid_progress 0" left the default fault in place).
    for (int k = 2; k < (int)petscArgs.size(); ++k)
      if (petscArgs[k][0] != '-' && petscArgs[k - 1][0] != '-') stray = petscArgs[k];
  }
  int pargc = (int)petscArgs.size();
  petscArgs.push_back(nullptr);
  char **pargv = petscArgs.data();
  PetscCall(PetscInitialize(&pargc, &pargv, nullptr, help));
  {
    PetscBool helpAsked = PETSC_FALSE;  // -help prints the usage line (help[]) and the options
    PetscCall(PetscOptionsHasName(nullptr, nullptr, "-help", &helpAsked));
    // The files: the case (RAW, or MATPOWER by its .m), then the DYR and the events file (by its .json), each optional.
    std::string dyrFile, eventsFile;
    bool filesOk = !files.empty() || helpAsked;
    for (size_t i = 1; i < files.size(); ++i) {
      const std::string &f = files[i];
      std::string &slot = f.size() > 5 && f.compare(f.size() - 5, 5, ".json") == 0 ? eventsFile : dyrFile;
      filesOk = filesOk && slot.empty();
      slot = f;
    }
    PetscCheck(stray.empty(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "hybridsens-grid: '%s' after the options is no option's value: give the files first (hybridsens-grid CASE.raw|CASE.m [CASE.dyr] [EVENTS.json] "
               "[options])",
               stray.c_str());
    PetscCheck(filesOk && files.size() <= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "hybridsens-grid: usage: hybridsens-grid CASE.raw|CASE.m [CASE.dyr] [EVENTS.json] [options] (got %zu file arguments: %s)",
               files.size(), files.empty() ? "none" : "at most one DYR and one .json events file after the case");
    NetworkCase net;
    DynamicData dyn;
    grid::CaseGridOptions o;
    PetscBool governors = PETSC_TRUE, noFault = PETSC_FALSE;
    PetscReal fmax = 60.5, fmin = 59.5, sigma = 1.0, eta = 2.0, vdipMin = 0.9, progress = 5.0;
    PetscInt faultBus = 1;  // the last bus of the RAW file once it is read
    PetscBool skipUnknown = PETSC_FALSE, faultOptionSet = PETSC_FALSE;
    std::string csvFile, trajectoryFile;
    std::vector<std::string> costChoice, terminalExpressions, integralExpressions;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "hybridsens-grid: the case", "");
    {
      OptionReader r(PetscOptionsObject);
      PetscCall(r.boolean("-skip_unknown_models", "skip DYR records of models hybridsens-grid does not support (listed), instead of refusing the file",
                          &skipUnknown));
      if (!files.empty()) {
        const std::string &c = files[0];
        const bool matpower = c.size() > 2 && c.compare(c.size() - 2, 2, ".m") == 0;  // MATPOWER case file; anything else is read as RAW
        PetscCall(matpower ? readMatpower(c, &net) : readRaw(c, &net));
        DyrOptions dopt;
        dopt.network = &net;
        dopt.skipUnknownModels = skipUnknown;
        dopt.models = grid::CaseGrid::supportedModels();
        PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-governors", &governors, nullptr));
        if (!governors) dopt.models.push_back("IEEEG1");  // every governor record is ignored then
        dopt.user = "hybridsens-grid", dopt.skipOption = "-skip_unknown_models";
        if (!dyrFile.empty()) PetscCall(readDyr(dyrFile, dopt, &dyn));
        for (const std::string &line : dyn.skipped) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hybridsens-grid: %s\n", line.c_str()));
        if (!net.buses.empty()) faultBus = net.buses.back().number;
        if (!eventsFile.empty()) PetscCall(grid::readGridEvents(PETSC_COMM_WORLD, eventsFile, &o.events));
      }
      PetscBool set;
      PetscCall(r.integer("-fault_bus", "bus number of the three-phase fault (default: the last bus of the RAW file)", &faultBus, 1, PETSC_MAX_INT, &set));
      faultOptionSet = set;
      PetscCall(r.real("-rfault", "fault resistance (pu)", &o.rfault, Range::positive(), &set));
      faultOptionSet = (PetscBool)(faultOptionSet || set);
      PetscCall(r.boolean("-no_fault", "no disturbance at all (a flat run)", &noFault));
      PetscCall(r.boolean("-governors", "use the TGOV1 records of the DYR file", &governors));
      // Generators without a machine record: refused unless a generic model is chosen (never a silent default).
      PetscInt generic = 0;
      PetscBool genericSet = PETSC_FALSE;
      PetscCall(r.choice("-generic_machine", "model of generators without a DYR machine record (default: refuse them)", {"none", "gencls"}, &generic, &genericSet));
      if (genericSet && generic == 1) o.genericMachine = "gencls";
      PetscBool hSet = PETSC_FALSE, dSet = PETSC_FALSE, xSet = PETSC_FALSE;
      PetscCall(r.real("-generic_H", "generic GENCLS: inertia H (s, on the generator's MBASE)", &o.genericH, Range::positive(), &hSet));
      PetscCall(r.real("-generic_D", "generic GENCLS: damping D (pu power per pu speed, on MBASE)", &o.genericD, Range::nonNegative(), &dSet));
      PetscCall(r.real("-generic_Xdp", "generic GENCLS: transient reactance X'd (pu on MBASE)", &o.genericXdp, Range::positive(), &xSet));
      PetscCheck(o.genericMachine == "gencls" || !(hSet || dSet || xSet), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
                 "hybridsens-grid: -generic_H, -generic_D and -generic_Xdp set the generic machine: they need -generic_machine gencls");
      // Loads: constant impedance unless -load_model zip, whose fractions have no default (a forgotten one would change every gradient).
      PetscInt loadModel = 0;
      PetscBool zipPSet = PETSC_FALSE, zipQSet = PETSC_FALSE, pqSet = PETSC_FALSE, iSet = PETSC_FALSE;
      std::vector<PetscReal> zipP, zipQ;
      PetscCall(r.choice("-load_model", "loads in the dynamics: z (constant impedance at the power-flow voltage) or zip (-load_zip_p, -load_zip_q)", {"z", "zip"},
                         &loadModel));
      PetscCall(r.realList("-load_zip_p", "zip loads: fractions Z,I,P of the active load (constant impedance, current, power; sum 1)", &zipP, Range::closed(0, 1),
                           &zipPSet));
      PetscCall(r.realList("-load_zip_q", "zip loads: fractions Z,I,P of the reactive load (sum 1)", &zipQ, Range::closed(0, 1), &zipQSet));
      // Lower breaks are refused (grid_loads.cpp: the mode checks could pick a collapsed network solution).
      const Range breaks{0.3, 1, false, true};
      PetscCall(r.real("-load_pq_break", "zip loads: below this |V| (pu) the constant-power part is constant impedance (PSS/E's PQBRAK)", &o.pqBreak, breaks,
                       &pqSet));
      PetscCall(r.real("-load_i_break", "zip loads: below this |V| (pu) the constant-current part is constant impedance", &o.iBreak, breaks, &iSet));
      if (loadModel == 1) {
        o.loadModel = "zip";
        PetscCheck(zipPSet && zipQSet, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
                   "hybridsens-grid: -load_model zip needs both -load_zip_p Z,I,P and -load_zip_q Z,I,P (the fractions of constant impedance, current and power; "
                   "no default)");
        for (const auto &[option, list, out] : {std::make_tuple("-load_zip_p", &zipP, &o.zipP), std::make_tuple("-load_zip_q", &zipQ, &o.zipQ)}) {
          PetscCheck(list->size() == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s needs three fractions Z,I,P (got %zu)", option, list->size());
          std::copy(list->begin(), list->end(), out->begin());
        }
      } else
        PetscCheck(!(zipPSet || zipQSet || pqSet || iSet), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
                   "hybridsens-grid: -load_zip_p, -load_zip_q, -load_pq_break and -load_i_break describe ZIP loads: they need -load_model zip");
      PetscCall(r.real("-freq_max", "upper frequency limit f+ of the violation metric (Hz)", &fmax, Range::positive()));
      PetscCall(r.real("-freq_min", "lower frequency limit f- of the violation metric (Hz)", &fmin, Range::positive()));
      PetscCall(r.real("-sigma", "weight sigma of the violation metric", &sigma, Range::nonNegative()));
      // eta >= 1: the metric max(0, f - f+, f- - f)^eta must be differentiable.
      PetscCall(r.real("-eta", "exponent eta of the violation metric (>= 1: differentiable)", &eta, Range{1, PETSC_MAX_REAL, false, false}));
      PetscCall(r.real("-vdip_min", "voltage-dip cost: |V| below this (pu) counts", &vdipMin, Range::positive()));
      // The adjoint carries one λ per cost: a large case with one H per generator needs a choice.
      PetscCall(r.textList("-grid_costs", "the costs to compute, by name: H<generator>, coi_spread, voltage_dip (default: all)", &costChoice));
      // User costs from named quantities (grid_expression_cost.hpp), after the chosen ones.
      PetscCall(r.textList("-grid_terminal_cost", "user costs e(u(T)), one per expression: sums of ±c*name, names delta omega dw Efd VR + generator, Vr Vi Vm + bus",
                           &terminalExpressions));
      PetscCall(r.textList("-grid_integral_cost", "user costs: the integral of e(u(t))^2 over the run, one per expression (names as -grid_terminal_cost)",
                           &integralExpressions));
      PetscCall(r.text("-grid_csv", "write the sensitivity table (every cost, every parameter that has an effect) as CSV to this file", &csvFile));
      PetscCall(r.text("-grid_trajectory", "write frequencies, voltages, limited states, running costs (and gradients) per step as CSV to this file",
                       &trajectoryFile));
      PetscCall(r.real("-grid_progress", "print a progress line to stderr every this many seconds of wall time (0: never)", &progress, Range::nonNegative()));
    }
    PetscCheck(fmin < fmax, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: need -freq_min < -freq_max (got %g, %g)", (double)fmin, (double)fmax);
    PetscOptionsEnd();
    if (files.empty()) {  // -help without a case: the options above, the parameters, the library's
      PetscCall(helpWithoutCase());
      PetscCall(PetscFinalize());
      return 0;
    }
    // The events file or -no_fault replaces the command line's fault: its options would do nothing.
    PetscCheck(!(faultOptionSet && (!eventsFile.empty() || noFault)), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
               "hybridsens-grid: -fault_bus / -rfault set the command line's fault, which %s replaces: give the fault in the events file",
               noFault ? "-no_fault" : eventsFile.c_str());
    PetscCheck(!(noFault && !eventsFile.empty()), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "hybridsens-grid: -no_fault and an events file (%s) contradict each other",
               eventsFile.c_str());
    o.faultBus = (int)faultBus;
    o.governors = governors;
    o.noDisturbance = noFault;
    std::unique_ptr<grid::CaseGrid> model;
    PetscCall(grid::CaseGrid::create(net, dyn, o, &model));
    grid::CaseGrid &G = *model;
    std::vector<std::unique_ptr<LocalKernelCost>> costs;
    for (PetscInt g = 0; g < G.numGens(); ++g) costs.push_back(std::make_unique<grid::FrequencyViolationCost>(G, g, fmax, fmin, sigma, eta));
    costs.push_back(std::make_unique<grid::RotorAngleSpreadCost>(G));
    costs.push_back(std::make_unique<grid::VoltageDipCost>(G, vdipMin));
    if (!costChoice.empty()) {
      std::vector<std::unique_ptr<LocalKernelCost>> chosen;
      for (const std::string &name : costChoice) {
        auto it = std::find_if(costs.begin(), costs.end(), [&](const auto &c) { return c && c->name() == name; });
        PetscCheck(it != costs.end(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
                   "hybridsens-grid: -grid_costs: no cost named '%s' (or named twice); the costs are H<generator> (e.g. H%s), coi_spread, voltage_dip",
                   name.c_str(), G.genLabel(0).c_str());
        chosen.push_back(std::move(*it));
      }
      costs = std::move(chosen);
    }
    for (int integral = 0; integral < 2; ++integral)
      for (const std::string &text : integral ? integralExpressions : terminalExpressions) {
        QuantityExpression e;
        PetscCall(grid::parseGridExpression(G, text, integral ? "-grid_integral_cost" : "-grid_terminal_cost", &e));
        costs.push_back(std::make_unique<QuantityCost>(G, e, integral == 1));
      }
    std::vector<std::string> costNames;
    for (auto &c : costs) {
      PetscCall(c->setUp());
      costNames.push_back(c->name());
    }

    Solver solver(G);
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    std::vector<PetscReal> p = G.defaultParameters();
    const auto names = G.parameterNames();
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "hybridsens-grid: parameters", "");
    {
      OptionReader r(PetscOptionsObject);
      for (PetscInt k = 0; k < G.numParams(); ++k) {
        const std::string &n = names[k], option = "-" + n, why = G.ineffectiveParameter(k);
        if (!why.empty()) {  // an output of the power flow (or of nothing): setting it would silently do nothing
          PetscBool given;
          PetscCall(PetscOptionsHasName(nullptr, prefix, option.c_str(), &given));
          PetscCheck(!given, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s cannot be set: %s", option.c_str(), why.c_str());
          continue;
        }
        // Exciter gains, voltage magnitudes and droops are positive; dispatch, angles, times and step sizes any finite number.
        const bool positive = n.rfind("KA", 0) == 0 || n.rfind("Vm", 0) == 0 || n[0] == 'R';
        PetscCall(r.real(option.c_str(), ("parameter " + n).c_str(), &p[k], positive ? Range::positive() : Range::any()));
      }
    }
    PetscOptionsEnd();
    for (PetscInt e = 0; e < (PetscInt)G.events().size(); ++e) {
      const auto [a, b] = G.eventParameters(e);
      if (G.events()[e].kind == grid::GridEvent::BusFault) {
        PetscCheck(p[a] < p[b], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
                   "hybridsens-grid: %s: the fault must be applied before it is cleared: need -%s < -%s (got %g, %g)", G.events()[e].where.c_str(),
                   names[a].c_str(), names[b].c_str(), (double)p[a], (double)p[b]);
      }
      PetscCheck(p[a] > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: %s: the disturbance must come after the start t = 0 (-%s %g)",
                 G.events()[e].where.c_str(), names[a].c_str(), (double)p[a]);
    }
    PetscReal mismatch;
    PetscCall(G.checkPowerFlow(p, &mismatch));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hybridsens-grid: %s (%s), %" PetscInt_FMT " buses, %" PetscInt_FMT " generators, %" PetscInt_FMT
                                            " governors, %" PetscInt_FMT " states; power flow mismatch %.2e\n",
                          net.file.c_str(), net.format.c_str(), G.numBuses(), G.numGens(), G.numGovernors(), G.numStates(), (double)mismatch));
    if (G.numGeneric() > 0)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hybridsens-grid: %" PetscInt_FMT " generators without a machine record use the generic GENCLS (H %g s, D %g, X'd %g pu on MBASE)\n",
                            G.numGeneric(), (double)o.genericH, (double)o.genericD, (double)o.genericXdp));

    for (auto &c : costs) solver.addCost(*c);
    PetscCall(solver.setParameters(p));
    solver.setInitialStateSensitivities({});  // u0 follows from the parameters
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(solver.setFromOptions());
    {  // The network equations are algebraic: an explicit method cannot integrate them.
      PetscBool explicitMethod;
      PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &explicitMethod, TSRK, TSEULER, TSSSP, ""));
      TSType type;
      PetscCall(TSGetType(ts, &type));
      PetscCheck(!explicitMethod, PETSC_COMM_WORLD, PETSC_ERR_SUP,
                 "hybridsens-grid: -ts_type %s is an explicit method; the grid model is a DAE (the network equations are algebraic): use an implicit "
                 "one: cn (the default), beuler or theta",
                 type);
    }
    PetscCall(checkWritable("-hs_summary", solver.solverOptions().engine.summaryFile));
    PetscCall(checkWritable("-grid_csv", csvFile));
    PetscCall(checkWritable("-grid_trajectory", trajectoryFile));
    PetscReal T;
    PetscCall(TSGetMaxTime(ts, &T));
    for (PetscInt e = 0; e < (PetscInt)G.events().size(); ++e) {  // an event outside the horizon would leave its columns silently zero
      const auto [a, b] = G.eventParameters(e);
      const PetscInt last = G.events()[e].kind == grid::GridEvent::BusFault ? b : a;
      PetscCheck(p[last] < T, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
                 "hybridsens-grid: %s: the disturbance (-%s %g) must be %s before the final time -ts_max_time %g (-no_fault for a run without one)",
                 G.events()[e].where.c_str(), names[last].c_str(), (double)p[last],
                 G.events()[e].kind == grid::GridEvent::BusFault ? "applied and cleared" : "applied", (double)T);
    }
    grid::GridMonitor monitor(G, costNames, trajectoryFile, progress, T);
    solver.setForwardMonitor([&monitor](const ForwardSample &s) { return monitor.sample(s); });
    PetscCall(solver.solve());
    PetscCall(monitor.finish());

    const SolveResult &result = solver.result();
    const PetscReal tf = result.finalTime;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "T = %g, %" PetscInt_FMT " steps (%" PetscInt_FMT " rejected), %zu events, simulation %.3f s%s\n", (double)tf,
                          result.stats.steps, result.stats.rejectedSteps, result.events().size(), result.stats.wallSeconds,
                          result.adjointComputed ? (", adjoint " + std::to_string(result.stats.adjointWallSeconds) + " s").c_str() : ""));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "disturbances:\n"));
    for (PetscInt e = 0; e < (PetscInt)G.events().size(); ++e) {
      const grid::GridEvent &ev = G.events()[e];
      const auto [a, b] = G.eventParameters(e);
      if (ev.kind == grid::GridEvent::BusFault)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  fault at bus %d (r = %g pu) on [%g, %g]\n", ev.bus, (double)ev.r, (double)p[a], (double)p[b]));
      else if (ev.kind == grid::GridEvent::GeneratorTrip)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  trip of the generator at bus %d%s at t = %g\n", ev.bus, ev.id.empty() ? "" : (" id '" + ev.id + "'").c_str(), (double)p[a]));
      else if (ev.kind == grid::GridEvent::LineTrip)
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  trip of the branch %d-%d%s at t = %g\n", ev.from, ev.to, ev.circuit.empty() ? "" : (" '" + ev.circuit + "'").c_str(), (double)p[a]));
      else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s step of the generator at bus %d by %g at t = %g\n", ev.setpoint.c_str(), ev.bus, (double)p[b], (double)p[a]));
    }
    if (G.events().empty()) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  none (-no_fault)\n"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "events:\n"));
    for (const auto &r : result.events().records()) {
      std::string what;
      for (PetscInt l = 0; l < G.numLimiters(); ++l) {
        const PetscInt a = r.before[1 + l], b = r.after[1 + l];
        if (a == b) continue;
        PetscScalar x;
        PetscCall(globalEntry(r.uplus, G.limitedState(l), &x));
        const std::string kind = G.limiterName(l).substr(0, G.limiterName(l).size() - G.genLabel(G.limiterGenerator(l)).size());  // VR, EFD, Pv, Gate, GateRate
        what += "  " + G.limiterName(l) + ((b != 0) ? " hits " : " leaves ") + kind + ((b == 1 || a == 1) ? "max" : "min") + " (" + kind + " = " +
                std::to_string((double)x) + ")";
      }
      const auto modes = G.loadModeChanges(r.before, r.after);
      if (!modes.empty()) what += "  ZIP loads: " + std::to_string(modes.size()) + " part(s) changed mode" + (modes.size() <= 4 ? " (" + modes[0] : "");
      for (size_t k = 1; k < modes.size() && modes.size() <= 4; ++k) what += ", " + modes[k];
      if (!modes.empty() && modes.size() <= 4) what += ")";
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.12f  %s%s\n", (double)r.time, r.name.c_str(), what.c_str()));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final generator states:\n"));
    for (PetscInt g = 0; g < G.numGens(); ++g) {
      PetscScalar delta, w, VR = 0;
      PetscCall(globalEntry(result.finalState(), G.deltaRow(g), &delta));
      PetscCall(globalEntry(result.finalState(), G.omegaRow(g), &w));
      if (G.regulatorRow(g) >= 0) PetscCall(globalEntry(result.finalState(), G.regulatorRow(g), &VR));
      // regulator: the exciter's limited state (VR; SEXS: Efd)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  gen %s (%s): delta = %.10f  f = %.10f Hz  regulator = %s\n", G.genLabel(g).c_str(), G.genModels(g).c_str(),
                            (double)delta, (double)(w / (2 * PETSC_PI)), G.regulatorRow(g) >= 0 ? std::to_string((double)VR).c_str() : "none"));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "costs: H_<bus> frequency violations (f in [%g, %g] Hz, sigma %g, eta %g), coi_spread (rotor-angle spread about the centre of "
                          "inertia, rad^2 s), voltage_dip (|V| below %g pu, pu^2 s)\n",
                          (double)fmin, (double)fmax, (double)sigma, (double)eta, (double)vdipMin));
    if (result.adjointComputed && result.forwardComputed)  // the full tables are in the JSON summary and the CSV
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adjoint vs forward: max relative difference %.2e\n", (double)result.adjointForwardDifference()));
    PetscCall(grid::printSensitivityTable(G, costNames, result));
    PetscCall(grid::writeSensitivityCsv(G, costNames, result, csvFile));
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
