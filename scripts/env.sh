# Sourced by the scripts: OpenMPI refuses to run as root without these two variables, and
# oversubscription lets 3 ranks run on a 2-core machine.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Keep PETSc from reading a user's ~/.petscrc into the test runs.
export PETSC_OPTIONS="${PETSC_OPTIONS:-}"
HS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HS_BUILD="${HS_BUILD:-$HS_ROOT/build}"
hs_build() {
  cmake -S "$HS_ROOT" -B "$HS_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$HS_BUILD" -j "$(nproc)"
}
