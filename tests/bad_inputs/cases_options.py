"""Bad values of the library's -hs_* options: each is refused by name."""
from case import Case, option_error

CASES = [
    Case("event_tol_zero", "galan_scalar", ["-hs_event_tol", "0"], error=option_error("-hs_event_tol")),
    Case("max_events_negative", "galan_scalar", ["-hs_max_events", "-1"], error=option_error("-hs_max_events")),
]
