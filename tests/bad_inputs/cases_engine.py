"""Engine and integrator configurations that used to give silent wrong numbers (or ran forever):
TS types the engine cannot use, theta outside (0, 1], midpoint theta with integral costs, a guard
resting on its surface, steps too small to finish."""
import re

from case import Case, option_error


def psi_close(expected, rel):
    """A check: the printed objective psi is within rel of expected."""
    def check(run):
        m = re.search(r"psi = ([-+0-9.eE]+)", run.stdout)
        if not m:
            return "no objective printed"
        psi = float(m.group(1))
        return None if abs(psi - expected) <= rel * abs(expected) else f"psi = {psi}, expected {expected}"
    return check


def x0_close(expected, rel):
    """A check: switched_linear's printed x0(T) is within rel of expected."""
    def check(run):
        m = re.search(r"x0\(T\) = ([-+0-9.eE]+)", run.stdout)
        if not m:
            return "no x0(T) printed"
        x0 = float(m.group(1))
        return None if abs(x0 - expected) <= rel * abs(expected) else f"x0(T) = {x0}, expected {expected}"
    return check


# switched_linear's x0(T) by RK4 with dt = 1e-5 (converged to 1e-10).
X0T = -0.31612665699604
# bouncing_ball's closed-form objective (q0 = 10, e = 0.8, T = 5).
PSI = 218.568265722416

CASES = [
    # theta outside PETSc's 0 < theta <= 1 (theta = 2 gave gradients 0.4-1.3 % off FD).
    Case("theta_above_one_forward", "bouncing_ball",
         ["-ts_type", "theta", "-ts_theta_theta", "2", "-ts_theta_endpoint", "-hs_forward"], error=option_error("-ts_theta_theta")),
    Case("theta_above_one_adjoint", "bouncing_ball",
         ["-ts_type", "theta", "-ts_theta_theta", "2", "-ts_theta_endpoint", "-hs_adjoint"], error=option_error("-ts_theta_theta")),
    Case("theta_above_one_plain", "bouncing_ball",
         ["-ts_type", "theta", "-ts_theta_theta", "2", "-ts_theta_endpoint"], error=option_error("-ts_theta_theta")),
    Case("theta_zero", "bouncing_ball", ["-ts_type", "theta", "-ts_theta_theta", "0", "-ts_theta_endpoint"],
         error=option_error("-ts_theta_theta")),
    Case("theta_negative", "galan_scalar", ["-ts_type", "theta", "-ts_theta_theta", "-1", "-ts_theta_endpoint"],
         error=option_error("-ts_theta_theta")),
    # theta = 1 in the endpoint form: PETSc's tangent-linear step divides by theta - 1.
    Case("theta_one_endpoint_forward", "bouncing_ball",
         ["-ts_type", "theta", "-ts_theta_theta", "1", "-ts_theta_endpoint", "-hs_forward"], error=r"-ts_type beuler"),
    # Midpoint theta: the integral cost's quadrature assumes endpoint stages (psi first-order only).
    Case("theta_midpoint_integral_cost", "bouncing_ball", ["-ts_type", "theta"], error=option_error("-ts_theta_endpoint")),
    Case("theta_midpoint_forward", "bouncing_ball", ["-ts_type", "theta", "-hs_forward"], error=option_error("-ts_theta_endpoint")),
    Case("theta_endpoint_is_fine", "bouncing_ball", ["-ts_type", "theta", "-ts_theta_endpoint", "-ts_dt", "1e-3"],
         check=psi_close(PSI, 1e-6)),
    # TS types: the library's own message listing the supported ones, in plain runs too.
    Case("ts_type_glle", "switched_linear", ["-ts_type", "glle"], error=r"-ts_type glle is not supported.*beuler, cn or rk"),
    Case("ts_type_mimex", "switched_linear", ["-ts_type", "mimex"], error=r"-ts_type mimex is not supported"),
    # A plain simulation without integral costs may use the other one-step types and BDF: the
    # engine re-takes their steps exactly (ts->steprollback); they converge through the events.
    Case("ts_type_bdf_plain_is_fine", "switched_linear", ["-ts_type", "bdf", "-ts_adapt_type", "none", "-ts_dt", "1e-5"],
         check=x0_close(X0T, 1e-5)),
    Case("ts_type_arkimex_plain_is_fine", "switched_linear", ["-ts_type", "arkimex", "-ts_adapt_type", "none", "-ts_dt", "1e-4"],
         check=x0_close(X0T, 1e-5)),
    Case("ts_type_euler_integral_cost", "bouncing_ball", ["-ts_type", "euler"],
         error=r"-ts_type euler is not supported with integral costs or sensitivities"),
    Case("ts_type_bdf_forward", "switched_linear", ["-ts_type", "bdf", "-hs_forward"],
         error=r"-ts_type bdf is not supported with integral costs or sensitivities"),
    Case("ts_type_arkimex_adjoint", "galan_scalar", ["-ts_type", "arkimex", "-hs_adjoint"],
         error=r"-ts_type arkimex is not supported"),
    Case("ts_type_rosw_integral_cost", "galan_scalar", ["-ts_type", "rosw"], error=r"-ts_type rosw is not supported"),
    # A guard resting on its surface at zero rate: the ball fell through the floor (exit 0).
    Case("ball_restitution_zero", "bouncing_ball", ["-e", "0"], error=r"Grazing.*'impact'.*hs_grazing_tol"),
    Case("ball_restitution_zero_forward", "bouncing_ball", ["-e", "0", "-hs_forward"], error=r"Grazing.*'impact'.*hs_grazing_tol"),
    # A ball that starts on the floor is refused by the example's domain check (-q0 > 0); the
    # engine's own refusal of a guard starting on its surface is tested in test_run_configuration.
    Case("ball_starts_on_floor", "bouncing_ball", ["-q0", "0"], error=r"Option -q0 0: must be > 0"),
    Case("ball_starts_on_floor_adjoint", "bouncing_ball", ["-q0", "0", "-hs_adjoint"], error=r"Option -q0 0: must be > 0"),
    # Steps too small to finish: refused before the first step, with the count.
    Case("dt_1e-300", "bouncing_ball", ["-ts_dt", "1e-300"], error=r"-ts_dt 1e-300 needs .* fixed steps", timeout=30),
    Case("dt_1e-9_to_100", "bouncing_ball", ["-ts_dt", "1e-9", "-ts_max_time", "100"], error=r"-ts_dt 1e-09 needs 1e\+11 fixed steps",
         timeout=30),
    Case("dt_beyond_max_steps", "bouncing_ball", ["-ts_dt", "1e-3", "-ts_max_steps", "100"],
         error=r"-ts_dt 0.001 needs 5000\.? fixed steps .*-ts_max_steps 100"),
    Case("dt_tiny_adaptive_is_fine", "bouncing_ball", ["-ts_dt", "1e-300", "-ts_adapt_type", "basic", "-ts_rk_type", "5dp"],
         check=psi_close(PSI, 1e-6), timeout=30),
    Case("dt_nan", "bouncing_ball", ["-ts_dt", "nan"], error=option_error("-ts_dt")),
    Case("dt_negative", "bouncing_ball", ["-ts_dt", "-0.01"], error=option_error("-ts_dt")),
    Case("dt_zero", "bouncing_ball", ["-ts_dt", "0"], error=option_error("-ts_dt")),
    Case("max_time_before_t0", "bouncing_ball", ["-ts_max_time", "-1"], error=option_error("-ts_max_time")),
    # -ts_max_steps reached before the final time (events add steps): an error, not a result at
    # the wrong time.
    Case("max_steps_reached_by_events", "bouncing_ball", ["-ts_dt", "0.01", "-ts_max_steps", "500"],
         error=r"reached -ts_max_steps 500"),
]
