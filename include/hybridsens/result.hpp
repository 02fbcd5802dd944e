// SolveResult: everything one Solver::solve() computed, as a value.
//
//   PetscCall(solver.solve());
//   const SolveResult &r = solver.result();
//   r.objective[k];  r.gradient[k].adjointP[j];  r.events().records();  r.finalState();
//
// Ownership: a SolveResult owns what it holds. Numbers are plain members; the PETSc objects
// (final state, sensitivity matrices, output snapshots) and the event log are shared by
// reference count, so a copy stays valid and unchanged after later solves and after the Solver
// is gone — the Solver never writes into an object a result holds, the next solve creates new
// ones. Handles returned by the accessors are borrowed: read them, do not destroy them, and do
// not keep them beyond the SolveResult they came from. Like any PETSc object, a SolveResult
// must be destroyed before PetscFinalize().
#pragma once

#include "hybridsens/event_log.hpp"
#include "hybridsens/hessian.hpp"
#include "hybridsens/model.hpp"

#include <petscmat.h>
#include <petscvec.h>

#include <memory>
#include <utility>
#include <vector>

namespace hybridsens {

struct SolveStats {
  PetscInt steps = 0, rejectedSteps = 0, locationSteps = 0, events = 0;
  PetscInt locatedEvents = 0;  // state (guard) events among `events`; locationSteps / locatedEvents: re-takes per located event
  double wallSeconds = 0;         // the forward solve (with the tangent-linear model if on)
  double adjointWallSeconds = 0;  // the reverse sweep (0 without -hs_adjoint)
  PetscInt reusedJacobians = 0;   // reverse sweep: f_u, f_p, cost integrands' r_u, r_p copied, not re-evaluated (-hs_adjoint_reuse_jacobians)
  PetscInt ydotSolves = 0;        // DAE: guard rates at step ends that needed ẏ (a consistency solve; guards reading algebraic states)
  // -hs_checkpoints K (0: every step kept): states kept (each time one was), the most held at
  // once (≤ K), and steps re-taken by the reverse sweeps (and Hessian sweeps) of this solve.
  PetscInt checkpoints = 0, checkpointsStored = 0, checkpointsMostHeld = 0, recomputedSteps = 0;
};

// dJ/dp (parameter order of the model) and dJ/du0[i] (i in SolveResult::initialStateIndices)
// of one cost, by forward sensitivities and by the adjoint. A part that was not computed is
// empty (see SolveResult::forwardComputed / adjointComputed).
struct CostGradient {
  std::vector<PetscScalar> forwardP, forwardU0;
  std::vector<PetscScalar> adjointP, adjointU0;
};

// A counted reference to a PETSc object (Vec, Mat): copies share it, the last one destroys it.
template <class T> class SharedPetscObject {
public:
  SharedPetscObject() = default;
  // Takes ownership of one reference (e.g. a freshly created object).
  static SharedPetscObject adopt(T obj) {
    SharedPetscObject s;
    s.obj_ = obj;
    return s;
  }
  // Adds a reference to an object someone else also owns.
  static SharedPetscObject share(T obj) {
    if (obj) PetscObjectReference((PetscObject)obj);
    return adopt(obj);
  }
  SharedPetscObject(const SharedPetscObject &o) : obj_(o.obj_) {
    if (obj_) PetscObjectReference((PetscObject)obj_);
  }
  SharedPetscObject(SharedPetscObject &&o) noexcept : obj_(std::exchange(o.obj_, nullptr)) {}
  SharedPetscObject &operator=(SharedPetscObject o) noexcept {
    std::swap(obj_, o.obj_);
    return *this;
  }
  ~SharedPetscObject() {
    if (obj_) PetscObjectDereference((PetscObject)obj_);
  }
  T get() const { return obj_; }

private:
  T obj_ = nullptr;
};

class SolveResult {
public:
  // J_k for every cost, in the order of Solver::addCost (empty without costs).
  std::vector<PetscScalar> objective;
  // One entry per cost when forward sensitivities or the adjoint ran (else empty).
  std::vector<CostGradient> gradient;
  bool forwardComputed = false;  // forward sensitivities ran: forwardP/U0 filled, finalSensitivities() set
  bool adjointComputed = false;  // the adjoint ran: adjointP/U0 filled
  // The initial-state components whose sensitivity columns follow the parameters (in S, the
  // gradients' U0 parts and the Hessians).
  std::vector<PetscInt> initialStateIndices;

  PetscReal finalTime = 0;
  DiscreteState finalDiscreteState;
  SolveStats stats;

  // With -hs_hessian / Solver::setHessian(true): H[k][i][j] per cost, variables q = (p, u0[chosen]);
  // empty otherwise. hessianMethod: how they were formed.
  std::vector<std::vector<std::vector<PetscScalar>>> hessian;
  HessianMethod hessianMethod = HessianMethod::Auto;

  // The state at finalTime (distributed like the model's state).
  Vec finalState() const { return finalState_.get(); }
  // S(T) = du/d(p, u0[initialStateIndices]): n × (np + #indices), dense, rows distributed like
  // the state; nullptr without forward sensitivities.
  Mat finalSensitivities() const { return finalSensitivities_.get(); }
  // The transitions in the order they were applied.
  const EventLog &events() const;
  // Snapshots at Solver::setOutputTimes (-hs_output_times): u after any transitions at
  // outputTimes[i] and, with forward sensitivities, S there (else nullptr).
  std::vector<PetscReal> outputTimes;
  Vec outputState(size_t i) const { return i < outputStates_.size() ? outputStates_[i].get() : nullptr; }
  Mat outputSensitivities(size_t i) const { return i < outputSensitivities_.size() ? outputSensitivities_[i].get() : nullptr; }

  // max |adjoint − forward| / max |adjoint| over every cost, parameter and initial-state
  // column; −1 unless both gradients were computed.
  PetscReal adjointForwardDifference() const;
  // One part of every cost's gradient as a table [cost][column], e.g.
  // gradientTable(&CostGradient::adjointP) — the JSON summary's layout.
  std::vector<std::vector<PetscScalar>> gradientTable(std::vector<PetscScalar> CostGradient::*part) const;

private:
  friend class Solver;  // fills the shared objects below
  SharedPetscObject<Vec> finalState_;
  SharedPetscObject<Mat> finalSensitivities_;
  std::vector<SharedPetscObject<Vec>> outputStates_;
  std::vector<SharedPetscObject<Mat>> outputSensitivities_;
  std::shared_ptr<const EventLog> events_;
};

} // namespace hybridsens
