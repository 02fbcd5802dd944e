#include "admittance_entries.hpp"

#include <hybridsens/power/admittance.hpp>

#include <cmath>
#include <map>
#include <utility>

namespace hybridsens {
namespace power {

std::vector<AdmittanceEntry> admittanceEntries(const NetworkCase &net, const std::string &user, bool assemble) {
  using C = std::complex<double>;
  constexpr double degree = M_PI / 180.0;
  const double base = net.baseMVA;
  std::vector<AdmittanceEntry> Y;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> where;  // (i, j) → position in Y
  auto add = [&](std::size_t i, std::size_t j, C y) {
    auto it = assemble ? where.find({i, j}) : where.end();
    if (it != where.end()) Y[it->second].y += y;
    else where[{i, j}] = Y.size(), Y.push_back({i, j, y});
  };
  auto idx = [&](int bus) { return net.busIndex.at(bus); };
  auto series = [&](double r, double x, const SourceLine &w) {
    if (r == 0 && x == 0) fail(w, "zero-impedance branch (R = X = 0) is not supported by " + user, PETSC_ERR_SUP);
    return 1.0 / C(r, x);
  };
  for (const Branch &br : net.branches) {
    if (!br.inService) continue;
    const std::size_t i = idx(br.from), j = idx(br.to);
    const C ys = series(br.r, br.x, br.where);
    add(i, i, ys + C(br.gi, br.bi + br.b / 2));
    add(j, j, ys + C(br.gj, br.bj + br.b / 2));
    add(i, j, -ys);
    add(j, i, -ys);
  }
  for (const Transformer &t : net.transformers) {
    if (!t.inService) continue;
    const std::size_t i = idx(t.from), j = idx(t.to);
    const C ys = series(t.r, t.x, t.where), ych(0, t.lineCharging / 2);
    const C tau = std::polar(t.tap, t.shiftDeg * degree);
    add(i, i, (ys + ych) / std::norm(tau) + C(t.magG, t.magB));
    add(j, j, ys + ych);
    add(i, j, -ys / std::conj(tau));
    add(j, i, -ys / tau);
  }
  for (const FixedShunt &s : net.fixedShunts)
    if (s.inService) add(idx(s.bus), idx(s.bus), C(s.g.value, s.b.value) / base);
  for (const SwitchedShunt &s : net.switchedShunts)
    if (s.inService) add(idx(s.bus), idx(s.bus), C(0, s.binit.value) / base);
  return Y;
}

PetscErrorCode admittanceMatrix(const NetworkCase &net, std::vector<AdmittanceEntry> *out) {
  return producedOrError("admittanceMatrix", net.file, out, [&] { return admittanceEntries(net, "the admittance matrix", true); });
}

} // namespace power
} // namespace hybridsens
