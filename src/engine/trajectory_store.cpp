#include "engine/trajectory_store.hpp"

#include "engine/checkpoint_schedule.hpp"

#include "util/log_events.hpp"
#include "util/petsc_internals.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace hybridsens {

TrajectoryStore::~TrajectoryStore() {
  clear();
  VecDestroy(&scratch_);
}

void TrajectoryStore::clear() {
  std::vector<Entry>().swap(entries_);  // (clear() would keep the capacity)
  modes_.clear();
  count_ = 0;
  storedBytes_ = 0;
  if (!runDir_.empty()) {
    for (PetscInt i = 0; i < filesWritten_; ++i) std::remove(fileName(i).c_str());
    for (const auto &kv : held_) std::remove(fileName(kv.first).c_str());
    rmdir(runDir_.c_str());
  }
  held_.clear();
  current_ = -1;
  std::vector<PetscScalar>().swap(currentValues_);
  runDir_.clear();
  filesWritten_ = 0;
}

void TrajectoryStore::release() {
  const PetscInt n = count_;
  clear();
  count_ = n;
  cfg_.keepStates = false;
}

std::string TrajectoryStore::fileName(PetscInt step) const {
  char name[64];
  std::snprintf(name, sizeof(name), "/step-%06d.bin", (int)step);
  return runDir_ + name;
}

// The vectors a record holds: U, then the stages of the step (step > 0). For stiffly accurate
// methods the last stage is the solution itself (as TSTrajectoryBasic).
static PetscErrorCode recordVectors(TS ts, PetscInt step, Vec U, std::vector<Vec> &vecs) {
  PetscFunctionBeginUser;
  vecs.assign(1, U);
  if (step > 0) {
    PetscInt ns;
    Vec *Y;
    PetscBool stifflyAccurate;
    PetscCall(TSGetStages(ts, &ns, &Y));
    PetscCall(tsStifflyAccurate(ts, &stifflyAccurate));
    for (PetscInt i = 0; i < ns; ++i)
      if (!(stifflyAccurate && i == ns - 1)) vecs.push_back(Y[i]);
  }
  PetscFunctionReturn(0);
}

static std::string formatBytes(double b) {
  char s[64];
  const double k = 1024;  // as the k, M, G of -hs_trajectory_max_memory
  if (b < 10 * k) std::snprintf(s, sizeof s, "%.0f bytes", b);
  else if (b < 10 * k * k) std::snprintf(s, sizeof s, "%.1f KiB", b / k);
  else if (b < 10 * k * k * k) std::snprintf(s, sizeof s, "%.1f MiB", b / (k * k));
  else std::snprintf(s, sizeof s, "%.1f GiB", b / (k * k * k));
  return s;
}

// Memory this process may still use: MemAvailable (or the free pages), and within a cgroup
// (a container, a batch job) what is left below its limit. Negative: unknown.
static double availableMemory() {
  double avail = -1;
  if (FILE *f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    double kb;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %lf kB", &kb) == 1) avail = kb * 1024;
    std::fclose(f);
  }
  if (avail < 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0) avail = (double)pages * (double)size;
  }
  double limit = 0, current = 0;
  FILE *fm = std::fopen("/sys/fs/cgroup/memory.max", "r"), *fc = std::fopen("/sys/fs/cgroup/memory.current", "r");
  if (fm && fc && std::fscanf(fm, "%lf", &limit) == 1 && std::fscanf(fc, "%lf", &current) == 1 && limit > current)
    avail = avail < 0 ? limit - current : std::min(avail, limit - current);
  if (fm) std::fclose(fm);
  if (fc) std::fclose(fc);
  return avail;
}

// The limit on the whole trajectory (all ranks): the option, and 3/4 of the memory available
// to the ranks of each node, shared by them in proportion to their part of the state. Every
// rank agrees on it, so the check in record() needs no communication.
PetscErrorCode TrajectoryStore::memoryLimit(Vec layout) {
  PetscInt n, N;
  MPI_Comm node;
  PetscMPIInt onNode;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(layout, &n));
  PetscCall(VecGetSize(layout, &N));
  PetscCallMPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &onNode));
  PetscCallMPI(MPI_Comm_free(&node));
  const double avail = availableMemory();
  double mine = std::numeric_limits<double>::max();
  if (avail > 0 && n > 0) mine = 0.75 * avail / onNode * (double)N / (double)n;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_DOUBLE, MPI_MIN, comm_));
  limitBytes_ = mine;
  limitFromOption_ = cfg_.maxBytes > 0 && cfg_.maxBytes < mine;
  if (limitFromOption_) limitBytes_ = cfg_.maxBytes;
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::setUp(MPI_Comm comm, const Config &cfg, Vec layout) {
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  clear();
  PetscCall(VecDestroy(&scratch_));
  comm_ = comm;
  cfg_ = cfg;
  stride_ = 1;
  ckptStats_ = CheckpointStats();
  if (!cfg.keepStates) PetscFunctionReturn(0);
  PetscCall(VecDuplicate(layout, &scratch_));
  if (checkpointing()) {
    // K states, not the whole trajectory: no memory limit to watch. The directory must exist
    // (a mistyped path is refused here, before the first step, not created).
    PetscCheck(cfg.dir.empty(), comm, PETSC_ERR_ARG_INCOMP,
               "-hs_trajectory_dir keeps every step on disk and -hs_checkpoints keeps only some states: give one of them "
               "(for checkpoints on disk, -hs_checkpoints_dir)");
    if (cfg.checkpointsDir.empty()) PetscFunctionReturn(0);
  } else if (cfg.dir.empty()) {
    PetscCall(memoryLimit(layout));
    PetscFunctionReturn(0);
  }
  // A directory of this run's own on every rank (no collective needed to clean it up, and it
  // works whether or not the ranks share a file system).
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!checkpointing() && mkdir(cfg.dir.c_str(), 0777) != 0 && errno != EEXIST) {
    // (not fatal by itself: mkdtemp below reports what is wrong with the path)
  }
  std::string tmpl = dirName() + (checkpointing() ? "/hybridsens-checkpoints-" : "/hybridsens-trajectory-") + std::to_string((long)getpid()) +
                     "-r" + std::to_string(rank) + "-XXXXXX";
  int err[2] = {0, rank};
  if (mkdtemp(&tmpl[0])) runDir_ = tmpl;
  else err[0] = errno;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_2INT, MPI_MAXLOC, comm));
  PetscCheck(err[0] == 0, comm, PETSC_ERR_FILE_OPEN, "%s %s: cannot create a directory for the %s in it (rank %d): %s", dirOption(),
             dirName().c_str(), checkpointing() ? "checkpoints" : "trajectory", err[1], std::strerror(err[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::checkStates(MPI_Comm comm) const {
  PetscFunctionBeginUser;
  PetscCheck(cfg_.keepStates, comm, PETSC_ERR_ARG_WRONGSTATE,
             "the trajectory of the last solve() was not kept: nothing that reads it after the solve was requested "
             "(-hs_adjoint, -hs_hessian, or a second-order model registered before solve())");
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::writeStep(PetscInt step, const std::vector<Vec> &vecs) const {
  int err[2] = {0, 0};
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm_, &err[1]));
  const std::string name = fileName(step);
  FILE *f = std::fopen(name.c_str(), "wb");
  if (!f) err[0] = errno;
  for (Vec x : vecs) {
    const PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(x, &n));
    PetscCall(VecGetArrayRead(x, &a));
    if (f && !err[0] && std::fwrite(a, sizeof(PetscScalar), (size_t)n, f) != (size_t)n) err[0] = errno ? errno : EIO;
    PetscCall(VecRestoreArrayRead(x, &a));
  }
  if (f && std::fflush(f) != 0 && !err[0]) err[0] = errno;
  if (f && std::fclose(f) != 0 && !err[0]) err[0] = errno;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_2INT, MPI_MAXLOC, comm_));
  PetscCheck(err[0] == 0, comm_, PETSC_ERR_FILE_WRITE, "%s %s: writing step %" PetscInt_FMT " of the trajectory failed (rank %d, %s): %s",
             dirOption(), dirName().c_str(), step, err[1], name.c_str(), std::strerror(err[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::readStep(PetscInt step, const std::vector<Vec> &vecs) const {
  int err[2] = {0, 0};
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm_, &err[1]));
  const std::string name = fileName(step);
  FILE *f = std::fopen(name.c_str(), "rb");
  if (!f) err[0] = errno;
  for (Vec x : vecs) {
    PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(x, &n));
    PetscCall(VecGetArrayWrite(x, &a));
    if (f && !err[0] && std::fread(a, sizeof(PetscScalar), (size_t)n, f) != (size_t)n) err[0] = std::ferror(f) ? (errno ? errno : EIO) : ENODATA;
    PetscCall(VecRestoreArrayWrite(x, &a));
  }
  if (f) std::fclose(f);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_2INT, MPI_MAXLOC, comm_));
  PetscCheck(err[0] == 0, comm_, PETSC_ERR_FILE_READ, "%s %s: reading step %" PetscInt_FMT " of the trajectory failed (rank %d, %s): %s",
             dirOption(), dirName().c_str(), step, err[1], name.c_str(), std::strerror(err[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::record(TS ts, PetscInt step, PetscReal time, PetscReal tprev, Vec U, const DiscreteState &mode, PetscReal h) {
  ScopedLogEvent log(LogEvent::Trajectory);
  MPI_Comm comm = PetscObjectComm((PetscObject)ts);
  PetscFunctionBeginUser;
  PetscCheck(step == count_, comm, PETSC_ERR_PLIB, "trajectory records out of order: step %" PetscInt_FMT " after %" PetscInt_FMT " records", step, count_);
  ++count_;
  if (!cfg_.keepStates) PetscFunctionReturn(0);
  Entry e;
  e.time = time;
  e.tprev = tprev;
  e.h = h;
  if (modes_.empty() || modes_.back().second != mode) modes_.emplace_back(step, mode);
  if (checkpointing()) {
    entries_.push_back(std::move(e));
    // The record just taken is the first the reverse sweep asks for: keep it, not re-take it.
    PetscCall(captureRecord(step));
    PetscCall(thinForwardStates(step));
    if (step % stride_ == 0) PetscCall(keepState(step, U, true));
    PetscFunctionReturn(0);
  }
  {
    std::vector<Vec> vecs;
    PetscCall(recordVectors(ts, step, U, vecs));
    if (!runDir_.empty()) {
      PetscCall(writeStep(step, vecs));
      filesWritten_ = step + 1;
    } else {
      PetscInt n, N, local = 0;
      PetscCall(VecGetSize(U, &N));
      PetscCall(VecGetLocalSize(U, &n));
      const double stepBytes = (double)vecs.size() * (double)N * sizeof(PetscScalar);
      // Same numbers on every rank: all of them stop here together.
      if (storedBytes_ + stepBytes > limitBytes_) {
        const double done = (double)(time - cfg_.t0), whole = (double)(cfg_.tf - cfg_.t0);
        const double projected = done > 0 ? (storedBytes_ + stepBytes) * whole / done : 0;
        // (Not PETSC_ERR_MEM, whose header says memory ran out: nothing has yet.)
        SETERRQ(comm, PETSC_ERR_ARG_OUTOFRANGE,
                "the trajectory kept in memory for the reverse sweeps (-hs_adjoint / Hessians) would exceed %s (%s) at step %" PetscInt_FMT
                ", t = %g of [%g, %g]: %s per step, about %s for the whole run at this pace. Keep it on disk with -hs_trajectory_dir DIR%s",
                formatBytes(limitBytes_).c_str(), limitFromOption_ ? "-hs_trajectory_max_memory" : "3/4 of the memory available at the start",
                step, (double)time, (double)cfg_.t0, (double)cfg_.tf, formatBytes(stepBytes).c_str(), formatBytes(projected).c_str(),
                limitFromOption_ ? ", or raise -hs_trajectory_max_memory" : "");
      }
      try {
        e.values.resize(vecs.size() * (size_t)n);
      } catch (const std::bad_alloc &) {
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory keeping step %" PetscInt_FMT " of the trajectory (%s so far): keep it on disk with -hs_trajectory_dir DIR",
                step, formatBytes(storedBytes_).c_str());
      }
      for (Vec x : vecs) {
        const PetscScalar *a;
        PetscCall(VecGetArrayRead(x, &a));
        if (n) std::memcpy(e.values.data() + local, a, (size_t)n * sizeof(PetscScalar));
        PetscCall(VecRestoreArrayRead(x, &a));
        local += n;
      }
      storedBytes_ += stepBytes;
    }
  }
  entries_.push_back(std::move(e));
  PetscFunctionReturn(0);
}

const DiscreteState &TrajectoryStore::mode(PetscInt step) const {
  auto after = std::upper_bound(modes_.begin(), modes_.end(), step, [](PetscInt s, const auto &m) { return s < m.first; });
  return std::prev(after)->second;
}

PetscErrorCode TrajectoryStore::load(TS ts, PetscInt step) const {
  ScopedLogEvent log(LogEvent::Trajectory);
  MPI_Comm comm = PetscObjectComm((PetscObject)ts);
  PetscFunctionBeginUser;
  PetscCall(checkStates(comm));
  PetscCheck(step >= 0 && step < (PetscInt)entries_.size(), comm, PETSC_ERR_ARG_OUTOFRANGE, "no trajectory record for step %" PetscInt_FMT, step);
  const Entry &e = entries_[step];
  Vec X;
  std::vector<Vec> targets;
  PetscCall(TSGetSolution(ts, &X));
  PetscCall(recordVectors(ts, step, X, targets));
  if (checkpointing()) PetscCall(materialize(step));
  if (!runDir_.empty() && !checkpointing()) PetscCall(readStep(step, targets));
  else {
    const std::vector<PetscScalar> &values = checkpointing() ? currentValues_ : e.values;
    size_t at = 0;
    for (Vec x : targets) {
      PetscScalar *a;
      PetscInt n;
      PetscCall(VecGetLocalSize(x, &n));
      PetscCheck(at + (size_t)n <= values.size(), PETSC_COMM_SELF, PETSC_ERR_PLIB, "trajectory record %" PetscInt_FMT " holds fewer values than the TS has stages", step);
      PetscCall(VecGetArrayWrite(x, &a));
      if (n) std::memcpy(a, values.data() + at, (size_t)n * sizeof(PetscScalar));
      PetscCall(VecRestoreArrayWrite(x, &a));
      at += (size_t)n;
    }
  }
  PetscCall(TSSetTime(ts, e.time));
  // The size the step was taken with, not e.tprev − e.time: that differs from it in the last
  // bits of the time, and the reverse step's derivative moves by ulp(t)/h relative with it
  // (EngineObserver::stepAccepted).
  if (step > 0) PetscCall(TSSetTimeStep(ts, cfg_.rebuiltSteps ? e.tprev - e.time : -e.h));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::state(PetscInt step, Vec *out) const {
  PetscFunctionBeginUser;
  PetscCall(checkStates(comm_));
  PetscCheck(step >= 0 && step < (PetscInt)entries_.size(), comm_, PETSC_ERR_ARG_OUTOFRANGE, "no trajectory record for step %" PetscInt_FMT, step);
  if (checkpointing()) PetscCall(materialize(step));
  if (!runDir_.empty() && !checkpointing()) PetscCall(readStep(step, {scratch_}));
  else {
    PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(scratch_, &n));
    PetscCall(VecGetArrayWrite(scratch_, &a));
    if (n) std::memcpy(a, (checkpointing() ? currentValues_ : entries_[step].values).data(), (size_t)n * sizeof(PetscScalar));
    PetscCall(VecRestoreArrayWrite(scratch_, &a));
  }
  *out = scratch_;
  PetscFunctionReturn(0);
}

// ---- checkpoints --------------------------------------------------------------------------

static PetscErrorCode copyOut(const std::vector<Vec> &vecs, std::vector<PetscScalar> &values) {
  PetscInt n;
  size_t at = 0;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(vecs[0], &n));
  values.resize(vecs.size() * (size_t)n);
  for (Vec x : vecs) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(x, &a));
    if (n) std::memcpy(values.data() + at, a, (size_t)n * sizeof(PetscScalar));
    PetscCall(VecRestoreArrayRead(x, &a));
    at += (size_t)n;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::keepState(PetscInt step, Vec U, bool fromForwardSweep) const {
  PetscFunctionBeginUser;
  Held &h = held_[step];
  h.fromForwardSweep = fromForwardSweep;
  if (!runDir_.empty()) PetscCall(writeStep(step, {U}));
  else PetscCall(copyOut({U}, h.values));
  ++ckptStats_.stored;
  ckptStats_.mostHeld = std::max(ckptStats_.mostHeld, (PetscInt)held_.size());
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::dropState(PetscInt step) const {
  PetscFunctionBeginUser;
  if (!runDir_.empty()) std::remove(fileName(step).c_str());
  held_.erase(step);
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::restoreState(PetscInt step, Vec X) const {
  PetscFunctionBeginUser;
  if (!runDir_.empty()) PetscCall(readStep(step, {X}));
  else {
    PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(X, &n));
    PetscCall(VecGetArrayWrite(X, &a));
    if (n) std::memcpy(a, held_.at(step).values.data(), (size_t)n * sizeof(PetscScalar));
    PetscCall(VecRestoreArrayWrite(X, &a));
  }
  PetscFunctionReturn(0);
}

// The forward sweep does not know how many steps there will be: it keeps the states of the
// multiples of a stride, and doubles the stride (dropping the states of the odd multiples) before
// a state would be kept beyond ⌈K/2⌉ (so about ⌈K/4⌉ to ⌈K/2⌉ evenly spaced states, step 0
// always among them). The other half of K is left to the binomial schedule of the reverse sweeps,
// which needs it: with no free state, reversing l steps costs l(l + 1)/2 re-takes.
PetscErrorCode TrajectoryStore::thinForwardStates(PetscInt step) {
  const PetscInt cap = std::max<PetscInt>(1, (cfg_.checkpoints + 1) / 2);
  PetscFunctionBeginUser;
  while ((PetscInt)held_.size() >= cap && step % stride_ == 0) {
    stride_ *= 2;
    std::vector<PetscInt> drop;
    for (const auto &kv : held_)
      if (kv.first % stride_ != 0) drop.push_back(kv.first);
    for (PetscInt s : drop) PetscCall(dropState(s));
  }
  PetscFunctionReturn(0);
}

// Record `step` from what the TS holds now (its solution and stages) into currentValues_.
PetscErrorCode TrajectoryStore::captureRecord(PetscInt step) const {
  Vec X;
  std::vector<Vec> vecs;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(replayTs_, &X));
  PetscCall(recordVectors(replayTs_, step, X, vecs));
  PetscCall(copyOut(vecs, currentValues_));
  current_ = step;
  PetscFunctionReturn(0);
}

// Make currentValues_ the record of `step`: at hand; one step from the record before it (a
// forward sweep); or re-taken from the nearest kept state before it, keeping the states the
// binomial schedule names on the way (a reverse sweep, which no longer needs the kept states at
// or after `step` that the schedule added: they are dropped first).
PetscErrorCode TrajectoryStore::materialize(PetscInt step) const {
  Vec X;
  PetscFunctionBeginUser;
  if (step == current_) PetscFunctionReturn(0);
  PetscCheck(replay_ && replayTs_, comm_, PETSC_ERR_PLIB, "trajectory with checkpoints: no replay to re-take steps with");
  PetscCall(TSGetSolution(replayTs_, &X));
  if (step == 0) {
    PetscCall(restoreState(0, X));
    PetscCall(captureRecord(0));
    PetscFunctionReturn(0);
  }
  if (current_ >= 0 && step == current_ + 1) {
    PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(X, &n));
    PetscCall(VecGetArrayWrite(X, &a));
    if (n) std::memcpy(a, currentValues_.data(), (size_t)n * sizeof(PetscScalar));
    PetscCall(VecRestoreArrayWrite(X, &a));
    PetscCall(replay_(step));
    ++ckptStats_.recomputed;
    PetscCall(captureRecord(step));
    PetscFunctionReturn(0);
  }
  std::vector<PetscInt> drop;
  for (const auto &kv : held_)
    if (kv.first >= step && !kv.second.fromForwardSweep) drop.push_back(kv.first);
  for (PetscInt s : drop) PetscCall(dropState(s));
  auto after = held_.lower_bound(step);
  PetscCheck(after != held_.begin(), comm_, PETSC_ERR_PLIB, "trajectory with checkpoints: no state kept before step %" PetscInt_FMT, step);
  const PetscInt from = std::prev(after)->first;
  const std::vector<PetscInt> keep = statesToKeep(step, from, cfg_.checkpoints - (PetscInt)held_.size());
  PetscCall(restoreState(from, X));
  size_t next = 0;
  for (PetscInt j = from + 1; j <= step; ++j) {
    PetscCall(replay_(j));
    ++ckptStats_.recomputed;
    if (next < keep.size() && keep[next] == j) {
      PetscCall(keepState(j, X, false));
      ++next;
    }
  }
  PetscCall(captureRecord(step));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
