"""Index-2 DAEs (docs/index2-daes.md): integrators that are not exact or not stable on them are
refused by name (-ts_type / -ts_theta_theta), and the examples' own range checks."""
from case import Case

SHORT = ["-ts_max_time", "0.05"]
INTEGRATOR = r"-ts_type \w+.*index-2 DAE.*-ts_type beuler"


CASES = [
    Case("pendulum_impact_cn", "pendulum_impact", ["-ts_type", "cn"] + SHORT, error=INTEGRATOR),
    Case("pendulum_impact_theta_half", "pendulum_impact", ["-ts_type", "theta", "-ts_theta_theta", "0.5", "-ts_theta_endpoint"] + SHORT,
         error=r"-ts_type theta with -ts_theta_theta 0\.5.*index-2 DAE"),
    Case("pendulum_impact_rk", "pendulum_impact", ["-ts_type", "rk"] + SHORT, error=INTEGRATOR),
    # BDF: refused before the index is looked at (no stages for the integral cost's quadrature).
    Case("pendulum_impact_bdf", "pendulum_impact", ["-ts_type", "bdf"] + SHORT, error=r"-ts_type bdf is not supported"),
    Case("five_bar_cn_adjoint", "five_bar", ["-ts_type", "cn", "-hs_adjoint"] + SHORT, error=INTEGRATOR),
    Case("pendulum_impact_wall_out_of_reach", "pendulum_impact", ["-wall", "0.9"] + SHORT, error=r"-wall 0\.9 must lie in"),
    Case("pendulum_impact_theta0_horizontal", "pendulum_impact", ["-theta0", "1.6"] + SHORT, error=r"Option -theta0"),
    Case("five_bar_ground_above_joint", "five_bar", ["-ground", "-1.9"] + SHORT, error=r"Option -ground"),
]
