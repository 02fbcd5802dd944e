"""The grid model's dynamic models (hybridsens::power::grid::CaseGrid): records outside a model's
domain, a generic machine without its option, a start beyond a limiter's band — refused naming
the record's file:line, the generator or the option. Refusals that need an edited DYR are checked
in tests/grid_models.py."""
import os

from case import Case, option_error

TOOL = "../src/power/hybridsens-grid"  # relative to build/examples
GRIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "grids")
CASE39 = os.path.join(GRIDS, "case39.m")


CASES = [
    # MATPOWER case without dynamics: every generator refused by name unless -generic_machine.
    Case("gridmodels_matpower_no_machine", TOOL, [CASE39], error=r"case39.m:\d+: generator at bus 30 id '1' has no machine record .*-generic_machine gencls",
         area="gridmodels"),
    Case("gridmodels_generic_H_without_model", TOOL, [CASE39, "-generic_H", "4"], error=r"-generic_H.*need -generic_machine gencls", area="gridmodels"),
    Case("gridmodels_generic_machine_unknown", TOOL, [CASE39, "-generic_machine", "genrou"], error=option_error("-generic_machine"), area="gridmodels"),
    Case("gridmodels_generic_Xdp_zero", TOOL, [CASE39, "-generic_machine", "gencls", "-generic_Xdp", "0"], error=option_error("-generic_Xdp"),
         area="gridmodels"),
]
