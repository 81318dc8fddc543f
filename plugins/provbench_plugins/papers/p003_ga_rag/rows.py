"""Table I's rows: what each means here, what it means in the authors' released evaluation
(``eval_framework.py`` and the metadata of ``graph_augmented_rag.py``; the paper defines none),
and whether the paper's number may stand beside ours.

``comparable``: "yes" (same definition; model, data and hardware still differ), "close" (the same
idea, details differ: ``difference`` says which) or "no" (another quantity under the same name:
the report shows "not comparable" in the paper's column).

The hallucination row has two definitions, chosen by ``p003/table1``'s ``hallucination_row``
option: provbench's token-level rate (not comparable) or the authors' (:mod:`.authors_rate`).
Whatever a row's definition, the paper's GA-RAG column is the baseline's answer asked again
(:data:`PAPER_GA_RAG`), which the report's caption and every comparable cell say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RowDef:
    title: str
    key: str  # the record score the row averages
    unit: Literal["share", "seconds"]
    graph_only: bool  # the paper's baseline has no graph: 0.000 and no delta there
    paper: tuple[float, float]  # the paper's baseline -> GA-RAG
    here: str
    authors: str
    comparable: Literal["yes", "close", "no"]
    difference: str = ""  # for "close": what differs


AUTHORS_HALLUCINATION = (
    "share of the answer's words (over 2 letters, stop words out, prefix stems allowed) "
    "found nowhere in the retrieved documents; 0 for a hedged answer"
)
# From the authors' run behind Table I (results/detailed_results_20251125_233817.json).
PAPER_GA_RAG = (
    "the paper's GA-RAG column is the baseline's answer asked again: in the authors' run behind "
    'Table I, answer_source is "baseline" on 20 of 20 claims (their pipeline shows 4 facts and '
    "needs 5 to answer from the graph) and 18 of the 20 answers equal the baseline's word for word"
)

ROWS = (
    RowDef(
        "Factual accuracy",
        "accuracy",
        "share",
        False,
        (0.400, 0.415),
        'label match: 1 for the gold label, idk_credit (0.3) for "I don\'t know" or an abstention, else 0',
        "keyword rules on a free-text answer ('yes', 'not', 'false', ... per gold label); 0.3 for hedges, "
        "0.5 for a NOT ENOUGH INFO answer without strong words",
        "no",
    ),
    RowDef(
        "Logical consistency",
        "logical_consistency",
        "share",
        False,
        (0.500, 1.000),
        "share of explanations an LLM judge scores at least judge_cutoff for supporting exactly the label",
        "1 - contradictions / graph nodes from rule checks on the local graph (none ever fires); 0.5 "
        "without a graph, so the baseline's 0.500 holds by construction",
        "no",
    ),
    RowDef(
        "Hallucination rate (provbench's tokens)",
        "hallucination_rate",
        "share",
        False,
        (0.170, 0.147),
        "share of the explanation's content tokens (meta-notes stripped) found nowhere in the retrieved "
        "pages or the claim, the same context for every system",
        AUTHORS_HALLUCINATION + "; on their 424 stored FEVER answers the two differ by more than 0.1 on 231, "
        "and theirs is 0.0 on the 122 hedged answers this row leaves unscored",
        "no",
    ),
    RowDef(
        "Response coherence",
        "coherence",
        "share",
        False,
        (0.850, 1.000),
        "an LLM judge's 0-1 score of the explanation's clarity and coherence",
        "length and punctuation rules: 5-200 words, a sentence mark, a word such as 'is' or 'the'",
        "no",
    ),
    RowDef(
        "Graph completeness",
        "graph_completeness",
        "share",
        True,
        (0.0, 0.163),
        "claims with gold evidence: 1 when the sentences behind the graph's facts hold a whole gold set",
        "triplets per retrieved document mapped to 0-1 (3 per document: 0.4, 8 or more: 1) plus an inference bonus",
        "no",
    ),
    RowDef(
        "Avg response time (s)",
        "response_time",
        "seconds",
        False,
        (1.769, 12.442),
        "seconds per claim without the LLM cache (cache hits at the latency their reply first took)",
        "seconds per claim as run, including a full baseline query (retrieval and answer) that GA-RAG runs first",
        "close",
        "the paper's GA-RAG time includes a full baseline query per claim; here GA-RAG's time is its own "
        "(plus the baseline's answer call only when its gate falls back)",
    ),
    RowDef(
        "Factual grounding",
        "factual_grounding",
        "share",
        True,
        (0.0, 0.375),
        "RAGAS faithfulness of GA-RAG's explanation against the facts shown",
        "share of the facts shown whose subject or object appears in the answer",
        "no",
    ),
    RowDef(
        "Graph coverage",
        "graph_coverage",
        "share",
        True,
        (0.0, 0.480),
        "claims with gold evidence: share of the gold evidence pages some graph fact comes from",
        "share of the claim's content words found in the shown facts' subjects and objects",
        "no",
    ),
    RowDef(
        "Context precision",
        "context_precision",
        "share",
        True,
        (0.0, 0.963),
        "claims with gold evidence: share of the facts shown that come from a gold evidence page",
        "share of the ranked facts kept by a filter on the claim's words",
        "no",
    ),
)

AUTHORS_HALLUCINATION_ROW = RowDef(
    "Hallucination rate (authors' definition)",
    "hallucination_rate_authors",
    "share",
    False,
    (0.170, 0.147),
    "the authors' evaluate_hallucination_rate on the system's answer (\"I don't know.\" for an abstention, else "
    "the explanation with its gate note) against the retrieved pages' sentences",
    AUTHORS_HALLUCINATION + "; reproduces the paper's 0.170 and 0.147 to the last digit on the run behind Table I",
    "close",
    "the same formula on another answer: here a label call's explanation, there a free-text reply",
)


def table_rows(hallucination: str = "provbench") -> tuple[RowDef, ...]:
    """Table I's rows, the hallucination row by the definition ``hallucination`` ("provbench" or "authors")."""
    if hallucination == "provbench":
        return ROWS
    return tuple(AUTHORS_HALLUCINATION_ROW if row.key == "hallucination_rate" else row for row in ROWS)
