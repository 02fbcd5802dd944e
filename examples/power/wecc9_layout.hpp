// Where the states, parameters, discrete flags and guards of N coupled 9-bus areas live.
#pragma once

#include "wecc9_data.hpp"

namespace wecc9 {
using namespace hybridsens;

// Where everything lives, for N areas of which the first K carry parameters.
// State: area a occupies rows [na, na + n) (n = 57, 63 with -governors): its generators (9 rows
// each: 0 E'q 1 E'd 2 δ 3 ω 4 Id 5 Iq 6 Efd 7 RF 8 VR), its buses (Vr, Vi each; Vr's row is also
// the bus' "imaginary current" balance, Vi's the "real current" one), then constant states
// (ẋ = 0, x(0) from the initialization): (Vref, KA) per generator, Pm per generator (mechanical
// power, the governor's Pref), the loads' reference |V0|; then with -governors (x1 valve, x2
// turbine) per generator. Generators and buses are numbered globally: generator g is generator
// g % 3 of area g / 3, bus b is bus b % 9 of area b / 9. Contiguous areas keep a rank's rows
// together in parallel.
// Parameters: P_g, Q_g, KA_g of the 3K generators and Vm_b, θ_b of the 9K buses of the
// parameter areas, and the two fault times; for K = 1 the order is (P1..3, Q1..3, t_on, t_off,
// KA1..3, Vm1..9, th1..9) — 29 in all; with -governors the droops R_g follow (32 for K = 1).
// Areas beyond K use the nominal data as constants.
struct Layout {
  PetscInt areas = 1, paramAreas = 1;
  bool governors = false;
  PetscInt areaStates() const { return areaBaseStates + (governors ? 2 * areaGens : 0); }
  PetscInt numGens() const { return areaGens * areas; }
  PetscInt numBuses() const { return areaBuses * areas; }
  PetscInt numStates() const { return areaStates() * areas; }
  PetscInt gs(PetscInt g, PetscInt k) const { return areaStates() * (g / areaGens) + genStates * (g % areaGens) + k; }
  PetscInt vr(PetscInt b) const { return areaStates() * (b / areaBuses) + areaGens * genStates + 2 * (b % areaBuses); }
  PetscInt vi(PetscInt b) const { return vr(b) + 1; }
  PetscInt vref(PetscInt g) const { return areaStates() * (g / areaGens) + areaConstStart + 2 * (g % areaGens); }
  PetscInt ka(PetscInt g) const { return vref(g) + 1; }
  PetscInt pm(PetscInt g) const { return areaStates() * (g / areaGens) + areaConstStart + 2 * areaGens + g % areaGens; }
  PetscInt loadRef(PetscInt a, PetscInt l) const { return areaStates() * a + areaConstStart + 3 * areaGens + l; }
  PetscInt gov(PetscInt g, PetscInt k) const { return areaStates() * (g / areaGens) + areaBaseStates + 2 * (g % areaGens) + k; }  // k: 0 x1, 1 x2
  PetscInt genBusOf(PetscInt g) const { return areaBuses * (g / areaGens) + genBus[g % areaGens]; }
  // Parameter indices (only for generators/buses of the parameter areas: hasParams).
  bool hasParams(PetscInt areaOf) const { return areaOf < paramAreas; }
  PetscInt pP(PetscInt g) const { return g; }
  PetscInt pQ(PetscInt g) const { return areaGens * paramAreas + g; }
  PetscInt pTon() const { return 2 * areaGens * paramAreas; }
  PetscInt pToff() const { return pTon() + 1; }
  PetscInt pKA(PetscInt g) const { return pToff() + 1 + g; }
  PetscInt pVm(PetscInt b) const { return pKA(areaGens * paramAreas) + b; }
  PetscInt pTh(PetscInt b) const { return pVm(areaBuses * paramAreas) + b; }
  PetscInt pR(PetscInt g) const { return pTh(areaBuses * paramAreas) + g; }
  PetscInt numParams() const { return pR(governors ? areaGens * paramAreas : 0); }
  // Limiters: ℓ = g the exciter VR of generator g, ℓ = numGens() + g its governor valve.
  PetscInt numLimiters() const { return governors ? 2 * numGens() : numGens(); }
};

// Discrete state: d[0] fault on (0/1); d[1+ℓ] limiter ℓ: 0 free, +1 at max, −1 at min.
inline PetscInt limiterFlag(PetscInt l) { return 1 + l; }
// Guards of limiter ℓ: 4ℓ + GuardKind (hit max, hit min, leave max, leave min).
using power::grid::GuardKind;
using power::grid::HitMax;
using power::grid::HitMin;
using power::grid::LeaveMax;
using power::grid::LeaveMin;
// Time events (applied in this order at one instant).
enum TimeEvent : PetscInt { FaultOn = 0, FaultOff = 1, LimiterCheckOn = 2, LimiterCheckOff = 3 };

} // namespace wecc9
