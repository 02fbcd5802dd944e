// The JSON summary written by -hs_summary FILE. Key names are part of the interface:
// "final_time", "final_state", "final_discrete_state", "parameters", "events"
// ({"time","guard","kind","step","from","to"}), "stats" ({"steps","rejected_steps",
// "location_steps","events","wall_seconds","adjoint_wall_seconds"}), and with forward sensitivities "costs",
// "objective", "forward_gradient" ({"p","u0","u0_indices"}), "sensitivity_final" (n × np); with -hs_adjoint "gradient" ({"p","u0","u0_indices"}).
#include "hybridsens/solver.hpp"

#include "util/gather.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace hybridsens {

PetscErrorCode Solver::writeSummary(const std::string &file) const {
  std::vector<PetscScalar> state;
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  if (file.empty()) PetscFunctionReturn(0);
  PetscCall(gatherToAll(finalState(), state));
  // S(T) parameter columns, gathered column by column (collective).
  std::vector<std::vector<PetscScalar>> sens;
  if (Mat S = finalSensitivities()) {
    const PetscInt np = (PetscInt)params_.size();
    std::vector<std::vector<PetscScalar>> cols(np);
    for (PetscInt j = 0; j < np; ++j) {
      Vec col;
      PetscCall(MatDenseGetColumnVecRead(S, j, &col));
      PetscCall(gatherToAll(col, cols[j]));
      PetscCall(MatDenseRestoreColumnVecRead(S, j, &col));
    }
    sens.assign(state.size(), std::vector<PetscScalar>(np));
    for (size_t i = 0; i < state.size(); ++i)
      for (PetscInt j = 0; j < np; ++j) sens[i][j] = cols[j][i];
  }
  PetscCallMPI(MPI_Comm_rank(model_.comm(), &rank));
  if (rank == 0) {
    nlohmann::json j;
    j["final_time"] = finalTime();
    j["final_state"] = state;
    j["final_discrete_state"] = finalDiscreteState();
    j["parameters"] = params_;
    j["parameter_names"] = model_.parameterNames();
    nlohmann::json ev = nlohmann::json::array();
    for (const auto &r : events().records())
      ev.push_back({{"time", r.time},
                    {"guard", r.name},
                    {"kind", r.id.kind == EventId::Guard ? "guard" : "time"},
                    {"index", r.id.index},
                    {"step", r.step},
                    {"from", r.before},
                    {"to", r.after}});
    j["events"] = ev;
    std::vector<std::string> names;
    for (auto *c : costs_) names.push_back(c->name());
    j["costs"] = names;
    if (!objective_.empty()) j["objective"] = objective_;
    if (!adjGradP_.empty()) j["gradient"] = {{"p", adjGradP_}, {"u0", adjGradU0_}, {"u0_indices", u0Indices_}};
    if (finalSensitivities()) {
      j["forward_gradient"] = {{"p", fwdGradP_}, {"u0", fwdGradU0_}, {"u0_indices", u0Indices_}};
      j["sensitivity_final"] = sens;
    }
    const SolveStats s = stats();
    j["stats"] = {{"steps", s.steps}, {"rejected_steps", s.rejectedSteps}, {"location_steps", s.locationSteps},
                  {"events", s.events}, {"wall_seconds", s.wallSeconds}, {"adjoint_wall_seconds", s.adjointWallSeconds}};
    std::ofstream out(file);
    PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open -hs_summary file %s", file.c_str());
    out << j.dump(2) << "\n";
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
