// The shipped grid cases (data/grids) read completely, and each one's stored voltages solve its
// own power flow: at every PQ bus |ΔP|, |ΔQ| and at every PV bus |ΔP| stay within the bound that
// the printed precision of the file explains (hybridsens/power/mismatch.hpp).
#include "power/case_files.hpp"
#include "power/error_capture.hpp"

#include <hybridsens/power/mismatch.hpp>
#include <hybridsens/power/readers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

using namespace hybridsens::power;

namespace {
const std::string dataDir = HS_GRID_DATA_DIR;

// solverTolerance: the mismatch (pu) to which the program that wrote the case solved its power
// flow, which the printed digits cannot show: 0.1 MVA for PowerWorld Simulator (its default MVA
// convergence tolerance; ACTIVSg2000), 0 for ieee14.raw (MATPOWER's case14, the 1962 CDF values:
// their printed digits alone explain the mismatch), 1e-8 pu for MATPOWER's default
// Newton tolerance (also for ieee39.raw, case39.m's solution copied as printed), 1e-12 pu for
// ieee118.raw (re-solved by scripts/matpower_to_raw.py to a mismatch below 1e-13, printed to
// 10 decimals), 0 for wecc9.raw (written from a Newton solution converged to round-off).
// solved = false: the stored voltages are known not to solve the case (case118.m keeps the 1961
// CDF voltages); the check must then flag it.
struct CaseFile {
  const char *file;
  std::size_t buses, generators, branchesAndTransformers;
  double solverTolerance;
  bool solved;
};

NetworkCase readCase(const std::string &file) {
  NetworkCase net;
  hstest::ErrorCapture errors;
  const std::string path = dataDir + "/" + file;
  const bool matpower = file.size() > 2 && file.compare(file.size() - 2, 2, ".m") == 0;
  const PetscErrorCode ierr = matpower ? readMatpower(path, &net) : readRaw(path, &net);
  EXPECT_EQ(ierr, 0) << errors.take();
  return net;
}

struct MismatchSummary {
  double worstRatio = 0;     // largest |mismatch| / (printed bound + solver tolerance)
  double worst = 0;          // largest |mismatch| (pu)
  int beyondPrinted = 0;     // buses whose mismatch exceeds the printed-precision bound alone
  int beyondBound = 0;       // buses whose mismatch exceeds printed bound + solver tolerance
};

// The mismatch of one case: P and Q at PQ buses, P at PV buses (the slack absorbs the losses).
MismatchSummary mismatchSummary(const NetworkCase &net, double solverTolerance) {
  std::vector<BusMismatch> m;
  hstest::ErrorCapture errors;
  EXPECT_EQ(powerMismatch(net, &m), 0) << errors.take();
  MismatchSummary s;
  int worstBus = 0;
  for (const BusMismatch &b : m) {
    if (b.type == BusType::Slack) continue;
    const double dev = b.type == BusType::PQ ? std::max(std::fabs(b.dP), std::fabs(b.dQ)) : std::fabs(b.dP);
    const double bound = b.bound + solverTolerance;
    s.beyondPrinted += dev > b.bound;
    s.beyondBound += dev > bound;
    if (dev / bound > s.worstRatio) s.worstRatio = dev / bound, worstBus = b.bus;
    s.worst = std::max(s.worst, dev);
  }
  std::printf("%s: %zu buses; largest mismatch %.3g pu; largest mismatch/(printed bound + solver tolerance %.3g) %.3g at bus %d; "
              "%d buses beyond the printed-precision bound alone, %d beyond the full bound\n",
              net.file.c_str(), net.buses.size(), s.worst, solverTolerance, s.worstRatio, worstBus, s.beyondPrinted, s.beyondBound);
  return s;
}
} // namespace

TEST(PowerCases, ShippedNetworksReadAndSolveTheirPowerFlow) {
  const CaseFile cases[] = {{"wecc9.raw", 9, 3, 9, 0.0, true},           {"ieee14.raw", 14, 5, 20, 0.0, true},
                            {"case39.m", 39, 10, 46, 1e-8, true},        {"case118.m", 118, 54, 186, 1e-8, false},
                            {"ieee39.raw", 39, 10, 46, 1e-8, true},      {"ieee118.raw", 118, 54, 186, 1e-12, true},
                            {"ACTIVSg2000.raw", 2000, 544, 3206, 1e-3, true}};
  for (const CaseFile &c : cases) {
    const NetworkCase net = readCase(c.file);
    EXPECT_EQ(net.buses.size(), c.buses) << c.file;
    EXPECT_EQ(net.generators.size(), c.generators) << c.file;
    EXPECT_EQ(net.branches.size() + net.transformers.size(), c.branchesAndTransformers) << c.file;
    const MismatchSummary s = mismatchSummary(net, c.solverTolerance);
    if (c.solved) EXPECT_EQ(s.beyondBound, 0) << c.file << ": the stored voltages do not solve the case's power flow";
    else EXPECT_GT(s.worstRatio, 10.0) << c.file << ": known not to be solved, but the check did not notice";
  }
}

// The 9-bus case reproduces examples/power's data: the step-up branches, loads and dispatch.
TEST(PowerCases, Wecc9MatchesTheExampleData) {
  const NetworkCase net = readCase("wecc9.raw");
  ASSERT_EQ(net.buses.size(), 9u);
  EXPECT_EQ(net.format, "PSS/E RAW v33");
  EXPECT_NEAR(net.buses[0].vm.value, 1.04, 1e-15);
  EXPECT_EQ(net.buses[0].type, BusType::Slack);
  ASSERT_EQ(net.loads.size(), 3u);
  EXPECT_EQ(net.loads[0].bus, 5);
  EXPECT_DOUBLE_EQ(net.loads[0].p.value, 125.0);
  EXPECT_DOUBLE_EQ(net.loads[2].q.value, 35.0);
  ASSERT_EQ(net.branches.size(), 9u);
  EXPECT_DOUBLE_EQ(net.branches[3].x, 0.085);
  EXPECT_DOUBLE_EQ(net.branches[3].b, 0.176);
}

// Perturbing one stored voltage by far more than its printed precision breaks the check: the
// bound is not so loose that it accepts anything.
TEST(PowerCases, MismatchDetectsAPerturbedVoltage) {
  for (const char *file : {"ieee14.raw", "case39.m", "ACTIVSg2000.raw"}) {
    NetworkCase net = readCase(file);
    ASSERT_FALSE(net.buses.empty()) << file;
    std::size_t k = 0;
    while (net.buses[k].type != BusType::PQ) ++k;
    net.buses[k].va.value += 0.5;  // degrees
    std::vector<BusMismatch> m;
    ASSERT_EQ(powerMismatch(net, &m), 0);
    bool flagged = false;
    for (const BusMismatch &b : m)
      if (b.bus == net.buses[k].number) flagged = std::max(std::fabs(b.dP), std::fabs(b.dQ)) > b.bound;
    EXPECT_TRUE(flagged) << file << ": a 0.5 degree error at bus " << net.buses[k].number << " went unnoticed";
  }
}

TEST(PowerCases, DynamicDataRead) {
  hstest::ErrorCapture errors;
  {
    const NetworkCase net = readCase("wecc9.raw");
    DynamicData d;
    DyrOptions opt;
    opt.network = &net;
    ASSERT_EQ(readDyr(dataDir + "/wecc9.dyr", opt, &d), 0) << errors.take();
    ASSERT_EQ(d.records.size(), 9u);
    EXPECT_TRUE(d.skipped.empty());
    EXPECT_EQ(d.records[0].model, "GENROU");
    EXPECT_DOUBLE_EQ(d.records[0].param("H"), 23.64);
    EXPECT_DOUBLE_EQ(d.records[0].param("Xdp"), 0.0608);
    EXPECT_EQ(d.records[1].model, "IEEET1");
    EXPECT_DOUBLE_EQ(d.records[1].param("KA"), 20.0);
    EXPECT_EQ(d.records[2].model, "TGOV1");
    EXPECT_THROW(d.records[0].param("KA"), std::out_of_range);
  }
  {
    const NetworkCase net = readCase("ieee14.raw");
    EXPECT_EQ(net.format, "PSS/E RAW v32");
    DynamicData d;
    DyrOptions opt;
    opt.network = &net;
    ASSERT_EQ(readDyr(dataDir + "/ieee14.dyr", opt, &d), 0) << errors.take();
    std::map<std::string, int> count;
    for (const DynamicRecord &r : d.records) ++count[r.model];
    EXPECT_EQ(count["GENROU"], 2);
    EXPECT_EQ(count["GENSAL"], 3);
    EXPECT_EQ(count["SEXS"], 3);
    EXPECT_EQ(count["TGOV1"], 2);
    EXPECT_TRUE(d.skipped.empty());
  }
  {
    // ACTIVSg2000.dyr has exciters, governors and stabilizers that are not supported: an error
    // naming the first unless the caller asks to skip them.
    const NetworkCase net = readCase("ACTIVSg2000.raw");
    DynamicData d;
    DyrOptions opt;
    opt.network = &net;
    EXPECT_NE(readDyr(dataDir + "/ACTIVSg2000.dyr", opt, &d), 0);
    const std::string msg = errors.take();
    EXPECT_NE(msg.find("ACTIVSg2000.dyr:3: model 'ESST4B' at bus 1048"), std::string::npos) << msg;
    opt.skipUnknownModels = true;
    ASSERT_EQ(readDyr(dataDir + "/ACTIVSg2000.dyr", opt, &d), 0) << errors.take();
    std::map<std::string, int> count;
    for (const DynamicRecord &r : d.records) ++count[r.model];
    EXPECT_EQ(count["GENROU"], 410);
    EXPECT_EQ(count["GENSAL"], 25);
    EXPECT_EQ(count["IEEET1"], 23);
    EXPECT_EQ(count["IEEEG1"], 43);
    EXPECT_EQ(count["ESDC1A"], 12);
    std::printf("ACTIVSg2000.dyr: %zu records read, %zu skipped (unsupported models)\n", d.records.size(), d.skipped.size());
  }
}

// The transformer codes give the same normalized transformer: CW = 1 (pu), CW = 2 (kV), CW = 3
// (pu of NOMV) and CZ = 1 (system base), CZ = 2 (winding MVA base), CZ = 3 (load loss, |Z|).
TEST(PowerCases, TransformerCodesAgree) {
  hstest::ScratchDir dir;
  hstest::ErrorCapture errors;
  const char *variants[] = {
      "1,2,0,'1',1,1,1,0.001,-0.02,2,'T',1,1,1\n0.004,0.1,100\n1.05,0,-3.0\n1.0,0\n0 /\n",
      "1,2,0,'1',2,1,1,0.001,-0.02,2,'T',1,1,1\n0.004,0.1,100\n241.5,0,-3.0\n230.0,0\n0 /\n",
      "1,2,0,'1',3,1,1,0.001,-0.02,2,'T',1,1,1\n0.004,0.1,100\n0.875,276.0,-3.0\n1.0,0\n0 /\n",
      "1,2,0,'1',1,2,1,0.001,-0.02,2,'T',1,1,1\n0.002,0.05,50\n1.05,0,-3.0\n1.0,0\n0 /\n",
      "1,2,0,'1',1,3,1,0.001,-0.02,2,'T',1,1,1\n100000,0.050039984013,50\n1.05,0,-3.0\n1.0,0\n0 /\n",
  };
  int k = 0;
  for (const char *v : variants) {
    NetworkCase net;
    const std::string path = dir.write("t" + std::to_string(k++) + ".raw", hstest::replaceLine(hstest::minimalRaw, 14, v));
    ASSERT_EQ(readRaw(path, &net), 0) << errors.take();
    ASSERT_EQ(net.transformers.size(), 1u);
    const Transformer &t = net.transformers[0];
    EXPECT_NEAR(t.tap, 1.05, 1e-12) << v;
    EXPECT_DOUBLE_EQ(t.shiftDeg, -3.0) << v;
    EXPECT_NEAR(t.r, 0.004, 1e-10) << v;
    EXPECT_NEAR(t.x, 0.1, 1e-9) << v;
    EXPECT_DOUBLE_EQ(t.magG, 0.001) << v;
    EXPECT_DOUBLE_EQ(t.magB, -0.02) << v;
  }
}
