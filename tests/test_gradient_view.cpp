// Solver::viewGradients and globalEntry, on the distributed ring of oscillators (tests/ring_models.hpp):
//   * the printed tables carry every parameter name and chosen initial-state column, one row per
//     cost, and the numbers read back equal forwardGradientP/U0 and adjointGradientP/U0 to the
//     printed 10 significant digits; the printed adjoint-vs-forward difference is
//     adjointForwardDifference() and below 1e-12;
//   * initialStateColumns = false drops the u0 columns; without the adjoint only the forward
//     table is printed and adjointForwardDifference() is −1;
//   * a parameterNames() of the wrong length and a non-ASCII viewer are refused;
//   * globalEntry returns the same entry on every rank, equal to the gathered vector.
// Registered at 1 and 3 ranks.
#include "ad_support.hpp"
#include "ring_models.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

using namespace hybridsens;
using namespace hstest;

namespace {

constexpr PetscInt M = 4;
const std::vector<PetscInt> u0Columns = {0, 1, 3, 4, 6, 7};  // 5 + 6 columns: two blocks of the table

// Two different integral costs: Σ x_i² and the parameter-dependent spring energy.
class RingCost : public LocalKernelCost {
public:
  RingCost(const ring::RingLocal &m, std::string name, bool spring) : LocalKernelCost(m), name_(std::move(name)) {
    if (spring) add(ring::SpringEnergy{}, {{2}, {}, {0}, {}});
    else
      for (PetscInt i = 0; i < M; ++i) add(ring::XSquared{}, {{3 * i}, {}, {}, {}});
  }
  std::string name() const override { return name_; }

private:
  std::string name_;
};

// The text an ASCII viewer writes (read back on rank 0; other ranks get an empty string).
std::string viewToString(const Solver &s, bool u0Columns) {
  PetscMPIInt size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string path = "test_gradient_view_np" + std::to_string(size) + ".txt";  // np1 and np3 may run at once
  PetscViewer v;
  EXPECT_EQ(PetscViewerASCIIOpen(PETSC_COMM_WORLD, path.c_str(), &v), 0);
  EXPECT_EQ(s.viewGradients(v, u0Columns), 0);
  EXPECT_EQ(PetscViewerDestroy(&v), 0);
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  std::string text;
  if (!rank) {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
  }
  MPI_Barrier(PETSC_COMM_WORLD);  // nobody reopens the file before rank 0 has read it
  return text;
}

// The rows of the table titled `title`: cost name → numbers, in column order across blocks;
// `header` collects the column names.
std::map<std::string, std::vector<double>> readTable(const std::string &text, const std::string &title, std::vector<std::string> &header) {
  std::map<std::string, std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == title + ":") inside = true;
    else if (inside && (line.empty() || line[0] != ' ')) break;
    else if (inside) {
      std::istringstream words(line);
      std::string first, w;
      words >> first;
      if (first == "cost")
        while (words >> w) header.push_back(w);
      else {
        double x;
        while (words >> x) rows[first].push_back(x);
      }
    }
  }
  return rows;
}

class GradientViewTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(model.setUp(), 0);
    ASSERT_EQ(a.setUp(), 0);
    ASSERT_EQ(b.setUp(), 0);
  }
  void solve(Solver &s, bool adjoint) {
    s.addCost(a);
    s.addCost(b);
    ASSERT_EQ(configureFixedStep(s, TSCN, 0.02, 2.0), 0);
    s.setForwardSensitivities(true);
    s.setAdjoint(adjoint);
    s.setInitialStateSensitivities(u0Columns);
    ASSERT_EQ(s.solve(), 0);
  }
  ring::RingLocal model{M};
  RingCost a{model, "energy", false}, b{model, "another_cost", true};
};

TEST_F(GradientViewTest, TablesReadBackAsTheGradients) {
  Solver s(model);
  solve(s, true);
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  const std::string text = viewToString(s, true);
  if (rank) return;  // the viewer's text lives on rank 0
  const std::vector<std::string> names = ring::names();
  struct Table {
    const char *title;
    std::vector<std::vector<PetscScalar>> gp, gu;
  };
  for (const Table &t : {Table{"forward sensitivities", s.result().gradientTable(&CostGradient::forwardP), s.result().gradientTable(&CostGradient::forwardU0)},
                         Table{"adjoint gradients", s.result().gradientTable(&CostGradient::adjointP), s.result().gradientTable(&CostGradient::adjointU0)}}) {
    std::vector<std::string> header;
    const auto rows = readTable(text, t.title, header);
    std::vector<std::string> expected;
    for (const auto &n : names) expected.push_back("d/d" + n);
    for (PetscInt i : u0Columns) expected.push_back("d/du0[" + std::to_string(i) + "]");
    EXPECT_EQ(header, expected) << t.title;
    ASSERT_EQ(rows.size(), 2u) << text;
    for (size_t k = 0; k < 2; ++k) {
      const auto &row = rows.at(k ? "another_cost" : "energy");
      ASSERT_EQ(row.size(), names.size() + u0Columns.size()) << t.title;
      for (size_t j = 0; j < row.size(); ++j) {
        const double g = j < names.size() ? t.gp[k][j] : t.gu[k][j - names.size()];
        EXPECT_LE(std::abs(row[j] - g), 1e-9 * std::abs(g) + 1e-300) << t.title << " cost " << k << " column " << j;
      }
    }
  }
  const double diff = s.result().adjointForwardDifference();
  EXPECT_GE(diff, 0.0);
  EXPECT_LE(diff, 1e-12);
  const auto at = text.find("adjoint vs forward: max relative difference ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LE(relDiff(std::stod(text.substr(at + 44)), diff), 1e-2);
  EXPECT_NE(text.find("objective: energy = "), std::string::npos);
}

TEST_F(GradientViewTest, ForwardOnlyAndWithoutInitialStateColumns) {
  Solver s(model);
  solve(s, false);
  EXPECT_EQ(s.result().adjointForwardDifference(), -1.0);
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  const std::string text = viewToString(s, false);
  if (rank) return;
  EXPECT_NE(text.find("forward sensitivities:"), std::string::npos);
  EXPECT_EQ(text.find("adjoint gradients:"), std::string::npos);
  EXPECT_EQ(text.find("u0["), std::string::npos);
  EXPECT_EQ(text.find("adjoint vs forward"), std::string::npos);
  std::vector<std::string> header;
  EXPECT_EQ(readTable(text, "forward sensitivities", header).at("energy").size(), ring::names().size());
}

TEST_F(GradientViewTest, NonAsciiViewerIsRefused) {
  Solver s(model);
  solve(s, false);
  char buffer[256];
  PetscViewer v;
  ASSERT_EQ(PetscViewerStringOpen(PETSC_COMM_WORLD, buffer, sizeof(buffer), &v), 0);
  {
    ErrorCapture capture;
    EXPECT_NE(s.viewGradients(v), 0);
    EXPECT_NE(capture.message().find("ASCII viewers only"), std::string::npos) << capture.message();
  }
  PetscViewerDestroy(&v);
}

// A model whose parameterNames() has the wrong length: refused, not printed under shifted headings.
class MisnamedRing : public ring::RingLocal {
public:
  using ring::RingLocal::RingLocal;
  std::vector<std::string> parameterNames() const override { return {"k", "zeta"}; }
};

TEST(GradientView, WrongNumberOfParameterNamesIsRefused) {
  MisnamedRing model{M};
  RingCost a{model, "energy", false};
  ASSERT_EQ(model.setUp(), 0);
  ASSERT_EQ(a.setUp(), 0);
  Solver s(model);
  s.addCost(a);
  ASSERT_EQ(configureFixedStep(s, TSCN, 0.02, 0.5), 0);
  s.setForwardSensitivities(true);
  ASSERT_EQ(s.solve(), 0);
  ErrorCapture capture;
  EXPECT_NE(s.viewGradients(), 0);
  EXPECT_NE(capture.message().find("2 names for 5 parameters"), std::string::npos) << capture.message();
}

TEST_F(GradientViewTest, VecEntryIsTheGatheredEntryOnEveryRank) {
  Solver s(model);
  solve(s, false);
  const std::vector<double> all = gatherAll(s.result().finalState());
  for (PetscInt i = 0; i < (PetscInt)all.size(); ++i) {
    PetscScalar x = -1;
    ASSERT_EQ(globalEntry(s.result().finalState(), i, &x), 0);
    EXPECT_EQ((double)x, all[i]) << "entry " << i;
  }
  ErrorCapture capture;
  PetscScalar x;
  EXPECT_NE(globalEntry(s.result().finalState(), (PetscInt)all.size(), &x), 0);
  EXPECT_NE(capture.message().find("outside"), std::string::npos) << capture.message();
}

} // namespace
