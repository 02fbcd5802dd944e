// Text scanning shared by the case-file readers: the error every reader throws (caught at the
// public API and turned into a PETSc error), line loading, field splitting and number parsing
// that name file:line in every message.
#pragma once

#include <hybridsens/power/case_data.hpp>

#include <petscsys.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace hybridsens {
namespace power {

// A malformed or unsupported case file: code is the PETSc error class to report.
struct CaseFileError : std::runtime_error {
  PetscErrorCode code;
  CaseFileError(PetscErrorCode c, const std::string &msg) : std::runtime_error(msg), code(c) {}
};
[[noreturn]] void fail(const SourceLine &where, const std::string &what, PetscErrorCode code = PETSC_ERR_FILE_UNEXPECTED);

// The one boundary between the case-file code (C++ exceptions) and the component's PETSc-style
// API: *out = produce(), or, on any exception, a PETSc error (a CaseFileError keeps its class and
// its file:line message; another exception is named with the file) and *out left empty.
template <class T, class Produce>
PetscErrorCode producedOrError(const char *function, const std::string &file, T *out, Produce &&produce) {
  PetscFunctionBeginUser;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "%s(%s): output is null", function, file.c_str());
  *out = T();
  try {
    *out = produce();
  } catch (const CaseFileError &e) {
    *out = T();
    SETERRQ(PETSC_COMM_SELF, e.code, "%s", e.what());
  } catch (const std::exception &e) {
    *out = T();
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: %s", file.c_str(), e.what());
  }
  PetscFunctionReturn(0);
}

// The lines of a text file (without line ends; a '\r' before '\n' is dropped).
std::vector<std::string> readLines(const std::string &path);

struct Field {
  std::string text;
  bool quoted = false;
};

// Splits the data part of a line into fields separated by commas and/or blanks; quoted strings
// ('...' or "...") are single fields; with slashEndsData, an unquoted '/' ends the data (the rest
// is a comment). An empty field between two commas is kept as an empty text.
std::vector<Field> splitFields(const std::string &line, const SourceLine &where, bool slashEndsData);

// Numbers: the whole token must be a finite number ("what" names the field in the message).
double parseNumber(const std::string &token, const SourceLine &where, const std::string &what);
Printed parsePrinted(const std::string &token, const SourceLine &where, const std::string &what);
int parseInteger(const std::string &token, const SourceLine &where, const std::string &what);
// Half a unit of the last printed digit of a valid number token.
double printedHalfUlp(const std::string &token);

std::string trim(const std::string &s);
std::string upper(std::string s);

} // namespace power
} // namespace hybridsens
