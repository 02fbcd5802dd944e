// Hessenberg index-2 DAEs (HybridModel::daeIndex() = 2, docs/index2-daes.md): the hidden
// constraint gives the algebraic variable, and each thing the library cannot differentiate for
// index 2 is refused with an error that names it.
//
// Toy model, u = (x1, x2, y):  x1' = y,  x2' = 1,  0 = k(x) = x1 − x2²   (k_x f_y = 1).
// Hidden constraint k_x f = y − 2 x2 = 0, so the library must set y = 2 x2 at t0 and after
// every reset. Guard x2 − 0.5 (rising) with a reset that keeps (x1, x2) on k = 0 (identity on x).
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>
#include <hybridsens/small_model.hpp>

#include <cmath>

using namespace hybridsens;

namespace {

struct Variant {
  bool resetOffConstraint = false;  // x1⁺ = x1⁻ + 0.1: leaves k = 0
  bool constraintReadsY = false;    // k = x1 − x2² + 1e-3 y: not Hessenberg index 2
  bool guardReadsY = false;         // guard y − 1 instead of x2 − 0.5
};

class Toy : public SmallModel {
public:
  explicit Toy(Variant v) : SmallModel(3), v_(v) {
    algebraic = {2};
    x0 = {0.0, 0.0, 123.0};  // y0 inconsistent on purpose: the hidden constraint gives 0
    f = [v](PetscReal, const PetscScalar *u, PetscScalar *out, const ModeContext &) {
      out[0] = u[2];
      out[1] = 1.0;
      out[2] = u[0] - u[1] * u[1] + (v.constraintReadsY ? 1e-3 * u[2] : 0.0);
    };
    dfdu = [v](PetscReal, const PetscScalar *u, PetscScalar *J, const ModeContext &) {
      for (int i = 0; i < 9; ++i) J[i] = 0;
      J[0 * 3 + 2] = 1.0;
      J[2 * 3 + 0] = 1.0;
      J[2 * 3 + 1] = -2.0 * u[1];
      J[2 * 3 + 2] = v.constraintReadsY ? 1e-3 : 0.0;
    };
    Guard g;
    g.name = "half";
    g.direction = Direction::Rising;
    g.value = [v](PetscReal, const PetscScalar *u, const ModeContext &) { return v.guardReadsY ? u[2] - 1.0 : u[1] - 0.5; };
    g.gradient = [v](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *gu, PetscScalar *gt, PetscScalar *) {
      gu[0] = 0;
      gu[1] = v.guardReadsY ? 0.0 : 1.0;
      gu[2] = v.guardReadsY ? 1.0 : 0.0;
      *gt = 0;
    };
    g.reset = [v](PetscReal, const PetscScalar *u, const ModeContext &, PetscScalar *up) {
      up[0] = u[0] + (v.resetOffConstraint ? 0.1 : 0.0);
      up[1] = u[1];
      up[2] = u[2];
    };
    g.resetJacobian = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *R) {
      for (int i = 0; i < 9; ++i) R[i] = (i % 4 == 0) ? 1.0 : 0.0;
    };
    g.resetJacobianP = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *) {};  // no parameters
    g.resetTimeDerivative = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *Rt) { Rt[0] = Rt[1] = Rt[2] = 0; };
    addGuard(g);
  }
  PetscInt daeIndex() const override { return 2; }

private:
  Variant v_;
};

// Runs the toy with backward Euler to T = 1; returns the error message ("" on success) and, on
// success, the state after the event.
std::string run(Variant v, std::vector<PetscReal> *uplus = nullptr, const std::string &options = "") {
  Toy model(v);
  Solver s(model);
  hstest::ErrorCapture capture;
  PetscErrorCode ierr = hstest::configureFixedStep(s, TSBEULER, 0.01, 1.0, options);
  if (!ierr) ierr = s.solve();
  if (ierr) return capture.message().empty() ? "error without message" : capture.message();
  const auto &events = s.result().events().records();
  if (uplus && !events.empty()) {
    uplus->resize(3);
    for (PetscInt i = 0; i < 3; ++i) globalEntry(events[0].uplus, i, &(*uplus)[i]);
  }
  return "";
}

TEST(Index2, HiddenConstraintGivesTheAlgebraicVariableAfterAReset) {
  std::vector<PetscReal> up;
  ASSERT_EQ(run({}, &up), "");
  ASSERT_EQ(up.size(), 3u);
  EXPECT_NEAR(up[0] - up[1] * up[1], 0.0, 1e-12) << "the state after the reset must be on k = 0";
  EXPECT_NEAR(up[2], 2.0 * up[1], 1e-12) << "y⁺ must solve the hidden constraint y = 2 x2";
}

TEST(Index2, ResetOffTheConstraintIsRefused) {
  const std::string msg = run({true, false, false});
  EXPECT_NE(msg.find("off the constraint"), std::string::npos) << msg;
  EXPECT_NE(msg.find("after event 'half'"), std::string::npos) << msg;
}

TEST(Index2, ConstraintReadingTheAlgebraicVariableIsRefused) {
  const std::string msg = run({false, true, false});
  EXPECT_NE(msg.find("depends on algebraic variable 2"), std::string::npos) << msg;
}

TEST(Index2, GuardReadingTheAlgebraicVariableIsRefused) {
  const std::string msg = run({false, false, true});
  EXPECT_NE(msg.find("reads an algebraic variable of the index-2 DAE"), std::string::npos) << msg;
}

TEST(Index2, CrankNicolsonIsRefused) {
  Toy model({});
  Solver s(model);
  hstest::ErrorCapture capture;
  PetscErrorCode ierr = hstest::configureFixedStep(s, TSCN, 0.01, 1.0);
  if (!ierr) ierr = s.solve();
  EXPECT_NE(ierr, 0);
  EXPECT_NE(capture.message().find("-ts_type cn"), std::string::npos) << capture.message();
  EXPECT_NE(capture.message().find("index-2 DAE"), std::string::npos) << capture.message();
}

TEST(Index2, EventAtTheFinalTimeWithSensitivitiesIsRefused) {
  // The guard x2 = t − 0.5 fires at t = 0.5 exactly: make that the final time.
  Toy model({});
  Solver s(model);
  hstest::ErrorCapture capture;
  PetscErrorCode ierr = hstest::configureFixedStep(s, TSBEULER, 0.01, 0.5, "-hs_adjoint");
  if (!ierr) ierr = s.solve();
  if (ierr == 0) {
    // The guard may be located just after the final step end: then there is no event at T.
    EXPECT_TRUE(s.result().events().records().empty() || s.result().events().records().back().time < 0.5);
  } else EXPECT_NE(capture.message().find("coincides with the final time"), std::string::npos) << capture.message();
}

} // namespace
