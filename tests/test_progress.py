"""Progress in a log (a console that is not a terminal): plain lines at an interval for every long
phase, a line while nothing moves, and each finished line printed once."""

from __future__ import annotations

import io
import time

from rich.console import Console

from provbench.progress import PlainProgress


def log_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, soft_wrap=True), out


def without_time(text: str) -> list[str]:
    """The lines without their elapsed time ("embedding text units 3/3")."""
    return [line.rsplit(" (", 1)[0] for line in text.splitlines()]


def test_each_finished_line_is_printed_once_and_the_end_repeats_nothing():
    console, out = log_console()
    with PlainProgress(console, every_s=0.05) as plain:
        units, names = plain.add_task("embedding text units", total=3), plain.add_task("embedding names", total=2)
        for _ in range(3):
            plain.advance(units)
            time.sleep(0.06)  # each step past the interval
        plain.update(names, advance=2)
        time.sleep(0.12)  # two more intervals: finished tasks print nothing more
    lines = without_time(out.getvalue())
    assert lines.count("embedding text units 3/3") == 1 and lines.count("embedding names 2/2") == 1, lines
    assert lines[-1] == "embedding names 2/2" and "embedding names 0/2" not in lines


def test_a_phase_that_does_not_move_still_prints_a_line_every_interval():
    """A model loading, a slow LLM call: the log shows the phase is alive, with its elapsed time."""
    console, out = log_console()
    with PlainProgress(console, every_s=0.05) as plain:
        plain.add_task("embedding text units", total=34)
        plain.add_task("embedding entities", total=21)
        time.sleep(0.3)
        while_waiting = without_time(out.getvalue())
    assert len(while_waiting) >= 2 and set(while_waiting) == {"embedding text units 0/34"}, while_waiting


def test_progress_between_intervals_is_shown_at_the_next_one():
    console, out = log_console()
    with PlainProgress(console, every_s=0.5) as plain:
        task = plain.add_task("extracting entities", total=100)
        plain.advance(task, 40)
        assert out.getvalue() == ""  # not a line per item
        time.sleep(1.2)
        assert "extracting entities 40/100" in without_time(out.getvalue())
