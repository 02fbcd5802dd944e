// Solver: the user-facing entry point. It owns the PETSc TS (configure it with PETSc options
// or through ts()), integrates the hybrid model, and writes the JSON summary. What a solve
// computed is a SolveResult (hybridsens/result.hpp): solve(), then result().
#pragma once

#include "hybridsens/event_log.hpp"
#include "hybridsens/hessian.hpp"
#include "hybridsens/model.hpp"
#include "hybridsens/monitors.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/options.hpp"
#include "hybridsens/result.hpp"

#include <petscts.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hybridsens {

class Dynamics;
class Engine;
class CostEvaluator;
class JumpAlgebra;
class EventTangents;
class ForwardSensitivity;
class AdjointSensitivity;


class Solver {
public:
  explicit Solver(const HybridModel &model);
  ~Solver();
  Solver(const Solver &) = delete;
  Solver &operator=(const Solver &) = delete;

  // The TS the engine drives, created with the Solver. Set defaults (type, dt, final time) on
  // it, then call setFromOptions() once: the command line overrides them.
  TS ts() const { return ts_; }
  // Reads -hs_* options and calls TSSetFromOptions.
  PetscErrorCode setFromOptions();
  const HybridModel &model() const { return model_; }
  // The discrete state the dynamics are in now: during a solve (in a TS monitor) the current
  // phase's, after it the final one (also SolveResult::finalDiscreteState).
  const DiscreteState &currentDiscreteState() const;
  EngineOptions &options() { return opt_.engine; }
  // Everything setFromOptions read (and the defaults of what it did not).
  const SolverOptions &solverOptions() const { return opt_; }
  PetscErrorCode setParameters(const std::vector<PetscReal> &p);
  const std::vector<PetscReal> &parameters() const { return params_; }

  // Cost functions whose values and gradients are wanted (kept by reference).
  void addCost(const CostFunction &c) { costs_.push_back(&c); }
  // Carry forward sensitivities S = du/d(p, u0[u0Indices]) with the solve (also -hs_forward,
  // -hs_forward_u0 i,j,...; by default every differential component of a small state).
  void setForwardSensitivities(bool on) { forward_ = on; }
  void setInitialStateSensitivities(std::vector<PetscInt> idx) { u0Indices_ = std::move(idx), u0Chosen_ = true; }
  // Compute dJ_k/dp and dJ_k/du0 by the discrete adjoint after the solve (also -hs_adjoint).
  void setAdjoint(bool on) { adjoint_ = on; }
  // Called collectively during every reverse sweep (see AdjointSample); empty: none.
  void setAdjointMonitor(AdjointMonitor m) { adjointMonitor_ = std::move(m); }
  // Called collectively during every forward solve (see ForwardSample), also the re-solves of
  // checkGradient; empty: none.
  void setForwardMonitor(ForwardMonitor m) { forwardMonitor_ = std::move(m); }
  bool forwardSensitivities() const { return forward_; }
  bool adjoint() const { return adjoint_; }
  // Hessians (hybridsens/hessian.hpp) with respect to (parameters, chosen initial-state
  // components), from the trajectory of the last solve — no re-solve (see keepTrajectory). The model and the costs
  // provide second-derivative products (SecondOrderModel / SecondOrderCost of
  // hybridsens/second_order.hpp, found by dynamic_cast, or registered here).
  // -hs_hessian: the full Hessian of every cost after each solve (-hs_hessian_method auto|foa|hybrid).
  void setHessian(bool on) { hessianOn_ = on; }
  bool hessianRequested() const { return hessianOn_; }
  void setHessianMethod(HessianMethod m) { hessianMethod_ = m; }
  HessianMethod hessianMethod() const { return hessianMethod_; }
  // A plain solve (no adjoint, -hs_hessian or -hs_check_hessian) keeps no trajectory; call
  // keepTrajectory(true) before solve() to ask for Hessians of its trajectory afterwards.
  void keepTrajectory(bool on) { keepTrajectory_ = on; }
  void setSecondOrderModel(const SecondOrderModel &h) { modelHessian_ = &h; }
  void setSecondOrderCost(const CostFunction &c, const SecondOrderCost &h);
  // H_k v_j for every cost k and direction v_j (n_q = np + #u0 entries each): Hv[k][j].
  PetscErrorCode hessianVectorProducts(const std::vector<std::vector<PetscScalar>> &v, std::vector<std::vector<std::vector<PetscScalar>>> &Hv);
  // Full Hessians H[k][i][j] by the given method (Auto: see HessianMethod); `used` reports it.
  PetscErrorCode computeHessian(HessianMethod method, std::vector<std::vector<std::vector<PetscScalar>>> &H, HessianMethod *used = nullptr);
  // The gradient the second-order sweeps compute with it ([cost][q]; equals the adjoint's).
  PetscErrorCode secondOrderGradient(std::vector<std::vector<PetscScalar>> &g);
  // With -hs_check_hessian: verify the Hessian (checkHessian in hessian.hpp) and print the table.
  PetscErrorCode checkHessianFromOptions();

  // With -hs_check_gradient: verify the gradient (hybridsens/verify.hpp) and print the table;
  // an error if it fails. Call after solve() and after printing your results.
  PetscErrorCode checkGradientFromOptions();

  // Output times (also -hs_output_times t1,t2,...): each becomes a step boundary; the result
  // keeps u there (after any transitions at that instant) and, with forward sensitivities, S
  // (SolveResult::outputState / outputSensitivities).
  void setOutputTimes(std::vector<PetscReal> t) { outputTimes_ = std::move(t); }
  const std::vector<PetscReal> &outputTimes() const { return outputTimes_; }

  // Forward solve from u0(p) at the TS's current time to its max time, then whatever sweeps
  // were asked for (forward sensitivities, adjoint, Hessian); fills result().
  PetscErrorCode solve();
  // What the last solve() computed (empty before the first and after a failed one). A copy stays valid
  // after later solves; this reference shows the latest one.
  const SolveResult &result() const { return result_; }

  // The objective and the forward / adjoint gradient tables of the last solve (whichever were
  // computed), columns named by the model's parameterNames() and "u0[i]" (unless
  // initialStateColumns is false), rows by the costs' name(), and the adjoint-vs-forward
  // difference when both ran. Collective; viewer nullptr: standard output of the TS's communicator.
  PetscErrorCode viewGradients(PetscViewer viewer = nullptr, bool initialStateColumns = true) const;

  // JSON summary (keys documented in the README); no-op when file is empty.
  PetscErrorCode writeSummary(const std::string &file) const;
  // Writes to -hs_summary if given.
  PetscErrorCode writeSummaryFromOptions() const { return writeSummary(opt_.engine.summaryFile); }

private:
  PetscErrorCode createTs();
  PetscErrorCode build();
  PetscErrorCode resolveInitialStateIndices();
  PetscErrorCode checkOutputTimes(PetscReal t0, PetscReal tf) const;
  PetscErrorCode solveOnce();
  PetscErrorCode refuseIndex2ObservationsAtEvents() const;
  PetscErrorCode collectResult(SolveResult &r) const;
  bool secondOrderAvailable() const;
  bool keepsTrajectoryStates() const;
  template <class F> PetscErrorCode withHessianSweeps(F &&f);

  const HybridModel &model_;
  std::string kspDefault_;  // the integrator's linear solver as the library last configured it
  PetscErrorCode buildError_ = 0;  // of the construction's createTs(), returned by setFromOptions/solve
  TS ts_ = nullptr;
  SolverOptions opt_;
  std::vector<PetscReal> params_;
  std::unique_ptr<Dynamics> dyn_;
  std::unique_ptr<Engine> engine_;
  Vec u0_ = nullptr;
  std::vector<const CostFunction *> costs_;
  bool forward_ = false, adjoint_ = false, u0Chosen_ = false;
  std::vector<PetscInt> u0Indices_;
  std::vector<PetscReal> outputTimes_;
  std::unique_ptr<CostEvaluator> costEval_;
  std::unique_ptr<EventTangents> tangents_;
  std::unique_ptr<JumpAlgebra> jumps_;
  std::unique_ptr<ForwardSensitivity> fwd_;
  AdjointMonitor adjointMonitor_;
  ForwardMonitor forwardMonitor_;
  SolveResult result_;
  bool hessianOn_ = false, keepTrajectory_ = false;
  HessianMethod hessianMethod_ = HessianMethod::Auto;
  const SecondOrderModel *modelHessian_ = nullptr;
  std::vector<std::pair<const CostFunction *, const SecondOrderCost *>> costHessians_;
  std::vector<PetscReal> solvedParams_;  // parameters of the trajectory the sweeps differentiate
};

} // namespace hybridsens
