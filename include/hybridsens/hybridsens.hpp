// hybridsens: hybrid ODE/DAE simulation with exact discrete sensitivities through events.
#pragma once

#include "hybridsens/version.hpp"
#include "hybridsens/detail/petsc_version.hpp"

#include "hybridsens/atomic_file.hpp"
#include "hybridsens/event_log.hpp"
#include "hybridsens/hessian.hpp"
#include "hybridsens/memory.hpp"
#include "hybridsens/model.hpp"
#include "hybridsens/monitors.hpp"
#include "hybridsens/options.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/result.hpp"
#include "hybridsens/second_order.hpp"
#include "hybridsens/small_model.hpp"
#include "hybridsens/solver.hpp"
#include "hybridsens/tao.hpp"
#include "hybridsens/vec_entry.hpp"
#include "hybridsens/verify.hpp"
