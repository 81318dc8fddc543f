"""What a run shows on the console: rich's bar and spinner on a terminal, plain lines in a log
(CI, a file), where rich would draw nothing until the end."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any


def unit_progress(console: Any):
    """The units' progress: a bar on a terminal, plain lines otherwise, nothing without a console."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if console is not None and not console.is_terminal:
        return PlainProgress(console)  # a log or CI: rich would draw the bar only once, at the end
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=console is None,
        transient=False,
    )


class PlainProgress:
    """Progress as plain lines (the calls a caller makes on rich's ``Progress``), for a console
    that is not a terminal. A task's line is printed once when it completes; every ``every_s``
    seconds, the unfinished tasks that moved since their last line; and when no line came for
    ``every_s`` seconds, the first unfinished task as it stands (a model loading, a slow call), so
    a log never falls silent. The end prints only what no line showed yet."""

    def __init__(self, console: Any, every_s: float = 10.0) -> None:
        self.console, self.every_s = console, every_s
        self.tasks: list[Any] = []
        self.started = self.last_line = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="plain-progress", daemon=True)

    def __enter__(self) -> "PlainProgress":
        self._ticker.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._ticker.join()
        with self._lock:
            for task in self.tasks:
                if _state(task) != task.shown:
                    self._print(task)

    def add_task(self, description: str, total: float = 0) -> int:
        with self._lock:
            task = SimpleNamespace(description=description, total=total, completed=0)
            task.shown = _state(task)  # nothing to say until it moves
            self.tasks.append(task)
            return len(self.tasks) - 1

    def update(self, task: int, total: float | None = None, advance: float = 0) -> None:
        if total is not None:
            with self._lock:
                self.tasks[task].total = total
        self.advance(task, advance)

    def advance(self, task: int, advance: float = 1) -> None:
        with self._lock:
            t = self.tasks[task]
            t.completed += advance
            if _finished(t) and _state(t) != t.shown:
                self._print(t)

    def _tick(self) -> None:
        while not self._stop.wait(self.every_s):
            with self._lock:
                unfinished = [t for t in self.tasks if t.total and not _finished(t)]
                moved = [t for t in unfinished if _state(t) != t.shown]
                for t in moved:
                    self._print(t)
                if unfinished and not moved and time.monotonic() - self.last_line >= self.every_s:
                    self._print(unfinished[0])

    def _print(self, task: Any) -> None:
        """One line for ``task`` (the caller holds the lock)."""
        self.last_line = time.monotonic()
        task.shown = _state(task)
        elapsed = int(self.last_line - self.started)
        self.console.print(
            f"{task.description} {int(task.completed)}/{int(task.total or 0)} ({elapsed // 60}:{elapsed % 60:02d})",
            markup=False,
            highlight=False,
        )


def _state(task: Any) -> tuple[float, float]:
    return task.completed, task.total


def _finished(task: Any) -> bool:
    return bool(task.total) and task.completed >= task.total


class status:
    """A step's message: a spinner on a terminal, one line otherwise."""

    def __init__(self, console: Any, message: str):
        self._inner = console.status(message) if console is not None and console.is_terminal else None
        if console is not None and not console.is_terminal:  # a spinner shows nothing in a log
            console.print(f"{message}...", markup=False)

    def __enter__(self):
        return self._inner.__enter__() if self._inner else None

    def __exit__(self, *exc: Any) -> None:
        if self._inner:
            self._inner.__exit__(*exc)
