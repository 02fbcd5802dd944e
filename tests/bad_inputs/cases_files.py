"""Files: output files that cannot be written, trajectory directories, trajectory memory.

Every output file is written to a temporary file next to it and renamed into place (see
include/hybridsens/atomic_file.hpp); a failure is an error naming the option and the path.
tests/atomic_output.py checks that a previous good file survives a failed write."""
import os
import stat

from case import Case, option_error


def dev_null_untouched(r):
    """A device is written in place, never replaced by a regular file through rename()."""
    st = os.stat("/dev/null")
    return None if stat.S_ISCHR(st.st_mode) else "/dev/null is no longer a character device"


def no_files_left(r):
    left = os.listdir(os.path.join(r.tmp, "traj"))
    return None if not left else f"the run left {left} in -hs_trajectory_dir"


CASES = [
    # -hs_summary: a full device, a path below a regular file, a device written in place.
    Case("summary_dev_full", "galan_scalar", ["-hs_summary", "/dev/full"],
         error=r"-hs_summary /dev/full: write failed: No space left on device"),
    Case("summary_dev_full_np2", "galan_scalar", ["-hs_summary", "/dev/full"], np=2,
         error=r"-hs_summary /dev/full: write failed: No space left on device"),
    Case("summary_below_a_regular_file", "galan_scalar", ["-hs_summary", "/etc/passwd/x"],
         error=r"-hs_summary /etc/passwd/x: cannot create a temporary file in /etc/passwd: Not a directory"),
    Case("summary_to_dev_null", "galan_scalar", ["-hs_summary", "/dev/null"], check=dev_null_untouched),
    # The examples' CSV writers share the implementation.
    Case("wecc9_states_dev_full", "wecc9", ["-ts_max_time", "0.2", "-wecc9_states", "/dev/full"],
         error=r"-wecc9_states /dev/full: write failed: No space left on device"),
    Case("hysteresis_csv_below_a_regular_file", "hysteresis_oscillator", ["-ts_max_time", "0.5", "-trajectory_csv", "/etc/passwd/x"],
         error=r"-trajectory_csv /etc/passwd/x: cannot create a temporary file in /etc/passwd"),
    # -hs_trajectory_dir: unusable, and nothing left behind (after errors: tests/trajectory_dir.py).
    Case("trajectory_dir_below_a_regular_file", "bouncing_ball", ["-hs_adjoint", "-hs_trajectory_dir", "/etc/passwd/x"],
         error=r"-hs_trajectory_dir /etc/passwd/x: cannot create a directory for the trajectory in it.*Not a directory"),
    Case("trajectory_dir_cleaned_after_success", "bouncing_ball", ["-hs_adjoint", "-hs_trajectory_dir", "{tmp}/traj"], np=2,
         check=no_files_left),
    # -hs_trajectory_max_memory: refused with the figures and the way out; bad values by name.
    Case("trajectory_max_memory_reached", "bouncing_ball", ["-hs_adjoint", "-hs_trajectory_max_memory", "1k"],
         error=r"would exceed 1024 bytes \(-hs_trajectory_max_memory\).*per step.*-hs_trajectory_dir"),
    Case("trajectory_max_memory_plain_simulation", "bouncing_ball", ["-hs_trajectory_max_memory", "1k"], summary=True,
         check=lambda r: None if r.summary and len(r.summary["events"]) == 2 else "expected the plain run to succeed with 2 impacts"),
    Case("trajectory_max_memory_not_a_size", "bouncing_ball", ["-hs_adjoint", "-hs_trajectory_max_memory", "12Q"],
         error=option_error("-hs_trajectory_max_memory") + r" 12Q: expected a positive number of bytes"),
]
