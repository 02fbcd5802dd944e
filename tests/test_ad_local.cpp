// The local-kernel AD path (hybridsens/ad_local.hpp) against the dense AD path (ad.hpp) on the
// same model, a ring of coupled oscillators with a switching component, a reset, a time event
// and algebraic couplings (tests/ring_models.hpp). Registered at 1, 2 and 3 ranks: the local
// model is distributed in blocks that cut through components (kernels read ghosts and add to
// rows owned elsewhere), the dense one lives on rank 0.
//   * Every callback, entry by entry, at several states, times and all four discrete states:
//     residual, sparse Jacobian, ∂f/∂p, ∂f/∂t (vs the dense template differentiated here),
//     guards and their gradients, reset value/R_u v/R_uᵀ w/R_p/R_t, u0 and ∂u0/∂p, the time
//     event, cost values and gradients, (∂u0/∂p)ᵀ w, and all second-order products — ≤ 1e-14
//     relative.
//   * Second-order products of the local path against central differences of its own first
//     derivatives (the assembled Jacobian, ∂f/∂p, ∂f/∂t) ≤ 1e-7, and symmetric.
//   * The Jacobian's pattern is exactly the declared couplings plus the diagonal; the
//     benchmark's swing-equation kernels give the hand-coded residual and Jacobian.
//   * A whole hybrid solve (CN, DAE, several engage/release events with a reset, a
//     p-dependent time event): event list, final state, objective, forward and adjoint
//     gradients equal the dense model's; the local adjoint equals its forward gradient.
//   * The local gradient against central finite differences of the whole solve and the Taylor
//     test (serial, CN and BEULER, ≤ 1e-6).
//   * guardRates (γ_t + γ_u u̇ of the active guards, one directional derivative each) of both AD
//     paths equals HybridModel's default gradient loop to ≤ 1e-14 and central differences, with
//     guards that depend on t and on entries of three ranks.
//   * Declaration errors are reported by setUp(), use before setUp() is refused.
#include "ad_support.hpp"
#include "ring_models.hpp"
#include "../bench/swing_models.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

using namespace hybridsens;
using namespace hstest;

namespace {

constexpr PetscInt M = 6, N = 3 * M, NP = 5;
using DFad = Sacado::Fad::DFad<double>;

// Worst relative difference over named comparisons (relative to the compared object's scale).
struct Worst {
  double value = 0;
  std::string where;
  int compared = 0;
  void operator()(const std::string &what, const std::vector<double> &a, const std::vector<double> &b) {
    ASSERT_EQ(a.size(), b.size()) << what;
    const double e = relDiffInf(a, b);
    ++compared;
    if (e > value || std::isnan(e)) value = std::isnan(e) ? INFINITY : e, where = what;
  }
};

class LocalVsDense : public ::testing::Test {
protected:
  void SetUp() override {
    PetscMPIInt rank;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    ASSERT_EQ(local.setUp(), 0);
    ASSERT_EQ(costLocal.setUp(), 0);
    ASSERT_EQ(localDyn.setUp(), 0);
    ASSERT_EQ(costLocalDyn.setUp(), 0);
    VecCreateMPI(PETSC_COMM_WORLD, rank == 0 ? N : 0, N, &ud);
    VecDuplicate(local.templateVec(), &ul);
    VecDuplicate(localDyn.templateVec(), &ulDyn);
  }
  void TearDown() override {
    VecDestroy(&ud);
    VecDestroy(&ul);
    VecDestroy(&ulDyn);
  }
  // A Vec like each model's state, all holding `all`.
  void set(const std::vector<double> &all) { setFromAll(ud, all), setFromAll(ul, all), setFromAll(ulDyn, all); }
  Vec like(Vec v) {
    Vec w;
    VecDuplicate(v, &w);
    return w;
  }

  ring::RingDense dense{M};
  ring::RingLocal local{M};
  ring::RingCostDense costDense{M};
  ring::RingCostLocal costLocal{local};
  ring::RingLocal localDyn{M, true};
  ring::RingCostLocal costLocalDyn{localDyn};
  Vec ud = nullptr, ul = nullptr, ulDyn = nullptr;
};

// Runs fill(model, vec-like-model) on both models and returns the gathered results.
template <class F> std::pair<std::vector<double>, std::vector<double>> both(Vec ud, Vec ul, HybridModel &d, HybridModel &l, F &&fill) {
  Vec a, b;
  VecDuplicate(ud, &a), VecDuplicate(ul, &b);
  VecSet(a, 777.0), VecSet(b, 777.0);
  EXPECT_EQ(fill(d, ud, a), 0);
  EXPECT_EQ(fill(l, ul, b), 0);
  auto r = std::make_pair(gatherAll(a), gatherAll(b));
  VecDestroy(&a), VecDestroy(&b);
  return r;
}

std::vector<double> denseMatrix(Mat J, PetscInt rows, PetscInt cols) { return denseAll(J, rows, cols); }

std::vector<std::vector<double>> samplePoints() {
  Lcg rng(2024);
  std::vector<std::vector<double>> pts;
  for (int k = 0; k < 3; ++k) pts.push_back(rng.vec(N));
  return pts;
}

TEST_F(LocalVsDense, EveryCallbackEqualsTheDenseModel) {
  Worst worst;
  const auto p = ring::parameters();
  Lcg rng(99);
  // Both local variants: static-size kernels (SFad) and the oscillator as a Dynamic (DFad) kernel.
  for (int variant = 0; variant < 2; ++variant) {
  ring::RingLocal &local = variant ? this->localDyn : this->local;
  ring::RingCostLocal &costLocal = variant ? this->costLocalDyn : this->costLocal;
  Vec ul = variant ? this->ulDyn : this->ul;
  for (const auto &u : samplePoints())
    for (double t : {0.1, 1.3})
      for (DiscreteState d : {DiscreteState{0, 0}, DiscreteState{0, 1}, DiscreteState{1, 0}, DiscreteState{1, 1}}) {
        const ModeContext c{p, d};
        const std::string at = " t=" + std::to_string(t) + " d=" + describe(d);
        set(u);
        // Residual.
        auto r = both(ud, ul, dense, local, [&](HybridModel &m, Vec x, Vec o) { return m.rhs(t, x, c, o); });
        worst("rhs" + at, r.first, r.second);
        // Jacobian (dense AIJ vs the preallocated sparse one).
        Mat Jd, Jl;
        ASSERT_EQ(dense.createJacobian(&Jd), 0);
        ASSERT_EQ(local.createJacobian(&Jl), 0);
        for (auto [m, J, x] : {std::tuple<HybridModel *, Mat, Vec>{&dense, Jd, ud}, std::tuple<HybridModel *, Mat, Vec>{&local, Jl, ul}}) {
          MatZeroEntries(J);
          ASSERT_EQ(m->rhsJacobian(t, x, c, J), 0);
          MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY);
        }
        worst("rhsJacobian" + at, denseMatrix(Jd, N, N), denseMatrix(Jl, N, N));
        MatDestroy(&Jd), MatDestroy(&Jl);
        // Dense n × (np + 2) matrices: ∂f/∂p, ∂u0/∂p, R_p (extra columns must stay zero).
        using MFill = std::function<PetscErrorCode(HybridModel &, Vec, Mat)>;
        const EventId rel{EventId::Guard, 1};
        for (auto [name, fill] : {std::pair<std::string, MFill>{"rhsJacobianP", [&](HybridModel &m, Vec x, Mat A) { return m.rhsJacobianP(t, x, c, A); }},
                                  std::pair<std::string, MFill>{"initialStateJacobianP", [&](HybridModel &m, Vec, Mat A) { return m.initialStateJacobianP(c, A); }},
                                  std::pair<std::string, MFill>{"resetJacobianP", [&](HybridModel &m, Vec x, Mat A) { return m.resetJacobianP(rel, t, x, c, A); }}}) {
          std::vector<double> res[2];
          int k = 0;
          for (auto [m, x] : {std::pair<HybridModel *, Vec>{&dense, ud}, std::pair<HybridModel *, Vec>{&local, ul}}) {
            Mat A;
            PetscInt nl;
            VecGetLocalSize(x, &nl);
            MatCreateDense(PETSC_COMM_WORLD, nl, PETSC_DECIDE, N, NP + 2, nullptr, &A);
            MatZeroEntries(A);
            ASSERT_EQ(fill(*m, x, A), 0) << name;
            MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
            res[k++] = denseAll(A, N, NP + 2);
            MatDestroy(&A);
          }
          for (PetscInt i = 0; i < N; ++i) EXPECT_EQ(res[1][i * (NP + 2) + NP], 0.0) << name << ": extra column written";
          worst(name + at, res[0], res[1]);
        }
        // ∂f/∂p into the local model's own sparse matrix (createParameterJacobian: the declared
        // writes × params pattern, what the engine uses) equals the dense model's.
        {
          Mat Ad, Al;
          PetscInt nl;
          VecGetLocalSize(ud, &nl);
          MatCreateDense(PETSC_COMM_WORLD, nl, PETSC_DECIDE, N, NP + 2, nullptr, &Ad);
          ASSERT_EQ(local.createParameterJacobian(NP + 2, &Al), 0);
          MatZeroEntries(Ad), MatZeroEntries(Al);
          ASSERT_EQ(dense.rhsJacobianP(t, ud, c, Ad), 0);
          ASSERT_EQ(local.rhsJacobianP(t, ul, c, Al), 0);
          for (Mat A : {Ad, Al}) MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
          worst("rhsJacobianP (sparse)" + at, denseAll(Ad, N, NP + 2), denseAll(Al, N, NP + 2));
          MatDestroy(&Ad), MatDestroy(&Al);
        }
        // (∂u0/∂p)ᵀ w for two directions: the local model's kernel-by-kernel product against the
        // dense model's (HybridModel's default, through the dense ∂u0/∂p), summed over ranks.
        {
          std::vector<Vec> wd, wl;
          for (int k = 0; k < 2; ++k) {
            const auto dir = rng.vec(N);
            wd.push_back(like(ud)), wl.push_back(like(ul));
            setFromAll(wd.back(), dir), setFromAll(wl.back(), dir);
          }
          std::vector<std::vector<PetscScalar>> od, ol;
          ASSERT_EQ(dense.initialStateJacobianPTranspose(c, wd, od), 0);
          ASSERT_EQ(local.initialStateJacobianPTranspose(c, wl, ol), 0);
          ASSERT_EQ(od.size(), 2u);
          ASSERT_EQ(ol.size(), 2u);
          for (int k = 0; k < 2; ++k) {
            MPI_Allreduce(MPI_IN_PLACE, od[k].data(), NP, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, ol[k].data(), NP, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
            double largest = 0;
            for (double x : od[k]) largest = std::max(largest, std::fabs(x));
            EXPECT_GT(largest, 0.01) << "u0 depends on p: the product must not vanish";
            worst("initialStateJacobianPTranspose" + at, od[k], ol[k]);
            VecDestroy(&wd[k]), VecDestroy(&wl[k]);
          }
        }
        // ∂f/∂t: the local callback against the dense template differentiated in t here.
        {
          std::vector<DFad> uf(u.begin(), u.end()), pf(p.begin(), p.end()), f(N);
          dense.rhs<DFad>(DFad(1, 0, t), uf.data(), pf.data(), d, f.data());
          std::vector<double> ft(N);
          for (PetscInt i = 0; i < N; ++i) ft[i] = f[i].dx(0);
          Vec o = like(ul);
          ASSERT_EQ(local.rhsTimeDerivative(t, ul, c, o), 0);
          worst("rhsTimeDerivative" + at, ft, gatherAll(o));
          Vec od = like(ud);
          ASSERT_EQ(dense.rhsTimeDerivative(t, ud, c, od), 0);
          worst("rhsTimeDerivative (ADModel)" + at, ft, gatherAll(od));
          VecDestroy(&od);
          VecDestroy(&o);
        }
        // Guards, their gradients (γ_u, γ_t, γ_p summed over ranks as the engine does).
        std::vector<PetscScalar> gd(2, 0.0), gl(2, 0.0), gls(2);
        ASSERT_EQ(dense.guards(t, ud, c, gd.data()), 0);
        ASSERT_EQ(local.guards(t, ul, c, gl.data()), 0);
        MPI_Allreduce(gl.data(), gls.data(), 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, gd.data(), 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
        worst("guards" + at, gd, gls);
        for (PetscInt j = 0; j < 2; ++j) {
          std::vector<double> tp[2];
          auto g = both(ud, ul, dense, local, [&](HybridModel &m, Vec x, Vec o) {
            std::vector<PetscScalar> loc(NP + 1, 0.0), sum(NP + 1);
            VecZeroEntries(o);
            const PetscErrorCode ierr = m.guardGradient(j, t, x, c, o, &loc[0], &loc[1]);
            MPI_Allreduce(loc.data(), sum.data(), NP + 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
            tp[&m == &dense ? 0 : 1] = sum;
            return ierr;
          });
          worst("guardGradient u" + at, g.first, g.second);
          worst("guardGradient t,p" + at, tp[0], tp[1]);
        }
        // Reset of the release guard: value, R_u v, R_uᵀ w, R_t.
        const auto v = rng.vec(N);
        Vec vd = like(ud), vl = like(ul);
        setFromAll(vd, v), setFromAll(vl, v);
        auto withV = [&](HybridModel &m) { return &m == &dense ? vd : vl; };
        r = both(ud, ul, dense, local, [&](HybridModel &m, Vec x, Vec o) { return m.reset(rel, t, x, c, o); });
        worst("reset" + at, r.first, r.second);
        r = both(ud, ul, dense, local, [&](HybridModel &m, Vec x, Vec o) { return m.resetJacobianAction(rel, t, x, c, withV(m), o); });
        worst("resetJacobianAction" + at, r.first, r.second);
        r = both(ud, ul, dense, local, [&](HybridModel &m, Vec x, Vec o) { return m.resetJacobianTransposeAction(rel, t, x, c, withV(m), o); });
        worst("resetJacobianTransposeAction" + at, r.first, r.second);
        r = both(ud, ul, dense, local, [&](HybridModel &m, Vec x, Vec o) { return m.resetTimeDerivative(rel, t, x, c, o); });
        worst("resetTimeDerivative" + at, r.first, r.second);
        // Initial state.
        r = both(ud, ul, dense, local, [&](HybridModel &m, Vec, Vec o) { return m.initialState(c, o); });
        worst("initialState", r.first, r.second);
        // Costs.
        for (auto [name, part] : {std::pair<std::string, int>{"terminal", 0}, {"integrand", 1}, {"measurement 0", 2}, {"measurement 1", 3}}) {
          std::vector<double> val(2), gp[2], gu[2];
          int k = 0;
          for (auto [cf, x] : {std::pair<CostFunction *, Vec>{&costDense, ud}, std::pair<CostFunction *, Vec>{&costLocal, ul}}) {
            PetscScalar value = 0;
            std::vector<PetscScalar> gpl(NP, 0.0);
            Vec g = like(x);
            VecZeroEntries(g);
            PetscErrorCode e1, e2;
            if (part == 0) e1 = cf->terminal(t, x, c, &value), e2 = cf->terminalGradient(t, x, c, g, gpl.data());
            else if (part == 1) e1 = cf->integrand(t, x, c, &value), e2 = cf->integrandGradient(t, x, c, g, gpl.data());
            else e1 = cf->measurement(part - 2, t, x, c, &value), e2 = cf->measurementGradient(part - 2, t, x, c, g, gpl.data());
            ASSERT_EQ(e1, 0);
            ASSERT_EQ(e2, 0);
            MPI_Allreduce(&value, &val[k], 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
            gp[k].resize(NP);
            MPI_Allreduce(gpl.data(), gp[k].data(), NP, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
            gu[k] = gatherAll(g);
            VecDestroy(&g);
            ++k;
          }
          if (part == 1) {  // ∂r/∂t: both paths and the template differentiated here
            std::vector<DFad> uf(u.begin(), u.end()), pf(p.begin(), p.end());
            const double rt = costDense.integrand<DFad>(DFad(1, 0, t), uf.data(), pf.data(), d).dx(0);
            std::vector<PetscScalar> loc(2, 0.0), sum(2);
            ASSERT_EQ(costDense.integrandTimeDerivative(t, ud, c, &loc[0]), 0);
            ASSERT_EQ(costLocal.integrandTimeDerivative(t, ul, c, &loc[1]), 0);
            MPI_Allreduce(loc.data(), sum.data(), 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
            worst("integrandTimeDerivative (ADCost)" + at, {rt}, {sum[0]});
            worst("integrandTimeDerivative (local)" + at, {rt}, {sum[1]});
            EXPECT_NE(rt, 0.0);
          }
          worst(name + " value" + at, {val[0]}, {val[1]});
          worst(name + " _u" + at, gu[0], gu[1]);
          worst(name + " _p" + at, gp[0], gp[1]);
        }
        // Second-order products: H δz for random δz = (δu, δp, δt).
        const ZLayout L{N, NP};
        const auto lam = rng.vec(N), dz = rng.vec(L.size());
        Vec ld = like(ud), ll = like(ul);
        setFromAll(ld, lam), setFromAll(ll, lam);
        auto lamOf = [&](const void *m) { return m == (const void *)&dense ? ld : ll; };
        using Call = std::function<PetscErrorCode(const void *, Vec, const SecondOrderDirection &, const SecondOrderOutput &)>;
        const SecondOrderModel &sd = dense, &sl = local;
        const SecondOrderCost &cd = costDense, &cl = costLocal;
        std::vector<std::pair<std::string, Call>> products = {
            {"rhsHessianProduct", [&](const void *m, Vec x, auto &dir, auto &out) {
               return (m == &dense ? sd : sl).rhsHessianProduct(t, x, c, lamOf(m), dir, out);
             }},
            {"guardHessianProduct 0", [&](const void *m, Vec x, auto &dir, auto &out) { return (m == &dense ? sd : sl).guardHessianProduct(0, t, x, c, dir, out); }},
            {"guardHessianProduct 1", [&](const void *m, Vec x, auto &dir, auto &out) { return (m == &dense ? sd : sl).guardHessianProduct(1, t, x, c, dir, out); }},
            {"resetHessianProduct", [&](const void *m, Vec x, auto &dir, auto &out) {
               return (m == &dense ? sd : sl).resetHessianProduct(rel, t, x, c, lamOf(m), dir, out);
             }},
            {"terminalHessianProduct", [&](const void *m, Vec x, auto &dir, auto &out) { return (m == &dense ? cd : cl).terminalHessianProduct(t, x, c, dir, out); }},
            {"integrandHessianProduct", [&](const void *m, Vec x, auto &dir, auto &out) { return (m == &dense ? cd : cl).integrandHessianProduct(t, x, c, dir, out); }},
            {"measurementHessianProduct", [&](const void *m, Vec x, auto &dir, auto &out) { return (m == &dense ? cd : cl).measurementHessianProduct(1, t, x, c, dir, out); }},
        };
        for (auto &[name, call] : products) {
          PetscErrorCode e1, e2;
          const auto hd = productZ(L, ud, dz, [&](auto &dir, auto &out) { return call(&dense, ud, dir, out); }, &e1);
          const auto hl = productZ(L, ul, dz, [&](auto &dir, auto &out) { return call(&local, ul, dir, out); }, &e2);
          ASSERT_EQ(e1, 0) << name;
          ASSERT_EQ(e2, 0) << name;
          worst(name + at, hd, hl);
        }
        std::vector<PetscScalar> hd(NP), hl(NP), hs(2 * NP);
        const auto dp = rng.vec(NP);
        ASSERT_EQ(sd.initialStateHessianProduct(c, ld, dp.data(), hd.data()), 0);
        ASSERT_EQ(sl.initialStateHessianProduct(c, ll, dp.data(), hl.data()), 0);
        hd.insert(hd.end(), hl.begin(), hl.end());
        MPI_Allreduce(hd.data(), hs.data(), 2 * NP, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
        worst("initialStateHessianProduct", {hs.begin(), hs.begin() + NP}, {hs.begin() + NP, hs.end()});
        VecDestroy(&vd), VecDestroy(&vl), VecDestroy(&ld), VecDestroy(&ll);
      }
  }
  // Time event: T(p) and ∂T/∂p.
  const auto te = dense.timeEvent(0, p), tl = local.timeEvent(0, p);
  EXPECT_EQ(te.name, tl.name);
  worst("timeEvent", {te.time}, {tl.time});
  worst("timeEvent dT/dp", te.dtime_dp, tl.dtime_dp);
  {  // T_pp δp: both paths, nonzero, and against differences of ∂T/∂p
    const SecondOrderModel &sd = dense, &sl = local;
    std::vector<PetscScalar> hd(NP), hl(NP), fd(NP);
    const std::vector<double> dp = Lcg(11).vec(NP);
    ASSERT_EQ(sd.timeEventHessianProduct(0, p, dp.data(), hd.data()), 0);
    ASSERT_EQ(sl.timeEventHessianProduct(0, p, dp.data(), hl.data()), 0);
    worst("timeEventHessianProduct", hd, hl);
    std::vector<double> pp = p, pm = p;
    for (PetscInt k = 0; k < NP; ++k) pp[k] += 1e-5 * dp[k], pm[k] -= 1e-5 * dp[k];
    const auto gp = local.timeEvent(0, pp).dtime_dp, gm = local.timeEvent(0, pm).dtime_dp;
    for (PetscInt k = 0; k < NP; ++k) fd[k] = (gp[k] - gm[k]) / 2e-5;
    EXPECT_LE(relDiffInf(hl, fd), 1e-7);
    EXPECT_GT(maxAbs(hl), 1e-3);
  }
  PetscPrintf(PETSC_COMM_WORLD, "local vs dense: %d comparisons, worst relative difference %.2e (%s)\n", worst.compared, worst.value,
              worst.where.c_str());
  EXPECT_LE(worst.value, 1e-14) << worst.where;
}

// (λᵀf) second derivatives of the local path against differences of its own first derivatives:
// G(z) = [J_uᵀλ | J_pᵀλ | f_tᵀλ] from the assembled sparse Jacobian, ∂f/∂p and ∂f/∂t.
TEST_F(LocalVsDense, LocalProductsMatchDifferencesOfLocalFirstDerivatives) {
  const ZLayout L{N, NP};
  Lcg rng(5);
  const auto lam = rng.vec(N);
  Vec lv = like(ul), x = like(ul), out = like(ul);
  setFromAll(lv, lam);
  Mat J, Jp;
  double worstFD = 0, worstSym = 0;
  ASSERT_EQ(local.createJacobian(&J), 0);
  PetscInt nl;
  VecGetLocalSize(ul, &nl);
  MatCreateDense(PETSC_COMM_WORLD, nl, PETSC_DECIDE, N, NP, nullptr, &Jp);
  for (DiscreteState d : {DiscreteState{1, 0}, DiscreteState{0, 1}}) {
    auto grad = [&](const std::vector<double> &z) {
      const auto p = L.p(z);
      const ModeContext c{p, d};
      setFromAll(x, L.u(z));
      MatZeroEntries(J), MatZeroEntries(Jp);
      EXPECT_EQ(local.rhsJacobian(L.t(z), x, c, J), 0);
      EXPECT_EQ(local.rhsJacobianP(L.t(z), x, c, Jp), 0);
      MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY);
      MatAssemblyBegin(Jp, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(Jp, MAT_FINAL_ASSEMBLY);
      Vec gp;
      MatCreateVecs(Jp, &gp, nullptr);
      MatMultTranspose(J, lv, out);
      MatMultTranspose(Jp, lv, gp);
      std::vector<double> g = gatherAll(out), gpa = gatherAll(gp);
      g.insert(g.end(), gpa.begin(), gpa.end());
      EXPECT_EQ(local.rhsTimeDerivative(L.t(z), x, c, out), 0);
      PetscScalar ft;
      VecDot(out, lv, &ft);
      g.push_back(ft);
      VecDestroy(&gp);
      return g;
    };
    std::vector<double> z = rng.vec(N);
    const auto p0 = ring::parameters();
    z.insert(z.end(), p0.begin(), p0.end());
    z.push_back(0.9);
    auto prod = [&](const std::vector<double> &zz, const std::vector<double> &dz) {
      const auto p = L.p(zz);
      setFromAll(x, L.u(zz));
      PetscErrorCode ierr;
      auto h = productZ(L, ul, dz, [&](auto &dir, auto &o) { return local.rhsHessianProduct(L.t(zz), x, {p, d}, lv, dir, o); }, &ierr);
      EXPECT_EQ(ierr, 0);
      return h;
    };
    for (int r = 0; r < 4; ++r) {
      const auto dz = rng.vec(L.size());
      const auto H = prod(z, dz);
      std::vector<double> zp = z, zm = z, fd(L.size());
      for (PetscInt i = 0; i < L.size(); ++i) zp[i] += 1e-5 * dz[i], zm[i] -= 1e-5 * dz[i];
      const auto gp = grad(zp), gm = grad(zm);
      for (PetscInt i = 0; i < L.size(); ++i) fd[i] = (gp[i] - gm[i]) / 2e-5;
      EXPECT_LE(relDiffInf(H, fd), 1e-7) << describe(d);
      EXPECT_GT(maxAbs(H), 1e-2);
      worstFD = std::max(worstFD, relDiffInf(H, fd));
    }
    const auto a = rng.vec(L.size()), b = rng.vec(L.size());
    const double ab = dot(a, prod(z, b)), ba = dot(b, prod(z, a));
    EXPECT_LE(std::abs(ab - ba), 1e-12 * std::abs(ab)) << describe(d);
    worstSym = std::max(worstSym, std::abs(ab - ba) / std::abs(ab));
  }
  PetscPrintf(PETSC_COMM_WORLD, "local H(λᵀf)δz vs FD of the assembled first derivatives: worst %.2e, asymmetry %.2e\n", worstFD, worstSym);
  MatDestroy(&J), MatDestroy(&Jp);
  VecDestroy(&lv), VecDestroy(&x), VecDestroy(&out);
}

TEST_F(LocalVsDense, JacobianPatternIsTheDeclaredCouplings) {
  // Oscillator: rows (x_i, v_i) × (x_i, v_i); spring i: rows (y_i, v_i, v_{i+1}) × (y_i, x_i, x_{i+1});
  // switch: v_0 × (x_0, v_0); forcing: v_2 × x_2. Distinct (row, col): x_i row {x_i, v_i}; v_i row
  // {x_i, v_i, y_i, x_{i+1}, y_{i−1}, x_{i−1}}; y_i row {y_i, x_i, x_{i+1}} → 2 + 6 + 3 per
  // oscillator, all containing the diagonal.
  Mat J;
  MatInfo info;
  ASSERT_EQ(local.createJacobian(&J), 0);
  MatGetInfo(J, MAT_GLOBAL_SUM, &info);
  EXPECT_EQ((PetscInt)info.nz_used, 11 * M);
  // ∂f/∂p: oscillator rows (x_i, v_i) × (k, ζ), spring rows (y_i, v_i, v_{i+1}) × k, switch v_0 ×
  // (θ, β, e): x_i {k, ζ}, v_i {k, ζ}, y_i {k}, v_0 += {θ, β, e} → 5 per oscillator + 3.
  Mat Jp;
  ASSERT_EQ(local.createParameterJacobian(NP + 2, &Jp), 0);
  MatGetInfo(Jp, MAT_GLOBAL_SUM, &info);
  EXPECT_EQ((PetscInt)info.nz_used, 5 * M + 3);
  MatDestroy(&Jp);
  // Writing outside the pattern is an error (MAT_NEW_NONZERO_LOCATION_ERR).
  {
    ErrorCapture cap;
    PetscErrorCode ierr = 0;
    if (local.owns(0)) ierr = MatSetValue(J, 0, 3 * 3, 1.0, ADD_VALUES);
    if (local.owns(0)) EXPECT_NE(ierr, 0);
  }
  MatDestroy(&J);
  // The kernels are spread over the ranks: every instance evaluated exactly once.
  PetscInt count = local.localKernelCount(), total;
  MPI_Allreduce(&count, &total, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_EQ(total, 2 * M + 2);
}

// ---- whole solves ---------------------------------------------------------------------------
struct Result {
  std::vector<double> eventTimes, finalState, objective, fwd, adj, fwdU0, adjU0;
  std::vector<DiscreteState> modes;
};

Result solveRing(HybridModel &m, CostFunction &cost, const char *extra = "") {
  Result r;
  Solver s(m);
  s.addCost(cost);
  // Time event, engage, release with its reset (short: MPI tests on 2 cores).
  EXPECT_EQ(configureFixedStep(s, TSCN, 0.02, 2.0, extra), 0);
  s.setForwardSensitivities(true);
  s.setAdjoint(true);
  s.setInitialStateSensitivities({0, 4, 10});
  EXPECT_EQ(s.solve(), 0);
  for (const auto &e : s.result().events().records()) r.eventTimes.push_back(e.time), r.modes.push_back(e.after);
  r.finalState = gatherAll(s.result().finalState());
  r.objective = s.result().objective;
  r.fwd = s.result().gradient[0].forwardP;
  r.adj = s.result().gradient[0].adjointP;
  r.fwdU0 = s.result().gradient[0].forwardU0;
  r.adjU0 = s.result().gradient[0].adjointU0;
  return r;
}

TEST_F(LocalVsDense, HybridSolveForwardAndAdjointEqualTheDenseModel) {
  const Result d = solveRing(dense, costDense), l = solveRing(local, costLocal);
  ASSERT_GE(d.eventTimes.size(), 3u) << "the test needs several events";
  ASSERT_EQ(d.eventTimes.size(), l.eventTimes.size());
  bool sawReset = false, sawTime = false;
  for (size_t k = 0; k < d.modes.size(); ++k) {
    EXPECT_EQ(d.modes[k], l.modes[k]) << "event " << k;
    sawReset |= k > 0 && d.modes[k][0] == 0 && d.modes[k - 1][0] == 1;
    sawTime |= d.modes[k][1] == 1 && (k == 0 || d.modes[k - 1][1] == 0);
  }
  EXPECT_TRUE(sawReset);
  EXPECT_TRUE(sawTime);
  Worst w;
  w("event times", d.eventTimes, l.eventTimes);
  w("final state", d.finalState, l.finalState);
  w("objective", d.objective, l.objective);
  w("forward gradient p", d.fwd, l.fwd);
  w("adjoint gradient p", d.adj, l.adj);
  w("forward gradient u0", d.fwdU0, l.fwdU0);
  w("adjoint gradient u0", d.adjU0, l.adjU0);
  Worst self;
  self("local adjoint vs forward p", l.adj, l.fwd);
  self("local adjoint vs forward u0", l.adjU0, l.fwdU0);
  PetscPrintf(PETSC_COMM_WORLD, "ring solve: %zu events, local vs dense worst %.2e (%s); local adjoint vs forward %.2e\n",
              d.eventTimes.size(), w.value, w.where.c_str(), self.value);
  EXPECT_LE(w.value, 1e-14) << w.where;
  EXPECT_LE(self.value, 1e-12) << self.where;
  // Non-vacuous: every parameter matters.
  for (PetscInt k = 0; k < NP; ++k) EXPECT_GT(std::abs(l.adj[k]), 1e-6) << "dJ/dp" << k;
}

// The third check of the local path's gradient: central finite differences of the whole hybrid
// solve and the Taylor test (hybridsens/verify.hpp), serial, CN and BEULER. With the engine's
// discrete-exact event derivative the gradient is the exact derivative of the computed
// objective, so FD agree to 1e-6 at the test's moderate step.
TEST_F(LocalVsDense, LocalGradientAgreesWithFiniteDifferences) {
  PetscMPIInt size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  if (size > 1) GTEST_SKIP() << "serial check (the distributed gradient equals the dense one above)";
  ScopedOptions o("-ts_adapt_type none");
  for (const char *type : {TSCN, TSBEULER}) {
    Solver s(local);
    s.addCost(costLocal);
    ASSERT_EQ(s.setFromOptions(), 0);
    TSSetType(s.ts(), type);
    TSSetTimeStep(s.ts(), 0.02);
    TSSetMaxTime(s.ts(), 4.0);
    ASSERT_EQ(s.setFromOptions(), 0);
    GradientCheckOptions opt;
    GradientCheckReport rep;
    EXPECT_EQ(checkGradient(s, opt, rep), 0) << type;
    EXPECT_GE(s.result().events().size(), 3u) << type;  // the time event, engage and release at least
    EXPECT_TRUE(rep.passed) << type;
    EXPECT_LE(rep.adjointVsForward, 1e-12) << type;
    EXPECT_LE(rep.adjointVsFD, 1e-6) << type;
    EXPECT_GT(rep.taylorOrder, 1.8) << type;
  }
}

// ---- Guard rates ----------------------------------------------------------------------------
// The engine asks for ġ_j = γ_t + γ_u·u̇ of every active guard at each step end through
// HybridModel::guardRates. The AD front ends override it with one directional derivative per
// guard; the default builds γ_u per guard (guardGradient) and dots it with u̇. Both must agree,
// on the ring's guards (no t) and on guards that depend on t, on parameters and on entries
// owned by three different ranks (at 3 ranks).

// Guards 2 and 3: reads (x_0, x_{M−1}, v_2), params (θ, β); written once for both front ends.
struct ClockGuard {
  static constexpr int numReads = 3, numWrites = 0, numParams = 2;
  template <class S> S guard(PetscInt k, S t, const S *u, const S *p, const DiscreteState &) const {
    using std::cos;
    using std::sin;
    return k == 0 ? S(u[0] - p[0] * sin(3.0 * t) * u[1]) : S(u[2] * cos(t) + p[1] * t * t - u[1] * u[0]);
  }
};
constexpr PetscInt clockReads[3] = {0, 3 * (M - 1), 7};
// Guard 2 always active, guard 3 only while d[1] = 0; 0 and 1 as in the ring.
inline bool clockActive(PetscInt j, const DiscreteState &d) { return j < 2 ? d[0] == j : j == 2 || d[1] == 0; }

class RingLocalClock : public ring::RingLocal {
public:
  RingLocalClock() : RingLocal(M) { add(ClockGuard{}, {{clockReads[0], clockReads[1], clockReads[2]}, {}, {2, 3}, {2, 3}}); }
  PetscInt numGuards() const override { return 4; }
  GuardInfo guardInfo(PetscInt j) const override { return j < 2 ? RingLocal::guardInfo(j) : GuardInfo{"clock" + std::to_string(j), Direction::Both}; }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return clockActive(j, d); }
};

class ClockDense : public ADModel<ClockDense> {
public:
  PetscInt stateSize() const override { return N; }
  std::vector<PetscReal> defaultParameters() const override { return ring::parameters(); }
  PetscInt numGuards() const override { return 4; }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return clockActive(j, d); }
  template <class S> void rhs(S, const S *u, const S *, const DiscreteState &, S *f) const {
    for (PetscInt i = 0; i < N; ++i) f[i] = -u[i];
  }
  template <class S> void initialState(const S *, S *u0) const {
    for (PetscInt i = 0; i < N; ++i) u0[i] = 0.0;
  }
  template <class S> S guard(PetscInt j, S t, const S *u, const S *p, const DiscreteState &d) const {
    if (j < 2) return j == 0 ? S(u[0] - p[2]) : S(u[0] - 0.5 * p[2]);
    const S r[3] = {u[clockReads[0]], u[clockReads[1]], u[clockReads[2]]}, q[2] = {p[2], p[3]};
    return ClockGuard{}.guard<S>(j - 2, t, r, q, d);
  }
};

TEST_F(LocalVsDense, GuardRatesEqualTheGradientLoop) {
  RingLocalClock clockLocal;
  ClockDense clockDense;
  ASSERT_EQ(clockLocal.setUp(), 0);
  Vec ucl, udcl, udd, udl, udlDyn;
  VecDuplicate(clockLocal.templateVec(), &ucl), VecDuplicate(ucl, &udcl);
  VecDuplicate(ud, &udd), VecDuplicate(ul, &udl), VecDuplicate(ulDyn, &udlDyn);
  const auto p = ring::parameters();
  Lcg rng(7);
  double worst = 0, worstFD = 0, largest = 0;
  std::string where;
  int compared = 0, timeDependent = 0;
  for (const auto &u : samplePoints())
    for (double t : {0.1, 1.3})
      for (DiscreteState d : {DiscreteState{0, 0}, DiscreteState{0, 1}, DiscreteState{1, 0}, DiscreteState{1, 1}}) {
        const ModeContext c{p, d};
        const auto udot = rng.vec(N);
        set(u);
        setFromAll(ucl, u);
        for (Vec v : {udd, udl, udlDyn, udcl}) setFromAll(v, udot);
        struct Case {
          const char *name;
          HybridModel &m;
          Vec x, xd;
        } cases[] = {{"RingDense", dense, ud, udd}, {"RingLocal", local, ul, udl}, {"RingLocal (DFad)", localDyn, ulDyn, udlDyn},
                     {"ClockDense", clockDense, ud, udd}, {"RingLocalClock", clockLocal, ucl, udcl}};
        for (auto &k : cases) {
          const PetscInt ng = k.m.numGuards();
          std::vector<PetscScalar> hook(ng, 0.0), loop(ng, 0.0), g0(ng, 0.0), gp(ng, 0.0), gm(ng, 0.0);
          Vec work;
          ASSERT_EQ(VecDuplicate(k.x, &work), 0);
          ASSERT_EQ(k.m.guardRates(t, k.x, k.xd, c, work, hook.data()), 0) << k.name;
          ASSERT_EQ(k.m.HybridModel::guardRates(t, k.x, k.xd, c, work, loop.data()), 0) << k.name;
          VecDestroy(&work);
          // Independent: central difference of the guard values along (u̇, 1) in (u, t).
          const double h = 1e-5;
          for (auto [sgn, out] : {std::pair<double, std::vector<PetscScalar> *>{+1.0, &gp}, {-1.0, &gm}}) {
            std::vector<double> us(N);
            for (PetscInt i = 0; i < N; ++i) us[i] = u[i] + sgn * h * udot[i];
            setFromAll(k.x, us);
            ASSERT_EQ(k.m.guards(t + sgn * h, k.x, c, out->data()), 0) << k.name;
          }
          setFromAll(k.x, u);
          for (auto *v : {&hook, &loop, &gp, &gm}) MPI_Allreduce(MPI_IN_PLACE, v->data(), (int)ng, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
          for (PetscInt j = 0; j < ng; ++j) {
            if (!k.m.guardActive(j, d)) continue;
            const double e = std::abs(hook[j] - loop[j]) / std::max(1.0, std::abs(loop[j]));
            const double fd = (gp[j] - gm[j]) / (2 * h), efd = std::abs(fd - loop[j]) / std::max(1.0, std::abs(loop[j]));
            ++compared;
            timeDependent += j >= 2;
            largest = std::max(largest, std::abs(loop[j]));
            worstFD = std::max(worstFD, efd);
            if (e > worst || std::isnan(e)) worst = std::isnan(e) ? INFINITY : e, where = std::string(k.name) + " guard " + std::to_string(j) + " t=" + std::to_string(t) + " d=" + describe(d);
          }
        }
      }
  for (Vec *v : {&ucl, &udcl, &udd, &udl, &udlDyn}) VecDestroy(v);
  PetscPrintf(PETSC_COMM_WORLD, "guardRates: %d active guard rates (%d time-dependent), hook vs gradient loop worst %.2e (%s), vs central differences %.2e\n",
              compared, timeDependent, worst, where.c_str(), worstFD);
  EXPECT_GT(timeDependent, 0);
  EXPECT_GT(largest, 0.5);  // non-vacuous: rates of order one
  EXPECT_LE(worst, 1e-14) << where;
  EXPECT_LE(worstFD, 1e-8);
}

// The benchmark's swing-equation ring (bench/swing_models.hpp): local-kernel AD residual and
// Jacobian against the hand-coded ones (serial, computed redundantly on every rank), entry by
// entry, with the AD model distributed.
TEST(SwingKernels, ResidualAndJacobianEqualHandCodedEntryByEntry) {
  const PetscInt Nm = 20, n = 2 * Nm;
  swing::SwingAD ad(Nm);
  ASSERT_EQ(ad.setUp(), 0);
  swing::SwingHand hand(Nm, false);
  const std::vector<PetscReal> p = ad.defaultParameters();
  const DiscreteState d;
  const ModeContext c{p, d};
  std::vector<double> x(n);
  for (PetscInt i = 0; i < Nm; ++i) x[2 * i] = 0.9 * std::sin(1.0 * i), x[2 * i + 1] = 0.4 * std::cos(3.0 * i);
  Vec ua, fa, uh, fh;
  VecDuplicate(ad.templateVec(), &ua), VecDuplicate(ua, &fa);
  VecCreateSeq(PETSC_COMM_SELF, n, &uh), VecDuplicate(uh, &fh);
  setFromAll(ua, x), setFromAll(uh, x);
  ASSERT_EQ(ad.rhs(0.3, ua, c, fa), 0);
  ASSERT_EQ(hand.rhs(0.3, uh, c, fh), 0);
  EXPECT_LE(relDiffInf(gatherAll(fa), gatherAll(fh)), 1e-15);
  Mat Ja, Jh;
  ASSERT_EQ(ad.createJacobian(&Ja), 0);
  ASSERT_EQ(hand.createJacobian(&Jh), 0);
  MatZeroEntries(Ja), MatZeroEntries(Jh);
  ASSERT_EQ(ad.rhsJacobian(0.3, ua, c, Ja), 0);
  ASSERT_EQ(hand.rhsJacobian(0.3, uh, c, Jh), 0);
  for (Mat J : {Ja, Jh}) MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY);
  const auto a = denseAll(Ja, n, n);
  std::vector<double> h(n * n);
  for (PetscInt i = 0; i < n; ++i)
    for (PetscInt j = 0; j < n; ++j) MatGetValue(Jh, i, j, &h[i * n + j]);
  EXPECT_LE(relDiffInf(a, h), 1e-15);
  EXPECT_GT(maxAbs(h), 0.1);
  MatDestroy(&Ja), MatDestroy(&Jh);
  VecDestroy(&ua), VecDestroy(&fa), VecDestroy(&uh), VecDestroy(&fh);
}

// ---- declaration errors ---------------------------------------------------------------------
struct Bad : ring::RingCommon<LocalKernelModel> {
  explicit Bad(int which) : RingCommon(3) {
    PetscCallAbort(PETSC_COMM_WORLD, setSizes(9));
    if (which == 0) add(ring::Spring{}, {{2, 0}, {2, 1, 4}, {0}, {}});              // 2 reads, numReads = 3
    if (which == 1) add(ring::Spring{}, {{2, 0, 9}, {2, 1, 4}, {0}, {}});           // index 9 out of range
    if (which == 2) add(ring::Spring{}, {{2, 0, 0}, {2, 1, 4}, {0}, {}});           // repeated read
    if (which == 3) add(ring::Switch{}, {{0, 1}, {1}, {2, 3, 4}, {0}});            // guard 1 unclaimed
    if (which == 4) {                                                                // guard 0 claimed twice
      add(ring::Switch{}, {{0, 1}, {1}, {2, 3, 4}, {0, 1}});
      add(ring::Switch{}, {{3, 4}, {4}, {2, 3, 4}, {0, 1}});
    }
    if (which == 5) add(ring::Switch{}, {{0, 1}, {2}, {2, 3, 4}, {0, 1}});         // reset kernel writes a row it does not read
    if (which == 6) add(ring::Spring{}, {{2, 0, 3}, {2, 1, 4}, {7}, {}});           // parameter 7 of 5
  }
};

TEST(LocalKernelErrors, DeclarationErrorsAreReportedBySetUp) {
  const char *expect[] = {"numReads", "out of range", "repeated", "guard 1 is evaluated by 0", "guard 0 is evaluated by 2",
                          "must read every row it writes", "parameter index 7"};
  for (int which = 0; which < 7; ++which) {
    Bad m(which);
    ErrorCapture cap;
    EXPECT_NE(m.setUp(), 0) << which;
    // The rank that found the problem names it; the others report "another rank".
    EXPECT_TRUE(cap.message().find(expect[which]) != std::string::npos || cap.message().find("another rank") != std::string::npos)
        << which << ": " << cap.message();
  }
}

TEST(LocalKernelErrors, CallbacksRefuseToRunBeforeSetUp) {
  ring::RingLocal m(3);
  Mat J = nullptr;
  ErrorCapture cap;
  EXPECT_NE(m.createJacobian(&J), 0);
  EXPECT_NE(cap.message().find("before setUp()"), std::string::npos) << cap.message();
}

} // namespace
