// OptionReader: reads and validates options inside a PetscOptionsBegin/End block, so that
// -help lists them and a bad value is refused with an error that names the option.
//
// PETSc's own PetscOptionsReal/Int/... accept what the library must refuse: "nan" and "inf"
// for reals, a value that wraps on 32-bit integers (4294967297 becomes 1), an option given
// without its value (the default is kept silently, or an enumeration picks its first entry),
// and their parse errors ("Input string abc has no numeric value") do not say which option
// was wrong. Every option of the library and of its examples goes through this class:
//
//   PetscOptionsBegin(comm, prefix, "My example options", "");
//   OptionReader opt(PetscOptionsObject);
//   PetscCall(opt.real("-mass", "Mass of the body", &mass, Range::positive()));
//   PetscCall(opt.integer("-areas", "Number of coupled areas", &areas, 1, 1000));
//   PetscOptionsEnd();
#pragma once

#include <petscsys.h>

#include <string>
#include <vector>

namespace hybridsens {

// The admissible values of a real option (always finite).
struct Range {
  PetscReal lo = -PETSC_MAX_REAL, hi = PETSC_MAX_REAL;
  bool loOpen = false, hiOpen = false;  // exclude the bound itself
  static Range any() { return {}; }
  static Range positive() { return {0, PETSC_MAX_REAL, true, false}; }
  static Range nonNegative() { return {0, PETSC_MAX_REAL, false, false}; }
  static Range closed(PetscReal a, PetscReal b) { return {a, b, false, false}; }
  // (a, b]
  static Range openClosed(PetscReal a, PetscReal b) { return {a, b, true, false}; }
  bool contains(PetscReal v) const;
  std::string describe() const;  // e.g. "(0, 1e-06]"
};

class OptionReader {
public:
  // items: PetscOptionsObject of the enclosing PetscOptionsBegin block (its prefix applies).
  explicit OptionReader(PetscOptionItems *items) : items_(items) {}

  // Each reads `name` (with the block's prefix) if given; `set` (optional) says whether it was.
  // Errors: a missing value (except for booleans, where a bare name means true), a value that
  // does not parse completely, NaN or infinite, outside the range, or an integer that does not
  // fit PetscInt.
  PetscErrorCode real(const char *name, const char *help, PetscReal *value, Range range, PetscBool *set = nullptr);
  PetscErrorCode integer(const char *name, const char *help, PetscInt *value, PetscInt lo, PetscInt hi, PetscBool *set = nullptr);
  PetscErrorCode boolean(const char *name, const char *help, PetscBool *value, PetscBool *set = nullptr);
  // One of `choices`; *index is the default on entry and the choice on return.
  PetscErrorCode choice(const char *name, const char *help, const std::vector<const char *> &choices, PetscInt *index,
                        PetscBool *set = nullptr);
  // A non-empty string (a file name, an expression).
  PetscErrorCode text(const char *name, const char *help, std::string *value, PetscBool *set = nullptr);
  // A positive number of bytes: "1048576", "64k", "512M", "2G" (suffixes are powers of 1024).
  PetscErrorCode byteCount(const char *name, const char *help, PetscReal *bytes, PetscBool *set = nullptr);
  // Comma-separated lists (no fixed buffer, no item limit); texts must be non-empty.
  PetscErrorCode textList(const char *name, const char *help, std::vector<std::string> *values, PetscBool *set = nullptr);
  // Comma-separated lists of any length (no fixed buffer), every entry checked like a scalar.
  PetscErrorCode realList(const char *name, const char *help, std::vector<PetscReal> *values, Range range, PetscBool *set = nullptr);
  PetscErrorCode integerList(const char *name, const char *help, std::vector<PetscInt> *values, PetscInt lo, PetscInt hi,
                             PetscBool *set = nullptr);

  // The option's full name as the user types it, with the block's prefix: "-wecc_hs_adjoint".
  std::string fullName(const char *name) const;
  MPI_Comm comm() const { return items_->comm; }
  // Every name this reader was asked for (to suggest the nearest one for a misspelling).
  const std::vector<std::string> &names() const { return names_; }

private:
  // The raw value of `name`: found, and nullptr text for an option given without a value.
  PetscErrorCode find(const char *name, const char **value, PetscBool *found) const;
  PetscErrorCode parseReal(const char *name, const char *text, Range range, PetscReal *v) const;
  PetscErrorCode parseInteger(const char *name, const char *text, PetscInt lo, PetscInt hi, PetscInt *v) const;
  PetscErrorCode requireValue(const char *name, const char *value, PetscBool found, const char *what) const;

  PetscOptionItems *items_;
  std::vector<std::string> names_;
};

// Every option in the database that starts with `-<prefix>hs_` and was never read: misspelled
// or meant for something else (-hs_adjiont). Collective; an error listing them (with the
// nearest known name) unless the list is empty. Call after every -hs_ option has been read.
PetscErrorCode refuseUnknownLibraryOptions(MPI_Comm comm, const char *prefix, const std::vector<std::string> &known);

// Every option in the database that no one has read and that lies within two edits of an
// option some OptionReader of this program has read (-t_of for -t_off, -fault_buss for
// -fault_bus): a misspelling that would otherwise leave a default silently in place. Options
// of PETSc's own components (-ts_, -ksp_, -pc_, -snes_, -mat_, -log_, ...) are PETSc's business
// (-options_left) and are not judged. Collective; an error listing them with the nearest name.
// Solver::setFromOptions calls it: read the program's own options before that call.
PetscErrorCode refuseMisspelledOptions(MPI_Comm comm);

} // namespace hybridsens
