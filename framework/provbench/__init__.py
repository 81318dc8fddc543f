"""provbench: evaluate what GraphRAG answers depend on.

``provbench.load_run(run_dir)`` reads a finished (or running) run for analysis: typed records and
a pandas DataFrame (:mod:`provbench.results.data`; docs/api.md).
"""

from typing import Any

from .hookspecs import hookimpl
from .version import __version__

__all__ = ["hookimpl", "load_run", "__version__"]


def __getattr__(name: str) -> Any:
    """``load_run`` is imported on first use, so ``import provbench`` (and the CLI) stays light."""
    if name == "load_run":
        from .results.data import load_run

        return load_run
    raise AttributeError(f"module 'provbench' has no attribute {name!r}")
