// The library's PETSc log events: with -log_view they show, next to PETSc's own TS/SNES/KSP
// events and inside the "hybridsens ..." stages, where a hybrid solve spends its time on
// events — guard evaluation, event location, transitions, the stored trajectory, the jumps.
#pragma once

#include <petscsys.h>

namespace hybridsens {

enum class LogEvent { GuardValues, GuardRates, EventLocation, Transition, Trajectory, JumpPrepare, JumpForward, JumpAdjoint };

// The PETSc id of e (all registered on the first call, after PetscInitialize).
PetscLogEvent logEventId(LogEvent e);

// Begin at construction, end at destruction (also on an early error return). Only while PETSc
// logs (-log_view, -log_trace, ...): registering the events makes PETSc grow its event logs,
// a fixed cost that was a tenth of a small model's whole solve.
class ScopedLogEvent {
public:
  explicit ScopedLogEvent(LogEvent e) {
    PetscBool logging = PETSC_FALSE;
    (void)PetscLogIsActive(&logging);
    if (!logging) return;
    id_ = logEventId(e);
    (void)PetscLogEventBegin(id_, 0, 0, 0, 0);
  }
  ~ScopedLogEvent() {
    if (id_ >= 0) (void)PetscLogEventEnd(id_, 0, 0, 0, 0);
  }
  ScopedLogEvent(const ScopedLogEvent &) = delete;
  ScopedLogEvent &operator=(const ScopedLogEvent &) = delete;

private:
  PetscLogEvent id_ = -1;
};

} // namespace hybridsens
