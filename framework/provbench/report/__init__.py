"""The HTML report of a run directory, and the side-by-side comparison of two runs."""

from .render import load_run, write_comparison, write_report

__all__ = ["write_report", "write_comparison", "load_run"]
