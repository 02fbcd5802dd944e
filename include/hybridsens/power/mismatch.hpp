// AC power mismatch of a case at its stored bus voltages: S_i = V_i conj(Σ_j Y_ij V_j) against the
// scheduled injection (generation − load) at every bus, with Ybus built from lines (pi model,
// charging, end shunts), transformers (tap, phase shift, magnetizing admittance), fixed and
// switched shunts. A solved case gives a mismatch no larger than what the rounding of its printed
// solution explains: bound_i is the first-order propagation of half a unit of the last printed
// digit of the solved values entering bus i — the voltages (|∂S_i/∂θ_j| εθ_j + |∂S_i/∂V_j| εV_j)
// and the switched shunts' BINIT (ε |V_i|²) — plus a second-order term. Loads, fixed shunts and
// generator powers are inputs of the power flow and taken as written. The tolerance to which the
// writing program solved the case is not in the file: the caller adds it.
#pragma once

#include <hybridsens/power/case_data.hpp>

#include <petscsys.h>

#include <vector>

namespace hybridsens {
namespace power {

struct BusMismatch {
  int bus = 0;
  BusType type = BusType::PQ;
  double dP = 0, dQ = 0;  // computed minus scheduled injection (pu on baseMVA)
  double bound = 0;       // what the printed precision explains (pu), for |dP| and |dQ| alike
};

// One entry per bus that is not isolated. Refuses (PETSC_ERR_SUP) what it does not model:
// constant-current or constant-admittance load parts, zero-impedance branches.
PetscErrorCode powerMismatch(const NetworkCase &net, std::vector<BusMismatch> *out);

} // namespace power
} // namespace hybridsens
