#include "engine/engine.hpp"

#include "engine/event_detection.hpp"
#include "model/reset_call.hpp"
#include "util/krylov_with_fallback.hpp"
#include "util/log_events.hpp"
#include "util/petsc_internals.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace hybridsens {

Engine::Engine(Dynamics &dyn, TS ts, const EngineOptions &opt) : dyn_(dyn), ts_(ts), opt_(opt), guards_(dyn), stepDerivative_(dyn) {}

Engine::~Engine() {
  VecDestroy(&uStart_);
  VecDestroy(&udot_);
  VecDestroy(&dudh_);
  VecDestroy(&probe_);
}

PetscErrorCode Engine::buildStops(PetscReal t0, PetscReal tf) {
  const auto &model = dyn_.model();
  std::map<PetscReal, std::vector<PetscInt>> at;
  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < model.numTimeEvents(); ++k) {
    TimeEventInfo info;
    HS_USER_QUERY(dyn_.comm(), "timeEvent", info = model.timeEvent(k, dyn_.parameters()));
    PetscCheck(std::isfinite(info.time), dyn_.comm(), PETSC_ERR_FP, "time event '%s' has a non-finite time", info.name.c_str());
    PetscCheck(info.dtime_dp.empty() || (PetscInt)info.dtime_dp.size() == dyn_.numParameters(), dyn_.comm(), PETSC_ERR_ARG_SIZ,
               "time event '%s': dtime_dp has %zu entries, the model has %" PetscInt_FMT " parameters", info.name.c_str(),
               info.dtime_dp.size(), dyn_.numParameters());
    if (info.time > t0 && info.time <= tf) at[info.time].push_back(k);
  }
  for (PetscReal t : extraStops_)
    if (t > t0 && t <= tf) at[t];  // a boundary with no event
  at[tf];
  stops_.clear();
  for (auto &kv : at) stops_.push_back({kv.first, kv.second});
  PetscFunctionReturn(0);
}

// The size of the attempt being taken, noted at every stage check (TSAdaptSetCheckStage): the
// last one is the accepted attempt's, which a controller's rejections inside TSStep hide.
static PetscErrorCode noteAttemptSize(TSAdapt adapt, TS ts, PetscReal, Vec, PetscBool *) {
  PetscContainer c;
  void *h;
  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)adapt, "hybridsens_attempt_size", (PetscObject *)&c));
  if (!c) PetscFunctionReturn(0);
  PetscCall(PetscContainerGetPointer(c, &h));
  PetscCall(TSGetTimeStep(ts, static_cast<PetscReal *>(h)));
  PetscFunctionReturn(0);
}

// The KSP of the integrator's Newton iteration.
static PetscErrorCode newtonKsp(TS ts, KSP *ksp) {
  SNES snes;
  PetscFunctionBeginUser;
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(SNESGetKSP(snes, ksp));
  PetscFunctionReturn(0);
}

// One TSStep of (at most) h from the current state; adaptivity may shorten it unless forced.
PetscErrorCode Engine::takeStep(PetscReal h, bool forceAccept) {
  TSAdapt adapt;
  PetscBool saved;
  PetscFunctionBeginUser;
  PetscCall(TSGetAdapt(ts_, &adapt));
  PetscCall(tsAdaptAlwaysAccepts(adapt, &saved));
  if (forceAccept) PetscCall(TSAdaptSetAlwaysAccept(adapt, PETSC_TRUE));
  PetscCall(TSSetTimeStep(ts_, h));
  PetscInt rejectBefore, rejectAfter;
  PetscCall(TSGetStepRejections(ts_, &rejectBefore));
  takenH_ = h;
  {
    // The size the accepted attempt was taken with: what the step's derivatives use, what a
    // stored record's replay repeats (see below), and what the adjoint steps back with.
    PetscContainer c;
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, &takenH_));
    PetscCall(PetscObjectCompose((PetscObject)adapt, "hybridsens_attempt_size", (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
    PetscCall(TSAdaptSetCheckStage(adapt, noteAttemptSize));
  }
  PetscCall(TSStep(ts_));
  PetscCall(TSAdaptSetCheckStage(adapt, nullptr));
  PetscCall(PetscObjectCompose((PetscObject)adapt, "hybridsens_attempt_size", nullptr));
  PetscCall(TSAdaptSetAlwaysAccept(adapt, saved));
  TSConvergedReason reason;
  PetscCall(TSGetConvergedReason(ts_, &reason));
  PetscCheck(reason >= 0, dyn_.comm(), PETSC_ERR_NOT_CONVERGED, "TSStep failed at t = %.17g in discrete state %s: %s",
             (double)start_.t, describe(dyn_.mode).c_str(), TSConvergedReasons[reason]);
  PetscCall(TSGetStepRejections(ts_, &rejectAfter));
  stats_.rejectedSteps += rejectAfter - rejectBefore;
  PetscBool isRK;
  PetscCall(PetscObjectTypeCompare((PetscObject)ts_, TSRK, &isRK));
  if (keepStates_ && isRK && rejectAfter > rejectBefore) {
    // PETSc's RK rolls a rejected attempt back arithmetically (U − hΣb_i k_i, not U itself), so
    // the accepted attempt started from a state that differs from the step start in the last
    // bits. Take it again from the saved start: a stored step is then a function of its start,
    // size and mode alone, which is what re-taking it from a checkpoint reproduces.
    Vec X;
    const PetscReal hTaken = takenH_;
    PetscCall(TSGetSolution(ts_, &X));
    PetscCall(VecCopy(uStart_, X));
    PetscCall(TSSetTime(ts_, start_.t));
    PetscCall(tsSetPreviousTime(ts_, start_.tprevPrev));
    PetscCall(TSSetStepNumber(ts_, start_.steps));
    PetscCall(tsDiscardLastStep(ts_));
    PetscCall(takeStep(hTaken, true));
    PetscFunctionReturn(0);
  }
  PetscReal tEnd;
  PetscCall(TSGetTime(ts_, &tEnd));
  currentH_ = tEnd - start_.t;
  if (guards_.size()) PetscCall(stepDerivative_.noteStepTaken(ts_));
  PetscFunctionReturn(0);
}

// Restore the saved step start bit-exactly and step again with exactly h. TSRollBack is not
// used: for theta it would overwrite the sensitivities with a stale copy (the TLM of this step
// has not run yet), and for RK it restores the state only up to rounding.
PetscErrorCode Engine::retakeStep(PetscReal h) {
  Vec X;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(VecCopy(uStart_, X));
  PetscCall(TSSetTime(ts_, start_.t));
  PetscCall(tsSetPreviousTime(ts_, start_.tprevPrev));
  PetscCall(TSSetStepNumber(ts_, start_.steps));
  PetscCall(tsDiscardLastStep(ts_));  // no FSAL reuse of the discarded step
  ++stats_.locationSteps;
  PetscCall(takeStep(h, true));
  PetscFunctionReturn(0);
}

PetscErrorCode Engine::endRates(std::vector<PetscScalar> &rate) {
  Vec X;
  PetscFunctionBeginUser;
  PetscReal now;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(TSGetTime(ts_, &now));
  PetscCall(guards_.rates(now, X, dyn_.mode, udot_, rate));
  PetscFunctionReturn(0);
}

// Guard values, rates and sides at the current state (a step start). A guard that just fired
// sits on its surface (on either side, within the location tolerance): its side is the sign
// of its rate after the transition, so it cannot fire again until it really comes back.
PetscErrorCode Engine::startSides(const std::vector<PetscInt> &justFired) {
  Vec X;
  PetscFunctionBeginUser;
  PetscReal now;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(TSGetTime(ts_, &now));
  PetscCall(guards_.values(now, X, dyn_.mode, gStart_));
  rateStart_.assign(guards_.size(), 0.0);
  sideStart_.assign(guards_.size(), 0);
  if (!guards_.size()) PetscFunctionReturn(0);
  PetscCall(endRates(rateStart_));
  rateStartKnown_ = true;
  for (PetscInt j = 0; j < guards_.size(); ++j)
    if (guards_.active(j, dyn_.mode)) sideStart_[j] = guardSide(gStart_[j], rateStart_[j], 0.0);
  for (PetscInt j : justFired)
    if (guards_.active(j, dyn_.mode)) sideStart_[j] = guardSide(0.0, rateStart_[j], 0.0);
  // On its surface (just fired, or exactly zero) with a rate below the grazing threshold — a
  // ball at rest on the floor: its side is unknown (side 0, so it cannot fire) until the
  // trajectory leaves the surface; checkLeftSurface() refuses it if it leaves in the direction
  // the guard fires (it would fall through the floor unnoticed), and lets it go the other way.
  surface_.assign(guards_.size(), SurfaceStart());
  bool haveUdot = false;
  for (PetscInt j = 0; j < guards_.size(); ++j) {
    if (!guards_.active(j, dyn_.mode)) continue;
    if (gStart_[j] != 0 && std::find(justFired.begin(), justFired.end(), j) == justFired.end()) continue;
    SurfaceStart &s = surface_[j];
    if (!haveUdot) PetscCall(dyn_.timeDerivative(now, X, dyn_.mode, udot_));
    haveUdot = true;
    PetscCall(guards_.transversality(j, now, X, udot_, dyn_.mode, &s.rate, &s.scale));
    if (std::fabs(s.rate) > opt_.grazingTol * s.scale) continue;
    s.grazing = true;
    s.t = now;
    sideStart_[j] = 0;
  }
  PetscFunctionReturn(0);
}

// After a step that started with a guard on its surface at zero rate (startSides): leaving the
// surface towards the side the guard fires on is a grazing event at the step start.
PetscErrorCode Engine::checkLeftSurface() {
  Vec X;
  std::vector<PetscScalar> g;
  PetscFunctionBeginUser;
  bool any = false;
  for (PetscInt j = 0; j < guards_.size(); ++j) any = any || (guards_.active(j, dyn_.mode) && sideStart_[j] == 0 && surface_[j].grazing);
  if (!any) PetscFunctionReturn(0);
  PetscReal now;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(TSGetTime(ts_, &now));
  PetscCall(guards_.values(now, X, dyn_.mode, g));
  for (PetscInt j = 0; j < guards_.size(); ++j) {
    if (!guards_.active(j, dyn_.mode) || sideStart_[j] != 0 || !surface_[j].grazing || g[j] == 0) continue;
    const int side = g[j] > 0 ? 1 : -1, dir = guards_.direction(j);
    PetscCheck(dir != 0 && dir != side, dyn_.comm(), PETSC_ERR_NOT_CONVERGED,
               "Grazing event: guard '%s' sits on its surface at t = %.17g in discrete state %s with time derivative %g (scale %g, "
               "-hs_grazing_tol %g) and then leaves it in the direction it fires: the event time is not differentiable here",
               dyn_.model().guardInfo(j).name.c_str(), (double)surface_[j].t, describe(dyn_.mode).c_str(), (double)surface_[j].rate,
               (double)surface_[j].scale, (double)opt_.grazingTol);
  }
  PetscFunctionReturn(0);
}

// The guards' rates at the current step's start, from the state saved there (bit for bit the
// one the step started from, in the same discrete state), where the previous step end did not
// compute them.
PetscErrorCode Engine::ensureStartRates() {
  PetscFunctionBeginUser;
  if (rateStartKnown_) PetscFunctionReturn(0);
  PetscCall(guards_.rates(start_.t, uStart_, dyn_.mode, udot_, rateStart_));
  rateStartKnown_ = true;
  PetscFunctionReturn(0);
}

// Explicit one-step methods (an ODE): their end state's slope in h is the vector field there to
// the method's order (guardSlopes).
static PetscErrorCode typeIsExplicitOneStep(TS ts, bool *is, PetscInt *rkOrder) {
  PetscBool match;
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &match, TSRK, TSSSP, TSEULER, ""));
  *is = match;
  *rkOrder = 0;
  PetscCall(PetscObjectTypeCompare((PetscObject)ts, TSRK, &match));
  if (match) PetscCall(TSRKGetOrder(ts, rkOrder));
  PetscFunctionReturn(0);
}

// Whether the step's end state has the flow's second derivative at h = 0, so that the guards'
// curvature along the flow at the step start is g''(0) (flowCurvatures): an explicit RK of order
// ≥ 2, or a theta method with θ = 1/2 on an ODE — differentiating u1 = u0 + h[(1 − θ) f(t0, u0) +
// θ f(t0 + h, u1)] (or its midpoint form) twice gives u1''(0) = 2θ (f_t + f_u f). For a DAE the
// algebraic rows would need ÿ (a consistency solve each: measured not worth it on the 3-area grid).
static PetscErrorCode startCurvatureFromFlow(TS ts, bool isDAE, PetscInt rkOrder, bool *exact) {
  PetscBool match;
  PetscFunctionBeginUser;
  *exact = rkOrder >= 2;
  if (*exact || isDAE) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &match, TSTHETA, TSCN, TSBEULER, ""));
  if (!match) PetscFunctionReturn(0);
  PetscReal theta;
  PetscCall(TSThetaGetTheta(ts, &theta));
  *exact = theta == 0.5;
  PetscFunctionReturn(0);
}

// The guards' second derivatives along the flow through (t, X) with f(t, X) = fX: the central
// difference of their rates γ_t + γ_u f at (t ± ε, X ± εf), ε = 10⁻²h. An explicit RK step of
// order p has u1(h) = φ_h(u0) + O(h^(p+1)), so this is the curvature g''(h) of a sample to
// O(h^(p−1)), and at the step start (h = 0) it is exact for p ≥ 2 and for Crank–Nicolson on an ODE
// (startCurvatureFromFlow; the CN galan_scalar 6 → 5 re-takes). With it the first candidate has
// six conditions instead of four: with values and slopes alone RK4's first candidate missed the
// surface by 1e1–1e3 of its tolerance on the impact oscillator and 1e2–5e3 on the hysteresis
// oscillator (with curvatures 1–10 and mostly within it). f is probed off the trajectory: a
// non-finite result drops the curvature.
PetscErrorCode Engine::flowCurvatures(PetscReal t, Vec X, Vec fX, PetscReal h, std::vector<PetscScalar> &curvature) {
  std::vector<PetscScalar> rPlus, rMinus;
  PetscFunctionBeginUser;
  curvature.assign(guards_.size(), NAN);
  if (!probe_) PetscCall(VecDuplicate(X, &probe_));
  if (!dudh_) PetscCall(VecDuplicate(X, &dudh_));
  const PetscReal eps = 1e-2 * h;
  for (int side : {1, -1}) {
    PetscCall(VecWAXPY(probe_, side * eps, fX, X));
    PetscCall(dyn_.rhsProbe(t + side * eps, probe_, dyn_.mode, dudh_));  // scratch: a theta sample's du/dh is used up by now
    PetscCall(guards_.ratesAlong(t + side * eps, probe_, dyn_.mode, dudh_, side > 0 ? rPlus : rMinus));
  }
  for (PetscInt j = 0; j < guards_.size(); ++j) {
    const PetscScalar c = (rPlus[j] - rMinus[j]) / (2 * eps);
    if (std::isfinite(PetscRealPart(c))) curvature[j] = c;  // the same on every rank (rates are summed)
  }
  PetscFunctionReturn(0);
}

// The guards' slopes g'(h) and curvatures g''(h) at the end of the step just (re-)taken with size
// h: exact slopes and curvatures to a difference's accuracy for a theta method (StepDerivative;
// call it before anything else assembles the step's matrix), approximate slopes for an explicit
// one-step method, NaN otherwise.
PetscErrorCode Engine::guardSlopes(PetscReal h, std::vector<PetscScalar> &slope, std::vector<PetscScalar> &curvature) {
  Vec X;
  bool available;
  PetscFunctionBeginUser;
  slope.assign(guards_.size(), NAN);
  curvature.assign(guards_.size(), NAN);
  PetscCall(TSGetSolution(ts_, &X));
  if (!dudh_) PetscCall(VecDuplicate(X, &dudh_));
  PetscCall(stepDerivative_.compute(ts_, start_.t, uStart_, h, X, dudh_, &available));
  PetscReal now;
  PetscCall(TSGetTime(ts_, &now));
  if (available) {
    PetscCall(guards_.ratesAlong(now, X, dyn_.mode, dudh_, slope));
    Vec d2udh2;
    PetscCall(stepDerivative_.secondDerivative(start_.t, h, dudh_, &d2udh2, &available));
    if (available) {
      // g'' = γ_u u1'' + d/dε[γ_t + γ_u u1'] along (t + ε, u1 + εu1'): the first term exact (the rate
      // along u1' + u1'' less the slope), the second by a central difference of rates, which is
      // zero up to rounding for a guard linear in (t, u) — a second difference of values would lose
      // 4u|γ|/ε² and spoil the candidate where g is nearly quadratic.
      std::vector<PetscScalar> along, rPlus, rMinus;
      const PetscReal eps = 1e-3 * h;
      PetscCall(VecAXPY(d2udh2, 1.0, dudh_));  // u1' + u1''
      PetscCall(guards_.ratesAlong(now, X, dyn_.mode, d2udh2, along));
      PetscCall(VecWAXPY(udot_, eps, dudh_, X));  // udot_ is scratch here
      PetscCall(guards_.ratesAlong(now + eps, udot_, dyn_.mode, dudh_, rPlus));
      PetscCall(VecWAXPY(udot_, -eps, dudh_, X));
      PetscCall(guards_.ratesAlong(now - eps, udot_, dyn_.mode, dudh_, rMinus));
      for (PetscInt j = 0; j < guards_.size(); ++j) curvature[j] = along[j] - slope[j] + (rPlus[j] - rMinus[j]) / (2 * eps);
    }
  } else if (explicitOneStep_) {
    // An explicit method of order p has u1(h) = φ(h) + C h^(p+1) + …, so du1/dh = f(u1) + O(h^p):
    // the guard's rate at the sample is its slope to that order. It only places candidates (the
    // guard's value decides convergence); an exact du1/dh would need the stages' Jacobian products.
    PetscCall(guards_.rates(now, X, dyn_.mode, udot_, slope));
    if (explicitOrder_ >= 3) PetscCall(flowCurvatures(now, X, udot_, h, curvature));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode Engine::locate(PetscReal hHi, std::vector<PetscScalar> gHi, std::vector<PetscInt> &fired) {
  ScopedLogEvent log(LogEvent::EventLocation);
  const DiscreteState &d = dyn_.mode;
  Vec X;
  PetscReal hLo = 0;
  std::vector<PetscScalar> gLo = gStart_, g;
  int stalled = 0;
  PetscReal bestResidual = PETSC_MAX_REAL;
  struct LocationSample {
    PetscReal h;
    std::vector<PetscScalar> g, slope, curvature;
  };
  std::vector<LocationSample> samples{{hHi, gHi, {}, {}}};  // every step taken from this start, with its guards
  PetscFunctionBeginUser;
  PetscCall(guardSlopes(hHi, samples[0].slope, samples[0].curvature));  // first: the start's rates may re-assemble the step's matrix
  PetscCall(ensureStartRates());  // the start's rate is a node of every guard's interpolant
  std::vector<PetscScalar> curvatureStart(guards_.size(), NAN);  // g''(0) where known (flowCurvatures)
  if (startCurvatureExact_) {
    PetscCall(dyn_.rhsProbe(start_.t, uStart_, d, udot_));
    PetscCall(flowCurvatures(start_.t, uStart_, udot_, hHi, curvatureStart));
  }
  PetscCall(TSGetSolution(ts_, &X));
  const std::vector<PetscReal> tol = surfaceTolerances(gHi);  // fixed for the whole location
  std::vector<PetscInt> crossedHi, atEndHi, crossed, atEnd;
  classifyGuards(gHi, tol, crossedHi, atEndHi);
  PetscCall(guards_.checkCallbacks());
  for (PetscInt it = 0; it < opt_.maxLocationIterations; ++it) {
    // Converged: every crossed guard at hHi sits on its surface, or the bracket is at round-off.
    bool allOnSurface = true;
    for (PetscInt j : crossedHi) allOnSurface = allOnSurface && std::fabs(gHi[j]) <= tol[j];
    const PetscReal width = hHi - hLo, tiny = 16 * PETSC_MACHINE_EPSILON * (std::fabs(start_.t) + hHi);
    if (allOnSurface || width <= tiny) {
      fired = crossedHi;
      fired.insert(fired.end(), atEndHi.begin(), atEndHi.end());
      std::sort(fired.begin(), fired.end());
      // The state is the step of size hHi when the last sample was hHi: compare the size it was
      // taken with, not tEnd − t0 (currentH_), which differs from it in the last bits and cost a
      // re-take of the identical step after a bracket closed at round-off.
      if (takenH_ != hHi) PetscCall(retakeStep(hHi));
      PetscFunctionReturn(0);
    }
    // Earliest candidate among crossed guards: the root in the bracket of the rational function
    // (quadratic denominator, once there are five conditions: rationalRoot), else the polynomial,
    // through the three samples nearest the guard's surface (the step start with the guard's
    // rate there counting as one; each with its slope g'(h) where known — a theta method's,
    // StepDerivative, or an explicit method's approximate one; see interpolatedRoot); regula falsi
    // if both fail; bisection after two re-takes in a row that did not halve the distance to the
    // surface. The newest sample's slopes are computed here, when needed: nothing has assembled a
    // matrix since its step.
    if (samples.back().slope.empty()) PetscCall(guardSlopes(samples.back().h, samples.back().slope, samples.back().curvature));
    PetscReal h = hHi;
    for (PetscInt j : crossedHi) {
      PetscReal glo = gLo[j];
      if (std::fabs(glo) <= tol[j]) glo = sideStart_[j] * std::max(tol[j], 1e-300);
      // A start value on the other side of the surface than the guard's side (it just fired: its side
      // is its rate's, startSides; 1e-16 after an impact's reset where the tolerance is 1e-18): the
      // start node without its curvature. With it, the model followed the rounded value back
      // across the surface at 1.7e-13 and a chattering impact oscillator fired again there.
      const PetscReal g0 = PetscRealPart(gStart_[j]);
      const PetscReal k0 = g0 * sideStart_[j] < 0 ? NAN : PetscRealPart(curvatureStart[j]);
      std::vector<GuardSample> nodes{{0.0, g0, PetscRealPart(rateStart_[j]), k0}};
      for (const LocationSample &smp : samples) nodes.push_back({smp.h, PetscRealPart(smp.g[j]), PetscRealPart(smp.slope[j]), PetscRealPart(smp.curvature[j])});
      std::sort(nodes.begin(), nodes.end(), [](auto &a, auto &b) { return std::fabs(a.g) < std::fabs(b.g); });
      if (nodes.size() > 3) nodes.resize(3);
      PetscReal c = rationalRoot(hLo, hHi, nodes);
      if (!(c > hLo && c < hHi)) c = interpolatedRoot(hLo, hHi, nodes);
      if (!(c > hLo && c < hHi)) c = secantCandidate(hLo, glo, hHi, gHi[j]);
      c = taylorChecked(c, nodes[0]);
      h = std::min(h, c);
    }
    if (stalled >= 2) h = 0.5 * (hLo + hHi);
    // Strictly inside the bracket by a few ulps of the size, not of t: the step's state is a smooth
    // function of h at h's own resolution (only the stage times round to t's), while the surface
    // tolerance in time, -hs_event_tol × h, can be below t's resolution — on RK4's impact
    // oscillator (h = 5e-3, t up to 100) 5e-15 against tiny = 16 ulps of t. A margin of tiny/2
    // pushed a candidate whose Newton correction from the bracket end was 1e-14 to 2e-14 or more,
    // across the surface, and the bracket then closed at round-off with one more re-take. A few ulps
    // of h still keep every candidate a different step from the bracket's ends.
    const PetscReal margin = 4 * PETSC_MACHINE_EPSILON * hHi;
    h = std::min(std::max(h, hLo + margin), hHi - margin);
    PetscCall(retakeStep(h));
    PetscReal now;
    PetscCall(TSGetTime(ts_, &now));
    PetscCall(guards_.values(now, X, d, g));
    samples.push_back({h, g, {}, {}});  // its slopes when a next candidate needs them
    PetscReal residual = PETSC_MAX_REAL;  // how far from its surface the nearest crossed guard now is
    for (PetscInt j : crossedHi) residual = std::min(residual, std::fabs(PetscRealPart(g[j])) / tol[j]);
    stalled = residual >= 0.5 * bestResidual ? stalled + 1 : 0;  // ≥: a guard resting on its surface (0 = 0) is no progress
    bestResidual = std::min(bestResidual, residual);
    classifyGuards(g, tol, crossed, atEnd);
    PetscCall(guards_.checkCallbacks());
    if (!crossed.empty()) {
      hHi = h;
      gHi = g;
      crossedHi = crossed;
      atEndHi = atEnd;
    } else if (!atEnd.empty()) {
      fired = atEnd;  // reached a surface from the start side: the event is here
      PetscFunctionReturn(0);
    } else {
      hLo = h;
      gLo = g;
    }
  }
  std::string names;
  for (PetscInt j : crossedHi) names += (names.empty() ? "'" : ", '") + dyn_.model().guardInfo(j).name + "'";
  SETERRQ(dyn_.comm(), PETSC_ERR_NOT_CONVERGED,
          "Event location failed for guard(s) %s in discrete state %s: bracket [%.17g, %.17g] after %" PetscInt_FMT
          " iterations (raise -hs_event_max_iterations or -hs_event_tol)",
          names.c_str(), describe(d).c_str(), (double)(start_.t + hLo), (double)(start_.t + hHi), opt_.maxLocationIterations);
}

PetscErrorCode Engine::checkZeno(const EventRecord &r) {
  PetscFunctionBeginUser;
  PetscCheck((PetscInt)log_->size() <= opt_.maxEvents, dyn_.comm(), PETSC_ERR_NOT_CONVERGED,
             "Zeno/chattering: more than -hs_max_events %" PetscInt_FMT " events; the last was '%s' at t = %.17g in discrete state %s",
             opt_.maxEvents, r.name.c_str(), (double)r.time, describe(r.before).c_str());
  const auto &recs = log_->records();
  const PetscReal spacing = opt_.minEventSpacing * std::max<PetscReal>(tf_ - t0_, 1e-300);
  for (auto it = recs.rbegin() + 1; it != recs.rend(); ++it) {
    if (!(it->id == r.id)) continue;
    PetscCheck(r.time - it->time > spacing, dyn_.comm(), PETSC_ERR_NOT_CONVERGED,
               "Zeno/chattering: event '%s' fired again after %g (at t = %.17g, discrete state %s); the minimum spacing is "
               "-hs_min_event_spacing %g relative to the horizon",
               r.name.c_str(), (double)(r.time - it->time), (double)r.time, describe(r.before).c_str(), (double)opt_.minEventSpacing);
    break;
  }
  PetscFunctionReturn(0);
}

// Apply every transition at this instant, in the documented order: time events by index,
// then guards by index. Each gets its own pre/post snapshot; a guard made inactive by an
// earlier transition at the same instant does not fire.
PetscErrorCode Engine::applyTransitions(PetscInt step, const std::vector<PetscInt> &timeEvents, const std::vector<PetscInt> &firedGuards) {
  ScopedLogEvent log(LogEvent::Transition);
  const auto &model = dyn_.model();
  PetscReal t;
  Vec X;
  std::vector<EventId> ids;
  PetscFunctionBeginUser;
  PetscCall(TSGetTime(ts_, &t));
  PetscCall(TSGetSolution(ts_, &X));
  for (PetscInt k : timeEvents) ids.push_back({EventId::Time, k});
  for (PetscInt j : firedGuards) ids.push_back({EventId::Guard, j});
  PetscCall(checkTimeIndependence(t, X));
  PetscInt order = 0;
  for (const EventId &id : ids) {
    const bool skip = id.kind == EventId::Guard && !guards_.active(id.index, dyn_.mode);
    PetscCall(guards_.checkCallbacks());
    if (skip) continue;
    EventRecord r;
    // The record's vectors belong to the log once added; an error before that (a grazing
    // crossing, a failing transition or reset) must not leak them.
    struct PendingRecord {
      EventRecord *r;
      ~PendingRecord() {
        if (r) VecDestroy(&r->uminus), VecDestroy(&r->uplus), VecDestroy(&r->udotminus), VecDestroy(&r->udotplus);
      }
    } pending{&r};
    r.step = step;
    r.time = t;
    r.onStepGrid = id.kind == EventId::Time && !transitionsCutStep_;  // time events are at stops: never inside a step
    r.id = id;
    HS_USER_QUERY(dyn_.comm(), "eventName", r.name = model.eventName(id, dyn_.parameters()));
    r.before = dyn_.mode;
    r.orderAtInstant = order++;
    // A second transition at the same instant would read the reinitialized y of an index-2 DAE,
    // whose sensitivity is not tracked (docs/index2-daes.md §4): refused, not approximated.
    PetscCheck(!dyn_.isIndex2() || r.orderAtInstant == 0, dyn_.comm(), PETSC_ERR_SUP,
               "index-2 DAE: '%s' fires at t = %.17g at the same instant as an earlier transition; several transitions at one "
               "instant are not supported for index-2 DAEs (separate the guards or time events)",
               r.name.c_str(), (double)t);
    PetscCall(VecDuplicate(X, &r.uminus));
    PetscCall(VecCopy(X, r.uminus));
    PetscCall(VecDuplicate(X, &r.udotminus));
    PetscCall(dyn_.timeDerivative(t, X, r.before, r.udotminus));
    if (id.kind == EventId::Guard) {
      PetscScalar D;
      PetscReal scale;
      PetscCall(guards_.transversality(id.index, t, X, r.udotminus, r.before, &D, &scale));
      PetscCheck(std::fabs(D) > opt_.grazingTol * scale && scale > 0, dyn_.comm(), PETSC_ERR_NOT_CONVERGED,
                 "Grazing event: guard '%s' at t = %.17g in discrete state %s has time derivative %g (scale %g, -hs_grazing_tol %g); "
                 "the event time is not differentiable here",
                 r.name.c_str(), (double)t, describe(r.before).c_str(), (double)D, (double)scale, (double)opt_.grazingTol);
    }
    DiscreteState after = r.before;
    HS_USER_CALL(dyn_.comm(), "transition", model.transition(id, t, X, after));
    {
      Vec up;
      bool applied;
      PetscCall(VecDuplicate(X, &up));
      PetscCall(applyReset(model, id, r.name, t, r.uminus, dyn_.context(r.before), up, &applied));
      if (applied) {
        PetscCall(dyn_.checkFinite(up, "reset", t, r.before));
        PetscCall(VecCopy(up, X));
      }
      PetscCall(VecDestroy(&up));
    }
    dyn_.mode = after;
    r.after = after;
    PetscCall(dyn_.reinitialize(t, X, after, ("after event '" + r.name + "'").c_str()));
    PetscCall(VecDuplicate(X, &r.uplus));
    PetscCall(VecCopy(X, r.uplus));
    PetscCall(VecDuplicate(X, &r.udotplus));
    PetscCall(dyn_.timeDerivative(t, X, after, r.udotplus));
    pending.r = nullptr;
    EventRecord &rec = log_->add(std::move(r));
    ++stats_.events;
    if (id.kind == EventId::Guard) ++stats_.locatedEvents;
    if (opt_.monitor)
      PetscCall(PetscPrintf(dyn_.comm(), "[hybridsens] event %zu: %s '%s' at t = %.12g (step %" PetscInt_FMT "): %s -> %s\n",
                            log_->size(), id.kind == EventId::Guard ? "guard" : "time event", rec.name.c_str(), (double)t, step,
                            describe(rec.before).c_str(), describe(rec.after).c_str()));
    PetscCall(checkZeno(rec));
    for (auto *o : observers_) PetscCall(o->transitionApplied(rec));
  }
  PetscCall(checkTimeIndependence(t, X));
  // The integrator must not reuse anything from before the event (FSAL stage, cached Jacobian
  // keyed on time; docs/petsc-3.18.md §6).
  PetscCall(TSRestartStep(ts_));
  PetscCall(tsInvalidateRHSJacobian(ts_));
  PetscFunctionReturn(0);
}

// A step too small to make progress, or (with fixed steps) to reach the final time within
// -ts_max_steps, would run for hours or stop at the wrong time: refuse it before the first step.
// An adaptive controller may grow the step, so only its progress at t0 is checked then.
PetscErrorCode Engine::checkStepCount(PetscReal h) {
  TSAdapt adapt;
  PetscBool fixed;
  PetscFunctionBeginUser;
  PetscCheck(t0_ + h > t0_, dyn_.comm(), PETSC_ERR_ARG_OUTOFRANGE,
             "-ts_dt %g is below the resolution of the initial time %.17g: the steps would not advance t", (double)h, (double)t0_);
  PetscCall(TSGetAdapt(ts_, &adapt));
  PetscCall(PetscObjectTypeCompare((PetscObject)adapt, TSADAPTNONE, &fixed));
  if (!fixed) PetscFunctionReturn(0);
  const PetscReal steps = std::ceil((tf_ - t0_) / h), sanity = 1e9;
  PetscInt maxSteps;
  PetscCall(TSGetMaxSteps(ts_, &maxSteps));
  PetscCheck(steps <= maxSteps, dyn_.comm(), PETSC_ERR_ARG_OUTOFRANGE,
             "-ts_dt %g needs %g fixed steps from t = %g to the final time %g (-ts_max_time), more than -ts_max_steps %" PetscInt_FMT,
             (double)h, (double)steps, (double)t0_, (double)tf_, maxSteps);
  PetscCheck(steps <= sanity, dyn_.comm(), PETSC_ERR_ARG_OUTOFRANGE,
             "-ts_dt %g needs %g fixed steps from t = %g to the final time %g (-ts_max_time), more than %g: use a larger -ts_dt "
             "or an adaptive -ts_adapt_type",
             (double)h, (double)steps, (double)t0_, (double)tf_, (double)sanity);
  PetscFunctionReturn(0);
}

// A model that declares explicitTime() false must not read t. The sensitivities rely on it (∂f/∂t
// enters every event derivative) and check it at the events they differentiate; a plain run
// checks it too, at the initial state and around every event instant, so that the declaration
// is refused before a sensitivity run relies on it.
PetscErrorCode Engine::checkTimeIndependence(PetscReal t, Vec X) {
  PetscFunctionBeginUser;
  if (!dyn_.model().explicitTime()) PetscCall(dyn_.rhsTimeDerivative(t, X, dyn_.mode, udot_));
  PetscFunctionReturn(0);
}

// The tolerance within which guard j counts as on its surface over the current step, relative
// to its change over the step (-hs_event_tol).
std::vector<PetscReal> Engine::surfaceTolerances(const std::vector<PetscScalar> &gEnd) const {
  std::vector<PetscReal> tol(guards_.size());
  for (PetscInt j = 0; j < guards_.size(); ++j) tol[j] = opt_.eventTol * std::max(std::fabs(gStart_[j]), std::fabs(gEnd[j]));
  return tol;
}

// Classify every active guard at a step end (values g) against its side at the step start:
// crossed in its direction, or arrived on its surface (atEnd). One classification for the scan
// of a step end and for every sample of the location.
void Engine::classifyGuards(const std::vector<PetscScalar> &g, const std::vector<PetscReal> &tol, std::vector<PetscInt> &crossed,
                            std::vector<PetscInt> &atEnd) const {
  crossed.clear();
  atEnd.clear();
  for (PetscInt j = 0; j < guards_.size(); ++j) {
    if (!guards_.active(j, dyn_.mode)) continue;
    auto k = classifyCrossing(sideStart_[j], g[j], tol[j], guards_.direction(j));
    if (k == CrossingKind::AtEnd && std::fabs(gStart_[j]) <= tol[j]) k = CrossingKind::None;  // never left its surface
    if (k == CrossingKind::Crossed) crossed.push_back(j);
    if (k == CrossingKind::AtEnd) atEnd.push_back(j);
  }
}

// Guard values at the current step end, classified (the scan of one step end).
PetscErrorCode Engine::scanStepEnd(StepOutcome &out) {
  Vec X;
  PetscReal now;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(TSGetTime(ts_, &now));
  PetscCall(guards_.values(now, X, dyn_.mode, out.gEnd));
  classifyGuards(out.gEnd, surfaceTolerances(out.gEnd), out.crossed, out.fired);
  PetscCall(guards_.checkCallbacks());
  PetscFunctionReturn(0);
}

// Reset the TS, the trajectory, the statistics and the guards' sides for a run from (t0, u0).
PetscErrorCode Engine::prepareRun(Vec u0, PetscReal t0, PetscReal tf) {
  Vec X;
  PetscFunctionBeginUser;
  PetscCheck(tf > t0, dyn_.comm(), PETSC_ERR_ARG_OUTOFRANGE, "final time %g (-ts_max_time) must exceed the initial time %g", (double)tf,
             (double)t0);
  t0_ = t0;
  tf_ = tf;
  log_ = std::make_shared<EventLog>();  // a log kept by an earlier result stays as it was
  {
    TrajectoryStore::Config cfg;
    cfg.keepStates = keepStates_;
    cfg.dir = opt_.trajectoryDir;
    cfg.maxBytes = opt_.trajectoryMaxMemory;
    cfg.t0 = t0, cfg.tf = tf;
    cfg.checkpoints = opt_.checkpoints;
    cfg.checkpointsDir = opt_.checkpointsDir;
    cfg.rebuiltSteps = opt_.testRebuiltSteps;
    PetscCheck(cfg.checkpoints > 0 || cfg.checkpointsDir.empty(), dyn_.comm(), PETSC_ERR_ARG_INCOMP,
               "-hs_checkpoints_dir %s needs -hs_checkpoints K (the number of states to keep there)", cfg.checkpointsDir.c_str());
    PetscCall(traj_.setUp(dyn_.comm(), cfg, u0));
    if (traj_.checkpointing()) {
      PetscCall(checkReplayable());
      traj_.setReplay(ts_, [this](PetscInt n) { return replayStep(n); });
    }
  }
  stats_ = EngineStats();
  guards_.resetCounters();
  PetscCall(buildStops(t0, tf));

  PetscCall(TSGetSolution(ts_, &X));
  if (!X) {
    PetscCall(VecDuplicate(u0, &X));
    PetscCall(TSSetSolution(ts_, X));
    PetscCall(VecDestroy(&X));
    PetscCall(TSGetSolution(ts_, &X));
  }
  PetscCall(VecCopy(u0, X));
  if (!uStart_) PetscCall(VecDuplicate(u0, &uStart_));
  if (!udot_) PetscCall(VecDuplicate(u0, &udot_));
  PetscCall(TSSetTime(ts_, t0));
  PetscCall(TSSetStepNumber(ts_, 0));
  PetscCall(TSSetMaxTime(ts_, tf));
  PetscCall(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_MATCHSTEP));
  PetscCall(TSSetUp(ts_));
  PetscCall(typeIsExplicitOneStep(ts_, &explicitOneStep_, &explicitOrder_));
  PetscCall(startCurvatureFromFlow(ts_, dyn_.isDAE(), explicitOrder_, &startCurvatureExact_));
  newtonReuse_ = !explicitOneStep_ && !traj_.checkpointing();
  if (!explicitOneStep_) {
    KSP ksp;
    PetscCall(newtonKsp(ts_, &ksp));
    PetscCall(factorAtNextSolve(ksp));
  }
  PetscBool forwardOn;
  PetscCall(tsForwardSensitivitiesOn(ts_, &forwardOn));
  if (forwardOn) PetscCall(TSForwardSetUp(ts_));
  // What TSSolve resets before a fresh solve.
  PetscCall(tsResetForFreshSolve(ts_, t0));

  PetscCall(checkTimeIndependence(t0, X));
  PetscCall(traj_.record(ts_, 0, t0, t0, X, dyn_.mode, 0.0));
  for (auto *o : observers_) PetscCall(o->stepAccepted(0, t0, t0, 0.0));
  for (auto *o : observers_) PetscCall(o->instantCompleted(0, t0));
  PetscCall(startSides({}));
  PetscFunctionReturn(0);
}

// Take the planned step from the current state (saved first, so that it can be re-taken
// bit-exactly) and note what the integrator proposes next.
PetscErrorCode Engine::takePlannedStep(const StepPlan &plan, PetscReal hnext, PetscReal resumeH, StepOutcome &out) {
  Vec X;
  PetscInt stepsTaken;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(TSGetStepNumber(ts_, &stepsTaken));
  PetscCall(TSMonitor(ts_, stepsTaken, plan.t, X));
  PetscCall(VecCopy(X, uStart_));
  start_.t = plan.t;
  PetscCall(TSGetPrevTime(ts_, &start_.tprevPrev));
  start_.steps = stepsTaken;
  PetscCall(takeStep(plan.h, false));
  PetscCall(TSGetTimeStep(ts_, &out.hProposal));
  if (resumeH > 0) out.hProposal = resumeH;
  out.hFull = currentH_;
  out.reachedStop = plan.aimsAtStop && out.hFull == plan.h;
  // A step shortened only to land on a stop must not shrink the steps after it: with
  // -ts_adapt_type none the TS would otherwise keep the shortened size for the rest of the run.
  if (out.reachedStop && plan.h < hnext) out.hProposal = std::max(out.hProposal, hnext);
  if (out.reachedStop) PetscCall(TSSetTime(ts_, plan.stop->time));  // land exactly (t + (T - t) may differ from T in the last bit)
  PetscFunctionReturn(0);
}

// Find the guards that fire at the end of this step, shortening the step to the first crossing
// inside it (located) or to where two crossings may hide (Hermite check).
PetscErrorCode Engine::detectEvents(const StepPlan &plan, StepOutcome &out) {
  PetscFunctionBeginUser;
  PetscCall(scanStepEnd(out));
  PetscReal hiddenAt = -1;
  if (guards_.size() && out.crossed.empty() && out.fired.empty() && opt_.hermite) {
    PetscCall(endRates(out.rateEnd));
    for (PetscInt j = 0; j < guards_.size(); ++j) {
      PetscReal s;
      if (!guards_.active(j, dyn_.mode) || sideStart_[j] == 0) continue;
      if (hermiteHiddenCrossing(gStart_[j], out.gEnd[j], out.hFull * rateStart_[j], out.hFull * out.rateEnd[j], &s))
        hiddenAt = hiddenAt < 0 ? s : std::min(hiddenAt, (PetscReal)s);
    }
  }
  out.ratesStale = hiddenAt > 0 || !out.crossed.empty();
  if (!out.crossed.empty()) {
    PetscCall(locate(out.hFull, out.gEnd, out.fired));
    out.eventInside = currentH_ < out.hFull;
    // A crossing located within the location tolerance of the end of its step (in time:
    // -hs_event_tol × h, or a few ulps of t) happens at the step end, which the location
    // cannot tell from it. At a stop, round-off in the state (a clock integrated by BEULER
    // leads t by ulps) must not put it before the time events there and reverse the
    // documented order. At a point of the step grid, the step structure is the one of an
    // event exactly there (no remainder step), instead of a remainder step shorter than what
    // the location resolves, whose size (and whether it was taken) would be round-off.
    const PetscReal window = std::max(opt_.eventTol * out.hFull, 16 * PETSC_MACHINE_EPSILON * (std::fabs(start_.t) + out.hFull));
    if (out.eventInside && out.hFull - currentH_ <= window) {
      PetscCall(retakeStep(out.hFull));
      if (out.reachedStop) PetscCall(TSSetTime(ts_, plan.stop->time));
      PetscCall(scanStepEnd(out));  // every guard crossed by the stop crossed within the window: it fires there
      out.fired.insert(out.fired.end(), out.crossed.begin(), out.crossed.end());
      std::sort(out.fired.begin(), out.fired.end());
      out.eventInside = false;
    }
  } else if (hiddenAt > 0) {
    // Two crossings may hide inside this step: shorten it to where the Hermite model is
    // farthest across; if a guard has crossed there, locate the crossing inside it.
    PetscCall(retakeStep(hiddenAt * out.hFull));
    out.eventInside = true;
    PetscCall(scanStepEnd(out));
    if (!out.crossed.empty()) PetscCall(locate(currentH_, out.gEnd, out.fired));
  }
  out.atStop = out.reachedStop && !out.eventInside;
  if (!out.atStop && out.reachedStop) PetscCall(TSSetTime(ts_, start_.t + currentH_));
  PetscFunctionReturn(0);
}

// TSForwardStep_RK evaluates stage Jacobians at ts->ptime + c_i h with h = ts->time_step, i.e.
// after TSStep at the END of the step and with the next step's proposed size (PETSc 3.18 rk.c
// TSForwardStep_RK). Present it the step it is linearizing.
PetscErrorCode Engine::advanceTangentLinearModel(PetscInt step) {
  PetscBool forwardOn;
  PetscReal tEnd, hNext;
  PetscFunctionBeginUser;
  PetscCall(tsForwardSensitivitiesOn(ts_, &forwardOn));
  if (!forwardOn) PetscFunctionReturn(0);
  PetscCall(TSGetTime(ts_, &tEnd));
  PetscCall(TSGetTimeStep(ts_, &hNext));
  PetscCall(TSSetTime(ts_, start_.t));
  PetscCall(TSSetTimeStep(ts_, takenH_));  // the size taken (RK's TLM reads it; theta's keeps its own), not tEnd − t
  PetscCall(TSSetStepNumber(ts_, step - 1));
  PetscCall(TSForwardStep(ts_));
  PetscCall(TSSetStepNumber(ts_, step));
  PetscCall(TSSetTime(ts_, tEnd));
  PetscCall(TSSetTimeStep(ts_, hNext));
  PetscFunctionReturn(0);
}

// The step is final: advance the TLM, record it (U⁻ if an event follows), notify.
PetscErrorCode Engine::acceptStep(PetscInt step) {
  Vec X;
  PetscReal now;
  PetscFunctionBeginUser;
  PetscCall(checkLeftSurface());
  PetscCall(advanceTangentLinearModel(step));
  ++stats_.steps;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(TSGetTime(ts_, &now));
  PetscCall(traj_.record(ts_, step, now, start_.t, X, dyn_.mode, takenH_));
  for (auto *o : observers_) PetscCall(o->stepAccepted(step, start_.t, now, takenH_));
  PetscCall(TSPostStep(ts_));
  PetscFunctionReturn(0);
}

// The boundary after the step: apply the transitions due there (time events of a reached stop,
// fired guards), or carry the guards' sides over to the next step.
PetscErrorCode Engine::completeInstant(PetscInt step, const StepPlan &plan, StepOutcome &out) {
  PetscReal now;
  PetscFunctionBeginUser;
  PetscCall(TSGetTime(ts_, &now));
  const std::vector<PetscInt> noTimeEvents;
  const auto &timeEvents = out.atStop ? plan.stop->timeEvents : noTimeEvents;
  if (!timeEvents.empty() || !out.fired.empty()) {
    // The stop is on the grid when the step that reached it was not shortened for it. A
    // remainder step follows when the instant was located inside the step or a stop cut the
    // step short; else the instant is the end of an uncut step (a kink in its time).
    const PetscReal aimed = std::max(plan.h, plan.hWanted);
    const bool stopOnGrid = out.atStop && aimed - (now - start_.t) <= 1e-10 * aimed;
    transitionsCutStep_ = out.eventInside || (out.atStop && !stopOnGrid);
    PetscCall(applyTransitions(step, timeEvents, out.fired));
    PetscCall(startSides(out.fired));
  } else {
    // Sides carry over; rates only matter on the surface (and for the Hermite check). Without
    // the Hermite check and with no active guard exactly on its surface they decide nothing
    // here: they are computed only if the next step locates a crossing (ensureStartRates).
    gStart_ = out.gEnd;
    if (guards_.size()) {
      bool onSurface = false;
      for (PetscInt j = 0; j < guards_.size(); ++j) onSurface = onSurface || (guards_.active(j, dyn_.mode) && out.gEnd[j] == 0);
      rateStartKnown_ = opt_.hermite || onSurface;
      if (rateStartKnown_) {
        if (out.rateEnd.empty() || out.ratesStale) PetscCall(endRates(out.rateEnd));
        rateStart_ = out.rateEnd;
      }
      for (PetscInt j = 0; j < guards_.size(); ++j) {
        if (!guards_.active(j, dyn_.mode)) continue;
        const int s = guardSide(out.gEnd[j], rateStartKnown_ ? out.rateEnd[j] : 0.0, 0.0);
        if (s != 0) sideStart_[j] = s;
      }
    }
  }
  PetscCall(TSGetTime(ts_, &now));
  for (auto *o : observers_) PetscCall(o->instantCompleted(step, now));
  PetscFunctionReturn(0);
}

PetscErrorCode Engine::run(Vec u0, PetscReal t0, PetscReal tf) {
  const auto wall0 = std::chrono::steady_clock::now();
  Vec X;
  PetscFunctionBeginUser;
  PetscCall(prepareRun(u0, t0, tf));
  PetscCall(TSGetSolution(ts_, &X));
  PetscReal hnext;
  PetscCall(TSGetTimeStep(ts_, &hnext));
  PetscCheck(hnext > 0, dyn_.comm(), PETSC_ERR_ARG_OUTOFRANGE, "initial time step -ts_dt %g must be positive", (double)hnext);
  PetscCall(checkStepCount(hnext));
  size_t stopIdx = 0;
  PetscReal resumeH = 0;  // step size to return to after finishing an interrupted interval
  while (true) {
    StepPlan plan;
    PetscInt stepsTaken, maxSteps;
    PetscCall(TSGetTime(ts_, &plan.t));
    while (stopIdx < stops_.size() && stops_[stopIdx].time <= plan.t) ++stopIdx;
    if (stopIdx >= stops_.size()) break;
    PetscCall(TSGetStepNumber(ts_, &stepsTaken));
    PetscCall(TSGetMaxSteps(ts_, &maxSteps));
    PetscCheck(stepsTaken < maxSteps, dyn_.comm(), PETSC_ERR_NOT_CONVERGED,
               "reached -ts_max_steps %" PetscInt_FMT " at t = %.17g before the final time %.17g", maxSteps, (double)plan.t, (double)tf);
    // The integrator's step, shortened to land on the next stop if it would reach it.
    plan.stop = &stops_[stopIdx];
    plan.hWanted = plan.h = hnext;
    if (plan.h >= (plan.stop->time - plan.t) * (1 - 1e-10)) {
      plan.h = plan.stop->time - plan.t;
      plan.aimsAtStop = true;
    }
    StepOutcome out;
    // The step's Newton solves (and its location's re-takes and slopes) may keep an earlier
    // factorization; the tangent-linear model and the transitions' derivatives below may not.
    PetscCall(allowNewtonReuse(newtonReuse_));
    PetscCall(takePlannedStep(plan, hnext, resumeH, out));
    PetscCall(detectEvents(plan, out));
    PetscCall(allowNewtonReuse(false));
    PetscInt step;
    PetscCall(TSGetStepNumber(ts_, &step));
    PetscCall(acceptStep(step));
    PetscCall(completeInstant(step, plan, out));
    // Next step: finish the interval of a step cut short by an event or a stop, else the
    // integrator's proposal. The step grid then does not move with event times, so an event
    // time enters the computed trajectory only through the two steps next to it (what the
    // discrete event derivative differentiates).
    // The remainder of a step cut by an event is always taken, however short (it is longer
    // than the location window): skipping it would shift the grid after the event with the
    // event time, which the event derivative does not differentiate. Other remainders (a stop
    // within 1e-10 h of a step point) are round-off of the grid and are skipped.
    PetscReal now;
    PetscCall(TSGetTime(ts_, &now));
    const PetscReal intendedH = plan.aimsAtStop && out.hFull == plan.h ? std::max(plan.h, plan.hWanted) : out.hFull;
    const PetscReal remainder = start_.t + intendedH - now;
    resumeH = 0;
    if (remainder > (out.eventInside ? 0 : 1e-10 * intendedH)) {
      hnext = remainder;
      resumeH = out.hProposal;
    } else hnext = out.hProposal;
  }
  PetscInt stepsTaken;
  PetscCall(TSGetStepNumber(ts_, &stepsTaken));
  PetscCall(TSGetTime(ts_, &finalTime_));
  PetscCall(TSMonitor(ts_, stepsTaken, finalTime_, X));
  stats_.ydotSolves = guards_.ydotSolves();
  stats_.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  PetscFunctionReturn(0);
}

// Whether the linear solves of the step's Newton iteration may keep the factorization of an
// earlier operator (allowFactorizationReuse: the library's parallel Krylov solve; a no-op for
// any other solver).
PetscErrorCode Engine::allowNewtonReuse(bool on) {
  KSP ksp;
  PetscFunctionBeginUser;
  if (explicitOneStep_) PetscFunctionReturn(0);
  PetscCall(newtonKsp(ts_, &ksp));
  PetscCall(allowFactorizationReuse(ksp, on));
  PetscFunctionReturn(0);
}

// ---- checkpoints: re-taking a recorded step ------------------------------------------------

// A step re-taken from a checkpoint must give the stored step's bits: the integrator may carry
// nothing from the step before into it that the replay cannot reproduce.
PetscErrorCode Engine::checkReplayable() {
  PetscBool isRK, extrapolate = PETSC_FALSE;
  const char *prefix;
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)ts_, TSRK, &isRK));
  if (isRK) {
    PetscBool fsal;
    TSRKType type;
    PetscCall(TSRKGetType(ts_, &type));
    PetscCall(TSRKGetTableau(ts_, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &fsal));
    // (Its first stage reuses the previous step's last one, computed by a different sum.)
    PetscCheck(!fsal, dyn_.comm(), PETSC_ERR_SUP,
               "-hs_checkpoints with -ts_rk_type %s: a first-same-as-last tableau reuses the previous step's last stage, which a step "
               "re-taken from a checkpoint cannot reproduce bit for bit; use -ts_rk_type 4, 3, 2a or 1fe, or keep every step "
               "(no -hs_checkpoints)",
               type);
  }
  PetscCall(TSGetOptionsPrefix(ts_, &prefix));
  PetscCall(PetscOptionsGetBool(nullptr, prefix, "-ts_theta_initial_guess_extrapolate", &extrapolate, nullptr));
  PetscCheck(!extrapolate, dyn_.comm(), PETSC_ERR_SUP,
             "-hs_checkpoints with -ts_theta_initial_guess_extrapolate: the Newton guess would come from the previous step, which a "
             "step re-taken from a checkpoint does not have; drop one of the two");
  PetscFunctionReturn(0);
}

// Re-take step n from the state record n − 1 holds (in the TS solution): after the transitions
// the event log recorded at its end (their U⁺), in the mode the step ran in, with the size the
// integrator took. Nothing is detected, located or applied again, and no user callback beyond
// the model's right-hand side, Jacobian and algebraic equations runs; those run as retaking
// (Dynamics::setRetaking: no finiteness checks of values the forward step checked, no evaluation
// cache). The TS's trajectory object (which TSStep would set up, creating files) is detached
// meanwhile.
PetscErrorCode Engine::replayStep(PetscInt n) {
  const TrajectoryStore &traj = traj_;
  const auto &events = log_->records();
  Vec X;
  TSAdapt adapt;
  PetscBool saved;
  TSTrajectory tj;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts_, &X));
  auto after = std::upper_bound(events.begin(), events.end(), n - 1, [](PetscInt s, const EventRecord &r) { return s < r.step; });
  if (after != events.begin() && std::prev(after)->step == n - 1) PetscCall(VecCopy(std::prev(after)->uplus, X));
  const DiscreteState mode = dyn_.mode;
  dyn_.mode = traj.mode(n);
  PetscCall(TSSetTime(ts_, traj.time(n - 1)));
  PetscCall(TSSetStepNumber(ts_, n - 1));
  PetscCall(TSRestartStep(ts_));  // nothing from the previous step (an FSAL stage is refused above)
  PetscCall(tsInvalidateRHSJacobian(ts_));
  PetscCall(TSGetAdapt(ts_, &adapt));
  PetscCall(tsAdaptAlwaysAccepts(adapt, &saved));
  PetscCall(TSAdaptSetAlwaysAccept(adapt, PETSC_TRUE));
  PetscCall(tsSwapTrajectoryObject(ts_, nullptr, &tj));
  PetscCall(TSSetTimeStep(ts_, opt_.testRebuiltSteps ? traj.time(n) - traj.time(n - 1) : traj.stepSize(n)));
  const bool wasRetaking = dyn_.retaking();
  dyn_.setRetaking(true);
  const PetscErrorCode ierr = TSStep(ts_);
  dyn_.setRetaking(wasRetaking);
  PetscCall(tsSwapTrajectoryObject(ts_, tj, nullptr));
  PetscCall(TSAdaptSetAlwaysAccept(adapt, saved));
  dyn_.mode = mode;
  PetscCall(ierr);
  TSConvergedReason reason;
  PetscCall(TSGetConvergedReason(ts_, &reason));
  PetscCheck(reason >= 0, dyn_.comm(), PETSC_ERR_NOT_CONVERGED, "re-taking step %" PetscInt_FMT " from a checkpoint (t = %.17g) failed: %s", n,
             (double)traj.time(n - 1), TSConvergedReasons[reason]);
  PetscFunctionReturn(0);
}

} // namespace hybridsens
