// Seeded mutations of the shipped case files (delete, duplicate, swap or truncate lines, change
// characters): every reader either returns data or a clean PETSc error whose message starts with
// the file's path — never a crash, a hang or an exception. Data that read are also run through
// the mismatch computation. Iterations: HS_POWER_FUZZ_ITERATIONS (default 300; the `full` test
// runs 3000), spread over the small files; the 2000-bus files get one in fifty.
#include "power/case_files.hpp"
#include "power/error_capture.hpp"

#include <hybridsens/power/mismatch.hpp>
#include <hybridsens/power/readers.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

using namespace hybridsens::power;

namespace {
const std::string dataDir = HS_GRID_DATA_DIR;

enum class Kind { Raw, Dyr, Matpower };
struct Seed {
  const char *file;
  Kind kind;
  const char *network;  // for DYR: the RAW its machines belong to
  bool large;
};

std::vector<std::string> splitLines(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l)) lines.push_back(l);
  return lines;
}

// 1 to 3 random edits of the lines.
std::string mutate(std::vector<std::string> lines, std::mt19937 &rng) {
  static const char alphabet[] = "0123456789 ,/'\"-+.eEdDQq[];%=\t\n\r\x01\xff";
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int edits = 1 + (int)pick(3);
  for (int e = 0; e < edits && !lines.empty(); ++e) {
    const std::size_t i = pick(lines.size());
    switch (pick(6)) {
    case 0: lines.erase(lines.begin() + i); break;
    case 1: lines.insert(lines.begin() + i, lines[i]); break;
    case 2: std::swap(lines[i], lines[pick(lines.size())]); break;
    case 3: lines.resize(i + 1), lines[i] = lines[i].substr(0, lines[i].empty() ? 0 : pick(lines[i].size() + 1)); break;
    default:
      for (int c = 0, n = 1 + (int)pick(3); c < n; ++c) {
        if (lines[i].empty()) lines[i] = std::string(1, alphabet[pick(sizeof alphabet - 1)]);
        else lines[i][pick(lines[i].size())] = alphabet[pick(sizeof alphabet - 1)];
      }
    }
  }
  std::ostringstream out;
  for (const std::string &l : lines) out << l << '\n';
  return out.str();
}

int iterationsWanted() {
  const char *env = std::getenv("HS_POWER_FUZZ_ITERATIONS");
  return env ? std::max(1, std::atoi(env)) : 300;
}
} // namespace

TEST(PowerFuzz, ReadersReturnDataOrACleanError) {
  const Seed seeds[] = {{"wecc9.raw", Kind::Raw, nullptr, false},         {"ieee14.raw", Kind::Raw, nullptr, false},
                        {"case39.m", Kind::Matpower, nullptr, false},     {"case118.m", Kind::Matpower, nullptr, false},
                        {"wecc9.dyr", Kind::Dyr, "wecc9.raw", false},     {"ieee14.dyr", Kind::Dyr, "ieee14.raw", false},
                        {"ACTIVSg2000.raw", Kind::Raw, nullptr, true},    {"ACTIVSg2000.dyr", Kind::Dyr, "ACTIVSg2000.raw", true}};
  hstest::ScratchDir dir;
  hstest::ErrorCapture errors;
  std::map<std::string, NetworkCase> networks;
  for (const Seed &s : seeds)
    if (s.network && !networks.count(s.network)) ASSERT_EQ(readRaw(dataDir + "/" + s.network, &networks[s.network]), 0) << errors.take();

  std::map<std::string, std::vector<std::string>> original;  // each seed file's lines, read once
  for (const Seed &s : seeds) original[s.file] = splitLines(dataDir + "/" + s.file);

  const int total = iterationsWanted();
  int iterations = 0, accepted = 0, refused = 0;
  std::mt19937 rng(20261125);
  for (int it = 0; it < total; ++it) {
    const Seed &s = seeds[it % 6];
    const bool large = it % 50 == 49;  // every 50th iteration mutates a 2000-bus file instead
    const Seed &use = large ? seeds[6 + (it / 50) % 2] : s;
    const std::string path = dir.write("fuzz" + std::string(use.kind == Kind::Matpower ? ".m" : use.kind == Kind::Raw ? ".raw" : ".dyr"),
                                       mutate(original[use.file], rng));
    PetscErrorCode ierr = 0;
    NetworkCase net;
    DynamicData dyn;
    if (use.kind == Kind::Raw) ierr = readRaw(path, &net);
    else if (use.kind == Kind::Matpower) ierr = readMatpower(path, &net);
    else {
      DyrOptions opt;
      opt.skipUnknownModels = it % 2 == 0;
      opt.network = it % 3 ? &networks[use.network] : nullptr;
      ierr = readDyr(path, opt, &dyn);
    }
    std::string msg = errors.take();
    if (ierr) {
      ++refused;
      ASSERT_EQ(msg.compare(0, path.size() + 1, path + ":"), 0) << "iteration " << it << " (" << use.file << "): error does not name the file: " << msg;
      EXPECT_TRUE(net.buses.empty() && dyn.records.empty()) << "iteration " << it << ": output not left empty on error";
    } else {
      ++accepted;
      if (use.kind != Kind::Dyr) {
        std::vector<BusMismatch> m;
        const PetscErrorCode merr = powerMismatch(net, &m);  // may refuse (e.g. a zero impedance), must not crash
        msg = errors.take();
        if (merr) EXPECT_NE(msg.find(":"), std::string::npos) << msg;
      }
    }
    ++iterations;
  }
  std::printf("fuzz: %d mutated files, %d read, %d refused with file:line\n", iterations, accepted, refused);
  EXPECT_EQ(iterations, total);
  EXPECT_GT(refused, total / 10);  // the mutations do break files (else the test tests nothing)
}
