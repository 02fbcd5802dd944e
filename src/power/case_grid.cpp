#include "generator_trip.hpp"
#include "case_power_flow.hpp"

#include <hybridsens/power/admittance.hpp>
#include <hybridsens/power/case_grid.hpp>
#include <hybridsens/vec_entry.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace hybridsens {
namespace power {
namespace grid {

namespace {

// The start values of generator g at terminal power P + jQ and voltage |V|∠θ with exciter gain
// `gain` (KA or K), in the order of its start rows: machine rows, exciter rows, exciter
// constants, Pm, governor (x1, x2).
template <class S> PetscInt generatorStartValues(const CaseGrid::Gen &G, const S &P, const S &Q, const S &Vm, const S &th, const S &gain, S *out) {
  using std::exp;
  const MachineRest<S> m = machineAtRest<S>(G.machine, G.m, P, Q, Vm, th);
  PetscInt w = 0;
  for (int k = 0; k < m.numRows; ++k) out[w++] = m.rows[k];
  const S &Efd = m.Efd;
  switch (G.exciter) {
  case ExciterKind::IEEET1Simple: {
    const GenData &c = G.legacy;
    const S VR = c.KE * Efd + c.k1 * exp(c.k2 * Efd);
    out[w++] = Efd, out[w++] = c.KF * Efd / c.TF, out[w++] = VR;
    out[w++] = Vm + VR / gain, out[w++] = gain;
    break;
  }
  case ExciterKind::DC: {
    const DCExciter &e = G.dc;
    const S sat = e.sat.value(Efd);
    const S KE = G.keGiven != 0 ? S(G.keGiven) : S(-sat / Efd);
    const S VR = KE * Efd + sat, u = VR / gain;
    out[w++] = Efd, out[w++] = e.KF * Efd / e.TF, out[w++] = VR, out[w++] = Vm;
    out[w++] = e.TB > 0 ? S((1 - e.TC / e.TB) * u) : S(0.0);
    out[w++] = Vm + u, out[w++] = gain, out[w++] = KE;
    break;
  }
  case ExciterKind::SEXS: {
    const SexsExciter &e = G.sexs;
    const S y = Efd / gain;
    out[w++] = Efd, out[w++] = e.TB > 0 ? S((1 - e.TA_TB) * y) : S(0.0);
    out[w++] = Vm + y, out[w++] = gain;
    break;
  }
  case ExciterKind::None:
    if (G.machine != MachineKind::Classical) out[w++] = Efd;  // constant field voltage
    break;
  }
  out[w++] = m.Pm;
  if (G.governor >= 0 && !G.ieeeg1) out[w++] = m.Pm, out[w++] = m.Pm;
  if (G.governor >= 0 && G.ieeeg1) {  // at rest: no speed signal, the gate and every stage at P_m/(k ΣK)
    const S gate = m.Pm / (G.govK * G.g1.sumK());
    out[w++] = 0.0;
    for (int i = 0; i < 5; ++i) out[w++] = gate;
  }
  return w;
}

// The rows generatorStartValues writes, in its order.
std::vector<PetscInt> generatorStartRows(const CaseGrid::Gen &G, const CaseGrid &grid, PetscInt g) {
  std::vector<PetscInt> rows;
  const CaseGrid::GenRows &r = G.rows;
  for (PetscInt k = 0; k < r.numMachine; ++k) rows.push_back(r.machine + k);
  for (PetscInt k = 0; k < r.numExciter; ++k) rows.push_back(r.exciter + k);
  for (PetscInt k = 0; k < r.numConstants; ++k) rows.push_back(r.constants + k);
  rows.push_back(r.pm);
  if (G.governor >= 0)
    for (PetscInt j = 0; j < (G.ieeeg1 ? 6 : 2); ++j) rows.push_back(grid.gov(G.governor, j));
  return rows;
}

// The initial state from the case's power flow for params (spec, then the exciter gains in
// generator order): every generator at rest on it, the loads' reference |V|, and (Vr, Vi) of
// every bus. Writes, in order: each generator's start rows, the load references, the buses'
// (Vr, Vi). A bus's Q (and the slack's P) is shared among its generators: each keeps its file
// value plus its MBASE weight times the difference (a single generator takes the bus's value).
struct CasePowerFlowStart {
  static constexpr int numReads = 0, numWrites = Dynamic, numParams = Dynamic;
  std::shared_ptr<const CaseGrid::PowerFlowData> pf;
  std::vector<CaseGrid::Gen> gens;
  std::vector<std::vector<PetscInt>> gensAt;  // per bus
  std::vector<PetscInt> pvSpecOfGen;          // per generator: its P's spec position, or -1
  std::vector<PetscInt> loadBus;
  PetscInt numWritten = 0, numParamsRead = 0;
  // Each generator's P and Q from the generation (Pb, Qb) of its bus, busGeneration(b, Pb, Qb).
  template <class S, class BusGeneration> void generatorPowers(const S *p, const BusGeneration &busGeneration, std::vector<S> &Pg, std::vector<S> &Qg) const {
    Pg.resize(gens.size()), Qg.resize(gens.size());
    for (PetscInt b = 0; b < pf->nB; ++b) {
      const auto &at = gensAt[b];
      if (at.empty()) continue;
      S Pb, Qb;
      busGeneration(b, Pb, Qb);
      if (at.size() == 1) {
        Pg[at[0]] = Pb, Qg[at[0]] = Qb;
        continue;
      }
      S pFile = 0.0, qFile = 0.0;
      for (PetscInt g : at) pFile += gens[g].pFile, qFile += gens[g].qFile;
      for (PetscInt g : at) {
        Pg[g] = pvSpecOfGen[g] >= 0 ? S(p[pvSpecOfGen[g]]) : S(gens[g].pFile + gens[g].weight * (Pb - pFile));
        Qg[g] = gens[g].qFile + gens[g].weight * (Qb - qFile);
      }
    }
  }
  template <class S> void initialState(const S *p, S *u0) const {
    const auto s = pf->solve<S>(p);
    if (s.error || !s.converged) {  // the command refuses such a p before the solve; never a silent number here
      for (PetscInt w = 0; w < numWritten; ++w) u0[w] = std::numeric_limits<PetscReal>::quiet_NaN();
      return;
    }
    const PetscInt ns = pf->numSpecs();
    std::vector<S> Pg, Qg;
    generatorPowers(p, [&](PetscInt b, S &Pb, S &Qb) { pf->generation(s, b, Pb, Qb); }, Pg, Qg);
    PetscInt w = 0;
    for (size_t g = 0; g < gens.size(); ++g) {
      const PetscInt b = gens[g].bus;
      const S gain = gens[g].gain >= 0 ? S(p[ns + gens[g].gain]) : S(1.0);
      w += generatorStartValues<S>(gens[g], Pg[g], Qg[g], s.Vm[b], s.th[b], gain, u0 + w);
    }
    for (PetscInt b : loadBus) u0[w++] = s.Vm[b];
    using std::cos;
    using std::sin;
    for (PetscInt b = 0; b < pf->nB; ++b) u0[w++] = s.Vm[b] * cos(s.th[b]), u0[w++] = s.Vm[b] * sin(s.th[b]);
  }
  // (∂u0/∂p)ᵀ w for the adjoint without ∂u0/∂p (the forward derivative costs one solve per
  // parameter): back through the generators' start values (forward AD over their five inputs),
  // the loads' and buses' voltages and the generators' bus injections to every bus's |V|, θ,
  // then one transposed solve of the power flow per w (voltagesTranspose).
  void initialStateTranspose(const PetscReal *p, const PetscScalar *const *w, PetscScalar *const *out, int count) const {
    using F5 = Sacado::Fad::SFad<PetscReal, 5>;
    const PetscInt ns = pf->numSpecs(), nB = pf->nB;
    SparseLU lu(pf->rowStart, pf->cols);
    std::vector<PetscReal> x, Vm, th, Pg, Qg, Pb(nB, 0.0), Qb(nB, 0.0);
    PetscReal norm;
    bool converged = false;
    if (pf->newton(p, x, lu, &norm, &converged) || !converged) {  // never a silent number (as initialState)
      for (int k = 0; k < count; ++k)
        for (PetscInt i = 0; i < numParamsRead; ++i) out[k][i] = std::numeric_limits<PetscReal>::quiet_NaN();
      return;
    }
    pf->voltages(x.data(), p, Vm, th);
    generatorPowers(
        p,
        [&](PetscInt b, PetscReal &P, PetscReal &Q) {
          pf->injection(b, [&](PetscInt j, PetscReal &m, PetscReal &a) { m = Vm[j], a = th[j]; }, P, Q);
          P += pf->Pd[b], Q += pf->Qd[b];
        },
        Pg, Qg);
    const std::vector<PetscReal> zero(nB, 0.0);
    std::vector<std::vector<PetscReal>> barVm(count, zero), barTh(count, zero), barPb(count, zero), barQb(count, zero);
    PetscInt w0 = 0;
    std::vector<F5> values(32);
    for (size_t g = 0; g < gens.size(); ++g) {
      const CaseGrid::Gen &G = gens[g];
      const PetscInt b = G.bus;
      const F5 z[5] = {F5(5, 0, Pg[g]), F5(5, 1, Qg[g]), F5(5, 2, Vm[b]), F5(5, 3, th[b]), F5(5, 4, G.gain >= 0 ? p[ns + G.gain] : 1.0)};
      const PetscInt nw = generatorStartValues<F5>(G, z[0], z[1], z[2], z[3], z[4], values.data());
      const bool shared = gensAt[b].size() > 1;
      for (int k = 0; k < count; ++k) {
        PetscReal bar[5] = {0, 0, 0, 0, 0};
        for (PetscInt r = 0; r < nw; ++r)
          for (int j = 0; j < 5; ++j) bar[j] += w[k][w0 + r] * values[r].fastAccessDx(j);
        // generatorPowers transposed: Pg, Qg are the bus's, or the file's plus a weighted share
        if (shared && pvSpecOfGen[g] >= 0) out[k][pvSpecOfGen[g]] += bar[0];
        else barPb[k][b] += (shared ? G.weight : 1.0) * bar[0];
        barQb[k][b] += (shared ? G.weight : 1.0) * bar[1];
        barVm[k][b] += bar[2], barTh[k][b] += bar[3];
        if (G.gain >= 0) out[k][ns + G.gain] += bar[4];
      }
      w0 += nw;
    }
    for (size_t l = 0; l < loadBus.size(); ++l)
      for (int k = 0; k < count; ++k) barVm[k][loadBus[l]] += w[k][w0 + (PetscInt)l];
    w0 += (PetscInt)loadBus.size();
    for (PetscInt b = 0; b < nB; ++b) {
      const PetscReal c = std::cos(th[b]), s = std::sin(th[b]);
      for (int k = 0; k < count; ++k) {
        const PetscReal wr = w[k][w0 + 2 * b], wi = w[k][w0 + 2 * b + 1];
        barVm[k][b] += wr * c + wi * s, barTh[k][b] += Vm[b] * (wi * c - wr * s);
      }
    }
    std::vector<PetscInt> buses;
    std::vector<PetscReal> dP, dQ;
    for (PetscInt b = 0; b < nB; ++b) {
      if (gensAt[b].empty()) continue;
      pf->injectionGradient(b, Vm, th, buses, dP, dQ);
      for (int k = 0; k < count; ++k)
        for (size_t q = 0; q < buses.size(); ++q) {
          barVm[k][buses[q]] += barPb[k][b] * dP[2 * q] + barQb[k][b] * dQ[2 * q];
          barTh[k][buses[q]] += barPb[k][b] * dP[2 * q + 1] + barQb[k][b] * dQ[2 * q + 1];
        }
    }
    if (pf->voltagesTranspose(p, x, lu, barVm, barTh, out))
      for (int k = 0; k < count; ++k)
        for (PetscInt i = 0; i < numParamsRead; ++i) out[k][i] = std::numeric_limits<PetscReal>::quiet_NaN();
  }
};

std::string recordText(const DynamicRecord &r) { return r.where.str() + ": " + r.model + " at bus " + std::to_string(r.bus) + " id '" + r.id + "'"; }

std::string trimId(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

enum class Role { Machine, Exciter, Governor };
Role roleOf(const std::string &model) {
  if (model == "GENCLS" || model == "GENROU" || model == "GENSAL") return Role::Machine;
  if (model == "TGOV1" || model == "IEEEG1") return Role::Governor;
  return Role::Exciter;
}

} // namespace

PetscErrorCode CaseGrid::create(const NetworkCase &net, const DynamicData &dyn, const CaseGridOptions &options, std::unique_ptr<CaseGrid> *out) {
  PetscFunctionBeginUser;
  std::unique_ptr<CaseGrid> grid(new CaseGrid());
  PetscCall(grid->build(net, dyn, options));
  *out = std::move(grid);
  PetscFunctionReturn(0);
}

// Reads the DYR records of one in-service generator into gens_ (and govs_); rows come later.
PetscErrorCode CaseGrid::addGenerator(const NetworkCase &net, const Generator &g, PetscInt bus, const std::vector<const DynamicRecord *> &records,
                                      const CaseGridOptions &o, const std::string &dyrFile) {
  PetscFunctionBeginUser;
  const MPI_Comm world = PETSC_COMM_WORLD;
  const double zb = net.baseMVA / g.mbase, hb = g.mbase / net.baseMVA;  // impedances, inertia: machine base → system base
  const DynamicRecord *machine = nullptr, *exciter = nullptr, *governor = nullptr;
  for (const DynamicRecord *r : records) {
    switch (roleOf(r->model)) {
    case Role::Machine: machine = r; break;
    case Role::Exciter: exciter = r; break;
    case Role::Governor: governor = r; break;
    }
  }
  Gen G;
  G.busNumber = g.bus, G.id = trimId(g.id), G.bus = bus, G.governor = -1;
  G.pFile = g.pg.value / net.baseMVA, G.qFile = g.qg.value / net.baseMVA, G.weight = 1;
  MachineData &m = G.m;
  m.Rs = g.zr * zb;
  auto positive = [&](const DynamicRecord &r, std::initializer_list<const char *> names) -> PetscErrorCode {
    PetscFunctionBeginUser;
    for (const char *n : names) PetscCheck(r.param(n) > 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: %s = %g, must be positive", recordText(r).c_str(), n, r.param(n));
    PetscFunctionReturn(0);
  };
  if (!machine) {
    PetscCheck(o.genericMachine == "gencls", world, PETSC_ERR_ARG_WRONG,
               "%s: generator at bus %d id '%s' has no machine record (GENCLS, GENROU or GENSAL)%s%s: give one, or choose a generic model for such "
               "generators (hybridsens-grid: -generic_machine gencls, with -generic_H, -generic_D, -generic_Xdp)",
               g.where.str().c_str(), g.bus, G.id.c_str(), dyrFile.empty() ? "" : " in ", dyrFile.c_str());
    PetscCheck(!exciter && !governor, world, PETSC_ERR_ARG_WRONG, "%s: a %s record for a generator without a machine record: give its machine too",
               recordText(exciter ? *exciter : *governor).c_str(), exciter ? "exciter" : "governor");
    PetscCheck(o.genericH > 0 && o.genericXdp > 0 && o.genericD >= 0, world, PETSC_ERR_ARG_OUTOFRANGE,
               "the generic machine needs H > 0, X'd > 0, D >= 0 (got -generic_H %g, -generic_Xdp %g, -generic_D %g)", (double)o.genericH, (double)o.genericXdp,
               (double)o.genericD);
    G.machine = MachineKind::Classical, G.models = "generic GENCLS";
    m.H = o.genericH * hb;
    m.Xd = m.Xq = m.Xdp = m.Xqp = m.Xpp = o.genericXdp * zb;
    m.dampingPerM = o.genericD * hb / (2 * m.H);
    ++numGeneric_;
  } else {
    const DynamicRecord &r = *machine;
    G.models = r.model;
    PetscCall(positive(r, {"H"}));
    m.H = r.param("H") * hb;
    m.dampingPerM = r.param("D") * hb / (2 * m.H);
    if (r.model == "GENCLS") {
      PetscCheck(net.format.rfind("PSS/E", 0) == 0, world, PETSC_ERR_SUP,
                 "%s: a GENCLS machine takes X'd from ZX of the RAW generator record, which a %s case does not have", recordText(r).c_str(), net.format.c_str());
      PetscCheck(g.zx > 0, world, PETSC_ERR_ARG_OUTOFRANGE,
                 "%s: generator at bus %d: the GENCLS machine's X'd is ZX of the RAW generator record, which is %g (must be positive)", g.where.str().c_str(),
                 g.bus, g.zx);
      PetscCheck(!exciter, world, PETSC_ERR_SUP, "%s: an exciter for a GENCLS machine (constant E'): the classical machine takes none", recordText(*exciter).c_str());
      G.machine = MachineKind::Classical;
      m.Xd = m.Xq = m.Xdp = m.Xqp = m.Xpp = g.zx * zb;
    } else {
      const bool salient = r.model == "GENSAL";
      PetscCall(positive(r, {"Tdop", "Xd", "Xq", "Xdp"}));
      m.Tdop = r.param("Tdop"), m.Xd = r.param("Xd") * zb, m.Xq = r.param("Xq") * zb, m.Xdp = r.param("Xdp") * zb;
      m.Xpp = r.param("Xdpp") * zb, m.Xl = r.param("Xl") * zb;
      m.Tdopp = r.param("Tdopp"), m.Tqopp = r.param("Tqopp");
      if (!salient) {
        PetscCall(positive(r, {"Tqop", "Xqp"}));
        m.Tqop = r.param("Tqop"), m.Xqp = r.param("Xqp") * zb;
      }
      const double S1 = r.param("S1"), S12 = r.param("S12");
      if (!salient && m.Tdopp == 0 && m.Tqopp == 0) {
        // T''do = T''qo = 0 marks "no subtransient dynamics": the two-axis machine.
        PetscCheck(S1 == 0 && S12 == 0, world, PETSC_ERR_SUP,
                   "%s: machine saturation (S(1.0) = %g, S(1.2) = %g) with T''do = T''qo = 0 (the two-axis form) is not supported: give T''do, T''qo > 0 "
                   "(subtransient GENROU) or S(1.0) = S(1.2) = 0",
                   recordText(r).c_str(), S1, S12);
        G.machine = MachineKind::TwoAxis;
      } else {
        PetscCheck(m.Tdopp > 0 && m.Tqopp > 0, world, PETSC_ERR_ARG_OUTOFRANGE,
                   "%s: subtransient time constants T''do = %g, T''qo = %g: both must be positive (or, GENROU only, both 0 for the two-axis machine)",
                   recordText(r).c_str(), m.Tdopp, m.Tqopp);
        const double xl = r.param("Xl"), xpp = r.param("Xdpp"), xdp = r.param("Xdp");
        // The γ factors divide by X'd − Xl (and X'q − Xl); Xl = X'' (γd1 = 0) and X'' = X'd (γd2 = 0) are valid limits.
        PetscCheck(xl >= 0 && xl <= xpp && xpp <= xdp && xl < xdp && (salient || (xpp <= r.param("Xqp") && xl < r.param("Xqp"))), world,
                   PETSC_ERR_ARG_OUTOFRANGE, "%s: needs 0 <= Xl <= X''d <= X'd with Xl < X'd%s (got Xl %g, X''d %g, X'd %g)", recordText(r).c_str(),
                   salient ? "" : ", X''d <= X'q and Xl < X'q", xl, xpp, xdp);
        PetscCheck(m.sat.through(1.0, S1, 1.2, 1.2 * S12) && (m.sat.none() || m.sat.A > 0), world, PETSC_ERR_ARG_OUTOFRANGE,
                   "%s: saturation S(1.0) = %g, S(1.2) = %g does not define PSS/E's quadratic curve B (x - A)^2 with 0 < A < 1 (need 0 <= S(1.0) < 1.2 S(1.2))",
                   recordText(r).c_str(), S1, S12);
        G.machine = salient ? MachineKind::SalientPole : MachineKind::RoundRotor;
      }
    }
  }
  // Exciter.
  G.exciter = ExciterKind::None;
  if (exciter) {
    const DynamicRecord &e = *exciter;
    G.exciterRecord = recordText(e);
    G.models += "+" + e.model;
    if (e.model == "IEEET1" || e.model == "EXDC1" || e.model == "ESDC1A") {
      const bool ieee = e.model == "IEEET1";
      const char *tf = ieee ? "TF" : "TF1";
      PetscCall(positive(e, {"KA", "TA", "TE", tf}));
      PetscCheck(e.param("TR") >= 0 && e.param("KF") >= 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: TR = %g and KF = %g must not be negative", recordText(e).c_str(),
                 e.param("TR"), e.param("KF"));
      PetscCheck(e.param("VRMIN") < e.param("VRMAX"), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: needs VRMIN < VRMAX (got %g, %g)", recordText(e).c_str(),
                 e.param("VRMIN"), e.param("VRMAX"));
      const double E1 = e.param("E1"), SE1 = e.param("SE1"), E2 = e.param("E2"), SE2 = e.param("SE2");
      ExciterSaturation sat;
      if (ieee) {
        // Saturation SE(E)·E = k1 exp(k2 E) through the two points; none when both SE are 0.
        if (SE1 != 0 || SE2 != 0) {
          PetscCheck(E1 > 0 && E2 > 0 && E1 != E2 && SE1 > 0 && SE2 > 0, world, PETSC_ERR_ARG_OUTOFRANGE,
                     "%s: the saturation points need E1 != E2 > 0 and SE1, SE2 > 0 (or SE1 = SE2 = 0: no saturation); got (%g, %g), (%g, %g)",
                     recordText(e).c_str(), E1, SE1, E2, SE2);
          sat.k2 = std::log(E2 * SE2 / (E1 * SE1)) / (E2 - E1);
          sat.k1 = E1 * SE1 * std::exp(-sat.k2 * E1);
        }
      } else {
        sat.exponential = false;
        PetscCheck(sat.quad.through(E1, SE1 * E1, E2, SE2 * E2), world, PETSC_ERR_ARG_OUTOFRANGE,
                   "%s: the saturation points (E1, SE1) = (%g, %g), (E2, SE2) = (%g, %g) do not define PSS/E's quadratic curve: need 0 < E1 < E2 and "
                   "0 <= SE1 E1 < SE2 E2 (or SE1 = SE2 = 0)",
                   recordText(e).c_str(), E1, SE1, E2, SE2);
      }
      G.gainValue = e.param("KA");
      if (ieee && e.param("TR") == 0 && e.param("KE") != 0) {
        // The form of examples/wecc9 (grid_kernels.hpp's Exciter): Efd, RF, VR only.
        G.exciter = ExciterKind::IEEET1Simple;
        GenData &c = G.legacy;
        c.TA = e.param("TA"), c.KE = e.param("KE"), c.TE = e.param("TE"), c.KF = e.param("KF"), c.TF = e.param("TF"), c.k1 = sat.k1, c.k2 = sat.k2;
        c.VRmin = e.param("VRMIN"), c.VRmax = e.param("VRMAX");
      } else {
        G.exciter = ExciterKind::DC;
        const double TB = ieee ? 0.0 : e.param("TB"), TC = ieee ? 0.0 : e.param("TC");
        PetscCheck(TB >= 0 && TC >= 0 && (TB > 0 || TC == 0), world, PETSC_ERR_ARG_OUTOFRANGE,
                   "%s: the lead-lag needs TB >= 0, TC >= 0, and TC = 0 when TB = 0 (bypassed); got TB %g, TC %g", recordText(e).c_str(), TB, TC);
        G.dc = DCExciter{e.param("TR"), e.param("TA"), TB, TC, e.param("TE"), e.param("KF"), e.param(tf), sat, {e.param("VRMIN"), e.param("VRMAX"), 0}};
        G.keGiven = e.param("KE");
      }
    } else if (e.model == "SEXS") {
      PetscCall(positive(e, {"K", "TE", "TA_TB"}));
      PetscCheck(e.param("TB") >= 0, world, PETSC_ERR_ARG_OUTOFRANGE, "%s: TB = %g must not be negative", recordText(e).c_str(), e.param("TB"));
      PetscCheck(e.param("EMIN") < e.param("EMAX"), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: needs EMIN < EMAX (got %g, %g)", recordText(e).c_str(), e.param("EMIN"),
                 e.param("EMAX"));
      G.exciter = ExciterKind::SEXS;
      G.sexs = SexsExciter{e.param("TA_TB"), e.param("TB"), e.param("TE"), {e.param("EMIN"), e.param("EMAX"), 0}};
      G.gainValue = e.param("K");
    } else
      SETERRQ(world, PETSC_ERR_SUP, "%s: exciter model not supported by the grid model (supported: IEEET1, EXDC1, ESDC1A, SEXS)", recordText(e).c_str());
  }
  // Governor.
  if (governor && o.governors) {
    const DynamicRecord &t = *governor;
    G.governorRecord = recordText(t);
    G.governor = (PetscInt)govs_.size();
    G.govK = hb;
    if (t.model == "IEEEG1") {
      PetscCheck(t.param("JBUS") == 0 && t.param("M") == 0, world, PETSC_ERR_SUP,
                 "%s: a cross-compound unit (JBUS = %g, M = %g): only the single-shaft IEEEG1 (JBUS = M = 0) is supported", recordText(t).c_str(), t.param("JBUS"),
                 t.param("M"));
      PetscCall(positive(t, {"K", "T3", "Uo"}));
      const IEEEG1Data c{t.param("T1"), t.param("T2"), t.param("T3"), t.param("Uo"), t.param("Uc"), t.param("PMAX"), t.param("PMIN"),
                         {t.param("T4"), t.param("T5"), t.param("T6"), t.param("T7")},
                         {t.param("K1") + t.param("K2"), t.param("K3") + t.param("K4"), t.param("K5") + t.param("K6"), t.param("K7") + t.param("K8")}};
      PetscCheck(c.T1 >= 0 && (c.T1 > 0 || c.T2 == 0) && c.T[0] >= 0 && c.T[1] >= 0 && c.T[2] >= 0 && c.T[3] >= 0, world, PETSC_ERR_ARG_OUTOFRANGE,
                 "%s: needs T1, T4..T7 >= 0 and T2 = 0 when T1 = 0 (got T1 %g, T2 %g, T4..T7 %g %g %g %g)", recordText(t).c_str(), c.T1, c.T2, c.T[0], c.T[1], c.T[2],
                 c.T[3]);
      PetscCheck(c.Uc < 0 && c.Pmin < c.Pmax && c.sumK() > 0, world, PETSC_ERR_ARG_OUTOFRANGE,
                 "%s: needs Uc < 0 < Uo, PMIN < PMAX and K1 + ... + K8 > 0 (got Uc %g, Uo %g, PMIN %g, PMAX %g, sum K %g)", recordText(t).c_str(), c.Uc, c.Uo, c.Pmin,
                 c.Pmax, c.sumK());
      G.ieeeg1 = true, G.g1 = c, G.models += "+IEEEG1";
      Gov v{(PetscInt)gens_.size(), TGOV1Data{}, hb, t.param("K")};
      v.ieeeg1 = true, v.g1 = c;
      govs_.push_back(v);
    } else {
    PetscCall(positive(t, {"R", "T1", "T3"}));
    PetscCheck(t.param("VMIN") < t.param("VMAX"), world, PETSC_ERR_ARG_OUTOFRANGE, "%s: needs VMIN < VMAX (got %g, %g)", recordText(t).c_str(), t.param("VMIN"),
               t.param("VMAX"));
    G.models += "+TGOV1";
    govs_.push_back({(PetscInt)gens_.size(), TGOV1Data{t.param("T1"), t.param("T2"), t.param("T3"), t.param("Dt"), t.param("VMIN"), t.param("VMAX")}, hb,
                     t.param("R")});
    }
  }
  // The legacy kernels' machine constants (two-axis Machine; the Exciter reads only its own).
  GenData &c = G.legacy;
  c.H = m.H, c.Rs = m.Rs, c.Xd = m.Xd, c.Xdp = m.Xdp, c.Xq = m.Xq, c.Xqp = m.Xqp, c.Td0p = m.Tdop, c.Tq0p = m.Tqop;
  c.dampingPerM = m.dampingPerM;
  gens_.push_back(G);
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
  for (const DynamicRecord &r : dyn.records) records[{r.bus, trimId(r.id)}].push_back(&r);
  std::vector<std::vector<PetscInt>> gensAt(nB);
  std::vector<PetscReal> mbaseAt(nB, 0.0);
  std::vector<PetscReal> mbase;
  for (const Generator &g : net.generators) {
    if (!g.inService) continue;
    const PetscInt b = busPos.at(g.bus);
    const BusType type = net.buses[net.busIndex.at(g.bus)].type;
    PetscCheck(type == BusType::PV || type == BusType::Slack, world, PETSC_ERR_SUP,
               "%s: generator at bus %d, a PQ bus: the grid model needs generators at PV (type 2) or slack (type 3) buses", g.where.str().c_str(), g.bus);
    auto it = records.find({g.bus, trimId(g.id)});
    static const std::vector<const DynamicRecord *> none;
    gensAt[b].push_back((PetscInt)gens_.size());
    mbaseAt[b] += g.mbase, mbase.push_back(g.mbase);
    PetscCall(addGenerator(net, g, b, it == records.end() ? none : it->second, o, dyn.file));
  }
  PetscCheck(!gens_.empty(), world, PETSC_ERR_ARG_WRONG, "%s: no in-service generator", net.file.c_str());
  const PetscInt nG = numGens();
  for (PetscInt b = 0; b < nB; ++b)
    for (PetscInt g : gensAt[b]) {
      Gen &G = gens_[g];
      G.weight = mbase[g] / mbaseAt[b];
      G.label = gensAt[b].size() == 1 ? std::to_string(G.busNumber) : std::to_string(G.busNumber) + "_" + G.id;
    }
  // Loads (constant impedance at the power-flow voltage).
  std::vector<PetscReal> Pd(nB, 0.0), Qd(nB, 0.0);
  for (const power::Load &l : net.loads) {
    if (!l.inService) continue;
    // The power flow solves loads as constant power; the file's own voltage-dependent parts would
    // change it. The dynamics' load characteristic is chosen after the power flow instead.
    PetscCheck(l.ip == 0 && l.iq == 0 && l.yp == 0 && l.yq == 0, world, PETSC_ERR_SUP,
               "%s: load with constant-current or constant-admittance parts (IP %g, IQ %g, YP %g, YQ %g) in the case is not supported (the power flow "
               "takes loads as constant power): give them as constant power (PL, QL) and choose the dynamic characteristic with -load_model zip "
               "-load_zip_p Z,I,P -load_zip_q Z,I,P",
               l.where.str().c_str(), l.ip, l.iq, l.yp, l.yq);
    const PetscInt b = busPos.at(l.bus);
    loads_.push_back({b, l.p.value / base, l.q.value / base});
    Pd[b] += l.p.value / base, Qd[b] += l.q.value / base;
  }
  // The power-flow problem.
  auto pf = std::make_shared<PowerFlowData>();
  pf->nB = nB;
  PetscCall(admittanceMatrix(net, &pf->Y));
  pf->thIdx.assign(nB, -1), pf->vmIdx.assign(nB, -1), pf->pvOf.assign(nB, -1), pf->pSpecsAt.assign(nB, {});
  pf->Pd = Pd, pf->Qd = Qd;
  std::vector<PetscInt> pvSpecOfGen(nG, -1);
  for (PetscInt b = 0; b < nB; ++b) {
    const Bus &bus = net.buses[b];
    pf->guessVm.push_back(bus.vm.value), pf->guessTh.push_back(bus.va.value * PETSC_PI / 180.0);
    if (bus.type == BusType::Slack) {
      PetscCheck(pf->slack < 0, world, PETSC_ERR_SUP, "%s: a second slack bus (%d): the grid model's power flow needs exactly one", bus.where.str().c_str(), bus.number);
      PetscCheck(!gensAt[b].empty(), world, PETSC_ERR_ARG_WRONG, "%s: slack bus %d has no in-service generator", bus.where.str().c_str(), bus.number);
      pf->slack = b;
    } else if (bus.type == BusType::PV && !gensAt[b].empty()) {  // a PV bus without an in-service generator is a PQ bus (as PSS/E solves it)
      pf->pvOf[b] = (PetscInt)pf->pvBus.size();
      pf->pvBus.push_back(b);
    }
  }
  for (PetscInt g = 0; g < nG; ++g)
    if (pf->pvOf[gens_[g].bus] >= 0) {
      pvSpecOfGen[g] = 2 + (PetscInt)pf->pvGen.size();
      pf->pSpecsAt[gens_[g].bus].push_back(pvSpecOfGen[g]);
      pf->pvGen.push_back(g);
    }
  PetscCheck(pf->slack >= 0, world, PETSC_ERR_ARG_WRONG, "%s: no slack bus (type 3)", net.file.c_str());
  for (PetscInt b = 0; b < nB; ++b)
    if (b != pf->slack) pf->thIdx[b] = pf->nUnknowns++;
  for (PetscInt b = 0; b < nB; ++b)
    if (b != pf->slack && pf->pvOf[b] < 0) pf->vmIdx[b] = pf->nUnknowns++;
  pf->finishPattern();
  pf_ = pf;

  // ---- the layout --------------------------------------------------------------------------
  PetscInt row = 0;
  for (Gen &G : gens_) {
    GenRows &r = G.rows;
    r.machine = row;
    r.numMachine = G.machine == MachineKind::RoundRotor ? 8 : G.machine == MachineKind::SalientPole ? 7 : 6;
    row += r.numMachine;
    r.exciter = row;
    r.numExciter = G.exciter == ExciterKind::IEEET1Simple ? 3 : G.exciter == ExciterKind::DC ? 5 : G.exciter == ExciterKind::SEXS ? 2 : 0;
    row += r.numExciter;
    if (G.exciter != ExciterKind::None) r.efd = r.exciter, r.vr = G.exciter == ExciterKind::SEXS ? r.exciter : r.exciter + 2;
    if (G.exciter == ExciterKind::IEEET1Simple || G.exciter == ExciterKind::DC) r.rf = r.exciter + 1;
  }
  busStart_ = row;
  row += 2 * nB;
  for (Gen &G : gens_) {
    GenRows &r = G.rows;
    r.constants = row;
    r.numConstants = G.exciter == ExciterKind::IEEET1Simple || G.exciter == ExciterKind::SEXS ? 2
                     : G.exciter == ExciterKind::DC                                         ? 3
                     : G.machine == MachineKind::Classical                                  ? 0
                                                                                            : 1;
    if (G.exciter != ExciterKind::None) r.vref = row, r.ka = row + 1;
    if (G.exciter == ExciterKind::DC) r.ke = row + 2;
    if (G.exciter == ExciterKind::None && G.machine != MachineKind::Classical) r.efd = row;
    row += r.numConstants;
  }
  for (Gen &G : gens_) G.rows.pm = row++;
  loadStart_ = row;
  row += numLoads();
  for (const Gov &t : govs_) govRows_.push_back(row), row += t.ieeeg1 ? 6 : 2;
  numStates_ = row;
  // Limiters: the exciters' in generator order, then the governors' valves.
  for (PetscInt g = 0; g < nG; ++g) {
    Gen &G = gens_[g];
    if (G.exciter == ExciterKind::None) continue;
    const PetscInt flag = 1 + numLimiters();
    if (G.exciter == ExciterKind::DC) G.dc.lim.flag = flag;
    if (G.exciter == ExciterKind::SEXS) G.sexs.lim.flag = flag;
    G.gain = numGains_++;
    const NonWindupLimiter band = G.exciter == ExciterKind::DC     ? G.dc.lim
                                  : G.exciter == ExciterKind::SEXS ? G.sexs.lim
                                                                   : NonWindupLimiter{G.legacy.VRmin, G.legacy.VRmax, flag};
    limiters_.push_back({(G.exciter == ExciterKind::SEXS ? "EFD" : "VR") + G.label, g, G.rows.vr, false, band.lo, band.hi});
  }
  std::vector<PetscInt> govLimiter;  // each governor's first limiter
  for (PetscInt k = 0; k < numGovernors(); ++k) {
    const Gov &t = govs_[k];
    const std::string &label = gens_[t.gen].label;
    govLimiter.push_back(numLimiters());
    if (!t.ieeeg1) limiters_.push_back({"Pv" + label, t.gen, gov(k, 0), true, t.k * t.c.Vmin, t.k * t.c.Vmax});
    else {
      limiters_.push_back({"Gate" + label, t.gen, gov(k, 1), true, t.g1.Pmin, t.g1.Pmax});
      limiters_.push_back({"GateRate" + label, t.gen, gov(k, 1), true, t.g1.Uc, t.g1.Uo, true});
    }
  }

  // The disturbances: faults and setpoint steps (grid_events.cpp; their flags follow the limiters').
  PetscCall(planDisturbances(o, busPos, gensAt, net));
  PetscCall(planZipLoads(o));  // their flags follow the disturbances'

  // Parameters: nominal values and names.
  nominal_.assign(numParams(), 0.0), names_.assign(numParams(), "");
  for (PetscInt g = 0; g < nG; ++g) {
    const Gen &G = gens_[g];
    nominal_[pP(g)] = G.pFile, names_[pP(g)] = "P" + G.label;
    nominal_[pQ(g)] = G.qFile, names_[pQ(g)] = "Q" + G.label;
    if (G.gain >= 0) nominal_[pKA(g)] = G.gainValue, names_[pKA(g)] = "KA" + G.label;
  }
  nominal_[pTon()] = o.tOn, names_[pTon()] = "t_on";
  nominal_[pToff()] = o.tOff, names_[pToff()] = "t_off";
  for (PetscInt b = 0; b < nB; ++b) {
    const std::string k = std::to_string(buses_[b]);
    nominal_[pVm(b)] = pf->guessVm[b], names_[pVm(b)] = "Vm" + k;
    nominal_[pTh(b)] = pf->guessTh[b], names_[pTh(b)] = "th" + k;
  }
  for (PetscInt k = 0; k < numGovernors(); ++k) nominal_[pR(k)] = govs_[k].R, names_[pR(k)] = (govs_[k].ieeeg1 ? "K" : "R") + gens_[govs_[k].gen].label;

  // ---- the DAE -----------------------------------------------------------------------------
  PetscCall(setSizes(numStates()));
  std::vector<PetscInt> alg;
  for (const Gen &G : gens_) {
    alg.push_back(G.rows.machine + SlotId), alg.push_back(G.rows.machine + SlotIq);
    if (G.exciter == ExciterKind::DC) {
      if (G.dc.TR == 0) alg.push_back(G.rows.exciter + 3);  // Vc = |V|
      if (G.dc.TB == 0) alg.push_back(G.rows.exciter + 4);  // lead-lag bypassed: xLL = 0
    }
    if (G.exciter == ExciterKind::SEXS && G.sexs.TB == 0) alg.push_back(G.rows.exciter + 1);
  }
  for (PetscInt b = 0; b < nB; ++b) alg.push_back(vr(b)), alg.push_back(vi(b));
  for (PetscInt k = 0; k < numGovernors(); ++k)
    if (govs_[k].ieeeg1) {
      if (govs_[k].g1.T1 == 0) alg.push_back(gov(k, 0));  // lead-lag bypassed: xLL = 0
      for (int i = 0; i < 4; ++i)
        if (govs_[k].g1.T[i] == 0) alg.push_back(gov(k, 2 + i));  // a stage without delay
    }
  std::sort(alg.begin(), alg.end());
  setAlgebraic(alg);
  auto guardsOf = [](PetscInt l) { return std::vector<PetscInt>{4 * l + HitMax, 4 * l + HitMin, 4 * l + LeaveMax, 4 * l + LeaveMin}; };
  // A generator that an event trips gets its kernels wrapped (generator_trip.hpp): once tripped,
  // its Id, Iq rows read 0 = Id, 0 = Iq, its other algebraic rows keep their equations, and its
  // differential rows and its bus's balance rows get nothing from it.
  auto addGen = [&](PetscInt g, const auto &kernel, const Coupling &c) {
    const PetscInt flag = generatorTripFlag(g);
    if (flag < 0) return add(kernel, c);
    using K = std::decay_t<decltype(kernel)>;
    Trippable<K> k{kernel, flag, {}};
    const GenRows &r = gens_[g].rows;
    for (PetscInt row : c.writes) {
      const PetscInt read = (PetscInt)(std::find(c.reads.begin(), c.reads.end(), row) - c.reads.begin());
      if (row == r.machine + SlotId || row == r.machine + SlotIq) k.after.push_back(read);
      else if (row >= busStart_ && row < busStart_ + 2 * nB) k.after.push_back(Trippable<K>::Zero);
      else k.after.push_back(std::binary_search(alg.begin(), alg.end(), row) ? Trippable<K>::Keep : Trippable<K>::Zero);
    }
    add(k, c);
  };
  PetscInt limiter = 0;
  for (PetscInt g = 0; g < nG; ++g) {
    const Gen &G = gens_[g];
    const GenRows &r = G.rows;
    const PetscInt b = G.bus, m0 = r.machine;
    const bool governed = G.governor >= 0;
    std::vector<PetscInt> machineRows;
    for (PetscInt k = 0; k < r.numMachine; ++k) machineRows.push_back(m0 + k);
    auto with = [](std::vector<PetscInt> v, std::initializer_list<PetscInt> more) {
      v.insert(v.end(), more);
      return v;
    };
    switch (G.machine) {
    case MachineKind::Classical:
      addGen(g, ClassicalMachine{G.m, governed}, {with(machineRows, {vr(b), vi(b), r.pm}), with(machineRows, {vr(b), vi(b)}), {}, {}});
      break;
    case MachineKind::TwoAxis:
      addGen(g, Machine{G.legacy, governed, false}, {with(machineRows, {r.efd, vr(b), vi(b), r.pm}), with(machineRows, {vr(b), vi(b)}), {}, {}});
      break;
    case MachineKind::RoundRotor:
      addGen(g, RoundRotorMachine{G.m, governed}, {with(machineRows, {r.efd, vr(b), vi(b), r.pm}), with(machineRows, {vr(b), vi(b)}), {}, {}});
      break;
    case MachineKind::SalientPole:
      addGen(g, SalientPoleMachine{G.m, governed}, {with(machineRows, {r.efd, vr(b), vi(b), r.pm}), with(machineRows, {vr(b), vi(b)}), {}, {}});
      break;
    }
    const PetscInt e0 = r.exciter;
    switch (G.exciter) {
    case ExciterKind::None: break;
    case ExciterKind::IEEET1Simple:
      addGen(g, Exciter{G.legacy, {G.legacy.VRmin, G.legacy.VRmax, 1 + limiter}},
             {{e0, e0 + 1, e0 + 2, vr(b), vi(b), r.vref, r.ka}, {e0, e0 + 1, e0 + 2, r.vref, r.ka}, {}, guardsOf(limiter)});
      ++limiter;
      break;
    case ExciterKind::DC:
      addGen(g, G.dc, {{e0, e0 + 1, e0 + 2, e0 + 3, e0 + 4, vr(b), vi(b), r.vref, r.ka, r.ke}, {e0, e0 + 1, e0 + 2, e0 + 3, e0 + 4}, {}, guardsOf(limiter)});
      ++limiter;
      break;
    case ExciterKind::SEXS:
      addGen(g, G.sexs, {{e0, e0 + 1, vr(b), vi(b), r.vref, r.ka}, {e0, e0 + 1}, {}, guardsOf(limiter)});
      ++limiter;
      break;
    }
  }
  for (PetscInt k = 0; k < numGovernors(); ++k) {
    const Gov &t = govs_[k];
    const Gen &G = gens_[t.gen];
    const PetscInt l = govLimiter[k];
    if (!t.ieeeg1)
      addGen(t.gen, Governor{t.c, t.k, G.m.M(), {t.k * t.c.Vmin, t.k * t.c.Vmax, 1 + l}},
             {{gov(k, 0), gov(k, 1), omegaRow(t.gen), G.rows.pm}, {gov(k, 0), gov(k, 1), omegaRow(t.gen)}, {pR(k)}, guardsOf(l)});
    else {
      std::vector<PetscInt> rows, guards = guardsOf(l), rate = guardsOf(l + 1);
      for (PetscInt j = 0; j < 6; ++j) rows.push_back(gov(k, j));
      guards.insert(guards.end(), rate.begin(), rate.end());
      std::vector<PetscInt> reads = rows, writes = rows;
      reads.push_back(omegaRow(t.gen)), reads.push_back(G.rows.pm), writes.push_back(omegaRow(t.gen));
      addGen(t.gen, IEEEG1Governor{t.g1, t.k, G.m.M(), 1 + l, 2 + l}, {reads, writes, {pR(k)}, guards});
    }
  }
  {  // initial state: the power flow
    CasePowerFlowStart start;
    start.pf = pf, start.gens = gens_, start.gensAt = gensAt, start.pvSpecOfGen = pvSpecOfGen;
    for (const LoadAt &l : loads_) start.loadBus.push_back(l.bus);
    std::vector<PetscInt> rows, params;
    for (PetscInt g = 0; g < nG; ++g) {
      const auto r = generatorStartRows(gens_[g], *this, g);
      rows.insert(rows.end(), r.begin(), r.end());
    }
    for (PetscInt l = 0; l < numLoads(); ++l) rows.push_back(loadRef(l));
    for (PetscInt b = 0; b < nB; ++b) rows.push_back(vr(b)), rows.push_back(vi(b));
    start.numWritten = (PetscInt)rows.size();
    params = {pVm(pf->slack), pTh(pf->slack)};
    for (PetscInt g : pf->pvGen) params.push_back(pP(g));
    for (PetscInt b : pf->pvBus) params.push_back(pVm(b));
    for (PetscInt g = 0; g < nG; ++g)
      if (gens_[g].gain >= 0) params.push_back(pKA(g));
    start.numParamsRead = (PetscInt)params.size();
    add(start, {{}, rows, params, {}});
  }
  for (const AdmittanceEntry &y : pf->Y)
    add(Admittance{y.y.real(), y.y.imag(), 0.0, 0.0}, {{vr((PetscInt)y.j), vi((PetscInt)y.j)}, {vr((PetscInt)y.i), vi((PetscInt)y.i)}, {}, {}});
  if (o.loadModel == "zip") addZipLoads(o);
  else
    for (PetscInt l = 0; l < numLoads(); ++l) {
      const PetscInt b = loads_[l].bus;
      add(Load{loads_[l].P, loads_[l].Q}, {{vr(b), vi(b), loadRef(l)}, {vr(b), vi(b)}, {}, {}});
    }
  PetscCall(addDisturbances());
  PetscCall(setUp());
  PetscFunctionReturn(0);
}

PetscInt CaseGrid::gs(PetscInt g, PetscInt k) const {
  const GenRows &r = gens_[g].rows;
  switch (k) {
  case 6: return r.efd;
  case 7: return r.rf;
  case 8: return gens_[g].exciter == ExciterKind::SEXS ? -1 : r.vr;
  default: return k >= 0 && k < 6 ? r.machine + k : -1;
  }
}

std::vector<PetscReal> CaseGrid::powerFlowSpec(const std::vector<PetscReal> &p) const {
  std::vector<PetscReal> spec = {p[pVm(pf_->slack)], p[pTh(pf_->slack)]};
  for (PetscInt g : pf_->pvGen) spec.push_back(p[pP(g)]);
  for (PetscInt b : pf_->pvBus) spec.push_back(p[pVm(b)]);
  return spec;
}

PetscErrorCode CaseGrid::checkPowerFlow(const std::vector<PetscReal> &p, PetscReal *mismatch) const {
  PetscFunctionBeginUser;
  const std::vector<PetscReal> spec = powerFlowSpec(p);
  const auto s = pf_->solve<PetscReal>(spec.data());
  *mismatch = s.norm;
  PetscCheck(s.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
             "the initial power flow does not converge for these parameters (mismatch %g after 30 Newton steps)", (double)s.norm);
  Vec u0;
  PetscCall(VecCreateMPI(comm(), ownershipEnd() - ownershipBegin(), PETSC_DETERMINE, &u0));
  PetscCall(initialState(ModeContext{p, initialDiscreteState()}, u0));
  PetscCall(checkLoadStart(u0));
  // Every limited state of the start inside its band; the first one outside is named with its
  // record, the others counted (a large case may have several).
  PetscInt first = -1, outside = 0;
  PetscScalar firstValue = 0;
  std::string others;
  for (PetscInt l = 0; l < numLimiters(); ++l) {
    if (limiters_[l].rateLimit) continue;  // at rest the gate rate is 0, inside (Uc, Uo) by the record's checks
    PetscScalar x;
    PetscCall(globalEntry(u0, limiters_[l].row, &x));
    if (x >= limiters_[l].lo && x <= limiters_[l].hi) continue;
    if (first < 0) first = l, firstValue = x;
    else if (++outside <= 5) others += (outside > 1 ? ", " : "") + limiters_[l].name;
  }
  PetscCall(VecDestroy(&u0));
  if (first >= 0) {
    const Limiter &L = limiters_[first];
    const Gen &G = gens_[L.gen];
    const bool gate = L.governor && G.ieeeg1;
    const char *bounds = gate ? "PMIN, PMAX" : L.governor ? "VMIN, VMAX" : G.exciter == ExciterKind::SEXS ? "EMIN, EMAX" : "VRMIN, VRMAX";
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
            "generator %s (%s): the start needs %s = %g, outside its limiter's band [%g, %g]: the case cannot start at rest with these data (%s, "
            "its %s)%s%s%s. Remedy: widen those limits in the record, change the generator's dispatch or voltage%s",
            G.label.c_str(), G.models.c_str(), L.name.c_str(), (double)firstValue, (double)L.lo, (double)L.hi,
            (L.governor ? G.governorRecord : G.exciterRecord).c_str(), bounds, outside ? "; also outside: " : "", others.c_str(),
            outside > 5 ? (" and " + std::to_string(outside - 5) + " more").c_str() : "",
            L.governor ? ", or run without the governor records (hybridsens-grid: -governors 0)" : "");
  }
  PetscFunctionReturn(0);
}

std::vector<std::string> CaseGrid::supportedModels() { return {"GENCLS", "GENROU", "GENSAL", "IEEET1", "EXDC1", "ESDC1A", "SEXS", "TGOV1", "IEEEG1"}; }

// Mirrors the parameters the power-flow start kernel reads (build(): slack |V| and θ, the P of
// the generators at PV buses, |V| of the PV buses).
std::string CaseGrid::ineffectiveParameter(PetscInt k) const {
  const std::string flow = "an output of the power flow, which determines it";
  if ((k == pTon() || k == pToff()) && std::find(faultFlag_.begin(), faultFlag_.end(), 0) == faultFlag_.end())
    return "the run has no bus fault that uses it (-no_fault, or an events file without a bus_fault)";
  for (PetscInt g = 0; g < numGens(); ++g) {
    if (k == pQ(g)) return "the reactive power of generator " + gens_[g].label + " is " + flow + " (set |V| of a PV or slack bus)";
    if (k == pP(g) && gens_[g].bus == pf_->slack)
      return "the active power of generator " + gens_[g].label + " at the slack bus is " + flow + " (set P of the PV generators)";
  }
  for (PetscInt b = 0; b < numBuses(); ++b) {
    if (k == pVm(b) && b != pf_->slack && pf_->pvOf[b] < 0) return "|V| of PQ bus " + std::to_string(buses_[b]) + " is " + flow;
    if (k == pTh(b) && b != pf_->slack) return "the angle of bus " + std::to_string(buses_[b]) + " (not the slack) is " + flow;
  }
  return "";
}

GuardInfo CaseGrid::guardInfo(PetscInt j) const { return isLoadGuard(j) ? loadGuardInfo(j) : limiterGuardInfo(limiterName(j / 4), j % 4); }

// A tripped generator's limiters no longer act (its states are frozen).
bool CaseGrid::guardActive(PetscInt j, const DiscreteState &d) const {
  if (isLoadGuard(j)) return loadGuardActive(j, d);
  const PetscInt trip = generatorTripFlag(limiters_[j / 4].gen);
  return (trip < 0 || d[trip] != 1) && limiterGuardActive(j % 4, d[1 + j / 4]);
}

// Collective (the engine calls it on every rank with the replicated d).
PetscErrorCode CaseGrid::transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const {
  PetscFunctionBeginUser;
  if (id.kind == EventId::Guard) {
    if (isLoadGuard(id.index)) loadGuardTransition(id.index, d);
    else d[1 + id.index / 4] = limiterFlagAfter(id.index % 4);
    PetscFunctionReturn(0);
  }
  PetscCall(disturbanceTransition(id.index, t, u, d));
  PetscFunctionReturn(0);
}

PetscErrorCode CaseGrid::allGuards(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> *values) const {
  PetscFunctionBeginUser;
  // The exciters' leave-guards read states only (Vref, KA, KE are states), and so do the loads',
  // so p is not needed (the placeholder keeps the governors' guards finite).
  std::vector<PetscScalar> local(numGuards(), 0.0);
  const std::vector<PetscReal> placeholder(numParams(), 1.0);
  values->assign(numGuards(), 0.0);
  PetscCall(guards(t, u, ModeContext{placeholder, d}, local.data()));
  PetscCallMPI(MPI_Allreduce(local.data(), values->data(), (int)numGuards(), MPIU_SCALAR, MPIU_SUM, comm()));
  PetscFunctionReturn(0);
}

PetscErrorCode CaseGrid::releaseReversedExciterLimiters(PetscReal t, Vec u, DiscreteState &d) const {
  PetscFunctionBeginUser;
  // u is the state after the fault switched and the network was re-solved: an exciter limiter
  // whose free rate now points back into the band is released (no crossing would report it). A
  // governor valve's free rate reads differential states only, which do not jump at a fault; a
  // tripped generator's limiters stay as they were (frozen).
  std::vector<PetscScalar> all;
  PetscCall(allGuards(t, u, d, &all));
  for (PetscInt l = 0; l < numLimiters(); ++l) {
    const PetscInt trip = generatorTripFlag(limiters_[l].gen);
    if (!limiters_[l].governor && (trip < 0 || d[trip] != 1)) releaseIfReversed(d[1 + l], all[4 * l + LeaveMax]);  // = the free rate (same value for LeaveMin)
  }
  PetscFunctionReturn(0);
}

FrequencyViolationCost::FrequencyViolationCost(const CaseGrid &grid, PetscInt g, PetscReal fmax, PetscReal fmin, PetscReal sigma, PetscReal eta)
    : LocalKernelCost(grid), name_("H" + grid.genLabel(g)) {
  add(FrequencyViolation{fmax, fmin, sigma, eta, grid.generatorTripFlag(g)}, {{grid.omegaRow(g)}, {}, {}, {}});
}

} // namespace grid
} // namespace power
} // namespace hybridsens
