// Set-up checks of the local-kernel AD path shared by LocalKernelModel and LocalKernelCost.
#pragma once

#include <petscsys.h>

#include <string>

namespace hybridsens {
namespace ad {
namespace local {

// A set-up error found on some ranks only becomes an error on every rank (the rank that found
// it prints its message), so that no rank waits in a collective call.
inline PetscErrorCode collectiveCheck(MPI_Comm comm, const std::string &error, const char *who) {
  PetscMPIInt bad = error.empty() ? 0 : 1, anyBad = 0;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: %s", who, error.c_str());
  PetscCheck(!anyBad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: invalid declaration (reported by another rank)", who);
  PetscFunctionReturn(0);
}

} // namespace local
} // namespace ad
} // namespace hybridsens
