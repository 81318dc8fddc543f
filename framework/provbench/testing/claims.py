"""Deprecated path of :mod:`provbench.testing.runs` (docs/architecture.md, "Old paths and new"): the same module."""

import sys
import warnings

from . import runs as new

warnings.warn("provbench.testing.claims is deprecated: use provbench.testing.runs", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = new
