// applyReset: the one place that calls HybridModel::reset, enforcing the reset contract of
// model.hpp — a user's reset is never silently ignored (reset() overridden without hasReset())
// and a declared one never silently replaced by the identity (hasReset() true, reset() not
// overridden).
#pragma once

#include "hybridsens/model.hpp"

#include <string>

namespace hybridsens {

// Computes u⁺ of event `id` at (t, u⁻) into uplus when the event has a reset; *applied says
// whether it has (uplus is then the user's R(t, u⁻, p; d⁻); otherwise uplus is unspecified and
// the state stays u⁻). `name` is the event's name for messages. Collective.
PetscErrorCode applyReset(const HybridModel &model, const EventId &id, const std::string &name, PetscReal t, Vec uminus,
                          const ModeContext &c, Vec uplus, bool *applied);

} // namespace hybridsens
