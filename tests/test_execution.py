"""The scheduler: interventions start as soon as their own baseline (and the exclusion step's
reference baseline) is recorded, and the records do not depend on the order units ran in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runner_helpers import run_toy, write_toy_suite  # noqa: E402
from test_runner import essence, lines  # noqa: E402


def test_interventions_start_before_the_last_baseline_and_give_the_same_records(tmp_path):
    one = run_toy(write_toy_suite(tmp_path / "one", concurrency=1), tmp_path / "run-one", write_report=False)
    records = lines(one)
    conditions = [r["key"]["condition"] for r in records]
    last_baseline = max(i for i, c in enumerate(conditions) if c == "baseline")
    first_intervention = conditions.index(next(c for c in conditions if c != "baseline"))
    assert first_intervention < last_baseline  # no barrier between the two phases
    # an intervention never precedes its own baseline or the reference system's baseline
    seen: set[tuple[str, str]] = set()
    for r in records:
        key = r["key"]
        if key["condition"] == "baseline":
            seen.add((key["question_id"], key["system"]))
        else:
            assert (key["question_id"], key["system"]) in seen and (key["question_id"], "toy-plain") in seen
    # q2 is answered by the reference system: excluded, so no intervention unit for it
    assert not [r for r in records if r["key"]["question_id"] == "q2" and r["key"]["condition"] != "baseline"]
    many = run_toy(write_toy_suite(tmp_path / "many", concurrency=6), tmp_path / "run-many", write_report=False)
    assert essence(lines(many)) == essence(records)
    assert json.loads((one / "metrics.json").read_text())["excluded"] == ["q2"]


def test_a_suite_can_put_its_knowledge_base_in_either_graph_store(tmp_path, graph_store):
    """``knowledge_base.graph_store`` reaches any builder, and both databases give the same records
    (the other one runs in a child process: the two cannot share a process)."""
    other = "ladybug" if graph_store == "kuzu" else "kuzu"
    runs = {}
    for store in (graph_store, other):
        suite = write_toy_suite(tmp_path / store, concurrency=4)
        suite.write_text(suite.read_text().replace("directory: kb", f"directory: kb\n  graph_store: {store}"))
        out = tmp_path / f"run-{store}"
        if store == graph_store:
            run_toy(suite, out, write_report=False)
        else:
            subprocess.run([sys.executable, str(HERE / "runner_helpers.py"), str(suite), str(out)], check=True)
        assert json.loads((tmp_path / store / "kb" / "kb.json").read_text())["graph_store"] == store
        runs[store] = essence(lines(out))
    assert runs[graph_store] == runs[other]


def test_pictures_are_drawn_while_the_run_executes_and_reused_by_the_report(tmp_path):
    run_dir = run_toy(write_toy_suite(tmp_path / "suite"), tmp_path / "run")
    drawn = {p.name: p.read_text() for p in (run_dir / "pictures").glob("*.svg")}
    assert drawn and any(svg.startswith("<svg") or "<svg" in svg[:300] for svg in drawn.values())
    pages = "".join(p.read_text() for p in (run_dir / "pages").glob("*.html"))
    assert all(svg.split("<svg", 1)[1][:200] in pages for svg in drawn.values() if "<svg" in svg)


def test_the_costliest_chains_start_first(tmp_path):
    """Baselines are ordered by ``System.expected_llm_calls`` plus what they unlock: the agent
    (max_steps 3, and its interventions after it) before the one-call systems, question by question."""
    from runner_helpers import builtin_plugin_manager, write_builtin_suite

    from provbench.runner import run_suite
    from provbench.testing import schema_following_llm

    suite = write_builtin_suite(tmp_path / "suite")
    suite.write_text(suite.read_text() + "concurrency: 1\n")
    out = tmp_path / "run"
    run_suite(
        suite,
        out=out,
        pm=builtin_plugin_manager(),
        llm=schema_following_llm(cache_dir=out / "cache"),
        write_report=False,
    )
    order = [(r["key"]["system"], r["key"]["question_id"]) for r in lines(out)]
    questions = sorted({q for _, q in order})
    assert len(questions) >= 2
    assert order[: len(questions)] == [("agentic-graphrag", q) for q in questions]
