// AD front end (hybridsens/ad.hpp) against hand-coded derivatives, entry by entry.
//
// Two model pairs, each written once with templates (ADModel/ADCost) and once by hand with
// every derivative coded explicitly (the oracle):
//   * GalanLike (n = 1): the galan_scalar dynamics made to depend on p, t and d everywhere —
//     mode 1 ẋ = 4 − k x, mode 2 ẋ = 10 − 2x − k t sin x; guards γ = x³ − 5x² + 7x − p0 + 0.1 k t;
//     reset (guard 0) x⁺ = k x² + p0 sin t; u0 = p0 k; time event T = p0 k / 10. p = (p0, k).
//   * SwitchedLike (n = 2): switched_linear plus a quadratic term, u̇ = A_d u + s (u0 u1, u0²);
//     guards γ_j = u1 − p_j u0; reset (guard 1) u⁺ = (u0 + p0 u1², s u0 u1 + t); u0 = (p1, 1 − s);
//     time event T = p0 p1 s. p = (p0, p1, s). Cost: ψ = p1 u0² + sin u1, r = s u0 u1 + t u1,
//     g_i = (u0 − i p0)².
// Compared, at several states, times and both modes: rhsJacobian, rhsJacobianP (extra columns
// must stay zero), guardGradient (γ_u, γ_t, γ_p), reset value, R_u v, R_uᵀ w, R_p, R_t,
// initialStateJacobianP, timeEvent (T, ∂T/∂p), cost gradients (ψ, r, g: _u and _p) — all to
// ≤ 1e-14 relative. Also: the static-size Fad (SLFad) gives the same numbers, a too-small SLFad
// is a loud error, and a hand-coded oracle with one wrong entry is caught (the check can fail).
// The state lives on rank 0; under MPI every rank runs every callback collectively.
#include "test_support.hpp"

#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <cmath>
#include <functional>

using namespace hybridsens;
using hstest::ErrorCapture;

namespace {

constexpr double TOL = 1e-14;

// ---------------------------------------------------------------------------------------------
// Hand-coded oracle: derivatives on raw arrays, the Vec/Mat plumbing once here.
class DenseHand : public HybridModel {
public:
  explicit DenseHand(PetscInt n) : n_(n) { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  PetscInt localSize() const override { return rank_ == 0 ? n_ : 0; }
  PetscInt n() const { return n_; }
  double wrongBy = 0;  // added to ∂f_0/∂u_0: the negative control

  virtual void f(PetscReal t, const double *u, const double *p, const DiscreteState &d, double *y) const = 0;
  virtual void fu(PetscReal t, const double *u, const double *p, const DiscreteState &d, double *J) const = 0;  // row-major n×n
  virtual void fp(PetscReal t, const double *u, const double *p, const DiscreteState &d, double *J) const = 0;  // row-major n×np
  virtual void u0(const double *p, double *x) const = 0;
  virtual void u0p(const double *p, double *J) const = 0;  // row-major n×np
  virtual double g(PetscInt j, PetscReal t, const double *u, const double *p) const = 0;
  virtual void gGrad(PetscInt j, PetscReal t, const double *u, const double *p, double *gu, double *gt, double *gp) const = 0;
  virtual void R(PetscReal t, const double *u, const double *p, double *up) const = 0;
  virtual void Ru(PetscReal t, const double *u, const double *p, double *J) const = 0;  // row-major n×n
  virtual void Rp(PetscReal t, const double *u, const double *p, double *J) const = 0;  // row-major n×np
  virtual void Rt(PetscReal t, const double *u, const double *p, double *r) const = 0;
  virtual PetscInt resetGuard() const = 0;

  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && id.index == resetGuard(); }

  PetscErrorCode initialState(const ModeContext &c, Vec v) const override { return write(v, [&](double *x) { u0(c.p.data(), x); }); }
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat M) const override {
    std::vector<double> a(n_ * c.p.size());
    u0p(c.p.data(), a.data());
    return setDense(M, a, (PetscInt)c.p.size());
  }
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec y) const override {
    std::vector<double> x;
    PetscFunctionBeginUser;
    PetscCall(read(u, x));
    PetscCall(write(y, [&](double *o) { f(t, x.data(), c.p.data(), c.d, o); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const override {
    std::vector<double> x, a(n_ * n_);
    PetscFunctionBeginUser;
    PetscCall(read(u, x));
    if (rank_ == 0) {
      fu(t, x.data(), c.p.data(), c.d, a.data());
      a[0] += wrongBy;
    }
    PetscCall(setDense(J, a, n_));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat J) const override {
    std::vector<double> x, a(n_ * c.p.size());
    PetscFunctionBeginUser;
    PetscCall(read(u, x));
    if (rank_ == 0) fp(t, x.data(), c.p.data(), c.d, a.data());
    PetscCall(setDense(J, a, (PetscInt)c.p.size()));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *v) const override {
    std::vector<double> x;
    PetscFunctionBeginUser;
    PetscCall(read(u, x));
    if (rank_ == 0)
      for (PetscInt j = 0; j < numGuards(); ++j) v[j] = g(j, t, x.data(), c.p.data());
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const override {
    std::vector<double> x;
    PetscFunctionBeginUser;
    PetscCall(read(u, x));
    PetscCall(write(gu, [&](double *o) { gGrad(j, t, x.data(), c.p.data(), o, gt, gp); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode reset(const EventId &, PetscReal t, Vec um, const ModeContext &c, Vec up) const override {
    std::vector<double> x;
    PetscFunctionBeginUser;
    PetscCall(read(um, x));
    PetscCall(write(up, [&](double *o) { R(t, x.data(), c.p.data(), o); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal t, Vec um, const ModeContext &c, Vec v, Vec out) const override {
    return matvec(t, um, c, v, out, false);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &, PetscReal t, Vec um, const ModeContext &c, Vec w, Vec out) const override {
    return matvec(t, um, c, w, out, true);
  }
  PetscErrorCode resetJacobianP(const EventId &, PetscReal t, Vec um, const ModeContext &c, Mat M) const override {
    std::vector<double> x, a(n_ * c.p.size());
    PetscFunctionBeginUser;
    PetscCall(read(um, x));
    if (rank_ == 0) Rp(t, x.data(), c.p.data(), a.data());
    PetscCall(setDense(M, a, (PetscInt)c.p.size()));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal t, Vec um, const ModeContext &c, Vec out) const override {
    std::vector<double> x;
    PetscFunctionBeginUser;
    PetscCall(read(um, x));
    PetscCall(write(out, [&](double *o) { Rt(t, x.data(), c.p.data(), o); }));
    PetscFunctionReturn(0);
  }

protected:
  static PetscErrorCode read(Vec v, std::vector<double> &x) {
    const PetscScalar *a;
    PetscInt nl;
    PetscFunctionBeginUser;
    PetscCall(VecGetLocalSize(v, &nl));
    PetscCall(VecGetArrayRead(v, &a));
    x.assign(a, a + nl);
    PetscCall(VecRestoreArrayRead(v, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode write(Vec v, const std::function<void(double *)> &fill) const {
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(v, &a));
    if (rank_ == 0) fill(a);
    PetscCall(VecRestoreArray(v, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode setDense(Mat M, const std::vector<double> &a, PetscInt ncols) const {
    std::vector<PetscInt> rows(n_), cols(ncols);
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n_; ++i) rows[i] = i;
    for (PetscInt j = 0; j < ncols; ++j) cols[j] = j;
    if (rank_ == 0 && ncols) PetscCall(MatSetValues(M, n_, rows.data(), ncols, cols.data(), a.data(), INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  PetscErrorCode matvec(PetscReal t, Vec um, const ModeContext &c, Vec v, Vec out, bool transpose) const {
    std::vector<double> x, y, J(n_ * n_);
    PetscFunctionBeginUser;
    PetscCall(read(um, x));
    PetscCall(read(v, y));
    PetscCall(write(out, [&](double *o) {
      Ru(t, x.data(), c.p.data(), J.data());
      for (PetscInt i = 0; i < n_; ++i) {
        o[i] = 0;
        for (PetscInt k = 0; k < n_; ++k) o[i] += (transpose ? J[k * n_ + i] : J[i * n_ + k]) * y[k];
      }
    }));
    PetscFunctionReturn(0);
  }
  PetscInt n_;
  PetscMPIInt rank_ = 0;
};

// ---------------------------------------------------------------------------------------------
// GalanLike, p = (p0, k).
class GalanHand : public DenseHand {
public:
  GalanHand() : DenseHand(1) {}
  std::vector<PetscReal> defaultParameters() const override { return {2.9, 1.3}; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  PetscInt numGuards() const override { return 2; }
  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &p) const override {
    return {"tk", p[0] * p[1] / 10, {p[1] / 10, p[0] / 10}};
  }
  PetscInt resetGuard() const override { return 0; }
  void f(PetscReal t, const double *u, const double *p, const DiscreteState &d, double *y) const override {
    y[0] = d[0] == 1 ? 4 - p[1] * u[0] : 10 - 2 * u[0] - p[1] * t * std::sin(u[0]);
  }
  void fu(PetscReal t, const double *u, const double *p, const DiscreteState &d, double *J) const override {
    J[0] = d[0] == 1 ? -p[1] : -2 - p[1] * t * std::cos(u[0]);
  }
  void fp(PetscReal t, const double *u, const double *p, const DiscreteState &d, double *J) const override {
    J[0] = 0;
    J[1] = d[0] == 1 ? -u[0] : -t * std::sin(u[0]);
  }
  void u0(const double *p, double *x) const override { x[0] = p[0] * p[1]; }
  void u0p(const double *p, double *J) const override { J[0] = p[1], J[1] = p[0]; }
  double g(PetscInt, PetscReal t, const double *u, const double *p) const override {
    return ((u[0] - 5) * u[0] + 7) * u[0] - p[0] + 0.1 * p[1] * t;
  }
  void gGrad(PetscInt, PetscReal t, const double *u, const double *p, double *gu, double *gt, double *gp) const override {
    gu[0] = (3 * u[0] - 10) * u[0] + 7;
    *gt = 0.1 * p[1];
    gp[0] = -1, gp[1] = 0.1 * t;
  }
  void R(PetscReal t, const double *u, const double *p, double *up) const override { up[0] = p[1] * u[0] * u[0] + p[0] * std::sin(t); }
  void Ru(PetscReal, const double *u, const double *p, double *J) const override { J[0] = 2 * p[1] * u[0]; }
  void Rp(PetscReal t, const double *u, const double *, double *J) const override { J[0] = std::sin(t), J[1] = u[0] * u[0]; }
  void Rt(PetscReal t, const double *, const double *p, double *r) const override { r[0] = p[0] * std::cos(t); }
};

template <int K = 0> class GalanAD : public ADModel<GalanAD<K>, K> {
public:
  PetscInt stateSize() const override { return 1; }
  std::vector<PetscReal> defaultParameters() const override { return {2.9, 1.3}; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  PetscInt numGuards() const override { return 2; }
  PetscInt numTimeEvents() const override { return 1; }
  std::string timeEventName(PetscInt) const override { return "tk"; }
  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && id.index == 0; }

  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[0] * p[1]; }
  template <class S> void rhs(S t, const S *u, const S *p, const DiscreteState &d, S *f) const {
    using std::sin;
    if (d[0] == 1) f[0] = 4 - p[1] * u[0];
    else f[0] = 10 - 2 * u[0] - p[1] * t * sin(u[0]);
  }
  template <class S> S guard(PetscInt, S t, const S *u, const S *p, const DiscreteState &) const {
    return ((u[0] - 5) * u[0] + 7) * u[0] - p[0] + 0.1 * p[1] * t;
  }
  template <class S> void reset(const EventId &, S t, const S *u, const S *p, const DiscreteState &, S *up) const {
    using std::sin;
    up[0] = p[1] * u[0] * u[0] + p[0] * sin(t);
  }
  template <class S> S eventTime(PetscInt, const S *p) const { return p[0] * p[1] / 10; }
};

// ---------------------------------------------------------------------------------------------
// SwitchedLike, p = (p0, p1, s).
class SwitchedHand : public DenseHand {
public:
  SwitchedHand() : DenseHand(2) {}
  std::vector<PetscReal> defaultParameters() const override { return {2.75, 0.36, 0.3}; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  PetscInt numGuards() const override { return 2; }
  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &p) const override {
    return {"ts", p[0] * p[1] * p[2], {p[1] * p[2], p[0] * p[2], p[0] * p[1]}};
  }
  PetscInt resetGuard() const override { return 1; }
  static void A(PetscInt mode, double a[4]) {
    const double A1[4] = {1, -100, 10, 1}, A2[4] = {1, 10, -100, 1};
    for (int i = 0; i < 4; ++i) a[i] = mode == 1 ? A1[i] : A2[i];
  }
  void f(PetscReal, const double *u, const double *p, const DiscreteState &d, double *y) const override {
    double a[4];
    A(d[0], a);
    y[0] = a[0] * u[0] + a[1] * u[1] + p[2] * u[0] * u[1];
    y[1] = a[2] * u[0] + a[3] * u[1] + p[2] * u[0] * u[0];
  }
  void fu(PetscReal, const double *u, const double *p, const DiscreteState &d, double *J) const override {
    A(d[0], J);
    J[0] += p[2] * u[1], J[1] += p[2] * u[0], J[2] += 2 * p[2] * u[0];
  }
  void fp(PetscReal, const double *u, const double *, const DiscreteState &, double *J) const override {
    for (int i = 0; i < 6; ++i) J[i] = 0;
    J[2] = u[0] * u[1], J[5] = u[0] * u[0];
  }
  void u0(const double *p, double *x) const override { x[0] = p[1], x[1] = 1 - p[2]; }
  void u0p(const double *, double *J) const override {
    for (int i = 0; i < 6; ++i) J[i] = 0;
    J[1] = 1, J[5] = -1;
  }
  double g(PetscInt j, PetscReal, const double *u, const double *p) const override { return u[1] - p[j] * u[0]; }
  void gGrad(PetscInt j, PetscReal, const double *u, const double *p, double *gu, double *gt, double *gp) const override {
    gu[0] = -p[j], gu[1] = 1;
    *gt = 0;
    gp[0] = gp[1] = gp[2] = 0;
    gp[j] = -u[0];
  }
  void R(PetscReal t, const double *u, const double *p, double *up) const override {
    up[0] = u[0] + p[0] * u[1] * u[1];
    up[1] = p[2] * u[0] * u[1] + t;
  }
  void Ru(PetscReal, const double *u, const double *p, double *J) const override {
    J[0] = 1, J[1] = 2 * p[0] * u[1], J[2] = p[2] * u[1], J[3] = p[2] * u[0];
  }
  void Rp(PetscReal, const double *u, const double *, double *J) const override {
    for (int i = 0; i < 6; ++i) J[i] = 0;
    J[0] = u[1] * u[1], J[5] = u[0] * u[1];
  }
  void Rt(PetscReal, const double *, const double *, double *r) const override { r[0] = 0, r[1] = 1; }
};

template <int K = 0> class SwitchedAD : public ADModel<SwitchedAD<K>, K> {
public:
  PetscInt stateSize() const override { return 2; }
  std::vector<PetscReal> defaultParameters() const override { return {2.75, 0.36, 0.3}; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  PetscInt numGuards() const override { return 2; }
  PetscInt numTimeEvents() const override { return 1; }
  std::string timeEventName(PetscInt) const override { return "ts"; }
  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && id.index == 1; }

  template <class S> void initialState(const S *p, S *u0) const {
    u0[0] = p[1];
    u0[1] = 1 - p[2];
  }
  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &d, S *f) const {
    double a[4];
    SwitchedHand::A(d[0], a);
    f[0] = a[0] * u[0] + a[1] * u[1] + p[2] * u[0] * u[1];
    f[1] = a[2] * u[0] + a[3] * u[1] + p[2] * u[0] * u[0];
  }
  template <class S> S guard(PetscInt j, S, const S *u, const S *p, const DiscreteState &) const { return u[1] - p[j] * u[0]; }
  template <class S> void reset(const EventId &, S t, const S *u, const S *p, const DiscreteState &, S *up) const {
    up[0] = u[0] + p[0] * u[1] * u[1];
    up[1] = p[2] * u[0] * u[1] + t;
  }
  template <class S> S eventTime(PetscInt, const S *p) const { return p[0] * p[1] * p[2]; }
};

// Costs on the switched model: ψ = p1 u0² + sin u1, r = s u0 u1 + t u1, g_i = (u0 − i p0)².
class CostHand : public CostFunction {
public:
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  std::vector<PetscReal> measurementTimes() const override { return {0.1, 0.2}; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override {
    return at(u, [&](const double *x) { *v = c.p[1] * x[0] * x[0] + std::sin(x[1]); });
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    return grad(u, gu, [&](const double *x, double *o) {
      o[0] = 2 * c.p[1] * x[0], o[1] = std::cos(x[1]);
      gp[1] = x[0] * x[0];
    });
  }
  PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *v) const override {
    return at(u, [&](const double *x) { *v = c.p[2] * x[0] * x[1] + t * x[1]; });
  }
  PetscErrorCode integrandGradient(PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    return grad(u, gu, [&](const double *x, double *o) {
      o[0] = c.p[2] * x[1], o[1] = c.p[2] * x[0] + t;
      gp[2] = x[0] * x[1];
    });
  }
  PetscErrorCode measurement(PetscInt i, PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override {
    return at(u, [&](const double *x) { *v = (x[0] - i * c.p[0]) * (x[0] - i * c.p[0]); });
  }
  PetscErrorCode measurementGradient(PetscInt i, PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    return grad(u, gu, [&](const double *x, double *o) {
      o[0] = 2 * (x[0] - i * c.p[0]), o[1] = 0;
      gp[0] = -2.0 * i * (x[0] - i * c.p[0]);
    });
  }

private:
  static PetscErrorCode at(Vec u, const std::function<void(const double *)> &fn) {
    const PetscScalar *a;
    PetscInt nl;
    PetscFunctionBeginUser;
    PetscCall(VecGetLocalSize(u, &nl));
    PetscCall(VecGetArrayRead(u, &a));
    if (nl) fn(a);
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }
  static PetscErrorCode grad(Vec u, Vec gu, const std::function<void(const double *, double *)> &fn) {
    const PetscScalar *a;
    PetscScalar *o;
    PetscInt nl;
    PetscFunctionBeginUser;
    PetscCall(VecGetLocalSize(u, &nl));
    PetscCall(VecGetArrayRead(u, &a));
    PetscCall(VecGetArray(gu, &o));
    if (nl) fn(a, o);
    PetscCall(VecRestoreArray(gu, &o));
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }
};

class CostAD : public ADCost<CostAD> {
public:
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  std::vector<PetscReal> measurementTimes() const override { return {0.1, 0.2}; }
  template <class S> S terminal(S, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    return p[1] * u[0] * u[0] + sin(u[1]);
  }
  template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &) const { return p[2] * u[0] * u[1] + t * u[1]; }
  template <class S> S measurement(PetscInt i, S, const S *u, const S *p, const DiscreteState &) const {
    return (u[0] - i * p[0]) * (u[0] - i * p[0]);
  }
};

// ---------------------------------------------------------------------------------------------
// Comparison: worst relative difference |a − b| / max(|a|, |b|) over everything compared.
struct Compare {
  double worst = 0;
  std::string where;
  int compared = 0, nonzero = 0;  // guards against a vacuous comparison
  void operator()(const std::string &what, double a, double b) {
    const double scale = std::max(std::abs(a), std::abs(b));
    ++compared, nonzero += scale != 0;
    const double rel = scale == 0 ? 0 : std::abs(a - b) / scale;
    if (rel > worst || (std::isnan(a) != std::isnan(b))) worst = std::isnan(rel) ? INFINITY : rel, where = what;
  }
};

std::vector<double> gatherAll(Vec v) {  // the whole vector, on every rank
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

std::vector<double> denseAll(Mat M, PetscInt rows, PetscInt cols) {  // every entry, on every rank
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

class Harness {
public:
  Harness(HybridModel &hand, HybridModel &ad, PetscInt n) : hand_(hand), ad_(ad), n_(n) {
    PetscMPIInt rank;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    nl_ = rank == 0 ? n : 0;
    VecCreateMPI(PETSC_COMM_WORLD, nl_, n, &u_);
    VecDuplicate(u_, &v_);
    VecDuplicate(u_, &a_);
    VecDuplicate(u_, &b_);
  }
  ~Harness() {
    VecDestroy(&u_), VecDestroy(&v_), VecDestroy(&a_), VecDestroy(&b_);
  }
  Vec u() { return u_; }
  void set(Vec x, const std::vector<double> &val) {
    PetscScalar *a;
    VecGetArray(x, &a);
    for (PetscInt i = 0; i < nl_; ++i) a[i] = val[i];
    VecRestoreArray(x, &a);
  }

  // All model derivative callbacks at (t, u, p, d), hand vs AD.
  void model(Compare &cmp, PetscReal t, const std::vector<double> &u, const std::vector<double> &p, const DiscreteState &d,
             const std::vector<double> &dir) {
    const PetscInt np = (PetscInt)p.size(), N = np + 2;  // two extra (initial-state) columns stay zero
    ModeContext c{p, d};
    const std::string at = " at t=" + std::to_string(t) + " d=" + describe(d);
    set(u_, u);
    set(v_, dir);
    // rhs value and ∂f/∂u (default AIJ from createJacobian).
    for (auto *m : {&hand_, &ad_}) VecZeroEntries(m == &hand_ ? a_ : b_), m->rhs(t, u_, c, m == &hand_ ? a_ : b_);
    vec(cmp, "rhs" + at, a_, b_);
    Mat Jh, Ja;
    hand_.createJacobian(&Jh), ad_.createJacobian(&Ja);
    for (auto [m, J] : {std::pair{&hand_, Jh}, std::pair{&ad_, Ja}}) {
      MatZeroEntries(J);
      ASSERT_EQ(m->rhsJacobian(t, u_, c, J), 0);
      MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY);
    }
    mat(cmp, "rhsJacobian" + at, Jh, Ja, n_, n_);
    MatDestroy(&Jh), MatDestroy(&Ja);
    // ∂f/∂p, ∂u0/∂p and R_p into dense n × N.
    using Fill = std::function<PetscErrorCode(HybridModel &, Mat)>;
    const EventId rid{EventId::Guard, hand_.hasReset({EventId::Guard, 0}) ? 0 : 1};
    for (auto [name, fill] : {std::pair<std::string, Fill>{"rhsJacobianP", [&](HybridModel &m, Mat M) { return m.rhsJacobianP(t, u_, c, M); }},
                              std::pair<std::string, Fill>{"initialStateJacobianP", [&](HybridModel &m, Mat M) { return m.initialStateJacobianP(c, M); }},
                              std::pair<std::string, Fill>{"resetJacobianP", [&](HybridModel &m, Mat M) { return m.resetJacobianP(rid, t, u_, c, M); }}}) {
      Mat Mh, Ma;
      MatCreateDense(PETSC_COMM_WORLD, nl_, PETSC_DECIDE, n_, N, nullptr, &Mh);
      MatCreateDense(PETSC_COMM_WORLD, nl_, PETSC_DECIDE, n_, N, nullptr, &Ma);
      for (auto [m, M] : {std::pair<HybridModel *, Mat>{&hand_, Mh}, std::pair<HybridModel *, Mat>{&ad_, Ma}}) {
        MatZeroEntries(M);
        ASSERT_EQ(fill(*m, M), 0) << name;
        MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY);
      }
      mat(cmp, name + at, Mh, Ma, n_, N);
      MatDestroy(&Mh), MatDestroy(&Ma);
    }
    // Guards: values and (γ_u, γ_t, γ_p) of each.
    const PetscInt ng = hand_.numGuards();
    std::vector<PetscScalar> gh(ng, 0.0), ga(ng, 0.0);
    hand_.guards(t, u_, c, gh.data()), ad_.guards(t, u_, c, ga.data());
    for (PetscInt j = 0; j < ng; ++j) cmp("guard value" + at, gh[j], ga[j]);
    for (PetscInt j = 0; j < ng; ++j) {
      std::vector<PetscScalar> ph(np + 1, 0.0), pa(np + 1, 0.0);
      VecZeroEntries(a_), VecZeroEntries(b_);
      ASSERT_EQ(hand_.guardGradient(j, t, u_, c, a_, &ph[0], &ph[1]), 0);
      ASSERT_EQ(ad_.guardGradient(j, t, u_, c, b_, &pa[0], &pa[1]), 0);
      vec(cmp, "guardGradient gu" + at, a_, b_);
      for (PetscInt k = 0; k <= np; ++k) cmp(k ? "guardGradient gp" + at : "guardGradient gt" + at, ph[k], pa[k]);
    }
    // Reset: value, R_u v, R_uᵀ v, R_t.
    using VFill = std::function<PetscErrorCode(HybridModel &, Vec)>;
    for (auto [name, fill] : {std::pair<std::string, VFill>{"reset", [&](HybridModel &m, Vec o) { return m.reset(rid, t, u_, c, o); }},
                              std::pair<std::string, VFill>{"resetJacobianAction", [&](HybridModel &m, Vec o) { return m.resetJacobianAction(rid, t, u_, c, v_, o); }},
                              std::pair<std::string, VFill>{"resetJacobianTransposeAction", [&](HybridModel &m, Vec o) { return m.resetJacobianTransposeAction(rid, t, u_, c, v_, o); }},
                              std::pair<std::string, VFill>{"resetTimeDerivative", [&](HybridModel &m, Vec o) { return m.resetTimeDerivative(rid, t, u_, c, o); }}}) {
      VecZeroEntries(a_), VecZeroEntries(b_);
      ASSERT_EQ(fill(hand_, a_), 0) << name;
      ASSERT_EQ(fill(ad_, b_), 0) << name;
      vec(cmp, name + at, a_, b_);
    }
    // A transition without reset is the identity in both.
    const EventId other{EventId::Guard, 1 - rid.index};
    ASSERT_FALSE(ad_.hasReset(other));
    // Time event: T and ∂T/∂p.
    const auto th = hand_.timeEvent(0, p), ta = ad_.timeEvent(0, p);
    EXPECT_EQ(th.name, ta.name);
    cmp("timeEvent T", th.time, ta.time);
    ASSERT_EQ(th.dtime_dp.size(), ta.dtime_dp.size());
    for (size_t k = 0; k < th.dtime_dp.size(); ++k) cmp("timeEvent dT/dp", th.dtime_dp[k], ta.dtime_dp[k]);
  }

  void cost(Compare &cmp, CostFunction &hand, CostFunction &ad, PetscReal t, const std::vector<double> &u,
            const std::vector<double> &p, const DiscreteState &d) {
    ModeContext c{p, d};
    const PetscInt np = (PetscInt)p.size();
    set(u_, u);
    auto both = [&](const std::string &name, const std::function<PetscErrorCode(CostFunction &, PetscScalar *)> &value,
                    const std::function<PetscErrorCode(CostFunction &, Vec, PetscScalar *)> &grad) {
      PetscScalar vh = 0, va = 0;
      ASSERT_EQ(value(hand, &vh), 0);
      ASSERT_EQ(value(ad, &va), 0);
      cmp(name + " value", vh, va);
      std::vector<PetscScalar> ph(np, 0.0), pa(np, 0.0);
      VecZeroEntries(a_), VecZeroEntries(b_);
      ASSERT_EQ(grad(hand, a_, ph.data()), 0);
      ASSERT_EQ(grad(ad, b_, pa.data()), 0);
      vec(cmp, name + " _u", a_, b_);
      for (PetscInt k = 0; k < np; ++k) cmp(name + " _p", ph[k], pa[k]);
    };
    both("terminal", [&](CostFunction &f, PetscScalar *v) { return f.terminal(t, u_, c, v); },
         [&](CostFunction &f, Vec g, PetscScalar *gp) { return f.terminalGradient(t, u_, c, g, gp); });
    both("integrand", [&](CostFunction &f, PetscScalar *v) { return f.integrand(t, u_, c, v); },
         [&](CostFunction &f, Vec g, PetscScalar *gp) { return f.integrandGradient(t, u_, c, g, gp); });
    for (PetscInt i = 0; i < 2; ++i)
      both("measurement " + std::to_string(i), [&](CostFunction &f, PetscScalar *v) { return f.measurement(i, t, u_, c, v); },
           [&](CostFunction &f, Vec g, PetscScalar *gp) { return f.measurementGradient(i, t, u_, c, g, gp); });
  }

private:
  void vec(Compare &cmp, const std::string &what, Vec a, Vec b) {
    const auto x = gatherAll(a), y = gatherAll(b);
    for (size_t i = 0; i < x.size(); ++i) cmp(what + "[" + std::to_string(i) + "]", x[i], y[i]);
  }
  void mat(Compare &cmp, const std::string &what, Mat A, Mat B, PetscInt rows, PetscInt cols) {
    const auto x = denseAll(A, rows, cols), y = denseAll(B, rows, cols);
    for (size_t i = 0; i < x.size(); ++i)
      cmp(what + "(" + std::to_string(i / cols) + "," + std::to_string(i % cols) + ")", x[i], y[i]);
  }
  HybridModel &hand_, &ad_;
  PetscInt n_, nl_;
  Vec u_, v_, a_, b_;
};

// States, times and parameter sets at which everything is compared.
template <class F> void forPoints(PetscInt n, F &&f) {
  const std::vector<std::vector<double>> us1 = {{0.0}, {0.78741}, {-1.7}, {3.3}};
  const std::vector<std::vector<double>> us2 = {{0.0, 1.0}, {0.37, -0.81}, {-2.2, 1.5}, {1e-3, 7.0}};
  const std::vector<double> ts = {0.0, 0.21921592229, 2.5};
  const auto &us = n == 1 ? us1 : us2;
  for (size_t k = 0; k < us.size(); ++k)
    for (double t : ts)
      for (PetscInt mode : {1, 2}) {
        std::vector<double> dir(n);
        for (PetscInt i = 0; i < n; ++i) dir[i] = 0.3 - 1.1 * i + 0.7 * k;
        f(t, us[k], DiscreteState{mode}, dir);
      }
}

template <class Hand, class AD> double compareModels(const char *label, double wrongBy = 0) {
  Hand hand;
  AD ad;
  hand.wrongBy = wrongBy;
  Harness h(hand, ad, hand.n());
  Compare cmp;
  for (const auto &pscale : {1.0, -0.4}) {
    auto p = hand.defaultParameters();
    for (auto &x : p) x *= pscale;
    forPoints(hand.n(), [&](PetscReal t, const std::vector<double> &u, const DiscreteState &d, const std::vector<double> &dir) {
      h.model(cmp, t, u, p, d, dir);
    });
  }
  PetscPrintf(PETSC_COMM_WORLD, "  %s: %d values compared (%d nonzero), worst relative difference AD vs hand-coded %.3g (%s)\n", label,
              cmp.compared, cmp.nonzero, cmp.worst, cmp.where.c_str());
  EXPECT_GT(cmp.nonzero, 100);
  return cmp.worst;
}

} // namespace

TEST(ADJacobians, GalanLikeEqualsHandCoded) { EXPECT_LE((compareModels<GalanHand, GalanAD<>>("GalanLike DFad")), TOL); }
TEST(ADJacobians, SwitchedLikeEqualsHandCoded) { EXPECT_LE((compareModels<SwitchedHand, SwitchedAD<>>("SwitchedLike DFad")), TOL); }
// Static-size Fad: n + np + 1 = 6 directions for the switched guard gradient.
TEST(ADJacobians, StaticFadEqualsHandCoded) {
  EXPECT_LE((compareModels<GalanHand, GalanAD<4>>("GalanLike SLFad<4>")), TOL);
  EXPECT_LE((compareModels<SwitchedHand, SwitchedAD<6>>("SwitchedLike SLFad<6>")), TOL);
}

TEST(ADJacobians, CostGradientsEqualHandCoded) {
  SwitchedHand m;
  CostHand hand;
  CostAD ad;
  Harness h(m, m, 2);
  Compare cmp;
  forPoints(2, [&](PetscReal t, const std::vector<double> &u, const DiscreteState &d, const std::vector<double> &) {
    h.cost(cmp, hand, ad, t, u, m.defaultParameters(), d);
  });
  PetscPrintf(PETSC_COMM_WORLD, "  cost: %d values compared (%d nonzero), worst relative difference AD vs hand-coded %.3g (%s)\n",
              cmp.compared, cmp.nonzero, cmp.worst, cmp.where.c_str());
  EXPECT_GT(cmp.nonzero, 100);
  EXPECT_LE(cmp.worst, TOL) << cmp.where;
}

// The comparison can fail: a hand-coded ∂f_0/∂u_0 off by 1e-9 is caught.
TEST(ADJacobians, WrongHandCodedEntryIsCaught) {
  EXPECT_GT((compareModels<SwitchedHand, SwitchedAD<>>("SwitchedLike, oracle off by 1e-9", 1e-9)), 1e-12);
  EXPECT_GT((compareModels<GalanHand, GalanAD<>>("GalanLike, oracle off by 1e-9", 1e-9)), 1e-12);
}

// A static Fad too small for the directions needed is a loud error, not a truncated derivative.
TEST(ADJacobians, TooSmallStaticFadIsAnError) {
  SwitchedAD<3> ad;  // guardGradient needs 2 + 3 + 1 = 6
  const auto p = ad.defaultParameters();
  const DiscreteState d{1};
  ModeContext c{p, d};
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  Vec u, gu;
  VecCreateMPI(PETSC_COMM_WORLD, rank == 0 ? 2 : 0, 2, &u);
  VecDuplicate(u, &gu);
  VecSet(u, 0.5);
  std::vector<PetscScalar> gp(4, 0.0);
  PetscErrorCode ierr;
  std::string msg;
  {
    ErrorCapture err;
    ierr = ad.guardGradient(0, 0.0, u, c, gu, &gp[0], &gp[1]);
    msg = err.message();
  }
  if (rank == 0) {
    EXPECT_NE(ierr, 0);
    EXPECT_NE(msg.find("derivative directions"), std::string::npos) << msg;
  }
  VecDestroy(&u), VecDestroy(&gu);
}
