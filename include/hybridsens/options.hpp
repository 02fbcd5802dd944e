// The library's options, read from the PETSc options database under the TS's options prefix
// (-hs_... or -<prefix>hs_...), all in one PetscOptionsBegin block by Solver::setFromOptions so
// that -help lists every one of them and an unknown -hs_ option is an error.
#pragma once

#include "hybridsens/option_reader.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace hybridsens {

// Event detection and location, and what the engine reports.
struct EngineOptions {
  // -hs_event_tol: a located guard is zero to this, relative to its change over the step. The
  // event time, and so every gradient through it, is only as exact as this tolerance: it is
  // bounded by 1e-6 (a value near 1 would accept a step end as the event and miss crossings).
  PetscReal eventTol = 1e-12;
  PetscInt maxEvents = 10000;        // -hs_max_events: more is Zeno/chattering → error
  PetscReal minEventSpacing = 1e-11; // -hs_min_event_spacing: two events of one source closer (relative to the horizon) → error
  PetscReal grazingTol = 1e-6;       // -hs_grazing_tol: |γ̇| below this (relative) at a crossing → error
  PetscBool hermite = PETSC_TRUE;    // -hs_event_hermite: look for two crossings hidden inside one step
  PetscInt maxLocationIterations = 100;  // -hs_event_max_iterations
  PetscBool monitor = PETSC_FALSE;   // -hs_monitor: print events as they happen
  // -hs_event_derivative discrete|continuous: differentiate the event time through the steps
  // actually taken (exact for the computed trajectory; default), or with u̇⁻/u̇⁺ (the
  // continuous-time jump conditions; O(h^order) from the former).
  PetscBool discreteEventDerivative = PETSC_TRUE;
  // -hs_adjoint_reuse_jacobians: the reverse sweep copies f_u and f_p evaluated again at the
  // same (t, u, mode) instead of re-evaluating them (bitwise the same values; off for comparison).
  PetscBool reuseAdjointJacobians = PETSC_TRUE;
  std::string summaryFile;           // -hs_summary FILE: JSON summary
  std::string trajectoryDir;         // -hs_trajectory_dir DIR: keep the trajectory on disk
  // -hs_trajectory_max_memory BYTES (suffix k, M, G: powers of 1024): the most the trajectory
  // kept in memory for the reverse sweeps may take, all ranks together; 0: 3/4 of the memory
  // available when the run starts. Reaching it is an error that points to -hs_trajectory_dir.
  PetscReal trajectoryMaxMemory = 0;
  // -hs_checkpoints K (K >= 1): keep at most K states of the trajectory and re-take the other
  // steps during the reverse sweeps (binomial schedule; docs/checkpointing.md); 0: keep every step.
  PetscInt checkpoints = 0;
  std::string checkpointsDir;        // -hs_checkpoints_dir DIR: the K states on disk (each rank its part)
  // Testing only (-hs_test_rebuilt_steps): re-take checkpointed steps and step back in the
  // adjoint with the sizes rebuilt from the stored times, t_n − t_{n−1} (as PETSc's own
  // recomputation does), instead of the sizes the integrator took: gradients change.
  PetscBool testRebuiltSteps = PETSC_FALSE;

  PetscErrorCode read(OptionReader &r);
  // Reads the engine options alone, in their own block (the Solver reads them with the rest).
  PetscErrorCode setFromOptions(MPI_Comm comm, const char *prefix = nullptr);
};

// Options of checkGradient (hybridsens/verify.hpp).
struct GradientCheckOptions {
  PetscReal relativeStep = 1e-6;   // -hs_check_gradient_step: FD step h_j = step · max(|p_j|, 1e-2)
  PetscReal tolerance = 1e-6;      // -hs_check_gradient_tol: max |adjoint − FD| / max|gradient|
  PetscReal consistencyTol = 1e-10;  // adjoint vs forward (both exact derivatives of the same map)
  // -hs_check_gradient_taylor_step: largest Taylor step, relative to each parameter's own size
  // (parameters of very different magnitude — a gain of 20 and a fault time of 1 s — are each
  // moved by at most this fraction of themselves, so the event sequence survives).
  PetscReal taylorStep = 1e-3;
  PetscErrorCode read(OptionReader &r);
  PetscErrorCode setFromOptions(MPI_Comm comm, const char *prefix = nullptr);
};

// Options of checkHessian (hybridsens/hessian.hpp).
struct HessianCheckOptions {
  PetscReal relativeStep = 1e-3;    // -hs_check_hessian_step: h_j = step · max(|p_j|, 1e-2)
  PetscReal tolerance = 1e-7;       // -hs_check_hessian_tol: max |Hv − FD| / max |H|
  PetscReal symmetryTol = 1e-10;    // max |H − Hᵀ| / max |H|
  PetscReal consistencyTol = 1e-10; // forward-over-adjoint vs hybrid, relative to max |H|
  PetscErrorCode read(OptionReader &r);
  PetscErrorCode setFromOptions(MPI_Comm comm, const char *prefix = nullptr);
};

// Everything Solver::setFromOptions reads besides the TS's own options.
struct SolverOptions {
  EngineOptions engine;
  PetscBool forward = PETSC_FALSE, adjoint = PETSC_FALSE, hessian = PETSC_FALSE;
  PetscBool forwardSet = PETSC_FALSE, adjointSet = PETSC_FALSE, hessianSet = PETSC_FALSE;
  PetscInt hessianMethod = 0;                // index into hessianMethodChoices: auto, foa, hybrid
  PetscBool hessianMethodSet = PETSC_FALSE;
  std::vector<PetscInt> forwardU0;           // -hs_forward_u0 i,j,... (-1: none)
  PetscBool forwardU0Set = PETSC_FALSE;
  std::vector<PetscReal> outputTimes;        // -hs_output_times t1,t2,...
  PetscBool outputTimesSet = PETSC_FALSE;
  PetscBool checkGradient = PETSC_FALSE;     // -hs_check_gradient
  GradientCheckOptions gradientCheck;
  PetscBool checkHessian = PETSC_FALSE;      // -hs_check_hessian
  HessianCheckOptions hessianCheck;
  PetscInt taoHessian = -1, taoGradient = -1;  // -hs_tao_hessian / -hs_tao_gradient; -1: not given
  // Testing only: switch a jump term off to prove that the checks catch its absence.
  PetscBool dropEventTimeTerm = PETSC_FALSE, dropResetTerms = PETSC_FALSE;

  static const std::vector<const char *> hessianMethodChoices, taoHessianChoices, taoGradientChoices;
  // Reads all of the above; `names` receives every option name read (for the unknown-option check).
  PetscErrorCode read(OptionReader &r);
};

// -hs_ options that are read elsewhere than in SolverOptions::read (by a model), so that the
// unknown-option check knows them.
const std::vector<std::string> &optionsReadByModels();

} // namespace hybridsens
