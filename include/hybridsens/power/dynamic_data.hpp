// Dynamic records of a PSS/E DYR file: one record per device (machine, exciter, governor) at a
// bus, its model name, machine id and parameters in the order PSS/E defines them, each with its
// name (modelParameterNames()). Supported models: GENCLS, GENROU, GENSAL (machines), IEEET1,
// EXDC1 (and ESDC1A, the same parameter list), SEXS (exciters), TGOV1, IEEEG1 (governors).
#pragma once

#include <hybridsens/power/case_data.hpp>

#include <string>
#include <vector>

namespace hybridsens {
namespace power {

struct DynamicRecord {
  int bus = 0;
  std::string model;  // upper case, as in the file: "GENROU"
  std::string id;     // machine id, e.g. "1"
  std::vector<std::string> names;  // parameter names (modelParameterNames(model))
  std::vector<double> values;      // their values, same order
  SourceLine where;                // where the record starts

  // The parameter called name; throws std::out_of_range naming the record if it has none.
  double param(const std::string &name) const;
};

struct DynamicData {
  std::string file;
  std::vector<DynamicRecord> records;
  // Records of unsupported models that the caller asked to skip, one line each:
  // "file:line: model 'ESST4B' at bus 1048 skipped (unsupported)".
  std::vector<std::string> skipped;
};

// The parameter names of a supported model in file order (empty if the model is not supported).
const std::vector<std::string> &modelParameterNames(const std::string &model);
// All supported model names.
std::vector<std::string> supportedDynamicModels();

} // namespace power
} // namespace hybridsens
