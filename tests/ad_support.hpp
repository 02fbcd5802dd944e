// Helpers shared by the AD tests: whole vectors/matrices on every rank, Vecs filled from a
// replicated array, and the layout z = [u (n) | p (np) | t] of second-derivative products.
#pragma once

#include <hybridsens/second_order.hpp>

#include <petscmat.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace hstest {

// The whole vector, on every rank.
inline std::vector<double> gatherAll(Vec v) {
  VecScatter sc;
  Vec all;
  const PetscScalar *a;
  PetscInt N;
  VecScatterCreateToAll(v, &sc, &all);
  VecScatterBegin(sc, v, all, INSERT_VALUES, SCATTER_FORWARD);
  VecScatterEnd(sc, v, all, INSERT_VALUES, SCATTER_FORWARD);
  VecGetSize(all, &N);
  VecGetArrayRead(all, &a);
  std::vector<double> x(a, a + N);
  VecRestoreArrayRead(all, &a);
  VecScatterDestroy(&sc);
  VecDestroy(&all);
  return x;
}

// Owned entries of v from a replicated array of the global size.
inline void setFromAll(Vec v, const std::vector<double> &all) {
  PetscInt lo, hi;
  PetscScalar *a;
  VecGetOwnershipRange(v, &lo, &hi);
  VecGetArray(v, &a);
  for (PetscInt i = lo; i < hi; ++i) a[i - lo] = all[i];
  VecRestoreArray(v, &a);
}

// Every entry of a (rows × cols) matrix, row-major, on every rank.
inline std::vector<double> denseAll(Mat M, PetscInt rows, PetscInt cols) {
  Mat D;
  std::vector<double> out(rows * cols, 0.0);
  PetscInt lo, hi;
  MatConvert(M, MATDENSE, MAT_INITIAL_MATRIX, &D);
  MatGetOwnershipRange(D, &lo, &hi);
  for (PetscInt i = lo; i < hi; ++i)
    for (PetscInt j = 0; j < cols; ++j) MatGetValue(D, i, j, &out[i * cols + j]);
  MatDestroy(&D);
  std::vector<double> sum(out.size());
  MPI_Allreduce(out.data(), sum.data(), (int)out.size(), MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return sum;
}

inline double maxAbs(const std::vector<double> &x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::abs(v));
  return m;
}
// max_i |a_i − b_i| / max(‖a‖∞, ‖b‖∞) (0 when both vanish).
inline double relDiffInf(const std::vector<double> &a, const std::vector<double> &b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  const double s = std::max(maxAbs(a), maxAbs(b));
  return s == 0 ? 0 : d / s;
}
inline double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// z = [u (n) | p (np) | t]. A second-derivative product call of the SecondOrder interfaces,
// made from replicated arrays: returns H δz as one replicated array in the same layout (the
// Vec part gathered, the p and t parts summed over ranks as the interface prescribes).
struct ZLayout {
  PetscInt n, np;
  PetscInt size() const { return n + np + 1; }
  std::vector<double> u(const std::vector<double> &z) const { return {z.begin(), z.begin() + n}; }
  std::vector<double> p(const std::vector<double> &z) const { return {z.begin() + n, z.begin() + n + np}; }
  double t(const std::vector<double> &z) const { return z[n + np]; }
};

// call(dir, out) runs the product with Vecs like `templ`; the result is H δz in z layout.
inline std::vector<double> productZ(const ZLayout &L, Vec templ, const std::vector<double> &dz,
                                    const std::function<PetscErrorCode(const hybridsens::SecondOrderDirection &,
                                                                       const hybridsens::SecondOrderOutput &)> &call,
                                    PetscErrorCode *ierr) {
  Vec du, ou;
  VecDuplicate(templ, &du);
  VecDuplicate(templ, &ou);
  const auto dzu = L.u(dz), dzp = L.p(dz);
  setFromAll(du, dzu);
  VecSet(ou, 12345.0);  // must be overwritten
  std::vector<PetscScalar> op(L.np, 6789.0), sum(L.np);
  PetscScalar ot = 4321.0, tsum;
  hybridsens::SecondOrderDirection dir;
  dir.dt = L.t(dz), dir.du = du, dir.dp = dzp.data();
  hybridsens::SecondOrderOutput out;
  out.u = ou, out.p = op.data(), out.t = &ot;
  *ierr = call(dir, out);
  std::vector<double> hz = gatherAll(ou);
  MPI_Allreduce(op.data(), sum.data(), (int)L.np, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(&ot, &tsum, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  hz.insert(hz.end(), sum.begin(), sum.end());
  hz.push_back(tsum);
  VecDestroy(&du);
  VecDestroy(&ou);
  return hz;
}

// Deterministic pseudo-random numbers in [-1, 1] (the same on every rank).
struct Lcg {
  unsigned long long s;
  explicit Lcg(unsigned long long seed) : s(seed) {}
  double operator()() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return 2.0 * ((s >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
  }
  std::vector<double> vec(size_t n) {
    std::vector<double> v(n);
    for (auto &x : v) x = (*this)();
    return v;
  }
};

} // namespace hstest
