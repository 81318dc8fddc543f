"""Table I's rows as one metric, ``p003/table1`` (written definitions: docs/papers/p003.md;
how each compares with the authors' released evaluation: :mod:`.rows`).

Per record (``record.scores``):
  no LLM, every record:
    ``response_time``      seconds the system would have taken without the LLM cache: its wall
                           time, less what its cache hits took, plus what their replies first took
                           to produce (None when a hit's entry predates that record);
    ``wall_time``          the system's wall time as it ran (cache hits included);
    ``hallucination_rate`` token-level (section VI): share of the explanation's content tokens,
                           after stripping meta-prefixes, found nowhere in the retrieved pages (the
                           sentences the system read) or the claim: the same context for every
                           system (:mod:`.tokens`);
    ``hallucination_rate_shown``  the same against what the system was shown (GA-RAG: the facts;
                           the baseline: the passages, so for it both rates are equal);
    ``hallucination_rate_authors``  the authors' definition (:mod:`.authors_rate`) of the answer as
                           recorded ("I don't know." for an abstention, else the explanation with
                           its gate note) against the retrieved pages; Table I's row shows it with
                           the option ``hallucination_row: authors``;
  graph systems only (a system without a local graph has none; the paper gives its baseline none):
    ``graph_facts``        facts in the local graph; ``empty_graph`` 1 when there are none;
    ``extraction_failures`` documents whose extraction reply held no triple list;
    ``graph_coverage``     share of the gold evidence pages that some fact of the local graph
                           comes from (None for NOT ENOUGH INFO claims, which have no gold);
    ``graph_completeness`` 1 when the sentences behind the graph's facts hold a whole gold
                           evidence set, else 0 (None when the pages came from a BEIR corpus,
                           whose sentence numbers are not FEVER's);
    ``context_precision``  share of the facts shown to the generator that come from a gold page;
  LLM-judged (records of the ``conditions`` listed, default the baseline only):
    ``consistency_score`` / ``logical_consistency``  a judge's 0-1 score that the explanation
                           supports the label, and 1 when it reaches ``judge_cutoff`` (provbench's
                           choice; GA-RAG's own thresholds are its options, see :mod:`.gate`);
    ``coherence``          the judge's 0-1 score of the explanation's clarity and coherence;
    ``factual_grounding``  graph-only: RAGAS faithfulness of the explanation against the facts shown.
Factual accuracy is the record's graded ``accuracy`` (the loader's, 0.3 for "I don't know").
A GA-RAG system whose graphs are empty for most claims is warned about (run log, metric note,
report): it then tests the prompt, not the graph.
"""

from __future__ import annotations

import logging
import math
from statistics import fmean
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import BASELINE, Question, RunRecord, Trace
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results, parse_options

from provbench_plugins.datasets.fever.pages import evidence_of, is_beir_corpus

from .authors_rate import authors_hallucination_rate
from .tokens import strip_meta, unsupported_share

log = logging.getLogger(__name__)

STRUCTURE = (
    "graph_coverage",
    "graph_completeness",
    "context_precision",
    "response_time",
    "wall_time",
    "hallucination_rate",
    "hallucination_rate_shown",
    "hallucination_rate_authors",
    "graph_facts",
    "empty_graph",
    "extraction_failures",
)
HALLUCINATION = ("hallucination_rate", "hallucination_rate_shown", "hallucination_rate_authors")
GRAPH_ONLY = (
    "graph_coverage",
    "graph_completeness",
    "context_precision",
    "factual_grounding",
    "graph_facts",
    "empty_graph",
    "extraction_failures",
)
JUDGED = ("consistency_score", "logical_consistency", "coherence", "factual_grounding")
NO_GRAPH = "graph-only measure: this system builds no local graph (the paper gives the baseline none)"
EMPTY_GRAPHS_WARN = 0.5  # warn when more than this share of a GA-RAG system's claims has no graph fact

JUDGE_PROMPT = (
    "A fact-checking system labelled a claim and explained its label.\n"
    'Claim: "{claim}"\nLabel: {label}\nExplanation: "{explanation}"\n\n'
    "Rate from 0 to 1: consistency = how well the explanation supports exactly this label "
    "(1: it argues for it, 0: it argues for another label or contradicts itself); coherence = how "
    "clear, on-topic and well-formed the explanation is. Reply with JSON."
)
JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "consistency": {"type": "number", "minimum": 0, "maximum": 1},
        "coherence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["consistency", "coherence"],
    "additionalProperties": False,
}


class TableOneOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge_cutoff: float = Field(
        0.5,
        ge=0,
        le=1,
        description="judge score at or above which an explanation "
        "counts as supporting its label (provbench's choice; the paper defines no judge)",
    )
    hallucination_row: Literal["provbench", "authors"] = Field(
        "provbench",
        description="the definition Table I's hallucination row shows: provbench's token-level rate "
        "(not comparable with the paper) or the authors' evaluate_hallucination_rate",
    )
    judge: bool = True
    ragas: bool = True
    conditions: list[str] | str = Field(default_factory=lambda: [BASELINE], description="'all' or condition names")
    max_tokens: int = Field(512, ge=64)


def has_graph(trace: Trace) -> bool:
    return isinstance(trace.artifacts.get("shown"), list)


def context_items(trace: Trace) -> list[tuple[str, str]]:
    """(source sentence id, text) of each item shown to the generator; for a system without a
    graph the text is the sentence id (:func:`context_texts` reads the sentences)."""
    if has_graph(trace):
        facts = [trace.fact(i) for i in trace.artifacts["shown"]]
        return [
            (f.source_ids[0] if f.source_ids else "", f"{f.subject} {f.relation} {f.object}.")
            for f in facts
            if f is not None
        ]
    return [(t, t) for t in trace.read_text_units]


def page_texts(trace: Trace, view: Any) -> list[str]:
    """The retrieved pages as the system read them: every sentence in ``read_text_units``."""
    return [u.text for u in view.text_units(trace.read_text_units)] if view is not None else []


def context_texts(trace: Trace, view: Any) -> list[str]:
    """The texts shown to the generator: the linearised facts, or the passages read."""
    if has_graph(trace):
        return [text for _, text in context_items(trace)]
    return page_texts(trace, view)


def hallucination_scores(trace: Trace, question: Question, explanation: str, view: Any) -> dict[str, float | None]:
    """The token-level rate against the retrieved pages (every system alike) and against what the
    system was shown; None without an explanation, or (pages) without a view to read them."""
    pages = page_texts(trace, view)
    return {
        "hallucination_rate": unsupported_share(explanation, [*pages, question.question])[0] if pages else None,
        "hallucination_rate_shown": unsupported_share(explanation, [*context_texts(trace, view), question.question])[0],
        "hallucination_rate_authors": authors_hallucination_rate(authors_answer(trace), pages) if pages else None,
    }


def authors_answer(trace: Trace) -> str:
    """The answer as the authors' pipeline would have written it: "I don't know." for an
    abstention (their prompt's wording), else the explanation with its gate note."""
    explanation = str(trace.artifacts.get("explanation") or "")
    return "I don't know." if trace.outcome == "abstained" else explanation


def uncached_seconds(trace: Trace) -> float | None:
    """Wall time with every cache hit replaced by its reply's original latency (None if unknown)."""
    if trace.wall_time_s is None:
        return None
    saved = 0.0
    for call in trace.llm_calls:
        if call.cached:
            if call.original_latency_s is None:
                return None
            saved += call.original_latency_s - call.latency_s
    return round(trace.wall_time_s + saved, 4)


def graph_health(trace: Trace) -> dict[str, float | None]:
    if not has_graph(trace):
        return {"graph_facts": None, "empty_graph": None, "extraction_failures": None}
    return {
        "graph_facts": float(len(trace.facts)),
        "empty_graph": float(not trace.facts),
        "extraction_failures": float(len(trace.artifacts.get("extraction_failures") or [])),
    }


def structure_scores(trace: Trace, question: Question) -> dict[str, float | None]:
    scores: dict[str, float | None] = {
        "response_time": uncached_seconds(trace),
        "wall_time": trace.wall_time_s,
        **graph_health(trace),
    }
    gold_pages = set(question.metadata.get("evidence_pages", []))
    if not gold_pages or not has_graph(trace):
        return {**scores, "graph_coverage": None, "graph_completeness": None, "context_precision": None}
    gold_sets = [[tuple(pair) for pair in group] for group in question.metadata.get("evidence", [])]
    graph_sentences = {evidence_of(s) for f in trace.facts for s in f.source_ids} - {None}
    graph_pages = {page for page, _ in graph_sentences}
    items = [evidence_of(source) for source, _ in context_items(trace)]
    scores["graph_coverage"] = len(gold_pages & graph_pages) / len(gold_pages)
    scores["graph_completeness"] = (
        None if beir_pages(question) else float(any(set(g) <= graph_sentences for g in gold_sets if g))
    )
    scores["context_precision"] = (sum(1 for e in items if e and e[0] in gold_pages) / len(items)) if items else None
    return scores


def beir_pages(question: Question) -> bool:
    pages = question.metadata.get("pages")
    return bool(pages) and is_beir_corpus(pages)


def structure_notes(record: RunRecord, question: Question, scores: dict[str, float | None]) -> None:
    trace = record.trace
    if trace is not None and not has_graph(trace):
        record.score_notes.update({k: NO_GRAPH for k in GRAPH_ONLY})
    elif beir_pages(question) and question.metadata.get("evidence_pages"):
        record.score_notes["graph_completeness"] = "pages from a BEIR corpus: its sentence numbers are not FEVER's"
    if scores.get("response_time") is None and scores.get("wall_time") is not None:
        record.score_notes["response_time"] = (
            "a cached LLM reply has no recorded original latency (a cache "
            "written before it was kept); clear the cache to time the run"
        )


class TableOne(Metric):
    """Paper 003's Table I rows: consistency, coherence, grounding, hallucination, graph measures, time."""

    name = "table1"
    judged_scores = JUDGED

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(TableOneOptions, options, f"metric {self.name!r}")

    def applies_to(self, record: RunRecord) -> bool:
        wanted = self.options.conditions
        return wanted == "all" or record.key.condition in wanted

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        if record.trace is None:
            return {}
        scores = structure_scores(record.trace, question)
        explanation = strip_meta(str(record.trace.artifacts.get("explanation") or ""))
        shown = context_texts(record.trace, context.view)
        scores.update(
            hallucination_scores(record.trace, question, explanation, context.view)
            if record.status == "ok" and explanation
            else dict.fromkeys(HALLUCINATION)
        )
        if scores["hallucination_rate"] is None and scores["hallucination_rate_shown"] is not None:
            record.score_notes["hallucination_rate"] = "the retrieved pages could not be read (no KB view)"
        structure_notes(record, question, scores)
        if not self.applies_to(record):
            return scores
        if record.status != "ok" or not explanation or context.llm is None:
            reason = "no explanation to judge" if context.llm is not None else "no judge LLM"
            record.score_notes.update({k: reason for k in JUDGED})
            return {**scores, **{k: None for k in JUDGED}}
        label = record.trace.answer or "I don't know"
        if self.options.judge:
            scores.update(self.judge(record, question, label, explanation, context))
        if self.options.ragas and has_graph(record.trace):
            scores.update(self.grounding(record, question, explanation, shown, context))
        return scores

    def judge(
        self, record: RunRecord, question: Question, label: str, explanation: str, context: MetricContext
    ) -> dict[str, float | None]:
        from provbench.llm import LLMError

        prompt = JUDGE_PROMPT.format(claim=question.question, label=label, explanation=explanation)
        try:
            resp = context.llm.chat(
                [{"role": "user", "content": prompt}],
                schema=JUDGE_SCHEMA,
                max_tokens=64,
                temperature=0.0,
                purpose="p003-judge",
            )
        except LLMError as err:
            record.score_notes["logical_consistency"] = f"judge failed: {err}"[:300]
            return {"consistency_score": None, "logical_consistency": None, "coherence": None}
        data = resp.data if isinstance(resp.data, dict) else {}
        consistency, coherence = _unit(data.get("consistency")), _unit(data.get("coherence"))
        if consistency is None:
            record.score_notes["logical_consistency"] = "the judge's reply had no consistency score"
        return {
            "consistency_score": consistency,
            "coherence": coherence,
            "logical_consistency": None if consistency is None else float(consistency >= self.options.judge_cutoff),
        }

    def grounding(
        self, record: RunRecord, question: Question, explanation: str, shown: list[str], context: MetricContext
    ) -> dict[str, float | None]:
        if not shown:
            record.score_notes["factual_grounding"] = "no context was shown"
            return {"factual_grounding": None}
        value, note = faithfulness(question.question, explanation, shown, context.llm, self.options.max_tokens)
        if note:
            record.score_notes["factual_grounding"] = note
        return {"factual_grounding": value}

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                records = results.select(system, condition)
                every = records or results.select(system, condition, leaked=True)
                for key in (*STRUCTURE, *JUDGED):
                    scored = [r.scores[key] for r in records if r.scores.get(key) is not None]
                    if scored:
                        values.append(
                            MetricValue(
                                metric=f"table1.{key}",
                                system=system,
                                condition=condition,
                                value=fmean(scored),
                                numerator=round(sum(scored), 6),
                                denominator=len(scored),
                            )
                        )
                    elif not records and any(r.scores.get(key) is not None for r in every):
                        # every unit left out by the pairing rule: the runner's notes say "not measurable"
                        values.append(
                            MetricValue(metric=f"table1.{key}", system=system, condition=condition, value=None)
                        )
        for value in values:
            if value.metric == "table1.empty_graph" and value.condition == BASELINE:
                value.note = empty_graph_warning(value.system, value.value, value.denominator)
                if value.note:
                    log.warning("%s", value.note)
        return values


def empty_graph_warning(system: str, share: float | None, claims: float | None) -> str:
    """The warning for a GA-RAG system whose local graphs are empty for most claims ('' if not)."""
    if share is None or share <= EMPTY_GRAPHS_WARN:
        return ""
    return (
        f"{system}: the local graph is empty for {share:.0%} of {claims:g} claims, so GA-RAG answered from "
        "'(none)' and the run tests the prompt, not the graph (check the triple filter against the "
        "model's confidences, and extraction failures)"
    )


def faithfulness(
    question: str, response: str, contexts: list[str], llm: Any, max_tokens: int
) -> tuple[float | None, str | None]:
    """RAGAS faithfulness through provbench's LLM layer (the adapter of the ragas-faithfulness metric)."""
    from provbench_plugins.metrics.ragas_faithfulness import make_ragas_llm, run_sync

    async def go() -> float:
        from ragas.metrics.collections import Faithfulness

        metric = Faithfulness(llm=make_ragas_llm(llm, max_tokens))
        return (await metric.ascore(user_input=question, response=response, retrieved_contexts=contexts)).value

    try:
        value = run_sync(go())
    except Exception as exc:  # noqa: BLE001 - a judge failure is a note, never a crash
        return None, f"ragas failed: {type(exc).__name__}: {exc}"[:300]
    if value is None or math.isnan(value):
        return None, "ragas returned NaN (no statements in the explanation)"
    return float(value), None


def _unit(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return min(1.0, max(0.0, float(value)))


METRICS = (TableOne,)
