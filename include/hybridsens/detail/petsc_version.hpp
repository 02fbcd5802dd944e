// Compile-time check that the PETSc in use is the one hybridsens supports: 3.18.x. The library
// reaches into PETSc 3.18's private TS structures (petsc/private/tsimpl.h) in a few places, whose
// layout changes between PETSc minor versions — another version would compile into wrong reads.
// The same check runs at configure time (CMakeLists.txt); a library configured with
// HYBRIDSENS_ALLOW_UNTESTED_PETSC=ON records that in hybridsens/version.hpp and skips it here.
#pragma once

#include "hybridsens/version.hpp"

#include <petscversion.h>

#if !defined(HYBRIDSENS_ALLOW_UNTESTED_PETSC) && (PETSC_VERSION_MAJOR != 3 || PETSC_VERSION_MINOR != 18)
#error "hybridsens supports PETSc 3.18.x only (it uses PETSc 3.18's private TS headers), but the PETSc headers found are another version (see PETSC_VERSION_MAJOR/MINOR in petscversion.h). Use PETSc 3.18, or configure hybridsens with -DHYBRIDSENS_ALLOW_UNTESTED_PETSC=ON at your own risk."
#endif
