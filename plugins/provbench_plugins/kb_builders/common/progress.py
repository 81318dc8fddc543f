"""Progress of the long steps of a build (LLM calls, embedding), on standard error.

On a terminal the bars are transient (rich): they vanish when the step ends, so a build's
output keeps only its summary. Elsewhere (CI, a pipe, a log file), where a bar would draw
nothing until the end, plain lines: the step and its size when it starts, then how far it got
every 10 seconds (a line even while nothing moves, as when the embedding model loads), and each
part once when it ends (:class:`provbench.progress.PlainProgress`).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from provbench.progress import PlainProgress


def _progress():
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


@contextmanager
def _plain(description: str, total: int | None) -> Iterator[tuple[PlainProgress, int | None]]:
    """Plain progress lines on standard error; a first line says the step has started."""
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True)
    console.print(
        f"{description}: started" + (f", {total} to do" if total is not None else ""), markup=False, highlight=False
    )
    with PlainProgress(console) as plain:
        yield plain, (plain.add_task(description, total=total) if total is not None else None)


@contextmanager
def progress_bar(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """``advance(n)``: n more of ``total`` done."""
    if not sys.stderr.isatty():
        with _plain(description, total) as (plain, task):
            yield lambda n=1: plain.advance(task, n)
        return
    with _progress() as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


@contextmanager
def embedding_progress() -> Iterator[Callable[[str, int, int], None]]:
    """A ``progress(index name, done, total)`` callback for ``KnowledgeBase.finalize``."""
    if not sys.stderr.isatty():
        with _plain("embedding", None) as (plain, _):
            tasks: dict[str, int] = {}

            def plain_update(name: str, done: int, total: int) -> None:
                if name not in tasks:
                    tasks[name] = plain.add_task(f"embedding {name.replace('_', ' ')}", total=total)
                plain.update(tasks[name], total=total, advance=done - plain.tasks[tasks[name]].completed)

            yield plain_update
        return
    with _progress() as bar:
        tasks: dict[str, int] = {}

        def update(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(f"embedding {name.replace('_', ' ')}", total=total)
            bar.update(tasks[name], completed=done)

        yield update
