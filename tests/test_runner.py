"""The runner end to end on toy plugins, the tiny KB and the scripted LLM: units, failures,
the exclusion step, scores, hooks, resume after SIGKILL, and zero LLM calls on a re-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

from runner_helpers import LifecycleRecorder, QUESTIONS, run_toy, scripted_llm, toy_plugin_manager, write_toy_suite

from provbench.runner import run_suite, unit_seed
from provbench.model import UnitKey
from provbench.run_store import RunStore

N_QUESTIONS = len(QUESTIONS)
SYSTEMS = 2
# toy-hide-cited once and toy-hide-random twice, for every system, on every question but the excluded q2
INTERVENTION_UNITS = SYSTEMS * (N_QUESTIONS - 1) * 3


def lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines() if line]


def essence(records: list[dict]) -> dict[str, tuple]:
    """What must not depend on timing, order or interruption."""
    out = {}
    for r in records:
        k = r["key"]
        answer = r["trace"]["answer"] if r["trace"] else None
        out[f"{k['system']}|{k['condition']}|{k['repeat']}|{k['question_id']}"] = (
            r["status"],
            answer,
            json.dumps(r["scores"], sort_keys=True),
            r["seed"],
        )
    return out


@pytest.fixture(scope="module")
def kb_run(tmp_path_factory):
    """One full run over the tiny KB, shared by the tests below."""
    folder = tmp_path_factory.mktemp("kbrun")
    suite = write_toy_suite(folder / "suite", kb=True)
    recorder = LifecycleRecorder()
    llm, backend = scripted_llm()
    os.environ["PROVBENCH_TEST_SECRET"] = "hunter2-do-not-record"  # must not reach the manifest
    try:
        run_dir = run_suite(suite, out=folder / "run", pm=toy_plugin_manager(recorder), llm=llm)
    finally:
        os.environ.pop("PROVBENCH_TEST_SECRET", None)
    return {"suite": suite, "run": run_dir, "events": recorder.events, "calls": len(backend.calls)}


def test_every_unit_has_exactly_one_record(kb_run):
    records = lines(kb_run["run"])
    keys = [r["key"] for r in records]
    assert len(keys) == len({json.dumps(k, sort_keys=True) for k in keys})
    conditions = Counter(k["condition"] for k in keys)
    assert conditions["baseline"] == SYSTEMS * N_QUESTIONS
    assert conditions["toy-hide-cited"] + conditions["toy-hide-random"] == INTERVENTION_UNITS
    assert {k["repeat"] for k in keys if k["condition"] == "toy-hide-random"} == {0, 1}


def test_exclusion_step_skips_questions_the_reference_answers(kb_run):
    records = lines(kb_run["run"])
    assert json.loads((kb_run["run"] / "metrics.json").read_text())["excluded"] == ["q2"]
    assert not [r for r in records if r["key"]["question_id"] == "q2" and r["key"]["condition"] != "baseline"]


def test_failures_are_recorded_rows_with_reasons(kb_run):
    by_key = {(r["key"]["system"], r["key"]["condition"], r["key"]["question_id"]): r for r in lines(kb_run["run"])}
    crash = by_key[("toy-graph", "baseline", "q6-crash")]
    assert crash["status"] == "failed" and "toy system crashed on q6-crash" in crash["error"]
    llm_fail = by_key[("toy-graph", "baseline", "q7-llm")]
    assert llm_fail["status"] == "failed" and "LLM" in llm_fail["error"]
    after = by_key[("toy-graph", "toy-hide-cited", "q6-crash")]
    assert after["status"] == "failed" and "no usable baseline trace" in after["error"]


def test_interventions_rerun_against_a_view_and_are_scored(kb_run):
    by_key = {(r["key"]["system"], r["key"]["condition"], r["key"]["question_id"]): r for r in lines(kb_run["run"])}
    base = by_key[("toy-graph", "baseline", "q1")]
    cut = by_key[("toy-graph", "toy-hide-cited", "q1")]
    assert base["trace"]["answer"] == "Orin Vale" and base["scores"]["accuracy"] == 1.0
    assert base["trace"]["citations"]["entities"] == ["ent:orin-vale"]
    assert "ent:orin-vale" not in cut["trace"]["visited_entities"]  # hidden by the view
    assert cut["trace"]["answer"] == "unknown" and cut["scores"]["output_changed"] == 1.0
    assert cut["scores"]["accuracy"] == 0.0 and cut["scores"]["answer_length"] == 7.0
    # the record says exactly what the intervention hid, the community report of the removed
    # entity's community included; the baseline hid nothing
    assert cut["trace"]["artifacts"]["hidden_by_intervention"] == {
        "entities": {"count": 1, "ids": ["ent:orin-vale"]},
        "communities": {"count": 1, "ids": ["com:1"]},
    }
    assert "hidden_by_intervention" not in base["trace"]["artifacts"]
    assert cut["seed"] == unit_seed(0, UnitKey(question_id="q1", system="toy-graph", condition="toy-hide-cited"))


def test_run_directory_contents_and_hooks(kb_run):
    run = kb_run["run"]
    for name in ("manifest.json", "records.jsonl", "questions.jsonl", "metrics.json", "report.html", "records.csv"):
        assert (run / name).is_file(), name
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["suite_name"] == "toy" and manifest["models"]["llm"]
    assert manifest["versions"]["python"] and "pydantic" in manifest["versions"]
    assert manifest["finished_at"] and Path(manifest["suite"]["knowledge_base"]["directory"]).is_dir()
    assert "hunter2" not in (run / "manifest.json").read_text()
    metrics = json.loads((run / "metrics.json").read_text())
    assert {v["metric"] for v in metrics["values"]} == {"provenance.toy-length"} and not metrics["errors"]
    events = kb_run["events"]
    assert events[0] == "started" and events[-1] == "finished"
    assert events.count("record") == len(lines(run))


def test_rerun_of_a_finished_suite_makes_no_llm_call(kb_run):
    before = (kb_run["run"] / "records.jsonl").read_text()
    report = kb_run["run"] / "report.html"
    report.unlink()
    llm, backend = scripted_llm(failing=True)  # any call would fail a unit and change the records
    # the toy suite has units that fail on purpose: keep them (by default they would run again)
    run_suite(kb_run["suite"], out=kb_run["run"], pm=toy_plugin_manager(), llm=llm, retry_failed=False)
    assert backend.calls == []
    assert (kb_run["run"] / "records.jsonl").read_text() == before
    assert report.is_file()  # the report is re-rendered


def test_limit_override_runs_fewer_questions(tmp_path):
    suite = write_toy_suite(tmp_path / "suite", kb=False)
    run = run_toy(suite, tmp_path / "run", limit=2, write_report=False)
    assert {r["key"]["question_id"] for r in lines(run)} == {"q1", "q2"}


def test_resume_after_sigkill_equals_an_uninterrupted_run(tmp_path):
    reference_suite = write_toy_suite(tmp_path / "ref", kb=False, concurrency=2)
    reference = essence(lines(run_toy(reference_suite, tmp_path / "ref-run", write_report=False)))

    suite = write_toy_suite(tmp_path / "killed", kb=False, delay=0.15, concurrency=1)
    out = tmp_path / "killed-run"
    child = subprocess.Popen(
        [sys.executable, str(HERE / "runner_helpers.py"), str(suite), str(out)],
        cwd=HERE.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    records_file = out / "records.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if records_file.exists() and records_file.read_bytes().count(b"\n") >= 6:
            break
        time.sleep(0.02)
    assert child.poll() is None, f"the run ended before it could be killed: {child.stderr.read().decode()[-2000:]}"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    written = records_file.read_bytes().count(b"\n")
    assert 6 <= written < len(reference), "the kill must land mid-run"

    run_toy(suite, out, write_report=False)
    resumed = lines(out)
    keys = [
        f"{r['key']['system']}|{r['key']['condition']}|{r['key']['repeat']}|{r['key']['question_id']}" for r in resumed
    ]
    assert len(keys) == len(set(keys)), "a record was duplicated"
    assert essence(resumed) == reference
    assert len(RunStore(out).load_records()) == len(reference)


def test_builtin_systems_interventions_and_metrics_through_the_runner(tmp_path):
    """Paper 000's own plugins on the tiny KB: every unit recorded, every metric aggregated."""
    from runner_helpers import builtin_plugin_manager, builtin_reply, write_builtin_suite

    from provbench.llm import LLMClient, ScriptedBackend

    suite = write_builtin_suite(tmp_path / "suite")
    llm = LLMClient(ScriptedBackend(replies=[builtin_reply] * 500))
    run = run_suite(suite, out=tmp_path / "run", pm=builtin_plugin_manager(), llm=llm)
    records = lines(run)
    excluded = json.loads((run / "metrics.json").read_text())["excluded"]
    analysed = 2 - len(excluded)
    assert Counter(r["key"]["condition"] for r in records) == {
        "baseline": 6,
        "cited-removal": 2 * analysed,
        "full-isolation": 2 * analysed,
        "random-removal": 4 * analysed,
    }
    graphrag = next(
        r
        for r in records
        if r["key"]["system"] == "graphrag" and r["key"]["question_id"] == "q1" and r["key"]["condition"] == "baseline"
    )
    assert graphrag["status"] == "ok", graphrag["error"]
    metrics = json.loads((run / "metrics.json").read_text())
    assert not metrics["errors"] and metrics["format_version"] == 1
    names = {v["metric"] for v in metrics["values"]}
    versions = RunStore(run).read_manifest().plugin_versions
    assert versions["system:p000/graphrag"] == versions["metric:provenance"] != ""  # built-ins: provbench's version
    assert {"accuracy", "output-changed", "footprint.visited_entities"} <= names
    assert any(n.startswith("provenance.") for n in names)
    assert (run / "report.html").is_file()


@pytest.mark.parametrize("greedy_ignores_seed", [True, False])
def test_an_ablation_step_identical_to_its_baselines_is_served_from_the_cache(tmp_path, greedy_ignores_seed):
    """Each unit has its own seed; a backend whose greedy decoding never reads it (the embedded
    model's) gets an ablation's request that equals its baseline's from the cache: the agent's first
    step (instructions and question) is the same in every condition."""
    from runner_helpers import builtin_plugin_manager, builtin_reply, write_builtin_suite

    from provbench.llm import LLMClient, ScriptedBackend

    backend = ScriptedBackend(replies=[builtin_reply] * 500)
    if greedy_ignores_seed:
        backend.greedy_ignores_seed = True
    llm = LLMClient(backend, cache_dir=tmp_path / "cache")
    run = run_suite(write_builtin_suite(tmp_path / "suite"), out=tmp_path / "run", pm=builtin_plugin_manager(), llm=llm)
    agent = [r for r in lines(run) if r["key"]["system"] == "agentic-graphrag"]
    ablations = [r for r in agent if r["key"]["condition"] != "baseline"]
    assert ablations and {r["seed"] for r in agent} != {agent[0]["seed"]}  # every unit its own seed
    first_steps = {r["trace"]["llm_calls"][0]["cached"] for r in ablations}
    assert first_steps == {greedy_ignores_seed}
    assert {r["trace"]["answer"] for r in ablations} == {
        r["trace"]["answer"] for r in agent if r["key"]["condition"] == "baseline"
    }


def test_resuming_with_another_model_is_refused(tmp_path):
    from provbench.errors import UserError

    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:1])
    run = run_toy(suite, tmp_path / "run", write_report=False)
    with pytest.raises(UserError, match="holds a run with model 'scripted', not 'other/model'"):
        run_toy(suite, run, model="other/model", write_report=False)


def test_context_level_intervention_resumes_only_systems_that_can(tmp_path):
    suite = write_toy_suite(tmp_path / "suite", kb=False, questions=QUESTIONS[:2])
    suite.write_text(
        suite.read_text()
        .replace("  - toy-hide-cited\n  - toy-hide-random\n", "  - toy-drop-first\n")
        .replace("enabled: true", "enabled: false")
    )
    records = lines(run_toy(suite, tmp_path / "run", write_report=False))
    after = {r["key"]["question_id"]: r for r in records if r["key"]["condition"] == "toy-drop-first"}
    assert sorted(after) == ["q1", "q2"]  # toy-plain cannot resume: no units for it
    assert {r["key"]["system"] for r in after.values()} == {"toy-graph"}
    assert after["q1"]["trace"]["answer"] == "unknown" and after["q1"]["scores"]["output_changed"] == 1.0
    assert after["q2"]["trace"]["answer"] == "unknown"  # norland dropped; dunmere has no answer


def test_a_log_sees_the_knowledge_base_step_and_the_units_count(tmp_path):
    """A console that is not a terminal (CI, a file) gets plain lines: rich's bar and spinner
    would print nothing until the end."""
    import io

    from rich.console import Console

    out = io.StringIO()
    run_toy(
        write_toy_suite(tmp_path / "suite"),
        tmp_path / "run",
        write_report=False,
        console=Console(file=out, force_terminal=False, width=200),
    )
    text = out.getvalue()
    assert "building or reusing the knowledge base..." in text
    total = len(lines(tmp_path / "run"))
    assert f"units {total}/{total} (" in text
