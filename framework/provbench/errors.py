"""Errors meant for the person running provbench: the CLI prints them as one clear line."""

from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class UserError(Exception):
    """Bad input (suite, dataset, plugin name, knowledge base path): say what and where."""


class PluginError(UserError):
    """A plugin could not be registered, looked up or created (bad name, type or options)."""


class PluginFailure(Exception):
    """A plugin's own code failed where provbench only asked it something (planning a run, an
    estimate): the message names the plugin, what was asked and what it raised."""


def reraise_a_real_interrupt(exc: BaseException) -> None:
    """Ctrl-C reaches only the main thread: there a KeyboardInterrupt may be the user's, so it stops
    the run; on a worker thread it can only be a plugin's own, which fails its unit like any error."""
    if isinstance(exc, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
        raise exc


def call_plugin(what: str, ask: Callable[..., T], *args: Any) -> T:
    """``ask(*args)``, a question to a plugin's code while a run is planned or estimated. Whatever it
    raises, a ``sys.exit`` or another BaseException included, comes out as a :class:`PluginFailure`
    saying that ``what`` failed, for the caller to record as a failed unit or a note: a plugin
    cannot end the run from there. A KeyboardInterrupt on the main thread still stops it (see above)."""
    try:
        return ask(*args)
    except BaseException as exc:  # the plugin's sys.exit too
        reraise_a_real_interrupt(exc)
        raise PluginFailure(f"{what} failed: {type(exc).__name__}: {exc}"[:2000]) from exc
