// MATPOWER case reader (case format version 2): the subset of MATLAB a case file uses —
// "function mpc = name", assignments "mpc.field = value;" of numbers, strings, matrices [...]
// (rows end with ';' or a newline) and cell arrays {...} — with '%' comments.
#include "case_text.hpp"
#include "network_check.hpp"

#include <hybridsens/power/readers.hpp>

#include <cctype>
#include <cmath>
#include <map>

namespace hybridsens {
namespace power {
namespace {

struct Row {
  SourceLine where;
  std::vector<std::string> cells;
};
struct Value {
  SourceLine where;
  std::string scalar;       // a number or a string
  bool isString = false, isMatrix = false;
  std::vector<Row> rows;    // a matrix
};

class MatpowerReader {
public:
  explicit MatpowerReader(const std::string &path) : path_(path), lines_(readLines(path)) {
    for (std::string &l : lines_) l = stripComment(l);
  }

  NetworkCase read() {
    std::map<std::string, Value> fields;
    while (skipBlank()) {
      const SourceLine w = here();
      const std::string word = identifier();
      if (word.empty()) fail(w, std::string("unexpected '") + peek() + "' (expected 'mpc.<field> = ...')");
      if (word == "function" || word == "end" || word == "return") {
        ci_ = lines_[li_].size();  // the rest of the line
        continue;
      }
      if (word.compare(0, 4, "mpc.") != 0 || word.size() == 4)
        fail(w, "unexpected statement '" + word + "' (a MATPOWER case file assigns mpc.<field> = ...)");
      skipSpaces();
      if (peek() != '=') fail(here(), "expected '=' after " + word);
      ++ci_;
      skipSpaces();
      Value v = value(word);
      if (fields.count(word.substr(4))) fail(w, word + " is assigned twice (first at line " + std::to_string(fields[word.substr(4)].where.line) + ")");
      fields[word.substr(4)] = v;
      skipSpaces();
      if (peek() == ';') ++ci_;
    }
    return build(fields);
  }

private:
  std::string path_;
  std::vector<std::string> lines_;
  std::size_t li_ = 0, ci_ = 0;

  static std::string stripComment(const std::string &line) {
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\'') quoted = !quoted;
      else if (line[i] == '%' && !quoted) return line.substr(0, i);
    }
    return line;
  }
  SourceLine here() const { return {path_, (int)std::min(li_, lines_.size() ? lines_.size() - 1 : 0) + 1}; }
  bool atEnd() const { return li_ >= lines_.size(); }
  char peek() const { return atEnd() ? '\0' : ci_ < lines_[li_].size() ? lines_[li_][ci_] : '\n'; }
  void advance() {
    if (atEnd()) return;
    if (ci_ < lines_[li_].size()) ++ci_;
    else ++li_, ci_ = 0;
  }
  void skipSpaces() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t')) ++ci_;
  }
  bool skipBlank() {  // spaces, newlines and stray ';' between statements; false at the end
    while (!atEnd() && (std::isspace((unsigned char)peek()) || peek() == ';')) advance();
    return !atEnd();
  }
  std::string identifier() {
    std::string s;
    while (!atEnd() && (std::isalnum((unsigned char)peek()) || peek() == '_' || peek() == '.')) s += peek(), ++ci_;
    return s;
  }
  std::string quoted() {  // at the opening quote
    const SourceLine w = here();
    ++ci_;
    std::string s;
    while (peek() != '\'') {
      if (peek() == '\n' || atEnd()) fail(w, "unterminated string");
      s += peek(), ++ci_;
    }
    ++ci_;
    return s;
  }
  Value value(const std::string &name) {
    Value v;
    v.where = here();
    const char c = peek();
    if (c == '[') {
      v.isMatrix = true;
      matrix(name, v);
    } else if (c == '{') {
      cell(name);
    } else if (c == '\'') {
      v.isString = true;
      v.scalar = quoted();
    } else {
      while (peek() != ';' && peek() != '\n' && !atEnd()) v.scalar += peek(), ++ci_;
      v.scalar = trim(v.scalar);
      if (v.scalar.empty()) fail(v.where, "missing value after " + name + " =");
    }
    return v;
  }
  void matrix(const std::string &name, Value &v) {
    const SourceLine open = here();
    ++ci_;
    Row row;
    auto endRow = [&]() {
      if (!row.cells.empty()) v.rows.push_back(row);
      row = Row();
    };
    for (;;) {
      if (atEnd()) fail(open, "file ends inside " + name + " (opened here): missing ']'");
      const char c = peek();
      if (c == ']') {
        endRow();
        ++ci_;
        return;
      }
      if (c == ';' || c == '\n') {
        endRow();
        advance();
        continue;
      }
      if (c == ' ' || c == '\t' || c == ',') {
        ++ci_;
        continue;
      }
      if (row.cells.empty()) row.where = here();
      std::string cellText;
      while (!atEnd() && peek() != ' ' && peek() != '\t' && peek() != ',' && peek() != ';' && peek() != '\n' && peek() != ']') cellText += peek(), ++ci_;
      row.cells.push_back(cellText);
    }
  }
  void cell(const std::string &name) {  // skipped: checked for its closing brace only
    const SourceLine open = here();
    ++ci_;
    for (;;) {
      if (atEnd()) fail(open, "file ends inside " + name + " (opened here): missing '}'");
      if (peek() == '}') {
        ++ci_;
        return;
      }
      if (peek() == '\'') quoted();
      else advance();
    }
  }

  // A matrix with columns [lo, hi] and every row alike.
  const Value &table(const std::map<std::string, Value> &f, const std::string &name, std::size_t lo, std::size_t hi) {
    auto it = f.find(name);
    if (it == f.end()) fail({path_, (int)lines_.size()}, "mpc." + name + " is missing (a MATPOWER case needs mpc.baseMVA, mpc.bus, mpc.gen, mpc.branch)");
    const Value &v = it->second;
    if (!v.isMatrix) fail(v.where, "mpc." + name + " must be a matrix [...]");
    if (v.rows.empty()) fail(v.where, "mpc." + name + " has no rows");
    for (const Row &r : v.rows)
      if (r.cells.size() != v.rows[0].cells.size() || r.cells.size() < lo || r.cells.size() > hi)
        fail(r.where, "mpc." + name + " row has " + std::to_string(r.cells.size()) + " columns, expected " + std::to_string(lo) + " to " +
                          std::to_string(hi) + (r.cells.size() != v.rows[0].cells.size() ? " and as many as its first row" : ""));
    return v;
  }
  // MATPOWER allows Inf for unbounded limits; elsewhere a finite number is required.
  static double limit(const std::string &t, const SourceLine &w, const std::string &what) {
    const std::string u = upper(trim(t));
    if (u == "INF" || u == "+INF") return INFINITY;
    if (u == "-INF") return -INFINITY;
    return parseNumber(t, w, what);
  }
  static int busOf(const std::string &t, const SourceLine &w, const std::string &what) {
    const int b = parseInteger(t, w, what);
    if (b < 1) fail(w, what + " = " + t + ": bus numbers are positive integers");
    return b;
  }

  NetworkCase build(const std::map<std::string, Value> &f) {
    NetworkCase net;
    net.file = path_;
    const SourceLine last{path_, (int)lines_.size()};
    auto ver = f.find("version");
    if (ver == f.end()) fail(last, "mpc.version is missing (MATPOWER case format version 2 is read)");
    if (trim(ver->second.scalar) != "2") fail(ver->second.where, "MATPOWER case format version '" + ver->second.scalar + "' is not supported (version 2 is read)", PETSC_ERR_SUP);
    net.format = "MATPOWER v2";
    auto base = f.find("baseMVA");
    if (base == f.end()) fail(last, "mpc.baseMVA is missing");
    net.baseMVA = parseNumber(base->second.scalar, base->second.where, "mpc.baseMVA");
    if (!(net.baseMVA > 0)) fail(base->second.where, "mpc.baseMVA must be positive");

    for (const Row &r : table(f, "bus", 13, 17).rows) {
      const SourceLine &w = r.where;
      const auto &c = r.cells;
      Bus b;
      b.where = w;
      b.number = busOf(c[0], w, "bus_i");
      const int type = parseInteger(c[1], w, "bus type");
      if (type < 1 || type > 4) fail(w, "bus type " + c[1] + ": must be 1 (PQ), 2 (PV), 3 (ref) or 4 (isolated)");
      b.type = (BusType)type;
      b.area = parseInteger(c[6], w, "bus area");
      b.vm = parsePrinted(c[7], w, "Vm");
      if (!(b.vm.value > 0)) fail(w, "Vm = " + c[7] + ": a voltage magnitude must be positive");
      b.va = parsePrinted(c[8], w, "Va");
      b.baseKV = parseNumber(c[9], w, "baseKV");
      b.zone = parseInteger(c[10], w, "zone");
      addBus(net, b);
      Load l;
      l.where = w, l.bus = b.number, l.id = "1";
      l.p = parsePrinted(c[2], w, "Pd"), l.q = parsePrinted(c[3], w, "Qd");
      if (l.p.value != 0 || l.q.value != 0) net.loads.push_back(l);
      FixedShunt s;
      s.where = w, s.bus = b.number, s.id = "1";
      s.g = parsePrinted(c[4], w, "Gs"), s.b = parsePrinted(c[5], w, "Bs");
      if (s.g.value != 0 || s.b.value != 0) net.fixedShunts.push_back(s);
    }
    for (const Row &r : table(f, "gen", 10, 25).rows) {
      const SourceLine &w = r.where;
      const auto &c = r.cells;
      Generator g;
      g.where = w;
      g.bus = busOf(c[0], w, "gen bus");
      g.pg = parsePrinted(c[1], w, "Pg"), g.qg = parsePrinted(c[2], w, "Qg");
      g.qmax = limit(c[3], w, "Qmax"), g.qmin = limit(c[4], w, "Qmin");
      g.vs = parseNumber(c[5], w, "Vg");
      g.mbase = parseNumber(c[6], w, "mBase");
      if (!(g.mbase > 0)) fail(w, "mBase = " + c[6] + ": the machine base must be positive");
      g.inService = parseNumber(c[7], w, "gen status") > 0;
      g.pmax = limit(c[8], w, "Pmax"), g.pmin = limit(c[9], w, "Pmin");
      int n = 1;  // ids "1", "2", ... per bus, as PSS/E numbers machines
      for (const Generator &o : net.generators) n += o.bus == g.bus;
      g.id = std::to_string(n);
      net.generators.push_back(g);
    }
    for (const Row &r : table(f, "branch", 11, 21).rows) {
      const SourceLine &w = r.where;
      const auto &c = r.cells;
      const int from = busOf(c[0], w, "fbus"), to = busOf(c[1], w, "tbus");
      const double rr = parseNumber(c[2], w, "r"), x = parseNumber(c[3], w, "x"), b = parseNumber(c[4], w, "b");
      const double ratio = parseNumber(c[8], w, "ratio"), angle = parseNumber(c[9], w, "angle");
      if (ratio < 0) fail(w, "ratio = " + c[8] + ": must be positive (or 0 for a line)");
      const bool on = parseNumber(c[10], w, "branch status") > 0;
      int n = 1;
      for (const Branch &o : net.branches) n += (o.from == from && o.to == to);
      for (const Transformer &o : net.transformers) n += (o.from == from && o.to == to);
      if (ratio == 0 && angle == 0) {
        Branch br;
        br.where = w, br.from = from, br.to = to, br.circuit = std::to_string(n), br.inService = on;
        br.r = rr, br.x = x, br.b = b;
        net.branches.push_back(br);
      } else {
        Transformer t;
        t.where = w, t.from = from, t.to = to, t.circuit = std::to_string(n), t.inService = on;
        t.r = rr, t.x = x, t.lineCharging = b;
        t.tap = ratio == 0 ? 1.0 : ratio, t.shiftDeg = angle;
        net.transformers.push_back(t);
      }
    }
    checkNetwork(net);
    return net;
  }
};

} // namespace

PetscErrorCode readMatpower(const std::string &path, NetworkCase *out) {
  return producedOrError("readMatpower", path, out, [&] { return MatpowerReader(path).read(); });
}

} // namespace power
} // namespace hybridsens
