// The examples' own options, read between PetscOptionsBegin(comm, prefix, ...) and
// PetscOptionsEnd() through the library's OptionReader (hybridsens/option_reader.hpp), so that
// -help lists each one with its default, meaning and range, and a value the model cannot take is
// refused by name: a missing value, text that is not a number or a truth value, NaN or Inf, a
// number outside the parameter's physical domain (a negative inertia, a restitution > 1), an
// integer beyond PetscInt (with 32-bit indices `-areas 4294967297` used to read as 1).
// These are thin adapters that keep the examples' calls short; the checks live in one place.
#pragma once

#include <hybridsens/option_reader.hpp>
#include <petscsys.h>

#include <cstring>
#include <string>
#include <vector>

namespace examples {

using RealDomain = hybridsens::Range;
inline RealDomain anyReal() { return hybridsens::Range::any(); }
inline RealDomain positive() { return hybridsens::Range::positive(); }
inline RealDomain nonNegative() { return hybridsens::Range::nonNegative(); }
inline RealDomain notBelow(PetscReal lo) { return {lo, PETSC_MAX_REAL, false, false}; }
inline RealDomain closedInterval(PetscReal lo, PetscReal hi) { return hybridsens::Range::closed(lo, hi); }
inline RealDomain halfOpenInterval(PetscReal lo, PetscReal hi) { return {lo, hi, false, true}; }  // [lo, hi)
inline RealDomain openInterval(PetscReal lo, PetscReal hi) { return {lo, hi, true, true}; }

// Integers: lo <= n <= hi.
struct IntDomain {
  PetscInt lo = PETSC_MIN_INT, hi = PETSC_MAX_INT;
};
inline IntDomain atLeast(PetscInt lo) { return {lo, PETSC_MAX_INT}; }
inline IntDomain intRange(PetscInt lo, PetscInt hi) { return {lo, hi}; }

// "-" + the block's prefix + the option's name without its dash: how the user spells it.
inline std::string spelled(PetscOptionItems *PetscOptionsObject, const char *name) {
  return hybridsens::OptionReader(PetscOptionsObject).fullName(name);
}

// A real option in the block, within domain; *value holds the default on entry.
inline PetscErrorCode realOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscReal *value,
                                 const RealDomain &domain = anyReal(), PetscBool *set = nullptr) {
  hybridsens::OptionReader r(PetscOptionsObject);
  return r.real(name, help, value, domain, set);
}

// An integer option in the block, within domain; *value holds the default on entry.
inline PetscErrorCode intOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscInt *value,
                                const IntDomain &domain = IntDomain(), PetscBool *set = nullptr) {
  hybridsens::OptionReader r(PetscOptionsObject);
  return r.integer(name, help, value, domain.lo, domain.hi, set);
}

// A string option in the block (a file name, a list): given without a value is an error, not
// an empty name; a value longer than the buffer is an error, not cut.
inline PetscErrorCode stringOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, char *value, size_t len,
                                   PetscBool *set) {
  hybridsens::OptionReader r(PetscOptionsObject);
  std::string text = value;
  PetscBool given;
  PetscFunctionBeginUser;
  PetscCall(r.text(name, help, &text, &given));
  PetscCheck(text.size() < len, PetscOptionsObject->comm, PETSC_ERR_ARG_SIZ, "Option %s: value longer than %zu characters",
             spelled(PetscOptionsObject, name).c_str(), len - 1);
  std::strcpy(value, text.c_str());
  if (set) *set = given;
  PetscFunctionReturn(0);
}

// A boolean option in the block (given without a value: true).
inline PetscErrorCode boolOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscBool *value, PetscBool *set = nullptr) {
  hybridsens::OptionReader r(PetscOptionsObject);
  return r.boolean(name, help, value, set);
}

// An enumerated option in the block, with a PETSc enum list (names, type name, prefix, nullptr).
inline PetscErrorCode enumOption(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, const char *const *list, PetscEnum *value,
                                 PetscBool *set = nullptr) {
  hybridsens::OptionReader r(PetscOptionsObject);
  std::vector<const char *> names;
  PetscFunctionBeginUser;
  for (const char *const *l = list; *l; ++l) names.push_back(*l);
  names.resize(names.size() - 2);  // drop the enum type's name and its prefix
  PetscInt index = (PetscInt)*value;
  PetscCall(r.choice(name, help, names, &index, set));
  *value = (PetscEnum)index;
  PetscFunctionReturn(0);
}

} // namespace examples
