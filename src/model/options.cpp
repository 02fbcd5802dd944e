#include "hybridsens/options.hpp"

namespace hybridsens {

PetscErrorCode EngineOptions::read(OptionReader &r) {
  PetscFunctionBeginUser;
  PetscCall(r.real("-hs_event_tol", "Guard location tolerance, relative to the guard's change over the step (gradients are exact to about this)",
                   &eventTol, Range::openClosed(0, 1e-6)));
  PetscCall(r.integer("-hs_max_events", "Maximum number of events (more is treated as Zeno/chattering)", &maxEvents, 0, PETSC_MAX_INT));
  PetscCall(r.real("-hs_min_event_spacing", "Minimum spacing of two events of one source, relative to the horizon", &minEventSpacing,
                   Range::closed(0, 1)));
  PetscCall(r.real("-hs_grazing_tol", "Relative threshold on the guard's time derivative at a crossing", &grazingTol, Range::closed(0, 1)));
  PetscCall(r.boolean("-hs_event_hermite", "Detect two crossings inside one step from guard derivatives", &hermite));
  PetscCall(r.integer("-hs_event_max_iterations", "Maximum event-location iterations", &maxLocationIterations, 1, 100000));
  PetscInt kind = discreteEventDerivative ? 1 : 0;
  PetscCall(r.choice("-hs_event_derivative", "Event-time derivative: of the steps taken (discrete) or with the continuous state derivative",
                     {"continuous", "discrete"}, &kind));
  discreteEventDerivative = kind == 1 ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(r.boolean("-hs_adjoint_reuse_jacobians", "Reverse sweep: copy f_u, f_p and the integrands' r_u, r_p evaluated again at the same (t, u, mode)",
                      &reuseAdjointJacobians));
  PetscCall(r.boolean("-hs_monitor", "Print events as they happen", &monitor));
  PetscCall(r.text("-hs_summary", "Write a JSON summary to this file", &summaryFile));
  PetscCall(r.text("-hs_trajectory_dir", "Keep the trajectory on disk in this directory (long runs)", &trajectoryDir));
  PetscCall(r.byteCount("-hs_trajectory_max_memory", "Most memory the in-memory trajectory may take (default 3/4 of available)",
                        &trajectoryMaxMemory));
  {
    // (0, the default, keeps every step; a value given must be at least 1)
    PetscInt k = checkpoints > 0 ? checkpoints : 1;
    PetscBool set;
    PetscCall(r.integer("-hs_checkpoints", "Keep at most this many states for the reverse sweeps and recompute the other steps (binomial schedule)",
                        &k, 1, PETSC_MAX_INT, &set));
    if (set) checkpoints = k;
  }
  PetscCall(r.text("-hs_checkpoints_dir", "Keep the -hs_checkpoints states on disk in this existing directory", &checkpointsDir));
  PetscCall(r.boolean("-hs_test_rebuilt_steps",
                      "Testing only: re-take and step back with sizes rebuilt from the stored times, not the sizes taken (gradients change)",
                      &testRebuiltSteps));
  PetscFunctionReturn(0);
}

PetscErrorCode GradientCheckOptions::read(OptionReader &r) {
  PetscFunctionBeginUser;
  PetscCall(r.real("-hs_check_gradient_step", "Relative finite-difference step of the gradient check", &relativeStep, Range::openClosed(0, 0.1)));
  PetscCall(r.real("-hs_check_gradient_taylor_step", "Largest Taylor step of the gradient check, relative to each parameter", &taylorStep,
                   Range::openClosed(0, 0.5)));
  PetscCall(r.real("-hs_check_gradient_tol", "Tolerance adjoint vs finite differences (relative to the largest entry)", &tolerance,
                   Range::openClosed(0, 1)));
  PetscFunctionReturn(0);
}

PetscErrorCode HessianCheckOptions::read(OptionReader &r) {
  PetscFunctionBeginUser;
  PetscCall(r.real("-hs_check_hessian_step", "Relative finite-difference step of the Hessian check's gradient differences", &relativeStep,
                   Range::openClosed(0, 0.1)));
  PetscCall(r.real("-hs_check_hessian_tol", "Tolerance Hessian vs differences of gradients (relative to the largest entry)", &tolerance,
                   Range::openClosed(0, 1)));
  PetscFunctionReturn(0);
}

// The stand-alone readers: the same lines in a block of their own.
template <class Options> static PetscErrorCode readInOwnBlock(Options &o, MPI_Comm comm, const char *prefix, const char *title) {
  PetscFunctionBeginUser;
  PetscErrorCode ierr = 0;
  PetscOptionsBegin(comm, prefix, title, "hybridsens");
  OptionReader r(PetscOptionsObject);
  ierr = o.read(r);  // the block is closed (its strings freed) before an error is returned
  PetscOptionsEnd();
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode EngineOptions::setFromOptions(MPI_Comm comm, const char *prefix) {
  return readInOwnBlock(*this, comm, prefix, "hybridsens engine options");
}
PetscErrorCode GradientCheckOptions::setFromOptions(MPI_Comm comm, const char *prefix) {
  return readInOwnBlock(*this, comm, prefix, "hybridsens gradient check");
}
PetscErrorCode HessianCheckOptions::setFromOptions(MPI_Comm comm, const char *prefix) {
  return readInOwnBlock(*this, comm, prefix, "hybridsens Hessian check");
}

const std::vector<const char *> SolverOptions::hessianMethodChoices = {"auto", "foa", "hybrid"};
const std::vector<const char *> SolverOptions::taoHessianChoices = {"assembled", "matrix_free", "none"};
const std::vector<const char *> SolverOptions::taoGradientChoices = {"adjoint", "fd"};

PetscErrorCode SolverOptions::read(OptionReader &r) {
  PetscFunctionBeginUser;
  PetscCall(r.boolean("-hs_forward", "Forward (tangent-linear) sensitivities with the solve", &forward, &forwardSet));
  PetscCall(r.boolean("-hs_adjoint", "Gradients by the discrete adjoint after the solve", &adjoint, &adjointSet));
  PetscCall(r.integerList("-hs_forward_u0", "Initial-state components whose sensitivities are wanted (-1: none)", &forwardU0, -1, PETSC_MAX_INT,
                          &forwardU0Set));
  PetscCall(r.realList("-hs_output_times", "Times at which u (and S) are recorded; each becomes a step boundary", &outputTimes, Range::any(),
                       &outputTimesSet));
  PetscCall(r.boolean("-hs_hessian", "Full Hessian of every cost after each solve", &hessian, &hessianSet));
  PetscCall(r.choice("-hs_hessian_method", "Hessian method", hessianMethodChoices, &hessianMethod, &hessianMethodSet));
  PetscCall(engine.read(r));
  PetscCall(r.boolean("-hs_check_gradient", "Verify the gradient (adjoint vs forward, finite differences, Taylor) after the solve", &checkGradient));
  PetscCall(gradientCheck.read(r));
  PetscCall(r.boolean("-hs_check_hessian", "Verify the Hessian (symmetry, two methods, differences of gradients) after the solve", &checkHessian));
  PetscCall(hessianCheck.read(r));
  PetscInt h = taoHessian < 0 ? 0 : taoHessian, g = taoGradient < 0 ? 0 : taoGradient;
  PetscBool hSet, gSet;
  PetscCall(r.choice("-hs_tao_hessian", "TaoProblem: the Hessian TAO gets", taoHessianChoices, &h, &hSet));
  PetscCall(r.choice("-hs_tao_gradient", "TaoProblem: the gradient TAO gets", taoGradientChoices, &g, &gSet));
  if (hSet) taoHessian = h;
  if (gSet) taoGradient = g;
  PetscCall(r.boolean("-hs_test_drop_event_time_term", "Testing only: drop the event-time term of the jumps (gradients become wrong)",
                      &dropEventTimeTerm));
  PetscCall(r.boolean("-hs_test_drop_reset_terms", "Testing only: drop the reset Jacobian terms of the jumps (gradients become wrong)",
                      &dropResetTerms));
  PetscFunctionReturn(0);
}

const std::vector<std::string> &optionsReadByModels() {
  // MemoryModel (src/model/memory.cpp): a testing switch for the capture formula.
  static const std::vector<std::string> names = {"-hs_test_memory_partial_derivative"};
  return names;
}

} // namespace hybridsens
