// A DAE whose algebraic block g_y is singular (index > 1) is refused with an error that says so
// and names the callback, the discrete state and the time — not with PETSc's "Matrix is missing
// diagonal entry 1" (the LU of the consistency matrix when rhsJacobian stores no g_y diagonal)
// or a bare factorization failure.
//
//   x' = −x + y;  mode 0: 0 = y − x/2 (index 1);  mode 1: 0 = x − 1/2 (g_y = 0: index 2).
//   guard x − 0.8 falling in mode 0 → mode 1, at t = 2 ln(1.25) ≈ 0.446 (x' = −x/2 in mode 0).
#include "small_model.hpp"
#include "test_support.hpp"

#include <regex>

using namespace hybridsens;
using hstest::TestModel;

namespace {

class SingularInModeOne : public TestModel {
public:
  // storeZero: rhsJacobian stores g_y = 0 explicitly; else it stores no entry there at all.
  SingularInModeOne(PetscInt initialMode, bool storeZero) : TestModel(2), initialMode_(initialMode), storeZero_(storeZero) {
    x0 = {1.0, 0.5};
    f = [](PetscReal, const PetscScalar *u, PetscScalar *y, const ModeContext &c) {
      y[0] = -u[0] + u[1];
      y[1] = c.d[0] == 0 ? u[1] - 0.5 * u[0] : u[0] - 0.5;
    };
  }
  DiscreteState initialDiscreteState() const override { return {initialMode_}; }
  std::vector<PetscInt> algebraicIndices() const override { return rank_ == 0 ? std::vector<PetscInt>{1} : std::vector<PetscInt>{}; }
  PetscErrorCode createJacobian(Mat *J) const override {
    PetscFunctionBeginUser;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, localSize(), localSize(), 2, 2, 2, nullptr, 2, nullptr, J));
    PetscCall(MatSetUp(*J));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(MatSetValue(J, 0, 0, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(J, 0, 1, 1.0, INSERT_VALUES));
      if (c.d[0] == 0) {
        PetscCall(MatSetValue(J, 1, 0, -0.5, INSERT_VALUES));
        PetscCall(MatSetValue(J, 1, 1, 1.0, INSERT_VALUES));
      } else {
        PetscCall(MatSetValue(J, 1, 0, 1.0, INSERT_VALUES));
        if (storeZero_) PetscCall(MatSetValue(J, 1, 1, 0.0, INSERT_VALUES));
      }
    }
    PetscFunctionReturn(0);
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"x_below", Direction::Falling}; }
  bool guardActive(PetscInt, const DiscreteState &d) const override { return d[0] == 0; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override { return firstComponentGuard(u, 0.8, g); }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    return firstComponentGradient(gu, gt);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = 1;
    return 0;
  }

private:
  PetscInt initialMode_;
  bool storeZero_;
};

std::string solveError(PetscInt initialMode, bool storeZero) {
  SingularInModeOne model(initialMode, storeZero);
  Solver s(model);
  hstest::ErrorCapture capture;
  PetscErrorCode ierr = hstest::configureFixedStep(s, TSBEULER, 0.01, 1.0);
  if (!ierr) ierr = s.solve();
  EXPECT_NE(ierr, 0) << "a DAE with a singular g_y was accepted";
  return capture.message();
}

} // namespace

TEST(DAESingularGy, NamedAtTheInitialState) {
  for (bool storeZero : {false, true}) {
    const std::string m = solveError(1, storeZero);
    SCOPED_TRACE(m);
    EXPECT_EQ(m.find("missing diagonal"), std::string::npos);
    EXPECT_NE(m.find("g_y"), std::string::npos);
    EXPECT_NE(m.find("singular"), std::string::npos);
    EXPECT_NE(m.find("rhsJacobian"), std::string::npos);
    EXPECT_TRUE(std::regex_search(m, std::regex("at t = 0 in discrete state \\S*1"))) << m;
  }
}

TEST(DAESingularGy, NamedAfterTheEventThatEntersTheSingularMode) {
  const std::string t = std::to_string(2 * std::log(1.25)).substr(0, 4);  // "0.44"
  for (bool storeZero : {false, true}) {
    const std::string m = solveError(0, storeZero);
    SCOPED_TRACE(m);
    EXPECT_EQ(m.find("missing diagonal"), std::string::npos);
    EXPECT_NE(m.find("g_y"), std::string::npos);
    EXPECT_NE(m.find("singular"), std::string::npos);
    EXPECT_TRUE(std::regex_search(m, std::regex("at t = " + t + "\\d* in discrete state \\S*1"))) << m;
  }
}
