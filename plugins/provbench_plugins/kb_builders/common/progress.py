"""Progress bars for the long steps of a build (LLM calls, embedding), on the terminal only.

On a terminal the bars are transient (rich): they vanish when the step ends, so a build's
output keeps only its summary. Elsewhere (CI, tests, a log file) nothing is drawn.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator


def _progress():
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=console, transient=True, disable=not console.is_terminal)


@contextmanager
def progress_bar(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """``advance(n)``: n more of ``total`` done."""
    if not sys.stderr.isatty():
        yield lambda n=1: None
        return
    with _progress() as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


@contextmanager
def embedding_progress() -> Iterator[Callable[[str, int, int], None]]:
    """A ``progress(index name, done, total)`` callback for ``KnowledgeBase.finalize``."""
    if not sys.stderr.isatty():
        yield lambda name, done, total: None
        return
    with _progress() as bar:
        tasks: dict[str, int] = {}

        def update(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(f"embedding {name.replace('_', ' ')}", total=total)
            bar.update(tasks[name], completed=done)

        yield update
