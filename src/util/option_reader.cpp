#include "hybridsens/option_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

namespace hybridsens {

bool Range::contains(PetscReal v) const {
  if (!std::isfinite(v)) return false;
  if (loOpen ? !(v > lo) : !(v >= lo)) return false;
  if (hiOpen ? !(v < hi) : !(v <= hi)) return false;
  return true;
}

static std::string number(PetscReal v) {
  if (v >= PETSC_MAX_REAL) return "inf";
  if (v <= -PETSC_MAX_REAL) return "-inf";
  std::ostringstream os;
  os << v;
  return os.str();
}

// "in [0, 1]", "> 0", ">= 0", "<= 5", "a finite number": what the value must be.
std::string Range::describe() const {
  const bool hasLo = lo > -PETSC_MAX_REAL, hasHi = hi < PETSC_MAX_REAL;
  if (hasLo && hasHi) return "in " + std::string(loOpen ? "(" : "[") + number(lo) + ", " + number(hi) + (hiOpen ? ")" : "]");
  if (hasLo) return (loOpen ? "> " : ">= ") + number(lo);
  if (hasHi) return (hiOpen ? "< " : "<= ") + number(hi);
  return "a finite number";
}

static std::string integerRange(PetscInt lo, PetscInt hi) {
  if (hi == PETSC_MAX_INT) return ">= " + std::to_string((long long)lo);
  return std::to_string((long long)lo) + ".." + std::to_string((long long)hi);
}

std::string OptionReader::fullName(const char *name) const {
  std::string n = name[0] == '-' ? name + 1 : name;
  return "-" + std::string(items_->prefix ? items_->prefix : "") + n;
}

// The full names (prefix included, no leading '-') every OptionReader of this process has
// looked up: what refuseMisspelledOptions compares unread options with.
static std::set<std::string> &namesReadByAnyReader() {
  static std::set<std::string> names;
  return names;
}

PetscErrorCode OptionReader::find(const char *name, const char **value, PetscBool *found) const {
  PetscFunctionBeginUser;
  namesReadByAnyReader().insert(fullName(name).substr(1));
  PetscCall(PetscOptionsFindPair(items_->options, items_->prefix, name, value, found));
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::requireValue(const char *name, const char *value, PetscBool found, const char *what) const {
  PetscFunctionBeginUser;
  PetscCheck(!found || (value && value[0]), items_->comm, PETSC_ERR_USER_INPUT, "Option %s needs a value (%s)", fullName(name).c_str(), what);
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::parseReal(const char *name, const char *text, Range range, PetscReal *v) const {
  char *end = nullptr;
  PetscFunctionBeginUser;
  errno = 0;
  const double x = std::strtod(text, &end);
  PetscCheck(end != text && *end == '\0', items_->comm, PETSC_ERR_USER_INPUT, "Option %s %s: not a number", fullName(name).c_str(), text);
  PetscCheck(std::isfinite(x) && errno != ERANGE, items_->comm, PETSC_ERR_USER_INPUT, "Option %s %s: must be a finite number",
             fullName(name).c_str(), text);
  PetscCheck(range.contains(x), items_->comm, PETSC_ERR_ARG_OUTOFRANGE, "Option %s %s: must be %s", fullName(name).c_str(), text,
             range.describe().c_str());
  *v = (PetscReal)x;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::parseInteger(const char *name, const char *text, PetscInt lo, PetscInt hi, PetscInt *v) const {
  char *end = nullptr;
  PetscFunctionBeginUser;
  errno = 0;
  const long long x = std::strtoll(text, &end, 10);
  PetscCheck(end != text && *end == '\0', items_->comm, PETSC_ERR_USER_INPUT, "Option %s %s: not an integer", fullName(name).c_str(), text);
  PetscCheck(errno != ERANGE && x >= (long long)PETSC_MIN_INT && x <= (long long)PETSC_MAX_INT, items_->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Option %s %s: does not fit a PetscInt (%d-bit: at most %" PetscInt_FMT ")", fullName(name).c_str(), text, (int)(8 * sizeof(PetscInt)),
             (PetscInt)PETSC_MAX_INT);
  PetscCheck(x >= (long long)lo && x <= (long long)hi, items_->comm, PETSC_ERR_ARG_OUTOFRANGE, "Option %s %s: must be %s", fullName(name).c_str(), text,
             integerRange(lo, hi).c_str());
  *v = (PetscInt)x;
  PetscFunctionReturn(0);
}

// The help line shows the admissible values after the text.
static std::string withRange(const char *help, const std::string &range) { return std::string(help) + " " + range; }

PetscErrorCode OptionReader::real(const char *name, const char *help, PetscReal *value, Range range, PetscBool *set) {
  const char *text;
  PetscBool found;
  PetscReal v = *value;
  PetscFunctionBeginUser;
  names_.push_back(name);
  PetscCall(find(name, &text, &found));
  PetscCall(requireValue(name, text, found, ("a number " + range.describe()).c_str()));
  if (found) PetscCall(parseReal(name, text, range, &v));
  // PETSc's registration (for -help and the options GUI); the text is known to parse now.
  PetscCall(PetscOptionsReal_Private(items_, name, withRange(help, "(" + range.describe() + ")").c_str(), "", *value, &v, nullptr));
  *value = v;
  if (set) *set = found;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::integer(const char *name, const char *help, PetscInt *value, PetscInt lo, PetscInt hi, PetscBool *set) {
  const char *text;
  PetscBool found;
  PetscInt v = *value;
  PetscFunctionBeginUser;
  names_.push_back(name);
  const std::string r = integerRange(lo, hi);
  PetscCall(find(name, &text, &found));
  PetscCall(requireValue(name, text, found, ("an integer " + r).c_str()));
  if (found) PetscCall(parseInteger(name, text, lo, hi, &v));
  PetscCall(PetscOptionsInt_Private(items_, name, withRange(help, "(" + r + ")").c_str(), "", *value, &v, nullptr, lo, hi));
  *value = v;
  if (set) *set = found;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::boolean(const char *name, const char *help, PetscBool *value, PetscBool *set) {
  const char *text;
  PetscBool found, v = *value;
  PetscFunctionBeginUser;
  names_.push_back(name);
  PetscCall(find(name, &text, &found));
  if (found && text && text[0]) {
    const std::string t(text);
    const char *valid[] = {"1", "0", "true", "false", "yes", "no", "on", "off", "TRUE", "FALSE", "YES", "NO", "ON", "OFF", "True", "False"};
    PetscCheck(std::find(std::begin(valid), std::end(valid), t) != std::end(valid), items_->comm, PETSC_ERR_USER_INPUT,
               "Option %s %s: not a truth value (true, false, 1, 0, yes, no, on, off)", fullName(name).c_str(), text);
  }
  PetscCall(PetscOptionsBool_Private(items_, name, help, "", *value, &v, nullptr));
  *value = v;
  if (set) *set = found;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::choice(const char *name, const char *help, const std::vector<const char *> &choices, PetscInt *index,
                                    PetscBool *set) {
  const char *text;
  PetscBool found;
  PetscInt v = *index;
  PetscFunctionBeginUser;
  names_.push_back(name);
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) list += (i ? ", " : "") + std::string(choices[i]);
  PetscCall(find(name, &text, &found));
  PetscCall(requireValue(name, text, found, ("one of " + list).c_str()));
  if (found) {
    auto it = std::find_if(choices.begin(), choices.end(), [&](const char *c) { return std::string(c) == text; });
    PetscCheck(it != choices.end(), items_->comm, PETSC_ERR_USER_INPUT, "Option %s %s: not one of %s", fullName(name).c_str(), text,
               list.c_str());
    v = (PetscInt)(it - choices.begin());
  }
  PetscCall(PetscOptionsEList_Private(items_, name, help, "", choices.data(), (PetscInt)choices.size(), choices[*index], &v, nullptr));
  *index = v;
  if (set) *set = found;
  PetscFunctionReturn(0);
}

// Registers a free-text option for -help only; the value is taken from the database directly
// (PETSc's string options copy into a fixed buffer and would cut a long list silently).
static PetscErrorCode registerText(PetscOptionItems *items, const char *name, const char *help, const std::string &current) {
  char ignored[64] = "";
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString_Private(items, name, help, "", current.c_str(), ignored, sizeof(ignored), nullptr));
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::text(const char *name, const char *help, std::string *value, PetscBool *set) {
  const char *t;
  PetscBool found;
  PetscFunctionBeginUser;
  names_.push_back(name);
  PetscCall(find(name, &t, &found));
  PetscCall(requireValue(name, t, found, "a value"));
  PetscCall(registerText(items_, name, help, *value));
  if (found) *value = t;
  if (set) *set = found;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::byteCount(const char *name, const char *help, PetscReal *bytes, PetscBool *set) {
  const char *t;
  PetscBool found;
  PetscFunctionBeginUser;
  names_.push_back(name);
  PetscCall(find(name, &t, &found));
  PetscCall(requireValue(name, t, found, "a number of bytes, e.g. 512M"));
  PetscCall(registerText(items_, name, withRange(help, "(bytes; suffix k, M, G)").c_str(), ""));
  if (found) {
    char *end = nullptr;
    const double v = std::strtod(t, &end);
    double scale = 1;
    if (end != t && *end) {
      const char u = (char)std::toupper((unsigned char)*end);
      scale = u == 'K' ? 1024.0 : u == 'M' ? 1024.0 * 1024 : u == 'G' ? 1024.0 * 1024 * 1024 : 0;
      if (scale != 0) ++end;
    }
    PetscCheck(end != t && *end == '\0' && scale != 0 && std::isfinite(v) && v > 0 && v * scale < 1e300, items_->comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Option %s %s: expected a positive number of bytes, optionally with a suffix k, M or G (e.g. 512M)", fullName(name).c_str(), t);
    *bytes = (PetscReal)(v * scale);
  }
  if (set) *set = found;
  PetscFunctionReturn(0);
}

static std::vector<std::string> splitCommas(const std::string &s) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream is(s);
  while (std::getline(is, item, ',')) out.push_back(item);
  if (!s.empty() && s.back() == ',') out.push_back("");
  return out;
}

PetscErrorCode OptionReader::textList(const char *name, const char *help, std::vector<std::string> *values, PetscBool *set) {
  const char *t;
  PetscBool found;
  PetscFunctionBeginUser;
  names_.push_back(name);
  PetscCall(find(name, &t, &found));
  PetscCall(requireValue(name, t, found, "comma-separated items"));
  PetscCall(registerText(items_, name, help, ""));
  if (found) {
    values->clear();
    for (const std::string &item : splitCommas(t)) {
      PetscCheck(!item.empty(), items_->comm, PETSC_ERR_USER_INPUT, "Option %s %s: an empty item", fullName(name).c_str(), t);
      values->push_back(item);
    }
  }
  if (set) *set = found;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::realList(const char *name, const char *help, std::vector<PetscReal> *values, Range range, PetscBool *set) {
  const char *t;
  PetscBool found;
  PetscFunctionBeginUser;
  names_.push_back(name);
  PetscCall(find(name, &t, &found));
  PetscCall(requireValue(name, t, found, ("comma-separated numbers, each " + range.describe()).c_str()));
  PetscCall(registerText(items_, name, withRange(help, "(each " + range.describe() + ")").c_str(), ""));
  if (found) {
    values->clear();
    for (const std::string &item : splitCommas(t)) {
      PetscReal v;
      PetscCall(parseReal(name, item.c_str(), range, &v));
      values->push_back(v);
    }
  }
  if (set) *set = found;
  PetscFunctionReturn(0);
}

PetscErrorCode OptionReader::integerList(const char *name, const char *help, std::vector<PetscInt> *values, PetscInt lo, PetscInt hi,
                                         PetscBool *set) {
  const char *t;
  PetscBool found;
  PetscFunctionBeginUser;
  names_.push_back(name);
  const std::string r = integerRange(lo, hi);
  PetscCall(find(name, &t, &found));
  PetscCall(requireValue(name, t, found, ("comma-separated integers, each " + r).c_str()));
  PetscCall(registerText(items_, name, withRange(help, "(each " + r + ")").c_str(), ""));
  if (found) {
    values->clear();
    for (const std::string &item : splitCommas(t)) {
      PetscInt v;
      PetscCall(parseInteger(name, item.c_str(), lo, hi, &v));
      values->push_back(v);
    }
  }
  if (set) *set = found;
  PetscFunctionReturn(0);
}

// Levenshtein distance, for "did you mean".
static size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The library's own linear solvers take PETSc's KSP/PC/Mat options under their prefixes
// (-hs_tangent_pc_type ..., read when they are set up, after the Solver's options).
static bool isLibrarySolverOption(const std::string &name) {
  for (const char *solver : {"-hs_consistency_", "-hs_hessian_", "-hs_tangent_"}) {
    const std::string s(solver);
    if (name.compare(0, s.size(), s) != 0) continue;
    // ksp_/pc_/mat_ options, also of inner solvers (-hs_consistency_redundant_pc_type)
    const std::string rest = "_" + name.substr(s.size());
    for (const char *kind : {"_ksp_", "_pc_", "_mat_"})
      if (rest.find(kind) != std::string::npos) return true;
  }
  return false;
}

PetscErrorCode refuseUnknownLibraryOptions(MPI_Comm comm, const char *prefix, const std::vector<std::string> &known) {
  PetscInt n;
  char **names, **values;
  PetscFunctionBeginUser;
  const std::string lead = std::string(prefix ? prefix : "") + "hs_";
  PetscCall(PetscOptionsLeftGet(nullptr, &n, &names, &values));
  std::string unknown;
  for (PetscInt i = 0; i < n; ++i) {
    const std::string name = names[i];
    if (name.compare(0, lead.size(), lead) != 0) continue;
    const std::string bare = "-" + name.substr(lead.size() - 3);  // "-hs_..."
    if (std::find(known.begin(), known.end(), bare) != known.end()) continue;
    if (isLibrarySolverOption(bare)) continue;
    std::string best;
    size_t bestDistance = 4;  // suggest only close names
    for (const std::string &k : known) {
      const size_t d = editDistance(bare, k);
      if (d < bestDistance) bestDistance = d, best = k;
    }
    unknown += "\n  -" + name + (best.empty() ? "" : " (did you mean -" + std::string(prefix ? prefix : "") + best.substr(1) + "?)");
  }
  PetscCall(PetscOptionsLeftRestore(nullptr, &n, &names, &values));
  PetscCheck(unknown.empty(), comm, PETSC_ERR_USER_INPUT, "Unknown hybridsens option(s):%s\nRun with -help for the list.", unknown.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode refuseMisspelledOptions(MPI_Comm comm) {
  static const char *petscComponents[] = {"ts_", "ksp_", "pc_", "snes_", "mat_", "vec_", "log_", "tao_", "dm_", "options_", "malloc",
                                          "info", "help", "on_error", "start_in", "viewer_", "draw_", "fp_trap", "check_", "memory_",
                                          "objects_", "saws", "history", "skip_petscrc", "use_gpu", "device_", "mpi_", "pc"};
  PetscInt n;
  char **names, **values;
  PetscFunctionBeginUser;
  const std::set<std::string> &read = namesReadByAnyReader();
  PetscCall(PetscOptionsLeftGet(nullptr, &n, &names, &values));
  std::string misspelled;
  for (PetscInt i = 0; i < n; ++i) {
    const std::string name = names[i];
    if (read.count(name)) continue;
    bool petsc = name.find("hs_") != std::string::npos;  // -hs_ options: refuseUnknownLibraryOptions
    for (const char *c : petscComponents) petsc = petsc || name.compare(0, std::strlen(c), c) == 0;
    if (petsc) continue;
    std::string best;
    size_t bestDistance = 3;  // two edits at most
    for (const std::string &k : read) {
      const size_t d = editDistance(name, k);
      if (d < bestDistance && d < std::max<size_t>(k.size(), 2) / 2 + 1) bestDistance = d, best = k;
    }
    if (!best.empty()) misspelled += "\n  -" + name + " (did you mean -" + best + "?)";
  }
  PetscCall(PetscOptionsLeftRestore(nullptr, &n, &names, &values));
  PetscCheck(misspelled.empty(), comm, PETSC_ERR_USER_INPUT, "Option(s) not read by this program, close to ones it reads:%s\nRun with -help for the list.",
             misspelled.c_str());
  PetscFunctionReturn(0);
}

} // namespace hybridsens
