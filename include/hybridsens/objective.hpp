// Cost functions J = ψ(T, u(T), p) + ∫ r(t, u, p; d) dt + Σ_i g_i(t_i, u(t_i), p).
// One Solver may carry several; one
// forward-sensitivity run or one reverse sweep gives the gradients of all of them.
//
// Distributed convention (as for guards): value-returning callbacks return this rank's
// contribution and the library sums over ranks; gradient callbacks fill the owned entries of
// the Vec and this rank's contribution to the p-gradient (zero-initialized on entry).
#pragma once

#include "hybridsens/model.hpp"

#include <string>

namespace hybridsens {

class CostFunction {
public:
  virtual ~CostFunction() = default;
  virtual std::string name() const { return "cost"; }

  // Terminal part ψ(T, u(T), p; d). A part counts only if declared by hasTerminal() /
  // hasIntegrand(); a cost that implements terminal() or integrand() without declaring it is
  // refused before the run (its part would otherwise be silently left out of J). A class that
  // implements a part it declares only sometimes returns CostFunction::terminal() (integrand())
  // when it does not declare it, as ADCost does.
  virtual bool hasTerminal() const { return false; }
  virtual PetscErrorCode terminal(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const;
  virtual PetscErrorCode terminalGradient(PetscReal t, Vec u, const ModeContext &c, Vec psi_u, PetscScalar *psi_p) const;

  // Integrand r(t, u, p; d) (may depend on the discrete state: its jump at events enters the
  // event-time terms).
  virtual bool hasIntegrand() const { return false; }
  virtual PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const;
  virtual PetscErrorCode integrandGradient(PetscReal t, Vec u, const ModeContext &c, Vec r_u, PetscScalar *r_p) const;
  // As for the model: an integrand that depends on t other than through u (a time-varying
  // reference) says so and provides ∂r/∂t (this rank's contribution); the event derivatives
  // need it. One that says false but changes with t is refused at the first event.
  virtual bool explicitTime() const { return false; }
  virtual PetscErrorCode integrandTimeDerivative(PetscReal t, Vec u, const ModeContext &c, PetscScalar *r_t) const;

  // Measurement (point) costs g_i at times t_i in [t0, T]; every t_i becomes a step boundary.
  // A measurement at an event time observes the post-event state (the right limit).
  virtual std::vector<PetscReal> measurementTimes() const { return {}; }
  virtual PetscErrorCode measurement(PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const;
  virtual PetscErrorCode measurementGradient(PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec g_u, PetscScalar *g_p) const;

  // ---- for the library: whether the default terminal()/integrand() ran ---------------------
  // Called on an undeclared part they return 0 and record it; the library probes each cost once
  // per solve and refuses one whose own terminal()/integrand() answered instead.
  enum class DefaultPart : unsigned { Terminal = 1u, Integrand = 2u };
  void clearDefaultsUsed() const { defaultsUsed_ = 0; }
  bool defaultUsed(DefaultPart part) const { return (defaultsUsed_ & (unsigned)part) != 0; }

private:
  mutable unsigned defaultsUsed_ = 0;
};

} // namespace hybridsens
