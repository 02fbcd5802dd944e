// The one check, shared by the forward and the reverse sweep, that refuses configurations
// PETSc 3.18 (or our quadrature) would silently get wrong: TS types without TLM/adjoint,
// midpoint theta (our quadrature and jumps assume endpoint stages), RK tableaus with the μ bug
// (adjoint only), SNES lagging.
#pragma once

#include "engine/dynamics.hpp"

#include <petscts.h>

namespace hybridsens {

PetscErrorCode checkSensitivityConfiguration(TS ts, const Dynamics &dyn, bool adjoint);

} // namespace hybridsens
