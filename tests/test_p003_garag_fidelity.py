"""Paper 003 as the paper and the authors' code say: top-K pages with per-page extraction, the
authors' 0.6 triple filter (a confidence at the threshold is kept), the low-coverage meta-note,
token-level hallucination against the same pages for both systems, response time without the LLM
cache, no gold pages injected into the KB, the paper's delta sign, and no evidence scores from
BEIR corpora."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import REPO
from p003_helpers import MINI, PaperBackend, mini_kb, run  # noqa: F401 - mini_kb is a fixture
from provbench.llm.backends import reply
from provbench.llm.client import LLMClient
from provbench.model import BASELINE, Fact, LLMCall, Question, RunRecord, Trace, UnitKey
from provbench.plugin_api import MetricContext, Results


def page_sentences(view, page: str) -> list[str]:
    return [u.text.split(": ", 1)[1] for u in view.text_units(view.text_units_of(f"p:{page}"))]


def test_ga_rag_extracts_once_per_retrieved_page(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    trace, backend = run(GARAG, kb, questions[0], triple_confidence_threshold=None)
    retrieval = next(s for s in trace.steps if s.kind == "retrieval").result
    pages = [d["document"] for d in retrieval]
    assert 1 < len(pages) <= 4 and len(set(pages)) == len(pages)
    assert [d["rank"] for d in retrieval] == list(range(1, len(pages) + 1))
    assert len(backend.passages) == len(pages)  # one extraction call per page, not per sentence
    for page, passage in zip(pages, backend.passages):
        assert all(sentence in passage for sentence in page_sentences(kb.view(), page))
    nodes = trace.artifacts["graph"]["nodes"]
    assert {n["document"] for n in nodes} == set(pages)
    assert all(n["rank"] == pages.index(n["document"]) + 1 for n in nodes)
    for fact in trace.facts:  # evidence stays at sentence level, within the fact's page (if any sentence
        page = next(n["document"] for n in nodes if n["id"] == fact.id)  # restates it: test_p003_sources.py)
        assert all(s.rsplit(":", 1)[0] == f"s:{page}" for s in fact.source_ids)
    assert {u.rsplit(":", 1)[0][2:] for u in trace.read_text_units} == set(pages)


def test_vanilla_rag_shows_the_pages_sentences(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import VanillaRAG

    kb, questions = mini_kb
    trace, _ = run(VanillaRAG, kb, questions[0])
    retrieval = next(s for s in trace.steps if s.kind == "retrieval").result
    pages = [d["document"] for d in retrieval]
    assert len(trace.read_text_units) == sum(len(page_sentences(kb.view(), p)) for p in pages)
    assert trace.citations.text_units == retrieval[0]["sentences"][:1]  # passage [1]: the top page's first
    hits = [r.id for r in trace.retrieved]
    assert trace.read_text_units[: len(hits)] == hits  # read order: best-matching sentences first


def test_triple_filter_drops_weak_triples_and_keeps_one_at_the_threshold(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    kept, _ = run(GARAG, kb, questions[0])  # the authors' 0.6
    every, _ = run(GARAG, kb, questions[0], triple_confidence_threshold=None)
    assert kept.facts and all(f.confidence >= 0.6 for f in kept.facts)
    assert len(every.facts) == 2 * len(kept.facts)
    assert {t["confidence"] for t in kept.artifacts["filtered"]} == {0.5}
    assert kept.artifacts["graph"]["params"]["triple_confidence_threshold"] == 0.6
    at_bar = PaperBackend(confidences=(0.9, 0.6))  # exactly the threshold: kept (the authors' >=)
    both, _ = run(GARAG, kb, questions[0], backend=at_bar)
    assert len(both.facts) == len(every.facts) and not both.artifacts["filtered"]


def test_low_coverage_meta_note(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, questions = mini_kb
    noted, _ = run(GARAG, kb, questions[0], low_coverage_facts=100)
    n = len(noted.facts)
    assert noted.artifacts["explanation"] == f"[Graph coverage low ({n} facts)] It says so."
    plain, _ = run(GARAG, kb, questions[0], low_coverage_facts=0)
    assert plain.artifacts["explanation"] == "It says so." and "meta_note" not in plain.artifacts


def claim() -> Question:
    return Question(
        id="1",
        question="Ann was born in a town of Vallonia.",
        answer="SUPPORTS",
        metadata={"evidence": [[["Ann", 1]]], "evidence_pages": ["Ann"]},
    )


def graph_trace(explanation: str) -> Trace:
    trace = Trace(
        question_id="1",
        system="ga-rag",
        answer="SUPPORTS",
        wall_time_s=1.0,
        facts=[Fact(id="f1", subject="Ann", relation="born in", object="Veel", confidence=0.9, source_ids=["s:Ann:1"])],
    )
    trace.artifacts.update({"shown": ["f1"], "graph": {}, "explanation": explanation})
    return trace


def record_of(trace: Trace) -> RunRecord:
    return RunRecord(key=UnitKey(question_id="1", system=trace.system, condition=BASELINE), trace=trace)


class PagesView:
    """The one call Table I's hallucination rate makes of a view: the text of sentences read."""

    TEXTS = {
        "s:Ann:1": "Ann: Ann was born in Veel.",
        "s:Veel:0": "Veel: Veel is a town in Vallonia.",
        "s:Bob:0": "Bob: Bob plays the harp.",
    }

    def text_units(self, ids):
        from types import SimpleNamespace

        return [SimpleNamespace(id=i, text=self.TEXTS[i]) for i in ids if i in self.TEXTS]


def test_hallucination_is_token_level_after_stripping_meta_prefixes():
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne
    from provbench_plugins.papers.p003_ga_rag.tokens import strip_meta

    text = "[Graph coverage low (1 facts)] Based on the context, Ann was born in Veel [1], a town in Zorland."
    assert strip_meta(text).startswith("Ann was born in Veel")
    trace = graph_trace(text)
    trace.read_text_units = ["s:Ann:1"]
    scores = TableOne(judge=False, ragas=False).score(record_of(trace), claim(), MetricContext(view=PagesView()))
    # content tokens: ann, born, veel, town, zorland; only "zorland" is in neither the pages nor the claim
    assert scores["hallucination_rate"] == pytest.approx(1 / 5)
    assert scores["hallucination_rate_shown"] == pytest.approx(1 / 5)  # the fact "Ann born in Veel"
    assert scores.get("factual_grounding") is None  # no RAGAS: the hallucination rate does not come from it


def test_hallucination_rate_scores_both_systems_against_the_same_pages():
    """One explanation, two systems that read the same pages: one rate (it used to be scored
    against GA-RAG's few facts but against every passage the baseline read)."""
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne

    explanation = "Ann was born in Veel, a town of Vallonia; Bob plays the harp."
    pages = ["s:Ann:1", "s:Veel:0", "s:Bob:0"]
    ga = graph_trace(explanation)
    ga.read_text_units = list(pages)
    rag = Trace(
        question_id="1",
        system="vanilla-rag",
        answer="SUPPORTS",
        wall_time_s=1.0,
        read_text_units=list(pages),
        artifacts={"explanation": explanation},
    )
    metric, context = TableOne(judge=False, ragas=False), MetricContext(view=PagesView())
    ga_scores, rag_scores = (
        metric.score(record_of(ga), claim(), context),
        metric.score(record_of(rag), claim(), context),
    )
    assert ga_scores["hallucination_rate"] == rag_scores["hallucination_rate"] == 0.0
    # against what each was shown, they differ: GA-RAG saw one fact, not the harp
    assert rag_scores["hallucination_rate_shown"] == 0.0 and ga_scores["hallucination_rate_shown"] > 0.2


def test_baseline_has_no_graph_only_scores():
    from provbench_plugins.papers.p003_ga_rag.metrics import GRAPH_ONLY, TableOne

    rag = Trace(
        question_id="1",
        system="vanilla-rag",
        answer="SUPPORTS",
        wall_time_s=1.0,
        read_text_units=["s:Ann:1", "s:Bob:0"],
        artifacts={"explanation": "Ann was born in Veel."},
    )
    record = record_of(rag)
    scores = TableOne(judge=False, ragas=False).score(record, claim(), MetricContext())
    assert all(scores.get(k) is None for k in GRAPH_ONLY)
    assert "graph-only" in record.score_notes["context_precision"]


class SlowBackend:
    model_id = "slow"

    def config(self) -> dict:
        return {}

    def complete(self, request: dict) -> dict:
        time.sleep(0.2)
        return reply("an answer")


def test_response_time_counts_cache_hits_at_their_original_latency(tmp_path):
    from provbench_plugins.papers.p003_ga_rag.metrics import uncached_seconds

    llm = LLMClient(SlowBackend(), cache_dir=tmp_path / "cache", max_attempts=1)
    fresh, again = Trace(question_id="1", system="s"), Trace(question_id="1", system="s")
    llm.chat([{"role": "user", "content": "hi"}], trace=fresh)
    llm.chat([{"role": "user", "content": "hi"}], trace=again)
    first, hit = fresh.llm_calls[0], again.llm_calls[0]
    assert not first.cached and hit.cached and hit.latency_s < 0.1
    assert hit.original_latency_s == pytest.approx(first.latency_s, abs=1e-3)
    again.wall_time_s = 0.05
    assert uncached_seconds(again) == pytest.approx(0.05 - hit.latency_s + hit.original_latency_s, abs=1e-3)
    old_entry = Trace(
        question_id="1", system="s", wall_time_s=0.05, llm_calls=[LLMCall(model="m", cached=True, latency_s=0.001)]
    )
    assert uncached_seconds(old_entry) is None  # a hit whose first latency was never kept


def test_fever_wiki_does_not_inject_gold_pages():
    from provbench_plugins.datasets.fever.loader import FeverLoader
    from provbench_plugins.kb_builders.fever.builder import FeverWikiOptions, choose_pages

    questions = FeverLoader().load(MINI)
    source = questions[0].metadata["pages"]
    gold = {p for q in questions for p in q.metadata["evidence_pages"]}
    default = choose_pages(questions, source, FeverWikiOptions())
    assert gold - set(default), "fever-mini has gold pages no claim names"
    assert not gold - set(choose_pages(questions, source, FeverWikiOptions(include_gold_pages=True)))


def test_delta_follows_the_papers_sign():
    from provbench_plugins.papers.p003_ga_rag.report import delta

    # the paper's +13.3% on the authors' unrounded means (comparison_results_20251125_233817.json)
    assert delta(0.1696148794446008, 0.14700394033211373, "hallucination_rate").text == "+13.3%"
    assert delta(1.769, 12.442, "response_time").text == "+603.3%"
    assert delta(0.400, 0.415, "accuracy").text == "+3.7%"


def test_evidence_measures_are_not_scored_on_a_beir_corpus(tmp_path):
    from provbench_plugins.datasets.fever.metric import FeverMetric
    from provbench_plugins.datasets.fever.pages import is_beir_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"_id": "Ann", "title": "Ann", "text": "Ann is a singer. She was born in Veel."}) + "\n"
    )
    assert is_beir_corpus(corpus) and not is_beir_corpus(REPO / "datasets" / "fever-mini" / "wiki-pages")
    question = claim().model_copy(update={"metadata": {**claim().metadata, "pages": str(corpus)}})
    trace = Trace(question_id="1", system="s", answer="SUPPORTS", read_text_units=["s:Ann:1"])
    record = record_of(trace)
    record.status = "ok"
    scores = FeverMetric().score(record, question, MetricContext())
    assert scores["label_correct"] == 1.0
    assert scores["evidence_recall"] is None and scores["fever_strict"] is None
    assert "BEIR" in record.score_notes["evidence_recall"]
    values = {v.metric: v for v in FeverMetric().aggregate(Results(records=[record], questions={"1": question}))}
    assert values["fever.label_accuracy"].value == 1.0
    assert values["fever.fever_score"].value is None and "BEIR" in values["fever.evidence_f1"].note


def test_table1_caption_names_gold_page_injection():
    from provbench.model import RunManifest
    from provbench.results.data import RunData
    from provbench_plugins.papers.p003_ga_rag.report import table1_caption

    def run_of(kb: dict) -> RunData:
        manifest = RunManifest(run_id="r", suite_name="s", suite={"knowledge_base": kb})
        return RunData(Path("."), manifest, {"1": claim()}, [], {"values": []})

    injected = run_of({"builder": "fever-wiki", "options": {"include_gold_pages": True}})
    assert "Deviation" in table1_caption(injected) and "include_gold_pages" in table1_caption(injected)
    assert "Deviation" not in table1_caption(run_of({"builder": "fever-wiki"}))
