"""Deprecated path of :mod:`provbench.run_store` (docs/architecture.md, "Old paths and new"): the same module."""

import sys
import warnings

from . import run_store as new

warnings.warn("provbench.store is deprecated: use provbench.run_store", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = new
