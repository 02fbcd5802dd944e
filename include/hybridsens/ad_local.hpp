// hybridsens/ad_local.hpp — automatic differentiation for LARGE SPARSE models made of many
// small components (optional component hybridsens::ad; Trilinos Sacado).
//
// A power grid is generators, exciters, loads, lines and bus balances; each component touches
// a few state entries. Here each component kind is a KERNEL TYPE: a small struct with its
// constants and member templates over the scalar type, written once. Each instance is added
// with its COUPLING: the global state entries it reads, the residual rows it adds to, the
// parameters and the guards it owns. LocalKernelModel then is a complete HybridModel and
// SecondOrderModel: residual, sparse Jacobian (PETSc AIJ preallocated from the couplings),
// ∂f/∂p, ∂f/∂t (explicitTime() is true: kernels may depend on t), guards with γ_u/γ_t/γ_p and
// their rates γ_t + γ_u u̇ (one directional derivative per guard kernel),
// u0(p) and ∂u0/∂p, resets with R_u v, R_uᵀw, R_p, R_t, time events T(p) with ∂T/∂p, and the
// second-order products of hybridsens/second_order.hpp — each kernel differentiated with a
// fixed-size SFad (DFad for kernels whose sizes vary per instance), in parallel.
//
//   struct Exciter {                                  // one kernel TYPE
//     static constexpr int numReads = 5, numWrites = 3, numParams = 1;   // or hybridsens::Dynamic
//     double KA, TA, VRmax; PetscInt flag;            // instance data (flag: index into d)
//     template <class S>                              // required for dynamics: f[0..numWrites)
//     void residual(S t, const S *u, const S *p, const DiscreteState &d, S *f) const {
//       if (d[flag] == 1) f[2] = 0.0;                 // held at the limit: V̇R = 0
//       else f[2] = (-u[2] + KA * (p[0] - u[3])) / TA; ...
//     }
//     template <class S>                              // optional: guard k of this instance
//     S guard(PetscInt k, S t, const S *u, const S *p, const DiscreteState &d) const;
//     template <class S> void initialState(const S *p, S *u0) const;            // optional
//     template <class S> void reset(const EventId &id, S t, const S *u, const S *p,
//                                   const DiscreteState &d, S *uplus) const;     // optional
//   };
//
//   class Grid : public hybridsens::LocalKernelModel {
//   public:
//     Grid() {
//       setSizes(N);                                   // collective; PETSc's split by default
//       setAlgebraic({...});                           // global indices of algebraic rows
//       for (each exciter e)                           // Coupling {reads, writes, params, guards}
//         add(Exciter{...}, {{...}, {...}, {...}, {2 * e, 2 * e + 1}});
//       addTimeEvent("fault_off", [](const TimeScalar *p) -> TimeScalar { return p[7]; });  // T(p)
//     }
//     // ordinary HybridModel overrides without derivatives: numGuards, guardInfo, guardActive,
//     // transition, hasReset, initialDiscreteState, defaultParameters, parameterNames.
//   };
//   Grid grid; PetscCall(grid.setUp());               // collective, before the Solver is created
//
// ---- Semantics ------------------------------------------------------------------------------
// * Kernel arrays are LOCAL: u[i] is the state entry coupling.reads[i], p[k] the parameter
//   coupling.params[k], f[w] the contribution to row coupling.writes[w]. Rows are ADDED over
//   kernels (a bus row collects its lines, loads and generators). f arrives zeroed.
// * The residual is the right-hand side f of M u̇ = f (model.hpp): on differential rows u̇_i =
//   f_i, on algebraic rows (setAlgebraic) 0 = f_i.
// * Discrete state: the whole vector d is passed; an instance stores which entries it reads
//   (one limiter flag per exciter). Branching on d (or on values) is fine: derivatives are
//   those of the branch taken.
// * Guards: coupling.guards lists the global guard indices an instance evaluates, guard(k, …)
//   computes the k-th of them from the instance's reads and params. Every guard index in
//   [0, numGuards()) must be claimed by exactly one instance (checked by setUp()).
// * initialState: an instance's u0[w] is ADDED to row writes[w] (rows nobody writes start at
//   0; for a DAE only the differential part matters, the engine solves for the algebraic one,
//   so algebraic rows are just the Newton initial guess).
// * Resets: an instance with a reset template sees uplus[w] preset to u⁻ at writes[w] and
//   changes what it must; row i becomes u⁻_i + Σ (uplus − u⁻) over such instances. Every row
//   such an instance writes must also be among its reads (checked). The model's hasReset(id)
//   decides whether an event has a reset at all (and must be overridden when a kernel has a
//   reset template: the library refuses a reset it would otherwise ignore); the kernel decides
//   what it changes for id. A kernel member named reset (or residual, guard, initialState)
//   whose signature does not match is a compile error rather than silently ignored.
// * Costs: LocalKernelCost, the same idea for terminal/integrand/measurement terms.
//
// ---- A power grid (PETSc's ex9bus model: WECC 9-bus, Sauer & Pai) in these terms -------------
//   Generator g (two-axis, stator algebraic): reads (E'q, E'd, δ, ω, Id, Iq, Efd, V_re, V_im of
//     its bus), writes its 6 rows and ADDS −I_G to the 2 current-balance rows of its bus;
//     params: dispatch PG (TM) and whatever is optimized.
//   Exciter g (IEEE type 1): reads (Efd, RF, VR, V_re, V_im), writes its 3 rows; the limiter
//     flag d[g] selects VR's row: the regulator dynamics, or V̇R = 0 while held at the limit
//     (the algebraic set is fixed, it cannot change with d); guards: VR_max − VR while free,
//     the unlimited regulator rate while held (as ex9bus.c's event functions).
//   Load (constant impedance or the voltage-dependent form): reads V of its bus, adds I_D to
//     its rows (V_m0 is instance data).
//   Network: one kernel per Ybus block (i, j): reads V_j, adds Y_ij V_j to bus i's rows
//     (fixed size 2 × 2); a fault shunt kernel active while d[fault] = 1.
//   Fault on/off: addTimeEvent (the clearing time may be a parameter: ∂T/∂p is derived).
//   Initial state from the power flow: initialState templates of the generator/exciter kernels
//     as functions of their parameters (PG, QG, V, θ) — ∂u0/∂p comes with them.
//   setAlgebraic: Id, Iq and the bus voltages. Costs (frequency violation ∫ max(0, ω − ω⁺)^η dt
//     per generator): LocalKernelCost kernels reading ω of their generator.
//
// ---- Parallel -------------------------------------------------------------------------------
// The state is distributed in contiguous blocks (setSizes). An instance is evaluated by the
// rank that owns its first written row (its first read if it writes nothing; rank 0 if it has
// neither). add() may be called for every instance on every rank (the others drop it) or only
// where evaluatesHere(coupling). Reads of entries owned elsewhere come through one VecScatter
// of exactly the needed entries (hybridsens/ad_local_space.hpp); contributions to rows owned
// elsewhere go back by the reverse scatter (ADD) or PETSc's matrix stash. Results equal the
// serial ones up to the summation order of rows with contributions from several ranks.
//
// ---- Errors ---------------------------------------------------------------------------------
// add() records the first inconsistency (index out of range, size different from the static
// numReads/numWrites/numParams, a repeated index in reads or writes, a guard index out of range)
// and setUp() reports it; every callback refuses to run before setUp(). The Jacobian pattern
// is exactly the declared couplings plus the diagonal (MAT_NEW_NONZERO_LOCATION_ERR).
#pragma once

#include "hybridsens/ad.hpp"
#include "hybridsens/ad_local_kernels.hpp"
#include "hybridsens/ad_local_space.hpp"
#include "hybridsens/model.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/second_order.hpp"

#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <unordered_map>
#include <vector>

namespace hybridsens {

// Where one kernel instance reads and writes (global indices).
struct Coupling {
  std::vector<PetscInt> reads;   // state entries: the kernel's u[0..)
  std::vector<PetscInt> writes;  // residual rows it adds to: the kernel's f[0..) (and u0, reset rows)
  std::vector<PetscInt> params;  // parameters: the kernel's p[0..)
  std::vector<PetscInt> guards;  // global guard indices it evaluates: guard(k, …) computes guards[k]
};

namespace ad {
namespace local {
// A set-up error found on some ranks only becomes an error on every rank (the rank that found
// it prints its message), so that no rank waits in a collective call.
inline PetscErrorCode collectiveCheck(MPI_Comm comm, const std::string &error, const char *who) {
  PetscMPIInt bad = error.empty() ? 0 : 1, anyBad = 0;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: %s", who, error.c_str());
  PetscCheck(!anyBad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: invalid declaration (reported by another rank)", who);
  PetscFunctionReturn(0);
}

// Fills the first np columns of a dense matrix M (rows distributed like the state) from a
// column-major m × np work array at IndexSpace positions: column k += reverse-scatter(Jw[:, k]).
inline PetscErrorCode addDenseColumns(const IndexSpace &space, const std::vector<PetscScalar> &Jw, PetscInt np, Mat M) {
  const PetscInt m = space.size();
  Vec w = space.work(1), col;
  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < np; ++k) {
    PetscCall(VecPlaceArray(w, Jw.data() + k * m));
    PetscCall(MatDenseGetColumnVec(M, k, &col));
    PetscCall(space.scatterAdd(w, col));
    PetscCall(MatDenseRestoreColumnVec(M, k, &col));
    PetscCall(VecResetArray(w));
  }
  PetscFunctionReturn(0);
}
} // namespace local
} // namespace ad

class LocalKernelModel : public HybridModel, public SecondOrderModel {
public:
  explicit LocalKernelModel(MPI_Comm comm = PETSC_COMM_WORLD) : comm_(comm) {}
  ~LocalKernelModel() override { VecDestroy(&templ_); }
  LocalKernelModel(const LocalKernelModel &) = delete;
  LocalKernelModel &operator=(const LocalKernelModel &) = delete;

  // ---- building (before setUp) ----------------------------------------------------------------
  // Global state size and this rank's share (PETSC_DECIDE: PETSc's split). Collective.
  PetscErrorCode setSizes(PetscInt N, PetscInt nlocal = PETSC_DECIDE) {
    PetscMPIInt size, rank;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_size(comm_, &size));
    PetscCallMPI(MPI_Comm_rank(comm_, &rank));
    PetscCall(PetscSplitOwnership(comm_, &nlocal, &N));
    std::vector<PetscInt> all(size), ranges(size + 1, 0);
    PetscCallMPI(MPI_Allgather(&nlocal, 1, MPIU_INT, all.data(), 1, MPIU_INT, comm_));
    for (PetscMPIInt r = 0; r < size; ++r) ranges[r + 1] = ranges[r] + all[r];
    PetscCheck(ranges[size] == N, comm_, PETSC_ERR_ARG_SIZ, "LocalKernelModel::setSizes: local sizes sum to %" PetscInt_FMT ", not %" PetscInt_FMT,
               ranges[size], N);
    space_.setRanges(ranges, rank);
    rank_ = rank;
    n_ = nlocal;
    PetscFunctionReturn(0);
  }
  PetscInt globalSize() const { return space_.globalSize(); }
  PetscInt ownershipBegin() const { return space_.begin(); }
  PetscInt ownershipEnd() const { return space_.end(); }
  bool owns(PetscInt g) const { return space_.owns(g); }

  // Global indices of algebraic rows; each rank keeps those it owns.
  void setAlgebraic(const std::vector<PetscInt> &idx) {
    for (PetscInt g : idx)
      if (owns(g)) alg_.push_back(g);
  }

  // Whether this rank evaluates an instance with this coupling.
  bool evaluatesHere(const Coupling &c) const {
    if (!c.writes.empty()) return owns(c.writes[0]);
    if (!c.reads.empty()) return owns(c.reads[0]);
    return rank_ == 0;
  }

  // Adds one instance of kernel type K (kept on the rank that evaluates it).
  template <class K> void add(const K &kernel, const Coupling &c) {
    using Sz = ad::local::Sizes<K>;
    if (!error_.empty()) return;
    if (space_.isSetUp()) return fail("add() after setUp()");
    if (globalSizeUnset()) return fail("add() before setSizes()");
    const std::string what = std::string("kernel ") + typeid(K).name();
    if (Sz::reads >= 0 && (int)c.reads.size() != Sz::reads) return fail(what + ": reads.size() != numReads");
    if (Sz::writes >= 0 && (int)c.writes.size() != Sz::writes) return fail(what + ": writes.size() != numWrites");
    if (Sz::params >= 0 && (int)c.params.size() != Sz::params) return fail(what + ": params.size() != numParams");
    if (!c.guards.empty() && !ad::local::HasGuard<K>::value) return fail(what + ": guards declared but no guard<S>() template");
    for (const auto *list : {&c.reads, &c.writes})
      for (size_t i = 0; i < list->size(); ++i) {
        const PetscInt g = (*list)[i];
        if (g < 0 || g >= globalSize()) return fail(what + ": state index " + std::to_string(g) + " out of range");
        for (size_t j = 0; j < i; ++j)
          if ((*list)[j] == g) return fail(what + ": index " + std::to_string(g) + " repeated in one coupling list");
      }
    for (PetscInt g : c.guards)
      if (g < 0) return fail(what + ": negative guard index");
    if (ad::local::HasReset<K>::value)
      for (PetscInt w : c.writes)
        if (std::find(c.reads.begin(), c.reads.end(), w) == c.reads.end())
          return fail(what + ": a kernel with a reset must read every row it writes (row " + std::to_string(w) + ")");
    for (PetscInt k : c.params)
      if (k < 0) return fail(what + ": negative parameter index");
    if (!evaluatesHere(c)) return;
    std::vector<PetscInt> rp, wp;
    for (PetscInt g : c.reads) rp.push_back(space_.add(g));
    for (PetscInt g : c.writes) wp.push_back(space_.add(g));
    group<K>().add(kernel, c.reads, rp, c.writes, wp, c.params, c.guards);
    maxParam_ = std::max(maxParam_, c.params.empty() ? -1 : *std::max_element(c.params.begin(), c.params.end()));
    for (PetscInt g : c.guards) maxGuard_ = std::max(maxGuard_, g);
  }

  // A time event at T(p), ∂T/∂p (and T_pp δp) derived: T is a callable (const TimeScalar *p)
  // -> TimeScalar, e.g. [](const TimeScalar *p) -> TimeScalar { return p[7]; }. It must return
  // TimeScalar, not an expression (a Sacado expression would refer to temporaries gone after
  // the return). TimeScalar is a nested Fad: first and second derivatives from one evaluation.
  using TimeScalar = Sacado::Fad::DFad<Sacado::Fad::SFad<PetscReal, 1>>;
  template <class F> void addTimeEvent(std::string name, F T) {
    static_assert(std::is_same_v<std::decay_t<decltype(T(std::declval<const TimeScalar *>()))>, TimeScalar>,
                  "addTimeEvent: the callable must return TimeScalar (write -> TimeScalar)");
    timeEvents_.push_back({std::move(name), std::function<TimeScalar(const TimeScalar *)>(T)});
  }

  // Collective: reports add() errors, checks guard ownership, builds the scatter and the pattern.
  PetscErrorCode setUp() {
    PetscFunctionBeginUser;
    PetscCheck(!globalSizeUnset(), comm_, PETSC_ERR_ORDER, "LocalKernelModel: call setSizes() before adding kernels and setUp()");
    PetscCheck(!space_.isSetUp(), comm_, PETSC_ERR_ORDER, "LocalKernelModel::setUp() called twice");
    const PetscInt ng = numGuards();
    if (error_.empty() && maxGuard_ >= ng) fail("guard index " + std::to_string(maxGuard_) + " >= numGuards() = " + std::to_string(ng));
    if (error_.empty() && maxParam_ >= (PetscInt)defaultParameters().size())
      fail("parameter index " + std::to_string(maxParam_) + " >= number of parameters " + std::to_string(defaultParameters().size()));
    PetscCall(ad::local::collectiveCheck(comm_, error_, "LocalKernelModel"));
    // Every guard claimed exactly once over all ranks.
    std::vector<PetscInt> claims(ng, 0), total(ng, 0);
    for (size_t gi = 0; gi < groups_.size(); ++gi)
      for (PetscInt k = 0; k < groups_[gi]->count(); ++k) {
        const auto gs = groups_[gi]->guardsOf(k);
        for (int kk = 0; kk < (int)gs.size(); ++kk) {
          ++claims[gs[kk]];
          guardOwner_[gs[kk]] = {gi, k, kk};
        }
      }
    PetscCallMPI(MPI_Allreduce(claims.data(), total.data(), (int)ng, MPIU_INT, MPI_SUM, comm_));
    for (PetscInt j = 0; j < ng; ++j)
      PetscCheck(total[j] == 1, comm_, PETSC_ERR_ARG_WRONG, "LocalKernelModel: guard %" PetscInt_FMT " is evaluated by %" PetscInt_FMT " kernel instances (must be exactly 1)",
                 j, total[j]);
    PetscCall(VecCreateMPI(comm_, n_, globalSize(), &templ_));
    PetscCall(space_.setUp(templ_));
    PetscFunctionReturn(0);
  }
  bool isSetUp() const { return space_.isSetUp(); }
  // A vector laid out like the state (after setUp).
  Vec templateVec() const { return templ_; }
  const ad::local::IndexSpace &indexSpace() const { return space_; }
  // Number of kernel instances evaluated on this rank.
  PetscInt localKernelCount() const {
    PetscInt c = 0;
    for (auto &g : groups_) c += g->count();
    return c;
  }

  // ---- HybridModel: layout ----------------------------------------------------------------------
  MPI_Comm comm() const final { return comm_; }
  PetscInt localSize() const final { return n_; }
  std::vector<PetscInt> algebraicIndices() const final { return alg_; }

  // AIJ with exactly the declared couplings plus the diagonal, filled with 0, in PETSc's COO
  // layout: rhsJacobian then adds all kernel blocks with one MatSetValuesCOO (MatSetValues per
  // block costs a search per entry — it was 3/4 of a Jacobian evaluation on the 9-bus grid).
  PetscErrorCode createJacobian(Mat *J) const final {
    std::vector<PetscInt> rows, cols;
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("createJacobian"));
    jacobianEntries(rows, cols);
    PetscCall(MatCreate(comm_, J));
    PetscCall(MatSetType(*J, MATAIJ));
    PetscCall(MatSetSizes(*J, n_, n_, globalSize(), globalSize()));
    PetscCall(MatSetPreallocationCOO(*J, (PetscCount)rows.size(), rows.data(), cols.data()));  // sorts rows, cols in place
    PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
    CooMatrix made;
    PetscCall(PetscObjectGetId((PetscObject)*J, &made.id));
    PetscCall(MatGetNonzeroState(*J, &made.nonzeroState));
    cooJacobians_.push_back(made);
    PetscFunctionReturn(0);
  }

  // ---- initial state ---------------------------------------------------------------------------
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const final {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("initialState"));
    Vec w = space_.work(1);
    PetscCall(VecZeroEntries(w));
    {
      ad::local::WorkWrite a(w);
      for (auto &g : groups_) g->initialState(c.p, a.data());
    }
    PetscCall(VecZeroEntries(u0));
    PetscCall(space_.scatterAdd(w, u0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const final {
    const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("initialStateJacobianP"));
    PetscCall(requireDense(du0dp, "initialStateJacobianP"));
    std::vector<PetscScalar> Jw((size_t)m * np, 0.0);
    for (auto &g : groups_) g->initialStateJacobianP(c.p, m, Jw.data());
    PetscCall(ad::local::addDenseColumns(space_, Jw, np, du0dp));
    PetscFunctionReturn(0);
  }

  // (∂u0/∂p)ᵀ w kernel by kernel: O(instances × writes × params), where the dense ∂u0/∂p is
  // n × np (155 MB for the 1008-bus grid with all 3026 parameters).
  PetscErrorCode initialStateJacobianPTranspose(const ModeContext &c, const std::vector<Vec> &w,
                                                std::vector<std::vector<PetscScalar>> &outP) const final {
    const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("initialStateJacobianPTranspose"));
    outP.assign(w.size(), std::vector<PetscScalar>(np, 0.0));
    if (!np || w.empty()) PetscFunctionReturn(0);
    std::vector<std::vector<PetscScalar>> gathered(w.size());
    std::vector<const PetscScalar *> wk(w.size());
    std::vector<PetscScalar *> out(w.size());
    for (size_t k = 0; k < w.size(); ++k) {
      PetscCall(space_.gather(w[k], space_.work(2)));
      ad::local::WorkRead a(space_.work(2));
      gathered[k].assign(a.data(), a.data() + m);
      wk[k] = gathered[k].data();
      out[k] = outP[k].data();
    }
    for (auto &g : groups_)
      if (g->hasInitialState()) g->initialStateJacobianPTranspose(c.p, wk, out);
    PetscFunctionReturn(0);
  }

  // ---- dynamics --------------------------------------------------------------------------------
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const final {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("rhs"));
    PetscCall(space_.gather(u, space_.work(0)));
    PetscCall(VecZeroEntries(space_.work(1)));
    {
      ad::local::WorkRead x(space_.work(0));
      ad::local::WorkWrite fw(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      for (auto &g : groups_) g->residual(z, fw.data());
    }
    PetscCall(VecZeroEntries(f));
    PetscCall(space_.scatterAdd(space_.work(1), f));
    PetscFunctionReturn(0);
  }

  // ∂f/∂u added into J (the caller zeroes and assembles; ADD_VALUES, global indices): into a
  // matrix made by createJacobian, with its pattern unchanged since, by one MatSetValuesCOO
  // (collective); into any other (a duplicate) block by block.
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const final {
    CooMatrix now;
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("rhsJacobian"));
    PetscCall(space_.gather(u, space_.work(0)));
    size_t count = (size_t)n_;  // the diagonal entries of the COO layout stay 0
    for (auto &g : groups_) count += (size_t)g->jacobianValueCount();
    jacobianValues_.assign(count, 0.0);
    {
      ad::local::WorkRead x(space_.work(0));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      PetscScalar *v = jacobianValues_.data() + n_;
      for (auto &g : groups_) {
        g->jacobianValues(z, v);
        v += g->jacobianValueCount();
      }
    }
    PetscCall(PetscObjectGetId((PetscObject)J, &now.id));
    PetscCall(MatGetNonzeroState(J, &now.nonzeroState));  // a new nonzero would misplace the COO values
    if (std::any_of(cooJacobians_.begin(), cooJacobians_.end(),
                    [&](const CooMatrix &m) { return m.id == now.id && m.nonzeroState == now.nonzeroState; })) {
      PetscCall(MatSetValuesCOO(J, jacobianValues_.data(), ADD_VALUES));
      PetscFunctionReturn(0);
    }
    const PetscScalar *v = jacobianValues_.data() + n_;
    for (auto &g : groups_) {
      PetscCall(g->addJacobianValues(v, J));
      v += g->jacobianValueCount();
    }
    PetscFunctionReturn(0);
  }

  // ∂f/∂p as AIJ with exactly the declared (writes × params) couplings: the engine's sweeps then
  // cost O(nonzeros) per use instead of O(n·np). Columns ≥ np (initial-state sensitivities)
  // stay empty.
  PetscErrorCode createParameterJacobian(PetscInt ncols, Mat *Jp) const final {
    Mat P;
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("createParameterJacobian"));
    PetscCall(MatCreate(comm_, &P));
    PetscCall(MatSetType(P, MATPREALLOCATOR));
    PetscCall(MatSetSizes(P, n_, PETSC_DECIDE, globalSize(), ncols));
    PetscCall(MatSetUp(P));
    for (auto &g : groups_) PetscCall(g->parameterPattern(P));
    PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreate(comm_, Jp));
    PetscCall(MatSetType(*Jp, MATAIJ));
    PetscCall(MatSetSizes(*Jp, n_, PETSC_DECIDE, globalSize(), ncols));
    PetscCall(MatPreallocatorPreallocate(P, PETSC_TRUE, *Jp));
    PetscCall(MatDestroy(&P));
    PetscCall(MatSetOption(*Jp, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
    PetscFunctionReturn(0);
  }

  // ∂f/∂p into Jp (the caller zeroes and assembles): a sparse Jp (createParameterJacobian) by
  // MatSetValues ADD; a dense one column by column through the reverse scatter.
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const final {
    const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
    PetscBool dense;
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("rhsJacobianP"));
    if (!np) PetscFunctionReturn(0);
    PetscCall(PetscObjectTypeCompareAny((PetscObject)Jp, &dense, MATSEQDENSE, MATMPIDENSE, ""));
    PetscCall(space_.gather(u, space_.work(0)));
    ad::local::WorkRead x(space_.work(0));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    if (!dense) {
      for (auto &g : groups_) PetscCall(g->jacobianP(z, Jp));
      PetscFunctionReturn(0);
    }
    std::vector<PetscScalar> Jw((size_t)m * np, 0.0);
    for (auto &g : groups_) g->jacobianP(z, m, Jw.data());
    PetscCall(ad::local::addDenseColumns(space_, Jw, np, Jp));
    PetscFunctionReturn(0);
  }

  // AD gives ∂f/∂t exactly, so kernels may depend on t freely.
  bool explicitTime() const final { return true; }
  // ∂f/∂t on every row (∂g/∂t on the algebraic ones).
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const final {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("rhsTimeDerivative"));
    PetscCall(space_.gather(u, space_.work(0)));
    PetscCall(VecZeroEntries(space_.work(1)));
    {
      ad::local::WorkRead x(space_.work(0));
      ad::local::WorkWrite fw(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      for (auto &g : groups_) g->timeDerivative(z, fw.data());
    }
    PetscCall(VecZeroEntries(ft));
    PetscCall(space_.scatterAdd(space_.work(1), ft));
    PetscFunctionReturn(0);
  }

  // ---- guards ----------------------------------------------------------------------------------
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const final {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("guards"));
    PetscCall(space_.gather(u, space_.work(0)));
    ad::local::WorkRead x(space_.work(0));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    for (auto &g : groups_)
      if (g->hasGuards()) g->guards(z, values);
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const final {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("guardGradient"));
    PetscCall(space_.gather(u, space_.work(0)));
    PetscCall(VecZeroEntries(space_.work(1)));
    const auto it = guardOwner_.find(j);
    if (it != guardOwner_.end()) {
      std::vector<PetscScalar> gpl(c.p.size(), 0.0);
      PetscScalar gtl = 0;
      {
        ad::local::WorkRead x(space_.work(0));
        ad::local::WorkWrite gw(space_.work(1));
        const ad::local::Point z{t, x.data(), c.p, c.d};
        groups_[it->second.group]->guardGradient(it->second.instance, it->second.slot, z, gw.data(), &gtl, gpl.data());
      }
      *gt = gtl;
      for (size_t k = 0; k < gpl.size(); ++k) gp[k] = gpl[k];
    }
    PetscCall(VecZeroEntries(gu));
    PetscCall(space_.scatterAdd(space_.work(1), gu));
    PetscFunctionReturn(0);
  }

  // γ_t + γ_u·u̇ of the active guards from one directional derivative of each guard kernel, on the
  // gathered (owned and ghost) entries of u and u̇: O(guard kernels) per call, where the default
  // (a gradient Vec per guard) would cost O(guards × n).
  PetscErrorCode guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec, PetscScalar *rates) const final {
    const PetscInt ng = numGuards();
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("guardRates"));
    if (!ng) PetscFunctionReturn(0);
    std::vector<char> active(ng);
    for (PetscInt j = 0; j < ng; ++j) active[j] = guardActive(j, c.d) ? 1 : 0;
    PetscCall(space_.gather(u, space_.work(0)));
    PetscCall(space_.gather(udot, space_.work(2)));
    ad::local::WorkRead x(space_.work(0)), xd(space_.work(2));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    for (auto &g : groups_)
      if (g->hasGuards()) g->guardRates(z, xd.data(), active, rates);
    PetscFunctionReturn(0);
  }

  // ---- time events -----------------------------------------------------------------------------
  PetscInt numTimeEvents() const final { return (PetscInt)timeEvents_.size(); }
  TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &p) const final {
    TimeEventInfo info;
    info.name = timeEvents_[k].name;
    info.dtime_dp.resize(p.size());
    evaluateTime(k, p, nullptr, &info.time, info.dtime_dp.data(), nullptr);
    if (p.empty()) info.dtime_dp.clear();
    return info;
  }
  PetscErrorCode timeEventHessianProduct(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscScalar *outP) const final {
    PetscReal T;
    std::vector<PetscReal> dT(p.size());
    PetscFunctionBeginUser;
    PetscCheck(k >= 0 && k < numTimeEvents(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "timeEventHessianProduct: no time event %" PetscInt_FMT, k);
    evaluateTime(k, p, dp, &T, dT.data(), outP);
    PetscFunctionReturn(0);
  }

  // ---- resets (u⁺ = u⁻ + Σ kernel changes) ---------------------------------------------------------
  // With no reset kernel (on any rank) this is HybridModel's default — the library then knows
  // the model has no reset — unless hasReset(id) declares one, which is refused rather than
  // taken as the identity.
  PetscErrorCode reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const final {
    PetscBool anyResetKernel = PETSC_FALSE;
    PetscFunctionBeginUser;
    for (auto &g : groups_)
      if (g->hasReset()) anyResetKernel = PETSC_TRUE;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &anyResetKernel, 1, MPIU_BOOL, MPI_LOR, comm_));
    if (!anyResetKernel) {
      PetscCheck(!hasReset(id), comm_, PETSC_ERR_SUP,
                 "hasReset() is true for event '%s' but no kernel type has a reset template "
                 "(template <class S> void reset(const EventId &id, S t, const S *u, const S *p, const DiscreteState &d, S *uplus) const)",
                 eventName(id, c.p).c_str());
      PetscCall(HybridModel::reset(id, t, uminus, c, uplus));
      PetscFunctionReturn(0);
    }
    PetscCall(resetVector(t, uminus, c, nullptr, uplus, [&](auto &g, auto &z, auto, auto *out) { g.resetDelta(id, z, out); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const final {
    PetscFunctionBeginUser;
    PetscCall(resetVector(t, uminus, c, v, out, [&](auto &g, auto &z, auto *in, auto *o) { g.resetAction(id, z, in, o); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                              Vec out) const final {
    PetscFunctionBeginUser;
    PetscCall(resetVector(t, uminus, c, w, out, [&](auto &g, auto &z, auto *in, auto *o) { g.resetTransposeAction(id, z, in, o); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const final {
    PetscFunctionBeginUser;
    PetscCall(resetVector(t, uminus, c, nullptr, nullptr, [&](auto &g, auto &z, auto, auto *o) { g.resetTimeDerivative(id, z, o); }));
    PetscCall(VecZeroEntries(Rt));
    PetscCall(space_.scatterAdd(space_.work(1), Rt));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const final {
    const PetscInt np = (PetscInt)c.p.size(), m = space_.size();
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("resetJacobianP"));
    PetscCall(requireDense(Rp, "resetJacobianP"));
    if (!np) PetscFunctionReturn(0);
    PetscCall(space_.gather(uminus, space_.work(0)));
    std::vector<PetscScalar> Jw((size_t)m * np, 0.0);
    {
      ad::local::WorkRead x(space_.work(0));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      for (auto &g : groups_)
        if (g->hasReset()) g->resetJacobianP(id, z, m, Jw.data());
    }
    PetscCall(ad::local::addDenseColumns(space_, Jw, np, Rp));
    PetscFunctionReturn(0);
  }

  // ---- second-derivative products (hybridsens/second_order.hpp) ---------------------------------
  PetscErrorCode rhsHessianProduct(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const final {
    PetscFunctionBeginUser;
    PetscCall(secondOrder("rhsHessianProduct", t, u, c, lambda, dir, out,
                          [&](auto &g, auto &z, auto &d2, auto &o2) { g.hessian(z, d2, o2); }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardHessianProduct(PetscInt j, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                     const SecondOrderOutput &out) const final {
    PetscFunctionBeginUser;
    PetscCheck(j >= 0 && j < numGuards(), comm_, PETSC_ERR_ARG_OUTOFRANGE, "guardHessianProduct: no guard %" PetscInt_FMT, j);
    const auto it = guardOwner_.find(j);
    PetscCall(secondOrder("guardHessianProduct", t, u, c, nullptr, dir, out, [&](auto &g, auto &z, auto &d2, auto &o2) {
      if (it != guardOwner_.end() && &g == groups_[it->second.group].get()) g.guardHessian(it->second.instance, it->second.slot, z, d2, o2);
    }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetHessianProduct(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                     const SecondOrderDirection &dir, const SecondOrderOutput &out) const final {
    PetscFunctionBeginUser;
    PetscCall(secondOrder("resetHessianProduct", t, uminus, c, w, dir, out, [&](auto &g, auto &z, auto &d2, auto &o2) {
      if (g.hasReset()) g.resetHessian(id, z, d2, o2);
    }));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateHessianProduct(const ModeContext &c, Vec lambda, const PetscScalar *dp, PetscScalar *outP) const final {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("initialStateHessianProduct"));
    PetscCall(space_.gather(lambda, space_.work(2)));
    for (size_t k = 0; k < c.p.size(); ++k) outP[k] = 0;
    ad::local::WorkRead lam(space_.work(2));
    for (auto &g : groups_)
      if (g->hasInitialState()) g->initialStateHessian(c.p, lam.data(), dp, outP);
    PetscFunctionReturn(0);
  }

private:
  // T_k(p) into *T, ∂T/∂p into dT and, when Hdp is given, T_pp dp into Hdp (np entries each):
  // p seeded (outer Fad) and dp (inner direction; none when null). The outer directions are
  // seeded a chunk of C ≈ √np parameters at a time, the others passive: seeding all np at once
  // would cost O(np²) per call (np Fads of np derivatives; 3000 parameters of a grid: 144 MB),
  // chunks cost O(np·(np/C + C)). Each derivative comes out as with all directions seeded.
  void evaluateTime(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscReal *T, PetscReal *dT, PetscReal *Hdp) const {
    using Inner = TimeScalar::value_type;
    const int np = (int)p.size(), C = std::max(1, (int)std::ceil(std::sqrt((double)np)));
    std::vector<TimeScalar> pf(np);
    auto inner = [&](int i) {
      Inner in(1, p[i]);
      in.fastAccessDx(0) = dp ? dp[i] : 0.0;
      return in;
    };
    for (int c0 = 0; c0 == 0 || c0 < np; c0 += C) {
      const int c1 = std::min(np, c0 + C);
      for (int i = 0; i < np; ++i) pf[i] = i >= c0 && i < c1 ? TimeScalar(c1 - c0, i - c0, inner(i)) : TimeScalar(inner(i));
      const TimeScalar Tk = timeEvents_[k].time(pf.data());
      if (c0 == 0) *T = Tk.val().val();
      for (int i = c0; i < c1; ++i) {
        dT[i] = Tk.dx(i - c0).val();
        if (Hdp) Hdp[i] = Tk.dx(i - c0).dx(0);
      }
    }
  }

  struct GuardSlot {
    size_t group;
    PetscInt instance;
    int slot;
  };
  struct TimeEventDef {
    std::string name;
    std::function<TimeScalar(const TimeScalar *)> time;
  };

  template <class K> ad::local::KernelGroup<K> &group() {
    const std::type_index key(typeid(K));
    auto it = groupIndex_.find(key);
    if (it == groupIndex_.end()) {
      groups_.push_back(std::make_unique<ad::local::KernelGroup<K>>());
      it = groupIndex_.emplace(key, groups_.size() - 1).first;
    }
    return static_cast<ad::local::KernelGroup<K> &>(*groups_[it->second]);
  }
  void fail(const std::string &msg) {
    if (error_.empty()) error_ = msg;
  }
  bool globalSizeUnset() const { return n_ < 0; }
  // ∂u0/∂p and R_p arrive as dense matrices (the engine's convention); anything else would need
  // another fill path — refuse it instead of writing into the wrong structure.
  PetscErrorCode requireDense(Mat M, const char *where) const {
    PetscBool dense;
    PetscFunctionBeginUser;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &dense, MATSEQDENSE, MATMPIDENSE, ""));
    PetscCheck(dense, comm_, PETSC_ERR_SUP, "LocalKernelModel::%s: expects a dense matrix", where);
    PetscFunctionReturn(0);
  }
  PetscErrorCode checkSetUp(const char *where) const {
    PetscFunctionBeginUser;
    PetscCheck(space_.isSetUp(), comm_, PETSC_ERR_ORDER, "LocalKernelModel::%s called before setUp()", where);
    PetscFunctionReturn(0);
  }

  // Shared body of the reset vector callbacks: work(1) = Σ kernel contributions at write/read
  // positions, given u⁻ (work(0)) and an optional input vector (work(2)); then, if out is
  // given, out = in (or u⁻) + reverse-scatter(work(1)).
  template <class Fn> PetscErrorCode resetVector(PetscReal t, Vec uminus, const ModeContext &c, Vec in, Vec out, Fn &&fn) const {
    PetscFunctionBeginUser;
    PetscCall(checkSetUp("reset"));
    PetscCall(space_.gather(uminus, space_.work(0)));
    if (in) PetscCall(space_.gather(in, space_.work(2)));
    PetscCall(VecZeroEntries(space_.work(1)));
    {
      ad::local::WorkRead x(space_.work(0)), v(space_.work(2));
      ad::local::WorkWrite o(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      for (auto &g : groups_)
        if (g->hasReset()) fn(*g, z, (const PetscScalar *)v.data(), o.data());
    }
    if (out) {
      PetscCall(VecCopy(in ? in : uminus, out));
      PetscCall(space_.scatterAdd(space_.work(1), out));
    }
    PetscFunctionReturn(0);
  }

  // Shared body of the second-order products: gathers u (work 0), the weight (work 2) and δu
  // (work 3, zero if none), accumulates H δz at read positions (work 1), p and t parts locally.
  template <class Fn>
  PetscErrorCode secondOrder(const char *where, PetscReal t, Vec u, const ModeContext &c, Vec weight, const SecondOrderDirection &dir,
                             const SecondOrderOutput &out, Fn &&fn) const {
    const size_t np = c.p.size();
    std::vector<PetscScalar> op(np, 0.0);
    PetscScalar ot = 0;
    PetscFunctionBeginUser;
    PetscCall(checkSetUp(where));
    PetscCall(space_.gather(u, space_.work(0)));
    if (weight) PetscCall(space_.gather(weight, space_.work(2)));
    else PetscCall(VecZeroEntries(space_.work(2)));
    if (dir.du) PetscCall(space_.gather(dir.du, space_.work(3)));
    else PetscCall(VecZeroEntries(space_.work(3)));
    PetscCall(VecZeroEntries(space_.work(1)));
    {
      ad::local::WorkRead x(space_.work(0)), lam(space_.work(2)), du(space_.work(3));
      ad::local::WorkWrite ow(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      const ad::local::Direction2 d2{lam.data(), du.data(), dir.dp, dir.dt};
      const ad::local::Output2 o2{ow.data(), op.data(), &ot};
      for (auto &g : groups_) fn(*g, z, d2, o2);
    }
    if (out.u) {
      PetscCall(VecZeroEntries(out.u));
      PetscCall(space_.scatterAdd(space_.work(1), out.u));
    }
    if (out.p)
      for (size_t k = 0; k < np; ++k) out.p[k] = op[k];
    if (out.t) *out.t = ot;
    PetscFunctionReturn(0);
  }

  // The COO entries of ∂f/∂u: this rank's diagonal (where IJacobian adds shift·M), then every
  // kernel block in group order — the order rhsJacobian fills its values in.
  void jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const {
    for (PetscInt i = ownershipBegin(); i < ownershipEnd(); ++i) rows.push_back(i), cols.push_back(i);
    for (auto &g : groups_) g->jacobianEntries(rows, cols);
  }

  MPI_Comm comm_;
  PetscMPIInt rank_ = 0;
  PetscInt n_ = -1;
  std::vector<PetscInt> alg_;
  ad::local::IndexSpace space_;
  std::vector<std::unique_ptr<ad::local::KernelGroupBase>> groups_;
  std::unordered_map<std::type_index, size_t> groupIndex_;
  std::unordered_map<PetscInt, GuardSlot> guardOwner_;
  std::vector<TimeEventDef> timeEvents_;
  PetscInt maxParam_ = -1, maxGuard_ = -1;
  std::string error_;
  Vec templ_ = nullptr;
  struct CooMatrix {
    PetscObjectId id = 0;  // never reused by PETSc
    PetscObjectState nonzeroState = 0;
  };
  mutable std::vector<CooMatrix> cooJacobians_;  // the matrices createJacobian made
  mutable std::vector<PetscScalar> jacobianValues_;  // COO values of the last rhsJacobian
};

// ---------------------------------------------------------------------------------------------
// A CostFunction (and SecondOrderCost) whose terms are kernels: each instance contributes
//   template <class S> S terminal(S t, const S *u, const S *p, const DiscreteState &d) const;
//   template <class S> S integrand(S t, const S *u, const S *p, const DiscreteState &d) const;
//   template <class S> S measurement(PetscInt i, S t, const S *u, const S *p, const DiscreteState &d) const;
// (each optional) of its reads and params (Coupling.writes/guards must be empty); the cost is
// the sum. static numReads/numParams as for model kernels. An instance is evaluated by the
// rank owning its first read (rank 0 if it reads nothing). hasTerminal()/hasIntegrand() follow
// from the kernels added (on any rank); override name() and measurementTimes() as usual.
class LocalKernelCost : public CostFunction, public SecondOrderCost {
public:
  // Shares the state layout of model (kernels may be added once model.setSizes() ran; setUp()
  // needs model.setUp() first).
  explicit LocalKernelCost(const LocalKernelModel &model) : model_(model) {}

  template <class K> void add(const K &kernel, const Coupling &c) {
    using Sz = ad::local::Sizes<K>;
    if (!error_.empty()) return;
    const std::string what = std::string("cost kernel ") + typeid(K).name();
    if (space_.isSetUp()) return fail("add() after setUp()");
    if (!model_.indexSpace().hasRanges()) return fail("call the model's setSizes() before building its costs");
    if (!c.writes.empty() || !c.guards.empty()) return fail(what + ": a cost kernel has no writes or guards");
    if (Sz::reads >= 0 && (int)c.reads.size() != Sz::reads) return fail(what + ": reads.size() != numReads");
    if (Sz::params >= 0 && (int)c.params.size() != Sz::params) return fail(what + ": params.size() != numParams");
    for (PetscInt g : c.reads)
      if (g < 0 || g >= model_.globalSize()) return fail(what + ": state index " + std::to_string(g) + " out of range");
    for (PetscInt k : c.params)
      if (k < 0 || k >= (PetscInt)model_.defaultParameters().size()) return fail(what + ": parameter index out of range");
    terminal_ |= ad::local::HasTerminal<K>::value, integrand_ |= ad::local::HasIntegrand<K>::value;
    if (!space_.hasRanges()) space_.setRanges(model_.indexSpace().ranges(), model_.indexSpace().rank());
    const bool here = c.reads.empty() ? model_.indexSpace().rank() == 0 : model_.owns(c.reads[0]);
    if (!here) return;
    std::vector<PetscInt> rp;
    for (PetscInt g : c.reads) rp.push_back(space_.add(g));
    group<K>().add(kernel, rp, c.params);
  }

  // Collective.
  PetscErrorCode setUp() {
    PetscFunctionBeginUser;
    PetscCheck(model_.isSetUp(), model_.comm(), PETSC_ERR_ORDER, "LocalKernelCost::setUp: set the model up first");
    PetscCheck(!space_.isSetUp(), model_.comm(), PETSC_ERR_ORDER, "LocalKernelCost::setUp() called twice");
    PetscCall(ad::local::collectiveCheck(model_.comm(), error_, "LocalKernelCost"));
    PetscBool parts[2] = {terminal_ ? PETSC_TRUE : PETSC_FALSE, integrand_ ? PETSC_TRUE : PETSC_FALSE};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, parts, 2, MPIU_BOOL, MPI_LOR, model_.comm()));
    terminal_ = parts[0], integrand_ = parts[1];
    if (!space_.hasRanges()) space_.setRanges(model_.indexSpace().ranges(), model_.indexSpace().rank());
    PetscCall(space_.setUp(model_.templateVec()));
    PetscFunctionReturn(0);
  }

  bool hasTerminal() const final { return terminal_; }
  bool hasIntegrand() const final { return integrand_; }

  PetscErrorCode terminal(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    return valueOf(ad::local::CostPart::Terminal, 0, t, u, c, value);
  }
  PetscErrorCode terminalGradient(PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const final {
    return gradientOf(ad::local::CostPart::Terminal, 0, t, u, c, gu, gp);
  }
  PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    return valueOf(ad::local::CostPart::Integrand, 0, t, u, c, value);
  }
  PetscErrorCode integrandGradient(PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const final {
    return gradientOf(ad::local::CostPart::Integrand, 0, t, u, c, gu, gp);
  }
  // AD gives ∂r/∂t exactly: integrands may depend on t freely.
  bool explicitTime() const final { return true; }
  // ∂r/∂t, this rank's contribution.
  PetscErrorCode integrandTimeDerivative(PetscReal t, Vec u, const ModeContext &c, PetscScalar *r_t) const final {
    PetscFunctionBeginUser;
    PetscCall(check("integrandTimeDerivative"));
    PetscCall(space_.gather(u, space_.work(0)));
    ad::local::WorkRead x(space_.work(0));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    PetscScalar s = 0;
    for (auto &g : groups_)
      if (g->has(ad::local::CostPart::Integrand)) s += g->timeDerivative(ad::local::CostPart::Integrand, 0, z);
    *r_t = s;
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurement(PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    return valueOf(ad::local::CostPart::Measurement, i, t, u, c, value);
  }
  PetscErrorCode measurementGradient(PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const final {
    return gradientOf(ad::local::CostPart::Measurement, i, t, u, c, gu, gp);
  }

  PetscErrorCode terminalHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                        const SecondOrderOutput &out) const final {
    return hessianOf(ad::local::CostPart::Terminal, 0, t, u, c, dir, out);
  }
  PetscErrorCode integrandHessianProduct(PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                         const SecondOrderOutput &out) const final {
    return hessianOf(ad::local::CostPart::Integrand, 0, t, u, c, dir, out);
  }
  PetscErrorCode measurementHessianProduct(PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const final {
    return hessianOf(ad::local::CostPart::Measurement, i, t, u, c, dir, out);
  }

private:
  template <class K> ad::local::CostGroup<K> &group() {
    const std::type_index key(typeid(K));
    auto it = groupIndex_.find(key);
    if (it == groupIndex_.end()) {
      groups_.push_back(std::make_unique<ad::local::CostGroup<K>>());
      it = groupIndex_.emplace(key, groups_.size() - 1).first;
    }
    return static_cast<ad::local::CostGroup<K> &>(*groups_[it->second]);
  }
  void fail(const std::string &msg) {
    if (error_.empty()) error_ = msg;
  }
  PetscErrorCode check(const char *where) const {
    PetscFunctionBeginUser;
    PetscCheck(space_.isSetUp(), model_.comm(), PETSC_ERR_ORDER, "LocalKernelCost::%s called before setUp()", where);
    PetscFunctionReturn(0);
  }
  PetscErrorCode valueOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const {
    PetscFunctionBeginUser;
    PetscCall(check("value"));
    PetscCall(space_.gather(u, space_.work(0)));
    ad::local::WorkRead x(space_.work(0));
    const ad::local::Point z{t, x.data(), c.p, c.d};
    PetscScalar s = 0;
    for (auto &g : groups_)
      if (g->has(part)) s += g->value(part, i, z);
    *value = s;
    PetscFunctionReturn(0);
  }
  PetscErrorCode gradientOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const {
    PetscFunctionBeginUser;
    PetscCall(check("gradient"));
    PetscCall(space_.gather(u, space_.work(0)));
    PetscCall(VecZeroEntries(space_.work(1)));
    std::vector<PetscScalar> gpl(c.p.size(), 0.0);
    {
      ad::local::WorkRead x(space_.work(0));
      ad::local::WorkWrite gw(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      for (auto &g : groups_)
        if (g->has(part)) g->gradient(part, i, z, gw.data(), gpl.data());
    }
    for (size_t k = 0; k < gpl.size(); ++k) gp[k] += gpl[k];
    PetscCall(VecZeroEntries(gu));
    PetscCall(space_.scatterAdd(space_.work(1), gu));
    PetscFunctionReturn(0);
  }
  PetscErrorCode hessianOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                           const SecondOrderOutput &out) const {
    std::vector<PetscScalar> op(c.p.size(), 0.0);
    PetscScalar ot = 0;
    PetscFunctionBeginUser;
    PetscCall(check("hessian"));
    PetscCall(space_.gather(u, space_.work(0)));
    if (dir.du) PetscCall(space_.gather(dir.du, space_.work(3)));
    else PetscCall(VecZeroEntries(space_.work(3)));
    PetscCall(VecZeroEntries(space_.work(1)));
    {
      ad::local::WorkRead x(space_.work(0)), du(space_.work(3));
      ad::local::WorkWrite ow(space_.work(1));
      const ad::local::Point z{t, x.data(), c.p, c.d};
      const ad::local::Direction2 d2{nullptr, du.data(), dir.dp, dir.dt};
      const ad::local::Output2 o2{ow.data(), op.data(), &ot};
      for (auto &g : groups_)
        if (g->has(part)) g->hessian(part, i, z, d2, o2);
    }
    if (out.u) {
      PetscCall(VecZeroEntries(out.u));
      PetscCall(space_.scatterAdd(space_.work(1), out.u));
    }
    if (out.p)
      for (size_t k = 0; k < op.size(); ++k) out.p[k] = op[k];
    if (out.t) *out.t = ot;
    PetscFunctionReturn(0);
  }

  const LocalKernelModel &model_;
  ad::local::IndexSpace space_;
  std::vector<std::unique_ptr<ad::local::CostGroupBase>> groups_;
  std::unordered_map<std::type_index, size_t> groupIndex_;
  bool terminal_ = false, integrand_ = false;
  std::string error_;
};

} // namespace hybridsens
