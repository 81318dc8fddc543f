"""Bad input is a located error, never a traceback, never silence (issue 33 items 9-15, 18): the
fuzz cases of suites, datasets and run directories, each with the message it must give (file,
line or record, field), a full disk under the LLM cache, rich markup in user text, and a trace
export that fails."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_helpers import QUESTIONS, run_toy, toy_registry, write_toy_suite

from provbench.cli import main
from provbench.datainfo import data_info
from provbench.errors import UserError
from provbench.registry import default_registry
from provbench.run_store import RunStore
from provbench.suite import load_suite

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}' if prev else 'x'] * 9)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f"], "abcdefg")
)


def suite_with(tmp_path: Path, edit) -> Path:
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    text = suite.read_text().encode()
    suite.write_bytes(edit(text))
    return suite


# -- suites -------------------------------------------------------------------------------------

SUITE_CASES = {
    "alias bomb": (
        lambda t: BOMB.encode() + t,
        r"suite.yaml: invalid YAML: its aliases expand to more than 100,000 values",
    ),
    "not UTF-8": (
        lambda t: t.replace(b"toy suite for tests", b"toy \xff suite"),
        r"suite.yaml:2, column 18: not UTF-8 text \(invalid start byte, byte b'\\xff'\)",
    ),
    "nested too deeply": (
        lambda t: t.replace(b"toy suite for tests", b"[" * 5000 + b"]" * 5000),
        r"suite.yaml: invalid YAML: nested too deeply",
    ),
    "deadline_s: soon": (
        lambda t: t.replace(b"  id: scripted\n", b"  id: scripted\n  params: {deadline_s: soon}\n"),
        r"suite.yaml, line 9, field 'model.params.deadline_s': Input should be a valid number.*'soon'",
    ),
    "timeout: -1": (
        lambda t: t.replace(b"  id: scripted\n", b"  id: scripted\n  params:\n    timeout: -1\n"),
        r"suite.yaml, line 10, field 'model.params.timeout': Input should be greater than 0 \(got -1\)",
    ),
    "max_tokens: many": (
        lambda t: t.replace(b"  id: scripted\n", b"  id: scripted\n  params: {max_tokens: many}\n"),
        r"field 'model.params.max_tokens': Input should be a valid integer",
    ),
}


@pytest.mark.parametrize("case", SUITE_CASES)
def test_a_bad_suite_is_a_located_error(tmp_path, case):
    edit, expected = SUITE_CASES[case]
    suite = suite_with(tmp_path, edit)
    with pytest.raises(UserError, match=expected):
        load_suite(suite, toy_registry())


def test_an_unknown_model_parameter_is_warned_about_with_a_suggestion(tmp_path, caplog):
    suite = suite_with(
        tmp_path, lambda t: t.replace(b"  id: scripted\n", b"  id: scripted\n  params:\n    temprature: 0.5\n")
    )
    with caplog.at_level(logging.WARNING):
        load_suite(suite, toy_registry())
    assert (
        "suite.yaml, line 10, field 'model.params.temprature': not a parameter provbench knows "
        "(did you mean 'temperature'?)"
    ) in caplog.text


# -- datasets -----------------------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000
DATASET_CASES = {
    "2wiki json not UTF-8": ("dev.json", "2wiki", b'[\n{"_id": "x\xff"}\n]', r"dev.json:2, column 11: not UTF-8 text"),
    "2wiki json nested too deeply": ("dev.json", "2wiki", DEEP, r"dev.json: nested too deeply to read"),
    "2wiki garbage parquet": (
        "dev.parquet",
        "2wiki",
        b"PAR1 not parquet at all",
        r"dev.parquet: not a readable Parquet file: .*magic bytes",
    ),
    "2wiki jsonl line nested too deeply": (
        "dev.jsonl",
        "2wiki",
        b'{"_id": "a"}\n' + DEEP + b"\n",
        r"dev.jsonl:2: JSON nested too deeply to read",
    ),
    "fever claim not UTF-8": (
        "claims.jsonl",
        "fever",
        b'{"id": 1, "claim": "x\xfe", "label": "SUPPORTS"}\n',
        r"claims.jsonl:1, column 22: not UTF-8 text",
    ),
    "medmcqa first line an array": (
        "mcq.jsonl",
        "medmcqa",
        b'[["opa"]]\n{"id": "x"}\n',
        r"mcq.jsonl:1: record #1 is list, not an object",
    ),
    "medmcqa first line an array, loader guessed": (
        "mcq.jsonl",
        None,
        b'[["opa"]]\n',
        r"mcq.jsonl: no loader recognises this file; name one with --loader",
    ),
}


@pytest.mark.parametrize("case", DATASET_CASES)
def test_a_bad_dataset_is_a_located_error(tmp_path, case):
    name, loader, data, expected = DATASET_CASES[case]
    (tmp_path / name).write_bytes(data)
    with pytest.raises(UserError, match=expected):
        data_info(default_registry(), tmp_path / name, loader)


CURRICULUM_CASES = {
    "a broken quote": (
        'id,name\na,Alpha\nb,"Beta\nc,Gamma\n',
        r"concepts.csv:3: broken CSV \(unexpected end of data\)",
    ),
    "a stray quote": ('id,name\na,"Al"pha\n', r"concepts.csv:2: broken CSV"),
    "more fields than the header": ("id,name\na,Alpha,extra\n", r"concepts.csv:2: more fields than the header names"),
    "not UTF-8": ("id,name\na,Alph\udcffa\n", r"concepts.csv:2, column 7: not UTF-8 text"),
}


@pytest.mark.parametrize("case", CURRICULUM_CASES)
def test_a_bad_concepts_file_is_a_located_error(tmp_path, case):
    from provbench_plugins.kb_builders.concepts.files import read_concepts

    text, expected = CURRICULUM_CASES[case]
    (tmp_path / "concepts.csv").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(UserError, match=expected):
        read_concepts(tmp_path / "concepts.csv")


def test_2wiki_supporting_facts_beyond_their_paragraph_are_counted_and_kept(tmp_path, caplog):
    from provbench_plugins.datasets.twowiki.loader import read_records

    record = {
        "_id": "r1",
        "type": "compositional",
        "question": "Q?",
        "answer": "A",
        "context": [["Page", ["One.", "Two."]]],
        "supporting_facts": [["Page", 1], ["Page", 99]],
    }
    (tmp_path / "dev.json").write_text(json.dumps([record]))
    with caplog.at_level(logging.WARNING):
        [read] = read_records(tmp_path / "dev.json")
    assert read.supporting_facts == [("Page", 1), ("Page", 99)]  # kept: its gold is never complete (gold.py)
    assert (
        "dev.json: 1 supporting fact(s) point at a sentence their paragraph does not have; kept as gold "
        "no prompt can hold "
        "(first: record 'r1': supporting fact ['Page', 99]: paragraph 'Page' has 2 sentence(s))"
    ) in caplog.text


def test_fever_evidence_missing_from_the_pages_is_counted(tmp_path, caplog):
    from provbench_plugins.datasets.fever.loader import FeverLoader

    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "wiki-001.jsonl").write_text(
        json.dumps({"id": "Page_A", "text": "Zero .", "lines": "0\tZero .\n"}) + "\n"
    )
    claims = [
        {"id": 1, "claim": "A.", "label": "SUPPORTS", "evidence": [[[0, 0, "Page_A", 0]]]},
        {"id": 2, "claim": "B.", "label": "SUPPORTS", "evidence": [[[0, 0, "Page_A", 7]], [[0, 0, "Gone", 0]]]},
    ]
    (tmp_path / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    with caplog.at_level(logging.WARNING):
        FeverLoader().load(tmp_path / "claims.jsonl", pages=str(tmp_path / "pages"))
    assert "fever: 2 evidence sentence(s) name a page or line not in" in caplog.text
    assert "claim 2: ['Page_A', 7]; claim 2: ['Gone', 0]" in caplog.text


# -- run directories -----------------------------------------------------------------------------

RUN_DIR_CASES = {
    "manifest not JSON": (
        "manifest.json",
        b'{"run_id": "x", ',
        r"manifest.json:1: field \(the document\): Invalid JSON",
    ),
    "manifest of wrong types": (
        "manifest.json",
        b'{"run_id": 5, "suite_name": "toy"}',
        r"manifest.json:1: field run_id: Input should be a valid string",
    ),
    "questions line damaged": (
        "questions.jsonl",
        b'{"id": "q1", "question": "?", "answer": "a"}\n{"id": \n',
        r"questions.jsonl:2: field \(the document\): Invalid JSON",
    ),
}


@pytest.mark.parametrize("case", RUN_DIR_CASES)
def test_a_damaged_run_directory_is_a_located_error(tmp_path, case):
    name, data, expected = RUN_DIR_CASES[case]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / name).write_bytes(data)
    store = RunStore(tmp_path / "run")
    with pytest.raises(UserError, match=expected):
        store.read_manifest() if name == "manifest.json" else store.read_questions()


def test_a_run_into_an_unwritable_place_is_a_located_error(tmp_path):
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    (tmp_path / "a-file").write_text("in the way")
    with pytest.raises(UserError, match=r"run directory .*a-file/run: cannot write there \(Not a directory\)"):
        run_toy(suite, tmp_path / "a-file" / "run", write_report=False)


# -- a full disk under the LLM cache -------------------------------------------------------------


def test_a_full_disk_is_reported_as_such_and_the_cache_is_kept(tmp_path, caplog):
    from provbench.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache")
    cache.put("kept", {"text": "an earlier reply"})
    cache._cache._con.execute("PRAGMA max_page_count = 1")  # SQLite's own SQLITE_FULL, as on a full disk
    with caplog.at_level(logging.WARNING):
        cache.put("new", {"text": "x" * 20_000})
        cache.put("newer", {"text": "y" * 20_000})
    assert caplog.text.count("disk full") == 1 and "the cache itself is kept as it was" in caplog.text
    assert cache.quarantined is None and cache.get("kept") == {"text": "an earlier reply"}
    assert not list(tmp_path.glob("cache.corrupt-*"))


def test_a_corrupt_cache_is_still_moved_aside(tmp_path):
    from provbench.llm.cache import ResponseCache

    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "cache.db").write_bytes(b"not a database" * 100)
    cache = ResponseCache(tmp_path / "cache")
    assert cache.quarantined is not None and cache.unwritable is None
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(cache.quarantined / "cache.db").execute("SELECT 1 FROM sqlite_master").fetchall()


# -- rich markup in user text ---------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["lo[/x]", "x[bold]y"])
def test_markup_in_a_suite_path_is_printed_as_written(tmp_path, folder):
    suite = write_toy_suite(tmp_path / folder, kb=False)
    suite.write_text(suite.read_text().replace("path: questions.json", "path: missing.json"))
    result = CliRunner().invoke(main, ["run", str(suite)])
    assert result.exit_code == 2, result.output
    assert f"{folder}/suite.yaml" in result.output and "dataset file not found" in result.output


def test_install_hints_keep_their_extras_in_brackets(tmp_path):
    import click

    from provbench.cli import ProvbenchGroup  # the group that prints UserErrors

    @click.group(cls=ProvbenchGroup)
    def group() -> None:
        pass

    @group.command("x")
    def fail() -> None:
        raise UserError("traces need the otel extra: pip install 'provbench[otel]' (or [ray], [ratelimit])")

    result = CliRunner().invoke(group, ["x"])
    assert result.exit_code == 2 and "pip install 'provbench[otel]' (or [ray], [ratelimit])" in result.output


def test_a_system_label_with_markup_does_not_crash_the_run(tmp_path):
    from rich.console import Console

    suite = write_toy_suite(tmp_path / "suite", kb=True, questions=QUESTIONS[:2])
    suite.write_text(
        suite.read_text()
        .replace("  - toy-plain\n", "  - {name: toy-plain, label: 'lo[/x]'}\n")
        .replace("reference_system: toy-plain", "reference_system: 'lo[/x]'")
    )
    console = Console(record=True, width=200)
    run = run_toy(suite, tmp_path / "run", console=console, write_report=False)
    assert "answered correctly by 'lo[/x]'" in console.export_text()
    assert run_toy(suite, run, console=console, write_report=False) == run  # and a resume does not crash either


# -- provbench traces: a failed export is a failure ----------------------------------------------


def test_traces_to_a_closed_port_exits_non_zero_naming_the_failure(tmp_path, monkeypatch):
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")  # the exporter's retries stop after it
    import socket

    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    run = run_toy(suite, tmp_path / "run", write_report=False)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}/v1/traces"
    result = CliRunner().invoke(main, ["traces", str(run), "--endpoint", endpoint])
    assert result.exit_code == 2, result.output
    assert re.search(rf"traces: not exported: (\d+) of \1 span\(s\) to {re.escape(endpoint)}", result.output)
    assert "span(s) exported" not in result.output


FLOW_BOMB = (
    "["
    + ", ".join(
        f"&{n} [{', '.join([f'*{p}' if p else 'x'] * 9)}]"
        for p, n in zip(["", "a", "b", "c", "d", "e", "f"], "abcdefg")
    )
    + "]"
)


@pytest.mark.parametrize(
    "value, expected",
    [
        (FLOW_BOMB, r"--option x: invalid YAML: its aliases expand to more than 100,000 values"),
        ("[1, 2", r"--option x: invalid YAML value: expected ',' or ']'"),
    ],
)
def test_a_bad_command_line_option_is_a_located_error(tmp_path, value, expected):
    result = CliRunner().invoke(
        main,
        [
            "data",
            "info",
            str(write_toy_suite(tmp_path / "s", kb=False).parent / "questions.json"),
            "--loader",
            "2wiki",
            "--option",
            f"x={value}",
        ],
    )
    assert result.exit_code == 2 and re.search(expected, result.output), result.output


def test_a_listing_on_a_terminal_shows_brackets_as_written():
    from rich.console import Console

    from provbench.listing import show_table

    console = Console(force_terminal=True, record=True, width=200)
    show_table(console, "plugins [x]", ("name", "description"), [("lo[/x]", "needs pip install 'provbench[ray]'")])
    shown = console.export_text()
    assert "plugins [x]" in shown and "lo[/x]" in shown and "provbench[ray]" in shown


def test_a_report_that_cannot_be_written_is_a_located_error(tmp_path):
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    run = run_toy(suite, tmp_path / "run", write_report=False)
    (run / "report.html").mkdir()  # something in the report's place that cannot be overwritten
    result = CliRunner().invoke(main, ["report", str(run)])
    assert result.exit_code == 2 and re.search(r"error: .*run/report.html: Is a directory", result.output), (
        result.output
    )
