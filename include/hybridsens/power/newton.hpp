// One Newton step x ← x − F_x⁻¹ F(x) for a small dense system, in any scalar type T (double, or a
// Sacado type when the solution's derivatives are wanted): F_x by forward AD over T, then LU with
// partial pivoting on the values. Used by examples/wecc9's 9-bus power flow, where repeating a
// step in a Sacado type at the double solution x* carries exactly the implicit derivative
// dx/dp = −F_x⁻¹ F_p (F(x*) = 0 to round-off). O(n³) per derivative direction: the case builder's
// start (CaseGrid) solves sparsely instead (src/power/case_power_flow.hpp).
#pragma once

#include <Sacado_No_Kokkos.hpp>
#include <petscsys.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace hybridsens {
namespace power {

// mismatch(x, F) must be callable with J = Sacado::Fad::DFad<T> arrays of n entries (a generic
// lambda or a functor with a template operator()). Returns ‖F(x)‖∞ before the step.
template <class T, class Mismatch> PetscReal newtonStep(int n, T *x, const Mismatch &mismatch) {
  using J = Sacado::Fad::DFad<T>;
  std::vector<J> xf(n), F(n);
  for (int i = 0; i < n; ++i) xf[i] = J(n, i, x[i]);
  mismatch(xf.data(), F.data());
  std::vector<T> A((size_t)n * n), b(n);
  PetscReal norm = 0;
  for (int i = 0; i < n; ++i) {
    b[i] = F[i].val();
    norm = std::max(norm, (PetscReal)std::fabs(Sacado::ScalarValue<T>::eval(b[i])));
    for (int j = 0; j < n; ++j) A[(size_t)i * n + j] = F[i].size() ? F[i].dx(j) : T(0.0);
  }
  auto a = [&](int i, int j) -> T & { return A[(size_t)i * n + j]; };
  for (int k = 0; k < n; ++k) {  // LU with partial pivoting; forward elimination on b alongside
    int piv = k;
    for (int i = k + 1; i < n; ++i)
      if (std::fabs(Sacado::ScalarValue<T>::eval(a(i, k))) > std::fabs(Sacado::ScalarValue<T>::eval(a(piv, k)))) piv = i;
    if (piv != k) {
      for (int j = 0; j < n; ++j) std::swap(a(k, j), a(piv, j));
      std::swap(b[k], b[piv]);
    }
    for (int i = k + 1; i < n; ++i) {
      const T l = a(i, k) / a(k, k);
      for (int j = k + 1; j < n; ++j) a(i, j) -= l * a(k, j);
      b[i] -= l * b[k];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int j = i + 1; j < n; ++j) b[i] -= a(i, j) * b[j];
    b[i] /= a(i, i);
    x[i] -= b[i];
  }
  return norm;
}

} // namespace power
} // namespace hybridsens
