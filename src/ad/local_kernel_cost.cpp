// LocalKernelCost (hybridsens/ad_local.hpp): everything that does not depend on the cost
// kernel types — set-up checks, gathers and scatters — compiled once here; the evaluation
// lives in CostGroup<K> (hybridsens/detail/ad_local_groups.hpp).
#include "hybridsens/ad_local.hpp"

#include "ad/collective_check.hpp"

namespace hybridsens {

bool LocalKernelCost::accept(const ad::local::KernelShape &kernel, const Coupling &c, std::vector<PetscInt> &readPos) {
  if (!error_.empty()) return false;
  const std::string what = std::string("cost kernel ") + kernel.type;
  if (space_.isSetUp()) return fail("add() after setUp()"), false;
  if (!model_.indexSpace().hasRanges()) return fail("call the model's setSizes() before building its costs"), false;
  if (!c.writes.empty() || !c.guards.empty()) return fail(what + ": a cost kernel has no writes or guards"), false;
  if (kernel.reads >= 0 && (int)c.reads.size() != kernel.reads) return fail(what + ": reads.size() != numReads"), false;
  if (kernel.params >= 0 && (int)c.params.size() != kernel.params) return fail(what + ": params.size() != numParams"), false;
  for (PetscInt g : c.reads)
    if (g < 0 || g >= model_.globalSize()) return fail(what + ": state index " + std::to_string(g) + " out of range"), false;
  for (PetscInt k : c.params)
    if (k < 0 || k >= (PetscInt)model_.defaultParameters().size()) return fail(what + ": parameter index out of range"), false;
  terminal_ |= kernel.terminal, integrand_ |= kernel.integrand;
  if (!space_.hasRanges()) space_.setRanges(model_.indexSpace().ranges(), model_.indexSpace().rank());
  const bool here = c.reads.empty() ? model_.indexSpace().rank() == 0 : model_.owns(c.reads[0]);
  if (!here) return false;
  for (PetscInt g : c.reads) readPos.push_back(space_.add(g));
  return true;
}

PetscErrorCode LocalKernelCost::setUp() {
  PetscFunctionBeginUser;
  PetscCheck(model_.isSetUp(), model_.comm(), PETSC_ERR_ORDER, "LocalKernelCost::setUp: set the model up first");
  PetscCheck(!space_.isSetUp(), model_.comm(), PETSC_ERR_ORDER, "LocalKernelCost::setUp() called twice");
  PetscCall(ad::local::collectiveCheck(model_.comm(), error_, "LocalKernelCost"));
  PetscBool parts[2] = {terminal_ ? PETSC_TRUE : PETSC_FALSE, integrand_ ? PETSC_TRUE : PETSC_FALSE};
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, parts, 2, MPIU_BOOL, MPI_LOR, model_.comm()));
  terminal_ = parts[0], integrand_ = parts[1];
  if (!space_.hasRanges()) space_.setRanges(model_.indexSpace().ranges(), model_.indexSpace().rank());
  PetscCall(space_.setUp(model_.templateVec()));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelCost::integrandTimeDerivative(PetscReal t, Vec u, const ModeContext &c, PetscScalar *r_t) const {
  PetscFunctionBeginUser;
  PetscCall(check("integrandTimeDerivative"));
  PetscCall(space_.gather(u, space_.work(0)));
  ad::local::WorkRead x(space_.work(0));
  const ad::local::Point z{t, x.data(), c.p, c.d};
  PetscScalar s = 0;
  for (auto &g : groups_)
    if (g->has(ad::local::CostPart::Integrand)) s += g->timeDerivative(ad::local::CostPart::Integrand, 0, z);
  *r_t = s;
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelCost::check(const char *where) const {
  PetscFunctionBeginUser;
  PetscCheck(space_.isSetUp(), model_.comm(), PETSC_ERR_ORDER, "LocalKernelCost::%s called before setUp()", where);
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelCost::valueOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const {
  PetscFunctionBeginUser;
  PetscCall(check("value"));
  PetscCall(space_.gather(u, space_.work(0)));
  ad::local::WorkRead x(space_.work(0));
  const ad::local::Point z{t, x.data(), c.p, c.d};
  PetscScalar s = 0;
  for (auto &g : groups_)
    if (g->has(part)) s += g->value(part, i, z);
  *value = s;
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelCost::gradientOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const {
  PetscFunctionBeginUser;
  PetscCall(check("gradient"));
  PetscCall(space_.gather(u, space_.work(0)));
  PetscCall(VecZeroEntries(space_.work(1)));
  std::vector<PetscScalar> gpl(c.p.size(), 0.0);
  {
    ad::local::WorkRead x(space_.work(0));
    ad::local::WorkWrite gw(space_.work(1));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    for (auto &g : groups_)
      if (g->has(part)) g->gradient(part, i, z, gw.data(), gpl.data());
  }
  for (size_t k = 0; k < gpl.size(); ++k) gp[k] += gpl[k];
  PetscCall(VecZeroEntries(gu));
  PetscCall(space_.scatterAdd(space_.work(1), gu));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelCost::hessianOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                         const SecondOrderOutput &out) const {
  std::vector<PetscScalar> op(c.p.size(), 0.0);
  PetscScalar ot = 0;
  PetscFunctionBeginUser;
  PetscCall(check("hessian"));
  PetscCall(space_.gather(u, space_.work(0)));
  if (dir.du) PetscCall(space_.gather(dir.du, space_.work(3)));
  else PetscCall(VecZeroEntries(space_.work(3)));
  PetscCall(VecZeroEntries(space_.work(1)));
  {
    ad::local::WorkRead x(space_.work(0)), du(space_.work(3));
    ad::local::WorkWrite ow(space_.work(1));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    const ad::local::Direction2 d2{nullptr, du.data(), dir.dp, dir.dt};
    const ad::local::Output2 o2{ow.data(), op.data(), &ot};
    for (auto &g : groups_)
      if (g->has(part)) g->hessian(part, i, z, d2, o2);
  }
  if (out.u) {
    PetscCall(VecZeroEntries(out.u));
    PetscCall(space_.scatterAdd(space_.work(1), out.u));
  }
  if (out.p)
    for (size_t k = 0; k < op.size(); ++k) out.p[k] = op[k];
  if (out.t) *out.t = ot;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
