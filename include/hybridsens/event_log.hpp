// EventLog: what happened at each event, in the order the transitions were applied. The
// reverse sweep replays it backwards; nothing else from the forward sweep is needed there.
#pragma once

#include "hybridsens/model.hpp"

#include <petscvec.h>

#include <string>
#include <vector>

namespace hybridsens {

struct EventRecord {
  PetscInt step = 0;          // trajectory index of the step that ends at the event time
  PetscReal time = 0;         // event time τ (a step boundary)
  EventId id;                 // guard or time event that fired
  std::string name;           // its name (from the model)
  DiscreteState before, after;
  PetscInt orderAtInstant = 0;  // 0 for the first transition at this instant, 1 for the next...
  // A time event at a point the step grid reached anyway (no step was cut short to land on
  // it): the computed objective has a kink there in the event time, and the library's
  // derivative is the one for an earlier event (the left derivative in the event time; see
  // src/jump/event_tangents.hpp).
  bool onStepGrid = false;
  // Snapshots owned by the record (destroyed with the log).
  Vec uminus = nullptr, uplus = nullptr;        // state just before / after this transition
  Vec udotminus = nullptr, udotplus = nullptr;  // u̇ just before (mode `before`) / after (`after`)
};

class EventLog {
public:
  EventLog() = default;
  ~EventLog() { clear(); }
  EventLog(const EventLog &) = delete;
  EventLog &operator=(const EventLog &) = delete;

  void clear() {
    for (auto &r : records_) {
      VecDestroy(&r.uminus);
      VecDestroy(&r.uplus);
      VecDestroy(&r.udotminus);
      VecDestroy(&r.udotplus);
    }
    records_.clear();
  }
  EventRecord &add(EventRecord r) {
    records_.push_back(std::move(r));
    return records_.back();
  }
  const std::vector<EventRecord> &records() const { return records_; }
  size_t size() const { return records_.size(); }

private:
  std::vector<EventRecord> records_;
};

} // namespace hybridsens
