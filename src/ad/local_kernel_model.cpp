// LocalKernelModel (hybridsens/ad_local.hpp): everything that does not depend on the kernel
// types — set-up checks, layout, the index space and its scatters, Jacobian patterns and
// assembly, time events — compiled once here. The kernel-type-dependent evaluation lives in
// KernelGroup<K> (hybridsens/detail/ad_local_groups.hpp), reached through KernelGroupBase.
#include "hybridsens/ad_local.hpp"

#include "ad/collective_check.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

namespace {
// Fills the first np columns of a dense matrix M (rows distributed like the state) from a
// column-major m × np work array at IndexSpace positions: column k += reverse-scatter(Jw[:, k]).
PetscErrorCode addDenseColumns(const ad::local::IndexSpace &space, const std::vector<PetscScalar> &Jw, PetscInt np, Mat M) {
  const PetscInt m = space.size();
  Vec w = space.work(1), col;
  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < np; ++k) {
    PetscCall(VecPlaceArray(w, Jw.data() + k * m));
    PetscCall(MatDenseGetColumnVec(M, k, &col));
    PetscCall(space.scatterAdd(w, col));
    PetscCall(MatDenseRestoreColumnVec(M, k, &col));
    PetscCall(VecResetArray(w));
  }
  PetscFunctionReturn(0);
}
} // namespace

LocalKernelModel::~LocalKernelModel() { VecDestroy(&templ_); }

bool LocalKernelModel::accept(const ad::local::KernelShape &kernel, const Coupling &c, std::vector<PetscInt> &readPos,
                              std::vector<PetscInt> &writePos) {
  if (!error_.empty()) return false;
  if (space_.isSetUp()) return fail("add() after setUp()"), false;
  if (globalSizeUnset()) return fail("add() before setSizes()"), false;
  const std::string what = std::string("kernel ") + kernel.type;
  if (kernel.reads >= 0 && (int)c.reads.size() != kernel.reads) return fail(what + ": reads.size() != numReads"), false;
  if (kernel.writes >= 0 && (int)c.writes.size() != kernel.writes) return fail(what + ": writes.size() != numWrites"), false;
  if (kernel.params >= 0 && (int)c.params.size() != kernel.params) return fail(what + ": params.size() != numParams"), false;
  if (!c.guards.empty() && !kernel.guard) return fail(what + ": guards declared but no guard<S>() template"), false;
  for (const auto *list : {&c.reads, &c.writes})
    for (size_t i = 0; i < list->size(); ++i) {
      const PetscInt g = (*list)[i];
      if (g < 0 || g >= globalSize()) return fail(what + ": state index " + std::to_string(g) + " out of range"), false;
      for (size_t j = 0; j < i; ++j)
        if ((*list)[j] == g) return fail(what + ": index " + std::to_string(g) + " repeated in one coupling list"), false;
    }
  for (PetscInt g : c.guards)
    if (g < 0) return fail(what + ": negative guard index"), false;
  if (kernel.reset)
    for (PetscInt w : c.writes)
      if (std::find(c.reads.begin(), c.reads.end(), w) == c.reads.end())
        return fail(what + ": a kernel with a reset must read every row it writes (row " + std::to_string(w) + ")"), false;
  for (PetscInt k : c.params)
    if (k < 0) return fail(what + ": negative parameter index"), false;
  if (!evaluatesHere(c)) return false;
  for (PetscInt g : c.reads) readPos.push_back(space_.add(g));
  for (PetscInt g : c.writes) writePos.push_back(space_.add(g));
  maxParam_ = std::max(maxParam_, c.params.empty() ? -1 : *std::max_element(c.params.begin(), c.params.end()));
  for (PetscInt g : c.guards) maxGuard_ = std::max(maxGuard_, g);
  return true;
}

// Shared body of the reset vector callbacks: work(1) = Σ kernel contributions at write/read
// positions, given u⁻ (work(0)) and an optional input vector (work(2)); then, if out is
// given, out = in (or u⁻) + reverse-scatter(work(1)).
template <class Fn> PetscErrorCode LocalKernelModel::resetVector(PetscReal t, Vec uminus, const ModeContext &c, Vec in, Vec out, Fn &&fn) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("reset"));
  PetscCall(space_.gather(uminus, space_.work(0)));
  if (in) PetscCall(space_.gather(in, space_.work(2)));
  PetscCall(VecZeroEntries(space_.work(1)));
  {
    ad::local::WorkRead x(space_.work(0)), v(space_.work(2));
    ad::local::WorkWrite o(space_.work(1));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    for (auto &g : groups_)
      if (g->hasReset()) fn(*g, z, (const PetscScalar *)v.data(), o.data());
  }
  if (out) {
    PetscCall(VecCopy(in ? in : uminus, out));
    PetscCall(space_.scatterAdd(space_.work(1), out));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::setSizes(PetscInt N, PetscInt nlocal) {
  PetscMPIInt size, rank;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm_, &size));
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  PetscCall(PetscSplitOwnership(comm_, &nlocal, &N));
  std::vector<PetscInt> all(size), ranges(size + 1, 0);
  PetscCallMPI(MPI_Allgather(&nlocal, 1, MPIU_INT, all.data(), 1, MPIU_INT, comm_));
  for (PetscMPIInt r = 0; r < size; ++r) ranges[r + 1] = ranges[r] + all[r];
  PetscCheck(ranges[size] == N, comm_, PETSC_ERR_ARG_SIZ, "LocalKernelModel::setSizes: local sizes sum to %" PetscInt_FMT ", not %" PetscInt_FMT,
             ranges[size], N);
  space_.setRanges(ranges, rank);
  rank_ = rank;
  n_ = nlocal;
  PetscFunctionReturn(0);
}

void LocalKernelModel::setAlgebraic(const std::vector<PetscInt> &idx) {
  for (PetscInt g : idx)
    if (owns(g)) alg_.push_back(g);
}

bool LocalKernelModel::evaluatesHere(const Coupling &c) const {
  if (!c.writes.empty()) return owns(c.writes[0]);
  if (!c.reads.empty()) return owns(c.reads[0]);
  return rank_ == 0;
}

PetscErrorCode LocalKernelModel::setUp() {
  PetscFunctionBeginUser;
  PetscCheck(!globalSizeUnset(), comm_, PETSC_ERR_ORDER, "LocalKernelModel: call setSizes() before adding kernels and setUp()");
  PetscCheck(!space_.isSetUp(), comm_, PETSC_ERR_ORDER, "LocalKernelModel::setUp() called twice");
  const PetscInt ng = numGuards();
  if (error_.empty() && maxGuard_ >= ng) fail("guard index " + std::to_string(maxGuard_) + " >= numGuards() = " + std::to_string(ng));
  if (error_.empty() && maxParam_ >= (PetscInt)defaultParameters().size())
    fail("parameter index " + std::to_string(maxParam_) + " >= number of parameters " + std::to_string(defaultParameters().size()));
  PetscCall(ad::local::collectiveCheck(comm_, error_, "LocalKernelModel"));
  // Every guard claimed exactly once over all ranks.
  std::vector<PetscInt> claims(ng, 0), total(ng, 0);
  for (size_t gi = 0; gi < groups_.size(); ++gi)
    for (PetscInt k = 0; k < groups_[gi]->count(); ++k) {
      const auto gs = groups_[gi]->guardsOf(k);
      for (int kk = 0; kk < (int)gs.size(); ++kk) {
        ++claims[gs[kk]];
        guardOwner_[gs[kk]] = {gi, k, kk};
      }
    }
  PetscCallMPI(MPI_Allreduce(claims.data(), total.data(), (int)ng, MPIU_INT, MPI_SUM, comm_));
  for (PetscInt j = 0; j < ng; ++j)
    PetscCheck(total[j] == 1, comm_, PETSC_ERR_ARG_WRONG, "LocalKernelModel: guard %" PetscInt_FMT " is evaluated by %" PetscInt_FMT " kernel instances (must be exactly 1)",
               j, total[j]);
  PetscCall(VecCreateMPI(comm_, n_, globalSize(), &templ_));
  PetscCall(space_.setUp(templ_));
  PetscFunctionReturn(0);
}

PetscInt LocalKernelModel::localKernelCount() const {
  PetscInt c = 0;
  for (auto &g : groups_) c += g->count();
  return c;
}

PetscErrorCode LocalKernelModel::createJacobian(Mat *J) const {
  std::vector<PetscInt> rows, cols;
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("createJacobian"));
  jacobianEntries(rows, cols);
  PetscCall(MatCreate(comm_, J));
  PetscCall(MatSetType(*J, MATAIJ));
  PetscCall(MatSetSizes(*J, n_, n_, globalSize(), globalSize()));
  PetscCall(MatSetPreallocationCOO(*J, (PetscCount)rows.size(), rows.data(), cols.data()));  // sorts rows, cols in place
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  // Assemble once before noting the nonzero state: on several ranks the first assembly sums the
  // blocks' states into a new value without changing the pattern, which would otherwise send
  // every later evaluation down the entry-by-entry path (a third of a step at 63k states).
  PetscCall(MatAssemblyBegin(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*J, MAT_FINAL_ASSEMBLY));
  CooMatrix made;
  PetscCall(PetscObjectGetId((PetscObject)*J, &made.id));
  PetscCall(MatGetNonzeroState(*J, &made.nonzeroState));
  cooJacobians_.push_back(made);
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::initialState(const ModeContext &c, Vec u0) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("initialState"));
  Vec w = space_.work(1);
  PetscCall(VecZeroEntries(w));
  {
    ad::local::WorkWrite a(w);
    for (auto &g : groups_) g->initialState(c.p, a.data());
  }
  PetscCall(VecZeroEntries(u0));
  PetscCall(space_.scatterAdd(w, u0));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::initialStateJacobianP(const ModeContext &c, Mat du0dp) const {
  const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("initialStateJacobianP"));
  PetscCall(requireDense(du0dp, "initialStateJacobianP"));
  std::vector<PetscScalar> Jw((size_t)m * np, 0.0);
  for (auto &g : groups_) g->initialStateJacobianP(c.p, m, Jw.data());
  PetscCall(addDenseColumns(space_, Jw, np, du0dp));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::initialStateJacobianPTranspose(const ModeContext &c, const std::vector<Vec> &w,
                                              std::vector<std::vector<PetscScalar>> &outP) const {
  const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("initialStateJacobianPTranspose"));
  outP.assign(w.size(), std::vector<PetscScalar>(np, 0.0));
  if (!np || w.empty()) PetscFunctionReturn(0);
  std::vector<std::vector<PetscScalar>> gathered(w.size());
  std::vector<const PetscScalar *> wk(w.size());
  std::vector<PetscScalar *> out(w.size());
  for (size_t k = 0; k < w.size(); ++k) {
    PetscCall(space_.gather(w[k], space_.work(2)));
    ad::local::WorkRead a(space_.work(2));
    gathered[k].assign(a.data(), a.data() + m);
    wk[k] = gathered[k].data();
    out[k] = outP[k].data();
  }
  for (auto &g : groups_)
    if (g->hasInitialState()) g->initialStateJacobianPTranspose(c.p, wk, out);
  PetscFunctionReturn(0);
}

// Gather u, let every kernel group add its rows (f or ∂f/∂t) into the local work vector, and
// sum them into `out` through the reverse scatter: one path for rhs and rhsTimeDerivative.
PetscErrorCode LocalKernelModel::sumKernelOutputs(PetscReal t, Vec u, const ModeContext &c,
                                                  void (ad::local::KernelGroupBase::*each)(const ad::local::Point &, PetscScalar *) const,
                                                  Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(space_.gather(u, space_.work(0)));
  PetscCall(VecZeroEntries(space_.work(1)));
  {
    ad::local::WorkRead x(space_.work(0));
    ad::local::WorkWrite fw(space_.work(1));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    for (auto &g : groups_) ((*g).*each)(z, fw.data());
  }
  PetscCall(VecZeroEntries(out));
  PetscCall(space_.scatterAdd(space_.work(1), out));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("rhs"));
  PetscCall(sumKernelOutputs(t, u, c, &ad::local::KernelGroupBase::residual, f));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const {
  CooMatrix now;
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("rhsJacobian"));
  PetscCall(space_.gather(u, space_.work(0)));
  size_t count = (size_t)n_;  // the diagonal entries of the COO layout stay 0
  for (auto &g : groups_) count += (size_t)g->jacobianValueCount();
  jacobianValues_.assign(count, 0.0);
  {
    ad::local::WorkRead x(space_.work(0));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    PetscScalar *v = jacobianValues_.data() + n_;
    for (auto &g : groups_) {
      g->jacobianValues(z, v);
      v += g->jacobianValueCount();
    }
  }
  PetscCall(PetscObjectGetId((PetscObject)J, &now.id));
  PetscCall(MatGetNonzeroState(J, &now.nonzeroState));  // a new nonzero would misplace the COO values
  if (std::any_of(cooJacobians_.begin(), cooJacobians_.end(),
                  [&](const CooMatrix &m) { return m.id == now.id && m.nonzeroState == now.nonzeroState; })) {
    PetscCall(MatSetValuesCOO(J, jacobianValues_.data(), ADD_VALUES));
    PetscFunctionReturn(0);
  }
  const PetscScalar *v = jacobianValues_.data() + n_;
  for (auto &g : groups_) {
    PetscCall(g->addJacobianValues(v, J));
    v += g->jacobianValueCount();
  }
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::createParameterJacobian(PetscInt ncols, Mat *Jp) const {
  Mat P;
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("createParameterJacobian"));
  PetscCall(MatCreate(comm_, &P));
  PetscCall(MatSetType(P, MATPREALLOCATOR));
  PetscCall(MatSetSizes(P, n_, PETSC_DECIDE, globalSize(), ncols));
  PetscCall(MatSetUp(P));
  for (auto &g : groups_) PetscCall(g->parameterPattern(P));
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreate(comm_, Jp));
  PetscCall(MatSetType(*Jp, MATAIJ));
  PetscCall(MatSetSizes(*Jp, n_, PETSC_DECIDE, globalSize(), ncols));
  PetscCall(MatPreallocatorPreallocate(P, PETSC_TRUE, *Jp));
  PetscCall(MatDestroy(&P));
  PetscCall(MatSetOption(*Jp, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const {
  const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
  PetscBool dense;
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("rhsJacobianP"));
  if (!np) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)Jp, &dense, MATSEQDENSE, MATMPIDENSE, ""));
  PetscCall(space_.gather(u, space_.work(0)));
  ad::local::WorkRead x(space_.work(0));
  const ad::local::Point z{t, x.data(), c.p, c.d};
  if (!dense) {
    for (auto &g : groups_) PetscCall(g->jacobianP(z, Jp));
    PetscFunctionReturn(0);
  }
  std::vector<PetscScalar> Jw((size_t)m * np, 0.0);
  for (auto &g : groups_) g->jacobianP(z, m, Jw.data());
  PetscCall(addDenseColumns(space_, Jw, np, Jp));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("rhsTimeDerivative"));
  PetscCall(sumKernelOutputs(t, u, c, &ad::local::KernelGroupBase::timeDerivative, ft));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("guards"));
  PetscCall(space_.gather(u, space_.work(0)));
  ad::local::WorkRead x(space_.work(0));
  const ad::local::Point z{t, x.data(), c.p, c.d};
  for (auto &g : groups_)
    if (g->hasGuards()) g->guards(z, values);
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                             PetscScalar *gp) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("guardGradient"));
  PetscCall(space_.gather(u, space_.work(0)));
  PetscCall(VecZeroEntries(space_.work(1)));
  const auto it = guardOwner_.find(j);
  if (it != guardOwner_.end()) {
    std::vector<PetscScalar> gpl(c.p.size(), 0.0);
    PetscScalar gtl = 0;
    {
      ad::local::WorkRead x(space_.work(0));
      ad::local::WorkWrite gw(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      groups_[it->second.group]->guardGradient(it->second.instance, it->second.slot, z, gw.data(), &gtl, gpl.data());
    }
    *gt = gtl;
    for (size_t k = 0; k < gpl.size(); ++k) gp[k] = gpl[k];
  }
  PetscCall(VecZeroEntries(gu));
  PetscCall(space_.scatterAdd(space_.work(1), gu));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec, PetscScalar *rates) const {
  const PetscInt ng = numGuards();
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("guardRates"));
  if (!ng) PetscFunctionReturn(0);
  std::vector<char> active(ng);
  for (PetscInt j = 0; j < ng; ++j) active[j] = guardActive(j, c.d) ? 1 : 0;
  PetscCall(space_.gather(u, space_.work(0)));
  PetscCall(space_.gather(udot, space_.work(2)));
  ad::local::WorkRead x(space_.work(0)), xd(space_.work(2));
  const ad::local::Point z{t, x.data(), c.p, c.d};
  for (auto &g : groups_)
    if (g->hasGuards()) g->guardRates(z, xd.data(), active, rates);
  PetscFunctionReturn(0);
}

TimeEventInfo LocalKernelModel::timeEvent(PetscInt k, const std::vector<PetscReal> &p) const {
  TimeEventInfo info;
  info.name = timeEvents_[k].name;
  info.dtime_dp.resize(p.size());
  evaluateTime(k, p, nullptr, &info.time, info.dtime_dp.data(), nullptr);
  if (p.empty()) info.dtime_dp.clear();
  return info;
}

PetscErrorCode LocalKernelModel::timeEventHessianProduct(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscScalar *outP) const {
  PetscReal T;
  std::vector<PetscReal> dT(p.size());
  PetscFunctionBeginUser;
  PetscCheck(k >= 0 && k < numTimeEvents(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "timeEventHessianProduct: no time event %" PetscInt_FMT, k);
  evaluateTime(k, p, dp, &T, dT.data(), outP);
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const {
  PetscBool anyResetKernel = PETSC_FALSE;
  PetscFunctionBeginUser;
  for (auto &g : groups_)
    if (g->hasReset()) anyResetKernel = PETSC_TRUE;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &anyResetKernel, 1, MPIU_BOOL, MPI_LOR, comm_));
  if (!anyResetKernel) {
    PetscCheck(!hasReset(id), comm_, PETSC_ERR_SUP,
               "hasReset() is true for event '%s' but no kernel type has a reset template "
               "(template <class S> void reset(const EventId &id, S t, const S *u, const S *p, const DiscreteState &d, S *uplus) const)",
               eventName(id, c.p).c_str());
    PetscCall(HybridModel::reset(id, t, uminus, c, uplus));
    PetscFunctionReturn(0);
  }
  PetscCall(resetVector(t, uminus, c, nullptr, uplus, [&](auto &g, auto &z, auto, auto *out) { g.resetDelta(id, z, out); }));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(resetVector(t, uminus, c, v, out, [&](auto &g, auto &z, auto *in, auto *o) { g.resetAction(id, z, in, o); }));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                            Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(resetVector(t, uminus, c, w, out, [&](auto &g, auto &z, auto *in, auto *o) { g.resetTransposeAction(id, z, in, o); }));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const {
  PetscFunctionBeginUser;
  PetscCall(resetVector(t, uminus, c, nullptr, nullptr, [&](auto &g, auto &z, auto, auto *o) { g.resetTimeDerivative(id, z, o); }));
  PetscCall(VecZeroEntries(Rt));
  PetscCall(space_.scatterAdd(space_.work(1), Rt));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const {
  const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("resetJacobianP"));
  PetscCall(requireDense(Rp, "resetJacobianP"));
  if (!np) PetscFunctionReturn(0);
  PetscCall(space_.gather(uminus, space_.work(0)));
  std::vector<PetscScalar> Jw((size_t)m * np, 0.0);
  {
    ad::local::WorkRead x(space_.work(0));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    for (auto &g : groups_)
      if (g->hasReset()) g->resetJacobianP(id, z, m, Jw.data());
  }
  PetscCall(addDenseColumns(space_, Jw, np, Rp));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::rhsHessianProduct(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const SecondOrderDirection &dir,
                                 const SecondOrderOutput &out) const {
  PetscFunctionBeginUser;
  PetscCall(secondOrder("rhsHessianProduct", t, u, c, lambda, dir, out,
                        [&](auto &g, auto &z, auto &d2, auto &o2) { g.hessian(z, d2, o2); }));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::guardHessianProduct(PetscInt j, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const {
  PetscFunctionBeginUser;
  PetscCheck(j >= 0 && j < numGuards(), comm_, PETSC_ERR_ARG_OUTOFRANGE, "guardHessianProduct: no guard %" PetscInt_FMT, j);
  const auto it = guardOwner_.find(j);
  PetscCall(secondOrder("guardHessianProduct", t, u, c, nullptr, dir, out, [&](auto &g, auto &z, auto &d2, auto &o2) {
    if (it != guardOwner_.end() && &g == groups_[it->second.group].get()) g.guardHessian(it->second.instance, it->second.slot, z, d2, o2);
  }));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::resetHessianProduct(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                   const SecondOrderDirection &dir, const SecondOrderOutput &out) const {
  PetscFunctionBeginUser;
  PetscCall(secondOrder("resetHessianProduct", t, uminus, c, w, dir, out, [&](auto &g, auto &z, auto &d2, auto &o2) {
    if (g.hasReset()) g.resetHessian(id, z, d2, o2);
  }));
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::initialStateHessianProduct(const ModeContext &c, Vec lambda, const PetscScalar *dp, PetscScalar *outP) const {
  PetscFunctionBeginUser;
  PetscCall(checkSetUp("initialStateHessianProduct"));
  PetscCall(space_.gather(lambda, space_.work(2)));
  for (size_t k = 0; k < c.p.size(); ++k) outP[k] = 0;
  ad::local::WorkRead lam(space_.work(2));
  for (auto &g : groups_)
    if (g->hasInitialState()) g->initialStateHessian(c.p, lam.data(), dp, outP);
  PetscFunctionReturn(0);
}

void LocalKernelModel::evaluateTime(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscReal *T, PetscReal *dT, PetscReal *Hdp) const {
  using Inner = TimeScalar::value_type;
  const int np = (int)p.size(), C = std::max(1, (int)std::ceil(std::sqrt((double)np)));
  std::vector<TimeScalar> pf(np);
  auto inner = [&](int i) {
    Inner in(1, p[i]);
    in.fastAccessDx(0) = dp ? dp[i] : 0.0;
    return in;
  };
  for (int c0 = 0; c0 == 0 || c0 < np; c0 += C) {
    const int c1 = std::min(np, c0 + C);
    for (int i = 0; i < np; ++i) pf[i] = i >= c0 && i < c1 ? TimeScalar(c1 - c0, i - c0, inner(i)) : TimeScalar(inner(i));
    const TimeScalar Tk = timeEvents_[k].time(pf.data());
    if (c0 == 0) *T = Tk.val().val();
    for (int i = c0; i < c1; ++i) {
      dT[i] = Tk.dx(i - c0).val();
      if (Hdp) Hdp[i] = Tk.dx(i - c0).dx(0);
    }
  }
}

PetscErrorCode LocalKernelModel::requireDense(Mat M, const char *where) const {
  PetscBool dense;
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &dense, MATSEQDENSE, MATMPIDENSE, ""));
  PetscCheck(dense, comm_, PETSC_ERR_SUP, "LocalKernelModel::%s: expects a dense matrix", where);
  PetscFunctionReturn(0);
}

PetscErrorCode LocalKernelModel::checkSetUp(const char *where) const {
  PetscFunctionBeginUser;
  PetscCheck(space_.isSetUp(), comm_, PETSC_ERR_ORDER, "LocalKernelModel::%s called before setUp()", where);
  PetscFunctionReturn(0);
}

template <class Fn>
PetscErrorCode LocalKernelModel::secondOrder(const char *where, PetscReal t, Vec u, const ModeContext &c, Vec weight, const SecondOrderDirection &dir,
                           const SecondOrderOutput &out, Fn &&fn) const {
  const size_t np = c.p.size();
  std::vector<PetscScalar> op(np, 0.0);
  PetscScalar ot = 0;
  PetscFunctionBeginUser;
  PetscCall(checkSetUp(where));
  PetscCall(space_.gather(u, space_.work(0)));
  if (weight) PetscCall(space_.gather(weight, space_.work(2)));
  else PetscCall(VecZeroEntries(space_.work(2)));
  if (dir.du) PetscCall(space_.gather(dir.du, space_.work(3)));
  else PetscCall(VecZeroEntries(space_.work(3)));
  PetscCall(VecZeroEntries(space_.work(1)));
  {
    ad::local::WorkRead x(space_.work(0)), lam(space_.work(2)), du(space_.work(3));
    ad::local::WorkWrite ow(space_.work(1));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    const ad::local::Direction2 d2{lam.data(), du.data(), dir.dp, dir.dt};
    const ad::local::Output2 o2{ow.data(), op.data(), &ot};
    for (auto &g : groups_) fn(*g, z, d2, o2);
  }
  if (out.u) {
    PetscCall(VecZeroEntries(out.u));
    PetscCall(space_.scatterAdd(space_.work(1), out.u));
  }
  if (out.p)
    for (size_t k = 0; k < np; ++k) out.p[k] = op[k];
  if (out.t) *out.t = ot;
  PetscFunctionReturn(0);
}

void LocalKernelModel::jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const {
  for (PetscInt i = ownershipBegin(); i < ownershipEnd(); ++i) rows.push_back(i), cols.push_back(i);
  for (auto &g : groups_) g->jacobianEntries(rows, cols);
}

} // namespace hybridsens
