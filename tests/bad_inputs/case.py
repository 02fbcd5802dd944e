"""One row of tests/bad_inputs.py (see its docstring)."""
from dataclasses import dataclass, field
from typing import Callable, List, Optional


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    tmp: str
    summary: Optional[dict] = None


@dataclass
class Case:
    name: str                   # unique, says what is wrong with the input
    example: str                # examples/<name> in the build tree (or an absolute path)
    args: List[str]             # "{tmp}" is replaced by a fresh temporary directory (also the cwd)
    error: Optional[str] = None  # regex the failing run's output must match (name the option/file/callback)
    check: Optional[Callable[[Run], Optional[str]]] = None  # success: returns None, or what is wrong
    np: int = 1
    summary: bool = False       # pass -hs_summary {tmp}/summary.json and load it into Run.summary
    timeout: float = 60
    area: str = ""


def option_error(option):
    """The regex of an error naming an option (with or without a prefix before -hs_...)."""
    import re
    return re.escape(option.lstrip("-"))
