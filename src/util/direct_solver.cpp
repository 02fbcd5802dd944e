#include "util/direct_solver.hpp"

namespace hybridsens {

PetscErrorCode setDirectSolveDefaults(KSP ksp) {
  PC pc;
  PetscMPIInt size;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  if (size > 1) PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
