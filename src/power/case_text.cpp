#include "case_text.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <sys/stat.h>

namespace hybridsens {
namespace power {

void fail(const SourceLine &where, const std::string &what, PetscErrorCode code) {
  throw CaseFileError(code, where.str() + ": " + what);
}

std::vector<std::string> readLines(const std::string &path) {
  // An ifstream opens a directory without complaint on Linux and then fails to read it: say what it is.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw CaseFileError(PETSC_ERR_FILE_OPEN, path + ": is a directory, not a case file (give the path of the file itself)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseFileError(PETSC_ERR_FILE_OPEN, path + ": cannot open the file for reading");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  if (in.bad()) throw CaseFileError(PETSC_ERR_FILE_READ, path + ": read error");
  return lines;
}

std::string trim(const std::string &s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace((unsigned char)s[b])) ++b;
  while (e > b && std::isspace((unsigned char)s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string upper(std::string s) {
  for (char &c : s) c = (char)std::toupper((unsigned char)c);
  return s;
}

std::vector<Field> splitFields(const std::string &line, const SourceLine &where, bool slashEndsData) {
  std::vector<Field> fields;
  std::size_t i = 0, n = line.size();
  bool expectField = true;  // after a comma (or at the start), a field is due, possibly empty
  while (i < n) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (slashEndsData && c == '/') break;
    if (c == ',') {
      if (expectField) fields.push_back({"", false});  // ",," or a leading comma: an empty field
      expectField = true;
      ++i;
      continue;
    }
    Field f;
    if (c == '\'' || c == '"') {
      const std::size_t close = line.find(c, i + 1);
      if (close == std::string::npos) fail(where, std::string("unterminated quoted string (no closing ") + c + ")");
      f.text = line.substr(i + 1, close - i - 1);
      f.quoted = true;
      i = close + 1;
    } else {
      const std::size_t start = i;
      while (i < n && line[i] != ',' && line[i] != ' ' && line[i] != '\t' && !(slashEndsData && line[i] == '/') && line[i] != '\'' &&
             line[i] != '"')
        ++i;
      f.text = line.substr(start, i - start);
    }
    fields.push_back(f);
    expectField = false;
    // a separator must follow a field: blanks, a comma, a comment or the end of the line
    std::size_t j = i;
    while (j < n && (line[j] == ' ' || line[j] == '\t')) ++j;
    if (j < n && line[j] != ',' && !(slashEndsData && line[j] == '/') && j == i)
      fail(where, "field '" + f.text + "' runs into '" + std::string(1, line[j]) + "' without a separator");
  }
  return fields;
}

double parseNumber(const std::string &token, const SourceLine &where, const std::string &what) {
  const std::string t = trim(token);
  if (t.empty()) fail(where, what + ": empty field (a number is required)");
  errno = 0;
  char *end = nullptr;
  const double x = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0') fail(where, what + ": '" + t + "' is not a number");
  if (!std::isfinite(x) || errno == ERANGE) fail(where, what + ": '" + t + "' is not a finite number in double range");
  return x;
}

double printedHalfUlp(const std::string &token) {
  const std::string t = upper(trim(token));
  const std::size_t e = t.find_first_of("ED");
  const std::string mantissa = t.substr(0, e);
  long exponent = 0;
  if (e != std::string::npos) exponent = std::strtol(t.c_str() + e + 1, nullptr, 10);
  const std::size_t dot = mantissa.find('.');
  long decimals = 0;
  if (dot != std::string::npos)
    for (std::size_t k = dot + 1; k < mantissa.size() && std::isdigit((unsigned char)mantissa[k]); ++k) ++decimals;
  return 0.5 * std::pow(10.0, (double)(exponent - decimals));
}

Printed parsePrinted(const std::string &token, const SourceLine &where, const std::string &what) {
  Printed p;
  p.value = parseNumber(token, where, what);
  p.halfUlp = printedHalfUlp(token);
  return p;
}

int parseInteger(const std::string &token, const SourceLine &where, const std::string &what) {
  const std::string t = trim(token);
  if (t.empty()) fail(where, what + ": empty field (an integer is required)");
  errno = 0;
  char *end = nullptr;
  const long v = std::strtol(t.c_str(), &end, 10);
  if (end == t.c_str() || *end != '\0') fail(where, what + ": '" + t + "' is not an integer");
  if (errno == ERANGE || v > INT_MAX || v < INT_MIN) fail(where, what + ": '" + t + "' is out of range");
  return (int)v;
}

} // namespace power
} // namespace hybridsens
