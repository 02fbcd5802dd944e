// Exponential decay u' = -u with one time event at t = 0.5 that halves u: u(1) = e^{-1}/2.
#include <hybridsens/hybridsens.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>

// CMakeLists.txt asks for C++14 only: hybridsens::hybridsens must raise it to C++17 by itself.
static_assert(__cplusplus >= 201703L, "hybridsens::hybridsens must carry cxx_std_17 to its consumers");

using namespace hybridsens;

struct Decay : HybridModel {
  PetscMPIInt rank = 0;
  Decay() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank); }
  PetscInt localSize() const override { return rank == 0 ? 1 : 0; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecSet(u0, 1.0); }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &, Vec f) const override {
    PetscCall(VecCopy(u, f));
    return VecScale(f, -1.0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &, Mat J) const override {
    if (rank == 0) PetscCall(MatSetValue(J, 0, 0, -1.0, INSERT_VALUES));
    return 0;
  }
  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &) const override { return {"halve", 0.5, {}}; }
  bool hasReset(const EventId &) const override { return true; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec um, const ModeContext &, Vec up) const override {
    PetscCall(VecCopy(um, up));
    return VecScale(up, 0.5);
  }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  double value = 0;
  {
    Decay model;
    Solver solver(model);
    PetscCall(solver.setFromOptions());
    PetscCall(TSSetType(solver.ts(), TSRK));
    PetscCall(TSSetTimeStep(solver.ts(), 1e-3));
    PetscCall(TSSetMaxTime(solver.ts(), 1.0));
    PetscCall(solver.solve());
    PetscCall(VecSum(solver.result().finalState(), &value));
  }
  PetscCall(PetscFinalize());
  const double exact = std::exp(-1.0) / 2;
  std::printf("consumer of hybridsens %s: u(1) = %.15f, exact %.15f\n", hybridsens::version(), value, exact);
  char expected[32];
  std::snprintf(expected, sizeof expected, "%d.%d.%d", HYBRIDSENS_VERSION_MAJOR, HYBRIDSENS_VERSION_MINOR, HYBRIDSENS_VERSION_PATCH);
  if (std::strcmp(hybridsens::version(), expected) != 0) return 1;
  return std::fabs(value - exact) < 1e-10 ? 0 : 1;
}
