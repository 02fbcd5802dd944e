"""hybridsens-grid: case files and options it cannot use are refused naming the file:line, the
record or the option (the readers' own refusals are tested in test_power_bad_files; an edited
DYR with subtransient GENROU data in tests/grid_wecc9.py)."""
import os

from case import Case, option_error

TOOL = "../src/power/hybridsens-grid"  # relative to build/examples
GRIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "grids")
RAW = os.path.join(GRIDS, "wecc9.raw")
DYR = os.path.join(GRIDS, "wecc9.dyr")
ACTIVS = [os.path.join(GRIDS, "ACTIVSg2000.raw"), os.path.join(GRIDS, "ACTIVSg2000.dyr")]


CASES = [
    # Without a DYR every generator lacks a machine record: refused by name unless a generic model is chosen.
    Case("grid_no_dyr", TOOL, [RAW], error=r"wecc9.raw:\d+: generator at bus 1 id '1' has no machine record .*-generic_machine gencls", area="grid"),
    Case("grid_events_file_not_yet", TOOL, [RAW, DYR, "events.json"], error=r"an events file is not supported yet", area="grid"),
    Case("grid_fault_bus_unknown", TOOL, [RAW, DYR, "-fault_bus", "10"], error=r"-fault_bus 10: no such bus in .*wecc9.raw", area="grid"),
    Case("grid_fault_cleared_before_applied", TOOL, [RAW, DYR, "-t_on", "1.2", "-t_off", "1.1"], error=r"need -t_on < -t_off \(got 1.2, 1.1\)",
         area="grid"),
    # A fault outside the horizon would leave H and its t_on / t_off columns silently zero.
    Case("grid_fault_after_horizon", TOOL, [RAW, DYR, "-t_on", "7", "-t_off", "8"],
         error=r"must be applied and cleared before the final time -ts_max_time 5", area="grid"),
    Case("grid_fault_not_cleared", TOOL, [RAW, DYR, "-t_on", "1", "-t_off", "1.2", "-ts_max_time", "1.1"],
         error=r"must be applied and cleared before the final time -ts_max_time 1.1", area="grid"),
    # A misspelled option of the program would leave its default silently in place.
    Case("grid_misspelled_option", TOOL, [RAW, DYR, "-t_of", "1.2"], error=r"-t_of \(did you mean -t_off\?\)", area="grid"),
    Case("grid_rfault_zero", TOOL, [RAW, DYR, "-rfault", "0"], error=option_error("-rfault"), area="grid"),
    Case("grid_negative_KA", TOOL, [RAW, DYR, "-KA2", "-1"], error=option_error("-KA2"), area="grid"),
    # ACTIVSg2000: the reader refuses its unknown models; skipping them, the builder refuses its
    # generators without a machine record, then the size of its start.
    Case("grid_activsg2000_unknown_model", TOOL, ACTIVS, error=r"ACTIVSg2000.dyr:3: model 'ESST4B' at bus 1048 is not supported", area="grid"),
    Case("grid_activsg2000_no_machine_record", TOOL, ACTIVS + ["-skip_unknown_models"],
         error=r"ACTIVSg2000.raw:\d+: generator at bus 1004 id '1' has no machine record .*-generic_machine gencls", area="grid"),
    Case("grid_activsg2000_dense_start", TOOL, ACTIVS + ["-skip_unknown_models", "-generic_machine", "gencls"],
         error=r"ACTIVSg2000.raw: the power flow of the initial state has 3607 unknowns; .* a sparse start is not implemented yet", area="grid"),
]
