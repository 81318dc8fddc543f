"""GA-RAG's prompt and answer: facts reach the prompt in rank order and in the linearisation
``[n] S | r | O (conf)``; extraction has its own token budget and a reply without a triple list is
recorded per claim; the authors' gate (coverage, consistency 0.7, grounding 0.2) returns the
baseline's answer when ``fallback_to_baseline`` is on, and only then."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from p003_helpers import PaperBackend, mini_kb, run  # noqa: F401 - mini_kb is a fixture
from provbench.model import RunRecord, UnitKey
from provbench.plugin_api import MetricContext


def fact_lines(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if line.startswith("[")]


def test_facts_reach_the_prompt_in_rank_order_as_subject_relation_object_confidence(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    trace, backend = run(GARAG, kb, questions[0], triple_confidence_threshold=None, top_facts=5)
    nodes = trace.artifacts["graph"]["nodes"]  # ranked, best first
    assert [n["final"] for n in nodes] == sorted((n["final"] for n in nodes), reverse=True)
    facts = {f.id: f for f in trace.facts}
    expected = [
        f"[{k}] {facts[n['id']].subject} | {facts[n['id']].relation} | {facts[n['id']].object} "
        f"({facts[n['id']].confidence:.2f})"
        for k, n in enumerate(nodes[:5], 1)
    ]
    [prompt] = backend.answer_prompts()
    assert fact_lines(prompt) == expected
    assert expected[0].endswith("| is | a page (0.90)")  # the 0.9 triple of the best page comes first
    assert trace.artifacts["shown"] == [n["id"] for n in nodes[:5]]


@pytest.mark.parametrize("suite", ["fever-garag.yaml", "fever-garag-sweep.yaml"])
def test_every_ga_rag_setting_of_the_shipped_suites_keeps_a_low_confidence_models_triples(mini_kb, suite):
    """The embedded model rates its triples about 0.0: every GA-RAG setting the shipped suites run
    must still build a graph and show it (with the old 0.7 filter every graph was empty)."""
    from provbench.registry import default_registry
    from provbench.suite import load_suite

    kb, questions = mini_kb
    registry = default_registry()
    settings = [ref for ref in load_suite(REPO / "suites" / suite).suite.systems if ref.name == "p003/ga-rag"]
    assert len(settings) >= 2
    for ref in settings:
        system = registry.create("system", ref.name, **ref.options)
        trace, backend = run(
            type(system), kb, questions[0], backend=PaperBackend(confidences=(0.0, 0.0)), **ref.options
        )
        assert trace.facts and len(trace.artifacts["shown"]) == min(len(trace.facts), system.options.top_facts)
        assert fact_lines(backend.answer_prompts()[0]), ref.label


def test_settings_share_a_pages_extraction_whatever_their_unit_seed(mini_kb, tmp_path):
    """Two sweep settings run as units with different seeds: the second extracts nothing anew (one
    graph for every setting), while its answer call, seeded by its unit, is its own."""
    from provbench.llm.client import LLMClient
    from provbench.plugin_api import Environment
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    backend = PaperBackend()
    llm = LLMClient(backend, cache_dir=tmp_path / "cache", max_attempts=1)
    first = GARAG().run(questions[0], Environment(view=kb.view(), llm=llm, seed=11))
    second = GARAG(gamma=0.0).run(questions[0], Environment(view=kb.view(), llm=llm, seed=12))
    cached = {(c.purpose, c.cached) for c in second.llm_calls}
    assert cached == {("triples", True), ("answer", False)}
    assert [f.model_dump() for f in first.facts] == [f.model_dump() for f in second.facts]
    assert sum(1 for r in backend.requests if "triplets" in json.dumps(r.get("schema") or {})) == sum(
        1 for c in first.llm_calls if c.purpose == "triples"
    )


def test_extraction_has_its_own_token_budget(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    _, backend = run(GARAG, kb, questions[0], triples_max_tokens=123, max_tokens=77)
    budgets = {("triplets" in json.dumps(r.get("schema") or {}), r["max_tokens"]) for r in backend.requests}
    assert budgets == {(True, 123), (False, 77)}


def test_a_reply_without_triples_is_recorded_per_claim(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    first, _ = run(GARAG, kb, questions[0])
    top_page = next(s for s in first.steps if s.kind == "retrieval").result[0]["document"]
    title = kb.view().entity(f"p:{top_page}").name
    cut = PaperBackend(extraction_text={title: '{"triplets": [{"subject": "'})
    trace, _ = run(GARAG, kb, questions[0], backend=cut, triples_max_tokens=64)
    assert trace.artifacts["extraction_failures"] == [
        {"document": top_page, "problem": "reply cut at the 64-token budget (not valid JSON)"}
    ]
    step = next(s for s in trace.steps if s.tool == "extract_triples" and s.arguments["document"] == top_page)
    assert "64-token budget" in step.error
    record = RunRecord(key=UnitKey(question_id=questions[0].id, system="ga-rag"), trace=trace)
    scores = TableOne(judge=False, ragas=False).score(record, questions[0], MetricContext(view=kb.view()))
    assert scores["extraction_failures"] == 1.0 and first.artifacts["extraction_failures"] == []
    prose = PaperBackend(extraction_text={title: "Here are the triples you asked for."}, truncated=False)
    trace, _ = run(GARAG, kb, questions[0], backend=prose)
    assert trace.artifacts["extraction_failures"][0]["problem"].startswith("reply is not JSON")


GRAPH = {"label": "REFUTES", "explanation": "No.", "cited": [1]}  # names no fact: grounding 0
PASSAGES = {"label": "SUPPORTS", "explanation": "The passage says so.", "cited": [1]}


def test_fallback_on_returns_the_baselines_answer_under_five_facts(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG, VanillaRAG

    kb, questions = mini_kb
    backend = PaperBackend(graph_reply=GRAPH, passages_reply=PASSAGES)
    trace, _ = run(GARAG, kb, questions[0], backend=backend, fallback_to_baseline=True, top_facts=4)
    baseline, _ = run(VanillaRAG, kb, questions[0], backend=PaperBackend(passages_reply=PASSAGES))
    assert trace.answer == "SUPPORTS" and trace.artifacts["answer_source"] == "baseline"
    assert trace.artifacts["explanation"] == "[Graph coverage low (4 facts)] The passage says so."
    assert trace.artifacts["prompt_digests"] == baseline.artifacts["prompt_digests"]  # the baseline's prompt
    assert [p.split(":", 1)[0] for p in backend.answer_prompts()] == ["Retrieved passages"]  # no graph call
    assert trace.citations.facts == [] and trace.citations.text_units == baseline.citations.text_units
    assert trace.artifacts["gate"]["facts_shown"] == 4 and trace.artifacts["gate"]["fallback"] is True


def test_fallback_off_keeps_ga_rags_answer_whatever_the_gate_says(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    backend = PaperBackend(graph_reply=GRAPH, passages_reply=PASSAGES)
    trace, _ = run(GARAG, kb, questions[0], backend=backend, top_facts=4)
    assert trace.answer == "REFUTES" and trace.artifacts["answer_source"] == "graph"
    assert trace.artifacts["explanation"] == "[Graph coverage low (4 facts)] No."
    assert trace.artifacts["gate"]["grounding"] == 0.0 and trace.artifacts["gate"]["fallback"] is False
    assert trace.citations.facts == [trace.artifacts["shown"][0]]


def naming_every_fact(prompt: str) -> dict:
    """A graph answer whose explanation repeats the facts shown: grounding 1."""
    return {"label": "REFUTES", "explanation": " ".join(fact_lines(prompt)), "cited": [1]}


@pytest.mark.parametrize(
    "high, graph_reply, expected, note",
    [
        (0.9, naming_every_fact, "graph", None),  # 0.5 x 0.9 + 0.3 = 0.75 >= 0.7
        (0.6, naming_every_fact, "baseline", "[Warning: Low consistency (0.60)]"),  # 0.5 x 0.6 + 0.3 = 0.60 < 0.7
        (0.9, GRAPH, "baseline", "[Low grounding 0.00]"),  # consistent; names no fact
    ],
)
def test_the_gate_checks_consistency_then_grounding(mini_kb, high, graph_reply, expected, note):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    backend = PaperBackend(confidences=(high, high), graph_reply=graph_reply, passages_reply=PASSAGES)
    trace, _ = run(GARAG, kb, questions[0], backend=backend, fallback_to_baseline=True, low_coverage_facts=1)
    gate = trace.artifacts["gate"]
    assert trace.artifacts["answer_source"] == expected
    assert gate["consistency"] == pytest.approx(0.5 * high + 0.3)
    if expected == "graph":
        assert trace.answer == "REFUTES" and gate["grounding"] == 1.0 and trace.citations.facts
    else:
        assert trace.artifacts["explanation"] == f"{note} The passage says so." and trace.answer == "SUPPORTS"
        assert trace.citations.facts == [] and gate["reason"] == note


def test_consistency_and_grounding_scores_by_hand():
    from provbench_plugins.papers.p003_ga_rag.gate import consistency_score, grounding_score, inferences
    from provbench_plugins.papers.p003_ga_rag.graph import FactNode

    def fact(i, s, r, o, conf=1.0):
        return FactNode(f"f{i}", s, r, o, conf, "d", 1, 0.5)

    chain = [
        fact(1, "Veel", "located_in", "Vallonia"),
        fact(2, "Vallonia", "located in", "Norden"),
        fact(3, "Ann", "born in", "Veel", 0.4),
    ]
    assert inferences(chain) == 1  # Veel located in Norden, through Vallonia
    assert inferences([*chain, fact(4, "veel", "near", "norden")]) == 0  # already linked
    assert consistency_score(chain) == pytest.approx(0.5 * 0.8 + 0.3 + 0.2 * (1 / 15))
    assert consistency_score([]) == 0.0
    assert grounding_score(chain, "Ann was born in Veel.") == pytest.approx(2 / 3)  # f1 (Veel), f3 (Ann, Veel)
    assert grounding_score(chain, "") == 0.0


def test_the_gates_boundaries_are_the_authors_a_score_at_the_bar_answers_from_the_graph():
    """The authors answer from the graph when consistency >= 0.7 and facts shown >= 5, so exactly
    0.7 and exactly 5 pass, and one step under each fails (``<`` vs ``<=`` is pinned)."""
    from provbench_plugins.papers.p003_ga_rag.gate import Gate, pre_answer_reason

    assert pre_answer_reason(Gate(facts_shown=5, consistency=0.7), 5, 0.7) is None
    assert pre_answer_reason(Gate(facts_shown=5, consistency=0.699999), 5, 0.7) == "[Warning: Low consistency (0.70)]"
    assert pre_answer_reason(Gate(facts_shown=4, consistency=0.7), 5, 0.7) == "[Graph coverage low (4 facts)]"
