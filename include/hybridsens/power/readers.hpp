// Readers of power-system case files. Each returns a PETSc error (PETSC_ERR_FILE_OPEN if the file
// cannot be opened, PETSC_ERR_FILE_UNEXPECTED for malformed content, PETSC_ERR_SUP for valid but
// unsupported content) whose message starts with "file:line:" and says what is wrong and what
// would be valid; the output is left empty then. Nothing is guessed: a truncated file, an unknown
// section or model, a wrong field count, a bad number, a duplicate bus or a reference to a bus
// that does not exist is an error.
//
// readRaw: PSS/E RAW revisions 32 and 33 (the revision is read from the first line; others are
// refused). Sections end with a "0 /" line and come in the revision's fixed order; text after
// '/' is a comment; strings are in single or double quotes. Read: buses, loads, fixed shunts,
// generators, branches, 2-winding transformers, areas, switched shunts (their initial
// susceptance). Zones, owners, inter-area transfers and multi-section line groupings are skipped
// (no electrical meaning). Refused: three-winding transformers; transformers with an
// off-nominal winding-2 ratio, an impedance correction table, magnetizing data as losses
// (CM = 2) or, with CZ = 2 or 3, a winding voltage other than the bus base; non-empty DC line,
// VSC, impedance correction, multi-terminal DC, FACTS, GNE or induction machine sections.
//
// readDyr: PSS/E DYR records "bus 'MODEL' id p1 p2 ... /", which may span lines. A record of a
// model that is not supported (or not among options.models) is an error naming file:line and the
// model, unless options.skipUnknownModels is set: then it is skipped and listed in DynamicData::skipped. With
// options.network, every record's bus must exist in it and carry a generator with that id.
//
// readMatpower: MATPOWER case format version 2 (mpc.version = '2'): mpc.baseMVA, mpc.bus,
// mpc.gen, mpc.branch; other fields (gencost, bus_name, areas, ...) are skipped; '%' starts a
// comment; rows end with ';' or a newline.
#pragma once

#include <hybridsens/power/case_data.hpp>
#include <hybridsens/power/dynamic_data.hpp>

#include <petscsys.h>

#include <string>
#include <vector>

namespace hybridsens {
namespace power {

PetscErrorCode readRaw(const std::string &path, NetworkCase *out);

struct DyrOptions {
  bool skipUnknownModels = false;
  const NetworkCase *network = nullptr;  // if set: buses and machine ids are checked against it
  // The models the caller supports (a subset of supportedDynamicModels(); empty: all of them):
  // the others are unsupported (refused, or skipped with skipUnknownModels).
  std::vector<std::string> models;
  // For the refusal's message: who refuses ("hybridsens-grid") and the option that skips (e.g. "-skip_unknown_models").
  std::string user, skipOption;
};
PetscErrorCode readDyr(const std::string &path, const DyrOptions &options, DynamicData *out);

PetscErrorCode readMatpower(const std::string &path, NetworkCase *out);

} // namespace power
} // namespace hybridsens
