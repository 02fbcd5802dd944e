// Pure event-detection logic (no PETSc objects), unit-tested on its own.
//
// A guard's "side" at the start of a step is the sign of its value, or — when the value is
// within the location tolerance (it just fired, or starts on the surface) — the sign of its
// time derivative: a guard that just fired rising is on the positive side. This is what stops
// re-firing and what lets the second of two close events be seen in the next step.
#pragma once

#include <cmath>
#include <vector>

namespace hybridsens {

// Side of a guard: -1, +1, or 0 when unknown (on the surface with zero derivative: grazing).
int guardSide(double value, double derivative, double tol);

enum class CrossingKind {
  None,           // same side at both ends (or inactive)
  Crossed,        // crossed in the requested direction
  WrongDirection, // crossed against the requested direction: ignored, side flips
  AtEnd           // within tolerance at the step end, approaching in the requested direction
};

// Classify one guard over one step. direction: +1 rising, -1 falling, 0 both.
CrossingKind classifyCrossing(int startSide, double endValue, double tol, int direction);

// Hermite cubic on s ∈ [0,1] with values g0, g1 and scaled slopes d0 = h ġ0, d1 = h ġ1. Returns
// true when the cubic changes sign strictly inside although g0 and g1 have the same sign
// (two hidden crossings); *sAt receives the interior point where it is farthest across.
bool hermiteHiddenCrossing(double g0, double g1, double d0, double d1, double *sAt);

// One regula-falsi candidate for the root of a guard on the bracket [lo, hi] with values glo,
// ghi (opposite signs). Falls back to bisection when the secant is degenerate.
double secantCandidate(double lo, double glo, double hi, double ghi);

// One guard's value after a (re-)taken step of size h from the step start, its rate with respect
// to h where known and its second derivative in h where known (NaN otherwise; a curvature is used
// only with a slope).
struct GuardSample {
  double h, g, slope = NAN, curvature = NAN;
};

// The root, inside the bracket (lo, hi), of the polynomial that interpolates the samples
// `nodes` (values, and slopes and curvatures where given: Hermite data, a node counted once per
// condition). At the step start (h = 0) the guard's
// rate is the exact slope of the computed step's end value (any consistent one-step method's
// end state has derivative f(u_start) with respect to the step size at h = 0). The error of the
// root falls like the product of the distances from the root to the nodes, so a location with
// the samples nearest the surface needs a few re-taken steps where regula falsi needs many.
// Returns NaN when the polynomial is degenerate or does not change sign over the bracket (the
// caller falls back to regula falsi).
double interpolatedRoot(double lo, double hi, const std::vector<GuardSample> &nodes);

// The root, inside the bracket (lo, hi), of the rational function P/Q with a quadratic Q that
// interpolates the samples `nodes` (values, and slopes and curvatures where given): deg P =
// conditions − 3, so it needs at least five conditions (two samples with slopes and a third value
// or curvature). A theta step's end state
// is a rational function of h: for a mode u' = λu, Crank–Nicolson gives u1 = u0 (1 + λh/2)/(1 − λh/2),
// with a pole at h = 2/λ, inside the step for an unstable mode; a pair just off the real axis
// turns g(h) sharply (as on the 3-area grid, whose exciter chatters at its limit: the guard's
// slope falls from 70 to 45 within 5% of the step), where no polynomial of low degree follows
// g(h) but P/Q can. Returns NaN when there are too few conditions, the system is singular, Q changes
// sign over the bracket (a pole inside), or P does not change sign over it (the caller then uses
// interpolatedRoot).
double rationalRoot(double lo, double hi, const std::vector<GuardSample> &nodes);

// A candidate c checked against the Taylor quadratic g + g'd + g''d²/2 of `nearest` (the sample
// nearest the surface, with slope and curvature). Where that model is reliable — its Newton step
// δ = −g/g' is small against the scale of the curvature, |g''δ/g'| ≤ 0.1, so the root lies within
// about 5 % of δ from h + δ — a c farther than |δ| from h + δ contradicts it: a fit through samples
// that cluster within 1e-6 of each other is ill-conditioned and has put c near the other end of
// the bracket. Returns the Taylor model's root then, c otherwise (or when slope or curvature is
// unknown).
double taylorChecked(double c, const GuardSample &nearest);

} // namespace hybridsens
