// SmallModel: a hand-written model of a few states, its callbacks given as lambdas on plain
// arrays — the short path from equations on paper to a HybridModel.
//
// The whole state (n entries) lives on the first rank of comm (the others own nothing), so a
// lambda sees all of u as a C array and writes its whole output, as in a serial program; the
// model runs unchanged under mpiexec (every rank runs the library, rank 0 evaluates). Above a
// few hundred states write a distributed HybridModel (model.hpp) or use the AD front ends.
//
// Conventions: outputs are zero on entry (write the nonzeros); matrices are dense and
// row-major (J[i * n + j] = ∂f_i/∂u_j, ∂f/∂p: n × np); arguments are (t, u, output, context).
// A lambda left unset means what the matching HybridModel default means (model.hpp): no
// dependence on p (verified by the library), no guards, no reset — never a guessed derivative.
// A lambda may throw; the library turns the exception into a PETSc error naming the callback.
//
//   SmallModel ball(2);                                 // u = (q, v)
//   ball.params = {0.8};                                // e
//   ball.x0 = {10, 0};
//   ball.f = [](PetscReal, const PetscScalar *u, PetscScalar *f, const ModeContext &) { f[0] = u[1], f[1] = -9.81; };
//   ball.dfdu = [](PetscReal, const PetscScalar *, PetscScalar *J, const ModeContext &) { J[0 * 2 + 1] = 1; };
//   SmallModel::Guard impact;                           // γ = q, falling
//   impact.name = "impact", impact.direction = Direction::Falling;
//   impact.value = [](PetscReal, const PetscScalar *u, const ModeContext &) { return u[0]; };
//   impact.gradient = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *gu, PetscScalar *, PetscScalar *) { gu[0] = 1; };
//   impact.reset = [](PetscReal, const PetscScalar *, const ModeContext &c, PetscScalar *up) { up[1] *= -c.p[0]; };
//   ... resetJacobian, resetJacobianP, resetTimeDerivative (see Jump)
//   ball.addGuard(impact);
//
// Anything not covered here (a custom Jacobian matrix, guardRates, …) is still a HybridModel
// virtual: derive from SmallModel and override it.
#pragma once

#include "hybridsens/model.hpp"

#include <functional>
#include <string>
#include <vector>

namespace hybridsens {

class SmallModel : public HybridModel {
public:
  // (t, u, out, context): u has n entries, out as documented at each member.
  using ArrayFunction = std::function<void(PetscReal t, const PetscScalar *u, PetscScalar *out, const ModeContext &c)>;

  // What happens when an event fires (guards and time events alike).
  struct Jump {
    // d⁺ from d⁻ (d holds d⁻ on entry; u: the whole state at the event, on every rank); unset:
    // the discrete state does not change.
    std::function<void(PetscReal t, const PetscScalar *u, DiscreteState &d)> transition;
    // u⁺ = R(t, u⁻, p; d⁻) into uplus, which holds u⁻ on entry; unset: no reset.
    std::function<void(PetscReal t, const PetscScalar *uminus, const ModeContext &c, PetscScalar *uplus)> reset;
    // With a reset, all three are required (a reset that does not depend on t or p says so
    // with a lambda that writes nothing): R_u (n × n), R_p (n × np), R_t (n), at (t, u⁻).
    std::function<void(PetscReal t, const PetscScalar *uminus, const ModeContext &c, PetscScalar *Ru)> resetJacobian;
    std::function<void(PetscReal t, const PetscScalar *uminus, const ModeContext &c, PetscScalar *Rp)> resetJacobianP;
    std::function<void(PetscReal t, const PetscScalar *uminus, const ModeContext &c, PetscScalar *Rt)> resetTimeDerivative;
  };
  // A state event: fires when value crosses zero in `direction`.
  struct Guard : Jump {
    std::string name = "guard";
    Direction direction = Direction::Both;
    std::function<PetscScalar(PetscReal t, const PetscScalar *u, const ModeContext &c)> value;
    // γ_u (n entries), γ_t (one), γ_p (np entries); required.
    std::function<void(PetscReal t, const PetscScalar *u, const ModeContext &c, PetscScalar *gu, PetscScalar *gt, PetscScalar *gp)> gradient;
    // Whether the guard can fire in discrete state d; unset: always.
    std::function<bool(const DiscreteState &d)> active;
  };
  // A time event: fires at time(p); dtimedp (np entries) unset: the time does not depend on p.
  struct TimeEvent : Jump {
    std::string name = "time event";
    std::function<PetscReal(const std::vector<PetscReal> &p)> time;  // required
    std::function<void(const std::vector<PetscReal> &p, PetscReal *dtimedp)> dtimedp;
  };

  explicit SmallModel(PetscInt n, MPI_Comm comm = PETSC_COMM_WORLD);

  // ---- the description --------------------------------------------------------------------
  std::vector<PetscReal> params;            // default parameters
  std::vector<std::string> paramNames;      // empty: p0, p1, …
  DiscreteState d0;                         // initial discrete state
  std::vector<PetscInt> algebraic;          // indices of algebraic components (a DAE); empty: an ODE
  std::vector<PetscReal> x0;                // initial state, unless `initial` is set
  std::function<void(const ModeContext &c, PetscScalar *u0)> initial;          // u0(p)
  std::function<void(const ModeContext &c, PetscScalar *du0dp)> initialJacobianP;  // n × np
  ArrayFunction f;     // M u̇ = f (required)
  ArrayFunction dfdu;  // n × n (required)
  ArrayFunction dfdp;  // n × np
  ArrayFunction dfdt;  // n; set it if f depends on t other than through u (explicitTime())

  // Register events; the returned index is the guard's / time event's EventId::index.
  PetscInt addGuard(Guard g);
  PetscInt addTimeEvent(TimeEvent e);

  // ---- HybridModel ------------------------------------------------------------------------
  MPI_Comm comm() const override { return comm_; }
  PetscInt localSize() const override { return onRoot() ? n_ : 0; }
  std::vector<PetscInt> algebraicIndices() const override { return onRoot() ? algebraic : std::vector<PetscInt>{}; }
  DiscreteState initialDiscreteState() const override { return d0; }
  std::vector<PetscReal> defaultParameters() const override { return params; }
  std::vector<std::string> parameterNames() const override;
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override;
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const override;
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec fv) const override;
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const override;
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const override;
  bool explicitTime() const override { return bool(dfdt); }
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const override;
  PetscInt numGuards() const override { return (PetscInt)guards_.size(); }
  GuardInfo guardInfo(PetscInt j) const override;
  bool guardActive(PetscInt j, const DiscreteState &d) const override;
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const override;
  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt, PetscScalar *gp) const override;
  PetscInt numTimeEvents() const override { return (PetscInt)timeEvents_.size(); }
  TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &p) const override;
  PetscErrorCode transition(const EventId &id, PetscReal t, Vec u, DiscreteState &d) const override;
  bool hasReset(const EventId &id) const override;
  PetscErrorCode reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const override;
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const override;
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w, Vec out) const override;
  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const override;
  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const override;

protected:
  bool onRoot() const { return rank_ == 0; }
  PetscInt size() const { return n_; }

private:
  // The registered event `id` (nullptr: one this class did not register — a derived class's).
  const Jump *jumpOf(const EventId &id) const;
  std::string eventLabel(const EventId &id) const;
  // out = R_u v (transpose: R_uᵀ v) from resetJacobian.
  PetscErrorCode applyResetJacobian(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out, bool transpose) const;
  // Fills rows × cols dense values from fill() on the root and inserts them into M.
  PetscErrorCode setDense(Mat M, PetscInt cols, const std::function<void(PetscScalar *)> &fill) const;

  PetscInt n_;
  MPI_Comm comm_;
  PetscMPIInt rank_ = 0;
  std::vector<Guard> guards_;
  std::vector<TimeEvent> timeEvents_;
};

} // namespace hybridsens
