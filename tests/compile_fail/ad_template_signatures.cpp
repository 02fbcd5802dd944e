// Compile-fail cases for the AD front ends (tests/CMakeLists.txt builds this file once per
// HS_CASE and expects the static_assert text): an optional template whose signature does not
// match what ADModel / ADCost / LocalKernelModel call used to be ignored without a word (the
// reset taken as the identity, the guard, time event or cost term dropped). HS_CASE 0 is the
// control: the same models with the right signatures compile.
#include <hybridsens/ad.hpp>
#include <hybridsens/ad_local.hpp>

using namespace hybridsens;

#ifndef HS_CASE
#define HS_CASE 0
#endif

class Ball : public ADModel<Ball> {
public:
  PetscInt stateSize() const override { return 2; }
  template <class S> void initialState(const S *, S *u0) const { u0[0] = 1.0, u0[1] = 0.0; }
  template <class S> void rhs(S, const S *u, const S *, const DiscreteState &, S *f) const { f[0] = u[1], f[1] = -9.81; }
  PetscInt numGuards() const override { return 1; }
  bool hasReset(const EventId &) const override { return true; }
#if HS_CASE == 1  // reset without its EventId argument
  template <class S> void reset(S, const S *u, const S *, const DiscreteState &, S *uplus) const { uplus[1] = -u[1]; }
#else
  template <class S> void reset(const EventId &, S, const S *u, const S *, const DiscreteState &, S *uplus) const { uplus[1] = -u[1]; }
#endif
#if HS_CASE == 2  // guard without its index
  template <class S> S guard(S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
#else
  template <class S> S guard(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
#endif
  PetscInt numTimeEvents() const override { return 1; }
#if HS_CASE == 3  // eventTime with the parameters by value
  template <class S> S eventTime(PetscInt, S *p) const { return p[0]; }
#else
  template <class S> S eventTime(PetscInt, const S *p) const { return p[0]; }
#endif
};

class Height : public ADCost<Height> {
public:
#if HS_CASE == 4  // terminal without the discrete state
  template <class S> S terminal(S, const S *u, const S *) const { return u[0]; }
#else
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
#endif
};

struct Spring {  // a LocalKernelModel kernel
  static constexpr int numReads = 2, numWrites = 2;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const { f[0] = u[1], f[1] = -u[0]; }
#if HS_CASE == 5  // kernel reset with the state as a reference
  template <class S> void reset(const EventId &, S, const S &u, const S *, const DiscreteState &, S *uplus) const { uplus[1] = -u; }
#else
  template <class S> void reset(const EventId &, S, const S *u, const S *, const DiscreteState &, S *uplus) const { uplus[1] = -u[1]; }
#endif
};

struct Start {  // a kernel with its own transposed start product
  static constexpr int numReads = 0, numWrites = 1, numParams = 1;
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[0]; }
#if HS_CASE == 6  // the transposed product without its count
  void initialStateTranspose(const PetscReal *, const PetscScalar *const *w, PetscScalar *const *out) const { out[0][0] += w[0][0]; }
#else
  void initialStateTranspose(const PetscReal *, const PetscScalar *const *w, PetscScalar *const *out, int count) const {
    for (int k = 0; k < count; ++k) out[k][0] += w[k][0];
  }
#endif
};

class Grid : public LocalKernelModel {
public:
  Grid() {
    add(Spring{}, {{0, 1}, {0, 1}, {}, {}});
    add(Start{}, {{}, {0}, {0}, {}});
  }
};

int main() {
  Ball ball;
  Height height;
  Grid grid;
  (void)ball, (void)height, (void)grid;
  return 0;
}
