// A ring of M coupled oscillators with a switching component, a time event, a reset and
// algebraic couplings, written twice with the AD front ends:
//   RingDense  — ADModel, one template over the whole state on rank 0 (the reference);
//   RingLocal  — LocalKernelModel, five kernel types, distributed in blocks over the ranks (the
//                spring kernel adds to v_{i+1}, owned by another rank at the block ends)
//                (optionally with the oscillator kernel in its Dynamic-size DFad form).
// and its cost twice (RingCostDense: ADCost; RingCostLocal: LocalKernelCost).
//
// State (per oscillator i, interleaved so that ranks cut through components): x_i = u[3i],
// v_i = u[3i+1] (differential), y_i = u[3i+2] (algebraic: the force in the spring i → i+1).
//   ẋ_i = v_i
//   v̇_i = −ω_i² x_i − ζ v_i + y_i − y_{i−1}                        ω_i = 4 + 0.5 i (ring: y_{−1} = y_{M−1})
//   0   = 2 y_i + 0.3 sin y_i − k (x_{i+1} − x_i)                  (g_y = 2 + 0.3 cos y ≥ 1.7)
//   switch (oscillator 0), d[0] = 1:  v̇_0 += −β (x_0 − θ)(1 + x_0²)
//   forcing (oscillator 2):            v̇_2 += a(d[1]) sin(2t)(1 + 0.1 x_2²),  a = 0.2, or 1 when d[1] = 1
// Guards: γ_0 = x_0 − θ (rising, active d[0] = 0 → d[0] = 1);
//         γ_1 = x_0 − θ/2 (falling, active d[0] = 1 → d[0] = 0, reset v_0⁺ = e v_0⁻).
// Time event "forcing_on" at T = 0.5 + 0.1 β + 0.01 (β − 4)² + θ²/2 (= 0.91125, off the step
// grids; nonlinear in p for the second derivatives): d[1] = 1.
// p = (k, ζ, θ, β, e) = (0.8, 0.3, 0.15, 4, 0.7); u0: x_i = 0.3 sin(i+1) + 0.1 k, v_i = 0.2 ζ cos i,
// y_i = 0 (solved by the engine); d(0) = (0, 0).
// Cost: ∫ Σ x_i² + 0.1 k y_0² (1 + ½ sin t) dt + Σ v_i x_i (T) + e x_0(T) + Σ_{j=1,2} (x_1(t_j) − 0.1 j)², t = (0.3, 0.7).
#pragma once

#include <hybridsens/ad.hpp>
#include <hybridsens/ad_local.hpp>

#include <cmath>

namespace ring {

using namespace hybridsens;

inline std::vector<PetscReal> parameters() { return {0.8, 0.3, 0.15, 4.0, 0.7}; }
inline std::vector<std::string> names() { return {"k", "zeta", "theta", "beta", "e"}; }
inline PetscReal omega(PetscInt i) { return 4.0 + 0.5 * i; }
inline PetscReal forcingAmplitude(const DiscreteState &d) { return d[1] == 1 ? 1.0 : 0.2; }

// Everything without derivatives, shared by both models.
template <class Base> class RingCommon : public Base {
public:
  explicit RingCommon(PetscInt M) : M_(M) {}
  PetscInt oscillators() const { return M_; }
  DiscreteState initialDiscreteState() const override { return {0, 0}; }
  std::vector<PetscReal> defaultParameters() const override { return parameters(); }
  std::vector<std::string> parameterNames() const override { return names(); }
  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override {
    return j == 0 ? GuardInfo{"engage", Direction::Rising} : GuardInfo{"release", Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j; }
  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    if (id.kind == EventId::Time) d[1] = 1;
    else d[0] = id.index == 0 ? 1 : 0;
    return 0;
  }
  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && id.index == 1; }

protected:
  PetscInt M_;
};

// ---------------------------------------------------------------------------------------------
class RingDense : public RingCommon<ADModel<RingDense>> {
public:
  explicit RingDense(PetscInt M) : RingCommon(M) {}
  PetscInt stateSize() const override { return 3 * M_; }
  std::vector<PetscInt> algebraicIndices() const override {
    std::vector<PetscInt> a;
    if (rank() == 0)
      for (PetscInt i = 0; i < M_; ++i) a.push_back(3 * i + 2);
    return a;
  }
  PetscInt numTimeEvents() const override { return 1; }
  std::string timeEventName(PetscInt) const override { return "forcing_on"; }
  template <class S> S eventTime(PetscInt, const S *p) const { return 0.5 + 0.1 * p[3] + 0.01 * (p[3] - 4.0) * (p[3] - 4.0) + 0.5 * p[2] * p[2]; }

  template <class S> void initialState(const S *p, S *u0) const {
    using std::cos;
    using std::sin;
    for (PetscInt i = 0; i < M_; ++i) {
      u0[3 * i] = 0.3 * sin(i + 1.0) + 0.1 * p[0];
      u0[3 * i + 1] = 0.2 * p[1] * cos((double)i);
      u0[3 * i + 2] = 0.0;
    }
  }
  template <class S> void rhs(S t, const S *u, const S *p, const DiscreteState &d, S *f) const {
    using std::sin;
    const S &k = p[0], &zeta = p[1], &theta = p[2], &beta = p[3];
    for (PetscInt i = 0; i < M_; ++i) {
      const PetscInt prev = (i + M_ - 1) % M_, next = (i + 1) % M_;
      const S &x = u[3 * i], &v = u[3 * i + 1], &y = u[3 * i + 2];
      f[3 * i] = v;
      f[3 * i + 1] = -omega(i) * omega(i) * x - zeta * v + y - u[3 * prev + 2];
      f[3 * i + 2] = 2.0 * y + 0.3 * sin(y) - k * (u[3 * next] - x);
    }
    if (d[0] == 1) f[1] += -beta * (u[0] - theta) * (1.0 + u[0] * u[0]);
    f[7] += forcingAmplitude(d) * sin(2.0 * t) * (1.0 + 0.1 * u[6] * u[6]);
  }
  template <class S> S guard(PetscInt j, S, const S *u, const S *p, const DiscreteState &) const {
    return j == 0 ? S(u[0] - p[2]) : S(u[0] - 0.5 * p[2]);
  }
  template <class S> void reset(const EventId &, S, const S *u, const S *p, const DiscreteState &, S *up) const { up[1] = p[4] * u[1]; }
};

// ---------------------------------------------------------------------------------------------
// Kernel types of the local model.
struct Oscillator {  // reads (x_i, v_i), writes rows (x_i, v_i), params (k, ζ)
  static constexpr int numReads = 2, numWrites = 2, numParams = 2;
  PetscReal omega2, index;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    f[0] = u[1];
    f[1] = -omega2 * u[0] - p[1] * u[1];
  }
  template <class S> void initialState(const S *p, S *u0) const {
    using std::cos;
    using std::sin;
    u0[0] = 0.3 * sin(index + 1.0) + 0.1 * p[0];
    u0[1] = 0.2 * p[1] * cos(index);
  }
};
// The same kernel with sizes known only per instance (differentiated with DFad).
struct OscillatorDynamic : Oscillator {
  static constexpr int numReads = Dynamic, numWrites = Dynamic, numParams = Dynamic;
};
// Reads (y_i, x_i, x_{i+1}), writes rows (y_i, v_i, v_{i+1}), params (k): its constraint, and
// its force on both oscillators — the row v_{i+1} may belong to another rank.
struct Spring {
  static constexpr int numReads = 3, numWrites = 3, numParams = 1;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    using std::sin;
    f[0] = 2.0 * u[0] + 0.3 * sin(u[0]) - p[0] * (u[2] - u[1]);
    f[1] = u[0];
    f[2] = -u[0];
  }
};
struct Switch {  // reads (x_0, v_0), writes row v_0, params (θ, β, e), guards (0, 1)
  static constexpr int numReads = 2, numWrites = 1, numParams = 3;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &d, S *f) const {
    if (d[0] == 1) f[0] = -p[1] * (u[0] - p[0]) * (1.0 + u[0] * u[0]);
  }
  template <class S> S guard(PetscInt k, S, const S *u, const S *p, const DiscreteState &) const {
    return k == 0 ? S(u[0] - p[0]) : S(u[0] - 0.5 * p[0]);
  }
  template <class S> void reset(const EventId &id, S, const S *u, const S *p, const DiscreteState &, S *up) const {
    if (id.kind == EventId::Guard && id.index == 1) up[0] = p[2] * u[1];
  }
};
struct Forcing {  // reads x_2, writes row v_2; explicit time dependence, mode-dependent amplitude
  static constexpr int numReads = 1, numWrites = 1, numParams = 0;
  template <class S> void residual(S t, const S *u, const S *, const DiscreteState &d, S *f) const {
    using std::sin;
    f[0] = forcingAmplitude(d) * sin(2.0 * t) * (1.0 + 0.1 * u[0] * u[0]);
  }
};

class RingLocal : public RingCommon<LocalKernelModel> {
public:
  // Call setUp() after construction (collective). dynamicOscillators: use OscillatorDynamic.
  explicit RingLocal(PetscInt M, bool dynamicOscillators = false) : RingCommon(M) {
    PetscCallAbort(PETSC_COMM_WORLD, setSizes(3 * M));
    std::vector<PetscInt> alg;
    for (PetscInt i = 0; i < M; ++i) alg.push_back(3 * i + 2);
    setAlgebraic(alg);
    const auto x = [](PetscInt i) { return 3 * i; };
    for (PetscInt i = 0; i < M; ++i) {
      const PetscInt next = (i + 1) % M;
      const Coupling osc{{x(i), x(i) + 1}, {x(i), x(i) + 1}, {0, 1}, {}};
      if (dynamicOscillators) add(OscillatorDynamic{{omega(i) * omega(i), (PetscReal)i}}, osc);
      else add(Oscillator{omega(i) * omega(i), (PetscReal)i}, osc);
      add(Spring{}, {{x(i) + 2, x(i), x(next)}, {x(i) + 2, x(i) + 1, x(next) + 1}, {0}, {}});
    }
    add(Switch{}, {{0, 1}, {1}, {2, 3, 4}, {0, 1}});
    add(Forcing{}, {{6}, {7}, {}, {}});
    addTimeEvent("forcing_on", [](const TimeScalar *p) -> TimeScalar {
      return 0.5 + 0.1 * p[3] + 0.01 * (p[3] - 4.0) * (p[3] - 4.0) + 0.5 * p[2] * p[2];
    });
  }
};

// ---------------------------------------------------------------------------------------------
inline std::vector<PetscReal> measurementTimes() { return {0.3, 0.7}; }

class RingCostDense : public ADCost<RingCostDense> {
public:
  explicit RingCostDense(PetscInt M) : M_(M) {}
  std::string name() const override { return "ring_cost"; }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  std::vector<PetscReal> measurementTimes() const override { return ring::measurementTimes(); }
  template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    S r = 0.1 * p[0] * u[2] * u[2] * (1.0 + 0.5 * sin(t));
    for (PetscInt i = 0; i < M_; ++i) r += u[3 * i] * u[3 * i];
    return r;
  }
  template <class S> S terminal(S, const S *u, const S *p, const DiscreteState &) const {
    S r = p[4] * u[0];
    for (PetscInt i = 0; i < M_; ++i) r += u[3 * i + 1] * u[3 * i];
    return r;
  }
  template <class S> S measurement(PetscInt j, S, const S *u, const S *, const DiscreteState &) const {
    return (u[3] - 0.1 * (j + 1)) * (u[3] - 0.1 * (j + 1));
  }

private:
  PetscInt M_;
};

struct XSquared {
  static constexpr int numReads = 1;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const { return u[0] * u[0]; }
};
struct SpringEnergy {
  static constexpr int numReads = 1, numParams = 1;
  template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    return 0.1 * p[0] * u[0] * u[0] * (1.0 + 0.5 * sin(t));
  }
};
struct Momentum {
  static constexpr int numReads = 2;
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[0] * u[1]; }
};
struct WeightedX0 {
  static constexpr int numReads = 1, numParams = 1;
  template <class S> S terminal(S, const S *u, const S *p, const DiscreteState &) const { return p[0] * u[0]; }
};
struct X1Measurement {
  static constexpr int numReads = 1;
  template <class S> S measurement(PetscInt j, S, const S *u, const S *, const DiscreteState &) const {
    return (u[0] - 0.1 * (j + 1)) * (u[0] - 0.1 * (j + 1));
  }
};

class RingCostLocal : public LocalKernelCost {
public:
  // After model.setSizes(); call setUp() after the model's setUp() (collective).
  explicit RingCostLocal(const RingLocal &model) : LocalKernelCost(model) {
    const PetscInt M = model.oscillators();
    for (PetscInt i = 0; i < M; ++i) {
      add(XSquared{}, {{3 * i}, {}, {}, {}});
      add(Momentum{}, {{3 * i + 1, 3 * i}, {}, {}, {}});
    }
    add(SpringEnergy{}, {{2}, {}, {0}, {}});
    add(WeightedX0{}, {{0}, {}, {4}, {}});
    add(X1Measurement{}, {{3}, {}, {}, {}});
  }
  std::string name() const override { return "ring_cost"; }
  std::vector<PetscReal> measurementTimes() const override { return ring::measurementTimes(); }
};

} // namespace ring
