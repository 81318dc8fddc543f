"""Table I's rows as one metric, ``p003/table1`` (written definitions: docs/papers/p003.md).

Per record (``record.scores``):
  structure (no LLM; None for NOT ENOUGH INFO claims, which have no gold evidence):
    ``graph_coverage``     share of the gold evidence pages that some fact of the local graph
                           comes from (0 for a system without a graph);
    ``graph_completeness`` 1 when the sentences behind the graph's facts hold a whole gold
                           evidence set, else 0;
    ``context_precision``  share of the context items shown to the generator (GA-RAG: the
                           linearised facts; RAG: the passages) that come from a gold page;
    ``response_time``      the system's wall time in seconds (every record);
  LLM-judged (records of the ``conditions`` listed, default the baseline only):
    ``consistency_score`` / ``logical_consistency``  a judge's 0-1 score that the explanation
                           supports the label, and 1 when it reaches ``threshold`` (paper: 0.7);
    ``coherence``          the judge's 0-1 score of the explanation's clarity and coherence;
    ``factual_grounding``  RAGAS faithfulness of the explanation against the context shown;
    ``hallucination_rate`` 1 - factual_grounding (share of its claims the context does not support).
Factual accuracy is the record's graded ``accuracy`` (the loader's, 0.3 for "I don't know").
"""

from __future__ import annotations

import math
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import BASELINE, Question, RunRecord, Trace
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results, parse_options

from provbench_plugins.datasets.fever.pages import evidence_of

STRUCTURE = ("graph_coverage", "graph_completeness", "context_precision", "response_time")
JUDGED = ("consistency_score", "logical_consistency", "coherence", "factual_grounding", "hallucination_rate")

JUDGE_PROMPT = (
    "A fact-checking system labelled a claim and explained its label.\n"
    "Claim: \"{claim}\"\nLabel: {label}\nExplanation: \"{explanation}\"\n\n"
    "Rate from 0 to 1: consistency = how well the explanation supports exactly this label "
    "(1: it argues for it, 0: it argues for another label or contradicts itself); coherence = how "
    "clear, on-topic and well-formed the explanation is. Reply with JSON.")
JUDGE_SCHEMA = {"type": "object", "properties": {
    "consistency": {"type": "number", "minimum": 0, "maximum": 1},
    "coherence": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["consistency", "coherence"], "additionalProperties": False}


class TableOneOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(0.7, ge=0, le=1, description="logical consistency: judge score needed (paper: 0.7)")
    judge: bool = True
    ragas: bool = True
    conditions: list[str] | str = Field(default_factory=lambda: [BASELINE], description="'all' or condition names")
    max_tokens: int = Field(512, ge=64)


def context_items(trace: Trace) -> list[tuple[str, str]]:
    """(source sentence id, text) of each item shown to the generator."""
    shown = trace.artifacts.get("shown")
    if isinstance(shown, list):
        facts = [trace.fact(i) for i in shown]
        return [(f.source_ids[0] if f.source_ids else "", f"{f.subject} {f.relation} {f.object}.")
                for f in facts if f is not None]
    return [(t, t) for t in trace.read_text_units]


def structure_scores(trace: Trace, question: Question) -> dict[str, float | None]:
    gold_sets = [[tuple(pair) for pair in group] for group in question.metadata.get("evidence", [])]
    gold_pages = set(question.metadata.get("evidence_pages", []))
    scores: dict[str, float | None] = {"response_time": trace.wall_time_s}
    if not gold_pages:
        return {**scores, "graph_coverage": None, "graph_completeness": None, "context_precision": None}
    graph_sentences = {evidence_of(s) for f in trace.facts for s in f.source_ids} - {None}
    graph_pages = {page for page, _ in graph_sentences}
    items = [evidence_of(source) for source, _ in context_items(trace)]
    scores["graph_coverage"] = len(gold_pages & graph_pages) / len(gold_pages)
    scores["graph_completeness"] = float(any(set(g) <= graph_sentences for g in gold_sets if g))
    scores["context_precision"] = (sum(1 for e in items if e and e[0] in gold_pages) / len(items)) if items else None
    return scores


class TableOne(Metric):
    """Paper 003's Table I rows: consistency, coherence, grounding, hallucination, graph measures, time."""

    name = "table1"

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(TableOneOptions, options, f"metric {self.name!r}")

    def applies_to(self, record: RunRecord) -> bool:
        wanted = self.options.conditions
        return wanted == "all" or record.key.condition in wanted

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        if record.trace is None:
            return {}
        scores = structure_scores(record.trace, question)
        if not self.applies_to(record):
            return scores
        explanation = str(record.trace.artifacts.get("explanation") or "").strip()
        if record.status != "ok" or not explanation or context.llm is None:
            reason = "no explanation to judge" if context.llm is not None else "no judge LLM"
            record.score_notes.update({k: reason for k in JUDGED})
            return {**scores, **{k: None for k in JUDGED}}
        label = record.trace.answer or "I don't know"
        if self.options.judge:
            scores.update(self.judge(record, question, label, explanation, context))
        if self.options.ragas:
            scores.update(self.grounding(record, question, explanation, context))
        return scores

    def judge(self, record: RunRecord, question: Question, label: str, explanation: str,
              context: MetricContext) -> dict[str, float | None]:
        from provbench.llm import LLMError

        prompt = JUDGE_PROMPT.format(claim=question.question, label=label, explanation=explanation)
        try:
            resp = context.llm.chat([{"role": "user", "content": prompt}], schema=JUDGE_SCHEMA,
                                    max_tokens=64, temperature=0.0, purpose="p003-judge")
        except LLMError as err:
            record.score_notes["logical_consistency"] = f"judge failed: {err}"[:300]
            return {"consistency_score": None, "logical_consistency": None, "coherence": None}
        data = resp.data if isinstance(resp.data, dict) else {}
        consistency, coherence = _unit(data.get("consistency")), _unit(data.get("coherence"))
        if consistency is None:
            record.score_notes["logical_consistency"] = "the judge's reply had no consistency score"
        return {"consistency_score": consistency, "coherence": coherence,
                "logical_consistency": None if consistency is None else float(consistency >= self.options.threshold)}

    def grounding(self, record: RunRecord, question: Question, explanation: str,
                  context: MetricContext) -> dict[str, float | None]:
        texts = [text for _, text in context_items(record.trace)]
        if context.view is not None and not record.trace.artifacts.get("shown"):
            texts = [u.text for u in map(context.view.text_unit, record.trace.read_text_units) if u is not None]
        if not texts:
            record.score_notes["factual_grounding"] = "no context was shown"
            return {"factual_grounding": None, "hallucination_rate": None}
        value, note = faithfulness(question.question, explanation, texts, context.llm, self.options.max_tokens)
        if note:
            record.score_notes["factual_grounding"] = note
        return {"factual_grounding": value, "hallucination_rate": None if value is None else 1.0 - value}

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                records = results.select(system, condition)
                for key in (*STRUCTURE, *JUDGED):
                    scored = [r.scores[key] for r in records if r.scores.get(key) is not None]
                    if scored:
                        values.append(MetricValue(metric=f"table1.{key}", system=system, condition=condition,
                                                  value=fmean(scored), numerator=round(sum(scored), 6),
                                                  denominator=len(scored)))
        return values


def faithfulness(question: str, response: str, contexts: list[str], llm: Any, max_tokens: int
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
