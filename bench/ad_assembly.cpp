// ad_assembly — Jacobian assembly time of the local-kernel AD path (hybridsens/ad_local.hpp)
// against hand-coded Jacobians on a large sparse model. A measurement, not a test.
//
// Model: a ring of N swing-equation machines (a power-grid-like structure, n = 2N unknowns),
//   δ̇_i = ω_i
//   ω̇_i = (P Pm_i − D_i ω_i − E sin δ_i) / M_i − Σ_lines K_ij sin(δ_i − δ_j) / M_i
// with lines i — i+1 (ring) and i — i+7 (chords), machine constants varying with i, P = p[0].
// Written as two kernel types (Machine: reads (δ_i, ω_i) writes (δ_i, ω_i) rows; Line: reads
// (δ_i, δ_j) writes (ω_i, ω_j) rows), differentiated with SFad<2>.
//
// Hand-coded references, exact Jacobians written out:
//   "hand, per component": the same loop over machines and lines, one 2×2 MatSetValues block
//                          each (ADD_VALUES) — what a component-based hand-written code does;
//   "hand, per row":       one MatSetValues per row with all its columns (INSERT_VALUES), the
//                          fastest hand-written form.
// Each measurement is what the engine does per Jacobian evaluation: MatZeroEntries, the
// model's rhsJacobian, MatAssemblyBegin/End (same preallocated pattern for all three). The
// three Jacobians are compared entry by entry first. Minimum and median over -reps runs,
// round-robin after a warm-up; also the residual evaluation for context.
//
// Options: -n N machines (default 10000, n = 2N unknowns), -reps R (default 30). Serial.
// Run:  build/bench/ad_assembly [-n 50000] [-reps 50]
#include <hybridsens/ad_local.hpp>
#include <hybridsens/hybridsens.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

using namespace hybridsens;

namespace {

constexpr PetscReal kE = 1.1, kChordStride = 7;

struct MachineData {
  PetscReal M, D, Pm;
};
MachineData machine(PetscInt i) { return {1.0 + 0.1 * (i % 5), 0.2 + 0.01 * (i % 3), 0.5 + 0.05 * (i % 7)}; }
PetscReal lineK(PetscInt i, PetscInt j) { return 0.8 + 0.05 * ((i + 2 * j) % 4); }

// The lines: (i, i+1) and (i, i+7), mod N.
std::vector<std::pair<PetscInt, PetscInt>> lines(PetscInt N) {
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

double seconds(const std::function<void()> &f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Jacobian assembly: local-kernel AD vs hand-coded.\n"));
  {
    PetscMPIInt size;
    PetscInt N = 10000, reps = 30;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "ad_assembly is a serial benchmark");
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-n", &N, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));

    SwingAD ad(N);
    PetscCall(ad.setUp());
    SwingHand handComp(N, false), handRow(N, true);
    const std::vector<PetscReal> p = ad.defaultParameters();
    const DiscreteState d;
    const ModeContext c{p, d};

    // A state with all couplings active: δ_i = 0.3 sin(i), ω_i = 0.1 cos(3i).
    Vec u, f;
    PetscCall(VecDuplicate(ad.templateVec(), &u));
    PetscCall(VecDuplicate(u, &f));
    {
      PetscScalar *a;
      PetscCall(VecGetArray(u, &a));
      for (PetscInt i = 0; i < N; ++i) a[2 * i] = 0.3 * std::sin((double)i), a[2 * i + 1] = 0.1 * std::cos(3.0 * i);
      PetscCall(VecRestoreArray(u, &a));
    }
    struct Variant {
      const char *name;
      HybridModel *model;
      Mat J = nullptr;
      std::vector<double> jac, res;
    };
    std::vector<Variant> vs = {{"local-kernel AD (SFad)", &ad, nullptr, {}, {}}, {"hand, per component", &handComp, nullptr, {}, {}}, {"hand, per row", &handRow, nullptr, {}, {}}};
    for (auto &v : vs) PetscCall(v.model->createJacobian(&v.J));
    auto assemble = [&](Variant &v) -> PetscErrorCode {
      PetscFunctionBeginUser;
      PetscCall(MatZeroEntries(v.J));
      PetscCall(v.model->rhsJacobian(0.0, u, c, v.J));
      PetscCall(MatAssemblyBegin(v.J, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(v.J, MAT_FINAL_ASSEMBLY));
      PetscFunctionReturn(0);
    };
    // Same matrices (and same residuals) first.
    for (auto &v : vs) PetscCall(assemble(v));
    PetscReal ref, diff;
    PetscCall(MatNorm(vs[1].J, NORM_FROBENIUS, &ref));
    for (size_t k : {0, 2}) {
      Mat D;
      PetscCall(MatDuplicate(vs[k].J, MAT_COPY_VALUES, &D));
      PetscCall(MatAXPY(D, -1.0, vs[1].J, DIFFERENT_NONZERO_PATTERN));
      PetscCall(MatNorm(D, NORM_FROBENIUS, &diff));
      PetscCall(MatDestroy(&D));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "‖J(%s) − J(hand, per component)‖_F / ‖J‖_F = %.2e\n", vs[k].name, (double)(diff / ref)));
    }
    Vec fh;
    PetscCall(VecDuplicate(u, &fh));
    PetscCall(ad.rhs(0.0, u, c, f));
    PetscCall(handComp.rhs(0.0, u, c, fh));
    PetscCall(VecAXPY(fh, -1.0, f));
    PetscCall(VecNorm(fh, NORM_INFINITY, &diff));
    PetscCall(VecNorm(f, NORM_INFINITY, &ref));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "‖f(AD) − f(hand)‖∞ / ‖f‖∞ = %.2e\n", (double)(diff / ref)));
    PetscCall(VecDestroy(&fh));

    PetscErrorCode ierr = 0;
    for (PetscInt r = 0; r <= reps; ++r)
      for (auto &v : vs) {
        const double tj = seconds([&] { ierr |= assemble(v); });
        const double tr = seconds([&] { ierr |= v.model->rhs(0.0, u, c, f); });
        if (r) v.jac.push_back(tj), v.res.push_back(tr);  // r = 0: warm-up
      }
    PetscCheck(!ierr, PETSC_COMM_WORLD, PETSC_ERR_LIB, "assembly failed");
    auto stats = [](std::vector<double> x) {
      std::sort(x.begin(), x.end());
      return std::make_pair(x.front(), x[x.size() / 2]);
    };
    PetscInt nz;
    MatInfo info;
    PetscCall(MatGetInfo(vs[0].J, MAT_GLOBAL_SUM, &info));
    nz = (PetscInt)info.nz_used;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\nswing ring: N = %" PetscInt_FMT " machines, %" PetscInt_FMT " lines, n = %" PetscInt_FMT " unknowns, %" PetscInt_FMT " nonzeros; %" PetscInt_FMT " repetitions\n",
                          N, 2 * N, 2 * N, nz, reps));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-26s %14s %14s %14s %14s\n", "Jacobian assembly", "min [ms]", "median [ms]", "residual min", "median [ms]"));
    for (auto &v : vs) {
      const auto j = stats(v.jac), r = stats(v.res);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-26s %14.3f %14.3f %14.3f %14.3f\n", v.name, 1e3 * j.first, 1e3 * j.second, 1e3 * r.first, 1e3 * r.second));
    }
    const auto a = stats(vs[0].jac), hc = stats(vs[1].jac), hr = stats(vs[2].jac);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ratio AD / hand per component: %.2f (min), %.2f (median)\n", a.first / hc.first, a.second / hc.second));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ratio AD / hand per row:       %.2f (min), %.2f (median)\n", a.first / hr.first, a.second / hr.second));
    for (auto &v : vs) PetscCall(MatDestroy(&v.J));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&f));
  }
  PetscCall(PetscFinalize());
  return 0;
}
