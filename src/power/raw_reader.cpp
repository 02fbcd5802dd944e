// PSS/E RAW reader (revisions 32 and 33). Field positions follow the PSS/E Program Operation
// Manual's data formats of those revisions; each record is checked for its field count, its
// numbers and its bus references.
#include "case_text.hpp"
#include "network_check.hpp"

#include <hybridsens/power/readers.hpp>

#include <cmath>

namespace hybridsens {
namespace power {
namespace {

enum class Section {
  Bus, Load, FixedShunt, Generator, Branch, Transformer, Area, TwoTerminalDC, VSCDC, ImpedanceCorrection, MultiTerminalDC,
  MultiSectionLine, Zone, InterAreaTransfer, Owner, FACTS, SwitchedShunt, GNE, InductionMachine
};

const char *sectionName(Section s) {
  static const char *names[] = {"BUS", "LOAD", "FIXED SHUNT", "GENERATOR", "BRANCH", "TRANSFORMER", "AREA", "TWO-TERMINAL DC",
                                "VOLTAGE SOURCE CONVERTER", "IMPEDANCE CORRECTION", "MULTI-TERMINAL DC", "MULTI-SECTION LINE", "ZONE",
                                "INTER-AREA TRANSFER", "OWNER", "FACTS DEVICE", "SWITCHED SHUNT", "GNE DEVICE", "INDUCTION MACHINE"};
  return names[(int)s];
}

class RawReader {
public:
  explicit RawReader(const std::string &path) : path_(path), lines_(readLines(path)) {}

  NetworkCase read() {
    NetworkCase net;
    net.file = path_;
    readHeader(net);
    std::vector<Section> order = {Section::Bus, Section::Load, Section::FixedShunt, Section::Generator, Section::Branch,
                                  Section::Transformer, Section::Area, Section::TwoTerminalDC, Section::VSCDC,
                                  Section::ImpedanceCorrection, Section::MultiTerminalDC, Section::MultiSectionLine, Section::Zone,
                                  Section::InterAreaTransfer, Section::Owner, Section::FACTS, Section::SwitchedShunt, Section::GNE};
    if (revision_ == 33) order.push_back(Section::InductionMachine);
    for (Section s : order) {
      if (endSeen_) break;
      readSection(s, net);
    }
    // After the last section: only a 'Q' line, blank lines or nothing.
    for (; next_ < lines_.size(); ++next_) {
      const std::string t = trim(stripComment(lines_[next_]));
      if (t.empty() || upper(t) == "Q") continue;
      fail(at(next_), "unexpected data after the last section (" + std::string(sectionName(order.back())) + "): '" + t + "'");
    }
    checkNetwork(net);
    return net;
  }

private:
  std::string path_;
  std::vector<std::string> lines_;
  std::size_t next_ = 0;  // next line to read (0-based)
  int revision_ = 0;
  bool endSeen_ = false;  // a 'Q' line ended the data early

  SourceLine at(std::size_t i) const { return {path_, (int)i + 1}; }
  static std::string stripComment(const std::string &line) {
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (quote) {
        if (line[i] == quote) quote = 0;
      } else if (line[i] == '\'' || line[i] == '"')
        quote = line[i];
      else if (line[i] == '/')
        return line.substr(0, i);
    }
    return line;
  }

  // The files a RAW reader is most often handed by mistake, recognized by their first line: a
  // MATPOWER case ("function mpc = case39" or "mpc.baseMVA = ...") and a DYR file (bus 'MODEL' id ... /).
  void refuseOtherFormat(const SourceLine &w) const {
    const std::string first = trim(lines_[0]);
    if (first.rfind("function", 0) == 0 || first.rfind("mpc", 0) == 0 || first.rfind("%", 0) == 0)
      fail(w, "this is a MATPOWER case file (it starts with '" + first.substr(0, 24) + "'), not a PSS/E RAW file: a RAW file starts with IC, SBASE, REV, ...",
           PETSC_ERR_FILE_UNEXPECTED);
    const std::vector<Field> f = splitFields(lines_[0], w, false);
    if (f.size() >= 2 && f[1].quoted)
      fail(w, "this looks like a PSS/E DYR file (bus 'MODEL' id parameters /), not a RAW file: give the RAW network file first, then the DYR file",
           PETSC_ERR_FILE_UNEXPECTED);
  }

  void readHeader(NetworkCase &net) {
    if (!lines_.empty()) refuseOtherFormat(at(0));
    if (lines_.size() < 3) fail(at(lines_.empty() ? 0 : lines_.size() - 1), "file ends inside the 3-line case header (a RAW file starts with IC, SBASE, REV, ... and two title lines)");
    const SourceLine w = at(0);
    const std::vector<Field> f = splitFields(lines_[0], w, true);
    if (f.size() < 3) fail(w, "case identification needs at least IC, SBASE, REV (found " + std::to_string(f.size()) + " fields); revisions 32 and 33 are read");
    const int ic = parseInteger(f[0].text, w, "IC (change code)");
    if (ic != 0) fail(w, "IC = " + std::to_string(ic) + ": only a base case (IC = 0) is read, not a change case", PETSC_ERR_SUP);
    net.baseMVA = parseNumber(f[1].text, w, "SBASE");
    if (!(net.baseMVA > 0)) fail(w, "SBASE must be positive");
    revision_ = parseInteger(f[2].text, w, "REV (RAW revision)");
    if (revision_ != 32 && revision_ != 33)
      fail(w, "RAW revision " + std::to_string(revision_) + " is not supported (supported: 32, 33)", PETSC_ERR_SUP);
    if (f.size() > 5 && !f[5].text.empty()) {
      net.frequency = parseNumber(f[5].text, w, "BASFRQ");
      if (!(net.frequency > 0)) fail(w, "BASFRQ must be positive");
    }
    net.format = "PSS/E RAW v" + std::to_string(revision_);
    next_ = 3;
  }

  // The fields of the next data line, or false at the section terminator ("0") or at 'Q'.
  bool nextRecordLine(Section s, std::size_t sectionStart, std::vector<Field> &fields, SourceLine &where) {
    if (next_ >= lines_.size())
      fail(at(lines_.size() ? lines_.size() - 1 : 0), std::string("file ends inside the ") + sectionName(s) + " section (started at line " +
                                                           std::to_string(sectionStart + 1) + "): missing its '0 /' terminator");
    where = at(next_);
    const std::string &line = lines_[next_++];
    const std::string data = trim(stripComment(line));
    if (upper(data) == "Q") {
      endSeen_ = true;
      return false;
    }
    fields = splitFields(line, where, true);
    if (fields.empty()) fail(where, std::string("empty line inside the ") + sectionName(s) + " section (a record or '0 /' is expected)");
    if (fields.size() == 1 && !fields[0].quoted && trim(fields[0].text) == "0") return false;
    return true;
  }
  // A continuation line of a multi-line record.
  std::vector<Field> continuation(Section s, const SourceLine &start, SourceLine &where) {
    if (next_ >= lines_.size())
      fail(start, std::string("file ends inside a ") + sectionName(s) + " record that starts here");
    where = at(next_);
    return splitFields(lines_[next_++], where, true);
  }
  static void count(const std::vector<Field> &f, std::size_t lo, std::size_t hi, const SourceLine &where, const std::string &what) {
    if (f.size() < lo || f.size() > hi)
      fail(where, what + ": " + std::to_string(f.size()) + " fields, expected " +
                      (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)));
  }
  static bool status(const Field &f, const SourceLine &w, const std::string &what) {
    const int s = parseInteger(f.text, w, what);
    if (s != 0 && s != 1) fail(w, what + " = " + std::to_string(s) + ": must be 0 (out of service) or 1 (in service)");
    return s == 1;
  }
  static int busNumber(const Field &f, const SourceLine &w, const std::string &what) {
    const int b = std::abs(parseInteger(f.text, w, what));  // a negative number marks the metered end
    if (b < 1 || b > 999997) fail(w, what + " = " + f.text + ": bus numbers are 1 to 999997");
    return b;
  }

  void readSection(Section s, NetworkCase &net) {
    const std::size_t start = next_;
    std::vector<Field> f;
    SourceLine w;
    while (nextRecordLine(s, start, f, w)) {
      switch (s) {
      case Section::Bus: readBus(f, w, net); break;
      case Section::Load: readLoad(f, w, net); break;
      case Section::FixedShunt: readFixedShunt(f, w, net); break;
      case Section::Generator: readGenerator(f, w, net); break;
      case Section::Branch: readBranch(f, w, net); break;
      case Section::Transformer: readTransformer(f, w, net); break;
      case Section::Area: readArea(f, w, net); break;
      case Section::SwitchedShunt: readSwitchedShunt(f, w, net); break;
      case Section::Zone:
      case Section::InterAreaTransfer:
      case Section::Owner:
      case Section::MultiSectionLine: break;  // no electrical meaning: skipped
      default:
        fail(w, std::string("the ") + sectionName(s) + " section is not empty: such devices are not supported (the " + sectionName(s) +
                    " section must be empty)",
             PETSC_ERR_SUP);
      }
    }
  }

  void readBus(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 9, revision_ == 32 ? 9 : 13, w, "bus record");
    Bus b;
    b.where = w;
    b.number = busNumber(f[0], w, "bus number I");
    b.name = trim(f[1].text);
    b.baseKV = parseNumber(f[2].text, w, "BASKV");
    if (b.baseKV < 0) fail(w, "BASKV must not be negative");
    const int ide = parseInteger(f[3].text, w, "bus type IDE");
    if (ide < 1 || ide > 4) fail(w, "bus type IDE = " + std::to_string(ide) + ": must be 1 (PQ), 2 (PV), 3 (swing) or 4 (isolated)");
    b.type = (BusType)ide;
    b.area = parseInteger(f[4].text, w, "AREA");
    b.zone = parseInteger(f[5].text, w, "ZONE");
    b.vm = parsePrinted(f[7].text, w, "VM");
    if (!(b.vm.value > 0)) fail(w, "VM = " + f[7].text + ": a voltage magnitude must be positive");
    b.va = parsePrinted(f[8].text, w, "VA");
    addBus(net, b);
  }
  void readLoad(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 11, revision_ == 32 ? 13 : 14, w, "load record");
    Load l;
    l.where = w;
    l.bus = busNumber(f[0], w, "load bus I");
    l.id = trim(f[1].text);
    l.inService = status(f[2], w, "load STATUS");
    l.p = parsePrinted(f[5].text, w, "PL");
    l.q = parsePrinted(f[6].text, w, "QL");
    l.ip = parseNumber(f[7].text, w, "IP");
    l.iq = parseNumber(f[8].text, w, "IQ");
    l.yp = parseNumber(f[9].text, w, "YP");
    l.yq = parseNumber(f[10].text, w, "YQ");
    net.loads.push_back(l);
  }
  void readFixedShunt(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 5, 5, w, "fixed shunt record");
    FixedShunt s;
    s.where = w;
    s.bus = busNumber(f[0], w, "fixed shunt bus I");
    s.id = trim(f[1].text);
    s.inService = status(f[2], w, "fixed shunt STATUS");
    s.g = parsePrinted(f[3].text, w, "GL");
    s.b = parsePrinted(f[4].text, w, "BL");
    net.fixedShunts.push_back(s);
  }
  void readGenerator(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 15, 28, w, "generator record");
    Generator g;
    g.where = w;
    g.bus = busNumber(f[0], w, "generator bus I");
    g.id = trim(f[1].text);
    g.pg = parsePrinted(f[2].text, w, "PG");
    g.qg = parsePrinted(f[3].text, w, "QG");
    g.qmax = parseNumber(f[4].text, w, "QT");
    g.qmin = parseNumber(f[5].text, w, "QB");
    g.vs = parseNumber(f[6].text, w, "VS");
    g.mbase = parseNumber(f[8].text, w, "MBASE");
    if (!(g.mbase > 0)) fail(w, "MBASE = " + f[8].text + ": the machine base must be positive");
    g.zr = parseNumber(f[9].text, w, "ZR");
    g.zx = parseNumber(f[10].text, w, "ZX");
    g.inService = status(f[14], w, "generator STAT");
    if (f.size() > 17) {
      g.pmax = parseNumber(f[16].text, w, "PT");
      g.pmin = parseNumber(f[17].text, w, "PB");
    }
    net.generators.push_back(g);
  }
  void readBranch(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 14, 24, w, "branch record");
    Branch b;
    b.where = w;
    b.from = busNumber(f[0], w, "branch bus I");
    b.to = busNumber(f[1], w, "branch bus J");
    b.circuit = trim(f[2].text);
    b.r = parseNumber(f[3].text, w, "R");
    b.x = parseNumber(f[4].text, w, "X");
    b.b = parseNumber(f[5].text, w, "B");
    b.gi = parseNumber(f[9].text, w, "GI");
    b.bi = parseNumber(f[10].text, w, "BI");
    b.gj = parseNumber(f[11].text, w, "GJ");
    b.bj = parseNumber(f[12].text, w, "BJ");
    b.inService = status(f[13], w, "branch ST");
    net.branches.push_back(b);
  }
  // Four lines: (I, J, K, CKT, CW, CZ, CM, MAG1, MAG2, NMETR, NAME, STAT, ...), (R1-2, X1-2,
  // SBASE1-2), (WINDV1, NOMV1, ANG1, ...), (WINDV2, NOMV2). Normalized to tap:1 with the series
  // impedance on the to side: tap = t1 (the winding-2 ratio t2 must be 1).
  void readTransformer(const std::vector<Field> &f1, const SourceLine &w1, NetworkCase &net) {
    count(f1, 12, revision_ == 32 ? 20 : 21, w1, "transformer record line 1");
    Transformer t;
    t.where = w1;
    t.from = busNumber(f1[0], w1, "transformer bus I");
    t.to = busNumber(f1[1], w1, "transformer bus J");
    const int k = std::abs(parseInteger(f1[2].text, w1, "transformer bus K"));
    if (k != 0) fail(w1, "three-winding transformer (K = " + std::to_string(k) + "): not supported, only two-winding transformers (K = 0)", PETSC_ERR_SUP);
    t.circuit = trim(f1[3].text);
    const int cw = parseInteger(f1[4].text, w1, "CW"), cz = parseInteger(f1[5].text, w1, "CZ"), cm = parseInteger(f1[6].text, w1, "CM");
    if (cw < 1 || cw > 3) fail(w1, "CW = " + std::to_string(cw) + ": must be 1, 2 or 3");
    if (cz < 1 || cz > 3) fail(w1, "CZ = " + std::to_string(cz) + ": must be 1, 2 or 3");
    if (cm < 1 || cm > 2) fail(w1, "CM = " + std::to_string(cm) + ": must be 1 or 2");
    const double mag1 = parseNumber(f1[7].text, w1, "MAG1"), mag2 = parseNumber(f1[8].text, w1, "MAG2");
    t.inService = status(f1[11], w1, "transformer STAT");
    SourceLine w2, w3, w4;
    const std::vector<Field> f2 = continuation(Section::Transformer, w1, w2);
    count(f2, 2, 3, w2, "transformer record line 2 (R1-2, X1-2, SBASE1-2)");
    double r = parseNumber(f2[0].text, w2, "R1-2"), x = parseNumber(f2[1].text, w2, "X1-2");
    const double sbase12 = f2.size() > 2 ? parseNumber(f2[2].text, w2, "SBASE1-2") : net.baseMVA;
    const std::vector<Field> f3 = continuation(Section::Transformer, w1, w3);
    count(f3, 3, 17, w3, "transformer record line 3 (WINDV1, NOMV1, ANG1, ...)");
    const double windv1 = parseNumber(f3[0].text, w3, "WINDV1"), nomv1 = parseNumber(f3[1].text, w3, "NOMV1");
    t.shiftDeg = parseNumber(f3[2].text, w3, "ANG1");
    if (f3.size() > 13 && parseInteger(f3[13].text, w3, "TAB1") != 0)
      fail(w3, "TAB1 = " + f3[13].text + ": impedance correction tables are not supported (TAB1 must be 0)", PETSC_ERR_SUP);
    const std::vector<Field> f4 = continuation(Section::Transformer, w1, w4);
    count(f4, 1, 2, w4, "transformer record line 4 (WINDV2, NOMV2)");
    const double windv2 = parseNumber(f4[0].text, w4, "WINDV2"), nomv2 = f4.size() > 1 ? parseNumber(f4[1].text, w4, "NOMV2") : 0.0;
    // Bus base voltages are needed for CW 2 and 3: the buses come before the transformers.
    const Bus *bi = net.findBus(t.from), *bj = net.findBus(t.to);
    if (!bi) fail(w1, "transformer bus I = " + std::to_string(t.from) + " does not exist (no such bus in the BUS section)");
    if (!bj) fail(w1, "transformer bus J = " + std::to_string(t.to) + " does not exist (no such bus in the BUS section)");
    const double kv1 = nomv1 != 0 ? nomv1 : bi->baseKV, kv2 = nomv2 != 0 ? nomv2 : bj->baseKV;
    double t1 = windv1, t2 = windv2;
    if (cw == 2 || cw == 3) {
      if (!(bi->baseKV > 0) || !(bj->baseKV > 0)) fail(w1, "CW = " + std::to_string(cw) + " needs positive base voltages (BASKV) at both buses");
      if (cw == 2) t1 = windv1 / bi->baseKV, t2 = windv2 / bj->baseKV;
      else t1 = windv1 * kv1 / bi->baseKV, t2 = windv2 * kv2 / bj->baseKV;
    }
    if (!(t1 > 0) || !(t2 > 0)) fail(w3, "winding ratios must be positive (WINDV1 = " + f3[0].text + ", WINDV2 = " + f4[0].text + ")");
    // An off-nominal winding-2 ratio needs the impedance referred through it; programs differ in
    // how (Z t2², Z min(t1, t2)², ...), so it is refused rather than guessed.
    if (std::fabs(t2 - 1) > 1e-9)
      fail(w4, "WINDV2 = " + f4[0].text + ": an off-nominal winding-2 ratio is not supported (it must be 1 pu of the bus base voltage)", PETSC_ERR_SUP);
    if (cz != 1) {
      // On the winding MVA base; a winding voltage base other than the bus base would need a
      // further conversion that no shipped case uses: refused rather than guessed.
      if (!(sbase12 > 0)) fail(w2, "SBASE1-2 must be positive with CZ = " + std::to_string(cz));
      if (nomv1 != 0 && std::fabs(nomv1 - bi->baseKV) > 1e-9 * bi->baseKV)
        fail(w3, "CZ = " + std::to_string(cz) + " with NOMV1 different from the bus base voltage is not supported", PETSC_ERR_SUP);
      if (cz == 3) {  // R1-2: load loss in W; X1-2: |Z| in pu on SBASE1-2
        const double rpu = r / (1e6 * sbase12);
        if (x < rpu) fail(w2, "CZ = 3: |Z| = X1-2 must not be below the resistance implied by the load loss R1-2");
        x = std::sqrt(x * x - rpu * rpu), r = rpu;
      }
      r *= net.baseMVA / sbase12, x *= net.baseMVA / sbase12;
    }
    if (cm == 2 && (mag1 != 0 || mag2 != 0))
      fail(w1, "CM = 2 (no-load loss and exciting current) with nonzero MAG1/MAG2 is not supported; give MAG1, MAG2 in pu (CM = 1)", PETSC_ERR_SUP);
    if (cm == 1) t.magG = mag1, t.magB = mag2;
    t.tap = t1;
    t.r = r, t.x = x;
    net.transformers.push_back(t);
  }
  void readArea(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 1, 5, w, "area record");
    Area a;
    a.number = parseInteger(f[0].text, w, "area number I");
    if (f.size() > 4) a.name = trim(f[4].text);
    net.areas.push_back(a);
  }
  void readSwitchedShunt(const std::vector<Field> &f, const SourceLine &w, NetworkCase &net) {
    count(f, 10, 26, w, "switched shunt record");
    SwitchedShunt s;
    s.where = w;
    s.bus = busNumber(f[0], w, "switched shunt bus I");
    s.inService = status(f[3], w, "switched shunt STAT");
    s.binit = parsePrinted(f[9].text, w, "BINIT");
    net.switchedShunts.push_back(s);
  }
};

} // namespace

PetscErrorCode readRaw(const std::string &path, NetworkCase *out) {
  return producedOrError("readRaw", path, out, [&] { return RawReader(path).read(); });
}

} // namespace power
} // namespace hybridsens
