"""The HTML report of a run directory, and the comparison of runs side by side."""

import sys

from ..results import data, significance, stats
from ..results.data import RunData, load_run
from .compare import write_comparison
from .render import write_report

# Deprecated paths: these modules moved to provbench.results (docs/architecture.md); the old
# names still import, as the very same modules.
sys.modules.update({f"{__name__}.{m.__name__.rpartition('.')[2]}": m for m in (data, significance, stats)})

__all__ = ["write_report", "write_comparison", "load_run", "RunData"]
