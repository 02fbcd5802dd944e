// Helpers shared by the tests: scoped PETSc options and capture of PETSc error messages.
#pragma once

#include <gtest/gtest.h>
#include <hybridsens/solver.hpp>
#include <petscsys.h>

#include <string>
#include <vector>

namespace hstest {

// Sets PETSc options for the lifetime of the object (e.g. "-ts_type rk -ts_dt 1e-3").
class ScopedOptions {
public:
  explicit ScopedOptions(const std::string &opts) {
    PetscOptionsInsertString(nullptr, opts.c_str());
    // Remember the option names so they can be removed again.
    std::string tok;
    for (size_t i = 0; i <= opts.size(); ++i) {
      if (i == opts.size() || opts[i] == ' ') {
        if (tok.size() > 1 && tok[0] == '-' && !(tok[1] >= '0' && tok[1] <= '9') && tok[1] != '.') names_.push_back(tok);
        tok.clear();
      } else tok += opts[i];
    }
  }
  ~ScopedOptions() {
    for (auto &n : names_) PetscOptionsClearValue(nullptr, n.c_str());
  }

private:
  std::vector<std::string> names_;
};

// While alive, PETSc errors do not print; the first (innermost) message is kept.
class ErrorCapture {
public:
  ErrorCapture() { PetscPushErrorHandler(handler, this); }
  ~ErrorCapture() { PetscPopErrorHandler(); }
  const std::string &message() const { return message_; }

private:
  static PetscErrorCode handler(MPI_Comm, int, const char *, const char *, PetscErrorCode n, PetscErrorType p,
                                const char *mess, void *ctx) {
    auto *self = static_cast<ErrorCapture *>(ctx);
    if (p == PETSC_ERROR_INITIAL && mess) self->message_ = mess;
    return n;
  }
  std::string message_;
};

// A test's integrator: `type` with the fixed step dt up to T, with -ts_adapt_type none and
// `options` set while the solver reads them.
inline PetscErrorCode configureFixedStep(hybridsens::Solver &s, TSType type, PetscReal dt, PetscReal T, const std::string &options = "") {
  ScopedOptions o("-ts_adapt_type none " + options);
  PetscFunctionBeginUser;
  PetscCall(s.setFromOptions());  // creates the TS
  PetscCall(TSSetType(s.ts(), type));
  PetscCall(TSSetTimeStep(s.ts(), dt));
  PetscCall(TSSetMaxTime(s.ts(), T));
  PetscCall(s.setFromOptions());
  PetscFunctionReturn(0);
}

inline double relDiff(double a, double b) { return std::abs(a - b) / std::max(1e-300, std::max(std::abs(a), std::abs(b))); }

} // namespace hstest
