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
//     void initialStateTranspose(const PetscReal *p, const PetscScalar *const *w,  // optional, with
//                                PetscScalar *const *out, int count) const;        // initialState
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
// * initialStateTranspose (optional): out[k][i] += Σ_w w[k][w] ∂u0[w]/∂p[i] for k < count (local
//   indices, out arriving zeroed), used for (∂u0/∂p)ᵀλ in the adjoint instead of the forward
//   derivative over all the kernel's parameters — for a kernel whose u0 comes from an implicit
//   solve (a power flow: one transposed solve instead of one solve per parameter). It must agree
//   with initialState's derivative: the adjoint = forward checks compare the two.
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
// of exactly the needed entries (hybridsens/detail/ad_local_space.hpp); contributions to rows owned
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
#include "hybridsens/detail/ad_local_groups.hpp"
#include "hybridsens/detail/ad_local_space.hpp"
#include "hybridsens/detail/ad_traits.hpp"
#include "hybridsens/model.hpp"
#include "hybridsens/objective.hpp"
#include "hybridsens/second_order.hpp"

#include <petscmat.h>

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

// A kernel size known only per instance (the kernel is differentiated with DFad).
inline constexpr int Dynamic = ad::detail::DynamicSize;

class LocalKernelModel : public HybridModel, public SecondOrderModel {
public:
  explicit LocalKernelModel(MPI_Comm comm = PETSC_COMM_WORLD) : comm_(comm) {}
  ~LocalKernelModel() override;
  LocalKernelModel(const LocalKernelModel &) = delete;
  LocalKernelModel &operator=(const LocalKernelModel &) = delete;

  // ---- building (before setUp) ----------------------------------------------------------------
  // Global state size and this rank's share (PETSC_DECIDE: PETSc's split). Collective.
  PetscErrorCode setSizes(PetscInt N, PetscInt nlocal = PETSC_DECIDE);
  PetscInt globalSize() const { return space_.globalSize(); }
  PetscInt ownershipBegin() const { return space_.begin(); }
  PetscInt ownershipEnd() const { return space_.end(); }
  bool owns(PetscInt g) const { return space_.owns(g); }

  // Global indices of algebraic rows; each rank keeps those it owns.
  void setAlgebraic(const std::vector<PetscInt> &idx);

  // Whether this rank evaluates an instance with this coupling.
  bool evaluatesHere(const Coupling &c) const;

  // Adds one instance of kernel type K (kept on the rank that evaluates it).
  template <class K> void add(const K &kernel, const Coupling &c) {
    std::vector<PetscInt> readPos, writePos;
    if (accept(ad::local::KernelShape::of<K>(), c, readPos, writePos))
      group<K>().add(kernel, c.reads, readPos, c.writes, writePos, c.params, c.guards);
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
  PetscErrorCode setUp();
  bool isSetUp() const { return space_.isSetUp(); }
  // A vector laid out like the state (after setUp).
  Vec templateVec() const { return templ_; }
  const ad::local::IndexSpace &indexSpace() const { return space_; }
  // Number of kernel instances evaluated on this rank.
  PetscInt localKernelCount() const;

  // ---- HybridModel: layout ----------------------------------------------------------------------
  MPI_Comm comm() const final { return comm_; }
  PetscInt localSize() const final { return n_; }
  std::vector<PetscInt> algebraicIndices() const final { return alg_; }

  // AIJ with exactly the declared couplings plus the diagonal, filled with 0, in PETSc's COO
  // layout: rhsJacobian then adds all kernel blocks with one MatSetValuesCOO (MatSetValues per
  // block costs a search per entry — it was 3/4 of a Jacobian evaluation on the 9-bus grid).
  PetscErrorCode createJacobian(Mat *J) const final;

  // ---- initial state ---------------------------------------------------------------------------
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const final;
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const final;

  // (∂u0/∂p)ᵀ w kernel by kernel: O(instances × writes × params), where the dense ∂u0/∂p is
  // n × np (155 MB for the 1008-bus grid with all 3026 parameters); a kernel with
  // initialStateTranspose computes its own product (the grid's power-flow start: one transposed
  // solve per w instead of one solve per parameter).
  PetscErrorCode initialStateJacobianPTranspose(const ModeContext &c, const std::vector<Vec> &w,
                                                std::vector<std::vector<PetscScalar>> &outP) const final;

  // ---- dynamics --------------------------------------------------------------------------------
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const final;

  // ∂f/∂u added into J (the caller zeroes and assembles; ADD_VALUES, global indices): into a
  // matrix made by createJacobian, with its pattern unchanged since, by one MatSetValuesCOO
  // (collective); into any other (a duplicate) block by block.
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const ModeContext &c, Mat J) const final;

  // ∂f/∂p as AIJ with exactly the declared (writes × params) couplings: the engine's sweeps then
  // cost O(nonzeros) per use instead of O(n·np). Columns ≥ np (initial-state sensitivities)
  // stay empty.
  PetscErrorCode createParameterJacobian(PetscInt ncols, Mat *Jp) const final;

  // ∂f/∂p into Jp (the caller zeroes and assembles): a sparse Jp (createParameterJacobian) by
  // MatSetValues ADD; a dense one column by column through the reverse scatter.
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const ModeContext &c, Mat Jp) const final;

  // AD gives ∂f/∂t exactly, so kernels may depend on t freely.
  bool explicitTime() const final { return true; }
  // ∂f/∂t on every row (∂g/∂t on the algebraic ones).
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const ModeContext &c, Vec ft) const final;

  // ---- guards ----------------------------------------------------------------------------------
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *values) const final;

  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const final;

  // γ_t + γ_u·u̇ of the active guards from one directional derivative of each guard kernel, on the
  // gathered (owned and ghost) entries of u and u̇: O(guard kernels) per call, where the default
  // (a gradient Vec per guard) would cost O(guards × n).
  PetscErrorCode guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec, PetscScalar *rates) const final;

  // ---- time events -----------------------------------------------------------------------------
  PetscInt numTimeEvents() const final { return (PetscInt)timeEvents_.size(); }
  TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &p) const final;
  PetscErrorCode timeEventHessianProduct(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscScalar *outP) const final;

  // ---- resets (u⁺ = u⁻ + Σ kernel changes) ---------------------------------------------------------
  // With no reset kernel (on any rank) this is HybridModel's default — the library then knows
  // the model has no reset — unless hasReset(id) declares one, which is refused rather than
  // taken as the identity.
  PetscErrorCode reset(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec uplus) const final;
  PetscErrorCode resetJacobianAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec v, Vec out) const final;
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                              Vec out) const final;
  PetscErrorCode resetTimeDerivative(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec Rt) const final;
  PetscErrorCode resetJacobianP(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Mat Rp) const final;

  // ---- second-derivative products (hybridsens/second_order.hpp) ---------------------------------
  PetscErrorCode rhsHessianProduct(PetscReal t, Vec u, const ModeContext &c, Vec lambda, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const final;
  PetscErrorCode guardHessianProduct(PetscInt j, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                                     const SecondOrderOutput &out) const final;
  PetscErrorCode resetHessianProduct(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                     const SecondOrderDirection &dir, const SecondOrderOutput &out) const final;
  PetscErrorCode initialStateHessianProduct(const ModeContext &c, Vec lambda, const PetscScalar *dp, PetscScalar *outP) const final;

private:
  PetscErrorCode sumKernelOutputs(PetscReal t, Vec u, const ModeContext &c,
                                  void (ad::local::KernelGroupBase::*each)(const ad::local::Point &, PetscScalar *) const, Vec out) const;
  // T_k(p) into *T, ∂T/∂p into dT and, when Hdp is given, T_pp dp into Hdp (np entries each):
  // p seeded (outer Fad) and dp (inner direction; none when null). The outer directions are
  // seeded a chunk of C ≈ √np parameters at a time, the others passive: seeding all np at once
  // would cost O(np²) per call (np Fads of np derivatives; 3000 parameters of a grid: 144 MB),
  // chunks cost O(np·(np/C + C)). Each derivative comes out as with all directions seeded.
  void evaluateTime(PetscInt k, const std::vector<PetscReal> &p, const PetscScalar *dp, PetscReal *T, PetscReal *dT, PetscReal *Hdp) const;

  struct GuardSlot {
    size_t group;
    PetscInt instance;
    int slot;
  };
  struct TimeEventDef {
    std::string name;
    std::function<TimeScalar(const TimeScalar *)> time;
  };

  // Checks one instance's coupling against its kernel type (the first inconsistency is kept
  // for setUp() to report); true when this rank evaluates the instance, with the IndexSpace
  // positions of its reads and writes.
  bool accept(const ad::local::KernelShape &kernel, const Coupling &c, std::vector<PetscInt> &readPos, std::vector<PetscInt> &writePos);
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
  PetscErrorCode requireDense(Mat M, const char *where) const;
  PetscErrorCode checkSetUp(const char *where) const;

  // Shared body of the reset vector callbacks: work(1) = Σ kernel contributions at write/read
  // positions, given u⁻ (work(0)) and an optional input vector (work(2)); then, if out is
  // given, out = in (or u⁻) + reverse-scatter(work(1)).
  template <class Fn> PetscErrorCode resetVector(PetscReal t, Vec uminus, const ModeContext &c, Vec in, Vec out, Fn &&fn) const;

  // Shared body of the second-order products: gathers u (work 0), the weight (work 2) and δu
  // (work 3, zero if none), accumulates H δz at read positions (work 1), p and t parts locally.
  template <class Fn>
  PetscErrorCode secondOrder(const char *where, PetscReal t, Vec u, const ModeContext &c, Vec weight, const SecondOrderDirection &dir,
                             const SecondOrderOutput &out, Fn &&fn) const;

  // The COO entries of ∂f/∂u: this rank's diagonal (where IJacobian adds shift·M), then every
  // kernel block in group order — the order rhsJacobian fills its values in.
  void jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const;

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
    std::vector<PetscInt> readPos;
    if (accept(ad::local::KernelShape::of<K>(), c, readPos)) group<K>().add(kernel, readPos, c.params);
  }

  // Collective.
  PetscErrorCode setUp();

  bool hasTerminal() const final { return terminal_; }
  bool hasIntegrand() const final { return integrand_; }

  PetscErrorCode terminal(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    if (!hasTerminal()) return CostFunction::terminal(t, u, c, value);  // undeclared: the default answers
    return valueOf(ad::local::CostPart::Terminal, 0, t, u, c, value);
  }
  PetscErrorCode terminalGradient(PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const final {
    return gradientOf(ad::local::CostPart::Terminal, 0, t, u, c, gu, gp);
  }
  PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const final {
    if (!hasIntegrand()) return CostFunction::integrand(t, u, c, value);  // undeclared: the default answers
    return valueOf(ad::local::CostPart::Integrand, 0, t, u, c, value);
  }
  PetscErrorCode integrandGradient(PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const final {
    return gradientOf(ad::local::CostPart::Integrand, 0, t, u, c, gu, gp);
  }
  // AD gives ∂r/∂t exactly: integrands may depend on t freely.
  bool explicitTime() const final { return true; }
  // ∂r/∂t, this rank's contribution.
  PetscErrorCode integrandTimeDerivative(PetscReal t, Vec u, const ModeContext &c, PetscScalar *r_t) const final;
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
  // As LocalKernelModel::accept, for a cost kernel (reads and params only).
  bool accept(const ad::local::KernelShape &kernel, const Coupling &c, std::vector<PetscInt> &readPos);
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
  PetscErrorCode check(const char *where) const;
  PetscErrorCode valueOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, PetscScalar *value) const;
  PetscErrorCode gradientOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const;
  PetscErrorCode hessianOf(ad::local::CostPart part, PetscInt i, PetscReal t, Vec u, const ModeContext &c, const SecondOrderDirection &dir,
                           const SecondOrderOutput &out) const;

  const LocalKernelModel &model_;
  ad::local::IndexSpace space_;
  std::vector<std::unique_ptr<ad::local::CostGroupBase>> groups_;
  std::unordered_map<std::type_index, size_t> groupIndex_;
  bool terminal_ = false, integrand_ = false;
  std::string error_;
};

} // namespace hybridsens
