// The disturbances of a CaseGrid (grid_events.hpp): their parameters, kernels, time events and
// transitions.
//
// Parameters: the first bus fault uses t_on, t_off (the command line's fault); every other event
// adds its own after the governors' droops: a fault fault<n>_t_on, fault<n>_t_off, a setpoint step
// step<n>_t, step<n>_size, a line trip trip<n>_t, a generator trip gentrip<n>_t (n: the entry's
// position in the events file).
// Discrete state: the first fault's flag is d[0], the other faults' and the trips' follow the
// limiters' flags. Time events, per event in order:
// a fault's on and off switches, then a limiter check at each instant (after the network was
// re-solved: release exciter limiters whose free rate now points back into the band); a step's
// reset (u⁺ = u⁻ + size on the Vref or Pm row), then a limiter check; a line or generator trip's
// switch, then a limiter check. With ZIP loads three load-mode checks follow every switch of the
// network (grid_loads.cpp), before its limiter check. Simultaneous time events
// are taken in this order, so a check always sees the state after the switch it follows.
#include "case_text.hpp"

#include <hybridsens/power/admittance.hpp>
#include <hybridsens/power/case_grid.hpp>

namespace hybridsens {
namespace power {
namespace grid {
namespace {

// Fault e: a shunt conductance at its bus while its flag is 1.
struct SwitchedFault {
  static constexpr int numReads = 2, numWrites = 2, numParams = 0;
  PetscReal Gf;
  PetscInt flag;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    if (d[flag] != 1) return;
    f[0] = Gf * u[1];
    f[1] = Gf * u[0];
  }
};

// A tripped branch: while its flag is 1, its admittance entry Y_ij V_j is taken out of bus i's
// balance again (the rows of Admittance in grid_kernels.hpp, negated).
struct TrippedAdmittance {
  static constexpr int numReads = 2, numWrites = 2, numParams = 0;
  PetscReal G, B;
  PetscInt flag;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    if (d[flag] != 1) return;
    f[0] = -(B * u[0] + G * u[1]);
    f[1] = -(G * u[0] - B * u[1]);
  }
};

// A setpoint step: at its time event the stepped constant state (Vref or Pm) jumps by the size parameter.
struct SetpointStepReset {
  static constexpr int numReads = 1, numWrites = 1, numParams = 1;
  PetscInt timeEvent;
  template <class S> void reset(const EventId &id, S, const S *u, const S *p, const DiscreteState &, S *uplus) const {
    if (id.kind == EventId::Time && id.index == timeEvent) uplus[0] = u[0] + p[0];
  }
};

} // namespace

PetscErrorCode CaseGrid::planDisturbances(const CaseGridOptions &o, const std::map<int, PetscInt> &busPos, const std::vector<std::vector<PetscInt>> &gensAt,
                                           const NetworkCase &net) {
  const std::string &caseFile = net.file;
  const MPI_Comm world = PETSC_COMM_WORLD;
  PetscFunctionBeginUser;
  events_.clear();
  if (!o.noDisturbance) {
    if (o.events.empty()) {  // the command line's fault
      GridEvent f;
      f.kind = GridEvent::BusFault, f.where = "the fault at bus " + std::to_string(o.faultBus < 0 ? buses_.back() : o.faultBus) + " (-fault_bus)", f.bus = o.faultBus < 0 ? buses_.back() : o.faultBus, f.r = o.rfault, f.tOn = o.tOn, f.tOff = o.tOff;
      PetscCheck(busPos.count(f.bus), world, PETSC_ERR_ARG_OUTOFRANGE, "-fault_bus %d: no such bus in %s", f.bus, caseFile.c_str());
      PetscCheck(o.rfault > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "-rfault must be positive (got %g)", (double)o.rfault);
      events_.push_back(f);
    } else events_ = o.events;
  }
  bool firstFault = true;
  faultBusNumber_ = 0;
  tripFlagOfGen_.assign(gens_.size(), -1);
  PetscInt tripped = 0;
  for (const GridEvent &e : events_) {
    eventParamOffset_.push_back(numEventParams_);
    tripEntries_.emplace_back();
    tripGen_.push_back(-1);
    if (e.kind == GridEvent::GeneratorTrip) {
      PetscCheck(busPos.count(e.bus), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: bus %d does not exist in %s", e.where.c_str(), e.bus, caseFile.c_str());
      PetscInt g = -1;
      for (PetscInt k : gensAt[busPos.at(e.bus)])
        if (e.id.empty() || gens_[k].id == trim(e.id)) {
          PetscCheck(g < 0, world, PETSC_ERR_ARG_WRONG, "%s: bus %d has %zu in-service generators: give \"id\" to say which one trips", e.where.c_str(), e.bus,
                     gensAt[busPos.at(e.bus)].size());
          g = k;
        }
      if (g < 0) {  // say whether it exists but is out of service
        bool outOfService = false;
        for (const Generator &x : net.generators)
          outOfService = outOfService || (x.bus == e.bus && !x.inService && (e.id.empty() || trim(x.id) == trim(e.id)));
        SETERRQ(world, PETSC_ERR_ARG_WRONG, "%s: %s generator at bus %d%s%s in %s: only an in-service generator can trip", e.where.c_str(),
                outOfService ? "the" : "no in-service", e.bus, e.id.empty() ? "" : (" with id '" + e.id + "'").c_str(), outOfService ? " is out of service" : "",
                caseFile.c_str());
      }
      PetscCheck(tripFlagOfGen_[g] < 0, world, PETSC_ERR_ARG_WRONG, "%s: generator %s is tripped by an earlier entry already", e.where.c_str(), gens_[g].label.c_str());
      // With every machine gone nothing holds the network's voltage: the DAE would have no meaningful solution.
      PetscCheck(++tripped < (PetscInt)gens_.size(), world, PETSC_ERR_ARG_WRONG,
                 "%s: this trip would leave no generator in service (%s has %zu): at least one must stay connected", e.where.c_str(), caseFile.c_str(),
                 gens_.size());
      tripGen_.back() = g;
      faultBusPos_.push_back(-1), stepRow_.push_back(-1), stepGen_.push_back(-1);
      faultFlag_.push_back(tripFlagOfGen_[g] = 1 + numLimiters() + numExtraFlags_++);
      numEventParams_ += 1;
      continue;
    }
    if (e.kind == GridEvent::LineTrip) {
      // The branch: a line or a transformer between the two buses (either direction) with that circuit id.
      NetworkCase one = net;  // the same buses, only the tripped branch: its admittance entries
      one.branches.clear(), one.transformers.clear(), one.fixedShunts.clear(), one.switchedShunts.clear();
      PetscInt matches = 0;
      auto same = [&](int from, int to, const std::string &ckt, bool inService) {
        return inService && ((from == e.from && to == e.to) || (from == e.to && to == e.from)) && (e.circuit.empty() || trim(ckt) == trim(e.circuit));
      };
      for (const Branch &br : net.branches)
        if (same(br.from, br.to, br.circuit, br.inService)) one.branches.push_back(br), ++matches;
      for (const Transformer &t : net.transformers)
        if (same(t.from, t.to, t.circuit, t.inService)) one.transformers.push_back(t), ++matches;
      PetscCheck(matches > 0, world, PETSC_ERR_ARG_WRONG, "%s: no in-service line or transformer between buses %d and %d%s in %s", e.where.c_str(), e.from, e.to,
                 e.circuit.empty() ? "" : (" with circuit '" + e.circuit + "'").c_str(), caseFile.c_str());
      PetscCheck(matches == 1, world, PETSC_ERR_ARG_WRONG, "%s: %" PetscInt_FMT " branches connect buses %d and %d: give \"circuit\" to say which one trips",
                 e.where.c_str(), matches, e.from, e.to);
      PetscCall(admittanceMatrix(one, &tripEntries_.back()));
      faultBusPos_.push_back(-1), stepRow_.push_back(-1), stepGen_.push_back(-1);
      faultFlag_.push_back(1 + numLimiters() + numExtraFlags_++);
      numEventParams_ += 1;
      continue;
    }
    PetscCheck(busPos.count(e.bus), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: bus %d does not exist in %s", e.where.c_str(), e.bus, caseFile.c_str());
    const PetscInt b = busPos.at(e.bus);
    faultBusPos_.push_back(e.kind == GridEvent::BusFault ? b : -1);
    if (e.kind == GridEvent::BusFault) {
      if (firstFault) faultFlag_.push_back(0), faultBusNumber_ = e.bus;
      else faultFlag_.push_back(1 + numLimiters() + numExtraFlags_++), numEventParams_ += 2;
      firstFault = false;
      stepRow_.push_back(-1), stepGen_.push_back(-1);
    } else {
      PetscCheck(!gensAt[b].empty(), world, PETSC_ERR_ARG_WRONG, "%s: bus %d has no in-service generator whose %s could step", e.where.c_str(), e.bus,
                 e.setpoint.c_str());
      PetscCheck(gensAt[b].size() == 1, world, PETSC_ERR_SUP, "%s: bus %d has %zu generators: a step of one of them is not supported yet", e.where.c_str(), e.bus,
                 gensAt[b].size());
      const PetscInt g = gensAt[b][0];
      PetscCheck(e.setpoint != "Vref" || vref(g) >= 0, world, PETSC_ERR_SUP,
                 "%s: the generator at bus %d (%s) has no exciter: it has no Vref to step (a Pref step is possible)", e.where.c_str(), e.bus, gens_[g].models.c_str());
      faultFlag_.push_back(-1), stepGen_.push_back(g), stepRow_.push_back(-1);  // the row: once the layout is known (addDisturbances)
      numEventParams_ += 2;
    }
  }
  PetscFunctionReturn(0);
}

std::pair<PetscInt, PetscInt> CaseGrid::eventParameters(PetscInt e) const {
  if (events_[e].kind == GridEvent::LineTrip || events_[e].kind == GridEvent::GeneratorTrip) return {pEvent(e), -1};  // its time only
  if (faultFlag_[e] == 0) return {pTon(), pToff()};
  return {pEvent(e), pEvent(e) + 1};
}

PetscErrorCode CaseGrid::addDisturbances() {
  PetscFunctionBeginUser;
  for (PetscInt e = 0; e < (PetscInt)events_.size(); ++e) {
    const GridEvent &ev = events_[e];
    const auto [a, b] = eventParameters(e);
    const std::string n = std::to_string(ev.entry);
    auto at = [this](std::string name, PetscInt param, TimeAction action) {
      addTimeEvent(std::move(name), [param](const TimeScalar *p) -> TimeScalar { return p[param]; });
      timeActions_.push_back(action);
    };
    // With ZIP loads, after the network switches: three checks of the load modes (each followed by a re-solve).
    auto loadChecks = [&](const std::string &instant, PetscInt param) {
      if (zipBuses_.empty()) return;
      for (int k = 1; k <= 3; ++k) at("load_modes" + std::to_string(k) + "_" + instant, param, {TimeAction::LoadCheck, e});
    };
    if (ev.kind == GridEvent::LineTrip) {
      nominal_[a] = ev.time, names_[a] = "trip" + n + "_t";
      for (const AdmittanceEntry &y : tripEntries_[e])
        add(TrippedAdmittance{y.y.real(), y.y.imag(), faultFlag_[e]}, {{vr((PetscInt)y.j), vi((PetscInt)y.j)}, {vr((PetscInt)y.i), vi((PetscInt)y.i)}, {}, {}});
      at("line_trip_" + std::to_string(ev.from) + "_" + std::to_string(ev.to) + "_" + n, a, {TimeAction::Trip, e});
      loadChecks("trip_" + n, a);
      at("limiter_check_trip_" + n, a, {TimeAction::LimiterCheck, e});
    } else if (ev.kind == GridEvent::GeneratorTrip) {
      nominal_[a] = ev.time, names_[a] = "gentrip" + n + "_t";
      at("generator_trip_" + gens_[tripGen_[e]].label + "_" + n, a, {TimeAction::GeneratorTrip, e});
      loadChecks("gentrip_" + n, a);
      at("limiter_check_gentrip_" + n, a, {TimeAction::LimiterCheck, e});
    } else if (ev.kind == GridEvent::BusFault) {
      nominal_[a] = ev.tOn, nominal_[b] = ev.tOff;
      const bool first = faultFlag_[e] == 0;
      if (!first) names_[a] = "fault" + n + "_t_on", names_[b] = "fault" + n + "_t_off";
      const PetscInt bus = faultBusPos_[e];
      add(SwitchedFault{1.0 / ev.r, faultFlag_[e]}, {{vr(bus), vi(bus)}, {vr(bus), vi(bus)}, {}, {}});
      const std::string suffix = first ? "" : "_" + n;
      at("fault_on" + suffix, a, {TimeAction::FaultOn, e});
      at("fault_off" + suffix, b, {TimeAction::FaultOff, e});
      loadChecks("on" + suffix, a);
      loadChecks("off" + suffix, b);
      at("limiter_check_on" + suffix, a, {TimeAction::LimiterCheck, e});
      at("limiter_check_off" + suffix, b, {TimeAction::LimiterCheck, e});
    } else {
      nominal_[a] = ev.time, nominal_[b] = ev.size;
      names_[a] = "step" + n + "_t", names_[b] = "step" + n + "_size";
      const PetscInt g = stepGen_[e];
      stepRow_[e] = ev.setpoint == "Vref" ? vref(g) : pm(g);
      add(SetpointStepReset{(PetscInt)timeActions_.size()}, {{stepRow_[e]}, {stepRow_[e]}, {b}, {}});
      at("step_" + ev.setpoint + gens_[g].label + "_" + n, a, {TimeAction::Step, e});
      at("limiter_check_step_" + n, a, {TimeAction::LimiterCheck, e});
    }
  }
  PetscFunctionReturn(0);
}

bool CaseGrid::hasReset(const EventId &id) const { return id.kind == EventId::Time && timeActions_[id.index].kind == TimeAction::Step; }

// Collective (the engine calls it on every rank with the replicated d).
PetscErrorCode CaseGrid::disturbanceTransition(PetscInt timeEvent, PetscReal t, Vec u, DiscreteState &d) const {
  PetscFunctionBeginUser;
  const TimeAction &a = timeActions_[timeEvent];
  // A switch of the network converts every ZIP part to constant impedance for the re-solve
  // (grid_loads.cpp); the load checks that follow set the modes from the new voltages.
  switch (a.kind) {
  case TimeAction::FaultOn: d[faultFlag_[a.event]] = 1, convertAllLoads(d); break;
  case TimeAction::FaultOff: d[faultFlag_[a.event]] = 0, convertAllLoads(d); break;
  case TimeAction::Trip:
  case TimeAction::GeneratorTrip: d[faultFlag_[a.event]] = 1, convertAllLoads(d); break;
  case TimeAction::LoadCheck: PetscCall(setLoadFlagsFromVoltages(t, u, d, false)); break;
  case TimeAction::Step: {
    // A Pm step moves the governor's free valve rate at once; whether a valve held at its limit
    // is released then depends on its droop R, a parameter the transition does not see: refuse
    // rather than guess.
    const GridEvent &ev = events_[a.event];
    PetscInt valve = -1;  // the governor valve's limiter of the stepped generator
    for (PetscInt l = 0; l < numLimiters(); ++l)
      if (limiterIsGovernor(l) && limiterGenerator(l) == stepGen_[a.event]) valve = l;
    const PetscInt trip = generatorTripFlag(stepGen_[a.event]);
    PetscCheck(trip < 0 || d[trip] != 1, comm(), PETSC_ERR_ARG_WRONG, "%s: the %s step at t = %g finds the generator at bus %d tripped already",
               ev.where.c_str(), ev.setpoint.c_str(), (double)t, ev.bus);
    PetscCheck(ev.setpoint != "Pref" || valve < 0 || d[1 + valve] == 0, comm(), PETSC_ERR_SUP,
               "%s: the Pref step at t = %g finds the governor valve of the generator at bus %d held at its limit: a step there is not supported "
               "(move the step or widen VMIN/VMAX)",
               ev.where.c_str(), (double)t, ev.bus);
    break;
  }
  case TimeAction::LimiterCheck:
    PetscCall(setLoadFlagsFromVoltages(t, u, d, true));  // the load modes settled (refused otherwise)
    PetscCall(releaseReversedExciterLimiters(t, u, d));
    break;
  }
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
