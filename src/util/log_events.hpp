// The library's PETSc log events: with -log_view they show, next to PETSc's own TS/SNES/KSP
// events and inside the "hybridsens ..." stages, where a hybrid solve spends its time on
// events — guard evaluation, event location, transitions, the stored trajectory, the jumps.
#pragma once

#include <petscsys.h>

namespace hybridsens {

enum class LogEvent { GuardValues, GuardRates, EventLocation, Transition, Trajectory, JumpPrepare, JumpForward, JumpAdjoint };

// The PETSc id of e (all registered on the first call, after PetscInitialize).
PetscLogEvent logEventId(LogEvent e);

// Begin at construction, end at destruction (also on an early error return).
class ScopedLogEvent {
public:
  explicit ScopedLogEvent(LogEvent e) : id_(logEventId(e)) { (void)PetscLogEventBegin(id_, 0, 0, 0, 0); }
  ~ScopedLogEvent() { (void)PetscLogEventEnd(id_, 0, 0, 0, 0); }
  ScopedLogEvent(const ScopedLogEvent &) = delete;
  ScopedLogEvent &operator=(const ScopedLogEvent &) = delete;

private:
  PetscLogEvent id_;
};

} // namespace hybridsens
