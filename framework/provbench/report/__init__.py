"""The HTML report of a run directory, and the side-by-side comparison of two runs."""

from .data import RunData, load_run
from .render import write_comparison, write_report

__all__ = ["write_report", "write_comparison", "load_run", "RunData"]
