"""Errors meant for the person running provbench: the CLI prints them as one clear line."""

from __future__ import annotations

import threading
import traceback
from pathlib import Path
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class UserError(Exception):
    """Bad input (suite, dataset, plugin name, knowledge base path): say what and where."""


class PluginError(UserError):
    """A plugin could not be registered, looked up or created (bad name, type or options)."""


class PluginFailure(Exception):
    """A plugin's own code failed where provbench only asked it something (planning a run, an
    estimate): the message names the plugin, what was asked and what it raised."""


def raised_where(exc: BaseException, path: "Path | str | None") -> str:
    """An error a plugin's code raised, as one line: the file and line of the plugin's own frame
    (the last in ``path``, else the last of all) and the error; no traceback."""
    if isinstance(exc, SyntaxError):
        return f"{exc.filename}, line {exc.lineno}: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if path is None or Path(f.filename) == Path(path)] or frames
    place = f"{own[-1].filename}, line {own[-1].lineno}: " if own else ""
    return f"{place}{type(exc).__name__}: {exc}"


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
