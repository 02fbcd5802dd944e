// The dynamic grid model of a case: a hybrid DAE built from PSS/E RAW (or MATPOWER) network data
// and DYR dynamic records with the kernels of grid_kernels.hpp and machine_kernels.hpp.
//
// Network: every bus (file order) with the current balance 0 = Y V − I_gen + I_load (+ the fault
// shunt), Y from admittance.hpp (lines, transformers, fixed and switched shunts); loads as
// constant impedance at their power-flow voltage (P, Q ∝ |V|²), or ZIP loads (CaseGridOptions::
// loadModel, grid_loads.cpp) with their break voltages as state events.
// Generators: every in-service generator (several per bus allowed) with its DYR records, by
// (bus, machine id). Machines: GENCLS (constant E' behind X'd = the RAW ZX), GENROU (T''do =
// T''qo = 0 and no saturation: the two-axis machine of examples/wecc9; otherwise subtransient with
// PSS/E's quadratic saturation), GENSAL. Exciters (optional for GENROU/GENSAL: without one Efd
// is constant): IEEET1, EXDC1, ESDC1A (DC1A structure, VR with a non-windup limiter), SEXS (Efd
// with a non-windup limiter). Governors (optional): TGOV1 (valve limiter), IEEEG1 (single shaft:
// gate rate limit and gate position limiter). A generator without a
// machine record gets the generic model of CaseGridOptions::genericMachine (GENCLS with the
// options' H, D, X'd) or is refused by name. The equations are in docs/power-grids.md.
// Data converted from MBASE to the system base (X · S_base/MBASE, H and D · MBASE/S_base).
// Initial state: the AC power flow of the case (one slack bus: |V|, θ given; PV buses: the
// P of their generators and |V|; PQ buses: the loads; Newton from the file's voltages), every
// generator at rest on it (a bus's Q, and the slack's P, shared among its generators: each keeps
// its file value plus an MBASE-weighted share of the difference). Solved sparsely, ∂u0/∂p exact by
// the implicit function theorem (src/power/case_power_flow.hpp).
//
// Layout (computed at build time; nG generators, nB buses): for each generator its block of
// machine rows (E'q, E'd, δ, ω, Id, Iq, then ψ1d, ψ2q for a subtransient GENROU or ψkd for GENSAL,
// whose slot 1 is E''d) followed by its exciter's rows (IEEET1 with TR = 0 and KE ≠ 0: Efd, RF,
// VR; EXDC1/ESDC1A/general IEEET1: Efd, RF, VR, Vc, xLL; SEXS: Efd, xLL); then (Vr, Vi) of every
// bus; then each generator's constant exciter states (Vref, KA [, KE] | Vref, K | Efd for a
// machine without exciter | none for GENCLS), Pm of every generator, the loads' reference |V0|,
// and the governors' states (TGOV1: x1, x2; IEEEG1: xLL, P, x4..x7). For the wecc9 case this is
// exactly examples/wecc9's layout.
// Use the accessors below, never fixed offsets.
// Parameters: P_g, Q_g (dispatch; Q and the slack's P are outputs of the power flow, with zero
// sensitivity), t_on, t_off (fault times), KA_g of every generator with an exciter (SEXS: its K),
// Vm_b, θ_b (only the slack's and PV buses' enter), R_g of the TGOV1s and K_g of the IEEEG1s. Generators are named by
// their bus number ("P2", "KA3", "R2"), or bus_id where a bus has several ("P1034_2"); buses by
// number ("Vm9", "th1").
// Discrete state: d[0] fault on, d[1 + ℓ] limiter ℓ (exciter limiters in generator order, then
// governor valves: a TGOV1 valve; an IEEEG1 gate position, then its rate limit), then the flags
// of further faults, line and generator trips, then the ZIP loads' (per bus: constant power,
// constant current below its break); guards 4ℓ + GuardKind, then 4 per ZIP bus. A tripped
// generator (generator_trip) keeps its rows: its kernels are wrapped (generator_trip.hpp) so that
// its injection and stator currents are 0 and its differential states frozen. Time events: those of the
// disturbances (grid_events.hpp, grid_events.cpp); for the command line's fault as
// examples/wecc9: fault on/off, then the limiter checks at both instants (an exciter limiter
// whose free rate points back into its band after the network jump is released).
#pragma once

#include <hybridsens/power/admittance.hpp>
#include <hybridsens/power/case_data.hpp>
#include <hybridsens/power/dynamic_data.hpp>
#include <hybridsens/power/grid_events.hpp>
#include <hybridsens/power/grid_kernels.hpp>
#include <hybridsens/power/machine_kernels.hpp>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

struct CaseGridOptions {
  int faultBus = -1;          // bus number of the three-phase fault (default: the last bus of the file)
  PetscReal rfault = 1e-4;    // fault resistance (pu)
  PetscReal tOn = 1.0, tOff = 1.1;
  bool governors = true;      // use the DYR's governor records
  // Generators without a machine record in the DYR (or all, without a DYR): "" refuses them by
  // name; "gencls" gives each a classical machine with these constants on its MBASE.
  std::string genericMachine;
  PetscReal genericH = 5.0, genericD = 0.0, genericXdp = 0.3;
  // The disturbances (grid_events.hpp). Empty: the one fault above, unless noDisturbance.
  std::vector<GridEvent> events;
  bool noDisturbance = false;  // a flat run: no event at all
  // Loads (docs/power-grids.md, "Loads"). "z": constant impedance at the power-flow voltage.
  // "zip": each bus's power-flow load split after the power flow (as PSS/E's CONL) into the
  // fractions (Z, I, P) of zipP and zipQ of constant impedance, current and power; below
  // pqBreak the constant-power part, below iBreak the constant-current part become constant
  // impedance (state events), so the network stays solvable at low voltage.
  std::string loadModel = "z";
  std::array<PetscReal, 3> zipP{{1, 0, 0}}, zipQ{{1, 0, 0}};
  PetscReal pqBreak = 0.7, iBreak = 0.5;
};

class CaseGrid : public LocalKernelModel {
public:
  // Builds the model (collective); refuses unsupported data naming file:line.
  static PetscErrorCode create(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &options, std::unique_ptr<CaseGrid> *out);

  PetscInt numGens() const { return (PetscInt)gens_.size(); }
  PetscInt numBuses() const { return (PetscInt)buses_.size(); }
  PetscInt numGovernors() const { return (PetscInt)govs_.size(); }
  PetscInt numZipBuses() const { return (PetscInt)zipBuses_.size(); }  // buses with a ZIP load (-load_model zip)
  // The ZIP load modes an event changed, named as their guards ("load5_constP_below_break"), for reports.
  std::vector<std::string> loadModeChanges(const DiscreteState &before, const DiscreteState &after) const;
  PetscInt numLimiters() const { return (PetscInt)limiters_.size(); }
  PetscInt numGeneric() const { return numGeneric_; }  // generators given the generic machine

  // ---- rows of the state (global indices; -1 where the generator has no such state) --------
  PetscInt machineRow(PetscInt g, PetscInt slot) const { return gens_[g].rows.machine + slot; }  // slot: MachineSlot
  PetscInt deltaRow(PetscInt g) const { return machineRow(g, SlotDelta); }
  PetscInt omegaRow(PetscInt g) const { return machineRow(g, SlotOmega); }
  PetscInt fieldVoltageRow(PetscInt g) const { return gens_[g].rows.efd; }   // Efd (exciter state or constant); -1 for GENCLS
  PetscInt regulatorRow(PetscInt g) const { return gens_[g].rows.vr; }       // the exciter's limited state (VR; SEXS: Efd); -1 without exciter
  // The former fixed slots (E'q, E'd, δ, ω, Id, Iq, Efd, RF, VR) of generator g: the row, or -1.
  PetscInt gs(PetscInt g, PetscInt k) const;
  PetscInt vr(PetscInt b) const { return busStart_ + 2 * b; }
  PetscInt vi(PetscInt b) const { return vr(b) + 1; }
  PetscInt vref(PetscInt g) const { return gens_[g].rows.vref; }
  PetscInt ka(PetscInt g) const { return gens_[g].rows.ka; }
  PetscInt pm(PetscInt g) const { return gens_[g].rows.pm; }
  PetscInt loadRef(PetscInt l) const { return loadStart_ + l; }
  PetscInt gov(PetscInt k, PetscInt j) const { return govRows_[k] + j; }  // TGOV1: x1, x2; IEEEG1: xLL, P, x4..x7
  PetscInt numStates() const { return numStates_; }
  // ---- parameters ---------------------------------------------------------------------------
  PetscInt pP(PetscInt g) const { return g; }
  PetscInt pQ(PetscInt g) const { return numGens() + g; }
  PetscInt pTon() const { return 2 * numGens(); }
  PetscInt pToff() const { return pTon() + 1; }
  PetscInt pKA(PetscInt g) const { return gens_[g].gain < 0 ? -1 : pToff() + 1 + gens_[g].gain; }  // -1 without exciter
  PetscInt pVm(PetscInt b) const { return pToff() + 1 + numGains_ + b; }
  PetscInt pTh(PetscInt b) const { return pVm(numBuses()) + b; }
  PetscInt pR(PetscInt k) const { return pTh(numBuses()) + k; }  // TGOV1: its droop R; IEEEG1: its gain K
  // Then the parameters of every event after the first bus fault (which uses t_on, t_off): a
  // fault's t_on, t_off, a step's time, size, a line trip's time (grid_events.cpp).
  PetscInt pEvent(PetscInt e) const { return pR(numGovernors()) + eventParamOffset_[e]; }
  PetscInt numParams() const { return pR(numGovernors()) + numEventParams_; }

  int genBusNumber(PetscInt g) const { return gens_[g].busNumber; }
  int busNumber(PetscInt b) const { return buses_[b]; }
  const std::string &genLabel(PetscInt g) const { return gens_[g].label; }  // "2", or "1034_2" where a bus has several
  const std::string &genModels(PetscInt g) const { return gens_[g].models; }  // e.g. "GENROU+SEXS+TGOV1"
  int faultBusNumber() const { return faultBusNumber_; }
  std::string limiterName(PetscInt l) const { return limiters_[l].name; }
  PetscInt limitedState(PetscInt l) const { return limiters_[l].row; }
  PetscInt limiterGenerator(PetscInt l) const { return limiters_[l].gen; }
  bool limiterIsGovernor(PetscInt l) const { return limiters_[l].governor; }
  // The DYR models the builder supports (DyrOptions::models).
  static std::vector<std::string> supportedModels();
  // Why parameter k has no effect on the model (empty: it has one): an output of the power flow
  // (the slack bus's P, every Q, |V| of PQ buses, θ of every bus but the slack), or the fault
  // times of a run without the command line's fault. Setting such a parameter would silently do nothing.
  std::string ineffectiveParameter(PetscInt k) const;
  // A rate limit (IEEEG1's gate speed): its limitedState is the gate position it moves.
  bool limiterIsRateLimit(PetscInt l) const { return limiters_[l].rateLimit; }
  // The power flow at p in double (the start kernel's first stage): converged, its mismatch;
  // and every limited state of the start inside its limiter's band (a start beyond a limit
  // would not be at rest: refused naming the limiter, its value and band, its record and the
  // remedy); with ZIP loads, every load bus's power-flow voltage above the break voltages of its
  // parts (grid_loads.cpp). Collective.
  PetscErrorCode checkPowerFlow(const std::vector<PetscReal> &p, PetscReal *mismatch) const;

  DiscreteState initialDiscreteState() const override { return DiscreteState(1 + numLimiters() + numExtraFlags_ + numLoadFlags_, 0); }
  // The disturbances applied (after defaults); the parameters holding each one's two times or time and size.
  const std::vector<GridEvent> &events() const { return events_; }
  std::pair<PetscInt, PetscInt> eventParameters(PetscInt e) const;
  // Flag in d of an event's fault (1 while on) or line trip (1 once tripped), or -1 for a step.
  PetscInt faultFlag(PetscInt e) const { return faultFlag_[e]; }
  // Flag in d that is 1 once generator g is tripped (a generator_trip event), or -1.
  PetscInt generatorTripFlag(PetscInt g) const { return tripFlagOfGen_.empty() ? -1 : tripFlagOfGen_[g]; }
  PetscReal inertia(PetscInt g) const { return gens_[g].m.H; }  // H on the system base (s)
  bool hasReset(const EventId &id) const override;
  std::vector<PetscReal> defaultParameters() const override { return nominal_; }
  std::vector<std::string> parameterNames() const override { return names_; }
  PetscInt numGuards() const override { return 4 * numLimiters() + 4 * numZipBuses(); }
  GuardInfo guardInfo(PetscInt j) const override;
  bool guardActive(PetscInt j, const DiscreteState &d) const override;
  PetscErrorCode transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const override;

  // Rows of one generator (global indices, -1 if absent).
  struct GenRows {
    PetscInt machine = -1, numMachine = 0, exciter = -1, numExciter = 0;
    PetscInt efd = -1, rf = -1, vr = -1, vref = -1, ka = -1, ke = -1, constants = -1, numConstants = 0, pm = -1;
  };
  struct Gen {
    int busNumber;
    std::string id, label, models;
    PetscInt bus;         // position in the bus list
    MachineKind machine;
    MachineData m;
    ExciterKind exciter;
    GenData legacy;       // the two-axis machine and IEEET1 of grid_kernels.hpp (TwoAxis / IEEET1Simple)
    DCExciter dc;         // ExciterKind::DC
    PetscReal keGiven = 0;  // DC: the record's KE (0: computed at the start)
    SexsExciter sexs;     // ExciterKind::SEXS
    PetscReal gainValue = 1;  // KA (DC, IEEET1) or K (SEXS)
    PetscInt gain = -1;   // its position among the gain parameters, -1 without exciter
    PetscInt governor;    // its governor's index, or -1
    bool ieeeg1 = false;  // its governor is an IEEEG1 (else TGOV1)
    IEEEG1Data g1{};
    PetscReal govK = 1;   // MBASE/S_base
    PetscReal pFile, qFile, weight;  // the file's dispatch (pu) and its MBASE share at its bus
    std::string exciterRecord, governorRecord;  // "file:line: MODEL at bus N id 'I'" of its records
    GenRows rows;
  };
  struct Gov {
    PetscInt gen;
    TGOV1Data c;
    PetscReal k, R;     // R: TGOV1's droop, or IEEEG1's gain K
    bool ieeeg1 = false;
    IEEEG1Data g1{};
  };
  struct Limiter {
    std::string name;
    PetscInt gen, row;
    bool governor;
    PetscReal lo, hi;  // its band (system-base units for a TGOV1 valve, machine base for an IEEEG1 gate)
    bool rateLimit = false;
  };
  struct PowerFlowData;  // the power-flow problem (case_power_flow.hpp)

private:
  CaseGrid() = default;
  PetscInt numLoads() const { return (PetscInt)loads_.size(); }
  PetscErrorCode build(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &options);
  // grid_events.cpp: the disturbances' parameters (before setSizes), then their kernels and time events.
  PetscErrorCode planDisturbances(const CaseGridOptions &o, const std::map<int, PetscInt> &busPos, const std::vector<std::vector<PetscInt>> &gensAt,
                                   const NetworkCase &net);
  PetscErrorCode addDisturbances();
  PetscErrorCode disturbanceTransition(PetscInt timeEvent, PetscReal t, Vec u, DiscreteState &d) const;
  // An exciter limiter at a bound whose free V_R' now points back into its band is released
  // (after a network jump or a Vref step: no crossing would report it).
  PetscErrorCode releaseReversedExciterLimiters(PetscReal t, Vec u, DiscreteState &d) const;
  // Every guard's value at (t, u, d) on every rank (collective).
  PetscErrorCode allGuards(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> *values) const;
  // grid_loads.cpp: the ZIP loads (-load_model zip): per bus a kernel, two flags (the constant-power
  // and constant-current parts below their break voltage), four guards after the limiters'.
  PetscErrorCode planZipLoads(const CaseGridOptions &o);
  void addZipLoads(const CaseGridOptions &o);
  bool isLoadGuard(PetscInt j) const { return j >= 4 * numLimiters(); }
  GuardInfo loadGuardInfo(PetscInt j) const;
  bool loadGuardActive(PetscInt j, const DiscreteState &d) const;
  void loadGuardTransition(PetscInt j, DiscreteState &d) const;
  // After a network jump: every ZIP part converted to constant impedance (always solvable), then
  // checks that set each part's flag from the re-solved |V|, then a verification.
  void convertAllLoads(DiscreteState &d) const;
  PetscErrorCode setLoadFlagsFromVoltages(PetscReal t, Vec u, DiscreteState &d, bool verifyOnly) const;
  PetscErrorCode checkLoadStart(Vec u0) const;
  PetscErrorCode addGenerator(const NetworkCase &net, const Generator &g, PetscInt bus, const std::vector<const DynamicRecord *> &records,
                              const CaseGridOptions &o, const std::string &dyrFile);
  std::vector<PetscReal> powerFlowSpec(const std::vector<PetscReal> &p) const;

  std::vector<Gen> gens_;
  std::vector<Gov> govs_;
  std::vector<Limiter> limiters_;
  std::vector<int> buses_;  // bus numbers
  struct LoadAt {
    PetscInt bus;
    PetscReal P, Q;  // pu
  };
  std::vector<LoadAt> loads_;
  struct ZipBus {
    PetscInt bus, ref;           // position of the bus; the row of its load reference |V0|
    PetscReal P, Q;              // its loads at the power-flow voltage (pu)
    PetscInt flagP = -1, flagI = -1;  // flags in d (1: the part is below its break), -1 without the part
  };
  std::vector<ZipBus> zipBuses_;
  PetscReal pqBreak_ = 0, iBreak_ = 0;
  PetscInt numLoadFlags_ = 0;
  std::vector<PetscInt> tripFlagOfGen_;  // per generator: its trip flag, or -1
  std::vector<PetscInt> tripGen_;        // per event: the tripped generator (generator trips), or -1
  std::shared_ptr<const PowerFlowData> pf_;
  std::vector<PetscReal> nominal_;
  std::vector<std::string> names_;
  PetscInt numGains_ = 0, numGeneric_ = 0, busStart_ = 0, loadStart_ = 0, numStates_ = 0;
  std::vector<PetscInt> govRows_;  // first row of each governor
  int faultBusNumber_ = 0;
  std::vector<GridEvent> events_;
  std::vector<PetscInt> eventParamOffset_, faultFlag_;
  std::vector<PetscInt> faultBusPos_;  // per event: the faulted bus's position (faults)
  std::vector<PetscInt> stepRow_, stepGen_;  // per event: the stepped state row and its generator (steps)
  PetscInt numEventParams_ = 0, numExtraFlags_ = 0;  // flags after the limiters': faults after the first, line trips
  std::vector<std::vector<AdmittanceEntry>> tripEntries_;  // per event: the tripped branch's admittance entries
  struct TimeAction {
    enum Kind { FaultOn, FaultOff, Step, Trip, GeneratorTrip, LoadCheck, LimiterCheck } kind;
    PetscInt event;
  };
  std::vector<TimeAction> timeActions_;  // per time event
};

// Frequency violation H of generator g (Zhang et al. 2017, eq. 30): σ ∫ max(0, f − f⁺, f⁻ − f)^η dt.
class FrequencyViolationCost : public LocalKernelCost {
public:
  FrequencyViolationCost(const CaseGrid &grid, PetscInt g, PetscReal fmax, PetscReal fmin, PetscReal sigma, PetscReal eta);
  std::string name() const override { return name_; }

private:
  std::string name_;
};

} // namespace grid
} // namespace power
} // namespace hybridsens
