"""hybridsens-grid: case files and options it cannot use are refused naming the file:line, the
record or the option (the readers' own refusals are tested in test_power_bad_files; an edited
DYR with subtransient GENROU data in tests/grid_wecc9.py)."""
import os
import re

from case import Case, option_error

TOOL = "../src/power/hybridsens-grid"  # relative to build/examples
GRIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "grids")
RAW = os.path.join(GRIDS, "wecc9.raw")
DYR = os.path.join(GRIDS, "wecc9.dyr")
ACTIVS = [os.path.join(GRIDS, "ACTIVSg2000.raw"), os.path.join(GRIDS, "ACTIVSg2000.dyr")]
FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grid_files")


def events(name):
    return os.path.join(FILES, name)


def full_help(run):
    """-help without a case lists the parameters, the disturbance options and the library's options."""
    out = run.stdout + run.stderr
    missing = [w for w in ("-P<bus>", "-t_off", "-no_fault", "-fault_bus", "-hs_summary", "-hs_adjoint", "-ts_type", "-grid_csv") if w not in out]
    return ("-help without a case does not list " + ", ".join(missing)) if missing else None


def generator_trip_runs(run):
    """The trip of generator 2 runs and is reported."""
    return None if "trip of the generator at bus 2 at t = 1.5" in run.stdout and "generator_trip_2_1" in run.stdout else "the generator trip was not applied"


CASES = [
    # Without a DYR every generator lacks a machine record: refused by name unless a generic model is chosen.
    Case("grid_no_dyr", TOOL, [RAW], error=r"wecc9.raw:\d+: generator at bus 1 id '1' has no machine record .*-generic_machine gencls", area="grid"),
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
    # user costs from named quantities
    Case("grid_cost_unknown_quantity", TOOL, [RAW, DYR, "-grid_terminal_cost", "theta2"],
         error=r"-grid_terminal_cost 'theta2': unknown quantity 'theta' \(names: delta omega dw Efd VR", area="grid"),
    Case("grid_cost_unknown_generator", TOOL, [RAW, DYR, "-grid_terminal_cost", "delta1-delta7"],
         error=r"-grid_terminal_cost 'delta1-delta7': no generator labelled 7", area="grid"),
    Case("grid_cost_unknown_bus", TOOL, [RAW, DYR, "-grid_integral_cost", "Vm10-1"], error=r"-grid_integral_cost 'Vm10-1': no bus numbered 10 in the case",
         area="grid"),
    Case("grid_cost_no_index", TOOL, [RAW, DYR, "-grid_terminal_cost", "delta"], error=r"-grid_terminal_cost 'delta': expected a quantity at position 1",
         area="grid"),
    Case("grid_cost_dangling_product", TOOL, [RAW, DYR, "-grid_terminal_cost", "0.5*"],
         error=r"-grid_terminal_cost '0.5\*': expected a quantity after '\*' at position 5", area="grid"),
    Case("grid_cost_constant_only", TOOL, [RAW, DYR, "-grid_terminal_cost", "1"], error=r"-grid_terminal_cost '1' names no quantity", area="grid"),
    Case("grid_cost_missing_operator", TOOL, [RAW, DYR, "-grid_terminal_cost", "delta1delta2"],
         error=r"-grid_terminal_cost 'delta1delta2': expected \+ or - at position 7", area="grid"),
    Case("grid_cost_bad_number", TOOL, [RAW, DYR, "-grid_terminal_cost", "delta1-1e999*delta2"],
         error=r"-grid_terminal_cost 'delta1-1e999\*delta2': bad number at position 8", area="grid"),
    Case("grid_rfault_zero", TOOL, [RAW, DYR, "-rfault", "0"], error=option_error("-rfault"), area="grid"),
    Case("grid_negative_KA", TOOL, [RAW, DYR, "-KA2", "-1"], error=option_error("-KA2"), area="grid"),
    # Power-flow outputs set as parameters had no effect (a silent wrong answer): refused by name, saying why.
    Case("grid_set_Q", TOOL, [RAW, DYR, "-Q2", "0.5"], error=r"-Q2 cannot be set: the reactive power of generator 2 is an output of the power flow",
         area="grid"),
    Case("grid_set_slack_P", TOOL, [RAW, DYR, "-P1", "1.0"], error=r"-P1 cannot be set: the active power of generator 1 at the slack bus is an output of the power flow",
         area="grid"),
    Case("grid_set_PQ_Vm", TOOL, [RAW, DYR, "-Vm5", "1.0"], error=r"-Vm5 cannot be set: \|V\| of PQ bus 5 is an output of the power flow", area="grid"),
    Case("grid_set_nonslack_th", TOOL, [RAW, DYR, "-th2", "0.1"], error=r"-th2 cannot be set: the angle of bus 2 \(not the slack\) is an output of the power flow",
         area="grid"),
    Case("grid_t_on_without_fault", TOOL, [RAW, DYR, "-no_fault", "-t_on", "1.5"], error=r"-t_on cannot be set: the run has no bus fault", area="grid"),
    Case("grid_fault_bus_with_events_file", TOOL, [RAW, DYR, events("no_such_bus.json"), "-fault_bus", "7"],
         error=r"-fault_bus / -rfault set the command line's fault, which .*no_such_bus.json replaces", area="grid"),
    # A file after the options was silently ignored (the default fault ran instead of the events file).
    Case("grid_file_after_options", TOOL, [RAW, DYR, "-grid_progress", "0", events("generator_trip.json")],
         error=r"'[^']*generator_trip.json' after the options is no option's value: give the files first", area="grid"),
    # Unclear errors made clear.
    Case("grid_case_is_directory", TOOL, [GRIDS, DYR], error=r"grids/?: is a directory, not a case file", area="grid"),
    # (a .m file is read as MATPOWER; another name is read as RAW)
    Case("grid_matpower_as_raw", TOOL, [os.path.join(FILES, "matpower_named.raw"), DYR],
         error=r"matpower_named.raw:1: this is a MATPOWER case file .*not a PSS/E RAW file", area="grid"),
    Case("grid_dyr_as_raw", TOOL, [DYR, RAW], error=r"wecc9.dyr:1: this looks like a PSS/E DYR file .*give the RAW network file first", area="grid"),
    Case("grid_raw_as_dyr", TOOL, [RAW, RAW], error=r"wecc9.raw:1: the second field '100.00' is not a quoted model name", area="grid"),
    Case("grid_dyr_missing_slash", TOOL, [RAW, os.path.join(FILES, "missing_slash.dyr")],
         error=r"missing_slash.dyr:1: the record of model GENROU has no terminating '/' before the record that starts at line 2", area="grid"),
    Case("grid_ts_type_explicit", TOOL, [RAW, DYR, "-ts_type", "rk"], error=r"-ts_type rk is an explicit method; the grid model is a DAE .*cn \(the default\), beuler or theta",
         area="grid"),
    # An unwritable output is refused before the run (no "N steps" line of a finished simulation).
    Case("grid_summary_unwritable", TOOL, [RAW, DYR, "-hs_summary", "/nonexistent_dir/s.json"],
         error=r"\A(?!.*\d+ steps).*-hs_summary /nonexistent_dir/s\.json", area="grid"),
    Case("grid_help_without_case", TOOL, ["-help"], check=full_help, area="grid"),
    # The events file: every malformed entry names the file and the entry.
    Case("grid_events_not_json", TOOL, [RAW, DYR, events("not_json.json")], error=r"not_json.json: not valid JSON at byte \d+", area="grid"),
    Case("grid_events_unknown_type", TOOL, [RAW, DYR, events("unknown_type.json")], error=r"unknown_type.json: entry 2 \(bus_flicker\): unknown type", area="grid"),
    Case("grid_events_missing_t_off", TOOL, [RAW, DYR, events("missing_t_off.json")], error=r"missing_t_off.json: entry 1 \(bus_fault\): missing \"t_off\"",
         area="grid"),
    Case("grid_events_cleared_before_applied", TOOL, [RAW, DYR, events("cleared_before_applied.json")],
         error=r"cleared_before_applied.json: entry 1 \(bus_fault\): the fault must be applied before it is cleared", area="grid"),
    Case("grid_events_unknown_key", TOOL, [RAW, DYR, events("unknown_key.json")], error=r"unknown_key.json: entry 1 \(bus_fault\): unknown key \"tclear\"",
         area="grid"),
    Case("grid_events_no_such_bus", TOOL, [RAW, DYR, events("no_such_bus.json")], error=r"no_such_bus.json: entry 1 \(bus_fault\): bus 42 does not exist in .*wecc9.raw",
         area="grid"),
    Case("grid_events_step_without_generator", TOOL, [RAW, DYR, events("step_without_generator.json")],
         error=r"step_without_generator.json: entry 1 \(setpoint_step\): bus 5 has no in-service generator", area="grid"),
    Case("grid_events_bad_setpoint", TOOL, [RAW, DYR, events("bad_setpoint.json")], error=r"bad_setpoint.json: entry 1 \(setpoint_step\): needs \"setpoint\": \"Vref\"",
         area="grid"),
    Case("grid_events_time_as_text", TOOL, [RAW, DYR, events("time_as_text.json")], error=r"time_as_text.json: entry 1 \(setpoint_step\): \"time\" must be a number",
         area="grid"),
    Case("grid_events_after_horizon", TOOL, [RAW, DYR, events("after_horizon.json")],
         error=r"after_horizon.json: entry 1 \(bus_fault\): the disturbance \(-t_off 7\.?\) must be applied and cleared before the final time", area="grid"),
    Case("grid_events_empty", TOOL, [RAW, DYR, events("empty.json")], error=r"empty.json: no events \(for a run without a disturbance use -no_fault\)", area="grid"),
    Case("grid_events_trip_no_branch", TOOL, [RAW, DYR, events("trip_no_branch.json")],
         error=r"trip_no_branch.json: entry 1 \(line_trip\): no in-service line or transformer between buses 4 and 9", area="grid"),
    # Generator trips: the trip of generator 2 alone runs; unknown, out-of-service, repeated and
    # total trips are refused naming the file and the entry, a step of a tripped unit when it comes.
    Case("grid_events_generator_trip", TOOL, [RAW, DYR, events("generator_trip.json"), "-ts_max_time", "2"], check=generator_trip_runs, area="grid"),
    Case("grid_gentrip_no_generator", TOOL, [RAW, DYR, events("gentrip_no_generator.json")],
         error=r"gentrip_no_generator.json: entry 1 \(generator_trip\): no in-service generator at bus 5 in .*wecc9.raw: only an in-service generator can trip",
         area="grid"),
    Case("grid_gentrip_unknown_id", TOOL, [RAW, DYR, events("gentrip_unknown_id.json")],
         error=r"gentrip_unknown_id.json: entry 1 \(generator_trip\): no in-service generator at bus 2 with id '7' in .*wecc9.raw", area="grid"),
    Case("grid_gentrip_out_of_service", TOOL, [os.path.join(FILES, "wecc9_gen_out.raw"), DYR, events("gentrip_out_of_service.json")],
         error=r"gentrip_out_of_service.json: entry 1 \(generator_trip\): the generator at bus 3 with id '2' is out of service in .*wecc9_gen_out.raw",
         area="grid"),
    Case("grid_gentrip_twice", TOOL, [RAW, DYR, events("gentrip_twice.json")],
         error=r"gentrip_twice.json: entry 2 \(generator_trip\): generator 2 is tripped by an earlier entry already", area="grid"),
    Case("grid_gentrip_all", TOOL, [RAW, DYR, events("gentrip_all.json")],
         error=r"gentrip_all.json: entry 3 \(generator_trip\): this trip would leave no generator in service", area="grid"),
    Case("grid_gentrip_unknown_key", TOOL, [RAW, DYR, events("gentrip_unknown_key.json")],
         error=r"gentrip_unknown_key.json: entry 1 \(generator_trip\): unknown key \"machine\"", area="grid"),
    Case("grid_gentrip_then_step", TOOL, [RAW, DYR, events("gentrip_then_step.json")],
         error=r"gentrip_then_step.json: entry 2 \(setpoint_step\): the Vref step at t = 2\.? finds the generator at bus 3 tripped already", area="grid"),
    # ZIP loads: fractions without a default, consistent, with their model; breaks in range; the start above them.
    Case("grid_zip_without_fractions", TOOL, [RAW, DYR, "-load_model", "zip"], error=r"-load_model zip needs both -load_zip_p Z,I,P and -load_zip_q", area="grid"),
    Case("grid_zip_fractions_sum", TOOL, [RAW, DYR, "-load_model", "zip", "-load_zip_p", "0.5,0.3,0.3", "-load_zip_q", "1,0,0"],
         error=r"-load_zip_p 0.5,0.3,0.3: the fractions .* sum to 1 \(they sum to 1.1", area="grid"),
    Case("grid_zip_two_fractions", TOOL, [RAW, DYR, "-load_model", "zip", "-load_zip_p", "0.5,0.5", "-load_zip_q", "1,0,0"],
         error=r"-load_zip_p needs three fractions Z,I,P \(got 2\)", area="grid"),
    Case("grid_zip_negative_fraction", TOOL, [RAW, DYR, "-load_model", "zip", "-load_zip_p", "1.5,-0.5,0", "-load_zip_q", "1,0,0"],
         error=option_error("-load_zip_p"), area="grid"),
    Case("grid_zip_without_model", TOOL, [RAW, DYR, "-load_zip_p", "0,0,1"], error=r"-load_zip_p, -load_zip_q, .* they need -load_model zip", area="grid"),
    Case("grid_zip_unknown_model", TOOL, [RAW, DYR, "-load_model", "zipe"], error=option_error("-load_model"), area="grid"),
    Case("grid_zip_low_break", TOOL, [RAW, DYR, "-load_model", "zip", "-load_zip_p", "0,0,1", "-load_zip_q", "0,0,1", "-load_pq_break", "0.2"],
         error=r"-load_pq_break 0.2: must be in \[0.3, 1\)", area="grid"),
    Case("grid_zip_start_below_break", TOOL, [RAW, DYR, "-load_model", "zip", "-load_zip_p", "0,0,1", "-load_zip_q", "0,0,1", "-load_pq_break", "0.999"],
         error=r"ZIP load at bus 5: its power-flow voltage \|V\| = 0.995\d* is not above -load_pq_break 0.999", area="grid"),
    Case("grid_zip_in_case_file", TOOL, [os.path.join(FILES, "wecc9_load_ip.raw"), DYR],
         error=r"wecc9_load_ip.raw:16: load with constant-current or constant-admittance parts \(IP 20\.?, .*-load_model zip", area="grid"),
    # ACTIVSg2000: the reader refuses its unknown models; skipping them, the builder refuses its
    # generators without a machine record, then the start of 12 of its 43 IEEEG1 governors (a gate
    # position beyond PMAX at rest: a data inconsistency, -governors 0 runs it).
    Case("grid_activsg2000_unknown_model", TOOL, ACTIVS, error=r"ACTIVSg2000.dyr:3: model 'ESST4B' at bus 1048 is not supported by hybridsens-grid \(supported: GENCLS, GENROU, [^)]*IEEEG1\); -skip_unknown_models skips", area="grid"),
    Case("grid_activsg2000_no_machine_record", TOOL, ACTIVS + ["-skip_unknown_models"],
         error=r"ACTIVSg2000.raw:\d+: generator at bus 1004 id '1' has no machine record .*-generic_machine gencls", area="grid"),
    Case("grid_activsg2000_governor_start", TOOL, ACTIVS + ["-skip_unknown_models", "-generic_machine", "gencls"],
         error=r"generator 2057 \(GENROU\+IEEEG1\): the start needs Gate2057 = 1\.948[0-9]*, outside its limiter's band \[0\.?, 0\.5207\]: .*"
               r"\(.*ACTIVSg2000.dyr:124: IEEEG1 at bus 2057 id '1', its PMIN, PMAX\); also outside: Gate4093, .* and 6 more\. Remedy: .*-governors 0",
         area="grid"),
]
