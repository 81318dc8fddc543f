"""The run store: durable appends, tolerant resume reads, CSV export (tests/test_export.py: the other formats)."""

from __future__ import annotations

import csv

import pytest

from provbench.errors import UserError
from provbench.model import RunRecord, Trace, UnitKey
from provbench.run_store import RunStore, export_csv


def record(qid: str, answer: str = "x", condition: str = "baseline") -> RunRecord:
    trace = Trace(question_id=qid, system="s", answer=answer, visited_entities=["ent:a", "ent:b"])
    trace.citations.entities = ["ent:a"]
    return RunRecord(
        key=UnitKey(question_id=qid, system="s", condition=condition), trace=trace, scores={"accuracy": 1.0}
    )


def test_append_then_load_round_trips(tmp_path):
    store = RunStore(tmp_path)
    store.create()
    for qid in ("q1", "q2"):
        store.append(record(qid))
    loaded = store.load_records()
    assert sorted(loaded) == ["s|baseline|0|q1", "s|baseline|0|q2"]
    assert loaded["s|baseline|0|q1"].trace.answer == "x"


def test_truncated_last_line_is_dropped_and_cut(tmp_path):
    store = RunStore(tmp_path)
    store.append(record("q1"))
    partial = record("q2").model_dump_json()[:37]
    with store.records_path.open("a") as fh:
        fh.write(partial)
    assert list(store.load_records()) == ["s|baseline|0|q1"]
    store.append(record("q3"))  # appends after the cut, not onto the fragment
    assert sorted(store.load_records()) == ["s|baseline|0|q1", "s|baseline|0|q3"]
    assert partial not in store.records_path.read_text()


def test_complete_last_line_without_newline_is_kept(tmp_path):
    store = RunStore(tmp_path)
    store.records_path.write_text(record("q1").model_dump_json())
    assert list(store.load_records()) == ["s|baseline|0|q1"]
    store.append(record("q2"))
    assert len(store.load_records()) == 2


def test_corrupt_middle_line_is_an_error_naming_it(tmp_path):
    store = RunStore(tmp_path)
    store.records_path.write_text(record("q1").model_dump_json() + "\n{oops\n" + record("q2").model_dump_json() + "\n")
    with pytest.raises(UserError, match=r"records.jsonl, line 2: corrupt record"):
        store.load_records()


def test_csv_export(tmp_path):
    store = RunStore(tmp_path)
    store.append(record("q1", answer='say "hi", <b>'))
    store.append(record("q1", condition="cut"))
    path = export_csv(tmp_path)
    rows = list(csv.DictReader(path.open()))
    assert [r["condition"] for r in rows] == ["baseline", "cut"]
    assert rows[0]["answer"] == 'say "hi", <b>' and rows[0]["visited_entities"] == "2"
    assert rows[0]["score.accuracy"] == "1.0"


def test_metrics_json_is_typed_and_versioned(tmp_path):
    import json

    from provbench.plugin_api import MetricValue
    from provbench.run_store import METRICS_FORMAT_VERSION, RunMetrics

    store = RunStore(tmp_path)
    store.create()
    assert store.read_run_metrics() is None and store.read_metrics() == {}
    store.write_metrics(RunMetrics(values=[MetricValue(metric="m", system="s", value=0.5)], excluded=["q1"]))
    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["format_version"] == METRICS_FORMAT_VERSION and data["values"][0]["value"] == 0.5
    assert store.read_run_metrics().values[0].metric == "m"
    del data["format_version"]  # written before the field existed: read as version 1
    (tmp_path / "metrics.json").write_text(json.dumps(data))
    assert store.read_run_metrics().format_version == 1
    data["format_version"] = METRICS_FORMAT_VERSION + 1
    (tmp_path / "metrics.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"metrics.json: field format_version: .*newer than this provbench reads"):
        store.read_run_metrics()
    data.update(format_version=1, values=[{"metric": "m"}])
    (tmp_path / "metrics.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"metrics.json: field values.0.system: Field required"):
        store.read_metrics()
