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
