// Hessians of models and costs written once as templates (ADModel/ADCost, whose second-derivative
// products come from nested forward-mode AD, hybridsens/second_order.hpp) against the same
// models with hand-coded products — the examples scalar_measurements and lorenz_sysid, included
// here without their main. Asserted: the full Hessians agree to ≤ 1e-12 relative for both
// methods and the closed form of V11 is met; the AD Lorenz Hessian passes the FD check.
#include "test_support.hpp"

#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <array>
#include <cmath>

#define HYBRIDSENS_EXAMPLE_NO_MAIN
namespace ex_riccati {
#include "../examples/scalar_measurements.cpp"
}
namespace ex_lorenz {
#include "../examples/lorenz_sysid.cpp"
}

using namespace hybridsens;
using hstest::ScopedOptions;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

using Tensor = std::vector<std::vector<std::vector<PetscScalar>>>;

class RiccatiAD : public ADModel<RiccatiAD> {
public:
  PetscInt stateSize() const override { return 1; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 2.0}; }
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[1]; }
  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &, S *f) const { f[0] = -p[0] * u[0] * u[0]; }
};

class InverseSquareAD : public ADCost<InverseSquareAD> {
public:
  std::vector<PetscReal> measurementTimes() const override {
    std::vector<PetscReal> t;
    for (int i = 0; i <= 100; ++i) t.push_back(0.01 * i);
    return t;
  }
  template <class S> S measurement(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return 1.0 / (u[0] * u[0]); }
};

class LorenzAD : public ADModel<LorenzAD> {
public:
  PetscInt stateSize() const override { return 3; }
  std::vector<PetscReal> defaultParameters() const override { return {20.0, 75.0, 10.0, 10.0, 15.0}; }
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = 20.0, u0[1] = p[3], u0[2] = p[4]; }
  template <class S> void rhs(S, const S *x, const S *p, const DiscreteState &, S *f) const {
    f[0] = -p[0] * (x[0] - x[1]);
    f[1] = x[0] * (p[1] - x[2]) - x[1];
    f[2] = x[0] * x[1] - p[2] * x[2];
  }
};

class LeastSquaresAD : public ADCost<LeastSquaresAD> {
public:
  explicit LeastSquaresAD(std::vector<std::array<PetscReal, 3>> y) : y_(std::move(y)) {}
  std::vector<PetscReal> measurementTimes() const override { return ex_lorenz::lorenzMeasurementTimes(); }
  template <class S> S measurement(PetscInt i, S, const S *x, const S *, const DiscreteState &) const {
    S J = 0.0;
    for (int j = 0; j < 3; ++j) J += (y_[i][j] - x[j]) * (y_[i][j] - x[j]);
    return J;
  }

private:
  std::vector<std::array<PetscReal, 3>> y_;
};

PetscReal maxRelDiff(const Tensor &A, const Tensor &B) {
  PetscReal scale = 0, d = 0;
  for (size_t k = 0; k < A.size(); ++k)
    for (size_t i = 0; i < A[k].size(); ++i)
      for (size_t j = 0; j < A[k][i].size(); ++j) scale = std::max(scale, (PetscReal)std::fabs(A[k][i][j]));
  for (size_t k = 0; k < A.size(); ++k)
    for (size_t i = 0; i < A[k].size(); ++i)
      for (size_t j = 0; j < A[k][i].size(); ++j) d = std::max(d, (PetscReal)std::fabs(A[k][i][j] - B[k][i][j]));
  return d / scale;
}

// Full Hessians of both solvers by both methods.
void compare(Solver &hand, Solver &ad, PetscReal tol) {
  hand.keepTrajectory(true);
  ad.keepTrajectory(true);
  HS_OK(hand.solve());
  HS_OK(ad.solve());
  for (HessianMethod m : {HessianMethod::ForwardOverAdjoint, HessianMethod::Hybrid}) {
    Tensor H1, H2;
    HS_OK(hand.computeHessian(m, H1));
    HS_OK(ad.computeHessian(m, H2));
    ASSERT_EQ(H1[0].size(), H2[0].size());
    EXPECT_LE(maxRelDiff(H1, H2), tol) << hessianMethodName(m);
  }
}

} // namespace

TEST(HessianAD, ScalarMeasurementsEqualsHandCodedAndClosedForm) {
  for (const char *opts : {"-ts_type rk -ts_rk_type 4 -ts_dt 1e-3", "-ts_type cn -ts_dt 1e-2"}) {
    SCOPED_TRACE(opts);
    ex_riccati::Riccati model;
    ex_riccati::InverseSquareMeasurements cost;
    RiccatiAD modelAD;
    InverseSquareAD costAD;
    Solver hand(model), ad(modelAD);
    hand.addCost(cost);
    ad.addCost(costAD);
    {
      ScopedOptions o(std::string(opts) + " -ts_max_time 1");
      HS_OK(hand.setFromOptions());
      HS_OK(ad.setFromOptions());
    }
    hand.setInitialStateSensitivities({});
    ad.setInitialStateSensitivities({});
    compare(hand, ad, 1e-13);
    if (std::string(opts).find("rk") != std::string::npos) {
      Tensor H;
      HS_OK(ad.computeHessian(HessianMethod::Auto, H));
      EXPECT_NEAR(H[0][0][0], 67.67, 67.67 * 1e-9);
      EXPECT_NEAR(H[0][1][1], 63.125, 63.125 * 1e-9);
      EXPECT_NEAR(H[0][0][1], -25.25, 25.25 * 1e-9);
    }
  }
}

TEST(HessianAD, LorenzEqualsHandCoded) {
  const std::vector<PetscReal> truth = {10.0, 60.0, 8.0 / 3.0, 25.0, 30.0};
  const char *opts = "-ts_type rk -ts_rk_type 4 -ts_dt 2e-3 -ts_max_time 1";
  ex_lorenz::Lorenz model;
  ex_lorenz::Recorder recorder;
  {
    Solver gen(model);
    gen.addCost(recorder);
    ScopedOptions o(opts);
    HS_OK(gen.setFromOptions());
    HS_OK(gen.setParameters(truth));
    HS_OK(gen.solve());
  }
  auto data = recorder.states;
  for (auto &row : data) ASSERT_EQ(MPI_Bcast(row.data(), 3, MPIU_REAL, 0, PETSC_COMM_WORLD), 0);
  ex_lorenz::LeastSquares cost(data);
  LorenzAD modelAD;
  LeastSquaresAD costAD(data);
  Solver hand(model), ad(modelAD);
  hand.addCost(cost);
  ad.addCost(costAD);
  {
    ScopedOptions o(opts);
    HS_OK(hand.setFromOptions());
    HS_OK(ad.setFromOptions());
  }
  HS_OK(hand.setParameters({20.0, 75.0, 10.0, 10.0, 15.0}));
  hand.setInitialStateSensitivities({0});  // x1(0) as an initial-state variable too
  ad.setInitialStateSensitivities({0});
  compare(hand, ad, 1e-12);
  HessianCheckOptions opt;
  HessianCheckReport rep;
  HS_OK(checkHessian(ad, opt, rep));
  EXPECT_TRUE(rep.passed);
}
