// GoogleTest main for hybridsens tests: PETSc is initialized once per process (also under
// mpiexec; every rank runs every test, collectively).
#include <gtest/gtest.h>
#include <petscsys.h>

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (PetscInitialize(&argc, &argv, nullptr, nullptr)) return 1;
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  // Only rank 0 prints the gtest report; all ranks still run and assert.
  if (rank != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&result, &global, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  PetscFinalize();
  return global;
}
