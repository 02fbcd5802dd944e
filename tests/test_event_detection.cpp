// Unit tests of the pure detection logic: sides, crossing classification, the Hermite
// check for two crossings hidden inside one step, and the regula-falsi candidate.
#include "engine/event_detection.hpp"

#include <gtest/gtest.h>

using namespace hybridsens;

TEST(EventDetection, SideUsesDerivativeOnTheSurface) {
  EXPECT_EQ(guardSide(0.5, -1.0, 1e-12), +1);
  EXPECT_EQ(guardSide(-0.5, 1.0, 1e-12), -1);
  EXPECT_EQ(guardSide(1e-14, -1.0, 1e-12), -1);  // just fired, moving down
  EXPECT_EQ(guardSide(-1e-14, 2.0, 1e-12), +1);  // just fired, moving up
  EXPECT_EQ(guardSide(0.0, 0.0, 1e-12), 0);
}

TEST(EventDetection, DirectionIsFiltered) {
  // rising requested (+1)
  EXPECT_EQ(classifyCrossing(-1, 0.3, 1e-12, +1), CrossingKind::Crossed);
  EXPECT_EQ(classifyCrossing(+1, -0.3, 1e-12, +1), CrossingKind::WrongDirection);
  // falling requested (-1)
  EXPECT_EQ(classifyCrossing(+1, -0.3, 1e-12, -1), CrossingKind::Crossed);
  EXPECT_EQ(classifyCrossing(-1, 0.3, 1e-12, -1), CrossingKind::WrongDirection);
  // both
  EXPECT_EQ(classifyCrossing(-1, 0.3, 1e-12, 0), CrossingKind::Crossed);
  EXPECT_EQ(classifyCrossing(+1, -0.3, 1e-12, 0), CrossingKind::Crossed);
  // no change of side
  EXPECT_EQ(classifyCrossing(+1, 0.3, 1e-12, 0), CrossingKind::None);
  // at the surface at the step end
  EXPECT_EQ(classifyCrossing(-1, 1e-14, 1e-12, +1), CrossingKind::AtEnd);
  EXPECT_EQ(classifyCrossing(+1, 1e-14, 1e-12, +1), CrossingKind::None);
  // unknown side never fires
  EXPECT_EQ(classifyCrossing(0, -0.3, 1e-12, 0), CrossingKind::None);
}

TEST(EventDetection, HermiteFindsTwoHiddenCrossings) {
  // g(s) = (s - 0.4)(s - 0.6) = s² - s + 0.24: g0 = 0.24, g1 = 0.24, g'(0) = -1, g'(1) = 1.
  double s = -1;
  ASSERT_TRUE(hermiteHiddenCrossing(0.24, 0.24, -1.0, 1.0, &s));
  EXPECT_NEAR(s, 0.5, 1e-12);
  // Shifted up: g = s² - s + 0.3 stays positive → nothing hidden.
  EXPECT_FALSE(hermiteHiddenCrossing(0.3, 0.3, -1.0, 1.0, &s));
  // A sign change at the ends is not "hidden".
  EXPECT_FALSE(hermiteHiddenCrossing(0.3, -0.3, -1.0, 1.0, &s));
  // Monotone data: nothing hidden.
  EXPECT_FALSE(hermiteHiddenCrossing(1.0, 2.0, 1.0, 1.0, &s));
}

TEST(EventDetection, SecantStaysInsideTheBracket) {
  EXPECT_NEAR(secantCandidate(0.0, -1.0, 1.0, 1.0), 0.5, 1e-15);
  EXPECT_NEAR(secantCandidate(0.0, -1.0, 1.0, 3.0), 0.25, 1e-15);
  EXPECT_NEAR(secantCandidate(0.0, 1.0, 1.0, 1.0), 0.5, 1e-15);  // degenerate → bisection
}

// The location's candidate: a polynomial through the samples (and slopes) has the guard's
// root exactly when the guard is itself a polynomial of that degree, and converges much faster
// than regula falsi otherwise.
TEST(EventDetection, InterpolatedRootIsExactForCubics) {
  auto g = [](double h) { return (h - 0.3) * (h + 1.0) * (h - 2.0); };  // root 0.3 in (0, 1)
  auto dg = [](double h) { return (h + 1.0) * (h - 2.0) + (h - 0.3) * (2 * h - 1.0); };
  // slope at the start + two more samples: four conditions, a cubic.
  EXPECT_NEAR(interpolatedRoot(0.0, 1.0, {{0.0, g(0.0), dg(0.0)}, {1.0, g(1.0)}, {0.5, g(0.5)}}), 0.3, 1e-14);
  // values only, all nodes on one side of the root: the bracket only has to contain it.
  EXPECT_NEAR(interpolatedRoot(0.1, 0.4, {{0.7, g(0.7)}, {0.5, g(0.5)}, {0.4, g(0.4)}, {0.9, g(0.9)}}), 0.3, 1e-14);
  // A quadratic model (start slope and the end) is exact for a quadratic guard.
  auto q = [](double h) { return h * h + 2 * h - 1.25; };  // root 0.5
  EXPECT_NEAR(interpolatedRoot(0.0, 1.0, {{0.0, q(0.0), 2.0}, {1.0, q(1.0)}}), 0.5, 1e-15);
}

TEST(EventDetection, InterpolatedRootConvergesFasterThanRegulaFalsi) {
  // A strongly curved guard; each candidate uses the three samples nearest the surface, as
  // the engine does.
  auto g = [](double h) { return std::exp(3 * h) - 2.0; };  // root ln 2 / 3
  std::vector<GuardSample> samples{{0.0, g(0.0), 3.0}, {1.0, g(1.0)}};
  double lo = 0, hi = 1, c = 0;
  int its = 0;
  while (its < 20) {
    std::vector<GuardSample> nodes = samples;
    std::sort(nodes.begin(), nodes.end(), [](auto &a, auto &b) { return std::fabs(a.g) < std::fabs(b.g); });
    nodes.resize(std::min<size_t>(3, nodes.size()));
    c = interpolatedRoot(lo, hi, nodes);
    ++its;
    if (std::fabs(g(c)) <= 1e-12) break;
    samples.push_back({c, g(c)});
    (g(c) < 0 ? lo : hi) = c;
  }
  EXPECT_NEAR(c, std::log(2.0) / 3, 1e-12);
  EXPECT_LE(its, 5);
  int rf = 1;
  for (lo = 0, hi = 1; std::fabs(g(c = secantCandidate(lo, g(lo), hi, g(hi)))) > 1e-12 && rf < 100; ++rf) (g(c) < 0 ? lo : hi) = c;
  EXPECT_GT(rf, 2 * its);  // regula falsi from the same bracket
}

TEST(EventDetection, InterpolatedRootRefusesDegenerateData) {
  EXPECT_TRUE(std::isnan(interpolatedRoot(0.0, 1.0, {{0.0, 1.0}, {1.0, 2.0}})));         // no sign change
  EXPECT_TRUE(std::isnan(interpolatedRoot(0.0, 1.0, {{0.0, -1.0}, {1.0, INFINITY}})));   // not finite
  EXPECT_TRUE(std::isnan(interpolatedRoot(0.0, 1.0, {{0.5, -1.0}})));                     // one condition
}

// Explicit RK samples carry the guard's rate at the step end as an approximate slope: for a
// method of order p, du1/dh = f(u1) + O(h^p). On the classical RK4 step of u' = λu (u1 = R(λh),
// R(z) = 1 + z + z²/2 + z³/6 + z⁴/24, exact slope λR'(λh), approximate slope λR(λh), off by
// z⁴/24 relative) with the guard g = u1 − 0.8, the location converges in fewer samples with those
// slopes than with values alone — and with slopes that are wrong by 10% it needs more. They help
// where the step is accurate (λH = −0.3 here); at λH = −0.9 (slopes 7% off) they can cost samples.
static int samplesToLocate(double slopeError, bool withSlopes) {
  const double lambda = -3.0, H = 0.1, tol = 1e-12 * 0.8;
  auto R = [](double z) { return 1 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24; };
  auto g = [&](double h) { return R(lambda * h) - 0.8; };
  auto slope = [&](double h) { return withSlopes ? lambda * R(lambda * h) * (1 + slopeError) : NAN; };
  std::vector<GuardSample> samples{{0.0, g(0.0), lambda}, {H, g(H), slope(H)}};
  double lo = 0, hi = H;
  for (int its = 1; its <= 30; ++its) {
    std::vector<GuardSample> nodes = samples;
    std::sort(nodes.begin(), nodes.end(), [](auto &a, auto &b) { return std::fabs(a.g) < std::fabs(b.g); });
    nodes.resize(std::min<size_t>(3, nodes.size()));
    double c = interpolatedRoot(lo, hi, nodes);
    if (!(c > lo && c < hi)) c = secantCandidate(lo, g(lo), hi, g(hi));
    if (std::fabs(g(c)) <= tol) return its;
    samples.push_back({c, g(c), slope(c)});
    (g(c) > 0 ? lo : hi) = c;
  }
  return 1000;
}

TEST(EventDetection, ExplicitStepRatesAsSlopesPlaceCandidatesCloser) {
  const int withRates = samplesToLocate(0.0, true), valuesOnly = samplesToLocate(0.0, false);
  EXPECT_LT(withRates, valuesOnly);
  EXPECT_GT(samplesToLocate(0.1, true), withRates);  // the slopes' accuracy is what helps
}

// A rational guard with a pair of poles just off the bracket (the shape of a theta step's end
// state near an unstable or weakly damped mode): P/Q with a quadratic Q through three samples
// with slopes has its root exactly; the polynomial through the same data does not.
TEST(EventDetection, RationalRootIsExactForQuadraticDenominators) {
  auto q = [](double h) { return (h - 0.6) * (h - 0.6) + 0.01; };
  auto g = [&](double h) { return (h - 0.45) * (h + 1.0) * (h - 2.0) / q(h); };  // root 0.45
  auto dg = [&](double h) {
    const double p = (h - 0.45) * (h + 1.0) * (h - 2.0);
    const double dp = (h + 1.0) * (h - 2.0) + (h - 0.45) * (2 * h - 1.0);
    return (dp * q(h) - p * 2 * (h - 0.6)) / (q(h) * q(h));
  };
  const std::vector<GuardSample> nodes{{0.0, g(0.0), dg(0.0)}, {1.0, g(1.0), dg(1.0)}, {0.5, g(0.5), dg(0.5)}};
  EXPECT_NEAR(rationalRoot(0.0, 1.0, nodes), 0.45, 1e-13);
  EXPECT_NEAR(rationalRoot(0.3, 0.5, nodes), 0.45, 1e-13);  // nodes outside the bracket too
  EXPECT_GT(std::fabs(interpolatedRoot(0.0, 1.0, nodes) - 0.45), 1e-4);
}

TEST(EventDetection, RationalRootRefusesAPoleInTheBracketOrTooFewConditions) {
  // g = (h − 0.8)/((h − 0.3)(h + 2)) has a real pole at 0.3 inside (0, 1); its sign changes there
  // too, so a model that ignored the pole would return a "root" at it.
  auto g = [](double h) { return (h - 0.8) / ((h - 0.3) * (h + 2.0)); };
  auto dg = [&](double h) {
    const double d = (h - 0.3) * (h + 2.0);
    return (d - (h - 0.8) * (2 * h + 1.7)) / (d * d);
  };
  EXPECT_TRUE(std::isnan(rationalRoot(0.0, 1.0, {{0.0, g(0.0), dg(0.0)}, {1.0, g(1.0), dg(1.0)}, {0.6, g(0.6), dg(0.6)}})));
  // four conditions: too few for a quadratic denominator (interpolatedRoot takes these)
  EXPECT_TRUE(std::isnan(rationalRoot(0.0, 1.0, {{0.0, -1.0, 1.0}, {1.0, 1.0, 1.0}})));
  EXPECT_TRUE(std::isnan(rationalRoot(0.0, 1.0, {{0.0, 1.0, 1.0}, {1.0, 2.0, 1.0}, {0.5, 1.5, 1.0}})));  // no sign change
}

// Curvatures make triple nodes: a quintic is determined by values, slopes and curvatures at two
// samples, so its root is exact; with the slopes alone (a cubic) or curvatures of the wrong sign
// it is not.
TEST(EventDetection, InterpolatedRootUsesCurvatures) {
  // g = (h − 0.3)(h + 0.5)(h − 1.7)(h² + 0.2), expanded: the k-th derivative of Σ a_j h^j.
  const double a[6] = {0.051, -0.098, -0.045, -0.29, -1.5, 1.0};
  auto d = [&](int k, double h) {
    double r = 0;
    for (int j = k; j <= 5; ++j) {
      double f = a[j];
      for (int i = 0; i < k; ++i) f *= j - i;
      r += f * std::pow(h, j - k);
    }
    return r;
  };
  ASSERT_NEAR(d(0, 0.3), 0.0, 1e-15);
  auto node = [&](double h, double curvatureSign) { return GuardSample{h, d(0, h), d(1, h), curvatureSign * d(2, h)}; };
  EXPECT_NEAR(interpolatedRoot(0.0, 1.0, {node(0.0, 1), node(1.0, 1)}), 0.3, 1e-14);
  EXPECT_GT(std::fabs(interpolatedRoot(0.0, 1.0, {{0.0, d(0, 0.0), d(1, 0.0)}, {1.0, d(0, 1.0), d(1, 1.0)}}) - 0.3), 1e-3);
  EXPECT_GT(std::fabs(interpolatedRoot(0.0, 1.0, {node(0.0, -1), node(1.0, -1)}) - 0.3), 1e-3);
}

// A curvature is a condition of the rational model too: P/Q with deg P = 2 and a quadratic Q is
// fixed by value and slope at one sample and value, slope and curvature at another (five
// conditions; without the curvature there are four, too few). Wrong curvature, wrong root.
TEST(EventDetection, RationalRootUsesCurvatures) {
  auto q = [](double h) { return (h - 0.6) * (h - 0.6) + 0.01; };
  auto p = [](double h) { return (h - 0.45) * (h + 1.0); };  // root 0.45
  auto g = [&](double h) { return p(h) / q(h); };
  auto dg = [&](double h) { return ((2 * h + 0.55) * q(h) - p(h) * 2 * (h - 0.6)) / (q(h) * q(h)); };
  auto d2g = [&](double h) {  // (p'' − 2 g' q' − g q'')/q
    return (2.0 - 2 * dg(h) * 2 * (h - 0.6) - g(h) * 2.0) / q(h);
  };
  EXPECT_NEAR(rationalRoot(0.0, 1.0, {{0.0, g(0.0), dg(0.0)}, {1.0, g(1.0), dg(1.0), d2g(1.0)}}), 0.45, 1e-13);
  EXPECT_TRUE(std::isnan(rationalRoot(0.0, 1.0, {{0.0, g(0.0), dg(0.0)}, {1.0, g(1.0), dg(1.0)}})));
  const double wrong = rationalRoot(0.0, 1.0, {{0.0, g(0.0), dg(0.0)}, {1.0, g(1.0), dg(1.0), 0.5 * d2g(1.0)}});
  EXPECT_FALSE(std::fabs(wrong - 0.45) < 1e-6);  // NaN (refused) or elsewhere
}

// The Taylor check: for g = (h − 0.3)(h + 2) (exactly quadratic) sampled at 0.3 + 1e-6, a
// candidate near the other end of the bracket (what an ill-conditioned fit through clustered
// samples returned on the 3-area grid) is replaced by the Taylor root, exact here; one within
// Newton's own step of the Newton point is kept, and so is any candidate where the sample is too
// far for its Taylor model (|g''δ/g'| > 0.1) or has no curvature.
TEST(EventDetection, TaylorCheckReplacesACandidateThatContradictsTheNearestSample) {
  auto g = [](double h) { return (h - 0.3) * (h + 2.0); };
  auto dg = [](double h) { return 2 * h + 1.7; };
  const double hn = 0.3 + 1e-6;
  const GuardSample near{hn, g(hn), dg(hn), 2.0};
  EXPECT_NEAR(taylorChecked(0.97, near), 0.3, 1e-15);
  EXPECT_NEAR(taylorChecked(0.3 - 2e-6, near), 0.3, 1e-15);  // the other side, twice Newton's step away
  EXPECT_EQ(taylorChecked(0.3 + 1e-12, near), 0.3 + 1e-12);  // consistent: kept
  const GuardSample far{0.9, g(0.9), dg(0.9), 2.0};          // |g''δ/g'| = 0.35
  EXPECT_EQ(taylorChecked(0.97, far), 0.97);
  EXPECT_EQ(taylorChecked(0.97, GuardSample{hn, g(hn), dg(hn)}), 0.97);
}
