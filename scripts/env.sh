# Sourced by the scripts: OpenMPI refuses to run as root without these two variables, and
# oversubscription lets 3 ranks run on a 2-core machine.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# A rank waiting for a message yields its core instead of spinning: on a machine with more
# busy processes than cores a spinning rank keeps its partner from running (2 ranks of
# wecc9 -areas 112 on a loaded 2-core machine: 6.8 s spinning, 2.6 s yielding; docs/parallel.md).
export OMPI_MCA_mpi_yield_when_idle="${OMPI_MCA_mpi_yield_when_idle:-1}"
# Keep PETSc from reading a user's ~/.petscrc into the test runs.
export PETSC_OPTIONS="${PETSC_OPTIONS:-}"
HS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HS_BUILD="${HS_BUILD:-$HS_ROOT/build}"
hs_build() {
  cmake -S "$HS_ROOT" -B "$HS_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$HS_BUILD" -j "$(nproc)"
}
