"""Ragas' reference-based judged scores: answer correctness and the context scores.

Each metric wraps one ``ragas.metrics.collections`` class, judged by the suite's judge through the
same adapter as faithfulness (:func:`make_ragas_llm`), and stores one score per record:

* ``ragas-answer-correctness`` (``FactualCorrectness``): the answer's claims against the reference
  answer's, F1 by default (``mode``);
* ``ragas-context-precision`` (``ContextPrecisionWithReference``): were the read items that help
  reach the reference answer ranked early (one judge call per item);
* ``ragas-context-recall`` (``ContextRecall``): how many statements of the reference evidence the
  read items support;
* ``ragas-context-entity-recall`` (``ContextEntityRecall``): the share of the reference evidence's
  entities that the read items name.

"Read items" are the trajectory's evidence texts (what the system read or retrieved, in order), as
for ``faithfulness_trajectory``. Which reference each gets is :func:`reference_answer` /
:func:`reference_evidence` (docs/provenance.md lists it per loader). A score ragas cannot give is
``None`` with its reason in ``record.score_notes``, as for faithfulness.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from provbench.model import Question, RunRecord
from provbench.plugin_api import MetricContext, MetricValue, Results

from .ragas_faithfulness import RagasJudged, evidence_texts, make_ragas_llm, run_sync, summarise, trajectory_items

if TYPE_CHECKING:
    from provbench.llm import LLMClient


def reference_answer(question: Question) -> str:
    """The gold answer with its question: ragas breaks a reference into claims, and a bare "Ann" gives none."""
    answer = question.answer.strip()
    if question.choices and question.aliases:  # multiple choice: the letter and the option's own text
        answer = f"{answer} ({question.aliases[0]})"
    return answered(question.question, answer) if answer else ""


def answered(question: str, answer: str) -> str:
    """``Question: <question> Answer: <answer>.``: how both the reference and the system's answer reach
    FactualCorrectness, so that a bare answer phrase is a claim about the question too."""
    return f"Question: {question.strip()} Answer: {answer.strip().rstrip('.')}."


def reference_evidence(question: Question) -> str:
    """The gold supporting facts: the evidence sentences, else the evidence triples as sentences, else
    (no gold) the reference answer."""
    gold = question.gold
    if gold is not None:
        sentences = [s.text.strip() for s in gold.sentences if s.text.strip()]
        if sentences:
            return " ".join(sentences)
        if gold.triples:
            return " ".join(f"{t.subject} {t.relation.replace('_', ' ').lower()} {t.object}." for t in gold.triples)
    return reference_answer(question)


class RagasReferenceMetric(RagasJudged):
    """One ragas score per record against a reference text; subclasses say which score and reference."""

    key = ""  # the score's name in records
    needs_answer = False  # context scores judge what was read, answer or not
    needs_contexts = True
    calls = 2.0  # judge calls per record (an estimate for plan and budgets)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.judged_scores = (cls.key,)  # the one score, as the judge gave it

    def reference(self, question: Question) -> str:
        return reference_evidence(question)

    async def judge(self, llm: Any, question: str, answer: str, contexts: list[str], reference: str) -> Any:
        raise NotImplementedError

    def warm_up(self) -> None:
        import ragas.metrics.collections  # noqa: F401 - seconds to import: not in a unit

    def expected_llm_calls(self, condition: str) -> float:
        return self.calls if self.conditions == "all" or condition in self.conditions else 0.0

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        if not self.applies_to(record):
            return {}
        record.score_notes.pop(self.key, None)  # a fresh score replaces an earlier note
        value, note = self.score_record(record, question, context)
        if note:
            record.score_notes[self.key] = note
        return {self.key: value}

    def score_record(
        self, record: RunRecord, question: Question, context: MetricContext
    ) -> tuple[float | None, str | None]:
        reason = self.unscorable(record, context)
        if reason and not (reason.startswith("no answer") and not self.needs_answer):
            return None, reason
        reference = self.reference(question)
        if not reference:
            return None, f"question {question.id} has no reference answer or gold evidence"
        contexts, truncated = self.capped(evidence_texts(context.view, trajectory_items(record.trace)))
        if self.needs_contexts and not contexts:
            return None, "no trajectory evidence text to judge"
        return run_sync(
            self._judged(context.llm, question.question, record.trace.answer or "", contexts, reference, truncated)
        )

    async def _judged(
        self, llm: "LLMClient", question: str, answer: str, contexts: list[str], reference: str, truncated: bool
    ) -> tuple[float | None, str | None]:
        adapter = make_ragas_llm(llm, self.max_tokens, purpose=self.name)
        try:
            value = (await self.judge(adapter, question, answer, contexts, reference)).value
        except Exception as exc:  # noqa: BLE001 - ragas or the judge failed: record it, never crash the run
            return None, f"ragas failed: {type(exc).__name__}: {exc}"[:500]
        if value is None or math.isnan(value):
            return None, "ragas returned NaN (nothing to judge in the judge's reply)"
        truncated = truncated and self.needs_contexts
        return float(value), (f"context truncated to {self.max_context_chars} characters" if truncated else None)

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                value = summarise([r for r in results.select(system, condition) if self.applies_to(r)], self.key)
                if value is not None:
                    values.append(MetricValue(metric=self.name, system=system, condition=condition, **value))
        return values


class RagasAnswerCorrectness(RagasReferenceMetric):
    """Ragas FactualCorrectness of the answer against the reference answer."""

    name = "ragas-answer-correctness"
    key = "answer_correctness"
    needs_answer, needs_contexts, calls = True, False, 4.0  # f1: claims and verdicts both ways

    class Options(RagasJudged.Options):
        mode: Literal["f1", "precision", "recall"] = Field(
            "f1",
            description="precision: the answer's claims the reference supports; recall: the reference's "
            "claims the answer supports; f1: both",
        )

    def reference(self, question: Question) -> str:
        return reference_answer(question)

    async def judge(self, llm: Any, question: str, answer: str, contexts: list[str], reference: str) -> Any:
        from ragas.metrics.collections import FactualCorrectness

        metric = FactualCorrectness(llm=llm, mode=self.options.mode)
        return await metric.ascore(response=answered(question, answer), reference=reference)


class RagasContextPrecision(RagasReferenceMetric):
    """Ragas ContextPrecisionWithReference of the read items, in order, against the reference answer."""

    name = "ragas-context-precision"
    key = "context_precision"
    calls = 8.0  # one per read item

    def reference(self, question: Question) -> str:
        return reference_answer(question)

    async def judge(self, llm: Any, question: str, answer: str, contexts: list[str], reference: str) -> Any:
        from ragas.metrics.collections import ContextPrecisionWithReference

        return await ContextPrecisionWithReference(llm=llm).ascore(
            user_input=question, reference=reference, retrieved_contexts=contexts
        )


class RagasContextRecall(RagasReferenceMetric):
    """Ragas ContextRecall: the reference evidence's statements the read items support."""

    name = "ragas-context-recall"
    key = "context_recall"
    calls = 1.0

    async def judge(self, llm: Any, question: str, answer: str, contexts: list[str], reference: str) -> Any:
        from ragas.metrics.collections import ContextRecall

        return await ContextRecall(llm=llm).ascore(
            user_input=question, retrieved_contexts=contexts, reference=reference
        )


class RagasContextEntityRecall(RagasReferenceMetric):
    """Ragas ContextEntityRecall: the reference evidence's entities named in the read items."""

    name = "ragas-context-entity-recall"
    key = "context_entity_recall"

    async def judge(self, llm: Any, question: str, answer: str, contexts: list[str], reference: str) -> Any:
        from ragas.metrics.collections import ContextEntityRecall

        return await ContextEntityRecall(llm=llm).ascore(reference=reference, retrieved_contexts=contexts)


REFERENCE_METRICS = (RagasAnswerCorrectness, RagasContextPrecision, RagasContextRecall, RagasContextEntityRecall)
