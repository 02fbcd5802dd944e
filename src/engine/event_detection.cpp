#include "engine/event_detection.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

static int sgn(double x) { return (x > 0) - (x < 0); }

int guardSide(double value, double derivative, double tol) {
  if (std::fabs(value) > tol) return sgn(value);
  return sgn(derivative);
}

CrossingKind classifyCrossing(int startSide, double endValue, double tol, int direction) {
  if (startSide == 0) return CrossingKind::None;
  // Moving in the requested direction means leaving the side -direction... i.e. a rising
  // crossing (direction +1) starts on the negative side.
  const bool wanted = direction == 0 || direction == -startSide;
  if (std::fabs(endValue) <= tol) return wanted ? CrossingKind::AtEnd : CrossingKind::None;
  if (sgn(endValue) == startSide) return CrossingKind::None;
  return wanted ? CrossingKind::Crossed : CrossingKind::WrongDirection;
}

bool hermiteHiddenCrossing(double g0, double g1, double d0, double d1, double *sAt) {
  if (g0 == 0 || g1 == 0 || sgn(g0) != sgn(g1)) return false;
  // p(s) = h00 g0 + h10 d0 + h01 g1 + h11 d1; p'(s) = a s² + b s + c.
  const double a = 6 * g0 + 3 * d0 - 6 * g1 + 3 * d1;
  const double b = -6 * g0 - 4 * d0 + 6 * g1 - 2 * d1;
  const double c = d0;
  auto p = [&](double s) {
    const double s2 = s * s, s3 = s2 * s;
    return (2 * s3 - 3 * s2 + 1) * g0 + (s3 - 2 * s2 + s) * d0 + (-2 * s3 + 3 * s2) * g1 + (s3 - s2) * d1;
  };
  double roots[2];
  int nr = 0;
  if (std::fabs(a) < 1e-300) {
    if (std::fabs(b) > 1e-300) roots[nr++] = -c / b;
  } else {
    const double disc = b * b - 4 * a * c;
    if (disc >= 0) {
      const double q = -0.5 * (b + (b >= 0 ? 1 : -1) * std::sqrt(disc));
      roots[nr++] = q / a;
      if (q != 0) roots[nr++] = c / q;
    }
  }
  bool found = false;
  double best = 0;
  for (int i = 0; i < nr; ++i) {
    const double s = roots[i];
    if (!(s > 0 && s < 1)) continue;
    const double v = p(s);
    if (sgn(v) != sgn(g0) && (!found || std::fabs(v) > std::fabs(best))) {
      found = true;
      best = v;
      *sAt = s;
    }
  }
  return found;
}

double secantCandidate(double lo, double glo, double hi, double ghi) {
  const double mid = 0.5 * (lo + hi);
  if (glo == ghi || !std::isfinite(glo) || !std::isfinite(ghi)) return mid;
  const double s = lo - glo * (hi - lo) / (ghi - glo);
  if (!(s > lo && s < hi)) return mid;
  return s;
}

double interpolatedRoot(double lo, double hi, const std::vector<GuardSample> &nodes) {
  // Newton's divided differences; a sample with a slope is a double node (Hermite data).
  std::vector<double> z, c, slope;
  for (const GuardSample &smp : nodes) {
    if (std::find(z.begin(), z.end(), smp.h) != z.end()) continue;
    const int copies = std::isfinite(smp.slope) ? 2 : 1;
    for (int k = 0; k < copies; ++k) z.push_back(smp.h), c.push_back(smp.g), slope.push_back(smp.slope);
  }
  const size_t n = z.size();
  if (n < 2) return NAN;
  for (size_t k = 1; k < n; ++k)
    for (size_t i = n - 1; i >= k; --i) {
      const double dz = z[i] - z[i - k];
      c[i] = dz == 0 ? slope[i] : (c[i] - c[i - 1]) / dz;  // dz = 0 only at a double node (k = 1)
    }
  for (double ci : c)
    if (!std::isfinite(ci)) return NAN;
  auto p = [&](double x) {
    double v = c[n - 1];
    for (size_t i = n - 1; i-- > 0;) v = v * (x - z[i]) + c[i];
    return v;
  };
  // The polynomial must change sign over the bracket; bisect it there to full precision.
  double a = lo, b = hi, pa = p(a);
  if (sgn(pa) == sgn(p(b)) || pa == 0) return NAN;
  for (int it = 0; it < 200 && b - a > 4 * 2.2e-16 * std::fabs(b); ++it) {
    const double m = 0.5 * (a + b), pm = p(m);
    if (pm == 0) return m;
    if (sgn(pm) == sgn(pa)) a = m, pa = pm;
    else b = m;
  }
  return 0.5 * (a + b);
}

} // namespace hybridsens
