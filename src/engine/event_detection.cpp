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
  // Newton's divided differences; a sample with a slope is a double node, with a curvature too a
  // triple one (Hermite data): k + 1 equal nodes have the divided difference g^(k)/k!.
  std::vector<double> z, c;
  std::vector<const GuardSample *> of;
  for (const GuardSample &smp : nodes) {
    if (std::find(z.begin(), z.end(), smp.h) != z.end()) continue;
    const int copies = !std::isfinite(smp.slope) ? 1 : std::isfinite(smp.curvature) ? 3 : 2;
    for (int k = 0; k < copies; ++k) z.push_back(smp.h), c.push_back(smp.g), of.push_back(&smp);
  }
  const size_t n = z.size();
  if (n < 2) return NAN;
  for (size_t k = 1; k < n; ++k)
    for (size_t i = n - 1; i >= k; --i) {
      const double dz = z[i] - z[i - k];
      if (dz != 0) c[i] = (c[i] - c[i - 1]) / dz;
      else c[i] = k == 1 ? of[i]->slope : of[i]->curvature / 2;  // dz = 0 only within one node (k ≤ 2)
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

// Solves A x = b (n × n, row-major) by Gaussian elimination with partial pivoting; false when a
// pivot is negligible against its row (the interpolation conditions are dependent).
static bool solveDense(std::vector<double> &A, std::vector<double> &b, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    size_t piv = k;
    for (size_t i = k + 1; i < n; ++i)
      if (std::fabs(A[i * n + k]) > std::fabs(A[piv * n + k])) piv = i;
    double rowScale = 0;
    for (size_t j = k; j < n; ++j) rowScale = std::max(rowScale, std::fabs(A[piv * n + j]));
    if (!(std::fabs(A[piv * n + k]) > 1e-13 * rowScale)) return false;
    if (piv != k) {
      for (size_t j = 0; j < n; ++j) std::swap(A[k * n + j], A[piv * n + j]);
      std::swap(b[k], b[piv]);
    }
    for (size_t i = k + 1; i < n; ++i) {
      const double f = A[i * n + k] / A[k * n + k];
      for (size_t j = k; j < n; ++j) A[i * n + j] -= f * A[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (size_t k = n; k-- > 0;) {
    double v = b[k];
    for (size_t j = k + 1; j < n; ++j) v -= A[k * n + j] * b[j];
    b[k] = v / A[k * n + k];
  }
  for (double v : b)
    if (!std::isfinite(v)) return false;
  return true;
}

double rationalRoot(double lo, double hi, const std::vector<GuardSample> &nodes) {
  // On t = (h − lo)/(hi − lo) ∈ [0, 1]: P(t) = Σ p_j t^j, Q(t) = 1 + q1 t + q2 t². The conditions
  // P = g Q (value), P' = d Q + g Q' (slope, d = g'(h)·(hi − lo)) and P'' = d2 Q + 2d Q' + g Q''
  // (curvature, d2 = g''(h)·(hi − lo)²) are linear in (p, q1, q2).
  const double w = hi - lo;
  struct Condition {
    double t, g, d, d2;
    int order;  // 0 value, 1 slope, 2 curvature
  };
  std::vector<Condition> conds;
  std::vector<double> seen;
  for (const GuardSample &smp : nodes) {
    if (std::find(seen.begin(), seen.end(), smp.h) != seen.end()) continue;
    seen.push_back(smp.h);
    const double t = (smp.h - lo) / w;
    conds.push_back({t, smp.g, 0, 0, 0});
    if (!std::isfinite(smp.slope)) continue;
    conds.push_back({t, smp.g, smp.slope * w, 0, 1});
    if (std::isfinite(smp.curvature)) conds.push_back({t, smp.g, smp.slope * w, smp.curvature * w * w, 2});
  }
  const size_t n = conds.size();
  if (n < 5 || !(w > 0)) return NAN;
  const size_t m = n - 3;  // deg P; the unknowns are p_0..p_m, q1, q2
  std::vector<double> A(n * n, 0.0), b(n);
  for (size_t r = 0; r < n; ++r) {
    const Condition &c = conds[r];
    double *row = &A[r * n];
    if (c.order == 0) {
      for (size_t j = 0; j <= m; ++j) row[j] = std::pow(c.t, (double)j);
      row[m + 1] = -c.g * c.t;
      row[m + 2] = -c.g * c.t * c.t;
      b[r] = c.g;
    } else if (c.order == 1) {
      for (size_t j = 1; j <= m; ++j) row[j] = j * std::pow(c.t, (double)(j - 1));
      row[m + 1] = -(c.d * c.t + c.g);
      row[m + 2] = -(c.d * c.t * c.t + 2 * c.g * c.t);
      b[r] = c.d;
    } else {
      for (size_t j = 2; j <= m; ++j) row[j] = j * (j - 1.0) * std::pow(c.t, (double)(j - 2));
      row[m + 1] = -(c.d2 * c.t + 2 * c.d);
      row[m + 2] = -(c.d2 * c.t * c.t + 4 * c.d * c.t + 2 * c.g);
      b[r] = c.d2;
    }
  }
  if (!solveDense(A, b, n)) return NAN;
  const double q1 = b[m + 1], q2 = b[m + 2];
  // No pole in the bracket: Q(0) = 1, so Q must stay positive up to t = 1.
  auto Q = [&](double t) { return 1 + t * (q1 + t * q2); };
  if (!(Q(1) > 0)) return NAN;
  if (q2 != 0) {
    const double tv = -q1 / (2 * q2);
    if (tv > 0 && tv < 1 && !(Q(tv) > 0)) return NAN;
  }
  auto P = [&](double t) {
    double v = b[m];
    for (size_t j = m; j-- > 0;) v = v * t + b[j];
    return v;
  };
  double a = 0, c = 1, pa = P(0);
  if (pa == 0 || sgn(pa) == sgn(P(1))) return NAN;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (a + c);
    if (!(mid > a && mid < c)) break;
    const double pm = P(mid);
    if (pm == 0) return lo + mid * w;
    if (sgn(pm) == sgn(pa)) a = mid, pa = pm;
    else c = mid;
  }
  return lo + 0.5 * (a + c) * w;
}

double taylorChecked(double c, const GuardSample &nearest) {
  const double g = nearest.g, d1 = nearest.slope, d2 = nearest.curvature;
  if (!std::isfinite(d1) || !std::isfinite(d2) || d1 == 0) return c;
  const double delta = -g / d1;
  if (!(std::fabs(d2 * delta / d1) <= 0.1)) return c;
  const double newton = nearest.h + delta;
  if (std::fabs(c - newton) <= std::fabs(delta)) return c;
  // The root of g + d1 d + d2 d²/2 near δ: d = 2δ/(1 + √(1 + 2 d2 δ/d1)) (no cancellation; the
  // root under the square is ≥ 0.8 here).
  return nearest.h + 2 * delta / (1 + std::sqrt(1 + 2 * d2 * delta / d1));
}

} // namespace hybridsens
