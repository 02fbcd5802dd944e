// Library options, read from the PETSc options database (prefix -hs_).
#pragma once

#include <petscsys.h>

#include <string>

namespace hybridsens {

struct EngineOptions {
  PetscReal eventTol = 1e-12;        // -hs_event_tol: guard zero relative to its change over the step
  PetscInt maxEvents = 10000;        // -hs_max_events: more is Zeno/chattering → error
  PetscReal minEventSpacing = 1e-11; // -hs_min_event_spacing: two events of one source closer (relative to the horizon) → error
  PetscReal grazingTol = 1e-6;       // -hs_grazing_tol: |γ̇| below this (relative) at a crossing → error
  PetscBool hermite = PETSC_TRUE;    // -hs_event_hermite: look for two crossings hidden inside one step
  PetscInt maxLocationIterations = 100;
  PetscBool monitor = PETSC_FALSE;   // -hs_monitor: print events as they happen
  // -hs_event_derivative discrete|continuous: differentiate the event time through the steps
  // actually taken (exact for the computed trajectory; default), or with u̇⁻/u̇⁺ (DESIGN.md §4
  // as printed; O(h^order) from it).
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

  // Read -hs_* options (with an optional extra prefix) into this struct.
  PetscErrorCode setFromOptions(MPI_Comm comm, const char *prefix = nullptr);
};

} // namespace hybridsens
