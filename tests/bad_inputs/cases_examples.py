"""Bad values of the examples' own options: each is refused by name (examples/example_options.hpp
and the examples' cross-checks), never run with a silently changed value. Also -tao_type methods
the optimization examples cannot feed (pounders crashed in TaoSetUp)."""
import re

from case import Case


def named(option, why=""):
    """The regex of examples/example_options.hpp's error: 'Option -NAME VALUE: WHY'."""
    return r"Option " + re.escape(option) + r"\b" + (r".*" + why if why else "")


NOT_FINITE = "must be a finite number"
MISSING = "needs a value"
NOT_NUMBER = "not a number"
NOT_BOOL = "not a truth value"
OVERFLOW = "does not fit a PetscInt"
SHORT = ["-ts_max_time", "0.05"]  # errors come before the solve; a short horizon if one is not refused


def out_of(option, value, example, why, extra=()):
    return Case(f"{example}_{option.strip('-')}_{re.sub(r'[^0-9a-z]', '_', value.lower())}", example, [option, value] + list(extra),
                error=named(option, why))


CASES = [
    # ---- bouncing_ball, bouncing_ball_ad: -q0 > 0, -e in [0, 1] -------------------------------
    out_of("-q0", "-1", "bouncing_ball", r"must be > 0"),
    out_of("-q0", "0", "bouncing_ball", r"must be > 0"),
    out_of("-q0", "inf", "bouncing_ball", NOT_FINITE),
    out_of("-e", "1.5", "bouncing_ball", re.escape("must be in [0, 1]")),
    out_of("-e", "-0.1", "bouncing_ball", re.escape("must be in [0, 1]")),
    out_of("-e", "nan", "bouncing_ball", NOT_FINITE),
    out_of("-e", "abc", "bouncing_ball", NOT_NUMBER),
    # Misspelled example options (not -hs_) used to be ignored: the default stayed in place.
    Case("wecc9_misspelled_option", "wecc9", ["-fault_buss", "5"], error=r"-fault_buss \(did you mean -fault_bus\?\)", area="examples"),
    Case("bouncing_ball_misspelled_option", "bouncing_ball", ["-q00", "3"], error=r"-q00 \(did you mean -q0\?\)", area="examples"),
    Case("bouncing_ball_e_missing_value", "bouncing_ball", ["-e"], error=named("-e", MISSING)),
    out_of("-e", "2", "bouncing_ball_ad", re.escape("must be in [0, 1]")),
    out_of("-q0", "-5", "bouncing_ball_ad", r"must be > 0"),
    # ---- galan_scalar, switched_linear: any finite level / slope ------------------------------
    out_of("-p", "nan", "galan_scalar", NOT_FINITE),
    Case("galan_scalar_p_missing_value", "galan_scalar", ["-p"], error=named("-p", MISSING)),
    out_of("-p0", "nan", "switched_linear", NOT_FINITE),
    out_of("-p1", "-inf", "switched_linear", NOT_FINITE),
    # ---- hysteresis_oscillator ----------------------------------------------------------------
    out_of("-ka", "-1", "hysteresis_oscillator", r"must be > 0"),
    out_of("-kb", "nan", "hysteresis_oscillator", NOT_FINITE),
    out_of("-alpha", "0", "hysteresis_oscillator", r"must be > 0"),
    out_of("-beta", "inf", "hysteresis_oscillator", NOT_FINITE),
    Case("hysteresis_oscillator_ka_below_kb", "hysteresis_oscillator", ["-ka", "1", "-kb", "2"], error=r"needs -ka > -kb"),
    out_of("-dae", "maybe", "hysteresis_oscillator", NOT_BOOL),
    Case("hysteresis_oscillator_trajectory_csv_missing_value", "hysteresis_oscillator", ["-trajectory_csv"], error=named("-trajectory_csv", MISSING)),
    Case("hysteresis_oscillator_adjoint_csv_missing_value", "hysteresis_oscillator", ["-adjoint_csv"], error=named("-adjoint_csv", MISSING)),
    # ---- impact_oscillator --------------------------------------------------------------------
    out_of("-c", "-0.1", "impact_oscillator", r"must be >= 0"),
    out_of("-F", "nan", "impact_oscillator", NOT_FINITE),
    out_of("-omega", "-1", "impact_oscillator", r"must be >= 0"),
    out_of("-F0", "inf", "impact_oscillator", NOT_FINITE),
    out_of("-v0", "nan", "impact_oscillator", NOT_FINITE),
    out_of("-stick_velocity", "-1e-2", "impact_oscillator", r"must be >= 0"),
    out_of("-delta", "nan", "impact_oscillator", NOT_FINITE),
    out_of("-e", "1.2", "impact_oscillator", re.escape("must be in [0, 1]")),
    out_of("-k", "-1", "impact_oscillator", r"must be >= 0"),
    out_of("-x0", "nan", "impact_oscillator", NOT_FINITE),
    Case("impact_oscillator_x0_beyond_stop", "impact_oscillator", ["-x0", "1"], error=r"-x0 1\.? >= -delta 0\.5"),
    # ---- sample_and_hold ----------------------------------------------------------------------
    out_of("-a", "nan", "sample_and_hold", NOT_FINITE),
    out_of("-k", "inf", "sample_and_hold", NOT_FINITE),
    out_of("-delta", "0", "sample_and_hold", r"must be > 0"),
    out_of("-x0", "nan", "sample_and_hold", NOT_FINITE),
    out_of("-w", "-1", "sample_and_hold", r"must be >= 0"),
    # ---- lorenz_sysid -------------------------------------------------------------------------
    Case("lorenz_sysid_fit_unknown_name", "lorenz_sysid", ["-fit", "newtn"], error=r"Option -fit newtn: unknown fit 'newtn'"),
    Case("lorenz_sysid_fit_missing_value", "lorenz_sysid", ["-fit"], error=named("-fit", MISSING)),
    Case("lorenz_sysid_fit_summary_missing_value", "lorenz_sysid", ["-fit_summary"], error=named("-fit_summary", MISSING)),
    out_of("-check_truth", "maybe", "lorenz_sysid", NOT_BOOL),
    # pounders needs least-squares residuals (TaoSetResidualRoutine): it crashed in TaoSetUp.
    Case("lorenz_sysid_tao_type_pounders", "lorenz_sysid", ["-fit", "newton", "-newton_tao_type", "pounders"],
         error=r"-newton_tao_type pounders is not supported.*use one of .*bntr"),
    Case("lorenz_sysid_blmvm_fit_newton_method", "lorenz_sysid", ["-fit", "blmvm", "-blmvm_tao_type", "ntr"],
         error=r"-blmvm_tao_type ntr is not supported for this problem: an objective with its gradient, no Hessian"),
    # ---- smib_optimization --------------------------------------------------------------------
    out_of("-tf", "0", "smib_optimization", r"must be > 0"),
    out_of("-Inertia", "0", "smib_optimization", r"must be > 0"),
    out_of("-Inertia", "-5", "smib_optimization", r"must be > 0"),
    out_of("-D", "-1", "smib_optimization", r"must be >= 0"),
    out_of("-Pmax", "0", "smib_optimization", r"must be > 0"),
    out_of("-sigma", "-1", "smib_optimization", r"must be >= 0"),
    out_of("-eta", "1", "smib_optimization", r"must be >= 2"),
    # 2^32 + 2 used to be read as 2 (32-bit PetscInt: PETSc casts strtol's value).
    out_of("-eta", "4294967298", "smib_optimization", OVERFLOW),
    out_of("-eta", "2.5", "smib_optimization", "not an integer"),
    out_of("-delta_max", "nan", "smib_optimization", NOT_FINITE),
    Case("smib_optimization_fault_events_unknown", "smib_optimization", ["-smib_fault_events", "state"], error=r"Option -smib_fault_events state: not one of"),
    Case("smib_optimization_fault_events_missing_value", "smib_optimization", ["-smib_fault_events"], error=named("-smib_fault_events", MISSING)),
    out_of("-Pm", "-0.1", "smib_optimization", r"must be >= 0"),
    Case("smib_optimization_Pm_above_Pmax", "smib_optimization", ["-Pm", "3"], error=r"-Pm 3\.?: need 0 <= P_m < P_max"),
    out_of("-tcl", "nan", "smib_optimization", NOT_FINITE),
    out_of("-smib_optimize", "maybe", "smib_optimization", NOT_BOOL),
    Case("smib_optimization_gradient_missing_value", "smib_optimization", ["-smib_gradient"], error=named("-smib_gradient", MISSING)),
    out_of("-smib_fd_step", "0", "smib_optimization", r"must be > 0"),
    out_of("-smib_fd", "2x", "smib_optimization", NOT_BOOL),
    Case("smib_optimization_tao_type_pounders", "smib_optimization", ["-smib_fd", "0", "-tao_type", "pounders"],
         error=r"-tao_type pounders is not supported.*bounds on the variables.*use one of blmvm"),
    # lmvm ignores the bounds P_m in [0, 1.1]: it stepped to asin(P_m/P_max) of P_m > P_max (NaN).
    Case("smib_optimization_tao_type_unbounded", "smib_optimization", ["-smib_fd", "0", "-tao_type", "lmvm"], error=r"-tao_type lmvm is not supported"),
    Case("smib_optimization_tao_type_newton_without_hessian", "smib_optimization", ["-smib_fd", "0", "-tao_type", "bntr"],
         error=r"-tao_type bntr is not supported.*no Hessian"),
    # ---- wecc9 --------------------------------------------------------------------------------
    Case("wecc9_areas_negative", "wecc9", ["-areas", "-3"] + SHORT, error=named("-areas", r"must be 1\.\.")),
    Case("wecc9_areas_zero", "wecc9", ["-areas", "0"] + SHORT, error=named("-areas", r"must be 1\.\.")),
    # 2^32 + 1 used to be read as 1 area.
    Case("wecc9_areas_overflow", "wecc9", ["-areas", "4294967297"] + SHORT, error=named("-areas", OVERFLOW)),
    Case("wecc9_areas_overflow_2_ranks", "wecc9", ["-areas", "4294967297"] + SHORT, error=named("-areas", OVERFLOW), np=2),
    Case("wecc9_areas_missing_value", "wecc9", ["-areas"], error=named("-areas", MISSING)),
    Case("wecc9_param_areas_zero", "wecc9", ["-param_areas", "0"] + SHORT, error=named("-param_areas", r"must be 1\.\.1")),
    Case("wecc9_param_areas_above_areas", "wecc9", ["-areas", "2", "-param_areas", "3"] + SHORT, error=named("-param_areas", r"must be 1\.\.2")),
    Case("wecc9_fault_bus_beyond_grid", "wecc9", ["-fault_bus", "10"] + SHORT, error=named("-fault_bus", r"must be 1\.\.9")),
    Case("wecc9_fault_bus_zero", "wecc9", ["-fault_bus", "0"] + SHORT, error=named("-fault_bus", r"must be 1\.\.9")),
    Case("wecc9_rfault_zero", "wecc9", ["-rfault", "0"] + SHORT, error=named("-rfault", r"must be > 0")),
    Case("wecc9_tie_r_negative", "wecc9", ["-tie_r", "-0.01"] + SHORT, error=named("-tie_r", r"must be >= 0")),
    Case("wecc9_tie_x_nan", "wecc9", ["-tie_x", "nan"] + SHORT, error=named("-tie_x", NOT_FINITE)),
    Case("wecc9_freq_max_zero", "wecc9", ["-freq_max", "0"] + SHORT, error=named("-freq_max", r"must be > 0")),
    Case("wecc9_freq_min_nan", "wecc9", ["-freq_min", "nan"] + SHORT, error=named("-freq_min", NOT_FINITE)),
    Case("wecc9_sigma_negative", "wecc9", ["-sigma", "-1"] + SHORT, error=named("-sigma", r"must be >= 0")),
    Case("wecc9_eta_below_one", "wecc9", ["-eta", "0.5"] + SHORT, error=named("-eta", r"must be >= 1")),
    Case("wecc9_init_unknown", "wecc9", ["-wecc9_init", "flat"] + SHORT, error=r"Option -wecc9_init flat: not one of"),
    Case("wecc9_init_missing_value", "wecc9", ["-wecc9_init"], error=named("-wecc9_init", MISSING)),
    Case("wecc9_governors_not_bool", "wecc9", ["-governors", "maybe"] + SHORT, error=named("-governors", NOT_BOOL)),
    Case("wecc9_tgov_T1_zero", "wecc9", ["-governors", "-tgov_T1", "0"] + SHORT, error=named("-tgov_T1", r"must be > 0")),
    Case("wecc9_tgov_T2_negative", "wecc9", ["-governors", "-tgov_T2", "-1"] + SHORT, error=named("-tgov_T2", r"must be >= 0")),
    Case("wecc9_tgov_T3_zero", "wecc9", ["-governors", "-tgov_T3", "0"] + SHORT, error=named("-tgov_T3", r"must be > 0")),
    Case("wecc9_tgov_Dt_nan", "wecc9", ["-governors", "-tgov_Dt", "nan"] + SHORT, error=named("-tgov_Dt", NOT_FINITE)),
    Case("wecc9_tgov_Vmin_above_Vmax", "wecc9", ["-governors", "-tgov_Vmin", "2"] + SHORT, error=r"needs -tgov_Vmin < -tgov_Vmax"),
    Case("wecc9_tgov_Vmax_inf", "wecc9", ["-governors", "-tgov_Vmax", "inf"] + SHORT, error=named("-tgov_Vmax", NOT_FINITE)),
    Case("wecc9_cost_generators_beyond_grid", "wecc9", ["-cost_generators", "4"] + SHORT, error=named("-cost_generators", r"must be 0\.\.3")),
    # With -areas -3 this message used to read "-cost_generators must be 0..-9".
    Case("wecc9_cost_generators_negative", "wecc9", ["-cost_generators", "-1"] + SHORT, error=named("-cost_generators", r"must be 0\.\.3")),
    Case("wecc9_terminal_cost_missing_value", "wecc9", ["-wecc9_terminal_cost"], error=named("-wecc9_terminal_cost", MISSING)),
    # The list of valid names used to print a literal %d for the generator and bus counts.
    Case("wecc9_terminal_cost_unknown_name", "wecc9", ["-wecc9_terminal_cost", "foo1"] + SHORT,
         error=r"-wecc9_terminal_cost 'foo1': unknown quantity 'foo' \(names: .*generator 1\.\.3, Vr Vi Vm \+ bus 1\.\.9\)"),
    # atoi wrapped a long index into range.
    Case("wecc9_integral_cost_index_overflow", "wecc9", ["-wecc9_integral_cost", "VR4294967297"] + SHORT,
         error=r"-wecc9_integral_cost 'VR4294967297': no generator 4294967297 \(1\.\.3\)"),
    Case("wecc9_KA_negative", "wecc9", ["-KA2", "-1"] + SHORT, error=named("-KA2", r"must be > 0")),
    Case("wecc9_P_nan", "wecc9", ["-P2", "nan"] + SHORT, error=named("-P2", NOT_FINITE)),
    Case("wecc9_Vm_zero", "wecc9", ["-Vm5", "0"] + SHORT, error=named("-Vm5", r"must be > 0")),
    Case("wecc9_t_off_nan", "wecc9", ["-t_off", "nan"] + SHORT, error=named("-t_off", NOT_FINITE)),
    Case("wecc9_droop_zero", "wecc9", ["-governors", "-R1", "0"] + SHORT, error=named("-R1", r"must be > 0")),
    Case("wecc9_check_start_not_bool", "wecc9", ["-wecc9_check_start", "maybe"] + SHORT, error=named("-wecc9_check_start", NOT_BOOL)),
    Case("wecc9_sensitivities_missing_value", "wecc9", ["-hs_forward", "-wecc9_sensitivities"], error=named("-wecc9_sensitivities", MISSING)),
    Case("wecc9_adjoint_missing_value", "wecc9", ["-hs_adjoint", "-wecc9_adjoint"], error=named("-wecc9_adjoint", MISSING)),
    Case("wecc9_sensitivity_rows_missing_value", "wecc9", ["-wecc9_sensitivity_rows"], error=named("-wecc9_sensitivity_rows", MISSING)),
    Case("wecc9_states_missing_value", "wecc9", ["-wecc9_states"], error=named("-wecc9_states", MISSING)),
    # ---- wecc9_opt ----------------------------------------------------------------------------
    Case("wecc9_opt_faultbus_beyond_grid", "wecc9_opt", ["-faultbus", "9"], error=named("-faultbus", r"must be 0\.\.8")),
    Case("wecc9_opt_faultbus_overflow", "wecc9_opt", ["-faultbus", "4294967298"], error=named("-faultbus", OVERFLOW)),
    Case("wecc9_opt_limiters_not_bool", "wecc9_opt", ["-limiters", "maybe"], error=named("-limiters", NOT_BOOL)),
    Case("wecc9_opt_P1_nan", "wecc9_opt", ["-P1", "nan"], error=named("-P1", NOT_FINITE)),
    Case("wecc9_opt_pg_min_zero", "wecc9_opt", ["-pg_min", "0"], error=named("-pg_min", r"must be > 0")),
    Case("wecc9_opt_pg_max_negative", "wecc9_opt", ["-pg_max", "-1"], error=named("-pg_max", r"must be > 0")),
    Case("wecc9_opt_frequ_zero", "wecc9_opt", ["-frequ", "0"], error=named("-frequ", r"must be > 0")),
    Case("wecc9_opt_freql_nan", "wecc9_opt", ["-freql", "nan"], error=named("-freql", NOT_FINITE)),
    Case("wecc9_opt_pow_one", "wecc9_opt", ["-pow", "1"], error=named("-pow", r"must be >= 2")),
    Case("wecc9_opt_tfaulton_zero", "wecc9_opt", ["-tfaulton", "0"], error=named("-tfaulton", r"must be > 0")),
    Case("wecc9_opt_tfaultoff_nan", "wecc9_opt", ["-tfaultoff", "nan"], error=named("-tfaultoff", NOT_FINITE)),
    Case("wecc9_opt_tmax_negative", "wecc9_opt", ["-tmax", "-1"], error=named("-tmax", r"must be > 0")),
    Case("wecc9_opt_optimize_not_bool", "wecc9_opt", ["-optimize", "maybe"], error=named("-optimize", NOT_BOOL)),
    Case("wecc9_opt_gradient_unknown", "wecc9_opt", ["-gradient", "exact"], error=r"Option -gradient exact: not one of"),
    Case("wecc9_opt_fd_not_bool", "wecc9_opt", ["-fd", "maybe"], error=named("-fd", NOT_BOOL)),
    Case("wecc9_opt_fd_step_zero", "wecc9_opt", ["-fd_step", "0"], error=named("-fd_step", r"must be > 0")),
    Case("wecc9_opt_tao_type_pounders", "wecc9_opt", ["-fd", "0", "-tmax", "1.25", "-tao_type", "pounders"],
         error=r"-tao_type pounders is not supported.*bounds on the variables.*use one of blmvm"),
    # lists of any length: 80 terminal costs are 80 costs (PETSc's string array stopped at 64, silently)
    Case("wecc9_terminal_cost_80_items", "wecc9", ["-ts_max_time", "1.05", "-wecc9_terminal_cost", ",".join(["VR1"] * 80)], summary=True,
         check=lambda r: None if len(r.summary["objective"]) == 83 else f"{len(r.summary['objective'])} costs, expected 3 + 80"),
    Case("wecc9_terminal_cost_empty_item", "wecc9", ["-wecc9_terminal_cost", "VR1,,VR2"], error=r"Option -wecc9_terminal_cost VR1,,VR2: an empty item"),
]
