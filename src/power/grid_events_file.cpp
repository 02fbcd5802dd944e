// The JSON events file of a grid simulation (grid_events.hpp).
#include <hybridsens/power/grid_events.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <sys/stat.h>

namespace hybridsens {
namespace power {
namespace grid {
namespace {

struct EventsFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The entry's value of key as a finite number (required) or its default (optional).
PetscReal number(const nlohmann::json &e, const std::string &where, const char *key, const PetscReal *fallback = nullptr) {
  if (!e.contains(key)) {
    if (fallback) return *fallback;
    throw EventsFileError(where + ": missing \"" + key + "\"");
  }
  const nlohmann::json &v = e.at(key);
  if (!v.is_number()) throw EventsFileError(where + ": \"" + key + "\" must be a number (got " + v.dump() + ")");
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw EventsFileError(where + ": \"" + key + "\" must be finite");
  return x;
}

void onlyKeys(const nlohmann::json &e, const std::string &where, const std::set<std::string> &allowed) {
  for (auto it = e.begin(); it != e.end(); ++it)
    if (!allowed.count(it.key())) {
      std::string list;
      for (const std::string &k : allowed) list += (list.empty() ? "" : ", ") + k;
      throw EventsFileError(where + ": unknown key \"" + it.key() + "\" (valid: " + list + ")");
    }
}

std::vector<GridEvent> parse(const std::string &path) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) throw EventsFileError(path + ": is a directory, not an events file");
  std::ifstream in(path);
  if (!in) throw EventsFileError(path + ": cannot open the events file for reading");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error &e) {
    throw EventsFileError(path + ": not valid JSON at byte " + std::to_string(e.byte) + " (an events file is {\"events\": [{\"type\": \"bus_fault\", ...}, ...]})");
  }
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (it.key() != "events") throw EventsFileError(path + ": unknown top-level key \"" + it.key() + "\" (the file is {\"events\": [...]})");
    if (!doc.contains("events")) throw EventsFileError(path + ": no \"events\" array");
    doc = doc.at("events");
  }
  if (!doc.is_array()) throw EventsFileError(path + ": \"events\" must be an array of entries");
  std::vector<GridEvent> out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json &e = doc[i];
    std::string where = path + ": entry " + std::to_string(i + 1);
    if (!e.is_object()) throw EventsFileError(where + ": must be an object {\"type\": ..., ...}");
    if (!e.contains("type") || !e.at("type").is_string())
      throw EventsFileError(where + ": needs \"type\": \"bus_fault\", \"setpoint_step\", \"line_trip\" or \"generator_trip\"");
    const std::string type = e.at("type").get<std::string>();
    where += " (" + type + ")";
    GridEvent ev;
    ev.where = where, ev.entry = (PetscInt)i + 1;
    auto busNumber = [&](const char *key) {
      const PetscReal bus = number(e, where, key);
      if (bus != std::floor(bus) || bus < 1 || bus > 1e9) throw EventsFileError(where + ": \"" + key + "\" must be a positive bus number (got " + e.at(key).dump() + ")");
      return (int)bus;
    };
    if (type != "line_trip") ev.bus = busNumber("bus");
    if (type == "bus_fault") {
      onlyKeys(e, where, {"type", "bus", "t_on", "t_off", "r"});
      ev.kind = GridEvent::BusFault;
      const PetscReal rDefault = 1e-4;
      ev.tOn = number(e, where, "t_on"), ev.tOff = number(e, where, "t_off"), ev.r = number(e, where, "r", &rDefault);
      if (!(ev.tOn > 0)) throw EventsFileError(where + ": \"t_on\" must be after the start t = 0");
      if (!(ev.tOn < ev.tOff)) throw EventsFileError(where + ": the fault must be applied before it is cleared: need t_on < t_off");
      if (!(ev.r > 0)) throw EventsFileError(where + ": \"r\" (fault resistance, pu) must be positive");
    } else if (type == "setpoint_step") {
      onlyKeys(e, where, {"type", "bus", "setpoint", "time", "size"});
      ev.kind = GridEvent::SetpointStep;
      if (!e.contains("setpoint") || !e.at("setpoint").is_string() || (e.at("setpoint") != "Vref" && e.at("setpoint") != "Pref"))
        throw EventsFileError(where + ": needs \"setpoint\": \"Vref\" (exciter voltage reference) or \"Pref\" (mechanical power reference)");
      ev.setpoint = e.at("setpoint").get<std::string>();
      ev.time = number(e, where, "time"), ev.size = number(e, where, "size");
      if (!(ev.time > 0)) throw EventsFileError(where + ": \"time\" must be after the start t = 0");
    } else if (type == "line_trip") {
      onlyKeys(e, where, {"type", "from", "to", "circuit", "time"});
      ev.kind = GridEvent::LineTrip;
      ev.from = busNumber("from"), ev.to = busNumber("to"), ev.time = number(e, where, "time");
      if (e.contains("circuit")) {
        if (!e.at("circuit").is_string()) throw EventsFileError(where + ": \"circuit\" must be a string such as \"1\"");
        ev.circuit = e.at("circuit").get<std::string>();
      }
      if (!(ev.time > 0)) throw EventsFileError(where + ": \"time\" must be after the start t = 0");
    } else if (type == "generator_trip") {
      onlyKeys(e, where, {"type", "bus", "id", "time"});
      ev.kind = GridEvent::GeneratorTrip;
      ev.time = number(e, where, "time");
      if (e.contains("id")) {
        if (!e.at("id").is_string()) throw EventsFileError(where + ": \"id\" must be a string such as \"1\" (the generator's machine id)");
        ev.id = e.at("id").get<std::string>();
      }
      if (!(ev.time > 0)) throw EventsFileError(where + ": \"time\" must be after the start t = 0");
    } else {
      throw EventsFileError(where + ": unknown type (supported: bus_fault, setpoint_step, line_trip, generator_trip)");
    }
    out.push_back(ev);
  }
  if (out.empty()) throw EventsFileError(path + ": no events (for a run without a disturbance use -no_fault)");
  return out;
}

} // namespace

PetscErrorCode readGridEvents(MPI_Comm comm, const std::string &path, std::vector<GridEvent> *out) {
  PetscFunctionBeginUser;
  std::string error;
  try {
    *out = parse(path);
  } catch (const std::exception &e) {
    error = e.what();
  }
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_UNEXPECTED, "%s", error.c_str());
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
