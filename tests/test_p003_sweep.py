"""The sweep's prompt check (``p003/prompt-diversity``): distinct sets of facts shown per pair of
settings by hand, order ignored, a check that fails when for at least half the claims every setting
showed one set of facts, or when every graph is empty, and the shipped sweep suite on the
schema-following LLM, whose settings do show different facts."""

from __future__ import annotations

import json
import logging

import pytest

from conftest import REPO
from provbench.model import BASELINE, Fact, RunRecord, Trace, UnitKey
from provbench.plugin_api import Results

SWEEP = REPO / "suites" / "fever-garag-sweep.yaml"


def record(system: str, question: str, *shown: str, condition: str = BASELINE) -> RunRecord:
    """A GA-RAG unit that showed the facts named ``shown`` (each "x" is the fact x | r | o), in order."""
    facts = [Fact(id=f"f{k}", subject=name, relation="r", object="o") for k, name in enumerate(shown)]
    trace = Trace(
        question_id=question,
        system=system,
        facts=facts,
        artifacts={"shown": [f.id for f in facts], "prompt_digests": [f"{system}{question}"]},
    )
    return RunRecord(key=UnitKey(question_id=question, system=system, condition=condition), trace=trace)


# claims 1-2: every setting showed one set of facts; 3: a and b agree, c differs; 4: all differ
RECORDS = [
    record("a", "1", "p"),
    record("b", "1", "p"),
    record("c", "1", "p"),
    record("a", "2", "q", "w"),
    record("b", "2", "w", "q"),
    record("c", "2", "q", "w"),  # order alone
    record("a", "3", "r"),
    record("b", "3", "r"),
    record("c", "3", "s"),
    record("a", "4", "t"),
    record("b", "4", "u"),
    record("c", "4", "v"),
    record("a", "1", "x", condition="cited-removal"),
]  # interventions are not compared


def test_distinct_shares_per_pair_and_identical_claims_by_hand():
    """Every prompt here differs (each unit's digest is its own); the facts shown decide."""
    from provbench_plugins.papers.p003_ga_rag.diversity import diversity

    found = diversity(RECORDS, ["a", "b", "c"])
    assert found.pairs == {("a", "b"): (1, 4), ("a", "c"): (2, 4), ("b", "c"): (2, 4)}
    assert found.identical == ["1", "2"] and found.claims == 4
    assert found.passed is False and found.verdict().startswith(
        "FAILED: all 3 settings showed one identical set of facts for 2 of 4 claims"
    )
    assert diversity(RECORDS[6:12], ["a", "b", "c"]).passed is True  # 0 of 2 claims identical


def test_the_check_fails_when_every_graph_is_empty_even_if_the_prompts_differ():
    from provbench_plugins.papers.p003_ga_rag.diversity import diversity

    empty = [record(s, q) for q in "123" for s in "ab"]  # no fact shown; digests differ per unit
    found = diversity(empty, ["a", "b"], fail_share=1.0)
    assert found.passed is False and found.empty == 3
    assert found.verdict().startswith("FAILED: every local graph was empty")
    assert diversity([*empty, record("a", "4", "x"), record("b", "4", "y")], ["a", "b"], fail_share=1.0).passed


def test_the_metric_reports_pairs_and_fails_its_check_with_a_warning(caplog):
    from provbench_plugins.papers.p003_ga_rag.diversity import PromptDiversity

    results = Results(records=RECORDS, questions={})
    with caplog.at_level(logging.WARNING):
        values = {(v.metric, v.system): v for v in PromptDiversity().aggregate(results)}
    assert values[("prompts.distinct_share", "a vs b")].value == 0.25
    assert values[("prompts.distinct_share", "b vs c")].denominator == 4
    assert values[("prompts.identical_claims", "all settings")].detail["claims"] == ["1", "2"]
    check = values[("prompts.check", "all settings")]
    assert check.value == 0.0 and "FAILED" in check.note and "FAILED" in caplog.text
    lenient = {v.metric: v for v in PromptDiversity(fail_share=0.75).aggregate(results)}
    assert lenient["prompts.check"].value == 1.0
    alone = PromptDiversity().aggregate(Results(records=RECORDS[:1], questions={}))
    assert alone[0].value is None and "fewer than two" in alone[0].note


def test_settings_with_a_graph_are_compared_by_default():
    from provbench_plugins.papers.p003_ga_rag.diversity import graph_systems

    rag = RunRecord(
        key=UnitKey(question_id="1", system="vanilla-rag"),
        trace=Trace(question_id="1", system="vanilla-rag", artifacts={"prompt_digests": ["z"]}),
    )
    assert graph_systems([*RECORDS, rag]) == ["a", "b", "c"]


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    from provbench.runner import run_suite
    from provbench.testing import schema_following_llm

    root = tmp_path_factory.mktemp("p003sweep")
    return run_suite(SWEEP, limit=6, out=root / "run", llm=schema_following_llm(cache_dir=root / "llm"))


def test_the_shipped_sweep_sends_different_prompts_per_setting(sweep_run):
    from provbench.run_store import RunStore

    metrics = {(v["metric"], v["system"]): v for v in json.loads((sweep_run / "metrics.json").read_text())["values"]}
    check = metrics[("prompts.check", "all settings")]
    assert check["value"] == 1.0, check["note"]
    pairs = [v for (m, _), v in metrics.items() if m == "prompts.distinct_share"]
    assert len(pairs) == 9 * 8 // 2 and all(v["denominator"] == 6 for v in pairs)
    assert sum(v["value"] > 0 for v in pairs) > len(pairs) / 2
    records = [r for r in RunStore(sweep_run).load_records().values() if r.key.system != "vanilla-rag"]
    assert sum(bool(r.trace.facts) for r in records) > len(records) / 2
    html = (sweep_run / "report.html").read_text()
    assert "do the sweep&#39;s settings change the facts shown?" in html and "Check passed" in html
