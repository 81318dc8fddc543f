"""What a run shows on the console: rich's bar and spinner on a terminal, plain lines in a log
(CI, a file), where rich would draw nothing until the end."""

from __future__ import annotations

import time
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
    """The units' progress as a plain line every ``every_s`` seconds and at the end (the calls the
    runner makes on rich's ``Progress``), for a console that is not a terminal."""

    def __init__(self, console: Any, every_s: float = 30.0) -> None:
        self.console, self.every_s = console, every_s
        self.tasks: list[Any] = []
        self.started = self.shown = time.monotonic()

    def __enter__(self) -> "PlainProgress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._show(force=True)

    def add_task(self, description: str, total: float = 0) -> int:
        from types import SimpleNamespace

        self.tasks.append(SimpleNamespace(description=description, total=total, completed=0))
        return len(self.tasks) - 1

    def update(self, task: int, total: float | None = None, advance: float = 0) -> None:
        if total is not None:
            self.tasks[task].total = total
        self.advance(task, advance)

    def advance(self, task: int, advance: float = 1) -> None:
        self.tasks[task].completed += advance
        self._show()

    def _show(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tasks and (force or now - self.shown >= self.every_s):
            self.shown = now
            elapsed = int(now - self.started)
            for t in self.tasks:
                self.console.print(
                    f"{t.description} {int(t.completed)}/{int(t.total or 0)} ({elapsed // 60}:{elapsed % 60:02d})",
                    markup=False,
                )


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
