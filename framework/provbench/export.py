"""``provbench export``: a run's records as one flat table, one row per unit, in parquet, CSV or
JSON lines (the rows of :func:`provbench.run_store.flat_rows`: unit key, the question's text, type and
category, status, answer, footprint, tokens, the leak guard's verdict, every score as
``score.<name>`` and ``certification``: certified, uncertified or not validated). parquet is written with pyarrow, CSV with the standard library, so none of
them needs pandas; :meth:`provbench.results.data.RunData.dataframe` gives the same rows as a
pandas DataFrame.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import UserError
from .results.data import RunData, load_run
from .results.validity import cell_certification, read_validity
from .run_store import columns_of, write_csv

FORMATS = ("parquet", "csv", "jsonl")


def export_run(run_dir: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Write the run's rows to ``out`` (default: ``<run_dir>/records.<fmt>``); returns the file."""
    if fmt not in FORMATS:
        raise UserError(f"export format {fmt!r} is not one of {', '.join(FORMATS)}")
    run = load_run(run_dir)
    target = Path(out) if out is not None else run.run_dir / f"records.{fmt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = certified_rows(run)
    if fmt == "csv":
        return write_csv(rows, target)
    if fmt == "jsonl":
        _write_jsonl(rows, target)
    else:
        _write_parquet(run, rows, target)
    return target


def certified_rows(run: RunData) -> list[dict[str, Any]]:
    """The run's rows, each with whether its number is certified on this run: certified (a claim
    validated on the suite's controls covers its system under its condition), uncertified, or
    not validated (:func:`provbench.results.validity.cell_certification`)."""
    validity = read_validity(run.run_dir)
    return [
        {**row, "certification": cell_certification(validity, row["system"], row["condition"])} for row in run.rows()
    ]


def _write_jsonl(rows: list[dict[str, Any]], target: Path) -> None:
    with target.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _write_parquet(run: RunData, rows: list[dict[str, Any]], target: Path) -> None:
    """Column by column, so a score a record lacks is a null, and the run's id and suite go into
    the file's metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = columns_of(rows)
    table = pa.table({c: [row.get(c) for row in rows] for c in columns} if rows else {})
    table = table.replace_schema_metadata(
        {"provbench.run_id": run.manifest.run_id, "provbench.suite": run.manifest.suite_name}
    )
    pq.write_table(table, target)
