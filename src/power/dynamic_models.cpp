// Parameter lists of the supported DYR models, in PSS/E's order (names as PSS/E's manuals write
// them, with primes spelled p and double primes pp).
#include <hybridsens/power/dynamic_data.hpp>

#include <map>
#include <stdexcept>

namespace hybridsens {
namespace power {
namespace {
const std::map<std::string, std::vector<std::string>> &modelTable() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"GENCLS", {"H", "D"}},
      {"GENROU", {"Tdop", "Tdopp", "Tqop", "Tqopp", "H", "D", "Xd", "Xq", "Xdp", "Xqp", "Xdpp", "Xl", "S1", "S12"}},
      {"GENSAL", {"Tdop", "Tdopp", "Tqopp", "H", "D", "Xd", "Xq", "Xdp", "Xdpp", "Xl", "S1", "S12"}},
      {"IEEET1", {"TR", "KA", "TA", "VRMAX", "VRMIN", "KE", "TE", "KF", "TF", "SWITCH", "E1", "SE1", "E2", "SE2"}},
      {"EXDC1", {"TR", "KA", "TA", "TB", "TC", "VRMAX", "VRMIN", "KE", "TE", "KF", "TF1", "SWITCH", "E1", "SE1", "E2", "SE2"}},
      {"ESDC1A", {"TR", "KA", "TA", "TB", "TC", "VRMAX", "VRMIN", "KE", "TE", "KF", "TF1", "SWITCH", "E1", "SE1", "E2", "SE2"}},
      {"SEXS", {"TA_TB", "TB", "K", "TE", "EMIN", "EMAX"}},
      {"TGOV1", {"R", "T1", "VMAX", "VMIN", "T2", "T3", "Dt"}},
      {"IEEEG1", {"JBUS", "M", "K", "T1", "T2", "T3", "Uo", "Uc", "PMAX", "PMIN", "T4", "K1", "K2", "T5", "K3", "K4", "T6", "K5", "K6",
                  "T7", "K7", "K8"}},
  };
  return table;
}
} // namespace

const std::vector<std::string> &modelParameterNames(const std::string &model) {
  static const std::vector<std::string> none;
  auto it = modelTable().find(model);
  return it == modelTable().end() ? none : it->second;
}

std::vector<std::string> supportedDynamicModels() {
  std::vector<std::string> names;
  for (const auto &m : modelTable()) names.push_back(m.first);
  return names;
}

double DynamicRecord::param(const std::string &name) const {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return values[k];
  throw std::out_of_range(where.str() + ": model " + model + " at bus " + std::to_string(bus) + " has no parameter '" + name + "'");
}

} // namespace power
} // namespace hybridsens
