// Captures the message of the PETSc error a call raises (instead of printing it), so that tests
// can assert what the message names.
#pragma once

#include <petscsys.h>

#include <string>

namespace hstest {

class ErrorCapture {
public:
  ErrorCapture() { PetscPushErrorHandler(&ErrorCapture::handler, this); }
  ~ErrorCapture() { PetscPopErrorHandler(); }
  ErrorCapture(const ErrorCapture &) = delete;
  ErrorCapture &operator=(const ErrorCapture &) = delete;
  // The first (innermost) message of the last error, and forget it.
  std::string take() {
    std::string m = message_;
    message_.clear();
    return m;
  }

private:
  std::string message_;
  static PetscErrorCode handler(MPI_Comm, int, const char *, const char *, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx) {
    auto *self = static_cast<ErrorCapture *>(ctx);
    if (p == PETSC_ERROR_INITIAL) self->message_ = mess ? mess : "";
    return n;
  }
};

} // namespace hstest
