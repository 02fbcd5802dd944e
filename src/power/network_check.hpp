// Consistency of a read case, shared by the RAW and MATPOWER readers: unique bus numbers, and
// every device attached to buses that exist (a line to itself is refused too).
#pragma once

#include <hybridsens/power/case_data.hpp>

namespace hybridsens {
namespace power {

// Adds b to net; a bus number seen before is an error naming both lines.
void addBus(NetworkCase &net, const Bus &b);
// Every load, shunt, generator, branch and transformer refers to existing buses.
void checkNetwork(const NetworkCase &net);

} // namespace power
} // namespace hybridsens
