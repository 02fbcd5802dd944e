#include "util/log_events.hpp"

#include <array>

namespace hybridsens {

PetscLogEvent logEventId(LogEvent e) {
  static const char *const names[] = {"HSGuardValues", "HSGuardRates", "HSEventLocation", "HSTransition",
                                      "HSTrajectory",  "HSJumpPrepare", "HSJumpForward",  "HSJumpAdjoint"};
  static std::array<PetscLogEvent, sizeof(names) / sizeof(names[0])> ids{};
  static bool registered = false;
  if (!registered) {
    PetscClassId cls;
    (void)PetscClassIdRegister("hybridsens", &cls);
    for (size_t i = 0; i < ids.size(); ++i) (void)PetscLogEventRegister(names[i], cls, &ids[i]);
    registered = true;
  }
  return ids[(size_t)e];
}

} // namespace hybridsens
