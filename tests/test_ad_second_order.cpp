// Second-derivative products of the dense AD front end (ADModel/ADCost implementing
// hybridsens/second_order.hpp), verified three ways:
//   * against central finite differences of AD FIRST derivatives: H δz ≈ (G(z+εδz) − G(z−εδz))/2ε,
//     G = ∇_z of the same scalar computed in this test with plain DFad (a different AD route
//     than the library's nested DFad<SFad<1>>), ≤ 1e-7 relative;
//   * symmetry: aᵀ(H b) = bᵀ(H a) for random a, b, ≤ 1e-12 relative;
//   * the PETSc-style wrappers (UU, UP, PU, PP) equal the blocks of the combined product exactly;
// and a negative control (a product compared with the difference along another direction must
// fail). Products: H(λᵀf) δz (f in both modes, explicit t-dependence), H(γ_j) δz, H(wᵀR) δz,
// (λᵀu0)_pp δp, T_pp δp of a time event, and H(ψ), H(r), H(g_i) of a cost; z = (u, p, t).
// Under MPI the state lives on rank 0 and every rank runs every call collectively.
#include "ad_support.hpp"
#include "test_support.hpp"

#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

using namespace hybridsens;
using namespace hstest;

namespace {

using DFad = Sacado::Fad::DFad<double>;

// n = 3, p = (a, b, c), d ∈ {1, 2}: every function nonlinear in t, u and p.
class Curvy : public ADModel<Curvy> {
public:
  PetscInt stateSize() const override { return 3; }
  std::vector<PetscReal> defaultParameters() const override { return {0.7, 1.3, -0.4}; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  PetscInt numGuards() const override { return 2; }
  PetscInt numTimeEvents() const override { return 1; }
  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && id.index == 0; }
  template <class S> S eventTime(PetscInt, const S *p) const {
    using std::sin;
    return p[0] * p[1] + sin(p[2]) * p[0];
  }

  template <class S> void initialState(const S *p, S *u0) const {
    using std::sin;
    u0[0] = p[0] * p[0];
    u0[1] = sin(p[1]) * p[2];
    u0[2] = p[0] * p[2];
  }
  template <class S> void rhs(S t, const S *u, const S *p, const DiscreteState &d, S *f) const {
    using std::cos;
    using std::exp;
    using std::sin;
    f[0] = u[1] + p[0] * sin(t) * u[0] * u[0];
    if (d[0] == 1) f[1] = -p[1] * u[0] * u[2] + exp(0.1 * p[2] * u[1]) * t;
    else f[1] = -p[1] * u[0] - p[2] * p[2] * u[1];
    f[2] = p[0] * p[1] * u[2] * u[1] - cos(u[0] * p[2]) * t * t;
  }
  template <class S> S guard(PetscInt j, S t, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    if (j == 0) return u[0] * u[1] - p[0] * t * t + p[1] * p[2] * u[2] * u[2];
    return sin(u[2]) - p[2] * u[0] * t;
  }
  template <class S> void reset(const EventId &, S t, const S *u, const S *p, const DiscreteState &, S *up) const {
    using std::cos;
    up[0] = u[0] + p[0] * u[1] * u[1];
    up[1] = -p[1] * u[1] * cos(t) * u[2];
    // up[2]: identity
  }
};

class CurvyCost : public ADCost<CurvyCost> {
public:
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  std::vector<PetscReal> measurementTimes() const override { return {0.1, 0.2}; }
  template <class S> S terminal(S t, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    return p[0] * u[0] * u[0] + sin(u[1] * p[1]) + t * p[2] * u[2] * u[0];
  }
  template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &d) const {
    using std::exp;
    return exp(0.2 * u[0]) * p[2] + (d[0] == 1 ? t * t : t) * u[1] * u[2];
  }
  template <class S> S measurement(PetscInt i, S t, const S *u, const S *p, const DiscreteState &) const {
    return (u[0] - i * p[0]) * (u[0] - i * p[0]) * p[1] + u[2] * t * u[1];
  }
};

// ∇_z F(t, u, p) with plain DFad (z = [u | p | t]).
template <class Fn> std::vector<double> gradZ(const ZLayout &L, const std::vector<double> &z, Fn &&fn) {
  const int nd = (int)L.size();
  std::vector<DFad> u(L.n), p(L.np);
  for (PetscInt i = 0; i < L.n; ++i) u[i] = DFad(nd, (int)i, z[i]);
  for (PetscInt k = 0; k < L.np; ++k) p[k] = DFad(nd, (int)(L.n + k), z[L.n + k]);
  const DFad t(nd, (int)(L.n + L.np), z[L.n + L.np]);
  const DFad F = fn(t, u.data(), p.data());
  std::vector<double> g(nd);
  for (int k = 0; k < nd; ++k) g[k] = F.dx(k);
  return g;
}

struct ProductCheck {
  std::string name;
  ZLayout L;
  std::function<std::vector<double>(const std::vector<double> &z)> grad;          // G(z), first derivative
  std::function<std::vector<double>(const std::vector<double> &z, const std::vector<double> &dz)> prod;  // H(z) δz
};

// FD of first derivatives, symmetry, non-vacuity; returns the worst FD and symmetry errors.
void check(const ProductCheck &c, const std::vector<double> &z, Lcg &rng, double *worstFD, double *worstSym) {
  const PetscInt N = c.L.size();
  std::vector<std::vector<double>> dirs;
  for (PetscInt part = 0; part < 3; ++part) {  // pure u, pure p, pure t, then mixed
    std::vector<double> d(N, 0.0);
    const PetscInt lo = part == 0 ? 0 : part == 1 ? c.L.n : c.L.n + c.L.np, hi = part == 0 ? c.L.n : part == 1 ? c.L.n + c.L.np : N;
    for (PetscInt i = lo; i < hi; ++i) d[i] = rng();
    dirs.push_back(d);
  }
  dirs.push_back(rng.vec(N));
  dirs.push_back(rng.vec(N));
  for (const auto &dz : dirs) {
    const auto H = c.prod(z, dz);
    const double eps = 1e-5;
    std::vector<double> zp = z, zm = z, fd(N);
    for (PetscInt i = 0; i < N; ++i) zp[i] += eps * dz[i], zm[i] -= eps * dz[i];
    const auto gp = c.grad(zp), gm = c.grad(zm);
    for (PetscInt i = 0; i < N; ++i) fd[i] = (gp[i] - gm[i]) / (2 * eps);
    const double e = relDiffInf(H, fd);
    *worstFD = std::max(*worstFD, e);
    EXPECT_LE(e, 1e-7) << c.name << ": H δz vs central differences of the first derivative";
  }
  // A nonzero Hessian somewhere (the checks above are not vacuous).
  EXPECT_GT(maxAbs(c.prod(z, dirs.back())), 1e-3) << c.name;
  // Symmetry.
  const auto a = rng.vec(N), b = rng.vec(N);
  const double ab = dot(a, c.prod(z, b)), ba = dot(b, c.prod(z, a));
  const double s = std::abs(ab - ba) / std::max(std::abs(ab), std::abs(ba));
  *worstSym = std::max(*worstSym, s);
  EXPECT_LE(s, 1e-12) << c.name << ": aᵀHb = " << ab << ", bᵀHa = " << ba;
}

class DenseSecondOrder : public ::testing::Test {
protected:
  void SetUp() override {
    PetscMPIInt rank;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    VecCreateMPI(PETSC_COMM_WORLD, rank == 0 ? 3 : 0, 3, &u_);
    VecDuplicate(u_, &w_);
  }
  void TearDown() override {
    VecDestroy(&u_);
    VecDestroy(&w_);
  }
  // Runs fn(t, u, w, p) with u = z's state part and w = weights (Vecs), p = z's parameters.
  template <class Fn> std::vector<double> withVecs(const std::vector<double> &z, const std::vector<double> &weights, Fn &&fn) {
    setFromAll(u_, L.u(z));
    setFromAll(w_, weights);
    const auto p = L.p(z);
    return fn(L.t(z), p);
  }
  ZLayout L{3, 3};
  Vec u_ = nullptr, w_ = nullptr;
  Curvy model;
  CurvyCost cost;
};

TEST_F(DenseSecondOrder, ProductsEqualFiniteDifferencesOfFirstDerivativesAndAreSymmetric) {
  Lcg rng(42);
  double worstFD = 0, worstSym = 0;
  const std::vector<double> lambda = {0.8, -1.7, 0.45};
  std::vector<ProductCheck> checks;
  for (PetscInt mode : {1, 2}) {
    const DiscreteState d{mode};
    const std::string m = " (mode " + std::to_string(mode) + ")";
    // H(λᵀf) δz
    checks.push_back({"rhs" + m, L,
                      [&, d](const std::vector<double> &z) {
                        return gradZ(L, z, [&](const DFad &t, const DFad *u, const DFad *p) -> DFad {
                          DFad f[3];
                          model.rhs<DFad>(t, u, p, d, f);
                          return lambda[0] * f[0] + lambda[1] * f[1] + lambda[2] * f[2];
                        });
                      },
                      [&, d](const std::vector<double> &z, const std::vector<double> &dz) {
                        return withVecs(z, lambda, [&](double t, const std::vector<double> &p) {
                          PetscErrorCode ierr;
                          auto h = productZ(L, u_, dz, [&](auto &dir, auto &out) { return model.rhsHessianProduct(t, u_, {p, d}, w_, dir, out); }, &ierr);
                          EXPECT_EQ(ierr, 0);
                          return h;
                        });
                      }});
    // H(wᵀR) δz
    checks.push_back({"reset" + m, L,
                      [&, d](const std::vector<double> &z) {
                        return gradZ(L, z, [&](const DFad &t, const DFad *u, const DFad *p) -> DFad {
                          DFad up[3] = {u[0], u[1], u[2]};
                          model.reset<DFad>({EventId::Guard, 0}, t, u, p, d, up);
                          return lambda[0] * up[0] + lambda[1] * up[1] + lambda[2] * up[2];
                        });
                      },
                      [&, d](const std::vector<double> &z, const std::vector<double> &dz) {
                        return withVecs(z, lambda, [&](double t, const std::vector<double> &p) {
                          PetscErrorCode ierr;
                          auto h = productZ(L, u_, dz, [&](auto &dir, auto &out) {
                            return model.resetHessianProduct({EventId::Guard, 0}, t, u_, {p, d}, w_, dir, out);
                          }, &ierr);
                          EXPECT_EQ(ierr, 0);
                          return h;
                        });
                      }});
    // Cost parts (the integrand depends on the mode).
    checks.push_back({"integrand" + m, L,
                      [&, d](const std::vector<double> &z) {
                        return gradZ(L, z, [&](const DFad &t, const DFad *u, const DFad *p) -> DFad { return cost.integrand<DFad>(t, u, p, d); });
                      },
                      [&, d](const std::vector<double> &z, const std::vector<double> &dz) {
                        return withVecs(z, lambda, [&](double t, const std::vector<double> &p) {
                          PetscErrorCode ierr;
                          auto h = productZ(L, u_, dz, [&](auto &dir, auto &out) { return cost.integrandHessianProduct(t, u_, {p, d}, dir, out); }, &ierr);
                          EXPECT_EQ(ierr, 0);
                          return h;
                        });
                      }});
  }
  const DiscreteState d1{1};
  for (PetscInt j = 0; j < 2; ++j)
    checks.push_back({"guard " + std::to_string(j), L,
                      [&, j](const std::vector<double> &z) {
                        return gradZ(L, z, [&](const DFad &t, const DFad *u, const DFad *p) -> DFad { return model.guard<DFad>(j, t, u, p, d1); });
                      },
                      [&, j](const std::vector<double> &z, const std::vector<double> &dz) {
                        return withVecs(z, lambda, [&](double t, const std::vector<double> &p) {
                          PetscErrorCode ierr;
                          auto h = productZ(L, u_, dz, [&](auto &dir, auto &out) { return model.guardHessianProduct(j, t, u_, {p, d1}, dir, out); }, &ierr);
                          EXPECT_EQ(ierr, 0);
                          return h;
                        });
                      }});
  checks.push_back({"terminal", L,
                    [&](const std::vector<double> &z) {
                      return gradZ(L, z, [&](const DFad &t, const DFad *u, const DFad *p) -> DFad { return cost.terminal<DFad>(t, u, p, d1); });
                    },
                    [&](const std::vector<double> &z, const std::vector<double> &dz) {
                      return withVecs(z, lambda, [&](double t, const std::vector<double> &p) {
                        PetscErrorCode ierr;
                        auto h = productZ(L, u_, dz, [&](auto &dir, auto &out) { return cost.terminalHessianProduct(t, u_, {p, d1}, dir, out); }, &ierr);
                        EXPECT_EQ(ierr, 0);
                        return h;
                      });
                    }});
  for (PetscInt i = 0; i < 2; ++i)
    checks.push_back({"measurement " + std::to_string(i), L,
                      [&, i](const std::vector<double> &z) {
                        return gradZ(L, z, [&](const DFad &t, const DFad *u, const DFad *p) -> DFad { return cost.measurement<DFad>(i, t, u, p, d1); });
                      },
                      [&, i](const std::vector<double> &z, const std::vector<double> &dz) {
                        return withVecs(z, lambda, [&](double t, const std::vector<double> &p) {
                          PetscErrorCode ierr;
                          auto h = productZ(L, u_, dz, [&](auto &dir, auto &out) { return cost.measurementHessianProduct(i, t, u_, {p, d1}, dir, out); }, &ierr);
                          EXPECT_EQ(ierr, 0);
                          return h;
                        });
                      }});

  const std::vector<std::vector<double>> points = {{0.3, -0.8, 1.1, 0.7, 1.3, -0.4, 0.6}, {-1.2, 0.5, 0.25, 1.9, -0.6, 0.8, 2.3}};
  for (const auto &z : points)
    for (const auto &c : checks) check(c, z, rng, &worstFD, &worstSym);
  PetscPrintf(PETSC_COMM_WORLD, "dense second order: %zu products x %zu points, worst vs FD %.2e, worst asymmetry %.2e\n",
              checks.size(), points.size(), worstFD, worstSym);
}

// (λᵀu0)_pp δp against differences of (λᵀu0)_p, and symmetric.
TEST_F(DenseSecondOrder, InitialStateProduct) {
  const std::vector<double> lambda = {0.8, -1.7, 0.45}, p0 = {0.7, 1.3, -0.4};
  setFromAll(w_, lambda);
  auto grad = [&](const std::vector<double> &p) {
    std::vector<DFad> pf(3), u0(3);
    for (int k = 0; k < 3; ++k) pf[k] = DFad(3, k, p[k]);
    model.initialState<DFad>(pf.data(), u0.data());
    const DFad L = lambda[0] * u0[0] + lambda[1] * u0[1] + lambda[2] * u0[2];
    return std::vector<double>{L.dx(0), L.dx(1), L.dx(2)};
  };
  auto prod = [&](const std::vector<double> &p, const std::vector<double> &dp) {
    std::vector<PetscScalar> out(3, 999.0), sum(3);
    EXPECT_EQ(model.initialStateHessianProduct({p, DiscreteState{1}}, w_, dp.data(), out.data()), 0);
    MPI_Allreduce(out.data(), sum.data(), 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return sum;
  };
  Lcg rng(7);
  for (int r = 0; r < 3; ++r) {
    const auto dp = rng.vec(3);
    std::vector<double> pp = p0, pm = p0, fd(3);
    for (int k = 0; k < 3; ++k) pp[k] += 1e-5 * dp[k], pm[k] -= 1e-5 * dp[k];
    const auto gp = grad(pp), gm = grad(pm);
    for (int k = 0; k < 3; ++k) fd[k] = (gp[k] - gm[k]) / 2e-5;
    const auto H = prod(p0, dp);
    EXPECT_LE(relDiffInf(H, fd), 1e-7);
    EXPECT_GT(maxAbs(H), 1e-3);
  }
  const auto a = rng.vec(3), b = rng.vec(3);
  const double ab = dot(a, prod(p0, b)), ba = dot(b, prod(p0, a));
  EXPECT_LE(std::abs(ab - ba), 1e-12 * std::abs(ab));
}

// T_pp δp of the time event against differences of ∂T/∂p (timeEvent), and symmetric.
TEST_F(DenseSecondOrder, TimeEventProduct) {
  const std::vector<double> p0 = {0.7, 1.3, -0.4};
  Lcg rng(13);
  auto prod = [&](const std::vector<double> &dp) {
    std::vector<PetscScalar> out(3, 999.0);
    EXPECT_EQ(model.timeEventHessianProduct(0, p0, dp.data(), out.data()), 0);
    return out;
  };
  for (int r = 0; r < 3; ++r) {
    const auto dp = rng.vec(3);
    std::vector<double> pp = p0, pm = p0, fd(3);
    for (int k = 0; k < 3; ++k) pp[k] += 1e-5 * dp[k], pm[k] -= 1e-5 * dp[k];
    const auto gp = model.timeEvent(0, pp).dtime_dp, gm = model.timeEvent(0, pm).dtime_dp;
    for (int k = 0; k < 3; ++k) fd[k] = (gp[k] - gm[k]) / 2e-5;
    const auto H = prod(dp);
    EXPECT_LE(relDiffInf(H, fd), 1e-7);
    EXPECT_GT(maxAbs(H), 1e-3);
  }
  const auto a = rng.vec(3), b = rng.vec(3);
  EXPECT_LE(std::abs(dot(a, prod(b)) - dot(b, prod(a))), 1e-12 * std::abs(dot(a, prod(b))));
}

// The PETSc-style wrappers are the blocks of the combined product (same evaluation, exact).
TEST_F(DenseSecondOrder, WrappersAreBlocksOfTheCombinedProduct) {
  const std::vector<double> z = {0.3, -0.8, 1.1, 0.7, 1.3, -0.4, 0.6}, lambda = {0.8, -1.7, 0.45};
  const std::vector<double> v = {0.2, -0.9, 0.4}, w = {-0.3, 0.5, 1.1};
  const DiscreteState d{1};
  const auto p = L.p(z);
  const ModeContext c{p, d};
  const double t = L.t(z);
  setFromAll(u_, L.u(z));
  setFromAll(w_, lambda);
  Vec vv, out;
  VecDuplicate(u_, &vv), VecDuplicate(u_, &out);
  setFromAll(vv, v);
  PetscErrorCode ierr;
  std::vector<double> dzU(7, 0.0), dzP(7, 0.0);
  std::copy(v.begin(), v.end(), dzU.begin());
  std::copy(w.begin(), w.end(), dzP.begin() + 3);
  const auto hU = productZ(L, u_, dzU, [&](auto &dir, auto &o) { return model.rhsHessianProduct(t, u_, c, w_, dir, o); }, &ierr);
  const auto hP = productZ(L, u_, dzP, [&](auto &dir, auto &o) { return model.rhsHessianProduct(t, u_, c, w_, dir, o); }, &ierr);
  ASSERT_EQ(model.rhsHessianProductUU(t, u_, c, w_, vv, out), 0);
  EXPECT_EQ(gatherAll(out), L.u(hU));
  ASSERT_EQ(model.rhsHessianProductUP(t, u_, c, w_, w.data(), out), 0);
  EXPECT_EQ(gatherAll(out), L.u(hP));
  std::vector<PetscScalar> op(3), sum(3);
  ASSERT_EQ(model.rhsHessianProductPU(t, u_, c, w_, vv, op.data()), 0);
  MPI_Allreduce(op.data(), sum.data(), 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_EQ(sum, L.p(hU));
  ASSERT_EQ(model.rhsHessianProductPP(t, u_, c, w_, w.data(), op.data()), 0);
  MPI_Allreduce(op.data(), sum.data(), 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_EQ(sum, L.p(hP));
  VecDestroy(&vv), VecDestroy(&out);
}

// Negative control: the FD comparison detects a product along the wrong direction.
TEST_F(DenseSecondOrder, NegativeControlWrongDirectionIsDetected) {
  const std::vector<double> z = {0.3, -0.8, 1.1, 0.7, 1.3, -0.4, 0.6}, lambda = {0.8, -1.7, 0.45};
  const DiscreteState d{2};
  setFromAll(u_, L.u(z));
  setFromAll(w_, lambda);
  const auto p = L.p(z);
  Lcg rng(3);
  const auto dz = rng.vec(7), other = rng.vec(7);
  PetscErrorCode ierr;
  const auto H = productZ(L, u_, other, [&](auto &dir, auto &o) { return model.rhsHessianProduct(L.t(z), u_, {p, d}, w_, dir, o); }, &ierr);
  auto grad = [&](const std::vector<double> &zz) {
    return gradZ(L, zz, [&](const DFad &t, const DFad *u, const DFad *pp) -> DFad {
      DFad f[3];
      model.rhs<DFad>(t, u, pp, d, f);
      return lambda[0] * f[0] + lambda[1] * f[1] + lambda[2] * f[2];
    });
  };
  std::vector<double> zp = z, zm = z, fd(7);
  for (int i = 0; i < 7; ++i) zp[i] += 1e-5 * dz[i], zm[i] -= 1e-5 * dz[i];
  const auto gp = grad(zp), gm = grad(zm);
  for (int i = 0; i < 7; ++i) fd[i] = (gp[i] - gm[i]) / 2e-5;
  EXPECT_GT(relDiffInf(H, fd), 1e-2);
}

} // namespace
