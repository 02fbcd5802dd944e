// hybridsens-grid — transient stability of a power-system case with exact sensitivities.
//
//   hybridsens-grid CASE.raw CASE.dyr [options]
//
// Reads a PSS/E RAW (v32/v33) network and its DYR dynamic records, builds the hybrid DAE of
// hybridsens::power::grid::CaseGrid (two-axis machines from GENROU with T''do = T''qo = 0 and
// classical ones from GENCLS, IEEET1
// exciters and TGOV1 governors with non-windup limiters as state events, constant-impedance
// loads, the current balance of the network; the initial state from the case's AC power flow with
// exact ∂u0/∂p), applies a three-phase fault (a shunt 1/-rfault at -fault_bus, default the last bus
// of the RAW file, on at -t_on 1.0 s, off at -t_off 1.1 s: time events whose times are
// parameters; both must lie before -ts_max_time; -no_fault for a flat run) and computes the
// frequency-violation costs H_<bus> of every generator
// (σ ∫ max(0, f − f⁺, f⁻ − f)^η dt, Zhang et al. 2017, eq. 30) with their gradients through the
// Solver: -hs_forward, -hs_adjoint, -hs_summary FILE, -hs_check_gradient as for every model.
// Parameters (each settable by name): P<bus>, Q<bus> (dispatch), t_on, t_off, KA<bus>,
// Vm<bus>, th<bus> (slack and PV buses enter the power flow), R<bus> (TGOV1 droops).
// Defaults: Crank–Nicolson, dt = 0.01, T = 5 (-ts_type, -ts_dt, -ts_max_time override).
// Not yet: an events file (the third argument), GENSAL machines, subtransient GENROU,
// EXDC1/SEXS exciters, IEEEG1 governors: refused with the record's file:line.
// -help lists the options with their defaults.
#include <hybridsens/hybridsens.hpp>
#include <hybridsens/option_reader.hpp>
#include <hybridsens/power/case_grid.hpp>
#include <hybridsens/power/readers.hpp>
#include <hybridsens/vec_entry.hpp>

#include <petscts.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace hybridsens;
using namespace hybridsens::power;

static const char help[] = "hybridsens-grid CASE.raw CASE.dyr [options]: transient stability of a PSS/E case with a fault; sensitivities of frequency violations.\n";

int main(int argc, char **argv) {
  // The leading arguments that are not options are the case files; PETSc sees the rest.
  std::vector<std::string> files;
  std::vector<char *> petscArgs = {argv[0]};
  {
    int i = 1;
    for (; i < argc && argv[i][0] != '-'; ++i) files.emplace_back(argv[i]);
    for (; i < argc; ++i) petscArgs.push_back(argv[i]);
  }
  int pargc = (int)petscArgs.size();
  petscArgs.push_back(nullptr);
  char **pargv = petscArgs.data();
  PetscCall(PetscInitialize(&pargc, &pargv, nullptr, help));
  {
    PetscBool helpAsked = PETSC_FALSE;  // -help prints the usage line (help[]) and the options
    PetscCall(PetscOptionsHasName(nullptr, nullptr, "-help", &helpAsked));
    PetscCheck(files.size() == 1 || files.size() == 2 || (files.empty() && helpAsked), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "hybridsens-grid: usage: hybridsens-grid CASE.raw|CASE.m [CASE.dyr] [options] (got %zu file arguments; an events file is not supported yet)",
               files.size());
    NetworkCase net;
    DynamicData dyn;
    grid::CaseGridOptions o;
    PetscBool governors = PETSC_TRUE;
    PetscReal fmax = 60.5, fmin = 59.5, sigma = 1.0, eta = 2.0;
    PetscInt faultBus = 1;  // the last bus of the RAW file once it is read
    PetscBool skipUnknown = PETSC_FALSE;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "hybridsens-grid: the case", "");
    {
      OptionReader r(PetscOptionsObject);
      PetscCall(r.boolean("-skip_unknown_models", "skip DYR records of models the reader does not know (listed), instead of refusing the file", &skipUnknown));
      if (!files.empty()) {
        const std::string &c = files[0];
        const bool matpower = c.size() > 2 && c.compare(c.size() - 2, 2, ".m") == 0;  // MATPOWER case file; anything else is read as RAW
        PetscCall(matpower ? readMatpower(c, &net) : readRaw(c, &net));
        DyrOptions dopt;
        dopt.network = &net;
        dopt.skipUnknownModels = skipUnknown;
        if (files.size() == 2) PetscCall(readDyr(files[1], dopt, &dyn));
        for (const std::string &line : dyn.skipped) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hybridsens-grid: %s\n", line.c_str()));
        if (!net.buses.empty()) faultBus = net.buses.back().number;
      }
      PetscCall(r.integer("-fault_bus", "bus number of the three-phase fault (default: the last bus of the RAW file)", &faultBus, 1, PETSC_MAX_INT));
      PetscCall(r.real("-rfault", "fault resistance (pu)", &o.rfault, Range::positive()));
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
      PetscCall(r.real("-freq_max", "upper frequency limit f+ of the violation metric (Hz)", &fmax, Range::positive()));
      PetscCall(r.real("-freq_min", "lower frequency limit f- of the violation metric (Hz)", &fmin, Range::positive()));
      PetscCall(r.real("-sigma", "weight sigma of the violation metric", &sigma, Range::nonNegative()));
      // eta >= 1: the metric max(0, f - f+, f- - f)^eta must be differentiable.
      PetscCall(r.real("-eta", "exponent eta of the violation metric (>= 1: differentiable)", &eta, Range{1, PETSC_MAX_REAL, false, false}));
    }
    PetscCheck(fmin < fmax, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: need -freq_min < -freq_max (got %g, %g)", (double)fmin, (double)fmax);
    PetscOptionsEnd();
    if (files.empty()) {  // -help without a case: the options above are listed
      PetscCall(PetscFinalize());
      return 0;
    }
    o.faultBus = (int)faultBus;
    o.governors = governors;
    std::unique_ptr<grid::CaseGrid> model;
    PetscCall(grid::CaseGrid::create(net, dyn, o, &model));
    grid::CaseGrid &G = *model;
    std::vector<std::unique_ptr<grid::FrequencyViolationCost>> costs;
    for (PetscInt g = 0; g < G.numGens(); ++g) {
      costs.push_back(std::make_unique<grid::FrequencyViolationCost>(G, g, fmax, fmin, sigma, eta));
      PetscCall(costs.back()->setUp());
    }

    Solver solver(G);
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    std::vector<PetscReal> p = G.defaultParameters();
    const auto names = G.parameterNames();
    PetscBool noFault = PETSC_FALSE;
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "hybridsens-grid: parameters", "");
    {
      OptionReader r(PetscOptionsObject);
      PetscCall(r.boolean("-no_fault", "no disturbance: the fault's times are put beyond the final time (a flat run)", &noFault));
      for (PetscInt k = 0; k < G.numParams(); ++k) {
        const std::string &n = names[k];
        // Exciter gains, voltage magnitudes and droops are positive; dispatch, angles and fault times any finite number.
        const bool positive = n.rfind("KA", 0) == 0 || n.rfind("Vm", 0) == 0 || n[0] == 'R';
        PetscCall(r.real(("-" + n).c_str(), ("parameter " + n).c_str(), &p[k], positive ? Range::positive() : Range::any()));
      }
    }
    PetscOptionsEnd();
    PetscCheck(p[G.pTon()] < p[G.pToff()], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "hybridsens-grid: the fault must be applied before it is cleared: need -t_on < -t_off (got %g, %g)", (double)p[G.pTon()], (double)p[G.pToff()]);
    PetscCheck(p[G.pTon()] > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: the fault must be applied after the start t = 0 (-t_on %g)",
               (double)p[G.pTon()]);
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
    {  // A fault outside the horizon would leave H and its t_on / t_off columns silently zero.
      PetscReal T;
      PetscCall(TSGetMaxTime(ts, &T));
      if (noFault) {
        p[G.pTon()] = 2 * T + 1, p[G.pToff()] = 2 * T + 2;
        PetscCall(solver.setParameters(p));
      }
      PetscCheck(noFault || p[G.pToff()] < T, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
                 "hybridsens-grid: the fault (-t_on %g, -t_off %g) must be applied and cleared before the final time -ts_max_time %g "
                 "(-no_fault for a run without it)",
                 (double)p[G.pTon()], (double)p[G.pToff()], (double)T);
    }
    PetscCall(solver.solve());

    const SolveResult &result = solver.result();
    const PetscReal tf = result.finalTime;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "fault at bus %d on [%g, %g], T = %g, %" PetscInt_FMT " steps, %zu events\n", G.faultBusNumber(),
                          (double)p[G.pTon()], (double)p[G.pToff()], (double)tf, result.stats.steps, result.events().size()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "limiter events:\n"));
    for (const auto &r : result.events().records()) {
      for (PetscInt l = 0; l < G.numLimiters(); ++l) {
        const PetscInt a = r.before[1 + l], b = r.after[1 + l];
        if (a == b) continue;
        PetscScalar x;
        PetscCall(globalEntry(r.uplus, G.limitedState(l), &x));
        const std::string kind = G.limiterName(l).substr(0, G.limiterName(l).size() - G.genLabel(G.limiterGenerator(l)).size());  // VR, EFD, Pv, Gate, GateRate
        const std::string what = (b != 0 ? "hits " : "leaves ") + kind + ((b == 1 || a == 1) ? "max" : "min");
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.12f  %s %s (%s)  %s = %.10g\n", (double)r.time, G.limiterName(l).c_str(), what.c_str(), r.name.c_str(),
                              kind.c_str(), (double)x));
      }
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
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "frequency violations H_<bus>: f in [%g, %g] Hz, sigma %g, eta %g\n", (double)fmin, (double)fmax, (double)sigma,
                          (double)eta));
    PetscCall(solver.viewGradients(nullptr, false));
    const std::vector<std::vector<PetscScalar>> gP =
        result.gradientTable(result.adjointComputed ? &CostGradient::adjointP : &CostGradient::forwardP);
    if (result.adjointComputed || result.forwardComputed) {  // the layout of Zhang et al. (2017), Table V: rows H_i, columns the dispatch P_g
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sensitivities of frequency violations to dispatch at t = %g (%s):\n        ", (double)tf,
                            result.adjointComputed ? "adjoint" : "forward"));
      for (PetscInt g = 0; g < G.numGens(); ++g) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %12s", names[G.pP(g)].c_str()));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
      for (size_t k = 0; k < costs.size(); ++k) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-5s", costs[k]->name().c_str()));
        for (PetscInt g = 0; g < G.numGens(); ++g) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %12.6f", (double)gP[k][G.pP(g)]));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
      }
    }
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
