"""Deprecated path of :mod:`provbench.kb.knowledge_base` (docs/architecture.md, "Old paths and new"): the same module."""

import sys
import warnings

from . import knowledge_base as new

warnings.warn("provbench.kb.store is deprecated: use provbench.kb.knowledge_base", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = new
