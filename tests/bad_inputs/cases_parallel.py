"""Linear-solver choices on several ranks: the library picks a solver by size and rank count,
but a user's -pc_type / -pc_factor_mat_solver_type for a solve's prefix always reaches that
solve — a wrong one is refused by PETSc with the value named, never silently replaced by the
library's default (docs/parallel.md). From 5000 unknowns the default is GMRES + block Jacobi
(options -krylov_...): bad values of its options are refused alike, and a trial that cannot
converge falls back to the direct solve and says so."""
from case import Case

SHORT = ["-ts_max_time", "0.05"]
KRYLOV = ["-areas", "112", "-ts_max_time", "0.05"]  # 6384 unknowns: the Krylov default at 2 ranks


def fell_back(run):
    if "did not converge" not in run.stdout or "use a direct solve instead" not in run.stdout:
        return "no notice of the fall-back to the direct solve in the output"
    return None

CASES = [
    Case("parallel_unknown_factor_package", "wecc9", SHORT + ["-pc_factor_mat_solver_type", "nosuchpkg"], error=r"nosuchpkg", np=2),
    Case("parallel_unknown_pc_type", "wecc9", SHORT + ["-pc_type", "nosuchpc"], error=r"nosuchpc", np=2),
    Case("parallel_unknown_consistency_pc_type", "wecc9", SHORT + ["-hs_consistency_pc_type", "nosuchpc"], error=r"nosuchpc", np=2),
    # the step tangent runs at events: past the fault at t = 1
    Case("parallel_unknown_tangent_factor_package", "wecc9", ["-ts_max_time", "1.1", "-hs_forward", "-hs_tangent_pc_factor_mat_solver_type", "nosuchpkg"],
         error=r"nosuchpkg", np=2),
    Case("parallel_krylov_rtol_not_a_number", "wecc9", KRYLOV + ["-krylov_ksp_rtol", "tight"], error=r"tight", np=2),
    Case("parallel_krylov_unknown_block_pc", "wecc9", KRYLOV + ["-krylov_sub_pc_type", "nosuchpc"], error=r"nosuchpc", np=2),
    Case("parallel_krylov_unknown_ordering", "wecc9", KRYLOV + ["-krylov_sub_pc_factor_mat_ordering_type", "nosuchorder"], error=r"nosuchorder", np=2),
    # PETSc's own reuse flag would be overridden at every solve: refused, pointing at the library's option
    Case("parallel_krylov_frozen_preconditioner", "wecc9", KRYLOV + ["-krylov_ksp_reuse_preconditioner"],
         error=r"-krylov_ksp_reuse_preconditioner is not supported.*-krylov_ksp_reuse_blocks false", np=2),
    Case("parallel_krylov_reuse_blocks_not_a_bool", "wecc9", KRYLOV + ["-krylov_ksp_reuse_blocks", "sometimes"], error=r"-krylov_ksp_reuse_blocks.*sometimes", np=2),
    # an ILU block cannot reach 1e-12 in one iteration: the trial gives up, the run goes on exactly
    Case("parallel_krylov_one_iteration_falls_back", "wecc9", KRYLOV + ["-krylov_ksp_max_it", "1"], check=fell_back, np=2),
    # sensitivities need solves exact to round-off: an inexact PREONLY or a loose Krylov method is refused
    Case("sensitivities_preonly_block_jacobi", "wecc9", SHORT + ["-hs_adjoint", "-pc_type", "bjacobi"], error=r"-pc_type bjacobi with -ksp_type preonly is not an exact solve", np=2),
    Case("sensitivities_preonly_jacobi_serial", "wecc9", SHORT + ["-hs_forward", "-pc_type", "jacobi"], error=r"-pc_type jacobi with -ksp_type preonly is not an exact solve"),
    Case("sensitivities_gmres_default_rtol", "wecc9", SHORT + ["-hs_adjoint", "-ksp_type", "gmres"], error=r"-ksp_rtol 1e-05: sensitivities need", np=2),
    Case("sensitivities_loose_consistency_krylov", "wecc9", KRYLOV + ["-hs_adjoint", "-hs_consistency_krylov_ksp_rtol", "1e-6"],
         error=r"-hs_consistency_krylov_ksp_rtol 1e-06: sensitivities need", np=2),
    # the direct solve the Krylov default falls back to is checked before the run, not on a failure
    Case("sensitivities_inexact_fallback", "wecc9", KRYLOV + ["-hs_adjoint", "-direct_pc_type", "bjacobi"],
         error=r"-direct_pc_type bjacobi with -direct_ksp_type preonly is not an exact solve", np=2),
    # the inner solve alone: PREONLY block Jacobi ignores the coupling between the ranks' blocks
    Case("sensitivities_inner_preonly", "wecc9", KRYLOV + ["-hs_adjoint", "-krylov_ksp_type", "preonly"],
         error=r"-krylov_pc_type bjacobi with -krylov_ksp_type preonly is not an exact solve", np=2),
    # no residual norm: the tolerance is never tested, the solve stops after -ksp_max_it as "converged"
    Case("sensitivities_inner_no_norm", "wecc9", KRYLOV + ["-hs_adjoint", "-krylov_ksp_norm_type", "none"],
         error=r"-krylov_ksp_norm_type none never tests its tolerance", np=2),
    Case("sensitivities_gmres_no_norm_serial", "wecc9", SHORT + ["-hs_forward", "-ksp_type", "gmres", "-ksp_rtol", "1e-12", "-ksp_norm_type", "none"],
         error=r"-ksp_norm_type none never tests its tolerance"),
    Case("sensitivities_inner_loose_atol", "wecc9", KRYLOV + ["-hs_adjoint", "-hs_consistency_krylov_ksp_atol", "1e-6"],
         error=r"-hs_consistency_krylov_ksp_atol 1e-06: an absolute tolerance can stop the solve", np=2),
    Case("parallel_unknown_fallback_pc_type", "wecc9", KRYLOV + ["-direct_pc_type", "nosuchpc"], error=r"nosuchpc", np=2),
    Case("sensitivities_tangent_ilu", "wecc9", ["-ts_max_time", "1.1", "-hs_forward", "-hs_tangent_pc_type", "ilu"],
         error=r"-hs_tangent_pc_type ilu with -hs_tangent_ksp_type preonly is not an exact solve"),
]
