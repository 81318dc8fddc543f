"""Listings on the command line: a rich table on a terminal; plain tab-separated lines, every field
whole, when stdout is a pipe or a file (rich would fold or cut them to 80 columns there); JSON on
request (``--json``)."""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence


def show_table(
    console: Any,
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    wrap: Sequence[str] = (),
    right: Sequence[str] = (),
) -> None:
    """``rows`` under ``columns``: a table on a terminal (``wrap``: columns whose text folds,
    the others stay whole; ``right``: numbers), else a ``# title`` line, a header line and one
    tab-separated line per row."""
    rows = [["" if v is None else str(v) for v in row] for row in rows]
    if not console.is_terminal:
        out = console.file
        out.write(f"# {title}\n" + "\t".join(columns) + "\n")
        for row in rows:
            out.write("\t".join(_one_line(v) for v in row) + "\n")
        out.flush()
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title))
    for column in columns:
        table.add_column(
            column, no_wrap=column not in wrap, overflow="fold", justify="right" if column in right else "left"
        )
    for row in rows:
        table.add_row(*(escape(v) for v in row))  # user text: "[ray]" stays, "[/x]" is no markup
    console.print(table)


def print_json(console: Any, data: Any) -> None:
    """``data`` as indented JSON on stdout, with no markup or wrapping."""
    console.file.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    console.file.flush()


def _one_line(value: str) -> str:
    """A field on one line: tabs and newlines would split it into other fields or rows."""
    return " ".join(value.split()) if any(c in value for c in "\t\n\r") else value
