// The JSON summary written by -hs_summary FILE. Key names are part of the interface:
// "final_time", "final_state", "final_discrete_state", "parameters", "events"
// ({"time","guard","kind","step","from","to"}), "stats" ({"steps","rejected_steps",
// "location_steps","events","located_events","location_steps_per_event","wall_seconds","adjoint_wall_seconds","reused_jacobians", with -hs_checkpoints "checkpointing":
// {"checkpoints","stored","most_held","recomputed_steps","recompute_ratio"}), and with forward sensitivities "costs",
// "objective", "forward_gradient" ({"p","u0","u0_indices"}), "sensitivity_final" (n × np); with -hs_adjoint "gradient" ({"p","u0","u0_indices"});
// with -hs_output_times "outputs" ([{"time","state","sensitivity" (n × np, with forward)}]); with
// -hs_hessian "hessian" ([cost][i][j], parameters then initial-state components), "hessian_method",
// "hessian_variables" ({"p": np, "u0_indices"}).
#include "hybridsens/solver.hpp"

#include "hybridsens/atomic_file.hpp"
#include "util/gather.hpp"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <ostream>
#include <streambuf>

namespace hybridsens {

// The parameter columns of a dense n × N sensitivity matrix as rows of the global state, on
// rank 0 only (rows is empty elsewhere; collective). Only rank 0 writes the summary: gathered to
// every rank, the np columns and their transpose took 2·n·np numbers on each rank (30 MB at
// 63k states and 29 parameters); one column at a time, rank 0 holds the rows and one column.
static PetscErrorCode gatherParameterColumns(Mat S, PetscInt np, std::vector<std::vector<PetscScalar>> &rows) {
  PetscInt n;
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCall(MatGetSize(S, &n, nullptr));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)S), &rank));
  rows.clear();
  if (rank == 0) rows.assign(n, std::vector<PetscScalar>(np));
  for (PetscInt j = 0; j < np; ++j) {
    Vec col;
    std::vector<PetscScalar> c;
    PetscCall(MatDenseGetColumnVecRead(S, j, &col));
    PetscCall(gatherToZero(col, c));
    PetscCall(MatDenseRestoreColumnVecRead(S, j, &col));
    for (size_t i = 0; i < c.size(); ++i) rows[i][j] = c[i];
  }
  PetscFunctionReturn(0);
}

// Streams text into an AtomicFile in 64 KiB pieces (AtomicFile::write keeps the first error for
// commit()): the summary is printed into the file as it is formatted, instead of first into one
// string as long as the file (55 MB at 63k states with the n × 29 "sensitivity_final").
class AtomicFileBuffer : public std::streambuf {
public:
  explicit AtomicFileBuffer(AtomicFile &out) : out_(out) { setp(buf_, buf_ + sizeof buf_); }

protected:
  int_type overflow(int_type c) override {
    sync();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    out_.write(std::string(pbase(), pptr()));
    setp(buf_, buf_ + sizeof buf_);
    return 0;
  }

private:
  AtomicFile &out_;
  char buf_[1 << 16];
};

PetscErrorCode Solver::writeSummary(const std::string &file) const {
  std::vector<PetscScalar> state;
  PetscMPIInt rank;
  const PetscInt np = (PetscInt)params_.size();
  const SolveResult &r = result_;
  PetscFunctionBeginUser;
  if (file.empty()) PetscFunctionReturn(0);
  PetscCheck(r.finalState(), model_.comm(), PETSC_ERR_ARG_WRONGSTATE, "-hs_summary / writeSummary: no solve() has succeeded yet, nothing to write");
  PetscCall(gatherToZero(r.finalState(), state));
  std::vector<std::vector<PetscScalar>> sens;
  if (Mat S = r.finalSensitivities()) PetscCall(gatherParameterColumns(S, np, sens));
  // Outputs at chosen times: state and (with forward sensitivities) S, gathered collectively to
  // rank 0, the only writer.
  nlohmann::json outputs = nlohmann::json::array();
  for (size_t i = 0; i < r.outputTimes.size(); ++i) {
    nlohmann::json o = {{"time", r.outputTimes[i]}};
    std::vector<PetscScalar> u;
    if (Vec x = r.outputState(i)) {
      PetscCall(gatherToZero(x, u));
      o["state"] = u;
    }
    if (Mat S = r.outputSensitivities(i)) {
      std::vector<std::vector<PetscScalar>> rows;
      PetscCall(gatherParameterColumns(S, np, rows));
      o["sensitivity"] = rows;
    }
    outputs.push_back(o);
  }
  // Written to a temporary file and renamed into place: a failed write leaves the previous
  // summary intact and is an error (on every rank).
  AtomicFile out;
  PetscCall(out.open(model_.comm(), "-hs_summary", file));
  PetscCallMPI(MPI_Comm_rank(model_.comm(), &rank));
  if (rank == 0) {
    nlohmann::json j;
    j["final_time"] = r.finalTime;
    j["final_state"] = state;
    j["final_discrete_state"] = r.finalDiscreteState;
    j["parameters"] = params_;
    j["parameter_names"] = model_.parameterNames();
    nlohmann::json ev = nlohmann::json::array();
    for (const EventRecord &e : r.events().records())
      ev.push_back({{"time", e.time},
                    {"guard", e.name},
                    {"kind", e.id.kind == EventId::Guard ? "guard" : "time"},
                    {"index", e.id.index},
                    {"step", e.step},
                    {"from", e.before},
                    {"to", e.after}});
    j["events"] = ev;
    std::vector<std::string> names;
    for (auto *c : costs_) names.push_back(c->name());
    j["costs"] = names;
    if (!r.objective.empty()) j["objective"] = r.objective;
    if (!r.hessian.empty()) {
      j["hessian"] = r.hessian;  // [cost][i][j], variables: parameters, then initial-state components
      j["hessian_method"] = hessianMethodName(r.hessianMethod);
      j["hessian_variables"] = {{"p", (PetscInt)params_.size()}, {"u0_indices", r.initialStateIndices}};
    }
    if (r.adjointComputed && !r.gradient.empty())
      j["gradient"] = {{"p", r.gradientTable(&CostGradient::adjointP)}, {"u0", r.gradientTable(&CostGradient::adjointU0)}, {"u0_indices", r.initialStateIndices}};
    if (r.finalSensitivities()) {
      j["forward_gradient"] = {{"p", r.gradientTable(&CostGradient::forwardP)}, {"u0", r.gradientTable(&CostGradient::forwardU0)}, {"u0_indices", r.initialStateIndices}};
      j["sensitivity_final"] = sens;
      std::vector<std::vector<PetscScalar>>().swap(sens);  // the JSON holds a copy now
    }
    if (!r.outputTimes.empty()) j["outputs"] = std::move(outputs);
    const SolveStats &s = r.stats;
    j["stats"] = {{"steps", s.steps}, {"rejected_steps", s.rejectedSteps}, {"location_steps", s.locationSteps},
                  {"events", s.events}, {"located_events", s.locatedEvents},
                  {"location_steps_per_event", s.locatedEvents > 0 ? (double)s.locationSteps / (double)s.locatedEvents : 0.0}, {"wall_seconds", s.wallSeconds}, {"adjoint_wall_seconds", s.adjointWallSeconds},
                  {"reused_jacobians", s.reusedJacobians}, {"ydot_solves", s.ydotSolves}};
    if (s.checkpoints > 0)
      j["stats"]["checkpointing"] = {{"checkpoints", s.checkpoints}, {"stored", s.checkpointsStored}, {"most_held", s.checkpointsMostHeld},
                                     {"recomputed_steps", s.recomputedSteps},
                                     {"recompute_ratio", s.steps > 0 ? (double)s.recomputedSteps / (double)s.steps : 0.0}};
    AtomicFileBuffer buffer(out);
    std::ostream stream(&buffer);
    stream << std::setw(2) << j << '\n';  // as j.dump(2)
    stream.flush();
  }
  PetscCall(out.commit());
  PetscFunctionReturn(0);
}

} // namespace hybridsens
