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
// round-robin after a warm-up, in wall-clock and in thread CPU time (less disturbed by other
// jobs on a shared machine); also the residual evaluation for context.
//
// Options: -n N machines (default 10000, n = 2N unknowns), -reps R (default 30). Serial.
// Run:  build/bench/ad_assembly [-n 50000] [-reps 50]
#include "swing_models.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <functional>
#include <vector>

using namespace hybridsens;
using namespace swing;

namespace {

// CPU time of this thread (what the machine's other jobs disturb least; the machine is shared).
double cpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
struct Timing {
  double wall, cpu;
};
Timing seconds(const std::function<void()> &f) {
  const double c0 = cpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), cpuSeconds() - c0};
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
      std::vector<double> jac, res, jacCpu;
    };
    std::vector<Variant> vs = {{"local-kernel AD (SFad)", &ad, nullptr, {}, {}, {}}, {"hand, per component", &handComp, nullptr, {}, {}, {}}, {"hand, per row", &handRow, nullptr, {}, {}, {}}};
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
        const Timing tj = seconds([&] { ierr |= assemble(v); });
        const Timing tr = seconds([&] { ierr |= v.model->rhs(0.0, u, c, f); });
        if (r) v.jac.push_back(tj.wall), v.jacCpu.push_back(tj.cpu), v.res.push_back(tr.wall);  // r = 0: warm-up
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
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-26s %10s %10s %10s %10s %10s\n", "[ms]", "J wall min", "J median", "J cpu min", "J median", "f wall min"));
    for (auto &v : vs) {
      const auto j = stats(v.jac), jc = stats(v.jacCpu), r = stats(v.res);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-26s %10.3f %10.3f %10.3f %10.3f %10.3f\n", v.name, 1e3 * j.first, 1e3 * j.second, 1e3 * jc.first,
                            1e3 * jc.second, 1e3 * r.first));
    }
    for (size_t k : {1, 2}) {
      const auto a = stats(vs[0].jac), h = stats(vs[k].jac), ac = stats(vs[0].jacCpu), hc = stats(vs[k].jacCpu);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ratio AD / %-20s wall %.2f (min) %.2f (median), cpu %.2f (min) %.2f (median)\n", vs[k].name,
                            a.first / h.first, a.second / h.second, ac.first / hc.first, ac.second / hc.second));
    }
    for (auto &v : vs) PetscCall(MatDestroy(&v.J));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&f));
  }
  PetscCall(PetscFinalize());
  return 0;
}
