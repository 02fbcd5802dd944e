// Solver::setForwardMonitor on the ring of oscillators (tests/ring_models.hpp: a distributed
// DAE with engage/release state events, a reset and a p-dependent time event) with a cost made
// of integrals and measurements only (no terminal part), so that its running value is J itself:
//   * sample order: StepEnd at step 0 first, one AfterTransition per event (u = the record's
//     u⁺), AfterMeasurements at the two measurement times, times nondecreasing;
//   * the last sample's running cost and its gradient equal the solve's objective and forward
//     gradient (parameters and initial-state columns), its S the final sensitivities;
//   * at the StepEnd right after each of the first two events (the step that carries the
//     discrete event derivative's correction) and at a measurement time, the running cost, its
//     gradient and S equal a solve that ends there (≤ 1e-12 relative) — reporting before the
//     correction would fail this; the uncorrected jump's right limit (AfterTransition) differs;
//   * without forward sensitivities the monitor reports the same states and running values,
//     with no S and no gradient.
// Registered at 1 and 2 ranks.
#include "ad_support.hpp"
#include "ring_models.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

using namespace hybridsens;
using namespace hstest;

namespace {

constexpr PetscInt M = 4, N = 3 * M, NP = 5;

class RunningCost : public LocalKernelCost {
public:
  explicit RunningCost(const ring::RingLocal &m) : LocalKernelCost(m) {
    for (PetscInt i = 0; i < M; ++i) add(ring::XSquared{}, {{3 * i}, {}, {}, {}});
    add(ring::SpringEnergy{}, {{2}, {}, {0}, {}});
    add(ring::X1Measurement{}, {{3}, {}, {}, {}});
  }
  std::string name() const override { return "running"; }
  std::vector<PetscReal> measurementTimes() const override { return ring::measurementTimes(); }
};

struct Sample {
  ForwardSample::Kind kind;
  PetscInt step;
  PetscReal t;
  std::string event;
  std::vector<double> u, S, running;
  std::vector<std::vector<double>> grad;
  bool hasS;
};

const std::vector<PetscInt> u0Columns = {0, 4};

struct Trace {
  std::vector<Sample> samples;
  std::vector<double> objective, gradP, gradU0, finalS;
  size_t events = 0;
  std::vector<std::vector<double>> uplus;
};

Trace solveTo(ring::RingLocal &model, RunningCost &cost, PetscReal T, bool forward, bool monitor) {
  Trace r;
  Solver s(model);
  s.addCost(cost);
  EXPECT_EQ(configureFixedStep(s, TSCN, 0.02, T), 0);
  s.setForwardSensitivities(forward);
  s.setInitialStateSensitivities(u0Columns);
  if (monitor)
    s.setForwardMonitor([&](const ForwardSample &x) -> PetscErrorCode {
      Sample m{x.kind, x.step, x.time, x.event ? x.event->name : "", gatherAll(x.u), {}, {x.running.begin(), x.running.end()}, {}, x.S != nullptr};
      if (x.S) m.S = denseAll(x.S, N, NP + (PetscInt)u0Columns.size());
      for (const auto &g : x.runningGradient) m.grad.emplace_back(g.begin(), g.end());
      r.samples.push_back(std::move(m));
      return 0;
    });
  EXPECT_EQ(s.solve(), 0);
  r.objective = {s.result().objective.begin(), s.result().objective.end()};
  if (forward) {
    r.gradP = {s.result().gradient[0].forwardP.begin(), s.result().gradient[0].forwardP.end()};
    r.gradU0 = {s.result().gradient[0].forwardU0.begin(), s.result().gradient[0].forwardU0.end()};
    r.finalS = denseAll(s.result().finalSensitivities(), N, NP + (PetscInt)u0Columns.size());
  }
  r.events = s.result().events().size();
  for (const auto &e : s.result().events().records()) r.uplus.push_back(gatherAll(e.uplus));
  return r;
}

std::vector<double> concat(const std::vector<double> &a, const std::vector<double> &b) {
  std::vector<double> c = a;
  c.insert(c.end(), b.begin(), b.end());
  return c;
}

class ForwardMonitorTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(model.setUp(), 0);
    ASSERT_EQ(cost.setUp(), 0);
  }
  ring::RingLocal model{M};
  RunningCost cost{model};
};

TEST_F(ForwardMonitorTest, SamplesAreTheSensitivitiesOfASolveEndingThere) {
  const PetscReal T = 2.0;
  const Trace full = solveTo(model, cost, T, true, true);
  const auto &smp = full.samples;
  ASSERT_GE(full.events, 3u) << "the test needs the time event, an engage and a release";
  ASSERT_FALSE(smp.empty());
  EXPECT_EQ(smp.front().kind, ForwardSample::StepEnd);
  EXPECT_EQ(smp.front().step, 0);
  size_t transitions = 0, measurements = 0;
  for (size_t i = 0; i < smp.size(); ++i) {
    if (i) EXPECT_GE(smp[i].t, smp[i - 1].t) << "sample " << i;
    EXPECT_TRUE(smp[i].hasS);
    ASSERT_EQ(smp[i].grad.size(), 1u);
    if (smp[i].kind == ForwardSample::AfterTransition) {
      ASSERT_LT(transitions, full.uplus.size());
      EXPECT_EQ(smp[i].u, full.uplus[transitions]) << "u after transition " << transitions;
      ++transitions;
    }
    if (smp[i].kind == ForwardSample::AfterMeasurements) {
      ASSERT_LT(measurements, ring::measurementTimes().size()) << "more measurement samples than measurement times";
      EXPECT_EQ(smp[i].t, ring::measurementTimes()[measurements]);
      ++measurements;
    }
  }
  EXPECT_EQ(transitions, full.events);
  EXPECT_EQ(measurements, 2u);

  // The last sample is the solve's result.
  const Sample &last = smp.back();
  EXPECT_EQ(last.t, T);
  EXPECT_LE(relDiffInf(last.running, full.objective), 1e-15);
  EXPECT_LE(relDiffInf(std::vector<double>(last.grad[0].begin(), last.grad[0].begin() + NP), full.gradP), 1e-15);
  EXPECT_LE(relDiffInf(std::vector<double>(last.grad[0].begin() + NP, last.grad[0].end()), full.gradU0), 1e-15);
  EXPECT_LE(relDiffInf(last.S, full.finalS), 1e-15);

  // Boundaries to cut the solve at: the StepEnd after the first two events' instants (the step
  // that applies their correction) and the second measurement time.
  std::vector<size_t> cuts;
  for (size_t i = 1; i < smp.size() && cuts.size() < 2; ++i)
    if (smp[i].kind == ForwardSample::StepEnd && smp[i - 1].kind == ForwardSample::AfterTransition) cuts.push_back(i);
  ASSERT_EQ(cuts.size(), 2u);
  for (size_t i = 0; i < smp.size(); ++i)
    if (smp[i].kind == ForwardSample::AfterMeasurements && smp[i].t == ring::measurementTimes()[1]) cuts.push_back(i);
  ASSERT_EQ(cuts.size(), 3u);
  for (size_t c : cuts) {
    const Sample &m = smp[c];
    const Trace part = solveTo(model, cost, m.t, true, false);
    const std::string at = " at t = " + std::to_string(m.t);
    ASSERT_EQ(m.grad[0].size(), part.gradP.size() + part.gradU0.size());
    ASSERT_EQ(m.S.size(), part.finalS.size());
    EXPECT_LE(relDiffInf(m.running, part.objective), 1e-12) << "running cost" << at;
    EXPECT_LE(relDiffInf(m.grad[0], concat(part.gradP, part.gradU0)), 1e-12) << "running gradient" << at;
    EXPECT_LE(relDiffInf(m.S, part.finalS), 1e-12) << "S" << at;
    if (m.kind == ForwardSample::StepEnd) {
      // The transition's right limit, one step earlier, is the continuous convention: S moved by
      // the step and the correction, so it is not what the cut solve returns at its end.
      const Sample &jump = smp[c - 1];
      EXPECT_GT(relDiffInf(jump.S, part.finalS), 1e-6) << "right limit of '" << jump.event << "'";
    }
  }

  // Values only: same states and running values, no S, no gradient.
  const Trace plain = solveTo(model, cost, T, false, true);
  ASSERT_EQ(plain.samples.size(), smp.size());
  for (size_t i = 0; i < smp.size(); ++i) {
    EXPECT_EQ(plain.samples[i].kind, smp[i].kind);
    EXPECT_FALSE(plain.samples[i].hasS);
    EXPECT_TRUE(plain.samples[i].grad.empty());
    EXPECT_LE(relDiffInf(plain.samples[i].u, smp[i].u), 1e-14) << "sample " << i;
    EXPECT_LE(relDiffInf(plain.samples[i].running, smp[i].running), 1e-14) << "sample " << i;
  }
}

} // namespace
