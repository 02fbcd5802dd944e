// Disturbances of a grid simulation (CaseGrid): three-phase bus faults and setpoint steps, given
// by the command line (one fault) or by a small JSON events file:
//
//   {"events": [
//     {"type": "bus_fault", "bus": 9, "t_on": 1.0, "t_off": 1.1, "r": 1e-4},
//     {"type": "setpoint_step", "bus": 2, "setpoint": "Vref", "time": 2.0, "size": 0.02},
//     {"type": "line_trip", "from": 5, "to": 7, "circuit": "1", "time": 1.5},
//     {"type": "generator_trip", "bus": 3, "id": "1", "time": 2.0}
//   ]}
//
// (a bare array of entries is accepted too). A bus fault is a shunt conductance 1/r at the bus
// between t_on and t_off (r optional, default 1e-4 pu); a setpoint step adds size to the exciter
// voltage reference Vref or to the mechanical power reference Pref (the governor's setpoint, or
// the turbine power without a governor; pu on the system base) of the generator at the bus at
// the given time; a line trip opens the branch (line or transformer) from–to with that circuit
// id (optional where only one connects the two buses) for good at the given time; a generator
// trip disconnects the in-service generator at the bus with that machine id (optional where the
// bus has one) for good at the given time: its current injection leaves the network and its
// states freeze (case_grid.hpp). Times and sizes are parameters of the model (CaseGrid::parameterNames()).
// Every malformed entry (unknown type or key, a missing or non-numeric value, t_on >= t_off, a
// non-positive time or r) is refused naming the file and the entry; a bus without a generator
// or a bus that does not exist is refused when the model is built.
#pragma once

#include <petscsys.h>

#include <string>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

struct GridEvent {
  enum Kind { BusFault, SetpointStep, LineTrip, GeneratorTrip } kind = BusFault;
  std::string where;  // "events.json: entry 2 (bus_fault)", for messages
  PetscInt entry = 0; // 1-based position in the file (0: the command line's fault)
  int bus = 0;        // the faulted bus, or the generator's bus
  PetscReal r = 1e-4; // fault resistance (pu)
  PetscReal tOn = 0, tOff = 0;  // fault times
  std::string setpoint;         // "Vref" or "Pref"
  PetscReal time = 0, size = 0; // step (or trip) time and size
  int from = 0, to = 0;         // the tripped branch's buses
  std::string circuit;          // and its circuit id ("": the only one between them)
  std::string id;               // the tripped generator's machine id at bus ("": the only one there)
};

// Reads the events file (collective: every rank reads it; errors name path and entry).
PetscErrorCode readGridEvents(MPI_Comm comm, const std::string &path, std::vector<GridEvent> *out);

} // namespace grid
} // namespace power
} // namespace hybridsens
