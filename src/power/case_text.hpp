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
