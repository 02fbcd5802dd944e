/* LD_PRELOAD shim for PETSc TAO examples that are run as peers (tests/example_wecc9_opt.py runs
   PETSc's power_grid/stability_9bus/ex9busopt with it).

   Such an example prints its objective with %g only and has a hard-coded start point. The shim
   interposes two TAO calls the example makes from its own code:
     TaoSetObjectiveAndGradient — wraps the example's callback so that every evaluation prints
       "hs_tao_trace x <x...> f <f> g <g...>" to stdout with 17 significant digits;
     TaoSetSolution — with HS_TAO_TRACE_X0="a,b,c" set, overwrites the start point first.
   The example itself is not modified; everything else goes to the real PETSc functions. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <petsctao.h>

typedef PetscErrorCode (*ObjGrad)(Tao, Vec, PetscReal *, Vec, void *);
static ObjGrad userObjGrad;

static void *realSymbol(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "petsc_tao_trace: %s not found\n", name);
    abort();
  }
  return f;
}

static PetscErrorCode printVec(const char *label, Vec v)
{
  const PetscScalar *a;
  PetscInt           n, i;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayRead(v, &a));
  printf(" %s", label);
  for (i = 0; i < n; ++i) printf(" %.17g", (double)PetscRealPart(a[i]));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode tracedObjGrad(Tao tao, Vec x, PetscReal *f, Vec g, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(userObjGrad(tao, x, f, g, ctx));
  printf("hs_tao_trace");
  PetscCall(printVec("x", x));
  printf(" f %.17g", (double)*f);
  PetscCall(printVec("g", g));
  printf("\n");
  fflush(stdout);
  PetscFunctionReturn(0);
}

PetscErrorCode TaoSetObjectiveAndGradient(Tao tao, Vec g, ObjGrad fg, void *ctx)
{
  PetscErrorCode (*real)(Tao, Vec, ObjGrad, void *) = (PetscErrorCode(*)(Tao, Vec, ObjGrad, void *))realSymbol("TaoSetObjectiveAndGradient");
  userObjGrad = fg;
  return real(tao, g, fg ? tracedObjGrad : NULL, ctx);
}

PetscErrorCode TaoSetSolution(Tao tao, Vec x)
{
  PetscErrorCode (*real)(Tao, Vec) = (PetscErrorCode(*)(Tao, Vec))realSymbol("TaoSetSolution");
  const char    *start = getenv("HS_TAO_TRACE_X0");
  if (start && x) {
    PetscScalar *a;
    PetscInt     n, i;
    char        *end;
    PetscCall(VecGetLocalSize(x, &n));
    PetscCall(VecGetArray(x, &a));
    for (i = 0; i < n; ++i) {
      a[i] = strtod(start, &end);
      if (end == start) {
        fprintf(stderr, "petsc_tao_trace: HS_TAO_TRACE_X0 needs %d comma-separated numbers\n", (int)n);
        abort();
      }
      start = *end == ',' ? end + 1 : end;
    }
    PetscCall(VecRestoreArray(x, &a));
  }
  return real(tao, x);
}
