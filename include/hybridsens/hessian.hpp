// Hessians of cost functions through the discrete adjoint.
//
// What the library computes: for every cost J_k and the variables q = (parameters p, chosen
// initial-state components u0[i]) — the same ordering as the gradients —
//   * Hessian-vector products ∇²J_k·v by forward-over-adjoint: one tangent-linear sweep in the
//     direction v followed by one reverse sweep carrying the first-order adjoint λ and its
//     tangent σ = δλ (the second-order adjoint); measurement, terminal and integral costs;
//   * full Hessians, either by n_q such products in one pair of sweeps, or by the "hybrid"
//     formula ([Nandi2018] §6, here in its discrete form): n_q tangent-linear directions Z, one
//     first-order adjoint, and the sum over all stages of Zᵀ ∇²(λ·f + r) Z plus the cost terms
//     Zᵀ ∇²φ Z plus (λ(t0)·u0)_pp. (Nandi & Singh's printed eq. 64 omits the mixed term
//     (dx/dp → ∂²f/∂x∂p)^{→γ}; the discrete form contains every term because it is the full
//     second derivative of the Lagrangian.)
// Both are exact second derivatives of the computed discrete trajectory (RK: any explicit
// tableau; theta: backward Euler and endpoint theta/Crank–Nicolson, exact for the implicit
// stage equations — finite differences see the Newton tolerance, so compare with a tight
// -snes_rtol), written by the library itself over the stored trajectory: PETSc 3.18's
// second-order adjoint reads theta's tangent history one step off, ignores theta quadrature
// Hessians and overwrites RK dynamics terms with quadrature ones (docs/petsc-3.18.md §7), so it is
// not used. tests/peer_second_order.cpp measures it on ts/tutorials/ex20opt_p's problem: with
// RK4 PETSc's Hessian equals ours to 1e-16; with Crank–Nicolson it is 4.5e-4 off, ours equals
// finite differences of the gradient to 1e-10.
//
// Scope: ODE models; runs whose only events are time events at fixed times (∂T/∂p = 0) without
// a reset (they only switch the discrete state, so no jump has a second-order term). A run with
// a state event, a reset or a parameter-dependent event time, and any DAE, is refused with a
// PETSc error (PETSC_ERR_SUP): second-order jump conditions are not implemented.
//
// What the model and the costs must provide: second-derivative products, through the interfaces
// of hybridsens/second_order.hpp — SecondOrderModel::rhsHessianProduct (H(λᵀf)·δz) and
// initialStateHessianProduct ((λᵀu0)_pp δp), SecondOrderCost's terminal/integrand/measurement
// products. The AD front ends (ad.hpp, ad_local.hpp) implement them exactly; hand-coded models
// derive from them. The library finds them with dynamic_cast or takes them from
// Solver::setSecondOrderModel / setSecondOrderCost. It calls them with δt = 0 (the step grid is
// fixed) and zeroes the outputs before every call, so an implementation may write only its
// non-zero entries; parameter outputs are this rank's contribution (summed by the library).
#pragma once

#include "hybridsens/options.hpp"

#include "hybridsens/model.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/second_order.hpp"

#include <vector>

namespace hybridsens {

class Solver;

// How a full Hessian is formed (-hs_hessian_method auto|foa|hybrid).
//   ForwardOverAdjoint: n_q second-order adjoints (one reverse sweep carrying all of them);
//   Hybrid: n_q tangent directions + one adjoint + quadratic forms (no second-order adjoint);
//   Auto: Hybrid, unless the stored stage multipliers would need more memory than the stored
//         tangents (more costs than Hessian columns), then ForwardOverAdjoint.
enum class HessianMethod { Auto, ForwardOverAdjoint, Hybrid };
const char *hessianMethodName(HessianMethod m);

// Hessian verification (-hs_check_hessian): symmetry, forward-over-adjoint against the hybrid
// formula, and every parameter column against central differences of the adjoint gradient
// (Richardson-extrapolated from steps h and h/2). Initial-state columns are checked by the
// first two only (parameters are the only thing a finite difference can perturb from outside).
// HessianCheckOptions: hybridsens/options.hpp.

struct HessianCheckReport {
  std::vector<std::vector<std::vector<PetscScalar>>> foa, hybrid, finiteDifference;  // [cost][i][j] (FD: parameter columns)
  PetscReal asymmetry = 0, foaVsHybrid = 0, foaVsFD = 0;
  bool passed = false;
};

PetscErrorCode checkHessian(Solver &solver, const HessianCheckOptions &opt, HessianCheckReport &report);

} // namespace hybridsens
