// Calls into user code: a C++ exception must never cross a PETSc callback, so every user
// callback goes through HS_USER_CALL, which turns an exception into a PETSc error naming the
// callback. The error code a callback returns is propagated with PETSc's traceback.
#pragma once

#include <petscsys.h>

#include <exception>

#define HS_USER_CALL(comm, name, expr)                                                                       \
  do {                                                                                                       \
    PetscErrorCode hs_user_ierr_ = 0;                                                                        \
    HS_USER_QUERY(comm, name, hs_user_ierr_ = (expr));                                                       \
    PetscCall(hs_user_ierr_);                                                                                \
  } while (0)

// The same for a model query that returns a value instead of an error code (timeEvent,
// guardActive, eventName): `statement` assigns the result, e.g.
//   HS_USER_QUERY(comm, "timeEvent", info = model.timeEvent(k, p));
#define HS_USER_QUERY(comm, name, statement)                                                                 \
  do {                                                                                                       \
    try {                                                                                                    \
      statement;                                                                                             \
    } catch (const std::exception &hs_e_) {                                                                  \
      SETERRQ(comm, PETSC_ERR_LIB, "C++ exception in model callback %s: %s", name, hs_e_.what());           \
    } catch (...) {                                                                                          \
      SETERRQ(comm, PETSC_ERR_LIB, "Unknown C++ exception in model callback %s", name);                      \
    }                                                                                                        \
  } while (0)
