"""A run's results apart from their rendering: the run directory read back (:mod:`.data`,
``provbench.load_run``), the rules records are read by (:mod:`.rules`), statistics
(:mod:`.stats`, :mod:`.significance`), claims and their verdicts (:mod:`.claims`) and the
verdicts ``provbench validate`` wrote (:mod:`.validity`). The report renders these; gates,
exports, traces, controls and plugins read them."""

from .data import RunData, load_run

__all__ = ["RunData", "load_run"]
