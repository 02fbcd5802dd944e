"""Linear-solver choices on several ranks: the library picks a solver by size and rank count,
but a user's -pc_type / -pc_factor_mat_solver_type for a solve's prefix always reaches that
solve — a wrong one is refused by PETSc with the value named, never silently replaced by the
library's default (docs/parallel.md)."""
from case import Case

SHORT = ["-ts_max_time", "0.05"]

CASES = [
    Case("parallel_unknown_factor_package", "wecc9", SHORT + ["-pc_factor_mat_solver_type", "nosuchpkg"], error=r"nosuchpkg", np=2),
    Case("parallel_unknown_pc_type", "wecc9", SHORT + ["-pc_type", "nosuchpc"], error=r"nosuchpc", np=2),
    Case("parallel_unknown_consistency_pc_type", "wecc9", SHORT + ["-hs_consistency_pc_type", "nosuchpc"], error=r"nosuchpc", np=2),
    # the step tangent runs at events: past the fault at t = 1
    Case("parallel_unknown_tangent_factor_package", "wecc9", ["-ts_max_time", "1.1", "-hs_forward", "-hs_tangent_pc_factor_mat_solver_type", "nosuchpkg"],
         error=r"nosuchpkg", np=2),
]
