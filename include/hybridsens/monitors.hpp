// What the library shows a monitor during a solve (Solver::setAdjointMonitor,
// Solver::setForwardMonitor): one sample per step boundary, event and measurement. The sweeps
// produce these samples; the Solver only passes the user's monitor on to them.
#pragma once

#include "hybridsens/event_log.hpp"

#include <petscmat.h>
#include <petscvec.h>

#include <functional>
#include <vector>

namespace hybridsens {

// What the reverse sweep shows an adjoint monitor (Solver::setAdjointMonitor): the adjoint
// λ_k of every cost at one step boundary t_n, in the order the sweep produces them (time
// decreasing). At each boundary: `Arrived` — λ(t_n⁺) as the later steps (or the terminal
// condition at T) left it; then `AfterMeasurements` if a measurement sits at t_n; then one
// `AfterTransition` per transition at t_n, undone in reverse order of application (`event`
// names it; λ is now its left limit λ⁻). A jump of λ at an event is the difference between
// consecutive samples at the same time.
struct AdjointSample {
  enum Kind { Arrived, AfterMeasurements, AfterTransition };
  Kind kind;
  PetscInt step;
  PetscReal time;
  const EventRecord *event;         // AfterTransition only, else nullptr
  const std::vector<Vec> &lambda;   // one per cost, distributed like u; read only
};
using AdjointMonitor = std::function<PetscErrorCode(const AdjointSample &)>;

// What the forward solve shows a forward monitor (Solver::setForwardMonitor), in time order:
// the state u, the sensitivities S = du/d(p, u0[chosen]) (nullptr without forward
// sensitivities) and the running part of every cost at one step boundary t_n. At each boundary:
// `StepEnd` — what the step produced (u(t_n⁻) if a transition follows; step 0: the consistent
// initial state); then one `AfterTransition` per transition at t_n (`event` names it; u, S are
// the right limits after it); then `AfterMeasurements` if a measurement sits at t_n.
// running[k] = ∫_{t0}^{t_n} r_k dt + the measurements of cost k taken so far: J_k without its
// terminal part, i.e. what a solve ending at t_n would return for a cost without one;
// runningGradient[k][j] its derivative (columns like S: parameters, then initial-state
// components; empty without forward sensitivities). At a StepEnd these are the exact
// derivatives of the computed trajectory (with the discrete event derivative, the correction
// of the step after an event included) and equal what a solve ending at t_n returns; at an
// AfterTransition they are the jump's right limit, which uses the continuous −u̇⁺ τ_p for the
// event-time motion (the next StepEnd replaces it by the step's exact derivative).
struct ForwardSample {
  enum Kind { StepEnd, AfterTransition, AfterMeasurements };
  Kind kind;
  PetscInt step;
  PetscReal time;
  const EventRecord *event;  // AfterTransition only, else nullptr
  Vec u;                     // read only
  Mat S;                     // n × columns, rows distributed like u; read only; nullptr without sensitivities
  const std::vector<PetscScalar> &running;
  const std::vector<std::vector<PetscScalar>> &runningGradient;
};
using ForwardMonitor = std::function<PetscErrorCode(const ForwardSample &)>;

} // namespace hybridsens
