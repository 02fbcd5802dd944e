// PSS/E DYR reader: records "bus 'MODEL' id p1 ... /" of any number of lines; text after the '/'
// that ends a record is a comment.
#include "case_text.hpp"

#include <hybridsens/power/readers.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace hybridsens {
namespace power {
namespace {

struct Token {
  Field field;
  SourceLine where;
};

// Which role a model plays at its machine: one record per role and machine.
const char *roleOf(const std::string &model) {
  if (model == "GENCLS" || model == "GENROU" || model == "GENSAL") return "machine";
  if (model == "TGOV1" || model == "IEEEG1") return "governor";
  return "exciter";
}

// A record whose '/' is missing runs into the next one: a later line of it starts like a record
// (a bus number, then a quoted model name). Say so instead of reporting a field count.
void refuseRunOnRecord(const std::vector<Token> &record) {
  for (std::size_t i = 3; i + 1 < record.size(); ++i)
    if (record[i].where.line != record[i - 1].where.line && !record[i].field.quoted && record[i + 1].field.quoted)
      fail(record[0].where, "the record of model " + upper(trim(record[1].field.text)) + " has no terminating '/' before the record that starts at line " +
                                std::to_string(record[i].where.line) + " (every DYR record ends with '/')");
}

DynamicData readDyrFile(const std::string &path, const DyrOptions &opt) {
  const std::vector<std::string> lines = readLines(path);
  DynamicData out;
  out.file = path;
  std::vector<Token> record;
  std::map<std::tuple<int, std::string, std::string>, SourceLine> roles;  // (bus, id, role) → record
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const SourceLine w{path, (int)i + 1};
    // The line up to its first unquoted '/' is data; that '/' ends the record.
    const std::string &line = lines[i];
    std::size_t slash = std::string::npos;
    char quote = 0;
    for (std::size_t k = 0; k < line.size(); ++k) {
      if (quote) {
        if (line[k] == quote) quote = 0;
      } else if (line[k] == '\'' || line[k] == '"')
        quote = line[k];
      else if (line[k] == '/') {
        slash = k;
        break;
      }
    }
    for (Field &f : splitFields(line.substr(0, slash), w, false)) record.push_back({f, w});
    if (slash == std::string::npos) continue;
    if (record.empty()) fail(w, "'/' without a record before it (a record is: bus 'MODEL' id parameters... /)");
    const SourceLine start = record[0].where;
    if (record.size() < 3) fail(start, "record too short: expected bus 'MODEL' id parameters... /");
    DynamicRecord r;
    r.where = start;
    r.bus = parseInteger(record[0].field.text, record[0].where, "bus number");
    if (!record[1].field.quoted)
      fail(start, "the second field '" + record[1].field.text +
                      "' is not a quoted model name: a DYR record is bus 'MODEL' id parameters... / (is this a RAW file? give the RAW file first, then the DYR file)");
    r.model = upper(trim(record[1].field.text));
    r.id = trim(record[2].field.text);
    if (r.bus < 1) fail(start, "bus number " + record[0].field.text + " of model " + r.model + ": must be positive");
    if (r.model.empty()) fail(record[1].where, "empty model name");
    refuseRunOnRecord(record);
    const std::vector<std::string> &names = modelParameterNames(r.model);
    const std::vector<std::string> known = opt.models.empty() ? supportedDynamicModels() : opt.models;
    if (names.empty() || std::find(known.begin(), known.end(), r.model) == known.end()) {
      if (!opt.skipUnknownModels) {
        std::string list;
        for (const std::string &m : known) list += (list.empty() ? "" : ", ") + m;
        fail(start, "model '" + r.model + "' at bus " + std::to_string(r.bus) + " is not supported" + (opt.user.empty() ? "" : " by " + opt.user) +
                        " (supported: " + list + "); " +
                        (opt.skipOption.empty() ? "or ask the reader to skip unsupported models"
                                                : opt.skipOption + " skips the records of unsupported models (and lists them)"),
             PETSC_ERR_SUP);
      }
      out.skipped.push_back(start.str() + ": model '" + r.model + "' at bus " + std::to_string(r.bus) + " skipped (unsupported)");
      record.clear();
      continue;
    }
    const std::size_t given = record.size() - 3;
    if (given != names.size())
      fail(start, "model " + r.model + " at bus " + std::to_string(r.bus) + ": " + std::to_string(given) + " parameters, expected " +
                      std::to_string(names.size()));
    r.names = names;
    for (std::size_t k = 0; k < names.size(); ++k)
      r.values.push_back(parseNumber(record[3 + k].field.text, record[3 + k].where, r.model + " parameter " + names[k]));
    if (opt.network) {
      if (!opt.network->findBus(r.bus))
        fail(start, "model " + r.model + " refers to bus " + std::to_string(r.bus) + ", which does not exist in " + opt.network->file);
      bool machine = false;
      for (const Generator &g : opt.network->generators) machine = machine || (g.bus == r.bus && g.id == r.id);
      if (!machine)
        fail(start, "model " + r.model + " refers to machine '" + r.id + "' at bus " + std::to_string(r.bus) + ", which is not a generator in " +
                        opt.network->file);
    }
    const auto key = std::make_tuple(r.bus, r.id, std::string(roleOf(r.model)));
    auto seen = roles.find(key);
    if (seen != roles.end())
      fail(start, "machine '" + r.id + "' at bus " + std::to_string(r.bus) + " already has a " + roleOf(r.model) + " model (at " +
                      seen->second.str() + ")");
    roles[key] = start;
    out.records.push_back(r);
    record.clear();
  }
  if (!record.empty()) fail(record[0].where, "file ends inside the record that starts here (missing its terminating '/')");
  return out;
}

} // namespace

PetscErrorCode readDyr(const std::string &path, const DyrOptions &options, DynamicData *out) {
  return producedOrError("readDyr", path, out, [&] { return readDyrFile(path, options); });
}

} // namespace power
} // namespace hybridsens
