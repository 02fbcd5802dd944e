// The swing-equation ring of bench/ad_assembly (also used by tests/test_ad_local.cpp): the
// same model written with local AD kernels (SwingAD) and by hand with every Jacobian entry
// written out (SwingHand, serial; per component or per row).
//   δ̇_i = ω_i
//   ω̇_i = (P Pm_i − D_i ω_i − E sin δ_i) / M_i − Σ_lines K_ij sin(δ_i − δ_j) / M_i
// lines i — i+1 (ring) and i — i+7 (chords), machine constants varying with i, P = p[0].
#pragma once

#include <hybridsens/ad_local.hpp>
#include <hybridsens/hybridsens.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace swing {

using namespace hybridsens;

constexpr PetscReal kE = 1.1, kChordStride = 7;

struct MachineData {
  PetscReal M, D, Pm;
};
inline MachineData machine(PetscInt i) { return {1.0 + 0.1 * (i % 5), 0.2 + 0.01 * (i % 3), 0.5 + 0.05 * (i % 7)}; }
inline PetscReal lineK(PetscInt i, PetscInt j) { return 0.8 + 0.05 * ((i + 2 * j) % 4); }

// The lines: (i, i+1) and (i, i+7), mod N.
inline std::vector<std::pair<PetscInt, PetscInt>> lines(PetscInt N) {
  std::vector<std::pair<PetscInt, PetscInt>> l;
  for (PetscInt i = 0; i < N; ++i) {
    l.push_back({i, (i + 1) % N});
    l.push_back({i, (i + (PetscInt)kChordStride) % N});
  }
  return l;
}

// ---- AD kernels ----------------------------------------------------------------------------
struct Machine {
  static constexpr int numReads = 2, numWrites = 2, numParams = 1;
  PetscReal M, D, Pm;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    using std::sin;
    f[0] = u[1];
    f[1] = (p[0] * Pm - D * u[1] - kE * sin(u[0])) / M;
  }
};
struct Line {
  static constexpr int numReads = 2, numWrites = 2, numParams = 0;
  PetscReal K, Mi, Mj;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    using std::sin;
    const S flow = K * sin(u[0] - u[1]);
    f[0] = -flow / Mi;
    f[1] = flow / Mj;
  }
};

class SwingAD : public LocalKernelModel {
public:
  explicit SwingAD(PetscInt N) : LocalKernelModel(PETSC_COMM_WORLD) {
    PetscCallAbort(PETSC_COMM_WORLD, setSizes(2 * N));
    for (PetscInt i = 0; i < N; ++i) {
      const MachineData m = machine(i);
      add(Machine{m.M, m.D, m.Pm}, {{2 * i, 2 * i + 1}, {2 * i, 2 * i + 1}, {0}, {}});
    }
    for (auto [i, j] : lines(N)) add(Line{lineK(i, j), machine(i).M, machine(j).M}, {{2 * i, 2 * j}, {2 * i + 1, 2 * j + 1}, {}, {}});
  }
  std::vector<PetscReal> defaultParameters() const override { return {1.0}; }
};

// ---- hand-coded ----------------------------------------------------------------------------
class SwingHand : public HybridModel {
public:
  SwingHand(PetscInt N, bool perRow) : N_(N), perRow_(perRow), lines_(lines(N)) {
    // Neighbours (and the line constant) per machine for the row-wise form.
    nbr_.resize(N);
    for (auto [i, j] : lines_) nbr_[i].push_back({j, lineK(i, j)}), nbr_[j].push_back({i, lineK(i, j)});
  }
  PetscInt localSize() const override { return 2 * N_; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecZeroEntries(u0); }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    for (PetscInt i = 0; i < N_; ++i) {
      const MachineData m = machine(i);
      y[2 * i] = x[2 * i + 1];
      y[2 * i + 1] = (c.p[0] * m.Pm - m.D * x[2 * i + 1] - kE * std::sin(x[2 * i])) / m.M;
    }
    for (auto [i, j] : lines_) {
      const PetscScalar flow = lineK(i, j) * std::sin(x[2 * i] - x[2 * j]);
      y[2 * i + 1] -= flow / machine(i).M;
      y[2 * j + 1] += flow / machine(j).M;
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (!perRow_) {
      for (PetscInt i = 0; i < N_; ++i) {
        const MachineData m = machine(i);
        const PetscInt idx[2] = {2 * i, 2 * i + 1};
        const PetscScalar v[4] = {0, 1, -kE * std::cos(x[2 * i]) / m.M, -m.D / m.M};
        PetscCall(MatSetValues(J, 2, idx, 2, idx, v, ADD_VALUES));
      }
      for (auto [i, j] : lines_) {
        const PetscReal c = lineK(i, j) * std::cos(x[2 * i] - x[2 * j]), Mi = machine(i).M, Mj = machine(j).M;
        const PetscInt rows[2] = {2 * i + 1, 2 * j + 1}, cols[2] = {2 * i, 2 * j};
        const PetscScalar v[4] = {-c / Mi, c / Mi, c / Mj, -c / Mj};
        PetscCall(MatSetValues(J, 2, rows, 2, cols, v, ADD_VALUES));
      }
    } else {
      std::vector<PetscInt> cols;
      std::vector<PetscScalar> vals;
      for (PetscInt i = 0; i < N_; ++i) {
        const MachineData m = machine(i);
        const PetscInt r0 = 2 * i, r1 = 2 * i + 1;
        const PetscScalar one = 1;
        PetscCall(MatSetValues(J, 1, &r0, 1, &r1, &one, INSERT_VALUES));
        // ω_i row: δ_i, ω_i and every neighbour's δ (a neighbour may appear twice: sum first).
        cols.assign({2 * i, 2 * i + 1});
        vals.assign({-kE * std::cos(x[2 * i]) / m.M, -m.D / m.M});
        for (auto [j, K] : nbr_[i]) {
          const PetscReal c = K * std::cos(x[2 * i] - x[2 * j]) / m.M;
          vals[0] -= c;
          const auto it = std::find(cols.begin() + 2, cols.end(), 2 * j);
          if (it == cols.end()) cols.push_back(2 * j), vals.push_back(c);
          else vals[it - cols.begin()] += c;
        }
        PetscCall(MatSetValues(J, 1, &r1, (PetscInt)cols.size(), cols.data(), vals.data(), INSERT_VALUES));
      }
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  // Exact preallocation: δ_i row {δ_i, ω_i}; ω_i row {δ_i, ω_i, δ_neighbours}.
  PetscErrorCode createJacobian(Mat *J) const override {
    std::vector<PetscInt> nnz(2 * N_);
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < N_; ++i) {
      std::vector<PetscInt> d;
      for (auto [j, K] : nbr_[i]) d.push_back(j);
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      d.erase(std::remove(d.begin(), d.end(), i), d.end());
      nnz[2 * i] = 2, nnz[2 * i + 1] = 2 + (PetscInt)d.size();
    }
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 2 * N_, 2 * N_, 0, nnz.data(), J));
    PetscFunctionReturn(0);
  }
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }

private:
  PetscInt N_;
  bool perRow_;
  std::vector<std::pair<PetscInt, PetscInt>> lines_;
  std::vector<std::vector<std::pair<PetscInt, PetscReal>>> nbr_;
};

} // namespace swing
