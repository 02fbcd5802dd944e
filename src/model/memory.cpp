// MemoryModel: memory slots as states with zero dynamics and a capturing reset
// (include/hybridsens/memory.hpp). Everything here is the reset of docs/theory.md §9 written for
// "copy a function of u⁻ into some rows"; the jump algebra does the rest.
#include "hybridsens/memory.hpp"

#include "util/petsc_internals.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

MemoryModel::~MemoryModel() { clearCache(); }

PetscErrorCode MemoryModel::clearCache() const {
  for (Vec &v : cache_.cu) VecDestroy(&v);
  cache_ = CaptureGradients();
  return 0;
}

PetscErrorCode MemoryModel::capturedSlots(const EventId &id, std::vector<PetscInt> &slots) const {
  slots.clear();
  const PetscInt n = (PetscInt)memoryIndices().size();
  for (PetscInt k = 0; k < n; ++k)
    if (capturesAt(id, k)) slots.push_back(k);
  return 0;
}

bool MemoryModel::hasReset(const EventId &id) const {
  const PetscInt n = (PetscInt)memoryIndices().size();
  for (PetscInt k = 0; k < n; ++k)
    if (capturesAt(id, k)) return true;
  return false;
}

// Memory slots must be distinct differential components inside the state.
PetscErrorCode MemoryModel::checkLayout(Vec u) const {
  PetscInt N;
  PetscFunctionBeginUser;
  PetscCall(VecGetSize(u, &N));
  std::vector<PetscInt> idx = memoryIndices();
  for (PetscInt i : idx)
    PetscCheck(i >= 0 && i < N, comm(), PETSC_ERR_ARG_OUTOFRANGE,
               "memoryIndices(): index %" PetscInt_FMT " outside the state (size %" PetscInt_FMT ")", i, N);
  std::sort(idx.begin(), idx.end());
  PetscCheck(std::adjacent_find(idx.begin(), idx.end()) == idx.end(), comm(), PETSC_ERR_ARG_WRONG,
             "memoryIndices(): a state index is listed twice");
  PetscBool algebraic = PETSC_FALSE;
  for (PetscInt a : algebraicIndices())
    if (std::binary_search(idx.begin(), idx.end(), a)) algebraic = PETSC_TRUE;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &algebraic, 1, MPIU_BOOL, MPI_LOR, comm()));
  PetscCheck(!algebraic, comm(), PETSC_ERR_ARG_WRONG,
             "memoryIndices(): a memory slot is an algebraic component; memory states are differential with zero dynamics");
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::writeCaptures(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const {
  const std::vector<PetscInt> idx = memoryIndices();
  const PetscInt nslots = (PetscInt)idx.size();
  std::vector<PetscInt> slots;
  std::vector<PetscScalar> values(nslots, 0.0);
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(checkLayout(uminus));
  PetscCall(capturedSlots(id, slots));
  PetscCall(VecGetOwnershipRange(uminus, &lo, &hi));

  // The total-derivative semantics rest on ṁ = 0 (the jump uses ṁ⁺ = 0 through u̇⁺): check it
  // where it matters, at the state the capture reads.
  Vec f;
  const PetscScalar *fa;
  PetscInt bad = -1;
  PetscCall(VecDuplicate(uminus, &f));
  PetscCall(rhs(t, uminus, c, f));
  PetscCall(VecGetArrayRead(f, &fa));
  for (PetscInt k = 0; k < nslots; ++k)
    if (idx[k] >= lo && idx[k] < hi && fa[idx[k] - lo] != 0.0) bad = std::max(bad, k);
  PetscCall(VecRestoreArrayRead(f, &fa));
  PetscCall(VecDestroy(&f));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_MAX, comm()));
  PetscCheck(bad < 0, comm(), PETSC_ERR_ARG_WRONG,
             "memory slot %" PetscInt_FMT " (state index %" PetscInt_FMT ") has nonzero dynamics at t = %.17g in discrete state %s: "
             "rhs() must be exactly 0 on memory rows",
             bad, bad >= 0 ? idx[bad] : -1, (double)t, describe(c.d).c_str());

  PetscCall(capture(id, t, uminus, c, values.data()));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, values.data(), (int)nslots, MPIU_SCALAR, MPIU_SUM, comm()));
  for (PetscInt k : slots) {
    PetscCheck(std::isfinite(PetscRealPart(values[k])), comm(), PETSC_ERR_FP,
               "NaN or Inf captured into memory slot %" PetscInt_FMT " at t = %.17g in discrete state %s", k, (double)t,
               describe(c.d).c_str());
    if (idx[k] >= lo && idx[k] < hi) PetscCall(VecSetValue(uplus, idx[k], values[k], INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(uplus));
  PetscCall(VecAssemblyEnd(uplus));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::gradients(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c) const {
  PetscObjectId vid;
  PetscObjectState vstate;
  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetId((PetscObject)uminus, &vid));
  PetscCall(objectState((PetscObject)uminus, &vstate));
  if (cache_.vecId == vid && cache_.vecState == vstate && cache_.id == id && cache_.t == t && cache_.p == c.p &&
      cache_.d == c.d)
    PetscFunctionReturn(0);
  PetscCall(clearCache());
  const PetscInt np = (PetscInt)c.p.size();
  PetscCall(capturedSlots(id, cache_.slots));
  for (PetscInt k : cache_.slots) {
    Vec cu;
    std::vector<PetscScalar> local(np + 1, 0.0), global(np + 1, 0.0);
    PetscReal nrm;
    PetscCall(VecDuplicate(uminus, &cu));
    cache_.cu.push_back(cu);  // owned by the cache from here on (destroyed on error paths too)
    PetscCall(VecZeroEntries(cu));
    PetscCall(captureGradient(id, k, t, uminus, c, cu, &local[0], np ? &local[1] : nullptr));
    PetscCall(VecAssemblyBegin(cu));
    PetscCall(VecAssemblyEnd(cu));
    PetscCall(markObjectModified((PetscObject)cu));  // norms below must reduce on every rank
    PetscCall(VecNorm(cu, NORM_1, &nrm));
    PetscCallMPI(MPI_Allreduce(local.data(), global.data(), (int)(np + 1), MPIU_SCALAR, MPIU_SUM, comm()));
    bool finite = std::isfinite(nrm);
    for (PetscScalar g : global) finite = finite && std::isfinite(PetscRealPart(g));
    PetscCheck(finite, comm(), PETSC_ERR_FP, "NaN or Inf returned by model callback captureGradient for memory slot %" PetscInt_FMT
               " at t = %.17g in discrete state %s", k, (double)t, describe(c.d).c_str());
    cache_.ct.push_back(global[0]);
    cache_.cp.emplace_back(global.begin() + 1, global.end());
  }
  cache_.id = id;
  cache_.t = t;
  cache_.vecId = vid;
  cache_.vecState = vstate;
  cache_.p = c.p;
  cache_.d = c.d;
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::captureJacobianRows(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v,
                                                Vec out) const {
  const std::vector<PetscInt> idx = memoryIndices();
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(gradients(id, t, uminus, c));
  PetscCall(VecGetOwnershipRange(out, &lo, &hi));
  std::vector<PetscScalar> rows(cache_.slots.size());
  for (size_t s = 0; s < cache_.slots.size(); ++s) PetscCall(VecDot(v, cache_.cu[s], &rows[s]));  // collective
  for (size_t s = 0; s < cache_.slots.size(); ++s) {
    const PetscInt i = idx[cache_.slots[s]];
    if (i >= lo && i < hi) PetscCall(VecSetValue(out, i, rows[s], INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(out));
  PetscCall(VecAssemblyEnd(out));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::zeroCapturedRows(const EventId &id, Vec w) const {
  const std::vector<PetscInt> idx = memoryIndices();
  std::vector<PetscInt> slots;
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(capturedSlots(id, slots));
  PetscCall(VecGetOwnershipRange(w, &lo, &hi));
  for (PetscInt k : slots)
    if (idx[k] >= lo && idx[k] < hi) PetscCall(VecSetValue(w, idx[k], 0.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(w));
  PetscCall(VecAssemblyEnd(w));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::addCaptureJacobianTranspose(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c,
                                                        Vec w, Vec out) const {
  const std::vector<PetscInt> idx = memoryIndices();
  const PetscScalar *wa;
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(gradients(id, t, uminus, c));
  PetscCall(VecGetOwnershipRange(w, &lo, &hi));
  // w on the captured rows, known to every rank (each entry lives on one rank).
  std::vector<PetscScalar> wm(cache_.slots.size(), 0.0);
  PetscCall(VecGetArrayRead(w, &wa));
  for (size_t s = 0; s < cache_.slots.size(); ++s) {
    const PetscInt i = idx[cache_.slots[s]];
    if (i >= lo && i < hi) wm[s] = wa[i - lo];
  }
  PetscCall(VecRestoreArrayRead(w, &wa));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, wm.data(), (int)wm.size(), MPIU_SCALAR, MPIU_SUM, comm()));
  for (size_t s = 0; s < cache_.slots.size(); ++s) PetscCall(VecAXPY(out, wm[s], cache_.cu[s]));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::captureJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const {
  const std::vector<PetscInt> idx = memoryIndices();
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(gradients(id, t, uminus, c));
  PetscCall(VecGetOwnershipRange(uminus, &lo, &hi));
  for (size_t s = 0; s < cache_.slots.size(); ++s) {
    const PetscInt i = idx[cache_.slots[s]];
    if (i < lo || i >= hi) continue;
    for (size_t j = 0; j < cache_.cp[s].size(); ++j) PetscCall(MatSetValue(Rp, i, (PetscInt)j, cache_.cp[s][j], INSERT_VALUES));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::captureTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const {
  const std::vector<PetscInt> idx = memoryIndices();
  PetscBool partial = PETSC_FALSE;
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(gradients(id, t, uminus, c));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-hs_test_memory_partial_derivative", &partial, nullptr));
  std::vector<PetscScalar> rows(cache_.ct);
  if (partial) {
    // The partial derivative of Serban & Recuero (2019) for s⁺: cancel the event-time term of the captured rows, c_m = R_t + c_u u̇⁻ − 0.
    PetscInt nalg = (PetscInt)algebraicIndices().size();
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nalg, 1, MPIU_INT, MPI_SUM, comm()));
    PetscCheck(nalg == 0, comm(), PETSC_ERR_SUP, "-hs_test_memory_partial_derivative is implemented for ODE models only");
    Vec f;
    PetscCall(VecDuplicate(uminus, &f));
    PetscCall(rhs(t, uminus, c, f));
    for (size_t s = 0; s < cache_.slots.size(); ++s) {
      PetscScalar d;
      PetscCall(VecDot(f, cache_.cu[s], &d));
      rows[s] = -d;
    }
    PetscCall(VecDestroy(&f));
  }
  PetscCall(VecGetOwnershipRange(Rt, &lo, &hi));
  for (size_t s = 0; s < cache_.slots.size(); ++s) {
    const PetscInt i = idx[cache_.slots[s]];
    if (i >= lo && i < hi) PetscCall(VecSetValue(Rt, i, rows[s], INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(Rt));
  PetscCall(VecAssemblyEnd(Rt));
  PetscFunctionReturn(0);
}

// ---- the reset family: identity on every row but the captured ones ------------------------

PetscErrorCode MemoryModel::reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(uminus, uplus));
  PetscCall(writeCaptures(id, t, uminus, c, uplus));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v,
                                                Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(v, out));
  PetscCall(captureJacobianRows(id, t, uminus, c, v, out));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c,
                                                         Vec w, Vec out) const {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(w, out));
  PetscCall(zeroCapturedRows(id, out));
  PetscCall(addCaptureJacobianTranspose(id, t, uminus, c, w, out));
  PetscFunctionReturn(0);
}

PetscErrorCode MemoryModel::resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const {
  return captureJacobianP(id, t, uminus, c, Rp);
}

PetscErrorCode MemoryModel::resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(Rt));
  PetscCall(captureTimeDerivative(id, t, uminus, c, Rt));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
