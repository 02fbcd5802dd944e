// The dynamic grid model of a case: a hybrid DAE built from PSS/E RAW network data and DYR
// dynamic records with the kernels of grid_kernels.hpp.
//
// Network: every in-service bus (RAW order) with the current balance 0 = Y V − I_gen + I_load
// (+ the fault shunt), Y from admittance.hpp (lines, transformers, fixed and switched shunts);
// loads as constant impedance at their power-flow voltage (P, Q ∝ |V|²).
// Machines (one per in-service generator, at most one generator per bus): GENCLS, the classical
// machine (constant E' behind X'd = the RAW generator's ZX; H, D from the DYR; no exciter: the
// exciter rows stay constant); GENROU with
// T''do = T''qo = 0 (no subtransient dynamics; X''d, Xl ignored, no saturation) is the two-axis
// model; data converted from MBASE to the system base (X · S_base/MBASE, H and D · MBASE/S_base);
// the armature resistance is the RAW generator's ZR. D is the damping per unit power per per-unit
// speed. Exciters: IEEET1 with TR = 0 and KE ≠ 0 (saturation SE(Efd)·Efd = k1 exp(k2 Efd) through
// its two points (E1, SE1), (E2, SE2)), VR with a non-windup limiter [VRMIN, VRMAX]; every
// GENROU needs one, a GENCLS none. Governors (optional): TGOV1 (valve limits VMIN, VMAX and R per unit of
// MBASE, as the DYR gives them). Every other model and every unsupported value is refused with
// the record's file:line.
// Initial state: the AC power flow of the case (one slack bus: |V|, θ given; PV buses: the
// generator's P and |V|; PQ buses: the loads; Newton from the RAW voltages), then every generator
// at rest on it (Vref = |V| + VR/KA, Pm = P; governors at Pref = P). ∂u0/∂p is exact (newton.hpp).
//
// Layout (with nG generators, nB buses, nL loads, nT governors): generator g rows 9g..9g+8
// (E'q, E'd, δ, ω, Id, Iq, Efd, RF, VR), bus b rows 9nG + 2b (Vr, Vi), then constant states:
// (Vref, KA) per generator, Pm per generator, the loads' reference |V0|, then (x1, x2) per
// governor. Parameters: P_g, Q_g (dispatch; Q and the slack's P are outputs of the power flow,
// with zero sensitivity), t_on, t_off (fault times), KA_g, Vm_b, θ_b (only the slack's and PV
// buses' enter), R_g of the governors; generators and buses are named by their bus number (P2,
// KA3, Vm9, th1, R2). Discrete state d[0] fault on, d[1 + ℓ] limiter ℓ (exciter of generator g:
// ℓ = g; governor k: ℓ = nG + k); guards 4ℓ + GuardKind. Time events as examples/wecc9: fault
// on/off, then the limiter checks at both instants (release a limiter whose free rate points back
// into its band after the network jump).
#pragma once

#include <hybridsens/power/case_data.hpp>
#include <hybridsens/power/dynamic_data.hpp>
#include <hybridsens/power/grid_events.hpp>
#include <hybridsens/power/grid_kernels.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

struct CaseGridOptions {
  int faultBus = -1;          // bus number of the three-phase fault (default: the last bus of the RAW file)
  PetscReal rfault = 1e-4;    // fault resistance (pu)
  PetscReal tOn = 1.0, tOff = 1.1;
  bool governors = true;      // use the DYR's TGOV1 records
  // The disturbances (grid_events.hpp). Empty: the one fault above, unless noDisturbance.
  std::vector<GridEvent> events;
  bool noDisturbance = false;  // a flat run: no event at all
};

class CaseGrid : public LocalKernelModel {
public:
  // Builds the model (collective); refuses unsupported data naming file:line.
  static PetscErrorCode create(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &options, std::unique_ptr<CaseGrid> *out);

  PetscInt numGens() const { return (PetscInt)gens_.size(); }
  PetscInt numBuses() const { return (PetscInt)buses_.size(); }
  PetscInt numGovernors() const { return (PetscInt)govs_.size(); }
  PetscInt numLimiters() const { return numGens() + numGovernors(); }
  // Rows of the state.
  PetscInt gs(PetscInt g, PetscInt k) const { return 9 * g + k; }
  PetscInt vr(PetscInt b) const { return 9 * numGens() + 2 * b; }
  PetscInt vi(PetscInt b) const { return vr(b) + 1; }
  PetscInt vref(PetscInt g) const { return constStart() + 2 * g; }
  PetscInt ka(PetscInt g) const { return vref(g) + 1; }
  PetscInt pm(PetscInt g) const { return constStart() + 2 * numGens() + g; }
  PetscInt loadRef(PetscInt l) const { return constStart() + 3 * numGens() + l; }
  PetscInt gov(PetscInt k, PetscInt j) const { return loadRef(numLoads()) + 2 * k + j; }
  PetscInt numStates() const { return gov(numGovernors(), 0); }
  // Parameters.
  PetscInt pP(PetscInt g) const { return g; }
  PetscInt pQ(PetscInt g) const { return numGens() + g; }
  PetscInt pTon() const { return 2 * numGens(); }
  PetscInt pToff() const { return pTon() + 1; }
  PetscInt pKA(PetscInt g) const { return pToff() + 1 + g; }
  PetscInt pVm(PetscInt b) const { return pKA(numGens()) + b; }
  PetscInt pTh(PetscInt b) const { return pVm(numBuses()) + b; }
  PetscInt pR(PetscInt k) const { return pTh(numBuses()) + k; }
  // Then two parameters per event after the first bus fault (which uses t_on, t_off): a fault's
  // t_on, t_off, a step's time, size (grid_events.cpp).
  PetscInt pEvent(PetscInt e) const { return pR(numGovernors()) + eventParamOffset_[e]; }
  PetscInt numParams() const { return pR(numGovernors()) + numEventParams_; }

  int genBusNumber(PetscInt g) const { return gens_[g].busNumber; }
  int busNumber(PetscInt b) const { return buses_[b]; }
  int faultBusNumber() const { return faultBusNumber_; }
  std::string limiterName(PetscInt l) const;
  PetscInt limitedState(PetscInt l) const { return l < numGens() ? gs(l, 8) : gov(l - numGens(), 0); }
  // The DYR models the builder supports (DyrOptions::models).
  static std::vector<std::string> supportedModels();
  // Why parameter k has no effect on the model (empty: it has one): an output of the power flow
  // (the slack's P, every Q, |V| of PQ buses, θ of every bus but the slack), or the gain of an
  // exciter that does not exist (a GENCLS). Setting such a parameter would silently do nothing.
  std::string ineffectiveParameter(PetscInt k) const;
  // The power flow at p in double (the start kernel's first stage): converged, its mismatch.
  PetscErrorCode checkPowerFlow(const std::vector<PetscReal> &p, PetscReal *mismatch) const;

  DiscreteState initialDiscreteState() const override { return DiscreteState(1 + numLimiters() + numExtraFaults_, 0); }
  // The disturbances applied (after defaults); the parameters holding each one's two times or time and size.
  const std::vector<GridEvent> &events() const { return events_; }
  std::pair<PetscInt, PetscInt> eventParameters(PetscInt e) const;
  // Flag in d of an event's fault (1 while on), or -1 for a step.
  PetscInt faultFlag(PetscInt e) const { return faultFlag_[e]; }
  PetscReal inertia(PetscInt g) const { return gens_[g].c.H; }  // H on the system base (s)
  bool hasReset(const EventId &id) const override;
  std::vector<PetscReal> defaultParameters() const override { return nominal_; }
  std::vector<std::string> parameterNames() const override { return names_; }
  PetscInt numGuards() const override { return 4 * numLimiters(); }
  GuardInfo guardInfo(PetscInt j) const override;
  bool guardActive(PetscInt j, const DiscreteState &d) const override;
  PetscErrorCode transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const override;

  struct Gen {
    int busNumber;
    PetscInt bus;       // position in the bus list
    GenData c;
    PetscInt governor;  // its governor's index, or -1
    bool classical;     // GENCLS: constant E' behind X'd, no exciter (its limiter's guards inactive)
  };
  struct Gov {
    PetscInt gen;
    TGOV1Data c;
    PetscReal k, R;
  };
  struct PowerFlowData;  // the power-flow problem (case_grid.cpp)

private:
  CaseGrid() = default;
  PetscInt numLoads() const { return (PetscInt)loads_.size(); }
  PetscInt constStart() const { return 9 * numGens() + 2 * numBuses(); }
  PetscErrorCode build(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &options);
  // grid_events.cpp: the disturbances' parameters (before setSizes), then their kernels and time events.
  PetscErrorCode planDisturbances(const CaseGridOptions &o, const std::map<int, PetscInt> &busPos, const std::vector<PetscInt> &genOfBus,
                                   const std::string &caseFile);
  PetscErrorCode addDisturbances();
  PetscErrorCode disturbanceTransition(PetscInt timeEvent, PetscReal t, Vec u, DiscreteState &d) const;
  // An exciter limiter at a bound whose free V_R' now points back into its band is released
  // (after a network jump or a Vref step: no crossing would report it).
  PetscErrorCode releaseReversedExciterLimiters(PetscReal t, Vec u, DiscreteState &d) const;

  std::vector<Gen> gens_;
  std::vector<Gov> govs_;
  std::vector<int> buses_;  // bus numbers
  struct LoadAt {
    PetscInt bus;
    PetscReal P, Q;  // pu
  };
  std::vector<LoadAt> loads_;
  std::shared_ptr<const PowerFlowData> pf_;
  std::vector<PetscReal> nominal_;
  std::vector<std::string> names_;
  int faultBusNumber_ = 0;
  std::vector<GridEvent> events_;
  std::vector<PetscInt> eventParamOffset_, faultFlag_;
  std::vector<PetscInt> faultBusPos_;  // per event: the faulted bus's position (faults)
  std::vector<PetscInt> stepRow_, stepGen_;  // per event: the stepped state row and its generator (steps)
  PetscInt numEventParams_ = 0, numExtraFaults_ = 0;
  struct TimeAction {
    enum Kind { FaultOn, FaultOff, Step, LimiterCheck } kind;
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
