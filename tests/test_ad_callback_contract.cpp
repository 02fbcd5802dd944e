// The AD front ends' side of the callback contract (model.hpp): a reset, guard or time event the
// model declares but whose template is missing, or a reset template the model does not declare,
// is refused at run time instead of being taken as the identity / dropped. (Mismatched
// signatures are compile errors: tests/compile_fail/.)
#include "test_support.hpp"

#include <hybridsens/ad.hpp>
#include <hybridsens/ad_local.hpp>
#include <hybridsens/vec_entry.hpp>

using namespace hybridsens;
using hstest::ErrorCapture;

namespace {

// ẋ = 1 from x = 0; guard 'ceiling' x − 1 (rising); no reset template (ClimbWithReset: x⁺ =
// x⁻/2). DeclareReset: hasReset() returns true; otherwise it is HybridModel's default (as if
// not overridden).
template <bool DeclareReset> class Climb : public ADModel<Climb<DeclareReset>> {
public:
  PetscInt stateSize() const override { return 1; }
  template <class S> void initialState(const S *, S *u0) const { u0[0] = 0.0; }
  template <class S> void rhs(S, const S *, const S *, const DiscreteState &, S *f) const { f[0] = 1.0; }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"ceiling", Direction::Rising}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return u[0] - 1.0; }
  bool hasReset(const EventId &id) const override { return DeclareReset ? true : HybridModel::hasReset(id); }
};
template <bool DeclareReset> class ClimbWithReset : public ADModel<ClimbWithReset<DeclareReset>> {
public:
  PetscInt stateSize() const override { return 1; }
  template <class S> void initialState(const S *, S *u0) const { u0[0] = 0.0; }
  template <class S> void rhs(S, const S *, const S *, const DiscreteState &, S *f) const { f[0] = 1.0; }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"ceiling", Direction::Rising}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return u[0] - 1.0; }
  template <class S> void reset(const EventId &, S, const S *u, const S *, const DiscreteState &, S *up) const { up[0] = 0.5 * u[0]; }
  bool hasReset(const EventId &id) const override { return DeclareReset ? true : HybridModel::hasReset(id); }
};

// A time event declared without an eventTime template.
class TimeEventWithoutTemplate : public ADModel<TimeEventWithoutTemplate> {
public:
  PetscInt stateSize() const override { return 1; }
  template <class S> void initialState(const S *, S *u0) const { u0[0] = 0.0; }
  template <class S> void rhs(S, const S *, const S *, const DiscreteState &, S *f) const { f[0] = 1.0; }
  PetscInt numTimeEvents() const override { return 1; }
};

// Runs to T = 1.4 (the guard fires once, at t = 1); returns the error code and the final x.
PetscErrorCode run(HybridModel &model, PetscScalar *xT) {
  Solver solver(model);
  PetscFunctionBeginUser;
  PetscCall(hstest::configureFixedStep(solver, TSRK, 0.1, 1.4));
  PetscCall(solver.solve());
  PetscCall(globalEntry(solver.result().finalState(), 0, xT));
  PetscFunctionReturn(0);
}

// LocalKernelModel: one kernel, with or without a reset template.
struct Rise {
  static constexpr int numReads = 1, numWrites = 1;
  template <class S> void residual(S, const S *, const S *, const DiscreteState &, S *f) const { f[0] = 1.0; }
  template <class S> void initialState(const S *, S *u0) const { u0[0] = 0.0; }
  template <class S> S guard(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return u[0] - 1.0; }
};
struct RiseAndHalve : Rise {
  template <class S> void reset(const EventId &, S, const S *u, const S *, const DiscreteState &, S *up) const { up[0] = 0.5 * u[0]; }
};
template <class K, bool DeclareReset> class Kernels : public LocalKernelModel {
public:
  Kernels() {
    setSizes(1);
    add(K{}, {{0}, {0}, {}, {0}});
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"ceiling", Direction::Rising}; }
  bool hasReset(const EventId &id) const override { return DeclareReset ? true : HybridModel::hasReset(id); }
};

} // namespace

TEST(ADCallbackContract, ResetTemplateDeclaredIsApplied) {
  ClimbWithReset<true> model;
  PetscScalar xT = 0;
  ASSERT_EQ(run(model, &xT), 0);
  EXPECT_NEAR(PetscRealPart(xT), 0.9, 1e-12);  // 1/2 at t = 1, then + 0.4
}

TEST(ADCallbackContract, NoResetAnywhereIsTheIdentity) {
  Climb<false> model;
  PetscScalar xT = 0;
  ASSERT_EQ(run(model, &xT), 0);
  EXPECT_NEAR(PetscRealPart(xT), 1.4, 1e-12);
}

TEST(ADCallbackContract, ResetTemplateWithoutHasResetIsRefused) {
  ClimbWithReset<false> model;  // used to run with the reset ignored: x(T) = 1.4 instead of 0.9
  PetscScalar xT = 0;
  ErrorCapture err;
  EXPECT_NE(run(model, &xT), 0);
  EXPECT_NE(err.message().find("implements reset() but not hasReset()"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("'ceiling'"), std::string::npos) << err.message();
}

TEST(ADCallbackContract, HasResetWithoutTemplateIsRefused) {
  Climb<true> model;  // used to take the identity
  PetscScalar xT = 0;
  ErrorCapture err;
  EXPECT_NE(run(model, &xT), 0);
  EXPECT_NE(err.message().find("hasReset() is true for event 'ceiling' but the model has no reset template"), std::string::npos)
      << err.message();
}

TEST(ADCallbackContract, TimeEventWithoutTemplateIsRefused) {
  TimeEventWithoutTemplate model;  // used to place the event at t = 0 (never fired)
  PetscScalar xT = 0;
  ErrorCapture err;
  EXPECT_NE(run(model, &xT), 0);
  EXPECT_NE(err.message().find("no eventTime template"), std::string::npos) << err.message();
}

TEST(ADCallbackContract, LocalKernelResetWithoutHasResetIsRefused) {
  Kernels<RiseAndHalve, false> model;
  ASSERT_EQ(model.setUp(), 0);
  PetscScalar xT = 0;
  ErrorCapture err;
  EXPECT_NE(run(model, &xT), 0);
  EXPECT_NE(err.message().find("implements reset() but not hasReset()"), std::string::npos) << err.message();
}

TEST(ADCallbackContract, LocalKernelHasResetWithoutKernelResetIsRefused) {
  Kernels<Rise, true> model;
  ASSERT_EQ(model.setUp(), 0);
  PetscScalar xT = 0;
  ErrorCapture err;
  EXPECT_NE(run(model, &xT), 0);
  EXPECT_NE(err.message().find("no kernel type has a reset template"), std::string::npos) << err.message();
}

TEST(ADCallbackContract, LocalKernelDeclaredResetIsApplied) {
  Kernels<RiseAndHalve, true> model;
  ASSERT_EQ(model.setUp(), 0);
  PetscScalar xT = 0;
  ASSERT_EQ(run(model, &xT), 0);
  EXPECT_NEAR(PetscRealPart(xT), 0.9, 1e-12);
}
