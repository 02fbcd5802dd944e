// What the trajectory store keeps: nothing that grows with the steps in a plain simulation,
// the whole trajectory when the adjoint will read it, within -hs_trajectory_max_memory; on
// disk, a directory of the run's own that is gone afterwards (after success and after errors).
#include "small_model.hpp"
#include "test_support.hpp"

#include <dirent.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>

using namespace hybridsens;
using hstest::ErrorCapture;
using hstest::ScopedOptions;
using hstest::TestModel;

namespace {

// ẋ = -k x (two components), no events.
class Decay : public TestModel {
public:
  Decay() : TestModel(2) {
    x0 = {1, 2};
    params = {1.0};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &c) { y[0] = -c.p[0] * x[0], y[1] = -c.p[0] * x[1]; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &c) { a[0] = -c.p[0], a[3] = -c.p[0]; };
    dfdp = [](PetscReal, const PetscScalar *x, PetscScalar *a, const ModeContext &) { a[0] = -x[0], a[1] = -x[1]; };
  }
};

// J = x_0(T).
class Terminal : public CostFunction {
public:
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    const PetscScalar *x;
    PetscMPIInt rank;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCall(VecGetArrayRead(u, &x));
    if (rank == 0) *v = x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *) const override {
    PetscMPIInt rank;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    if (rank == 0) PetscCall(VecSetValue(gu, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    PetscFunctionReturn(0);
  }
};

struct Outcome {
  PetscErrorCode ierr = 0;
  PetscInt steps = 0;
  double heapGrowth = 0;  // bytes in use at the end of the forward run minus before the solve
  std::vector<std::vector<PetscScalar>> gradient;
  std::string error;
};

// Fixed-step RK4 with dt = 1e-4 to T: T / 1e-4 steps.
Outcome run(PetscReal T, bool adjoint, const std::string &options = "") {
  Decay model;
  Terminal J;
  Outcome o;
  ScopedOptions opts("-ts_adapt_type none " + options);
  ErrorCapture capture;
  Solver s(model);
  s.addCost(J);
  s.setAdjoint(adjoint);
  auto configure = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(TSSetType(s.ts(), TSRK));
    PetscCall(TSRKSetType(s.ts(), TSRK4));
    PetscCall(TSSetTimeStep(s.ts(), 1e-4));
    PetscCall(TSSetMaxTime(s.ts(), T));
    PetscCall(TSSetMaxSteps(s.ts(), 10000000));
    PetscCall(s.setFromOptions());
    PetscFunctionReturn(0);
  };
  o.ierr = configure();
  if (o.ierr) return o;
  // Heap in use at the last step of the forward run, when the trajectory is complete (the
  // solve releases it at the end when nothing can read it any more).
  double atLastStep = 0;
  s.setForwardMonitor([&atLastStep](const ForwardSample &) -> PetscErrorCode {
    atLastStep = (double)mallinfo2().uordblks;
    return 0;
  });
  const size_t before = mallinfo2().uordblks;
  o.ierr = s.solve();
  o.heapGrowth = atLastStep - (double)before;
  o.error = capture.message();
  if (!o.ierr) o.steps = s.result().stats.steps, o.gradient = s.result().gradientTable(&CostGradient::adjointP);
  return o;
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

} // namespace

// A plain simulation keeps nothing per step: 20000 more steps, no more heap after the solve.
// The same measurement with the adjoint (which keeps every step) shows it can see the growth.
TEST(TrajectoryStore, PlainSimulationKeepsNothingPerStep) {
  // A first solve of each kind registers PETSc classes, log stages and events once; it is
  // not part of the comparison.
  ASSERT_EQ(run(0.01, false).ierr, 0);
  ASSERT_EQ(run(0.01, true).ierr, 0);
  const Outcome shortRun = run(0.5, false), longRun = run(2.5, false);
  ASSERT_EQ(shortRun.ierr, 0);
  ASSERT_EQ(longRun.ierr, 0);
  const double moreSteps = (double)(longRun.steps - shortRun.steps);
  ASSERT_GE(moreSteps, 19999);
  std::printf("plain simulation: %.3f bytes kept per step\n", (longRun.heapGrowth - shortRun.heapGrowth) / moreSteps);
  EXPECT_LT(std::fabs(longRun.heapGrowth - shortRun.heapGrowth) / moreSteps, 1.0) << "bytes kept per step by a plain simulation";

  const Outcome shortAdj = run(0.5, true), longAdj = run(2.5, true);
  ASSERT_EQ(shortAdj.ierr, 0);
  ASSERT_EQ(longAdj.ierr, 0);
  // RK4: u and 4 stages of 2 values each per step.
  std::printf("with the adjoint: %.3f bytes kept per step\n", (longAdj.heapGrowth - shortAdj.heapGrowth) / moreSteps);
  EXPECT_GE((longAdj.heapGrowth - shortAdj.heapGrowth) / moreSteps, 5 * 2 * sizeof(PetscScalar));
}

// The in-memory trajectory is refused at -hs_trajectory_max_memory with the figures and the way
// out; a plain simulation (which keeps none) is not affected; the same run on disk succeeds
// with the in-memory gradient.
TEST(TrajectoryStore, MaxMemoryIsRefusedWithTheWayOut) {
  const Outcome refused = run(0.5, true, "-hs_trajectory_max_memory 64k");
  EXPECT_EQ(refused.ierr, PETSC_ERR_ARG_OUTOFRANGE);
  EXPECT_NE(refused.error.find("-hs_trajectory_max_memory"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("-hs_trajectory_dir"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("per step"), std::string::npos) << refused.error;
  std::printf("refused: %s\n", refused.error.c_str());
  EXPECT_EQ(run(0.5, false, "-hs_trajectory_max_memory 64k").ierr, 0);
  const Outcome fits = run(0.5, true, "-hs_trajectory_max_memory 1M"), memory = run(0.5, true);
  ASSERT_EQ(fits.ierr, 0);
  ASSERT_EQ(memory.ierr, 0);
  EXPECT_EQ(fits.gradient, memory.gradient);
  char tmpl[] = "/tmp/hs-test-trajectory-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  const Outcome disk = run(0.5, true, std::string("-hs_trajectory_max_memory 64k -hs_trajectory_dir ") + tmpl);
  ASSERT_EQ(disk.ierr, 0) << disk.error;
  EXPECT_EQ(disk.gradient, memory.gradient);
  EXPECT_TRUE(entries(tmpl).empty());
  rmdir(tmpl);
}

TEST(TrajectoryStore, BadMaxMemoryValueIsRefusedByName) {
  for (const char *v : {"-1", "12Q", "zero", "0"}) {
    const Outcome o = run(0.01, true, std::string("-hs_trajectory_max_memory ") + v);
    EXPECT_NE(o.ierr, 0) << v;
  }
}

// On disk: the run's own directory inside -hs_trajectory_dir is removed after success and
// after an error in the reverse sweep's set-up; an unusable directory is an error naming it.
TEST(TrajectoryStore, DiskDirectoryIsTheRunsOwnAndRemoved) {
  char tmpl[] = "/tmp/hs-test-trajectory-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  const std::string dir = tmpl;
  const Outcome ok = run(0.05, true, "-hs_trajectory_dir " + dir);
  ASSERT_EQ(ok.ierr, 0) << ok.error;
  EXPECT_TRUE(entries(dir).empty());
  {
    // A failure after the forward run (the adjoint refuses an unsupported TS type): the
    // solver object is destroyed after the error, and so is the run's directory.
    const Outcome failed = run(0.05, true, "-hs_trajectory_dir " + dir + " -ts_type ssp");
    EXPECT_NE(failed.ierr, 0);
    EXPECT_TRUE(entries(dir).empty());
  }
  const Outcome bad = run(0.05, true, "-hs_trajectory_dir /etc/passwd/x");
  EXPECT_EQ(bad.ierr, PETSC_ERR_FILE_OPEN);
  EXPECT_NE(bad.error.find("-hs_trajectory_dir /etc/passwd/x"), std::string::npos) << bad.error;
  rmdir(tmpl);
}
