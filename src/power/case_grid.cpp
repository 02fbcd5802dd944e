#include <hybridsens/power/admittance.hpp>
#include <hybridsens/power/case_grid.hpp>
#include <hybridsens/power/newton.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace hybridsens {
namespace power {
namespace grid {

// ---- the power flow of the case -----------------------------------------------------------
// Unknowns x: θ of every non-slack bus (bus order), then |V| of every PQ bus (bus order).
// Equations: P_i(V) − P_i^spec for every non-slack bus, then Q_i(V) − Q_i^spec for every PQ bus,
// with S_i = V_i conj(Σ_j Y_ij V_j). spec = (|V|, θ of the slack; P of the generator at each PV
// bus; |V| of each PV bus), PV buses in bus order.
struct CaseGrid::PowerFlowData {
  PetscInt nB = 0, slack = -1, nUnknowns = 0;
  std::vector<PetscInt> pvBus, pvGen;  // PV buses (bus order) and the generator at each
  std::vector<PetscInt> thIdx, vmIdx;  // per bus: its unknown θ / |V| in x, or -1
  std::vector<PetscInt> pvOf;          // per bus: its position in pvBus, or -1
  std::vector<PetscInt> genAt;         // per bus: its generator, or -1
  std::vector<AdmittanceEntry> Y;
  std::vector<PetscReal> Pd, Qd, guessVm, guessTh;
  PetscInt numSpecs() const { return 2 + 2 * (PetscInt)pvBus.size(); }

  template <class T> void voltages(const T *x, const T *spec, std::vector<T> &Vm, std::vector<T> &th) const {
    Vm.assign(nB, T(0.0)), th.assign(nB, T(0.0));
    const PetscInt npv = (PetscInt)pvBus.size();
    for (PetscInt b = 0; b < nB; ++b) {
      if (b == slack) Vm[b] = spec[0], th[b] = spec[1];
      else th[b] = x[thIdx[b]];
      if (pvOf[b] >= 0) Vm[b] = spec[2 + npv + pvOf[b]];
      else if (vmIdx[b] >= 0) Vm[b] = x[vmIdx[b]];
    }
  }
  template <class T> void injections(const std::vector<T> &Vm, const std::vector<T> &th, std::vector<T> &P, std::vector<T> &Q) const {
    using std::cos;
    using std::sin;
    std::vector<T> Vr(nB), Vi(nB), Ir(nB, T(0.0)), Ii(nB, T(0.0));
    P.resize(nB), Q.resize(nB);
    for (PetscInt b = 0; b < nB; ++b) Vr[b] = Vm[b] * cos(th[b]), Vi[b] = Vm[b] * sin(th[b]);
    for (const AdmittanceEntry &y : Y) {
      const PetscReal G = y.y.real(), B = y.y.imag();
      Ir[y.i] += G * Vr[y.j] - B * Vi[y.j], Ii[y.i] += G * Vi[y.j] + B * Vr[y.j];
    }
    for (PetscInt b = 0; b < nB; ++b) P[b] = Vr[b] * Ir[b] + Vi[b] * Ii[b], Q[b] = Vi[b] * Ir[b] - Vr[b] * Ii[b];
  }
  template <class T> void mismatch(const T *x, const T *spec, T *F) const {
    std::vector<T> Vm, th, P, Q;
    voltages<T>(x, spec, Vm, th);
    injections<T>(Vm, th, P, Q);
    for (PetscInt b = 0; b < nB; ++b) {
      if (thIdx[b] >= 0) F[thIdx[b]] = P[b] - (pvOf[b] >= 0 ? spec[2 + pvOf[b]] - Pd[b] : T(-Pd[b]));
      if (vmIdx[b] >= 0) F[vmIdx[b]] = Q[b] + Qd[b];
    }
  }
  template <class S> struct Solution {
    std::vector<S> Vm, th, P, Q;  // bus voltages; injections of the generators' buses plus their loads
    bool converged = false;
    PetscReal norm = 0;
  };
  // Newton in double from the RAW voltages to round-off, then two Newton steps in S from that
  // solution: the first carries the exact implicit derivative dx/dspec, the second makes second
  // derivatives exact too (see examples/wecc9's power flow, where this was measured).
  template <class S> Solution<S> solve(const S *spec) const {
    Solution<S> s;
    const PetscInt n = nUnknowns, ns = numSpecs();
    std::vector<PetscReal> xd(n), sd(ns);
    for (PetscInt k = 0; k < ns; ++k) sd[k] = Sacado::ScalarValue<S>::eval(spec[k]);
    for (PetscInt b = 0; b < nB; ++b) {
      if (thIdx[b] >= 0) xd[thIdx[b]] = guessTh[b];
      if (vmIdx[b] >= 0) xd[vmIdx[b]] = guessVm[b];
    }
    for (int it = 0; it < 30; ++it) {  // stop one step after the mismatch reached round-off
      const bool small = (s.norm = newtonStep<PetscReal>((int)n, xd.data(), [&](const auto *xf, auto *F) {
                            using J = std::remove_const_t<std::remove_pointer_t<decltype(xf)>>;
                            std::vector<J> sf(sd.begin(), sd.end());
                            mismatch<J>(xf, sf.data(), F);
                          })) < 1e-12;
      if (small && it > 0) {
        s.converged = true;
        break;
      }
    }
    if (!s.converged) return s;
    std::vector<S> x(xd.begin(), xd.end());
    for (int step = 0; step < 2; ++step)
      newtonStep<S>((int)n, x.data(), [&](const auto *xf, auto *F) {
        using J = std::remove_const_t<std::remove_pointer_t<decltype(xf)>>;
        std::vector<J> sf(ns);
        for (PetscInt k = 0; k < ns; ++k) sf[k] = J(spec[k]);
        mismatch<J>(xf, sf.data(), F);
      });
    voltages<S>(x.data(), spec, s.Vm, s.th);
    injections<S>(s.Vm, s.th, s.P, s.Q);
    for (PetscInt b = 0; b < nB; ++b) s.P[b] += Pd[b], s.Q[b] += Qd[b];
    return s;
  }
};

namespace {

// The initial state from the case's power flow for params (spec, then KA of every generator):
// every generator at rest on it (generatorStart), the loads' reference |V|, and (Vr, Vi) of
// every bus. Writes, in order: the generatorStart rows of each generator, the load references,
// the buses' (Vr, Vi).
struct CasePowerFlowStart {
  static constexpr int numReads = 0, numWrites = Dynamic, numParams = Dynamic;
  std::shared_ptr<const CaseGrid::PowerFlowData> pf;
  std::vector<CaseGrid::Gen> gens;
  std::vector<PetscInt> loadBus;
  PetscInt writeCount() const {
    PetscInt w = 0;
    for (const auto &g : gens) w += genStartRows + (g.governor >= 0 ? govStartRows : 0);
    return w + (PetscInt)loadBus.size() + 2 * pf->nB;
  }
  template <class S> void initialState(const S *p, S *u0) const {
    const auto s = pf->solve<S>(p);
    if (!s.converged) {  // the command refuses such a p before the solve; never a silent number here
      for (PetscInt w = 0; w < writeCount(); ++w) u0[w] = std::numeric_limits<PetscReal>::quiet_NaN();
      return;
    }
    const PetscInt ns = pf->numSpecs();
    PetscInt w = 0;
    for (size_t g = 0; g < gens.size(); ++g) {
      const PetscInt b = gens[g].bus;
      generatorStart<S>(gens[g].c, s.P[b], s.Q[b], s.Vm[b], s.th[b], p[ns + g], gens[g].governor >= 0, u0 + w);
      w += genStartRows + (gens[g].governor >= 0 ? govStartRows : 0);
    }
    for (PetscInt b : loadBus) u0[w++] = s.Vm[b];
    using std::cos;
    using std::sin;
    for (PetscInt b = 0; b < pf->nB; ++b) u0[w++] = s.Vm[b] * cos(s.th[b]), u0[w++] = s.Vm[b] * sin(s.th[b]);
  }
};

// The guards of a GENCLS's limiter slot (it has no exciter): every guard needs one kernel that
// evaluates it; these are constant and never active (guardActive), so they never fire.
struct AbsentLimiter {
  static constexpr int numReads = 1, numWrites = 0, numParams = 0;
  template <class S> S guard(PetscInt, S, const S *, const S *, const DiscreteState &) const { return S(1.0); }
};

std::string recordText(const DynamicRecord &r) { return r.where.str() + ": " + r.model + " at bus " + std::to_string(r.bus) + " id '" + r.id + "'"; }

} // namespace

PetscErrorCode CaseGrid::create(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &options, std::unique_ptr<CaseGrid> *out) {
  PetscFunctionBeginUser;
  std::unique_ptr<CaseGrid> grid(new CaseGrid());
  PetscCall(grid->build(net, dyn, options));
  *out = std::move(grid);
  PetscFunctionReturn(0);
}

PetscErrorCode CaseGrid::build(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &o) {
  PetscFunctionBeginUser;
  const MPI_Comm world = PETSC_COMM_WORLD;
  const double base = net.baseMVA;
  // Buses: every bus (an isolated one would leave a singular network).
  std::map<int, PetscInt> busPos;
  for (const Bus &b : net.buses) {
    PetscCheck(b.type != BusType::Isolated, world, PETSC_ERR_SUP, "%s: bus %d is isolated (IDE 4): the grid model needs every bus connected; remove it from the case",
               b.where.str().c_str(), b.number);
    busPos[b.number] = (PetscInt)buses_.size();
    buses_.push_back(b.number);
  }
  const PetscInt nB = numBuses();
  // Dynamic records per (bus, id).
  std::map<std::pair<int, std::string>, std::vector<const DynamicRecord *>> records;
  for (const DynamicRecord &r : dyn.records) records[{r.bus, r.id}].push_back(&r);
  auto trimId = [](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    return s;
  };
  std::vector<PetscInt> genOfBus(nB, -1);
  std::vector<const Generator *> genRecord;
  std::vector<PetscReal> KA0;
  for (const Generator &g : net.generators) {
    if (!g.inService) continue;
    const PetscInt b = busPos.at(g.bus);
    PetscCheck(genOfBus[b] < 0, world, PETSC_ERR_SUP, "%s: a second in-service generator at bus %d: the grid model supports one generator per bus",
               g.where.str().c_str(), g.bus);
    const BusType type = net.buses[net.busIndex.at(g.bus)].type;
    PetscCheck(type == BusType::PV || type == BusType::Slack, world, PETSC_ERR_SUP,
               "%s: generator at bus %d, a PQ bus: the grid model needs generators at PV (IDE 2) or slack (IDE 3) buses", g.where.str().c_str(), g.bus);
    auto it = records.find({g.bus, trimId(g.id)});
    PetscCheck(it != records.end(), world, PETSC_ERR_ARG_WRONG, "%s: generator at bus %d id '%s' has no dynamic record in %s (a machine and an exciter are needed)",
               g.where.str().c_str(), g.bus, trimId(g.id).c_str(), dyn.file.c_str());
    const DynamicRecord *machine = nullptr, *exciter = nullptr, *governor = nullptr;
    for (const DynamicRecord *r : it->second) {
      if (r->model == "GENROU" || r->model == "GENCLS") machine = r;
      else if (r->model == "IEEET1") exciter = r;
      else if (r->model == "TGOV1") governor = r;
      else if (r->model == "GENSAL")
        SETERRQ(world, PETSC_ERR_SUP, "%s: machine model not supported by the grid model yet (supported: GENROU with T''do = T''qo = 0, the two-axis machine; GENCLS)",
                recordText(*r).c_str());
      else if (r->model == "EXDC1" || r->model == "ESDC1A" || r->model == "SEXS")
        SETERRQ(world, PETSC_ERR_SUP, "%s: exciter model not supported by the grid model yet (supported: IEEET1)", recordText(*r).c_str());
      else SETERRQ(world, PETSC_ERR_SUP, "%s: governor model not supported by the grid model yet (supported: TGOV1)", recordText(*r).c_str());
    }
    PetscCheck(machine, world, PETSC_ERR_ARG_WRONG, "%s: generator at bus %d id '%s' has no GENROU or GENCLS record in %s", g.where.str().c_str(), g.bus,
               trimId(g.id).c_str(), dyn.file.c_str());
    const DynamicRecord &m = *machine;
    const double zb = base / g.mbase, hb = g.mbase / base;  // impedances, inertia: machine base → system base
    Gen G;
    G.busNumber = g.bus, G.bus = b, G.governor = -1, G.classical = m.model == "GENCLS";
    PetscReal KA = 1.0;  // a GENCLS has no exciter: its KA parameter and exciter rows have no effect
    if (G.classical) {
      PetscCheck(!exciter, world, PETSC_ERR_SUP, "%s: an exciter for a GENCLS machine (constant E'): the classical machine takes none", recordText(*exciter).c_str());
      PetscCheck(m.param("H") > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: H = %g, must be positive", recordText(m).c_str(), m.param("H"));
      PetscCheck(g.zx > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: generator at bus %d: the GENCLS machine's X'd is ZX of the RAW generator record, which is %g (must be positive)",
                 g.where.str().c_str(), g.bus, g.zx);
      const PetscReal X = g.zx * zb;
      // Round rotor with X'd everywhere; the unused exciter constants only keep its rows' start finite.
      G.c = GenData{m.param("H") * hb, g.zr * zb, X, X, X, X, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, -1.0, 1.0};
    } else {
      PetscCheck(m.param("Tdopp") == 0 && m.param("Tqopp") == 0, world, PETSC_ERR_SUP,
                 "%s: subtransient dynamics (T''do = %g, T''qo = %g) are not supported yet: only the two-axis machine, written as T''do = T''qo = 0",
                 recordText(m).c_str(), m.param("Tdopp"), m.param("Tqopp"));
      PetscCheck(m.param("S1") == 0 && m.param("S12") == 0, world, PETSC_ERR_SUP, "%s: machine saturation (S(1.0), S(1.2) nonzero) is not supported yet",
                 recordText(m).c_str());
      for (const char *n : {"Tdop", "Tqop", "H", "Xd", "Xq", "Xdp", "Xqp"})
        PetscCheck(m.param(n) > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s = %g, must be positive", recordText(m).c_str(), n, m.param(n));
      PetscCheck(exciter, world, PETSC_ERR_ARG_WRONG, "%s: generator at bus %d id '%s' has no IEEET1 exciter record in %s (every GENROU needs one)",
                 g.where.str().c_str(), g.bus, trimId(g.id).c_str(), dyn.file.c_str());
      const DynamicRecord &e = *exciter;
      PetscCheck(e.param("TR") == 0, world, PETSC_ERR_SUP, "%s: a voltage transducer (TR = %g > 0) is not supported yet: TR must be 0", recordText(e).c_str(),
                 e.param("TR"));
      PetscCheck(e.param("KE") != 0, world, PETSC_ERR_SUP, "%s: KE = 0 (PSS/E's self-excited KE computed at initialization) is not supported: give KE",
                 recordText(e).c_str());
      for (const char *n : {"KA", "TA", "TE", "KF", "TF"})
        PetscCheck(e.param(n) > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s = %g, must be positive", recordText(e).c_str(), n, e.param(n));
      PetscCheck(e.param("VRMIN") < e.param("VRMAX"), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: needs VRMIN < VRMAX (got %g, %g)", recordText(e).c_str(),
                 e.param("VRMIN"), e.param("VRMAX"));
      // Saturation SE(E)·E = k1 exp(k2 E) through the two points; none when both SE are 0.
      const double E1 = e.param("E1"), SE1 = e.param("SE1"), E2 = e.param("E2"), SE2 = e.param("SE2");
      double k1 = 0, k2 = 0;
      if (SE1 != 0 || SE2 != 0) {
        PetscCheck(E1 > 0 && E2 > 0 && E1 != E2 && SE1 > 0 && SE2 > 0, world, PETSC_ERR_ARG_OUTOFRANGE,
                   "%s: the saturation points need E1 != E2 > 0 and SE1, SE2 > 0 (or SE1 = SE2 = 0: no saturation); got (%g, %g), (%g, %g)",
                   recordText(e).c_str(), E1, SE1, E2, SE2);
        k2 = std::log(E2 * SE2 / (E1 * SE1)) / (E2 - E1);
        k1 = E1 * SE1 * std::exp(-k2 * E1);
      }
      G.c = GenData{m.param("H") * hb, g.zr * zb, m.param("Xd") * zb, m.param("Xdp") * zb, m.param("Xq") * zb, m.param("Xqp") * zb, m.param("Tdop"), m.param("Tqop"),
                    e.param("TA"), e.param("KE"), e.param("TE"), e.param("KF"), e.param("TF"), k1, k2, e.param("VRMIN"), e.param("VRMAX")};
      KA = e.param("KA");
    }
    G.c.dampingPerM = m.param("D") * hb / (2 * G.c.H);
    if (governor && o.governors) {
      const DynamicRecord &t = *governor;
      for (const char *n : {"R", "T1", "T3"})
        PetscCheck(t.param(n) > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s = %g, must be positive", recordText(t).c_str(), n, t.param(n));
      PetscCheck(t.param("VMIN") < t.param("VMAX"), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: needs VMIN < VMAX (got %g, %g)", recordText(t).c_str(),
                 t.param("VMIN"), t.param("VMAX"));
      G.governor = (PetscInt)govs_.size();
      govs_.push_back({(PetscInt)gens_.size(), TGOV1Data{t.param("T1"), t.param("T2"), t.param("T3"), t.param("Dt"), t.param("VMIN"), t.param("VMAX")}, hb,
                       t.param("R")});
    }
    genOfBus[b] = (PetscInt)gens_.size();
    gens_.push_back(G);
    genRecord.push_back(&g);
    KA0.push_back(KA);
  }
  PetscCheck(!gens_.empty(), world, PETSC_ERR_ARG_WRONG, "%s: no in-service generator", net.file.c_str());
  const PetscInt nG = numGens();
  // Loads (constant impedance at the power-flow voltage).
  std::vector<PetscReal> Pd(nB, 0.0), Qd(nB, 0.0);
  for (const power::Load &l : net.loads) {
    if (!l.inService) continue;
    PetscCheck(l.ip == 0 && l.iq == 0 && l.yp == 0 && l.yq == 0, world, PETSC_ERR_SUP,
               "%s: load with constant-current or constant-admittance parts (IP, IQ, YP, YQ) is not supported by the grid model yet", l.where.str().c_str());
    const PetscInt b = busPos.at(l.bus);
    loads_.push_back({b, l.p.value / base, l.q.value / base});
    Pd[b] += l.p.value / base, Qd[b] += l.q.value / base;
  }
  // The power-flow problem.
  auto pf = std::make_shared<PowerFlowData>();
  pf->nB = nB;
  PetscCall(admittanceMatrix(net, &pf->Y));
  pf->thIdx.assign(nB, -1), pf->vmIdx.assign(nB, -1), pf->pvOf.assign(nB, -1), pf->genAt = genOfBus;
  pf->Pd = Pd, pf->Qd = Qd;
  for (PetscInt b = 0; b < nB; ++b) {
    const Bus &bus = net.buses[b];
    pf->guessVm.push_back(bus.vm.value), pf->guessTh.push_back(bus.va.value * PETSC_PI / 180.0);
    if (bus.type == BusType::Slack) {
      PetscCheck(pf->slack < 0, world, PETSC_ERR_SUP, "%s: a second slack bus (%d): the grid model's power flow needs exactly one", bus.where.str().c_str(), bus.number);
      PetscCheck(genOfBus[b] >= 0, world, PETSC_ERR_ARG_WRONG, "%s: slack bus %d has no in-service generator", bus.where.str().c_str(), bus.number);
      pf->slack = b;
    } else if (bus.type == BusType::PV) {
      PetscCheck(genOfBus[b] >= 0, world, PETSC_ERR_ARG_WRONG, "%s: PV bus %d has no in-service generator", bus.where.str().c_str(), bus.number);
      pf->pvOf[b] = (PetscInt)pf->pvBus.size();
      pf->pvBus.push_back(b), pf->pvGen.push_back(genOfBus[b]);
    }
  }
  PetscCheck(pf->slack >= 0, world, PETSC_ERR_ARG_WRONG, "%s: no slack bus (IDE 3)", net.file.c_str());
  for (PetscInt b = 0; b < nB; ++b)
    if (b != pf->slack) pf->thIdx[b] = pf->nUnknowns++;
  for (PetscInt b = 0; b < nB; ++b)
    if (b != pf->slack && pf->pvOf[b] < 0) pf->vmIdx[b] = pf->nUnknowns++;
  pf_ = pf;
  // The disturbances: faults and setpoint steps (grid_events.cpp).
  PetscCall(planDisturbances(o, busPos, genOfBus, net.file));

  // Parameters: nominal values and names.
  nominal_.assign(numParams(), 0.0), names_.assign(numParams(), "");
  for (PetscInt g = 0; g < nG; ++g) {
    const std::string k = std::to_string(gens_[g].busNumber);
    nominal_[pP(g)] = genRecord[g]->pg.value / base, names_[pP(g)] = "P" + k;
    nominal_[pQ(g)] = genRecord[g]->qg.value / base, names_[pQ(g)] = "Q" + k;
    nominal_[pKA(g)] = KA0[g], names_[pKA(g)] = "KA" + k;
  }
  nominal_[pTon()] = o.tOn, names_[pTon()] = "t_on";
  nominal_[pToff()] = o.tOff, names_[pToff()] = "t_off";
  for (PetscInt b = 0; b < nB; ++b) {
    const std::string k = std::to_string(buses_[b]);
    nominal_[pVm(b)] = pf->guessVm[b], names_[pVm(b)] = "Vm" + k;
    nominal_[pTh(b)] = pf->guessTh[b], names_[pTh(b)] = "th" + k;
  }
  for (PetscInt k = 0; k < numGovernors(); ++k) nominal_[pR(k)] = govs_[k].R, names_[pR(k)] = "R" + std::to_string(gens_[govs_[k].gen].busNumber);

  // The DAE.
  PetscCall(setSizes(numStates()));
  std::vector<PetscInt> alg;
  for (PetscInt g = 0; g < nG; ++g) alg.push_back(gs(g, 4)), alg.push_back(gs(g, 5));
  for (PetscInt b = 0; b < nB; ++b) alg.push_back(vr(b)), alg.push_back(vi(b));
  std::sort(alg.begin(), alg.end());
  setAlgebraic(alg);
  auto guardsOf = [](PetscInt l) { return std::vector<PetscInt>{4 * l + HitMax, 4 * l + HitMin, 4 * l + LeaveMax, 4 * l + LeaveMin}; };
  for (PetscInt g = 0; g < nG; ++g) {
    const Gen &G = gens_[g];
    const PetscInt b = G.bus;
    const bool governed = G.governor >= 0;
    add(Machine{G.c, governed, G.classical}, {{gs(g, 0), gs(g, 1), gs(g, 2), gs(g, 3), gs(g, 4), gs(g, 5), gs(g, 6), vr(b), vi(b), pm(g)},
                                 {gs(g, 0), gs(g, 1), gs(g, 2), gs(g, 3), gs(g, 4), gs(g, 5), vr(b), vi(b)},
                                 {},
                                 {}});
    if (G.classical) add(AbsentLimiter{}, {{gs(g, 8)}, {}, {}, guardsOf(g)});
    else
      add(Exciter{G.c, {G.c.VRmin, G.c.VRmax, 1 + g}},
          {{gs(g, 6), gs(g, 7), gs(g, 8), vr(b), vi(b), vref(g), ka(g)}, {gs(g, 6), gs(g, 7), gs(g, 8), vref(g), ka(g)}, {}, guardsOf(g)});
    if (governed) {
      const Gov &t = govs_[G.governor];
      const PetscInt k = G.governor;
      add(Governor{t.c, t.k, G.c.M(), {t.k * t.c.Vmin, t.k * t.c.Vmax, 1 + nG + k}},
          {{gov(k, 0), gov(k, 1), gs(g, 3), pm(g)}, {gov(k, 0), gov(k, 1), gs(g, 3)}, {pR(k)}, guardsOf(nG + k)});
    }
  }
  {  // initial state: the power flow
    std::vector<PetscInt> rows, params;
    for (PetscInt g = 0; g < nG; ++g) {
      for (PetscInt k = 0; k < 9; ++k) rows.push_back(gs(g, k));
      rows.push_back(vref(g)), rows.push_back(ka(g)), rows.push_back(pm(g));
      if (gens_[g].governor >= 0) rows.push_back(gov(gens_[g].governor, 0)), rows.push_back(gov(gens_[g].governor, 1));
    }
    for (PetscInt l = 0; l < numLoads(); ++l) rows.push_back(loadRef(l));
    for (PetscInt b = 0; b < nB; ++b) rows.push_back(vr(b)), rows.push_back(vi(b));
    params = {pVm(pf->slack), pTh(pf->slack)};
    for (PetscInt g : pf->pvGen) params.push_back(pP(g));
    for (PetscInt b : pf->pvBus) params.push_back(pVm(b));
    for (PetscInt g = 0; g < nG; ++g) params.push_back(pKA(g));
    std::vector<PetscInt> loadBus;
    for (const LoadAt &l : loads_) loadBus.push_back(l.bus);
    add(CasePowerFlowStart{pf, gens_, loadBus}, {{}, rows, params, {}});
  }
  for (const AdmittanceEntry &y : pf->Y)
    add(Admittance{y.y.real(), y.y.imag(), 0.0, 0.0}, {{vr((PetscInt)y.j), vi((PetscInt)y.j)}, {vr((PetscInt)y.i), vi((PetscInt)y.i)}, {}, {}});
  for (PetscInt l = 0; l < numLoads(); ++l) {
    const PetscInt b = loads_[l].bus;
    add(Load{loads_[l].P, loads_[l].Q}, {{vr(b), vi(b), loadRef(l)}, {vr(b), vi(b)}, {}, {}});
  }
  PetscCall(addDisturbances());
  PetscCall(setUp());
  PetscFunctionReturn(0);
}

PetscErrorCode CaseGrid::checkPowerFlow(const std::vector<PetscReal> &p, PetscReal *mismatch) const {
  PetscFunctionBeginUser;
  std::vector<PetscReal> spec = {p[pVm(pf_->slack)], p[pTh(pf_->slack)]};
  for (PetscInt g : pf_->pvGen) spec.push_back(p[pP(g)]);
  for (PetscInt b : pf_->pvBus) spec.push_back(p[pVm(b)]);
  const auto s = pf_->solve<PetscReal>(spec.data());
  *mismatch = s.norm;
  PetscCheck(s.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
             "the initial power flow does not converge for these parameters (mismatch %g after 30 Newton steps)", (double)s.norm);
  PetscFunctionReturn(0);
}

std::vector<std::string> CaseGrid::supportedModels() { return {"GENCLS", "GENROU", "IEEET1", "TGOV1"}; }

// Mirrors the parameters the power-flow start kernel reads (build(): slack |V| and θ, the PV
// generators' P and |V|).
std::string CaseGrid::ineffectiveParameter(PetscInt k) const {
  const std::string flow = "an output of the power flow, which determines it";
  if ((k == pTon() || k == pToff()) && (faultFlag_.empty() || std::find(faultFlag_.begin(), faultFlag_.end(), 0) == faultFlag_.end()))
    return "the run has no bus fault on the command line (an events file or -no_fault replaces it)";
  for (PetscInt g = 0; g < numGens(); ++g) {
    if (k == pQ(g)) return "the reactive power of the generator at bus " + std::to_string(gens_[g].busNumber) + " is " + flow + " (set |V| of a PV or slack bus)";
    if (k == pP(g) && gens_[g].bus == pf_->slack)
      return "the active power of the slack generator (bus " + std::to_string(gens_[g].busNumber) + ") is " + flow + " (set P of the PV generators)";
    if (k == pKA(g) && gens_[g].classical) return "the generator at bus " + std::to_string(gens_[g].busNumber) + " is a GENCLS machine without an exciter";
  }
  for (PetscInt b = 0; b < numBuses(); ++b) {
    if (k == pVm(b) && b != pf_->slack && pf_->pvOf[b] < 0) return "|V| of PQ bus " + std::to_string(buses_[b]) + " is " + flow;
    if (k == pTh(b) && b != pf_->slack) return "the angle of bus " + std::to_string(buses_[b]) + " (not the slack) is " + flow;
  }
  return "";
}

std::string CaseGrid::limiterName(PetscInt l) const {
  return l < numGens() ? "VR" + std::to_string(gens_[l].busNumber) : "Pv" + std::to_string(gens_[govs_[l - numGens()].gen].busNumber);
}

GuardInfo CaseGrid::guardInfo(PetscInt j) const { return limiterGuardInfo(limiterName(j / 4), j % 4); }

// A GENCLS has no exciter: its limiter's guards are never evaluated, so never active.
bool CaseGrid::guardActive(PetscInt j, const DiscreteState &d) const {
  const PetscInt l = j / 4;
  if (l < numGens() && gens_[l].classical) return false;
  return limiterGuardActive(j % 4, d[1 + l]);
}

// Collective (the engine calls it on every rank with the replicated d).
PetscErrorCode CaseGrid::transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const {
  PetscFunctionBeginUser;
  if (id.kind == EventId::Guard) {
    d[1 + id.index / 4] = limiterFlagAfter(id.index % 4);
    PetscFunctionReturn(0);
  }
  PetscCall(disturbanceTransition(id.index, t, u, d));
  PetscFunctionReturn(0);
}

PetscErrorCode CaseGrid::releaseReversedExciterLimiters(PetscReal t, Vec u, DiscreteState &d) const {
  PetscFunctionBeginUser;
  {
    // u is the state after the fault switched and the network was re-solved: an exciter limiter
    // whose free VR' now points back into the band is released (no crossing would report it).
    // The exciters' leave-guards read states only (Vref, KA are states), so p is not needed (the
    // placeholder keeps the governors' guards finite); a governor valve's free rate reads
    // differential states only, which do not jump at a fault.
    std::vector<PetscScalar> local(numGuards(), 0.0), all(numGuards(), 0.0);
    const std::vector<PetscReal> placeholder(numParams(), 1.0);
    PetscCall(guards(t, u, ModeContext{placeholder, d}, local.data()));
    PetscCallMPI(MPI_Allreduce(local.data(), all.data(), (int)numGuards(), MPIU_SCALAR, MPIU_SUM, comm()));
    for (PetscInt g = 0; g < numGens(); ++g) {
      releaseIfReversed(d[1 + g], all[4 * g + LeaveMax]);  // = the free VR' (same value for LeaveMin)
    }
  }
  PetscFunctionReturn(0);
}

FrequencyViolationCost::FrequencyViolationCost(const CaseGrid &grid, PetscInt g, PetscReal fmax, PetscReal fmin, PetscReal sigma, PetscReal eta)
    : LocalKernelCost(grid), name_("H" + std::to_string(grid.genBusNumber(g))) {
  add(FrequencyViolation{fmax, fmin, sigma, eta}, {{grid.gs(g, 3)}, {}, {}, {}});
}

} // namespace grid
} // namespace power
} // namespace hybridsens
