// SmallModel: the HybridModel callbacks on the root rank's plain arrays (hybridsens/small_model.hpp).
// Arrays are fetched and restored on every rank (model.hpp, "Ownership"); only the root, which
// owns the whole state, calls the user's lambdas.
#include "hybridsens/small_model.hpp"

#include "util/gather.hpp"

#include <stdexcept>

namespace hybridsens {

namespace {

// A Vec's array for reading, on every rank.
struct ReadArray {
  Vec v;
  const PetscScalar *a = nullptr;
  PetscErrorCode get() { return VecGetArrayRead(v, &a); }
  PetscErrorCode restore() { return VecRestoreArrayRead(v, &a); }
};
struct WriteArray {
  Vec v;
  PetscScalar *a = nullptr;
  PetscErrorCode get() { return VecGetArray(v, &a); }
  PetscErrorCode restore() { return VecRestoreArray(v, &a); }
};

} // namespace

SmallModel::SmallModel(PetscInt n, MPI_Comm comm) : n_(n), comm_(comm) { MPI_Comm_rank(comm, &rank_); }

PetscInt SmallModel::addGuard(Guard g) {
  guards_.push_back(std::move(g));
  return (PetscInt)guards_.size() - 1;
}

PetscInt SmallModel::addTimeEvent(TimeEvent e) {
  timeEvents_.push_back(std::move(e));
  return (PetscInt)timeEvents_.size() - 1;
}

std::vector<std::string> SmallModel::parameterNames() const { return paramNames.empty() ? HybridModel::parameterNames() : paramNames; }

PetscErrorCode SmallModel::setDense(Mat M, PetscInt cols, const std::function<void(PetscScalar *)> &fill) const {
  PetscFunctionBeginUser;
  if (!onRoot() || cols == 0 || n_ == 0) PetscFunctionReturn(0);
  std::vector<PetscScalar> a((size_t)(n_ * cols), 0.0);
  std::vector<PetscInt> rows(n_), cidx(cols);
  for (PetscInt i = 0; i < n_; ++i) rows[i] = i;
  for (PetscInt j = 0; j < cols; ++j) cidx[j] = j;
  fill(a.data());
  PetscCall(MatSetValues(M, n_, rows.data(), cols, cidx.data(), a.data(), INSERT_VALUES));
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::initialState(const ModeContext &c, Vec u0) const {
  WriteArray x{u0};
  PetscFunctionBeginUser;
  PetscCheck(initial || (PetscInt)x0.size() == n_, comm_, PETSC_ERR_ARG_SIZ,
             "SmallModel: x0 has %zu entries for a state of %" PetscInt_FMT " (or set `initial`)", x0.size(), n_);
  PetscCall(x.get());
  if (onRoot()) {
    if (initial) initial(c, x.a);
    else
      for (PetscInt i = 0; i < n_; ++i) x.a[i] = x0[i];
  }
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::initialStateJacobianP(const ModeContext &c, Mat du0dp) const {
  PetscFunctionBeginUser;
  if (!initialJacobianP) {
    PetscCall(HybridModel::initialStateJacobianP(c, du0dp));  // u0 independent of p, verified
    PetscFunctionReturn(0);
  }
  PetscCall(setDense(du0dp, (PetscInt)c.p.size(), [&](PetscScalar *a) { initialJacobianP(c, a); }));
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::rhs(PetscReal t, Vec u, const ModeContext &c, Vec fv) const {
  ReadArray x{u};
  WriteArray y{fv};
  PetscFunctionBeginUser;
  PetscCheck(f, comm_, PETSC_ERR_ARG_WRONGSTATE, "SmallModel: the right-hand side `f` is not set");
  PetscCall(x.get());
  PetscCall(y.get());
  if (onRoot()) f(t, x.a, y.a, c);
  PetscCall(y.restore());
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const {
  ReadArray x{u};
  PetscFunctionBeginUser;
  PetscCheck(dfdu, comm_, PETSC_ERR_ARG_WRONGSTATE, "SmallModel: the Jacobian `dfdu` is not set");
  PetscCall(x.get());
  PetscCall(setDense(J, n_, [&](PetscScalar *a) { dfdu(t, x.a, a, c); }));
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const {
  ReadArray x{u};
  PetscFunctionBeginUser;
  if (!dfdp) {
    PetscCall(HybridModel::rhsJacobianP(t, u, c, Jp));  // f independent of p, verified
    PetscFunctionReturn(0);
  }
  PetscCall(x.get());
  PetscCall(setDense(Jp, (PetscInt)c.p.size(), [&](PetscScalar *a) { dfdp(t, x.a, a, c); }));
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const {
  ReadArray x{u};
  WriteArray y{ft};
  PetscFunctionBeginUser;
  if (!dfdt) {
    PetscCall(HybridModel::rhsTimeDerivative(t, u, c, ft));
    PetscFunctionReturn(0);
  }
  PetscCall(VecZeroEntries(ft));
  PetscCall(x.get());
  PetscCall(y.get());
  if (onRoot()) dfdt(t, x.a, y.a, c);
  PetscCall(y.restore());
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

GuardInfo SmallModel::guardInfo(PetscInt j) const {
  if (j < 0 || j >= (PetscInt)guards_.size()) return HybridModel::guardInfo(j);
  return {guards_[j].name, guards_[j].direction};
}

bool SmallModel::guardActive(PetscInt j, const DiscreteState &d) const {
  if (j < 0 || j >= (PetscInt)guards_.size() || !guards_[j].active) return HybridModel::guardActive(j, d);
  return guards_[j].active(d);
}

PetscErrorCode SmallModel::guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const {
  ReadArray x{u};
  PetscFunctionBeginUser;
  for (const Guard &g : guards_)
    PetscCheck(g.value, comm_, PETSC_ERR_ARG_WRONGSTATE, "SmallModel: guard '%s' has no `value`", g.name.c_str());
  PetscCall(x.get());
  if (onRoot())
    for (size_t j = 0; j < guards_.size(); ++j) values[j] = guards_[j].value(t, x.a, c);
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt, PetscScalar *gp) const {
  ReadArray x{u};
  WriteArray g{gu};
  PetscFunctionBeginUser;
  if (j < 0 || j >= (PetscInt)guards_.size()) {
    PetscCall(HybridModel::guardGradient(j, t, u, c, gu, gt, gp));
    PetscFunctionReturn(0);
  }
  PetscCheck(guards_[j].gradient, comm_, PETSC_ERR_ARG_WRONGSTATE, "SmallModel: guard '%s' has no `gradient` (γ_u, γ_t, γ_p)", guards_[j].name.c_str());
  PetscCall(x.get());
  PetscCall(g.get());
  if (onRoot()) guards_[j].gradient(t, x.a, c, g.a, gt, gp);
  PetscCall(g.restore());
  PetscCall(x.restore());
  PetscFunctionReturn(0);
}

TimeEventInfo SmallModel::timeEvent(PetscInt k, const std::vector<PetscReal> &p) const {
  if (k < 0 || k >= (PetscInt)timeEvents_.size()) return HybridModel::timeEvent(k, p);
  const TimeEvent &e = timeEvents_[k];
  if (!e.time) throw std::logic_error("SmallModel: time event '" + e.name + "' has no `time`");
  TimeEventInfo info;
  info.name = e.name;
  info.time = e.time(p);
  if (e.dtimedp) {
    info.dtime_dp.assign(p.size(), 0.0);
    e.dtimedp(p, info.dtime_dp.data());
  }
  return info;
}

const SmallModel::Jump *SmallModel::jumpOf(const EventId &id) const {
  if (id.kind == EventId::Guard) return id.index >= 0 && id.index < (PetscInt)guards_.size() ? &guards_[id.index] : nullptr;
  return id.index >= 0 && id.index < (PetscInt)timeEvents_.size() ? &timeEvents_[id.index] : nullptr;
}

std::string SmallModel::eventLabel(const EventId &id) const {
  return std::string(id.kind == EventId::Guard ? "guard '" + guards_[id.index].name : "time event '" + timeEvents_[id.index].name) + "'";
}

PetscErrorCode SmallModel::transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const {
  const Jump *jump = jumpOf(id);
  PetscFunctionBeginUser;
  if (!jump) {
    PetscCall(HybridModel::transition(id, t, u, d));
    PetscFunctionReturn(0);
  }
  if (!jump->transition) PetscFunctionReturn(0);
  // The discrete state is replicated: every rank decides from the whole state.
  std::vector<PetscScalar> all;
  PetscCall(gatherToAll(u, all));
  jump->transition(t, all.data(), d);
  PetscFunctionReturn(0);
}

bool SmallModel::hasReset(const EventId &id) const {
  const Jump *jump = jumpOf(id);
  return jump ? bool(jump->reset) : HybridModel::hasReset(id);
}

PetscErrorCode SmallModel::reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const {
  const Jump *jump = jumpOf(id);
  ReadArray um{uminus};
  WriteArray up{uplus};
  PetscFunctionBeginUser;
  if (!jump || !jump->reset) {
    PetscCall(HybridModel::reset(id, t, uminus, c, uplus));
    PetscFunctionReturn(0);
  }
  PetscCall(VecCopy(uminus, uplus));
  PetscCall(um.get());
  PetscCall(up.get());
  if (onRoot()) jump->reset(t, um.a, c, up.a);
  PetscCall(up.restore());
  PetscCall(um.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::applyResetJacobian(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out, bool transpose) const {
  const Jump *jump = jumpOf(id);
  ReadArray um{uminus}, in{v};
  WriteArray o{out};
  PetscFunctionBeginUser;
  PetscCheck(jump->resetJacobian, comm_, PETSC_ERR_ARG_WRONGSTATE, "SmallModel: %s has a reset but no `resetJacobian` (R_u)", eventLabel(id).c_str());
  PetscCall(um.get());
  PetscCall(in.get());
  PetscCall(o.get());
  if (onRoot()) {
    std::vector<PetscScalar> R((size_t)(n_ * n_), 0.0);
    jump->resetJacobian(t, um.a, c, R.data());
    std::vector<PetscScalar> product((size_t)n_, 0.0);  // v and out may share storage
    for (PetscInt i = 0; i < n_; ++i)
      for (PetscInt j = 0; j < n_; ++j) product[i] += (transpose ? R[j * n_ + i] : R[i * n_ + j]) * in.a[j];
    for (PetscInt i = 0; i < n_; ++i) o.a[i] = product[i];
  }
  PetscCall(o.restore());
  PetscCall(in.restore());
  PetscCall(um.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const {
  PetscFunctionBeginUser;
  if (!jumpOf(id)) PetscCall(HybridModel::resetJacobianAction(id, t, uminus, c, v, out));
  else PetscCall(applyResetJacobian(id, t, uminus, c, v, out, false));
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w, Vec out) const {
  PetscFunctionBeginUser;
  if (!jumpOf(id)) PetscCall(HybridModel::resetJacobianTransposeAction(id, t, uminus, c, w, out));
  else PetscCall(applyResetJacobian(id, t, uminus, c, w, out, true));
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const {
  const Jump *jump = jumpOf(id);
  ReadArray um{uminus};
  PetscFunctionBeginUser;
  if (!jump) {
    PetscCall(HybridModel::resetJacobianP(id, t, uminus, c, Rp));
    PetscFunctionReturn(0);
  }
  PetscCheck(jump->resetJacobianP, comm_, PETSC_ERR_ARG_WRONGSTATE,
             "SmallModel: %s has a reset but no `resetJacobianP` (R_p; a reset without parameters says so with a lambda that writes nothing)",
             eventLabel(id).c_str());
  PetscCall(um.get());
  PetscCall(setDense(Rp, (PetscInt)c.p.size(), [&](PetscScalar *a) { jump->resetJacobianP(t, um.a, c, a); }));
  PetscCall(um.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode SmallModel::resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const {
  const Jump *jump = jumpOf(id);
  ReadArray um{uminus};
  WriteArray r{Rt};
  PetscFunctionBeginUser;
  if (!jump) {
    PetscCall(HybridModel::resetTimeDerivative(id, t, uminus, c, Rt));
    PetscFunctionReturn(0);
  }
  PetscCheck(jump->resetTimeDerivative, comm_, PETSC_ERR_ARG_WRONGSTATE,
             "SmallModel: %s has a reset but no `resetTimeDerivative` (R_t; a reset without t says so with a lambda that writes nothing)",
             eventLabel(id).c_str());
  PetscCall(VecZeroEntries(Rt));
  PetscCall(um.get());
  PetscCall(r.get());
  if (onRoot()) jump->resetTimeDerivative(t, um.a, c, r.a);
  PetscCall(r.restore());
  PetscCall(um.restore());
  PetscFunctionReturn(0);
}

} // namespace hybridsens
