// Plain data of a power-system case as read from a PSS/E RAW or MATPOWER file: buses, loads,
// fixed and switched shunts, generators, branches, 2-winding transformers, areas. Values keep the
// file's units (MW, MVAr, kV, degrees) except impedances and transformer ratios, which the readers
// convert to per unit on the system base (the conversion depends on the file's codes, so it is
// done once, where the codes are known). Each record remembers where it was read (file:line).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hybridsens {
namespace power {

struct SourceLine {
  std::string file;
  int line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

// Half a unit of the last printed digit of a number as written in the file ("1.0300" → 5e-5,
// "0.6E-01" → 5e-3): how far the stored value may be from the one the file's author computed.
// The power-mismatch check derives its bound from these.
struct Printed {
  double value = 0, halfUlp = 0;
};

enum class BusType { PQ = 1, PV = 2, Slack = 3, Isolated = 4 };

struct Bus {
  int number = 0;
  std::string name;
  double baseKV = 0;
  BusType type = BusType::PQ;
  int area = 1, zone = 1;
  Printed vm{1.0, 0}, va{0.0, 0};  // solved voltage magnitude (pu) and angle (degrees)
  SourceLine where;
};

// Constant-power load P + jQ (MW, MVAr); constant-current (ip, iq) and constant-admittance
// (yp, yq) parts at 1 pu voltage in MW/MVAr as the RAW file gives them (MATPOWER: zero).
struct Load {
  int bus = 0;
  std::string id;
  bool inService = true;
  Printed p, q;
  double ip = 0, iq = 0, yp = 0, yq = 0;
  SourceLine where;
};

// Shunt admittance G + jB in MW and MVAr consumed/injected at 1 pu voltage (B > 0 capacitive).
struct FixedShunt {
  int bus = 0;
  std::string id;
  bool inService = true;
  Printed g, b;
  SourceLine where;
};

// Switched shunt at its initial (solved) susceptance binit (MVAr at 1 pu); its control data are
// not kept (no power flow control here).
struct SwitchedShunt {
  int bus = 0;
  bool inService = true;
  Printed binit;
  SourceLine where;
};

struct Generator {
  int bus = 0;
  std::string id;
  bool inService = true;
  Printed pg, qg;           // MW, MVAr (RAW: the solved output; MATPOWER: Qg may be unsolved)
  double qmax = 0, qmin = 0, pmax = 0, pmin = 0;
  double vs = 1.0;          // scheduled voltage (pu)
  double mbase = 100;       // machine MVA base (the dynamic models' per-unit base)
  double zr = 0, zx = 1;    // machine source impedance (pu on mbase; RAW only)
  SourceLine where;
};

// Line: pi model, series r + jx and total charging b in pu on the system base; extra shunts at
// the two ends (gi + jbi, gj + jbj, pu; RAW only).
struct Branch {
  int from = 0, to = 0;
  std::string circuit;
  bool inService = true;
  double r = 0, x = 0, b = 0;
  double gi = 0, bi = 0, gj = 0, bj = 0;
  SourceLine where;
};

// 2-winding transformer in the normalized form of the readers: from —[ideal tap·e^{j shift} : 1]—
// series r + jx (pu on the system base, referred to the to-side) — to; magnetizing admittance
// magG + j magB (pu) at the from bus; lineCharging b split half to each end (MATPOWER only:
// its branches with a ratio carry their b as well).
struct Transformer {
  int from = 0, to = 0;
  std::string circuit;
  bool inService = true;
  double r = 0, x = 0;
  double tap = 1.0, shiftDeg = 0.0;
  double magG = 0, magB = 0;
  double lineCharging = 0;
  SourceLine where;
};

struct Area {
  int number = 0;
  std::string name;
};

struct NetworkCase {
  std::string file;           // path it was read from
  std::string format;         // "PSS/E RAW v33", "MATPOWER v2", ...
  double baseMVA = 100, frequency = 60;
  std::vector<Bus> buses;
  std::vector<Load> loads;
  std::vector<FixedShunt> fixedShunts;
  std::vector<SwitchedShunt> switchedShunts;
  std::vector<Generator> generators;
  std::vector<Branch> branches;
  std::vector<Transformer> transformers;
  std::vector<Area> areas;
  std::map<int, std::size_t> busIndex;  // bus number → position in buses

  // The bus with this number, or nullptr.
  const Bus *findBus(int number) const {
    auto it = busIndex.find(number);
    return it == busIndex.end() ? nullptr : &buses[it->second];
  }
};

} // namespace power
} // namespace hybridsens
