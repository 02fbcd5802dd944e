// The bus admittance matrix Y = G + jB of a case, as the list of its nonzeros (one entry per
// (i, j), duplicates summed, in order of first appearance): lines (pi model: series r + jx,
// charging b split half to each end, end shunts), 2-winding transformers (tap and phase shift,
// magnetizing admittance at the from bus), fixed shunts and switched shunts at their initial
// susceptance, in per unit on the system base. Buses are indexed by position in net.buses.
// Shared by the power mismatch and the dynamic grid model, so both see the same network.
#pragma once

#include <hybridsens/power/case_data.hpp>

#include <petscsys.h>

#include <complex>
#include <cstddef>
#include <vector>

namespace hybridsens {
namespace power {

struct AdmittanceEntry {
  std::size_t i, j;
  std::complex<double> y;
};

// Refuses (PETSC_ERR_SUP, naming file:line) a zero-impedance branch or transformer (R = X = 0).
PetscErrorCode admittanceMatrix(const NetworkCase &net, std::vector<AdmittanceEntry> *out);

} // namespace power
} // namespace hybridsens
