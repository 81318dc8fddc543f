"""provbench export and the Python API: every record round-trips through parquet, CSV and JSON
lines; provbench.load_run gives typed records and a DataFrame; the notebook example runs."""

from __future__ import annotations

import csv
import json
import runpy
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import provbench
from provbench.cli import main
from provbench.export import certified_rows
from provbench.report.data import load_run
from provbench.run_store import RunStore
from runner_helpers import run_toy, write_toy_suite

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    return run_toy(write_toy_suite(folder / "suite", kb=False), folder / "run", write_report=False)


def expected_rows(run_dir: Path) -> dict[tuple, dict]:
    """What every format must give back: one row per record of records.jsonl, by unit key."""
    rows = certified_rows(load_run(run_dir))
    assert len(rows) == len(RunStore(run_dir).load_records())
    return {row_key(r): r for r in rows}


def row_key(row: dict) -> tuple:
    return (row["system"], row["condition"], int(row["repeat"]), row["question_id"], row["variant"] or "")


def test_load_run_is_the_one_public_function():
    assert provbench.load_run is load_run
    with pytest.raises(AttributeError):
        provbench.no_such_name  # noqa: B018


def test_jsonl_round_trips_every_record(run_dir, tmp_path):
    target = tmp_path / "out.jsonl"
    CliRunner().invoke(
        main, ["export", str(run_dir), "--format", "jsonl", "--out", str(target)], catch_exceptions=False
    )
    got = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert {row_key(r): r for r in got} == expected_rows(run_dir)


def test_parquet_round_trips_every_record(run_dir):
    import pyarrow.parquet as pq

    result = CliRunner().invoke(main, ["export", str(run_dir)], catch_exceptions=False)  # parquet is the default
    table = pq.read_table(run_dir / "records.parquet")
    assert str(run_dir / "records.parquet") in result.output.replace("\n", "")
    assert table.schema.metadata[b"provbench.suite"] == b"toy"
    got = table.to_pylist()
    expected = expected_rows(run_dir)
    assert len(got) == len(expected)
    for row in got:  # a score another record has and this one lacks comes back as null
        want = expected[row_key(row)]
        assert {k: v for k, v in row.items() if v is not None} == {k: v for k, v in want.items() if v is not None}


def test_csv_round_trips_every_record(run_dir, tmp_path):
    target = tmp_path / "out.csv"
    CliRunner().invoke(main, ["export", str(run_dir), "--format", "csv", "--out", str(target)], catch_exceptions=False)
    with target.open(encoding="utf-8") as fh:
        got = list(csv.DictReader(fh))
    expected = {
        key: {k: "" if v is None else str(v) for k, v in row.items()} for key, row in expected_rows(run_dir).items()
    }
    assert {row_key(r): {k: v for k, v in r.items() if k in expected[row_key(r)] or v} for r in got} == expected


def test_rows_carry_scores_questions_and_failures(run_dir):
    frame = provbench.load_run(run_dir).dataframe()
    assert list(frame.columns[:4]) == ["question_id", "question", "question_type", "category"]
    crashed = frame[(frame["question_id"] == "q6-crash") & (frame["system"] == "toy-graph")]
    assert set(crashed["status"]) == {"failed"} and crashed["error"].str.contains("crashed").any()
    changed = frame[frame["condition"] == "toy-hide-cited"]["score.output_changed"]
    assert changed.notna().any()
    assert {"leak_check", "variant", "score.accuracy", "score.answer_length"} <= set(frame.columns)


def test_typed_records(run_dir):
    run = provbench.load_run(run_dir)
    record = next(
        r
        for r in run.records
        if r.key.question_id == "q1" and r.key.condition == "baseline" and r.key.system == "toy-graph"
    )
    assert record.trace.answer == "Orin Vale" and "ent:orin-vale" in record.trace.visited_entities


def test_notebook_example_runs(run_dir, capsys, monkeypatch):
    pytest.importorskip("pandas")
    monkeypatch.setattr(sys, "argv", ["explore_run.py", str(run_dir)])
    runpy.run_path(str(REPO / "examples" / "notebooks" / "explore_run.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "toy" in out and "toy-graph" in out and "toy-hide-cited" in out


def test_unknown_format_is_refused(run_dir):
    result = CliRunner().invoke(main, ["export", str(run_dir), "--format", "xlsx"])
    assert result.exit_code == 2 and "xlsx" in result.output


def test_docs_name_every_column(run_dir):
    """docs/api.md's table of columns is the export's: each column it names exists, each column
    but the scores is named."""
    import re

    table = (REPO / "docs" / "api.md").read_text(encoding="utf-8").split("| columns | what |")[1].split("\n\n")[0]
    documented = set(re.findall(r"`([a-z_.<>]+)`", "\n".join(line.split("|")[1] for line in table.splitlines()[2:])))
    columns = {c for row in certified_rows(load_run(run_dir)) for c in row}
    assert documented - {"score.<name>"} <= columns
    assert {c for c in columns if not c.startswith("score.")} <= documented
