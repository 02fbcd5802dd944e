#include "admittance_entries.hpp"

#include <hybridsens/power/mismatch.hpp>

#include <cmath>
#include <complex>

namespace hybridsens {
namespace power {
namespace {
using C = std::complex<double>;
constexpr double degree = M_PI / 180.0;

std::vector<BusMismatch> mismatch(const NetworkCase &net) {
  const std::size_t n = net.buses.size();
  const double base = net.baseMVA;
  std::vector<C> V(n), Sspec(n, 0.0);
  std::vector<double> epsV(n), epsTh(n), specRound(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const Bus &b = net.buses[k];
    V[k] = std::polar(b.vm.value, b.va.value * degree);
    epsV[k] = b.vm.halfUlp, epsTh[k] = b.va.halfUlp * degree;
  }
  auto idx = [&](int bus) { return net.busIndex.at(bus); };
  const std::vector<AdmittanceEntry> Y = admittanceEntries(net, "the mismatch computation", false);  // per element, as the bound sums
  for (const SwitchedShunt &s : net.switchedShunts) {
    if (!s.inService) continue;
    const std::size_t i = idx(s.bus);
    // BINIT is a solved output (the shunt's control set it): its rounding changes S by ε |V|²
    specRound[i] += s.binit.halfUlp / base * std::norm(V[i]);
  }
  for (const Load &l : net.loads) {
    if (!l.inService) continue;
    if (l.ip != 0 || l.iq != 0 || l.yp != 0 || l.yq != 0)
      fail(l.where, "load with constant-current or constant-admittance parts (IP, IQ, YP, YQ) is not supported by the mismatch computation", PETSC_ERR_SUP);
    const std::size_t i = idx(l.bus);
    Sspec[i] -= C(l.p.value, l.q.value) / base;  // an input of the power flow: exact as written
  }
  for (const Generator &g : net.generators) {
    if (!g.inService) continue;
    const std::size_t i = idx(g.bus);
    // PG is an input except at the slack, QG an output at PV and slack buses: neither enters a
    // checked mismatch as an output, so both are taken as written
    Sspec[i] += C(g.pg.value, g.qg.value) / base;
  }
  // Currents I = Y V, and the first-order sensitivity of S_i = V_i conj(I_i) to the rounding of
  // the voltages: |∂S_i/∂θ_j| = |V_i||Y_ij||V_j|, |∂S_i/∂|V_j|| = |V_i||Y_ij| (j ≠ i), and at
  // j = i at most |V_i||I_i| + |V_i|²|Y_ii| and |I_i| + |V_i||Y_ii|. Second order: |Y_ij| times
  // the square of the voltage roundings of i and j.
  std::vector<C> I(n, 0.0);
  std::vector<double> diagAbs(n, 0.0), bound(n, 0.0);
  std::vector<C> diag(n, 0.0);
  for (const AdmittanceEntry &e : Y) {
    I[e.i] += e.y * V[e.j];
    if (e.i == e.j) diag[e.i] += e.y;
  }
  for (const AdmittanceEntry &e : Y) {
    if (e.i == e.j) continue;
    const double a = std::abs(e.y), vi = std::abs(V[e.i]), vj = std::abs(V[e.j]);
    const double second = epsV[e.i] + vi * epsTh[e.i] + epsV[e.j] + vj * epsTh[e.j];
    bound[e.i] += vi * a * (vj * epsTh[e.j] + epsV[e.j]) + a * second * second;
  }
  std::vector<BusMismatch> out;
  for (std::size_t k = 0; k < n; ++k) {
    const Bus &b = net.buses[k];
    if (b.type == BusType::Isolated) continue;
    const double vk = std::abs(V[k]), ak = std::abs(diag[k]), ik = std::abs(I[k]);
    const double second = 2 * (epsV[k] + vk * epsTh[k]);
    bound[k] += (vk * ik + vk * vk * ak) * epsTh[k] + (ik + vk * ak) * epsV[k] + ak * second * second + specRound[k];
    const C S = V[k] * std::conj(I[k]) - Sspec[k];
    out.push_back({b.number, b.type, S.real(), S.imag(), bound[k]});
  }
  return out;
}
} // namespace

PetscErrorCode powerMismatch(const NetworkCase &net, std::vector<BusMismatch> *out) {
  return producedOrError("powerMismatch", net.file, out, [&] { return mismatch(net); });
}

} // namespace power
} // namespace hybridsens
