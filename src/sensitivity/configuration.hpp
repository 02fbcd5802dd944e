// The checks that refuse integrator configurations PETSc 3.18 (or our quadrature) would
// silently get wrong. checkIntegratorConfiguration runs for every solve: TS types the engine
// cannot step (or whose stages the integral costs cannot read), theta outside (0, 1], midpoint
// theta with integral costs. checkSensitivityConfiguration, shared by the forward and the
// reverse sweep, adds what tangents and adjoints need: TS types without TLM/adjoint, midpoint
// theta (our quadrature and jumps assume endpoint stages), RK tableaus with the μ bug (adjoint
// only), SNES lagging.
#pragma once

#include "engine/dynamics.hpp"

#include <petscts.h>

namespace hybridsens {

// usesStages: the run integrates costs (or sensitivities) from the step's stages.
PetscErrorCode checkIntegratorConfiguration(TS ts, const Dynamics &dyn, bool usesStages);
PetscErrorCode checkSensitivityConfiguration(TS ts, const Dynamics &dyn, bool adjoint);

} // namespace hybridsens
