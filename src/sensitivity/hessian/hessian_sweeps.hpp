// HessianSweeps: the library's own discrete second-order sweeps over the engine's stored
// trajectory (no re-solve), for explicit RK and for endpoint theta / backward Euler.
//
// Variables q = (p, u0[idx]); a block of m directions V = (Vp, Vz). Per step n (t_{n-1} → t_n,
// h, in the discrete state the step ran in):
//
//  RK (stages Y_i = u_{n-1} + h Σ_{l<i} a_il K_l, K_i = f(t_{n-1} + c_i h, Y_i), u_n = u_{n-1} + h Σ b_i K_i):
//    tangent   δY_i = δu_{n-1} + h Σ_{l<i} a_il δK_l,  δK_i = f_u δY_i + f_p Vp,  δu_n = δu_{n-1} + h Σ b_i δK_i
//    adjoint   K̄_i = h b_i λ_n + h Σ_{l>i} a_li Ȳ_l,  Ȳ_i = f_uᵀ K̄_i + h b_i r_u(Y_i),
//              λ_{n-1} = λ_n + Σ Ȳ_i,  μ += f_pᵀ K̄_i + h b_i r_p(Y_i)
//    2nd order δK̄_i = h b_i σ_n + h Σ_{l>i} a_li δȲ_l,  (hu, hp) = ∇²(K̄_i·f + h b_i r)(Y_i)·(δY_i, Vp),
//              δȲ_i = f_uᵀ δK̄_i + hu,  σ_{n-1} = σ_n + Σ δȲ_i,  δμ += f_pᵀ δK̄_i + hp
//  theta (u_n = u_{n-1} + h[(1-θ) f(t_{n-1}, u_{n-1}) + θ f(t_n, u_n)], B = I - hθ f_u(u_n)):
//    tangent   B δu_n = δu_{n-1} + h(1-θ)(f_u δu_{n-1} + f_p Vp)|_{n-1} + hθ f_p Vp|_n
//    adjoint   ν = B⁻ᵀ(λ_n + hθ r_u(u_n)),  λ_{n-1} = ν + h(1-θ)(f_uᵀ ν + r_u)|_{n-1},
//              μ += hθ(f_pᵀ ν + r_p)|_n + h(1-θ)(f_pᵀ ν + r_p)|_{n-1}
//    2nd order (hu, hp)|_x = ∇²(ν·f + r)(x)·(δx, Vp);  δν = B⁻ᵀ(σ_n + hθ hu|_n),
//              σ_{n-1} = δν + h(1-θ)(f_uᵀ δν + hu)|_{n-1},  δμ += hθ(f_pᵀ δν + hp)|_n + h(1-θ)(f_pᵀ δν + hp)|_{n-1}
//  at each measurement time t_n: λ += g_u, μ += g_p, (σ, δμ) += ∇²g·(δu_n, Vp); terminal alike;
//  at t0: dJ/dp = μ + u0_pᵀ λ_0, dJ/du0[idx] = λ_0[idx];
//         ∇²J v = (δμ + u0_pᵀ σ_0 + (λ_0·u0)_pp Vp,  σ_0[idx]).
// The hybrid formula sums Zᵀ(hu, hp) over the same points (Z = (δx, Vp) of every direction) with
// the multipliers K̄_i / ν stored by a first-order reverse sweep, then adds Vpᵀ(λ_0·u0)_pp Vp.
#pragma once

#include "engine/engine.hpp"
#include "engine/cost_evaluator.hpp"
#include "sensitivity/hessian/second_order_callbacks.hpp"

#include <petscksp.h>

#include <vector>

namespace hybridsens {

// m directions in q = (p, u0[idx]).
struct HessianDirections {
  std::vector<std::vector<PetscScalar>> vp, vz;  // [j][np], [j][nz]
  bool unit = false;                              // the n_q unit directions (vp[j][q] = δ_jq)
  size_t size() const { return vp.size(); }
  // The n_q unit directions (for a full Hessian).
  static HessianDirections identity(PetscInt np, PetscInt nz);
  // Directions given as rows of n_q = np + nz entries.
  static HessianDirections fromRows(const std::vector<std::vector<PetscScalar>> &v, PetscInt np, PetscInt nz);
};

struct SecondOrderResults {
  std::vector<std::vector<PetscScalar>> gradient;               // [cost][q]
  std::vector<std::vector<std::vector<PetscScalar>>> products;  // forward-over-adjoint: [cost][j][q] = ∇²J_k v_j
  std::vector<std::vector<std::vector<PetscScalar>>> quadratic; // hybrid: [cost][l][j] = v_lᵀ ∇²J_k v_j
};

class HessianSweeps {
public:
  HessianSweeps(Engine &engine, CostEvaluator &costs, SecondOrderCallbacks &callbacks, std::vector<PetscInt> u0Indices);
  ~HessianSweeps();
  HessianSweeps(const HessianSweeps &) = delete;
  HessianSweeps &operator=(const HessianSweeps &) = delete;

  // Refuses what the sweeps cannot differentiate exactly (hessian.hpp, "Scope"); reads the scheme.
  PetscErrorCode setUp();
  // First-order reverse sweep only (its gradient must equal the library's adjoint).
  PetscErrorCode gradient(SecondOrderResults &out);
  PetscErrorCode forwardOverAdjoint(const HessianDirections &V, SecondOrderResults &out);
  PetscErrorCode hybrid(const HessianDirections &V, SecondOrderResults &out);

private:

  // Sweeps. The tangent sweep stores tangents (for the reverse sweep) or accumulates the hybrid
  // quadratic forms with stored multipliers; the reverse sweep carries λ (and σ if second).
  PetscErrorCode tangentSweep(const HessianDirections &V, bool store, bool accumulate);
  PetscErrorCode reverseSweep(const HessianDirections &V, bool second, bool storeMultipliers);
  PetscErrorCode rkTangentStep(PetscInt n, const HessianDirections &V, bool store, bool accumulate);
  PetscErrorCode thetaTangentStep(PetscInt n, const HessianDirections &V, bool store, bool accumulate);
  PetscErrorCode rkReverseStep(PetscInt n, const HessianDirections &V, bool second, bool storeMultipliers);
  PetscErrorCode thetaReverseStep(PetscInt n, const HessianDirections &V, bool second, bool storeMultipliers);

  // Pieces shared by the schemes.
  PetscErrorCode allocate(size_t m, bool second);
  PetscErrorCode initialTangent(const HessianDirections &V);
  PetscErrorCode evaluateJacobians(PetscReal t, Vec u, const DiscreteState &d);  // f_u into J, f_p into P
  PetscErrorCode factorShifted(PetscReal t, Vec u, const DiscreteState &d, PetscReal htheta);  // B = I - hθ f_u, f_p
  // hybrid: H_k[l][j] += s (Z_l · ∇²(w·f + r)(x)·Z_j) for all directions (Z = (dx_j, Vp_j)).
  PetscErrorCode accumulateQuadratic(size_t k, PetscReal t, Vec x, const DiscreteState &d, Vec w, PetscReal rWeight, PetscReal scale,
                                     const std::vector<Vec> &dx, const HessianDirections &V);
  // (hu, hp) = ∇²(w·f)(x)·(v, vp) + rWeight ∇²r_k(x)·(v, vp)   (w may be null: cost terms only).
  PetscErrorCode lagrangianProduct(size_t k, PetscReal t, Vec x, const DiscreteState &d, Vec w, PetscReal rWeight, Vec v,
                                   const PetscScalar *vp, Vec hu, std::vector<PetscScalar> &hp);
  // Measurements (and, at the final time, the terminal part) at the boundary after step n.
  PetscErrorCode boundaryTermsReverse(PetscInt n, const HessianDirections &V, bool second);
  PetscErrorCode boundaryTermsHybrid(PetscInt n, const HessianDirections &V);
  PetscErrorCode boundaryState(PetscInt n, Vec *u, DiscreteState *d);
  PetscErrorCode initialStateTerms(const HessianDirections &V, bool second, bool hybrid, SecondOrderResults &out);

  // acc[l] += s Σ_i P(i,l) x(i) over the owned rows (reduced over ranks at the end of a sweep).
  PetscErrorCode addParameterTranspose(Vec x, PetscReal s, std::vector<PetscScalar> &acc);
  // y += s P vp.
  PetscErrorCode addParameterProduct(const PetscScalar *vp, PetscReal s, Vec y);
  PetscErrorCode storeTangent(std::vector<PetscScalar> &store, size_t offset, const std::vector<Vec> &v);
  PetscErrorCode loadTangent(const std::vector<PetscScalar> &store, size_t offset, std::vector<Vec> &v);
  PetscErrorCode solve(Vec rhs, Vec x, bool transpose);  // with B from factorShifted
  size_t stageOffset(PetscInt n, PetscInt i) const { return n * stepStride_ + (size_t)(1 + i) * m_ * nloc_; }
  size_t multiplierOffset(PetscInt n, PetscInt i, size_t k) const {
    return (((size_t)(n - 1) * (rk_ ? s_ : 1) + i) * ncost_ + k) * nloc_;
  }

  Engine &engine_;
  CostEvaluator &costs_;
  SecondOrderCallbacks &cb_;
  std::vector<PetscInt> u0Indices_;
  Dynamics &dyn_;
  TS ts_;

  // Scheme.
  bool rk_ = false;
  PetscInt s_ = 0;  // RK stages
  std::vector<PetscReal> A_, b_, c_;
  PetscReal theta_ = 1;

  PetscInt nloc_ = 0, np_ = 0, nz_ = 0, M_ = 0;
  size_t ncost_ = 0, m_ = 0;
  Mat du0dp_ = nullptr;
  KSP ksp_ = nullptr;
  Vec hu_ = nullptr, hu2_ = nullptr, tmp_ = nullptr, work_ = nullptr;
  std::vector<PetscScalar> hp_, hp2_;
  std::vector<Vec> products_;                   // hybrid: ∇²(…)·Z_j of one point, all j
  std::vector<std::vector<PetscScalar>> hps_;   // their parameter parts

  // Step-local vectors.
  std::vector<Vec> du_, e_;                                   // [j]
  std::vector<std::vector<Vec>> dY_, dK_;                     // RK [i][j]
  std::vector<Vec> lam_, nu_;                                 // [k]
  std::vector<std::vector<Vec>> sig_, dnu_, Ybar_;            // [k][j], [k][j], [k][i]
  std::vector<std::vector<std::vector<Vec>>> dYbar_;          // [k][i][j]

  // Parameter accumulators: local partial sums of f_pᵀ x (reduced once per sweep) and
  // replicated terms (already global).
  std::vector<std::vector<PetscScalar>> muLocal_, muGlobal_;                 // [k][np]
  std::vector<std::vector<std::vector<PetscScalar>>> dmuLocal_, dmuGlobal_;  // [k][j][np]
  std::vector<std::vector<std::vector<PetscScalar>>> hLocal_, hGlobal_;      // hybrid [k][l][j]

  // Storage over the trajectory (owned entries only).
  std::vector<PetscScalar> tangents_;     // forward-over-adjoint: δu_n (and RK stage tangents)
  std::vector<PetscScalar> multipliers_;  // hybrid: K̄_i (RK) or ν (theta) per step and cost
  std::vector<Vec> lambda0_;              // hybrid: λ(t0) per cost
  size_t stepStride_ = 0;                 // entries per step in tangents_
};

} // namespace hybridsens
