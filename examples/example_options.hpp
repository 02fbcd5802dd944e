// The examples' own options: read between PetscOptionsBegin(comm, prefix, ...) and
// PetscOptionsEnd(), so that -help lists each one with its default and meaning, and refused by
// name when the value is not one the model can take:
//   - a missing value (`-areas` at the end of the line; PETSc's PetscOptionsInt/Real would keep
//     the default and report the option as not set);
//   - text that is not a number or a truth value (PETSc refuses it without naming the option);
//   - NaN or Inf (PetscOptionsReal parses "nan" and "inf" like any number);
//   - a number outside the parameter's physical domain (a negative inertia, a restitution > 1);
//   - an integer beyond PetscInt (PETSc 3.18 converts the text with strtol and then casts to
//     PetscInt, so with 32-bit indices `-areas 4294967297` would silently read as 1).
// Each function is called inside the options block (it takes the block's PetscOptionsObject);
// its error names the option with the block's prefix.
#pragma once

#include <petscsys.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace examples {

// Where a real option may lie: lo < x or lo <= x, and x < hi or x <= hi (infinite bounds:
// no bound on that side). NaN and Inf are never in a domain.
struct RealDomain {
  PetscReal lo = -std::numeric_limits<PetscReal>::infinity(), hi = std::numeric_limits<PetscReal>::infinity();
  bool loIncluded = true, hiIncluded = true;
};
inline RealDomain anyReal() { return {}; }
inline RealDomain positive() { return {0, std::numeric_limits<PetscReal>::infinity(), false, true}; }
inline RealDomain nonNegative() { return {0, std::numeric_limits<PetscReal>::infinity(), true, true}; }
inline RealDomain notBelow(PetscReal lo) { return {lo, std::numeric_limits<PetscReal>::infinity(), true, true}; }
inline RealDomain closedInterval(PetscReal lo, PetscReal hi) { return {lo, hi, true, true}; }
inline RealDomain halfOpenInterval(PetscReal lo, PetscReal hi) { return {lo, hi, true, false}; }  // [lo, hi)
inline RealDomain openInterval(PetscReal lo, PetscReal hi) { return {lo, hi, false, false}; }

// Integers: lo <= n <= hi.
struct IntDomain {
  PetscInt lo = PETSC_MIN_INT, hi = PETSC_MAX_INT;
};
inline IntDomain atLeast(PetscInt lo) { return {lo, PETSC_MAX_INT}; }
inline IntDomain intRange(PetscInt lo, PetscInt hi) { return {lo, hi}; }

// "-" + the block's prefix + the option's name without its dash: how the user spells it.
inline std::string spelled(PetscOptionItems *PetscOptionsObject, const char *name) {
  return std::string("-") + (PetscOptionsObject->prefix ? PetscOptionsObject->prefix : "") + (name + 1);
}

inline std::string describe(const RealDomain &d) {
  const bool hasLo = std::isfinite(d.lo), hasHi = std::isfinite(d.hi);
  char buf[128];
  if (hasLo && hasHi)
    std::snprintf(buf, sizeof buf, "in %c%g, %g%c", d.loIncluded ? '[' : '(', (double)d.lo, (double)d.hi, d.hiIncluded ? ']' : ')');
  else if (hasLo) std::snprintf(buf, sizeof buf, "%s %g", d.loIncluded ? ">=" : ">", (double)d.lo);
  else if (hasHi) std::snprintf(buf, sizeof buf, "%s %g", d.hiIncluded ? "<=" : "<", (double)d.hi);
  else std::snprintf(buf, sizeof buf, "a finite number");
  return buf;
}

// The option's text as given (an empty string when it has no value), and whether it was given.
inline PetscErrorCode rawValue(PetscOptionItems *PetscOptionsObject, const char *name, char *text, size_t len, PetscBool *given) {
  PetscFunctionBeginUser;
  text[0] = 0;
  PetscCall(PetscOptionsGetString(PetscOptionsObject->options, PetscOptionsObject->prefix, name, text, len, given));
  PetscCheck(!*given || text[0], PetscOptionsObject->comm, PETSC_ERR_ARG_WRONG, "Option %s needs a value", spelled(PetscOptionsObject, name).c_str());
  PetscFunctionReturn(0);
}

// PETSc's own error for text that is not a number ("Input string abc has no numeric value")
// does not say which option: parse it first and name the option.
template <class T>
inline PetscErrorCode checkParses(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, const char *help,
                                  PetscErrorCode (*parse)(const char[], T *), const char *what) {
  T parsed;
  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  const PetscErrorCode ierr = parse(text, &parsed);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(!ierr, PetscOptionsObject->comm, PETSC_ERR_ARG_WRONG, "Option %s %s: not %s (%s)", spelled(PetscOptionsObject, name).c_str(), text, what, help);
  PetscFunctionReturn(0);
}

// A real option in the block, within domain; *value holds the default on entry.
inline PetscErrorCode realOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscReal *value,
                                 const RealDomain &domain = anyReal(), PetscBool *set = nullptr) {
  char text[256];
  PetscBool given;
  PetscFunctionBeginUser;
  PetscCall(rawValue(PetscOptionsObject, name, text, sizeof text, &given));
  if (given) PetscCall(checkParses<PetscReal>(PetscOptionsObject, name, text, help, PetscOptionsStringToReal, "a number"));
  PetscCall(PetscOptionsReal(name, help, "", *value, value, set));
  if (!given) PetscFunctionReturn(0);  // the default: the program's own choice
  const std::string opt = spelled(PetscOptionsObject, name);
  PetscCheck(std::isfinite(*value), PetscOptionsObject->comm, PETSC_ERR_ARG_OUTOFRANGE, "Option %s %s: must be a finite number (%s)", opt.c_str(), text, help);
  const bool aboveLo = domain.loIncluded ? *value >= domain.lo : *value > domain.lo;
  const bool belowHi = domain.hiIncluded ? *value <= domain.hi : *value < domain.hi;
  PetscCheck(aboveLo && belowHi, PetscOptionsObject->comm, PETSC_ERR_ARG_OUTOFRANGE, "Option %s %s: must be %s (%s)", opt.c_str(), text,
             describe(domain).c_str(), help);
  PetscFunctionReturn(0);
}

// An integer option in the block, within domain; *value holds the default on entry.
inline PetscErrorCode intOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscInt *value,
                                const IntDomain &domain = IntDomain(), PetscBool *set = nullptr) {
  char text[256];
  PetscBool given;
  PetscFunctionBeginUser;
  PetscCall(rawValue(PetscOptionsObject, name, text, sizeof text, &given));
  if (given) PetscCall(checkParses<PetscInt>(PetscOptionsObject, name, text, help, PetscOptionsStringToInt, "an integer"));
  PetscCall(PetscOptionsInt(name, help, "", *value, value, set));
  if (!given) PetscFunctionReturn(0);
  const std::string opt = spelled(PetscOptionsObject, name);
  // PETSc accepted the text; if it is a plain decimal integer, it must be the value read (not
  // the remainder of a cast). Words PETSc knows (PETSC_DECIDE...) meet the domain check below.
  char *end;
  errno = 0;
  const long long exact = std::strtoll(text, &end, 10);
  if (*end == 0)
    PetscCheck(errno != ERANGE && exact == (long long)*value, PetscOptionsObject->comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Option %s %s: does not fit a PetscInt (%d-bit: at most %" PetscInt_FMT ")", opt.c_str(), text, (int)(8 * sizeof(PetscInt)),
               (PetscInt)PETSC_MAX_INT);
  PetscCheck(*value >= domain.lo && *value <= domain.hi, PetscOptionsObject->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Option %s %s: must be %s%" PetscInt_FMT "%s%s (%s)", opt.c_str(), text, domain.hi == PETSC_MAX_INT ? ">= " : "", domain.lo,
             domain.hi == PETSC_MAX_INT ? "" : "..", domain.hi == PETSC_MAX_INT ? "" : std::to_string((long long)domain.hi).c_str(), help);
  PetscFunctionReturn(0);
}

// A string option in the block (a file name, a list): given without a value is an error, not
// an empty name.
inline PetscErrorCode stringOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, char *value, size_t len,
                                   PetscBool *set) {
  char text[PETSC_MAX_PATH_LEN];
  PetscBool given;
  PetscFunctionBeginUser;
  PetscCall(rawValue(PetscOptionsObject, name, text, sizeof text, &given));
  PetscCall(PetscOptionsString(name, help, "", value, value, len, set));
  PetscFunctionReturn(0);
}

// A boolean option in the block (given without a value: true). PETSc's own error for a word
// that is not a truth value ("Unknown logical value: maybe") does not say which option.
inline PetscErrorCode boolOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscBool *value, PetscBool *set = nullptr) {
  char text[256] = "";
  PetscBool given;
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(PetscOptionsObject->options, PetscOptionsObject->prefix, name, text, sizeof text, &given));
  if (given && text[0]) PetscCall(checkParses<PetscBool>(PetscOptionsObject, name, text, help, PetscOptionsStringToBool, "a truth value (true, false, 1, 0, yes, no)"));
  PetscCall(PetscOptionsBool(name, help, "", *value, value, set));
  PetscFunctionReturn(0);
}

// An enumerated option in the block (PETSc names the option when the word is unknown; a missing
// word is refused here).
inline PetscErrorCode enumOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, const char *const *list, PetscEnum *value,
                                 PetscBool *set = nullptr) {
  char text[256];
  PetscBool given;
  PetscFunctionBeginUser;
  PetscCall(rawValue(PetscOptionsObject, name, text, sizeof text, &given));
  PetscCall(PetscOptionsEnum(name, help, "", list, *value, value, set));
  PetscFunctionReturn(0);
}

} // namespace examples
