"""Bad values of -hs_checkpoints and -hs_checkpoints_dir, and combinations a checkpointed
trajectory cannot reproduce bit for bit: each refused before the run, naming the option."""
from case import Case, option_error

E = "bouncing_ball"
ADJ = ["-hs_adjoint"]


def bad(name, args, option, example=E):
    return Case(name, example, ADJ + args, error=option_error(option), area="checkpoints")


CASES = [
    bad("checkpoints_zero", ["-hs_checkpoints", "0"], "-hs_checkpoints"),
    bad("checkpoints_negative", ["-hs_checkpoints", "-3"], "-hs_checkpoints"),
    bad("checkpoints_text", ["-hs_checkpoints", "abc"], "-hs_checkpoints"),
    bad("checkpoints_real", ["-hs_checkpoints", "2.5"], "-hs_checkpoints"),
    bad("checkpoints_missing", ["-hs_checkpoints"], "-hs_checkpoints"),
    bad("checkpoints_overflow", ["-hs_checkpoints", "4294967297"], "-hs_checkpoints"),
    bad("checkpoints_dir_nonexistent", ["-hs_checkpoints", "3", "-hs_checkpoints_dir", "{tmp}/no/such/dir"], "-hs_checkpoints_dir"),
    # (root may write anywhere but in /proc: an unwritable directory for every user)
    bad("checkpoints_dir_unwritable", ["-hs_checkpoints", "3", "-hs_checkpoints_dir", "/proc"], "-hs_checkpoints_dir"),
    bad("checkpoints_dir_missing", ["-hs_checkpoints", "3", "-hs_checkpoints_dir"], "-hs_checkpoints_dir"),
    bad("checkpoints_dir_without_checkpoints", ["-hs_checkpoints_dir", "{tmp}"], "-hs_checkpoints_dir"),
    bad("checkpoints_with_trajectory_dir", ["-hs_checkpoints", "3", "-hs_trajectory_dir", "{tmp}"], "-hs_checkpoints"),
    bad("checkpoints_fsal_rk", ["-hs_checkpoints", "3", "-ts_type", "rk", "-ts_rk_type", "3bs"], "-hs_checkpoints"),
    bad("checkpoints_theta_extrapolate", ["-hs_checkpoints", "3", "-ts_type", "cn", "-ts_theta_initial_guess_extrapolate"], "-hs_checkpoints"),
    bad("checkpoints_rebuilt_steps_maybe", ["-hs_test_rebuilt_steps", "x"], "-hs_test_rebuilt_steps"),
    # 2 ranks: every rank refuses together (no hang)
    Case("checkpoints_dir_nonexistent_np2", E, ADJ + ["-hs_checkpoints", "3", "-hs_checkpoints_dir", "{tmp}/no/such/dir"],
         error=option_error("-hs_checkpoints_dir"), np=2, area="checkpoints"),
]
