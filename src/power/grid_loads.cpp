// ZIP loads of a CaseGrid (-load_model zip; docs/power-grids.md, "Loads").
//
// The power flow solves every load as constant power; after it, the load S0 = P0 + jQ0 of each bus
// at its power-flow voltage V0 is split into fractions (a, b, c) of constant impedance, constant
// current and constant power (PSS/E's CONL conversion: the operating point does not move, so the
// start stays at rest and ∂u0/∂p is that of the power flow):
//   P(V) = P0 (a (V/V0)² + b (V/V0) + c),   Q(V) likewise with the Q fractions.
// A constant-power load draws I = S/V*, which has no network solution when V collapses (a bus
// fault): as PSS/E's PQBRAK (and PSLF's and PowerWorld's thresholds), below pqBreak the
// constant-power part becomes the constant impedance that draws the same power at pqBreak, and
// below iBreak the constant-current part the impedance that draws the same current there:
//   c P0 (V/pqBreak)² for V < pqBreak,   b P0 V²/(V0 iBreak) for V < iBreak.
// (PSS/E's default PQBRAK is 0.7; the I break defaults to 0.5 as in PSLF and PowerWorld.)
// The characteristic stays continuous; its kink is a state event (guards |V|² − break², a flag
// per part), so each step integrates one smooth branch and the sensitivities are the exact
// ones of the discrete solution (a kink inside a step would not be). A jump of the network (a
// fault switched, a line or generator trip) can move |V| across a break without any crossing:
// the switch converts every part to constant impedance (always solvable: the network is then
// linear), then three checks set each part's flag from the re-solved |V| (the network is re-solved
// after each), and the limiter check that follows refuses flags that still disagree with |V|.
// Starting from all converted, a check in practice only restores parts (lighter loads above their
// break raise the voltages): the first restores most, the second those the first left low (ieee39, a
// generator trip: 2 of 42), the third has been a no-op everywhere so far.
#include <hybridsens/power/case_grid.hpp>
#include <hybridsens/vec_entry.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace hybridsens {
namespace power {
namespace grid {
namespace {

// The ZIP load of one bus: reads (Vr, Vi, V0), adds the load current to the bus's balance rows.
// Each part is written as a conductance times |V|² (P = G |V|², Q = B |V|²), so the rows are those
// of grid_kernels.hpp's Load; guards: constant power below / above pqBreak, constant current
// below / above iBreak (|V|² minus the break squared).
struct ZipLoad {
  static constexpr int numReads = 3, numWrites = 2, numParams = 0;
  PetscReal P0, Q0;
  std::array<PetscReal, 3> fp, fq;  // (Z, I, P) fractions of P0 and Q0
  PetscReal pqBreak, iBreak;
  PetscInt flagP, flagI;  // 1: the part is below its break (constant impedance); -1: no such part
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    using std::sqrt;
    const S &Vr = u[0], &Vi = u[1], &V0 = u[2];
    const S m2 = Vr * Vr + Vi * Vi;
    const S z = 1.0 / (V0 * V0);
    S i = 0.0, p = 0.0;  // a missing part adds nothing (and is never evaluated at |V| = 0)
    if (flagI >= 0) i = d[flagI] == 1 ? S(1.0 / (V0 * iBreak)) : S(1.0 / (V0 * sqrt(m2)));
    if (flagP >= 0) p = d[flagP] == 1 ? S(1.0 / (pqBreak * pqBreak)) : S(1.0 / m2);
    const S G = P0 * (fp[0] * z + fp[1] * i + fp[2] * p), B = Q0 * (fq[0] * z + fq[1] * i + fq[2] * p);
    f[0] = -B * Vr + G * Vi;  // imaginary part of the load current
    f[1] = G * Vr + B * Vi;   // real part
  }
  template <class S> S guard(PetscInt k, S, const S *u, const S *, const DiscreteState &) const {
    const PetscReal b = k < 2 ? pqBreak : iBreak;
    return u[0] * u[0] + u[1] * u[1] - b * b;
  }
};

const char *partName(PetscInt k) { return k < 2 ? "constant-power" : "constant-current"; }

} // namespace

PetscErrorCode CaseGrid::planZipLoads(const CaseGridOptions &o) {
  const MPI_Comm world = PETSC_COMM_WORLD;
  PetscFunctionBeginUser;
  PetscCheck(o.loadModel == "z" || o.loadModel == "zip", world, PETSC_ERR_ARG_WRONG, "-load_model %s: must be z (constant impedance) or zip",
             o.loadModel.c_str());
  if (o.loadModel != "zip") PetscFunctionReturn(0);
  for (const auto &[option, f] : {std::make_pair("-load_zip_p", o.zipP), std::make_pair("-load_zip_q", o.zipQ)}) {
    const PetscReal sum = f[0] + f[1] + f[2];
    PetscCheck(f[0] >= 0 && f[1] >= 0 && f[2] >= 0 && std::fabs(sum - 1) <= 1e-12, world, PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g,%g,%g: the fractions of constant impedance, current and power must each be in [0, 1] and sum to 1 (they sum to %.17g)", option,
               (double)f[0], (double)f[1], (double)f[2], (double)sum);
  }
  // After a network switch the modes are read off the constant-impedance solution; a low break
  // makes its impedance so large that this solution is a collapsed one (with 1e-4 pu every load
  // bus near a fault fell to 1e-7 pu, consistently converted): refused.
  for (const auto &[option, v] : {std::make_pair("-load_pq_break", o.pqBreak), std::make_pair("-load_i_break", o.iBreak)})
    PetscCheck(v >= 0.3 && v < 1, world, PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g: the break voltage must be in [0.3, 1) pu (below 0.3 the converted impedance can pull the network to a collapsed solution "
               "after a fault)",
               option, (double)v);
  pqBreak_ = o.pqBreak, iBreak_ = o.iBreak;
  std::map<PetscInt, PetscInt> zipOf;  // bus position → its ZipBus
  for (PetscInt l = 0; l < numLoads(); ++l) {
    const LoadAt &L = loads_[l];
    auto it = zipOf.find(L.bus);
    if (it == zipOf.end()) {
      it = zipOf.emplace(L.bus, numZipBuses()).first;
      zipBuses_.push_back({L.bus, loadRef(l), 0.0, 0.0});
    }
    zipBuses_[it->second].P += L.P, zipBuses_[it->second].Q += L.Q;
  }
  // A bus whose loads sum to zero draws nothing in any mode: no kernel, no flags, no events.
  zipBuses_.erase(std::remove_if(zipBuses_.begin(), zipBuses_.end(), [](const ZipBus &z) { return z.P == 0 && z.Q == 0; }), zipBuses_.end());
  const bool power = o.zipP[2] > 0 || o.zipQ[2] > 0, current = o.zipP[1] > 0 || o.zipQ[1] > 0;
  const PetscInt first = 1 + numLimiters() + numExtraFlags_;
  for (ZipBus &z : zipBuses_) {
    if (power) z.flagP = first + numLoadFlags_++;
    if (current) z.flagI = first + numLoadFlags_++;
  }
  PetscFunctionReturn(0);
}

void CaseGrid::addZipLoads(const CaseGridOptions &o) {
  for (PetscInt k = 0; k < numZipBuses(); ++k) {
    const ZipBus &z = zipBuses_[k];
    const PetscInt g0 = 4 * numLimiters() + 4 * k;
    add(ZipLoad{z.P, z.Q, o.zipP, o.zipQ, pqBreak_, iBreak_, z.flagP, z.flagI},
        {{vr(z.bus), vi(z.bus), z.ref}, {vr(z.bus), vi(z.bus)}, {}, {g0, g0 + 1, g0 + 2, g0 + 3}});
  }
}

GuardInfo CaseGrid::loadGuardInfo(PetscInt j) const {
  const PetscInt k = (j - 4 * numLimiters()) % 4;
  const std::string name = "load" + std::to_string(busNumber(zipBuses_[(j - 4 * numLimiters()) / 4].bus)) + (k < 2 ? "_constP" : "_constI");
  return k % 2 == 0 ? GuardInfo{name + "_below_break", Direction::Falling} : GuardInfo{name + "_above_break", Direction::Rising};
}

bool CaseGrid::loadGuardActive(PetscInt j, const DiscreteState &d) const {
  const PetscInt k = (j - 4 * numLimiters()) % 4;
  const ZipBus &z = zipBuses_[(j - 4 * numLimiters()) / 4];
  const PetscInt flag = k < 2 ? z.flagP : z.flagI;
  return flag >= 0 && d[flag] == (k % 2 == 0 ? 0 : 1);
}

void CaseGrid::loadGuardTransition(PetscInt j, DiscreteState &d) const {
  const PetscInt k = (j - 4 * numLimiters()) % 4;
  const ZipBus &z = zipBuses_[(j - 4 * numLimiters()) / 4];
  d[k < 2 ? z.flagP : z.flagI] = k % 2 == 0 ? 1 : 0;
}

std::vector<std::string> CaseGrid::loadModeChanges(const DiscreteState &before, const DiscreteState &after) const {
  std::vector<std::string> out;
  for (PetscInt k = 0; k < numZipBuses(); ++k)
    for (PetscInt part : {0, 2}) {
      const PetscInt flag = part == 0 ? zipBuses_[k].flagP : zipBuses_[k].flagI;
      if (flag >= 0 && before[flag] != after[flag]) out.push_back(loadGuardInfo(4 * numLimiters() + 4 * k + part + (after[flag] == 1 ? 0 : 1)).name);
    }
  return out;
}

void CaseGrid::convertAllLoads(DiscreteState &d) const {
  for (const ZipBus &z : zipBuses_)
    for (PetscInt flag : {z.flagP, z.flagI})
      if (flag >= 0) d[flag] = 1;
}

// Collective. Each part's flag from the sign of its below-guard |V|² − break².
PetscErrorCode CaseGrid::setLoadFlagsFromVoltages(PetscReal t, Vec u, DiscreteState &d, bool verifyOnly) const {
  PetscFunctionBeginUser;
  if (zipBuses_.empty()) PetscFunctionReturn(0);
  std::vector<PetscScalar> g;
  PetscCall(allGuards(t, u, d, &g));
  for (PetscInt k = 0; k < numZipBuses(); ++k) {
    const ZipBus &z = zipBuses_[k];
    for (PetscInt part : {0, 2}) {
      const PetscInt flag = part == 0 ? z.flagP : z.flagI;
      if (flag < 0) continue;
      const PetscReal brk = part == 0 ? pqBreak_ : iBreak_, below2 = PetscRealPart(g[4 * numLimiters() + 4 * k + part]);  // |V|² − break²
      const PetscInt below = below2 < 0 ? 1 : 0;
      // Three checks settle every case met so far; a disagreement after them is refused, never integrated on the wrong branch.
      PetscCheck(!verifyOnly || d[flag] == below, comm(), PETSC_ERR_NOT_CONVERGED,
                 "ZIP load at bus %d: at t = %.17g after a network change its %s part is %s its break voltage (|V| = %g, break %g) but modelled as %s: "
                 "the load modes did not settle in three checks (move the event, or change -load_pq_break / -load_i_break)",
                 busNumber(z.bus), (double)t, partName(part), below ? "below" : "above", (double)std::sqrt(below2 + brk * brk), (double)brk,
                 d[flag] ? "converted to constant impedance" : "unconverted");
      d[flag] = below;
    }
  }
  PetscFunctionReturn(0);
}

// Collective. The start has every part unconverted: each ZIP bus's power-flow voltage must lie above the breaks.
PetscErrorCode CaseGrid::checkLoadStart(Vec u0) const {
  PetscFunctionBeginUser;
  for (const ZipBus &z : zipBuses_) {
    PetscScalar V0;
    PetscCall(globalEntry(u0, z.ref, &V0));
    for (PetscInt part : {0, 2}) {
      const PetscReal brk = part == 0 ? pqBreak_ : iBreak_;
      if ((part == 0 ? z.flagP : z.flagI) < 0) continue;
      PetscCheck(PetscRealPart(V0) > brk, comm(), PETSC_ERR_ARG_OUTOFRANGE,
                 "ZIP load at bus %d: its power-flow voltage |V| = %g is not above %s %g: its %s part would start converted to constant impedance, "
                 "away from the power flow (lower %s)",
                 busNumber(z.bus), (double)PetscRealPart(V0), part == 0 ? "-load_pq_break" : "-load_i_break", (double)brk, partName(part),
                 part == 0 ? "-load_pq_break" : "-load_i_break");
    }
  }
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
