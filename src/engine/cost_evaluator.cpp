#include "engine/cost_evaluator.hpp"

#include "util/user_call.hpp"

#include <cmath>

namespace hybridsens {

bool CostEvaluator::anyIntegrand() const {
  for (auto *c : costs_)
    if (c->hasIntegrand()) return true;
  return false;
}

PetscErrorCode CostEvaluator::checkDeclaredParts(PetscReal t, Vec u, const DiscreteState &d) {
  using Part = CostFunction::DefaultPart;
  PetscFunctionBeginUser;
  for (const CostFunction *c : costs_) {
    c->clearDefaultsUsed();
    // Each undeclared part once: the library's default answers it; the cost's own code must not.
    for (const Part part : {Part::Terminal, Part::Integrand}) {
      const bool terminal = part == Part::Terminal;
      if (terminal ? c->hasTerminal() : c->hasIntegrand()) continue;
      PetscScalar v = 0;
      const char *callback = terminal ? "terminal" : "integrand";
      HS_USER_CALL(dyn_.comm(), callback, terminal ? c->terminal(t, u, dyn_.context(d), &v) : c->integrand(t, u, dyn_.context(d), &v));
      PetscCheck(c->defaultUsed(part), dyn_.comm(), PETSC_ERR_USER_INPUT,
                 "cost '%s' implements %s() but %s() returns false, so its %s would be left out of the objective; override %s() to "
                 "return true",
                 c->name().c_str(), callback, terminal ? "hasTerminal" : "hasIntegrand", terminal ? "terminal part" : "integral",
                 terminal ? "hasTerminal" : "hasIntegrand");
    }
    PetscCheck(c->hasTerminal() || c->hasIntegrand() || !c->measurementTimes().empty(), dyn_.comm(), PETSC_ERR_USER_INPUT,
               "cost '%s' declares no part (hasTerminal() and hasIntegrand() are false and measurementTimes() is empty), so it would "
               "be 0 with a zero gradient; declare the parts it has",
               c->name().c_str());
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode sumOverRanks(MPI_Comm comm, std::vector<PetscScalar> &v) {
  PetscFunctionBeginUser;
  if (!v.empty()) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), (int)v.size(), MPIU_SCALAR, MPIU_SUM, comm));
  PetscFunctionReturn(0);
}

PetscErrorCode CostEvaluator::integrands(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> &r) {
  PetscFunctionBeginUser;
  r.assign(costs_.size(), 0.0);
  for (size_t k = 0; k < costs_.size(); ++k)
    if (costs_[k]->hasIntegrand()) HS_USER_CALL(dyn_.comm(), "integrand", costs_[k]->integrand(t, u, dyn_.context(d), &r[k]));
  PetscCall(sumOverRanks(dyn_.comm(), r));
  for (size_t k = 0; k < r.size(); ++k)
    PetscCheck(std::isfinite(r[k]), dyn_.comm(), PETSC_ERR_FP, "NaN or Inf returned by cost '%s' integrand at t = %.17g in discrete state %s",
               costs_[k]->name().c_str(), (double)t, describe(d).c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode CostEvaluator::integrandGradient(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec ru, std::vector<PetscScalar> &rp) {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(ru));
  rp.assign(dyn_.numParameters(), 0.0);
  if (!costs_[k]->hasIntegrand()) PetscFunctionReturn(0);
  HS_USER_CALL(dyn_.comm(), "integrandGradient", costs_[k]->integrandGradient(t, u, dyn_.context(d), ru, rp.data()));
  PetscCall(sumOverRanks(dyn_.comm(), rp));
  PetscCall(dyn_.checkFinite(ru, "integrandGradient", t, d));
  PetscFunctionReturn(0);
}

PetscErrorCode CostEvaluator::integrandTimeDerivatives(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> &rt) {
  std::vector<PetscScalar> r0, r1;
  bool checkConstant = false;
  PetscFunctionBeginUser;
  rt.assign(costs_.size(), 0.0);
  for (size_t k = 0; k < costs_.size(); ++k) {
    if (!costs_[k]->hasIntegrand()) continue;
    if (costs_[k]->explicitTime())
      HS_USER_CALL(dyn_.comm(), "integrandTimeDerivative", costs_[k]->integrandTimeDerivative(t, u, dyn_.context(d), &rt[k]));
    else checkConstant = true;
  }
  PetscCall(sumOverRanks(dyn_.comm(), rt));
  if (!checkConstant) PetscFunctionReturn(0);
  // As for the model's f: an integrand that does not read t is bit-identical at another time.
  const PetscReal dt = 1e-3 * std::max<PetscReal>(1, std::fabs(t));
  PetscCall(integrands(t, u, d, r0));
  PetscCall(integrands(t + dt, u, d, r1));
  for (size_t k = 0; k < costs_.size(); ++k)
    PetscCheck(costs_[k]->explicitTime() || r0[k] == r1[k], dyn_.comm(), PETSC_ERR_USER_INPUT,
               "the integrand of cost '%s' depends on t explicitly (r(t + %g) - r(t) = %g at t = %.17g), but explicitTime() is "
               "false: override CostFunction::explicitTime() and integrandTimeDerivative() (∂r/∂t enters the event derivatives)",
               costs_[k]->name().c_str(), (double)dt, (double)(r1[k] - r0[k]), (double)t);
  PetscFunctionReturn(0);
}

PetscErrorCode CostEvaluator::terminal(size_t k, PetscReal t, Vec u, const DiscreteState &d, PetscScalar *psi) {
  std::vector<PetscScalar> v(1, 0.0);
  PetscFunctionBeginUser;
  if (costs_[k]->hasTerminal()) HS_USER_CALL(dyn_.comm(), "terminal", costs_[k]->terminal(t, u, dyn_.context(d), &v[0]));
  PetscCall(sumOverRanks(dyn_.comm(), v));
  PetscCheck(std::isfinite(v[0]), dyn_.comm(), PETSC_ERR_FP, "NaN or Inf returned by cost '%s' terminal at t = %.17g",
             costs_[k]->name().c_str(), (double)t);
  *psi = v[0];
  PetscFunctionReturn(0);
}

PetscErrorCode CostEvaluator::terminalGradient(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec psiu, std::vector<PetscScalar> &psip) {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(psiu));
  psip.assign(dyn_.numParameters(), 0.0);
  if (!costs_[k]->hasTerminal()) PetscFunctionReturn(0);
  HS_USER_CALL(dyn_.comm(), "terminalGradient", costs_[k]->terminalGradient(t, u, dyn_.context(d), psiu, psip.data()));
  PetscCall(sumOverRanks(dyn_.comm(), psip));
  PetscCall(dyn_.checkFinite(psiu, "terminalGradient", t, d));
  PetscFunctionReturn(0);
}

std::vector<PetscReal> CostEvaluator::measurementTimes() const {
  std::vector<PetscReal> t;
  for (auto *c : costs_)
    for (PetscReal ti : c->measurementTimes()) t.push_back(ti);
  return t;
}

PetscErrorCode CostEvaluator::measurementsAt(size_t k, PetscReal t, Vec u, const DiscreteState &d, PetscScalar *value, Vec gu,
                                             std::vector<PetscScalar> &gp, Vec work) {
  const auto times = costs_[k]->measurementTimes();
  const PetscInt np = dyn_.numParameters();
  PetscFunctionBeginUser;
  std::vector<PetscScalar> v(1 + np, 0.0);
  for (size_t i = 0; i < times.size(); ++i) {
    if (times[i] != t) continue;  // measurement times are step boundaries, hit exactly
    std::vector<PetscScalar> local(1 + np, 0.0);
    HS_USER_CALL(dyn_.comm(), "measurement", costs_[k]->measurement((PetscInt)i, t, u, dyn_.context(d), &local[0]));
    if (gu) {  // values only (a plain solve) needs no gradient
      PetscCall(VecZeroEntries(work));
      HS_USER_CALL(dyn_.comm(), "measurementGradient",
                   costs_[k]->measurementGradient((PetscInt)i, t, u, dyn_.context(d), work, np ? &local[1] : nullptr));
      PetscCall(dyn_.checkFinite(work, "measurementGradient", t, d));
      PetscCall(VecAXPY(gu, 1.0, work));
    }
    for (PetscInt j = 0; j <= np; ++j) v[j] += local[j];
  }
  PetscCall(sumOverRanks(dyn_.comm(), v));
  PetscCheck(std::isfinite(v[0]), dyn_.comm(), PETSC_ERR_FP, "NaN or Inf returned by cost '%s' measurement at t = %.17g",
             costs_[k]->name().c_str(), (double)t);
  *value += v[0];
  if (gp.size() < (size_t)np) gp.resize(np, 0.0);
  for (PetscInt j = 0; j < np; ++j) gp[j] += v[1 + j];
  PetscFunctionReturn(0);
}

} // namespace hybridsens
