"""Bad values of the library's -hs_* options: each is refused with an error naming the option, on
any example (the library reads them). At least one bad value of every -hs_ option."""
import re
from case import Case, option_error

E = "galan_scalar"  # one event-rich example with a parameter


def bad(name, option, value, example=E, extra=()):
    args = list(extra) + [option] + ([] if value is None else [value])
    return Case(name, example, args, error=option_error(option))


CASES = [
    # -hs_event_tol: zero, negative, ≥ 1 (silently disabled detection), above the 1e-6 bound, NaN, text, missing
    bad("event_tol_zero", "-hs_event_tol", "0"),
    bad("event_tol_negative", "-hs_event_tol", "-1e-12"),
    bad("event_tol_one", "-hs_event_tol", "1"),
    bad("event_tol_loose", "-hs_event_tol", "1e-5"),
    bad("event_tol_nan", "-hs_event_tol", "nan"),
    bad("event_tol_text", "-hs_event_tol", "abc"),
    bad("event_tol_missing", "-hs_event_tol", None),
    # integers: negative, 32-bit overflow (used to wrap to 1), not an integer, missing
    bad("max_events_negative", "-hs_max_events", "-1"),
    bad("max_events_overflow", "-hs_max_events", "4294967297"),
    bad("max_events_real", "-hs_max_events", "3.5"),
    bad("max_events_missing", "-hs_max_events", None),
    bad("event_max_iterations_zero", "-hs_event_max_iterations", "0"),
    bad("min_event_spacing_negative", "-hs_min_event_spacing", "-1"),
    bad("min_event_spacing_inf", "-hs_min_event_spacing", "inf"),
    bad("grazing_tol_nan", "-hs_grazing_tol", "nan"),
    bad("grazing_tol_two", "-hs_grazing_tol", "2"),
    # booleans
    bad("event_hermite_maybe", "-hs_event_hermite", "maybe"),
    bad("adjoint_maybe", "-hs_adjoint", "maybe"),
    bad("forward_maybe", "-hs_forward", "2"),
    bad("hessian_maybe", "-hs_hessian", "x"),
    bad("monitor_maybe", "-hs_monitor", "loud"),
    bad("reuse_jacobians_maybe", "-hs_adjoint_reuse_jacobians", "sometimes"),
    bad("check_gradient_maybe", "-hs_check_gradient", "x"),
    bad("check_hessian_maybe", "-hs_check_hessian", "x"),
    bad("drop_event_time_maybe", "-hs_test_drop_event_time_term", "x"),
    bad("drop_reset_maybe", "-hs_test_drop_reset_terms", "x"),
    # enumerations: a missing value used to select the first entry silently
    bad("event_derivative_missing", "-hs_event_derivative", None),
    bad("event_derivative_typo", "-hs_event_derivative", "discrte"),
    bad("hessian_method_typo", "-hs_hessian_method", "newton"),
    bad("hessian_method_missing", "-hs_hessian_method", None),
    bad("tao_hessian_typo", "-hs_tao_hessian", "exact"),
    bad("tao_gradient_typo", "-hs_tao_gradient", "forward"),
    # files: a missing name
    bad("summary_missing", "-hs_summary", None),
    bad("trajectory_dir_missing", "-hs_trajectory_dir", None),
    # lists: index outside the state, algebraic, repeated; times outside the horizon, NaN, empty entries
    bad("forward_u0_past_state_adjoint_only", "-hs_forward_u0", "7", extra=["-hs_adjoint"]),
    bad("forward_u0_past_state_forward", "-hs_forward_u0", "1", extra=["-hs_forward"]),
    bad("forward_u0_below_minus_one", "-hs_forward_u0", "-2", extra=["-hs_adjoint"]),
    bad("forward_u0_repeated", "-hs_forward_u0", "0,0", extra=["-hs_adjoint"]),
    bad("forward_u0_text", "-hs_forward_u0", "a", extra=["-hs_adjoint"]),
    bad("forward_u0_missing", "-hs_forward_u0", None, extra=["-hs_adjoint"]),
    bad("output_times_beyond_horizon", "-hs_output_times", "0.5,9"),
    bad("output_times_before_start", "-hs_output_times", "-1"),
    bad("output_times_nan", "-hs_output_times", "0.5,nan"),
    bad("output_times_empty_entry", "-hs_output_times", "0.5,,1"),
    bad("output_times_missing", "-hs_output_times", None),
    # gradient and Hessian checks: a zero step used to give NaN and PASSED
    bad("check_gradient_step_zero", "-hs_check_gradient_step", "0", extra=["-hs_check_gradient"]),
    bad("check_gradient_taylor_step_zero", "-hs_check_gradient_taylor_step", "0", extra=["-hs_check_gradient"]),
    bad("check_gradient_tol_negative", "-hs_check_gradient_tol", "-1", extra=["-hs_check_gradient"]),
    bad("check_hessian_step_zero", "-hs_check_hessian_step", "0"),
    bad("check_hessian_tol_nan", "-hs_check_hessian_tol", "nan"),
    # a misspelled -hs_ option is an error that suggests the right one
    Case("misspelled_adjoint", E, ["-hs_adjiont"], error=r"Unknown hybridsens option.*-hs_adjiont \(did you mean -hs_adjoint\?\)"),
    Case("misspelled_unrelated", E, ["-hs_frobnicate", "1"], error=r"Unknown hybridsens option.*-hs_frobnicate"),
    # the library's own linear solvers take PETSc's KSP/PC options under their prefixes
    Case("tangent_solver_option_accepted", E, ["-hs_tangent_pc_type", "lu", "-hs_forward"], check=lambda r: None),
    Case("tangent_solver_option_misspelled", E, ["-hs_tangent_pctype", "lu"], error=r"Unknown hybridsens option.*-hs_tangent_pctype"),
]
