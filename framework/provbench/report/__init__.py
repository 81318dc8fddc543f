"""The HTML report of a run directory, and the comparison of runs side by side."""

from .data import RunData, load_run
from .compare import write_comparison
from .render import write_report

__all__ = ["write_report", "write_comparison", "load_run", "RunData"]
