// Default behaviour of a HybridModel: no parameters, no events, identity resets.
#include "hybridsens/model.hpp"

#include <algorithm>

#include <sstream>

namespace hybridsens {

std::vector<std::string> HybridModel::parameterNames() const {
  std::vector<std::string> names;
  const auto p = defaultParameters();
  for (size_t i = 0; i < p.size(); ++i) names.push_back("p" + std::to_string(i));
  return names;
}

PetscErrorCode HybridModel::initialStateJacobianP(const ModeContext &, Mat) const { return 0; }

PetscErrorCode HybridModel::initialStateJacobianPTranspose(const ModeContext &c, const std::vector<Vec> &w,
                                                           std::vector<std::vector<PetscScalar>> &outP) const {
  const PetscInt np = (PetscInt)c.p.size(), n = localSize();
  Mat M;
  PetscInt lda;
  const PetscScalar *a;
  PetscFunctionBeginUser;
  outP.assign(w.size(), std::vector<PetscScalar>(np, 0.0));
  if (!np) PetscFunctionReturn(0);
  PetscCall(MatCreateDense(comm(), n, PETSC_DECIDE, PETSC_DETERMINE, np, nullptr, &M));
  PetscCall(MatZeroEntries(M));
  PetscCall(initialStateJacobianP(c, M));
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatDenseGetLDA(M, &lda));
  PetscCall(MatDenseGetArrayRead(M, &a));  // this rank's rows, all np columns
  for (size_t k = 0; k < w.size(); ++k) {
    const PetscScalar *wk;
    PetscCall(VecGetArrayRead(w[k], &wk));
    for (PetscInt j = 0; j < np; ++j)
      for (PetscInt i = 0; i < n; ++i) outP[k][j] += a[i + j * lda] * wk[i];
    PetscCall(VecRestoreArrayRead(w[k], &wk));
  }
  PetscCall(MatDenseRestoreArrayRead(M, &a));
  PetscCall(MatDestroy(&M));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::rhsJacobianP(PetscReal, Vec, const ModeContext &, Mat) const { return 0; }

PetscErrorCode HybridModel::createParameterJacobian(PetscInt, Mat *Jp) const {
  *Jp = nullptr;
  return 0;
}

PetscErrorCode HybridModel::rhsTimeDerivative(PetscReal, Vec, const ModeContext &, Vec ft) const {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(ft));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::createJacobian(Mat *J) const {
  PetscInt n = localSize(), N;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&n, &N, 1, MPIU_INT, MPI_SUM, comm()));
  PetscCall(MatCreateAIJ(comm(), n, n, N, N, n, nullptr, N - n, nullptr, J));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscFunctionReturn(0);
}

GuardInfo HybridModel::guardInfo(PetscInt j) const { return {"guard" + std::to_string(j), Direction::Both}; }

bool HybridModel::guardActive(PetscInt, const DiscreteState &) const { return true; }

PetscErrorCode HybridModel::guards(PetscReal, Vec, const ModeContext &, PetscScalar *) const { return 0; }

PetscErrorCode HybridModel::guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec, PetscScalar *,
                                          PetscScalar *) const {
  SETERRQ(comm(), PETSC_ERR_SUP, "Model declares guard %" PetscInt_FMT " but does not implement guardGradient()", j);
}

PetscErrorCode HybridModel::guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec work, PetscScalar *rates) const {
  const PetscInt ng = numGuards();
  std::vector<PetscScalar> gp(c.p.size());
  PetscInt nl;
  const PetscScalar *ud;
  PetscFunctionBeginUser;
  if (!ng) PetscFunctionReturn(0);
  PetscCall(VecGetLocalSize(u, &nl));
  PetscCall(VecGetArrayRead(udot, &ud));
  for (PetscInt j = 0; j < ng; ++j) {
    if (!guardActive(j, c.d)) continue;
    const PetscScalar *g;
    PetscScalar gt = 0, dot = 0;
    std::fill(gp.begin(), gp.end(), 0.0);
    PetscCall(VecZeroEntries(work));
    PetscCall(guardGradient(j, t, u, c, work, &gt, gp.empty() ? nullptr : gp.data()));
    PetscCall(VecGetArrayRead(work, &g));
    // This rank's part of γ_u·u̇ over the entries the guard depends on: u̇ entries it does not
    // read stay out (the engine probes with ẏ = NaN, see GuardEvaluator::rates).
    for (PetscInt i = 0; i < nl; ++i)
      if (g[i] != 0) dot += g[i] * ud[i];
    PetscCall(VecRestoreArrayRead(work, &g));
    rates[j] = gt + dot;
  }
  PetscCall(VecRestoreArrayRead(udot, &ud));
  PetscFunctionReturn(0);
}

TimeEventInfo HybridModel::timeEvent(PetscInt k, const std::vector<PetscReal> &) const {
  return {"time_event" + std::to_string(k), 0.0, {}};
}

PetscErrorCode HybridModel::transition(const EventId &, PetscReal, Vec, DiscreteState &) const { return 0; }

bool HybridModel::hasReset(const EventId &) const { return false; }

PetscErrorCode HybridModel::reset(const EventId &, PetscReal, Vec uminus, const ModeContext &, Vec uplus) const {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(uminus, uplus));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::resetJacobianAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec v,
                                                Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(v, out));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::resetJacobianTransposeAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec w,
                                                         Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(w, out));
  PetscFunctionReturn(0);
}

PetscErrorCode HybridModel::resetJacobianP(const EventId &, PetscReal, Vec, const ModeContext &, Mat) const { return 0; }

PetscErrorCode HybridModel::resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(Rt));
  PetscFunctionReturn(0);
}

std::string HybridModel::eventName(const EventId &id, const std::vector<PetscReal> &p) const {
  return id.kind == EventId::Guard ? guardInfo(id.index).name : timeEvent(id.index, p).name;
}

std::string describe(const DiscreteState &d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << "]";
  return os.str();
}

} // namespace hybridsens
