// Model evaluations for a step re-taken from a checkpoint (Dynamics::setRetaking, set by
// Engine::replayStep): they repeat evaluations the forward run made, and checked, at the same
// points bit for bit. While retaking, Dynamics neither checks finiteness again nor touches the
// reverse sweep's evaluation cache; outside, both work as before. The values themselves are the
// model's either way (the gradients' bit identity is tests/checkpointing.py's).
//
// Model: x' = p·x on two states; its rhs and Jacobian return NaN once `poisoned` is set (what a
// finiteness check would catch), so a skipped check is observable.
#include "test_support.hpp"

#include "engine/dynamics.hpp"

#include <hybridsens/hybridsens.hpp>

#include <limits>

using namespace hybridsens;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

class Scaled : public HybridModel {
public:
  bool poisoned = false;
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }
  PetscInt localSize() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  std::vector<PetscReal> defaultParameters() const override { return {0.5}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecSet(u0, 1.0); }
  PetscScalar scale(const ModeContext &c) const { return poisoned ? std::numeric_limits<PetscReal>::quiet_NaN() : c.p[0]; }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(u, f));
    PetscCall(VecScale(f, scale(c)));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < 2; ++i) PetscCall(MatSetValue(J, i, i, scale(c), INSERT_VALUES));
    PetscFunctionReturn(0);
  }
};

struct Fixture {
  Scaled model;
  Dynamics dyn{model, model.defaultParameters(), 0};
  Vec u = nullptr, f = nullptr;
  PetscErrorCode setUp() {
    PetscFunctionBeginUser;
    PetscCall(dyn.setUp());
    dyn.mode = model.initialDiscreteState();
    PetscCall(VecDuplicate(dyn.templateVec(), &u));
    PetscCall(VecDuplicate(u, &f));
    PetscCall(VecSet(u, 2.0));
    PetscFunctionReturn(0);
  }
  ~Fixture() {
    VecDestroy(&u);
    VecDestroy(&f);
  }
};

} // namespace

TEST(Retaking, SkipsTheFinitenessChecksOnlyWhileRetaking) {
  Fixture x;
  HS_OK(x.setUp());
  x.model.poisoned = true;
  {
    hstest::ErrorCapture quiet;
    EXPECT_NE(x.dyn.rhs(0.0, x.u, x.dyn.mode, x.f), 0);
    EXPECT_NE(x.dyn.rhsJacobian(0.0, x.u, x.dyn.mode), 0);
    EXPECT_NE(quiet.message().find("NaN or Inf returned by model callback"), std::string::npos) << quiet.message();
  }
  x.dyn.setRetaking(true);
  EXPECT_EQ(x.dyn.rhs(0.0, x.u, x.dyn.mode, x.f), 0);
  EXPECT_EQ(x.dyn.rhsJacobian(0.0, x.u, x.dyn.mode), 0);
  x.dyn.setRetaking(false);
  hstest::ErrorCapture quiet;
  EXPECT_NE(x.dyn.rhs(0.0, x.u, x.dyn.mode, x.f), 0) << "the checks are back after the re-take";
}

TEST(Retaking, LeavesTheEvaluationCacheToTheReverseSweep) {
  Fixture x;
  HS_OK(x.setUp());
  x.dyn.reuseRepeatedJacobians(true);
  HS_OK(x.dyn.rhsJacobian(0.0, x.u, x.dyn.mode));  // a reversed step evaluates f_u at (0, u): stored
  // A re-take in between evaluates f_u elsewhere (another state) and at the same point: it
  // neither evicts the stored entry nor reads it.
  Vec other;
  HS_OK(VecDuplicate(x.u, &other));
  HS_OK(VecSet(other, 3.0));
  x.dyn.setRetaking(true);
  HS_OK(x.dyn.rhsJacobian(0.0, other, x.dyn.mode));
  HS_OK(x.dyn.rhsJacobian(0.0, x.u, x.dyn.mode));
  x.dyn.setRetaking(false);
  EXPECT_EQ(x.dyn.reusedJacobians(), 0) << "a re-take read the cache";
  HS_OK(x.dyn.rhsJacobian(0.0, x.u, x.dyn.mode));  // the next reversed step at the same point: a copy
  EXPECT_EQ(x.dyn.reusedJacobians(), 1) << "a re-take evicted the reverse sweep's entry";
  PetscScalar v;
  PetscInt i = 0;
  HS_OK(MatGetValues(x.dyn.J(), 1, &i, 1, &i, &v));
  EXPECT_EQ(v, 0.5);
  HS_OK(VecDestroy(&other));
  x.dyn.reuseRepeatedJacobians(false);
}
