"""Names that moved up a layer, still reachable from where they were (deprecated; the old -> new
table in docs/architecture.md).

A lower layer imports nothing above it (tests/test_layout.py), so an old path whose name now lives
higher up finds it by module name, on first use, with a DeprecationWarning. This module is the one
place that does so.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable


def moved(old: str, new: str) -> Any:
    """What the dotted path ``new`` names, warning that ``old`` is deprecated."""
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)
    module, _, name = new.rpartition(".")
    return getattr(importlib.import_module(module), name)


def module_getattr(old_module: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` handing out ``names`` (name -> its new dotted path)."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return moved(f"{old_module}.{name}", names[name])
        raise AttributeError(f"module {old_module!r} has no attribute {name!r}")

    return __getattr__
