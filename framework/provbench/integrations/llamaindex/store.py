"""Deprecated path of :mod:`provbench.integrations.llamaindex.graph_store` (docs/architecture.md, "Old paths and new"): the same module."""

import sys
import warnings

from . import graph_store as new

warnings.warn(
    "provbench.integrations.llamaindex.store is deprecated: use provbench.integrations.llamaindex.graph_store",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = new
