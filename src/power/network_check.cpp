#include "network_check.hpp"

#include "case_text.hpp"

namespace hybridsens {
namespace power {

void addBus(NetworkCase &net, const Bus &b) {
  if (const Bus *seen = net.findBus(b.number))
    fail(b.where, "duplicate bus " + std::to_string(b.number) + " (already defined at " + seen->where.str() + ")");
  net.busIndex[b.number] = net.buses.size();
  net.buses.push_back(b);
}

namespace {
void needBus(const NetworkCase &net, int bus, const SourceLine &where, const char *what) {
  if (!net.findBus(bus)) fail(where, std::string(what) + " refers to bus " + std::to_string(bus) + ", which does not exist");
}
} // namespace

void checkNetwork(const NetworkCase &net) {
  for (const Load &l : net.loads) needBus(net, l.bus, l.where, "load");
  for (const FixedShunt &s : net.fixedShunts) needBus(net, s.bus, s.where, "fixed shunt");
  for (const SwitchedShunt &s : net.switchedShunts) needBus(net, s.bus, s.where, "switched shunt");
  for (const Generator &g : net.generators) needBus(net, g.bus, g.where, "generator");
  for (const Branch &b : net.branches) {
    needBus(net, b.from, b.where, "branch (from end)");
    needBus(net, b.to, b.where, "branch (to end)");
    if (b.from == b.to) fail(b.where, "branch connects bus " + std::to_string(b.from) + " to itself");
  }
  for (const Transformer &t : net.transformers) {
    needBus(net, t.from, t.where, "transformer (from end)");
    needBus(net, t.to, t.where, "transformer (to end)");
    if (t.from == t.to) fail(t.where, "transformer connects bus " + std::to_string(t.from) + " to itself");
  }
}

} // namespace power
} // namespace hybridsens
