#include "hybridsens/options.hpp"

#include <cctype>
#include <cstdlib>

namespace hybridsens {

// "1048576", "64k", "512M", "2G" (powers of 1024) → bytes; anything else is refused by name.
static PetscErrorCode parseByteCount(MPI_Comm comm, const char *option, const char *text, PetscReal *bytes) {
  char *end = nullptr;
  PetscFunctionBeginUser;
  const double v = std::strtod(text, &end);
  double scale = 1;
  if (end && *end) {
    const char u = (char)std::toupper((unsigned char)*end);
    scale = u == 'K' ? 1024.0 : u == 'M' ? 1024.0 * 1024 : u == 'G' ? 1024.0 * 1024 * 1024 : 0;
    if (scale != 0) ++end;
  }
  PetscCheck(end != text && end && *end == '\0' && scale != 0 && v > 0 && v * scale < 1e300, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "%s %s: expected a positive number of bytes, optionally with a suffix k, M or G (e.g. 512M)", option, text);
  *bytes = (PetscReal)(v * scale);
  PetscFunctionReturn(0);
}

PetscErrorCode EngineOptions::setFromOptions(MPI_Comm comm, const char *prefix) {
  char file[PETSC_MAX_PATH_LEN] = "", bytes[64] = "";
  PetscBool flg, bytesSet;
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, "hybridsens engine options", "hybridsens");
  PetscCall(PetscOptionsReal("-hs_event_tol", "Guard location tolerance, relative to the guard's change over the step", "", eventTol, &eventTol, nullptr));
  PetscCall(PetscOptionsInt("-hs_max_events", "Maximum number of events (more is treated as Zeno/chattering)", "", maxEvents, &maxEvents, nullptr));
  PetscCall(PetscOptionsReal("-hs_min_event_spacing", "Minimum spacing of two events of one source, relative to the horizon", "", minEventSpacing, &minEventSpacing, nullptr));
  PetscCall(PetscOptionsReal("-hs_grazing_tol", "Relative threshold on the guard's time derivative at a crossing", "", grazingTol, &grazingTol, nullptr));
  PetscCall(PetscOptionsBool("-hs_event_hermite", "Detect two crossings inside one step from guard derivatives", "", hermite, &hermite, nullptr));
  PetscCall(PetscOptionsInt("-hs_event_max_iterations", "Maximum event-location iterations", "", maxLocationIterations, &maxLocationIterations, nullptr));
  const char *kinds[] = {"continuous", "discrete"};
  PetscInt kind = discreteEventDerivative ? 1 : 0;
  PetscCall(PetscOptionsEList("-hs_event_derivative", "Event-time derivative: of the steps taken (discrete) or with the continuous state derivative", "", kinds, 2, kinds[kind], &kind, nullptr));
  discreteEventDerivative = kind == 1 ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-hs_adjoint_reuse_jacobians", "Reverse sweep: copy f_u, f_p and the integrands' r_u, r_p evaluated again at the same (t, u, mode)", "", reuseAdjointJacobians,
                             &reuseAdjointJacobians, nullptr));
  PetscCall(PetscOptionsBool("-hs_monitor", "Print events as they happen", "", monitor, &monitor, nullptr));
  PetscCall(PetscOptionsString("-hs_summary", "Write a JSON summary to this file", "", file, file, sizeof(file), &flg));
  if (flg) summaryFile = file;
  char dir[PETSC_MAX_PATH_LEN] = "";
  PetscCall(PetscOptionsString("-hs_trajectory_dir", "Keep the trajectory on disk in this directory (long runs)", "", dir, dir, sizeof(dir), &flg));
  if (flg) trajectoryDir = dir;
  PetscCall(PetscOptionsString("-hs_trajectory_max_memory", "Most memory the in-memory trajectory may take (bytes; suffix k, M, G)", "", bytes, bytes, sizeof(bytes), &bytesSet));
  PetscOptionsEnd();
  if (bytesSet) PetscCall(parseByteCount(comm, "-hs_trajectory_max_memory", bytes, &trajectoryMaxMemory));
  PetscCheck(eventTol > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_event_tol must be positive");
  PetscCheck(maxEvents >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-hs_max_events must be non-negative");
  PetscFunctionReturn(0);
}

} // namespace hybridsens
