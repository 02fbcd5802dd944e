// The WECC 9-bus model (-areas N coupled copies): settings, the Grid (kernels wired by Layout,
// time events, limiter checks at fault switching) and the per-generator frequency-violation costs.
#pragma once

#include "components.hpp"

namespace wecc9 {
using namespace hybridsens;

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
    // -param_areas >= 1: the fault times are parameters of area 1.
    PetscCheck(L.areas >= 1 && L.paramAreas >= 1 && L.paramAreas <= L.areas, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: need -areas >= 1 and 1 <= -param_areas <= -areas (got %" PetscInt_FMT ", %" PetscInt_FMT ")", L.areas, L.paramAreas);
    PetscCheck(L.areas == 1 || s_.tieR * s_.tieR + s_.tieX * s_.tieX > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: the tie lines need a nonzero impedance (-tie_r, -tie_x)");
    PetscCheck(s_.faultBus >= 0 && s_.faultBus < L.numBuses(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "wecc9: -fault_bus must be 1..%" PetscInt_FMT " (bus b of area a is 9(a-1)+b)", L.numBuses());
    PetscCheck(s_.rfault > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: -rfault must be positive");
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
        const Coupling c{{}, rows, L.hasParams(a) ? powerFlowStartParameters(a) : std::vector<PetscInt>{}, {}};
        const PowerFlowStart start{L.governors};
        if (L.hasParams(a)) add(start, c);
        else {  // a constant area: area 1's nominal values
          std::array<PetscReal, PowerFlowStart::numParams> nominal{};
          const auto q = nominalParameters();
          const std::vector<PetscInt> idx = powerFlowStartParameters(0);
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
    const std::vector<PetscInt> idx = powerFlowStartParameters(a);
    PetscReal spec[pfSpecs];
    for (PetscInt i = 0; i < pfSpecs; ++i) spec[i] = p[idx[i]];
    return solvePowerFlow<PetscReal>(spec);
  }

  // The parameters of parameter area a that PowerFlowStart reads, in its order: the power-flow
  // specification (|V1|, θ1, P2, P3, |V2|, |V3|: pfSpecs entries), then the exciter gains KA1..KA3.
  std::vector<PetscInt> powerFlowStartParameters(PetscInt a) const {
    const Layout &L = s_.layout;
    const PetscInt b0 = areaBuses * a, g0 = areaGens * a;
    return {L.pVm(b0), L.pTh(b0), L.pP(g0 + 1), L.pP(g0 + 2), L.pVm(b0 + 1), L.pVm(b0 + 2), L.pKA(g0), L.pKA(g0 + 1), L.pKA(g0 + 2)};
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
  GuardInfo guardInfo(PetscInt j) const override { return limiterGuardInfo(limiterName(j / 4), j % 4); }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return limiterGuardActive(j % 4, d[limiterFlag(j / 4)]); }

  // Collective (the engine calls it on every rank with the replicated d).
  PetscErrorCode transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const override {
    PetscFunctionBeginUser;
    if (id.kind == EventId::Guard) {
      d[limiterFlag(id.index / 4)] = limiterFlagAfter(id.index % 4);
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
        releaseIfReversed(d[limiterFlag(g)], all[4 * g + LeaveMax]);  // = the free VR' (same value for LeaveMin)
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

} // namespace wecc9
