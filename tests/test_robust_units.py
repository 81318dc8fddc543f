"""A plugin cannot take a run down (issue 33, items 6-8), and records stay honest (16, 17, 19):
a trace that cannot be stored, a plugin's sys.exit, a hung system, Ctrl-C, a system that mutates
its view or writes the KB, a changed suite on resume, JSON re-asks' tokens, stale lines."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest
from robust_helpers import RELEASE, ExitingListing, question, run, write_suite

from provbench import hookimpl
from provbench.errors import UserError
from provbench.run_store import RunStore


def lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines() if line.strip()]


def by_question(run_dir: Path) -> dict[str, dict]:
    return {r["key"]["question_id"]: r for r in lines(run_dir)}


# -- item 6: a trace that cannot be stored fails its unit, and resumes stay put --------------------


def test_a_trace_that_cannot_be_stored_fails_its_unit_and_resume_never_grows_the_file(tmp_path):
    questions = [
        question("good"),
        question("artifact", "artifact"),
        question("answer", "answer"),
        question("none", "none"),
    ]
    suite = write_suite(tmp_path / "s", questions, ["bad"])
    out = run(suite, tmp_path / "run")
    records = by_question(out)
    assert records["good"]["status"] == "ok"
    assert "artifacts['fn']" in records["artifact"]["error"] and "UnstorableTrace" in records["artifact"]["error"]
    assert "field answer" in records["answer"]["error"]
    assert "returned NoneType, not a Trace" in records["none"]["error"]
    for _ in range(2):  # each resume retries the failed units: still one line per unit, no crash
        run(suite, tmp_path / "run")
        assert len(lines(out)) == 4


# -- item 7: a plugin's sys.exit / KeyboardInterrupt / BaseException, a hung system, Ctrl-C --------


def test_a_plugins_exit_interrupt_or_base_exception_fails_only_its_unit(tmp_path):
    questions = [
        question("exit", "exit"),
        question("interrupt", "interrupt"),
        question("base", "base"),
        question("good"),
    ]
    out = run(write_suite(tmp_path / "s", questions, ["bad"]), tmp_path / "run")
    records = by_question(out)
    assert records["good"]["status"] == "ok"
    assert records["exit"]["error"].startswith("SystemExit")
    assert records["interrupt"]["error"].startswith("KeyboardInterrupt")
    assert records["base"]["error"].startswith("GeneratorExit")


class ExitingMetric:
    """A metric whose score calls sys.exit: the unit is scored without it, with a note."""

    @hookimpl
    def provbench_register_metrics(self):
        from provbench.plugin_api import Metric

        class Exits(Metric):
            name = "exits"

            def score(self, record, question, context):
                raise SystemExit("metric bailed out")

            def aggregate(self, results, context=None):
                return []

        return {"exits": Exits}


def test_a_metric_that_exits_leaves_a_note_not_a_crash(tmp_path):
    suite = write_suite(tmp_path / "s", [question("good")], ["bad"])
    suite.write_text(suite.read_text() + "metrics: [exits]\n")
    out = run(suite, tmp_path / "run", ExitingMetric())
    record = by_question(out)["good"]
    assert record["status"] == "ok" and "SystemExit" in record["score_notes"]["exits"]


def test_a_plugin_that_exits_while_the_run_is_planned_fails_one_unit_not_the_run(tmp_path):
    """variants() exits for one question: that question's intervention unit is recorded failed with
    the reason, the other question's variant runs; a system whose call estimate exits is counted as
    one call (the estimate only orders the work) and its units run."""
    suite = write_suite(tmp_path / "s", [question("good"), question("listing", "variants")], ["bad", "estimate-exits"])
    suite.write_text(suite.read_text() + "interventions: [exits-listing]\nintervention_systems: [bad]\n")
    out = run(suite, tmp_path / "run")
    records = {(r["key"]["question_id"], r["key"]["system"], r["key"]["condition"]): r for r in lines(out)}
    assert len(records) == 6
    failed = records[("listing", "bad", "exits-listing")]
    assert failed["status"] == "failed"
    assert failed["error"] == (
        "PluginFailure: intervention 'exits-listing': variants() for question 'listing' and "
        "system 'bad' failed: SystemExit: 4 (while the run was planned)"
    )
    assert records[("good", "bad", "exits-listing")]["key"]["variant"] == "as-is"
    assert all(r["status"] == "ok" for key, r in records.items() if key != ("listing", "bad", "exits-listing"))
    ExitingListing.healed = True  # the plugin is fixed: the resume runs the variant, and the stand-in goes
    try:
        healed = lines(run(suite, tmp_path / "run"))
    finally:
        ExitingListing.healed = False
    assert len(healed) == 6 and all(r["status"] == "ok" for r in healed)
    assert {r["key"]["variant"] for r in healed if r["key"]["condition"] == "exits-listing"} == {"as-is"}


def test_plan_notes_a_plugin_that_exits_while_it_estimates(tmp_path):
    """`provbench plan` asks plugins for estimates and dry-runs them: each sys.exit is a note on its row."""
    from robust_helpers import bad_plugin_manager

    from provbench.local_plugins import plugin_setup
    from provbench.plan import KB_BUILD, make_plan
    from provbench.suite import load_suite

    suite = write_suite(
        tmp_path / "s", [question("exit", "exit"), question("listing", "variants")], ["bad", "estimate-exits"]
    )
    suite.write_text(suite.read_text() + "interventions: [exits-listing]\nmetrics: [judge-estimate-exits]\n")
    _, registry = plugin_setup(suite, bad_plugin_manager())
    plan, _ = make_plan(load_suite(suite, registry), registry, tmp_path / "run", None)
    notes = {row.what: "; ".join(row.notes) for row in plan.rows}
    assert (
        "system 'estimate-exits': expected_llm_calls failed: SystemExit: no estimate; counted as one call"
        in notes["estimate-exits"]
    )
    assert "dry run failed: SystemExit: 3" in notes["bad"]
    assert "variants() on the dry run failed: SystemExit: 4" in notes["bad x exits-listing"]
    assert "metric 'judge-estimate-exits': expected_llm_calls('baseline') failed: SystemExit" in notes["judge"]
    kb_suite = write_suite(tmp_path / "k", [question("q1")], ["bad"], kb=True)
    kb_suite.write_text(kb_suite.read_text().replace("builder: toy-tiny", "builder: build-estimate-exits"))
    plan, _ = make_plan(load_suite(kb_suite, registry), registry, tmp_path / "run-k", tmp_path / "k" / "kb")
    build = next(row for row in plan.rows if row.what == KB_BUILD)
    assert build.notes == [
        "kb builder 'build-estimate-exits': expected_llm_calls failed: SystemExit: no build estimate: calls unknown"
    ]


def test_a_hung_system_is_abandoned_at_the_unit_timeout_and_its_worker_replaced(tmp_path):
    """concurrency 1 and two hung units: each is abandoned after 0.5 s, a fresh worker runs the
    rest, and the run ends in seconds (a thread pool would wait for the hung threads forever)."""
    RELEASE.clear()
    questions = [question("hang-1", "hang"), question("hang-2", "hang"), question("good-1"), question("good-2")]
    suite = write_suite(tmp_path / "s", questions, ["bad"], concurrency=1, timeout=0.5)
    started = time.monotonic()
    try:
        out = run(suite, tmp_path / "run")
        took = time.monotonic() - started
        hung_threads = [t.name for t in threading.enumerate() if t.name.startswith("unit-") and t.is_alive()]
    finally:
        RELEASE.set()
    records = by_question(out)
    assert took < 20, took
    assert records["good-1"]["status"] == records["good-2"]["status"] == "ok"
    for qid in ("hang-1", "hang-2"):
        assert records[qid]["status"] == "failed" and "unit_timeout_s (0.5 s)" in records[qid]["error"]
    assert len(hung_threads) >= 2  # abandoned, still waiting, and not holding up the run


class InterruptOnFirstRecord:
    """Ctrl-C (SIGINT's KeyboardInterrupt in the main thread) once the first record is written,
    while a hung unit is still running."""

    def __init__(self) -> None:
        self.sent = False

    @hookimpl
    def provbench_record_written(self, record, run_dir):
        if not self.sent:
            self.sent = True
            main = threading.main_thread().ident  # where a terminal's SIGINT lands
            threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT)).start()


def test_the_first_ctrl_c_stops_at_once_keeps_records_and_the_run_resumes(tmp_path):
    RELEASE.clear()
    questions = [question("good-1"), question("hang", "hang"), question("good-2")]
    suite = write_suite(tmp_path / "s", questions, ["bad"], concurrency=2, timeout=300)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(suite, tmp_path / "run", InterruptOnFirstRecord())
        took = time.monotonic() - started
    finally:
        RELEASE.set()  # the hung unit returns (its result is dropped)
    assert took < 20, took  # not the 60 s the hung system waits, nor the 300 s timeout
    kept = by_question(tmp_path / "run")
    assert kept and all(r["status"] == "ok" for r in kept.values())
    time.sleep(0.2)  # the released thread leaves, and the knowledge base (none here) would close
    out = run(suite, tmp_path / "run")  # resumes: the units not recorded run now
    assert set(by_question(out)) == {"good-1", "hang", "good-2"} and len(lines(out)) == 3


def test_the_cli_reports_an_interrupt_with_exit_status_130():
    from click.testing import CliRunner

    from provbench.cli import main

    @main.command("interrupt-me")
    def interrupt_me() -> None:
        raise KeyboardInterrupt

    try:
        result = CliRunner().invoke(main, ["interrupt-me"])
    finally:
        main.commands.pop("interrupt-me")
    assert result.exit_code == 130 and "the same command resumes it" in result.output


def test_a_stuck_embedded_generation_is_dropped_and_waiters_fail_as_a_timeout(tmp_path, monkeypatch):
    """The llama.cpp lock is never waited on forever: after PROVBENCH_LLAMA_LOCK_WAIT_S the stuck
    instance is forgotten (the next call loads a fresh one) and the attempt fails as a TimeoutError
    (transient: the client retries it)."""
    from provbench.llm import backends
    from provbench.llm.errors import is_transient

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"")
    backend = backends.LlamaCppBackend(str(gguf), n_ctx=64, n_threads=1)
    key = (str(gguf), 64, 1, False)

    class Model:
        def create_chat_completion(self, **kwargs):
            return {"choices": [{"message": {"content": "fresh"}}], "usage": {}}

    stuck_lock = threading.Lock()
    stuck_lock.acquire()  # a generation that never ends holds it
    monkeypatch.setitem(backends._LLAMAS, key, (Model(), stuck_lock))
    monkeypatch.setenv("PROVBENCH_LLAMA_LOCK_WAIT_S", "1")
    request = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0.0}
    started = time.monotonic()
    with pytest.raises(TimeoutError) as caught:
        backend.complete(request)
    assert time.monotonic() - started < 5 and is_transient(caught.value)
    assert key not in backends._LLAMAS  # forgotten: the retry gets a fresh instance and lock
    monkeypatch.setitem(backends._LLAMAS, key, (Model(), threading.Lock()))
    assert backend.complete(request)["text"] == "fresh"


# -- item 8: each unit its own view; the KB read-only for runs and `kb info` ------------------------


def test_a_system_that_mutates_its_view_or_writes_the_kb_changes_nothing_for_others(tmp_path):
    questions = [question(f"q{i}") for i in range(3)]
    plain = run(write_suite(tmp_path / "s", questions, ["toy-graph"], kb=True), tmp_path / "plain-run")
    suite = write_suite(tmp_path / "s", questions, ["mutator", "toy-graph"], kb=True, concurrency=1)  # same KB
    out = run(suite, tmp_path / "run")
    records = lines(out)
    mutated = [r for r in records if r["key"]["system"] == "mutator"]
    assert mutated and all("read-only" in str(r["trace"]["artifacts"]["wrote_kb"]).lower() for r in mutated)

    def visited(rows):
        return {
            r["key"]["question_id"]: r["trace"]["visited_entities"] for r in rows if r["key"]["system"] == "toy-graph"
        }

    graph = visited(records)
    assert graph == visited(lines(plain))
    assert all(graph.values())  # the mutator's "hide everything" reached no other unit
    from provbench.kb import KnowledgeBase

    with KnowledgeBase.open(tmp_path / "s" / "kb", read_only=True) as kb:  # the KB on disk is whole
        assert kb.stats().entities > 0


class KBInfoDuringTheRun:
    """Runs `provbench kb info` on the run's KB while the run holds it (from the first record's hook)."""

    def __init__(self, kb_dir: Path) -> None:
        self.kb_dir, self.result = kb_dir, None

    @hookimpl
    def provbench_record_written(self, record, run_dir):
        import subprocess
        import sys

        if self.result is None:
            self.result = subprocess.run(
                [sys.executable, "-m", "provbench.cli", "kb", "info", str(self.kb_dir)],
                capture_output=True,
                text=True,
                timeout=120,
            )


def test_kb_info_opens_the_kb_while_a_run_holds_it(tmp_path):
    suite = write_suite(tmp_path / "s", [question("q1")], ["toy-graph"], kb=True)
    probe = KBInfoDuringTheRun(tmp_path / "s" / "kb")
    run(suite, tmp_path / "run", probe)
    assert probe.result is not None and probe.result.returncode == 0, probe.result.stderr[-2000:]
    assert "entities" in probe.result.stdout


# -- item 11: read-only media -----------------------------------------------------------------------


def test_a_run_reads_a_knowledge_base_on_read_only_media(tmp_path):
    from robust_helpers import read_only

    suite = write_suite(tmp_path / "s", [question("q1")], ["toy-graph"], kb=True)
    first = by_question(run(suite, tmp_path / "built"))  # builds the KB, then reads it
    with read_only(tmp_path / "s" / "kb"):
        again = by_question(run(suite, tmp_path / "again"))
    assert again["q1"]["status"] == "ok" and again["q1"]["trace"]["answer"] == first["q1"]["trace"]["answer"]
    assert again["q1"]["trace"]["visited_entities"]


def test_a_run_into_read_only_media_is_refused_and_loses_nothing(tmp_path):
    from robust_helpers import read_only

    suite = write_suite(tmp_path / "s", [question("q1"), question("q2")], ["toy-graph"])
    out = run(suite, tmp_path / "runs" / "run", limit=1)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    (tmp_path / "runs" / "empty").mkdir()
    with read_only(tmp_path / "runs"):
        for target in (out, tmp_path / "runs" / "empty" / "new"):  # resuming a run there, a new run there
            with pytest.raises(UserError) as refused:
                run(suite, target)
            assert f"run directory {target}: cannot write there" in str(refused.value)
            assert "choose another output directory" in str(refused.value)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not (tmp_path / "runs" / "empty" / "new").exists()


# -- item 16: a changed suite does not rewrite what recorded units were made under ------------------


def test_resuming_with_changed_settings_is_refused_naming_each_change(tmp_path):
    suite = write_suite(tmp_path / "s", [question("q1")], ["toy-graph"])
    out = run(suite, tmp_path / "run")
    manifest_before = (out / "manifest.json").read_text()
    records_before = (out / "records.jsonl").read_text()
    changed = suite.read_text().replace("model: {id: scripted}", "model: {id: scripted, params: {temperature: 0.9}}")
    changed = changed.replace('systems: ["toy-graph"]', "systems: [{name: toy-graph, options: {cite: false}}]")
    suite.write_text(changed)
    with pytest.raises(UserError) as refused:
        run(suite, tmp_path / "run")
    message = str(refused.value)
    assert "model.params: {} -> {'temperature': 0.9}" in message
    assert "systems.toy-graph.options: {} -> {'cite': False}" in message and "--out" in message
    assert (out / "manifest.json").read_text() == manifest_before
    assert (out / "records.jsonl").read_text() == records_before


def test_settings_that_do_not_change_recorded_units_may_change_on_resume(tmp_path):
    suite = write_suite(tmp_path / "s", [question("q1"), question("q2")], ["toy-graph"])
    run(suite, tmp_path / "run", limit=1)
    text = suite.read_text().replace("concurrency: 2", "concurrency: 1")
    text = text.replace("unit_timeout_s: 60", "unit_timeout_s: 30")
    suite.write_text(text.replace('systems: ["toy-graph"]', 'systems: ["toy-graph", "toy-plain"]'))
    out = run(suite, tmp_path / "run")  # more questions, another system, other execution settings
    assert len(lines(out)) == 4
    assert json.loads((out / "manifest.json").read_text())["suite"]["concurrency"] == 1


# -- item 17: a record counts every attempt's tokens ----------------------------------------------


def test_a_json_reask_counts_the_tokens_of_both_attempts(tmp_path):
    from provbench.llm import LLMClient, ScriptedBackend
    from provbench.model import Trace

    backend = ScriptedBackend(replies=["not json at all", {"answer": "x"}])
    client = LLMClient(backend, json_retries=1, cache_dir=tmp_path / "cache")
    trace = Trace(question_id="q", system="s")
    messages = [{"role": "user", "content": "give me json please"}]
    client.chat(messages, schema={"type": "object"}, trace=trace)
    first, second = backend.calls
    prompt = sum(len(" ".join(m["content"] for m in c["messages"]).split()) for c in (first, second))
    completion = len("not json at all".split()) + len(json.dumps({"answer": "x"}).split())
    call = trace.llm_calls[0]
    assert (call.prompt_tokens, call.completion_tokens) == (prompt, completion)
    assert client.stats.prompt_tokens == prompt  # the client's own total agrees
    again = Trace(question_id="q", system="s")  # a cache hit keeps the same record (a resume matches)
    client.chat(messages, schema={"type": "object"}, trace=again)
    assert again.llm_calls[0].cached and again.llm_calls[0].prompt_tokens == prompt


# -- item 19: stale lines of a killed retry are compacted first ------------------------------------


class LinesAtStart:
    def __init__(self) -> None:
        self.count = None

    @hookimpl
    def provbench_run_started(self, manifest, run_dir):
        self.count = len((run_dir / "records.jsonl").read_text().splitlines())


def test_stale_lines_left_by_a_kill_before_compaction_are_compacted_first(tmp_path):
    suite = write_suite(tmp_path / "s", [question("q1"), question("q2")], ["toy-graph"])
    out = run(suite, tmp_path / "run")
    text = (out / "records.jsonl").read_text()
    failed = json.loads(text.splitlines()[0])
    failed.update(status="failed", error="an outage", trace=None)
    # a retry appended the healed line after the old failed one; the kill came before compaction
    (out / "records.jsonl").write_text(json.dumps(failed) + "\n" + text)
    assert RunStore(out).load_records() and len((out / "records.jsonl").read_text().splitlines()) == 3
    probe = LinesAtStart()
    run(suite, tmp_path / "run", probe, retry_failed=False)
    assert probe.count == 2  # before any unit or hook ran
    assert [r["status"] for r in lines(out)] == ["ok", "ok"]


def test_a_finished_run_run_again_counts_no_llm_call_and_says_what_it_reused(tmp_path):
    """A re-run over a finished run directory makes no call: its summary says so, not the earlier calls."""
    from rich.console import Console

    from provbench.runner import run_suite
    from robust_helpers import bad_plugin_manager, scripted_llm

    suite = write_suite(tmp_path / "s", [question("q1")], ["toy-graph"])
    first, second = Console(record=True, width=200), Console(record=True, width=200)
    for console in (first, second):
        run_suite(
            suite,
            out=tmp_path / "run",
            console=console,
            pm=bad_plugin_manager(),
            llm=scripted_llm()[0],
            write_report=False,
        )
    assert "LLM calls" in first.export_text() and "reused" not in first.export_text()
    again = second.export_text()
    assert "LLM calls" not in again and "no LLM call this time" in again
    assert "1 record(s) reused from an earlier run" in again
