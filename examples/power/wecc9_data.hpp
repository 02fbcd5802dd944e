// WECC 9-bus data of PETSc's ex9bus.c (Sauer & Pai, ch. 7): bus admittances, machine and exciter
// constants, the power-flow voltages and dispatch, loads; and the sizes of one 9-bus area.
#pragma once

#include <hybridsens/ad_local.hpp>
#include <hybridsens/power/grid_kernels.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace wecc9 {
using namespace hybridsens;

using power::grid::GenData;
using power::grid::omegaS;
// One area is ex9bus' 9-bus system; -areas N couples N identical copies (see Layout).
constexpr PetscInt areaGens = 3, areaBuses = 9, genStates = 9;
// Per area: generators, buses, then constant states (Vref, KA) per generator, Pm per generator,
// the loads' reference |V0| (57 rows), then with -governors (x1, x2) per generator.
constexpr PetscInt areaConstStart = areaGens * genStates + 2 * areaBuses;  // 45
constexpr PetscInt areaBaseStates = areaConstStart + 3 * areaGens + 3;     // 57
constexpr PetscInt genBus[areaGens] = {0, 1, 2};
constexpr PetscInt loadBus[3] = {4, 5, 7};

// Dispatch from ex9bus' load flow, and its power-flow voltages V0 (bus b: Vr, Vi).
const PetscReal P0[areaGens] = {0.716786142395021, 1.630000000000000, 0.850000000000000};
const PetscReal Q0[areaGens] = {0.270702180178785, 0.066120127797275, -0.108402221791588};
const PetscReal V0[2 * areaBuses] = {1.04, 0.0, 1.0115856072004659, 0.16528629496995645, 1.0216048295777422, 0.08335809608923525,
                                1.0249353469218594, -0.03967289055406254, 0.9931096437804608, -0.06926811030369806,
                                1.0104641368769802, -0.06513369436653811, 1.0234726765728006, 0.06652686979784567,
                                1.0156774020826715, 0.012874998897784764, 1.0316489469094174, 0.03541042096750376};

// Bus admittance matrix Y = G + jB (ex9bus' Ybus.bin, lines and transformers), nonzeros (i, j, G, B).
struct YEntry {
  PetscInt i, j;
  PetscReal G, B;
};
const YEntry Ybus[] = {
    {0, 0, 0.030140727054618014, -17.361008783459972}, {0, 3, -0.030140727054618014, 17.361058783459974},
    {1, 1, 0.025599934464167775, -15.999909040104857}, {1, 6, -0.025599934464167775, 15.999959040104857},
    {2, 2, 0.02912081351904647, -17.064746722161228},  {2, 8, -0.02912081351904647, 17.06479672216123},
    {3, 0, -0.030140727054618014, 17.361058783459974}, {3, 3, 3.337519689079925, -39.30878639846784},
    {3, 4, -1.3651877133105799, 11.60409556313993},    {3, 5, -1.9421912487147268, 10.510682051867933},
    {4, 3, -1.3651877133105799, 11.60409556313993},    {4, 4, 2.5527920926017282, -17.338230096448523},
    {4, 6, -1.1876043792911486, 5.975134533308591},    {5, 3, -1.9421912487147268, 10.510682051867933},
    {5, 5, 3.2242003871388416, -15.840927014229457},   {5, 8, -1.2820091384241146, 5.588244962361526},
    {6, 1, -0.025599934464167775, 15.999959040104857}, {6, 4, -1.1876043792911486, 5.975134533308591},
    {6, 6, 2.830326787001452, -35.445522170321894},    {6, 7, -1.6171224732461358, 13.697978596908442},
    {7, 6, -1.6171224732461358, 13.697978596908442},   {7, 7, 2.7722099541362324, -23.30324902327161},
    {7, 8, -1.1550874808900968, 9.784270426363172},    {8, 2, -0.02912081351904647, 17.06479672216123},
    {8, 5, -1.2820091384241146, 5.588244962361526},    {8, 7, -1.1550874808900968, 9.784270426363172},
    {8, 8, 2.4662174328332576, -32.15376211088593}};

const GenData gen[areaGens] = {
    {23.64, 0.0, 0.146, 0.0608, 0.4360, 0.0969, 8.96, 0.31, 0.2, 1.0, 0.314, 0.063, 0.35, 0.0039, 1.555, -4.0, 7.0},
    {6.4, 0.0, 0.8958, 0.1198, 0.8645, 0.1969, 6.0, 0.535, 0.2, 1.0, 0.314, 0.063, 0.35, 0.0039, 1.555, -4.0, 7.0},
    {3.01, 0.0, 1.3125, 0.1813, 1.2578, 0.25, 5.89, 0.6, 0.2, 1.0, 0.314, 0.063, 0.35, 0.0039, 1.555, -4.0, 7.0}};
const PetscReal loadP[3] = {1.25, 0.9, 1.0}, loadQ[3] = {0.5, 0.3, 0.35};

} // namespace wecc9
