"""Reliability and security (issue 15): transient faults heal, invalid JSON is re-asked and never
cached, bounded waits, a corrupted cache is quarantined, suite parameters win, no secret reaches an
artefact, one process per run directory, and the small user-facing fixes. The loopback fault
server, kill -9 and two-process tests are in test_faults.py."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_helpers import QUESTIONS, run_toy, scripted_llm, toy_plugin_manager, write_toy_suite

from provbench.errors import UserError
from provbench.llm import LLMClient, ScriptedBackend
from provbench.llm.client import make_llm
from provbench.locks import LockHeld, kb_build_lock
from provbench.run_store import RunStore

HERE = Path(__file__).resolve().parent
ASK = [{"role": "user", "content": "Who directed Glass Harbor?"}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines() if line]


# -- invalid JSON: re-asked with the parse error, never cached -------------------------------------


def test_invalid_json_is_reasked_with_the_parse_error_and_never_cached(tmp_path):
    backend = ScriptedBackend(replies=['{"answer": "Orin', {"answer": "Orin Vale"}])
    llm = LLMClient(backend, cache_dir=tmp_path, backoff_s=0, json_retries=1)
    resp = llm.chat(ASK, schema=SCHEMA)
    assert resp.data == {"answer": "Orin Vale"} and resp.attempts == 2
    reask = backend.calls[1]["messages"]
    assert reask[1] == {"role": "assistant", "content": '{"answer": "Orin'}
    assert "not valid JSON" in reask[2]["content"] and "Unterminated string" in reask[2]["content"]
    # the original request is what gets cached (under its own key): a re-run asks nothing
    again = LLMClient(ScriptedBackend(replies=[]), cache_dir=tmp_path).chat(ASK, schema=SCHEMA)
    assert again.cached and again.data == {"answer": "Orin Vale"}


def test_a_reply_that_stays_invalid_is_returned_but_not_cached(tmp_path):
    llm = LLMClient(
        ScriptedBackend(replies=["not json", "still not json"]), cache_dir=tmp_path, backoff_s=0, json_retries=1
    )
    assert llm.chat(ASK, schema=SCHEMA).data is None
    healed = LLMClient(ScriptedBackend(replies=[{"answer": "X"}]), cache_dir=tmp_path, json_retries=1)
    assert healed.chat(ASK, schema=SCHEMA).data == {"answer": "X"}  # asked again, not served from the cache


def test_a_reply_cut_off_at_max_tokens_is_not_reasked(tmp_path, caplog):
    """Unfinished JSON that used the whole budget ends the same way again: the re-ask is not sent."""
    cut = '{"answer": "Orin Vale, son of'  # 5 words: the scripted backend counts words as tokens
    backend = ScriptedBackend(replies=[cut, {"answer": "Orin Vale"}])
    llm = LLMClient(backend, cache_dir=tmp_path, backoff_s=0, json_retries=1)
    resp = llm.chat(ASK, schema=SCHEMA, max_tokens=5)
    assert resp.data is None and resp.attempts == 1 and len(backend.calls) == 1
    assert "cut off at max_tokens=5" in caplog.text
    # with room to spare the same invalid reply is re-asked
    roomy = LLMClient(ScriptedBackend(replies=[cut, {"answer": "Orin Vale"}]), cache_dir=tmp_path / "b", json_retries=1)
    assert roomy.chat(ASK, schema=SCHEMA, max_tokens=50).data == {"answer": "Orin Vale"}


def test_an_invalid_reply_left_in_an_older_cache_is_asked_again(tmp_path):
    from provbench.llm.cache import ResponseCache, cache_key

    llm = LLMClient(ScriptedBackend(replies=[{"answer": "fresh"}]), cache_dir=tmp_path)
    request = llm._request(ASK, SCHEMA, {})
    key = cache_key(
        llm.model_id,
        request["messages"],
        {**{k: v for k, v in request.items() if k != "messages"}, "backend": llm.backend.config()},
    )
    llm.cache.put(key, {"text": "{broken", "prompt_tokens": 1, "completion_tokens": 1, "logprobs": None})
    assert llm.chat(ASK, schema=SCHEMA).data == {"answer": "fresh"}
    assert ResponseCache(tmp_path).get(key)["text"] == '{"answer": "fresh"}'  # the healed reply replaced it


# -- bounded waits -----------------------------------------------------------------------------------


def test_the_call_deadline_stops_retries_early():
    llm = LLMClient(
        ScriptedBackend(replies=[TimeoutError("hung")] * 100), max_attempts=100, backoff_s=0.2, deadline_s=0.5
    )
    started = time.monotonic()
    with pytest.raises(Exception, match="failed after"):
        llm.chat(ASK)
    assert llm.stats.calls < 10 and time.monotonic() - started < 5


def test_litellm_gets_a_default_request_timeout_that_stays_out_of_the_cache_key():
    import litellm

    litellm.suppress_debug_info = False
    llm = make_llm("openai/toy", api_base="http://127.0.0.1:9/v1", api_key="x", deadline_s=30)
    assert llm.backend.params["timeout"] == 60.0 and llm.deadline_s == 30 and llm.json_retries == 1
    assert "timeout" not in llm.backend.config()
    assert litellm.suppress_debug_info is True  # no "Give Feedback / Get Help" banners on stdout
    custom = make_llm("openai/toy", api_base="http://127.0.0.1:9/v1", timeout=2)
    assert custom.backend.params["timeout"] == 2 and custom.backend.config() == llm.backend.config()


# -- corrupted cache ------------------------------------------------------------------------------------


def test_a_corrupted_cache_is_quarantined_loudly_and_the_call_goes_through(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    LLMClient(ScriptedBackend(replies=["one"]), cache_dir=cache_dir).chat(ASK)
    db = cache_dir / "cache.db"
    db.write_bytes(b"\0" * 200 + db.read_bytes()[200:])
    with caplog.at_level(logging.WARNING):
        llm = LLMClient(ScriptedBackend(replies=["two"]), cache_dir=cache_dir)
        assert llm.chat(ASK).text == "two"
    moved = list(tmp_path.glob("cache.corrupt-*"))
    assert len(moved) == 1 and (moved[0] / "cache.db").exists()
    assert str(db) in caplog.text and str(moved[0]) in caplog.text and "empty cache" in caplog.text


# -- the suite's temperature wins ---------------------------------------------------------------------


def test_suite_temperature_wins_over_the_plugin_and_changes_the_cache_key(tmp_path):
    warm = make_llm("scripted", cache_dir=tmp_path, temperature=0.7, replies=["warm"])
    assert warm.chat(ASK, temperature=0.0).text == "warm"  # a plugin hard-coding 0.0
    assert warm.backend.calls[0]["temperature"] == 0.7
    cold = make_llm("scripted", cache_dir=tmp_path, temperature=0.0, replies=["cold"])
    resp = cold.chat(ASK, temperature=0.0)
    assert resp.text == "cold" and not resp.cached  # another temperature, another cache entry


def test_plugins_leave_temperature_to_the_suite():
    """A hard-coded temperature in a plugin is overridden; grep keeps new ones visible."""
    plugins = HERE.parent / "plugins"
    hard_coded = [
        f"{p.relative_to(plugins)}:{n}"
        for p in plugins.rglob("*.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if "temperature=0" in line.replace(" ", "")
    ]
    llm = make_llm("scripted", temperature=0.3, replies=["a"])
    llm.chat(ASK, temperature=0.0)
    assert llm.backend.calls[0]["temperature"] == 0.3, hard_coded


# -- secrets -----------------------------------------------------------------------------------------

CANARY = "sk-canary0123456789abcdefXYZ"
ENV_CANARY = "envcanary-9f8e7d6c5b4a"
NAMED_CANARY = "plain-canary-4711"


def test_no_secret_reaches_any_artefact(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PROVBENCH_TEST_API_KEY", ENV_CANARY)
    monkeypatch.setenv("PWD", str(tmp_path))  # the shell's working directory is no password
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:2])
    text = suite.read_text().replace(
        "  id: scripted\n",
        f"""  id: scripted
  params:
    api_key: {NAMED_CANARY}
    extra_headers: {{Authorization: "Bearer {NAMED_CANARY}"}}
    api_base: "https://proxy.example/v1?token={NAMED_CANARY}"
""",
    )
    text = text.replace(
        "  path: questions.json", f"  path: questions.json\n  options: {{note: {CANARY}, auth_token: {NAMED_CANARY}}}"
    )
    suite.write_text(text)

    def leaky(messages):  # a provider error quoting the keys, as some do
        logging.getLogger("provbench.test").warning("provider said: bad key %s / %s", CANARY, ENV_CANARY)
        raise ConnectionError(f"401 invalid api key {CANARY} (env {ENV_CANARY}, {NAMED_CANARY})")

    llm = LLMClient(ScriptedBackend(replies=[leaky] * 100), backoff_s=0, max_attempts=2)
    with caplog.at_level(logging.INFO):
        run = run_toy(suite, tmp_path / "run", llm=llm)
    assert any(r["status"] == "failed" and "[REDACTED]" in r["error"] for r in records(run))
    leaks = [
        str(p)
        for p in run.rglob("*")
        if p.is_file()
        for secret in (CANARY, ENV_CANARY, NAMED_CANARY)
        if secret.encode() in p.read_bytes()
    ]
    assert leaks == []
    assert all(s not in caplog.text for s in (CANARY, ENV_CANARY)) and "[REDACTED]" in caplog.text
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["suite"]["model"]["params"]["api_key"] == "[REDACTED]"
    assert manifest["suite_path"] == str(suite.resolve())  # paths under $PWD stay readable


# -- resume: failed units run again ---------------------------------------------------------------------


def test_failed_units_run_again_on_resume_and_say_so(tmp_path):
    from rich.console import Console

    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:3])
    outage = LLMClient(ScriptedBackend(replies=[ConnectionError("down")] * 100), backoff_s=0, max_attempts=2)
    run = run_toy(suite, tmp_path / "run", llm=outage, write_report=False)
    assert {r["status"] for r in records(run)} == {"failed"}
    kept = run_toy(suite, run, llm=scripted_llm(failing=True)[0], write_report=False, retry_failed=False)
    assert {r["status"] for r in records(kept)} == {"failed"}
    console = Console(record=True, width=200)
    healthy, backend = scripted_llm()
    run_toy(suite, run, llm=healthy, write_report=False, console=console)
    assert "retrying 24 unit(s) that failed before" in console.export_text()  # 6 baselines, 18 interventions
    final = records(run)
    keys = [json.dumps(r["key"], sort_keys=True) for r in final]
    assert len(keys) == len(set(keys)) == len(RunStore(run).load_records())  # one line per unit
    baselines = [r for r in final if r["key"]["condition"] == "baseline"]
    assert baselines and {r["status"] for r in baselines} == {"ok"}


# -- one process per run directory ------------------------------------------------------------------------


def test_a_second_process_on_a_run_directory_gets_an_error_naming_the_holder(tmp_path):
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; sys.path[:0] = sys.argv[1:2]; from provbench.run_store import RunStore;"
                "lock = RunStore(sys.argv[2]).lock(); lock.acquire(); print('held', flush=True); time.sleep(30)"
            ),
            os.environ.get("PYTHONPATH", "").split(":")[0],
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld, match=rf"run directory .*run is in use by pid {holder.pid} on host"):
            run_toy(suite, out, write_report=False)
    finally:
        holder.kill()
        holder.wait()
    run_toy(suite, out, write_report=False)  # the lock died with its holder: no stale lock remains
    assert len(records(out)) == 8  # 2 baselines, 6 intervention units


def test_a_stale_holder_note_does_not_block(tmp_path):
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock.holder").write_text(json.dumps({"pid": 999999, "host": "gone", "since": 0, "command": "x"}))
    run_toy(suite, out, write_report=False)
    assert len(records(out)) == 8 and not (out / ".lock.holder").exists()


def test_a_kb_being_built_elsewhere_is_waited_for(tmp_path, monkeypatch):
    from provbench_plugins.kb_builders.twowiki.builder import TwoWikiKBBuilder

    kb_dir = tmp_path / "kb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from provbench.locks import kb_build_lock\n"
                "with kb_build_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(2)"
            ),
            str(kb_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("PROVBENCH_KB_LOCK_WAIT_S", "0.3")
        with pytest.raises(LockHeld, match=rf"knowledge base .*kb is still in use by pid {holder.pid}"):
            TwoWikiKBBuilder().build([], kb_dir, scripted_llm()[0])
        started = time.monotonic()
        with kb_build_lock(kb_dir, wait_s=30):  # waits for the holder, then gets it
            assert time.monotonic() - started > 0.1
    finally:
        holder.kill()
        holder.wait()


BUILD_CONCEPTS = """
import sys, time
from pathlib import Path
import provbench_plugins.kb_builders.concepts.builder as B

real = B.write_kb
def slow_write(*args):  # widens the window in which an unlocked second build would collide
    print("building", flush=True)
    time.sleep(1.0)
    return real(*args)
B.write_kb = slow_write
concepts, edges, go, kb_dir = sys.argv[1:5]
while not Path(go).exists():
    time.sleep(0.01)
kb = B.ConceptGraphBuilder(concepts=concepts, edges=edges).build([], Path(kb_dir))
stats = kb.stats()
print("done", stats.entities, stats.relations, flush=True)
"""


def test_two_processes_building_one_kb_with_any_builder_end_with_one_kb(tmp_path):
    """The lock comes with KBBuilder, not the builder: concept-graph builds race on one directory."""
    from provbench.kb import KnowledgeBase

    concepts, edges = tmp_path / "concepts.csv", tmp_path / "edges.csv"  # small: the race is the point, not the size
    concepts.write_text("id,name\n" + "".join(f"c{i},Concept {i}\n" for i in range(6)))
    edges.write_text("source,relation,target\n" + "".join(f"c{i},next,c{i + 1}\n" for i in range(5)))
    go, kb_dir = tmp_path / "go", tmp_path / "kb"
    builds = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD_CONCEPTS, str(concepts), str(edges), str(go), str(kb_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()
    outputs = [b.communicate(timeout=300) for b in builds]
    assert [b.returncode for b in builds] == [0, 0], [err[-2000:] for _, err in outputs]
    printed = [out.split() for out, _ in outputs]
    assert sum(words.count("building") for words in printed) == 1  # the second waited, then reused
    assert all(words[-3:] == ["done", "6", "5"] for words in printed)
    assert KnowledgeBase.is_complete(kb_dir)
    with KnowledgeBase.open(kb_dir, read_only=True) as kb:
        assert (kb.stats().entities, kb.stats().relations) == (6, 5)


# -- small ones -------------------------------------------------------------------------------------------


def test_kb_build_from_a_dataset_refuses_a_negative_limit(tmp_path):
    from provbench.runner import build_dataset_kb

    with pytest.raises(UserError, match="--limit must be at least 1, got -1"):
        build_dataset_kb(tmp_path / "none.json", tmp_path / "kb", loader="2wiki", builder="2wiki-paper000", limit=-1)


def test_run_exits_with_a_distinct_code_when_units_failed(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import provbench.runner as runner
    from provbench.cli import EXIT_UNITS_FAILED, main

    real = runner.run_suite
    monkeypatch.setattr(
        runner,
        "run_suite",
        lambda *a, **k: real(*a, **k, pm=toy_plugin_manager(), llm=scripted_llm()[0], write_report=False),
    )
    suite = write_toy_suite(tmp_path / "suite", kb=False)  # q6-crash and q7-llm fail on purpose
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(tmp_path / "run")])
    assert result.exit_code == EXIT_UNITS_FAILED == 3, result.output
    assert "because their baseline failed" in result.output  # knock-on failures are named as such
    ok = write_toy_suite(tmp_path / "ok", kb=False, questions=QUESTIONS[:2])
    assert CliRunner().invoke(main, ["run", str(ok), "--out", str(tmp_path / "ok-run")]).exit_code == 0


def test_repairing_a_torn_last_line_says_so(tmp_path, caplog):
    store = RunStore(tmp_path)
    store.records_path.write_text('{"key": {"question_id": "q1"')
    with caplog.at_level(logging.WARNING):
        assert store.load_records() == {}
    assert "torn last line" in caplog.text and str(store.records_path) in caplog.text


def test_a_run_that_fails_validation_leaves_no_run_directory(tmp_path):
    duplicated = write_toy_suite(tmp_path / "dup", kb=False, questions=[QUESTIONS[0], QUESTIONS[0]])
    with pytest.raises(UserError, match="question id 'q1' twice"):
        run_toy(duplicated, tmp_path / "run-dup", write_report=False)
    assert not (tmp_path / "run-dup").exists()
    bad_params = write_toy_suite(tmp_path / "params", kb=False, questions=QUESTIONS[:1])
    bad_params.write_text(bad_params.read_text().replace("  id: scripted\n", "  id: scripted\n  params: {nope: 1}\n"))
    from provbench.runner import run_suite

    with pytest.raises(UserError, match="unknown or missing parameters"):
        run_suite(bad_params, out=tmp_path / "run-params", pm=toy_plugin_manager(), write_report=False)
    assert not (tmp_path / "run-params").exists()


def test_yaml_errors_name_the_line_of_the_unclosed_bracket(tmp_path):
    from provbench.suite import SuiteError, load_suite

    path = tmp_path / "suite.yaml"
    path.write_text("name: x\nsystems: [a, b,\n  c\nmetrics: [x]\n")
    with pytest.raises(SuiteError, match=r"line 4, column 8: .*opened at line 2, column 10"):
        load_suite(path)


def test_the_kb_lock_is_reentrant_in_a_thread_and_exclusive_across_threads(tmp_path):
    import threading

    kb_dir = tmp_path / "kb"
    with kb_build_lock(kb_dir) as outer:
        with kb_build_lock(kb_dir, wait_s=0) as inner:  # a build's lock, then a nested build's
            assert outer is not None and inner is None
        result = []
        worker = threading.Thread(target=lambda: result.append(_try_lock(kb_dir)))
        worker.start()
        worker.join()
        assert result == ["held elsewhere"]


def _try_lock(kb_dir):
    try:
        with kb_build_lock(kb_dir, wait_s=0):
            return "got it"
    except LockHeld:
        return "held elsewhere"
