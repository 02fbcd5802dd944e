// The admittance matrix as the readers' code uses it: errors thrown as CaseFileError (caught at
// the public API); user names the computation in the message of a refused element. Without
// assemble, one entry per element end in the order of the elements (duplicates not summed).
#pragma once

#include "case_text.hpp"

#include <hybridsens/power/admittance.hpp>

#include <string>

namespace hybridsens {
namespace power {
std::vector<AdmittanceEntry> admittanceEntries(const NetworkCase &net, const std::string &user, bool assemble);
} // namespace power
} // namespace hybridsens
