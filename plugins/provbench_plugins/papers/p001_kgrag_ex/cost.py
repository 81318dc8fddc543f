"""Paper 001's Table 5: what an explanation costs, RAG-Ex against KGRAG-Ex, per question.

Two definitions, each labelled wherever it is shown:

- ``provbench``: the LLM calls every perturbation run made (cache hits included: they are the
  method's cost; a KGRAG-Ex variant re-writes its pseudo-paragraphs and re-answers) and the model
  tokens they used (prompt + completion);
- ``authors``: the authors' notebooks count 1 call per perturbation and, as "tokens", the
  perturbations times the words of the baseline's context (RAG-Ex: the retrieved chunk as shown;
  KGRAG-Ex: the pseudo-paragraphs and any chunks retrieved with them, all the model reads; under
  ``top_k: 0``, the authors' setting, the pseudo-paragraphs alone).

The paper's "average" is a median (the authors' notebook takes ``np.median``; their result files
give exactly the paper's 65 / 20 calls and 4,032 / 2,112 tokens on MMLU), so the table reports
medians with the means beside them, over the questions both methods explained (the authors
compare each KGRAG-Ex question with the same question's RAG-Ex), and the paper's "Difference"
row (RAG-Ex minus KGRAG-Ex, of the medians).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from provbench.model import RunRecord

DEFINITIONS = ("provbench", "authors")
MEASURES = ("calls", "tokens")


@dataclass(frozen=True)
class Summary:
    median: float | None
    mean: float | None

    @classmethod
    def of(cls, values: list[float]) -> "Summary":
        return cls(statistics.median(values), statistics.fmean(values)) if values else cls(None, None)


def per_question(records: Iterable[RunRecord], context_words: dict[str, int]) -> dict[str, dict[str, float]]:
    """Question id -> its perturbations' cost under both definitions (``context_words``: the
    baseline's context words per question, for the authors' tokens)."""
    found: dict[str, dict[str, float]] = defaultdict(
        lambda: {"perturbations": 0, "provbench calls": 0, "provbench tokens": 0}
    )
    for r in records:
        row = found[r.key.question_id]
        calls = r.trace.llm_calls if r.trace else []
        row["perturbations"] += 1
        row["provbench calls"] += len(calls)
        row["provbench tokens"] += sum(c.prompt_tokens + c.completion_tokens for c in calls)
    for qid, row in found.items():
        row["authors calls"] = row["perturbations"]
        row["authors tokens"] = row["perturbations"] * context_words.get(qid, 0)
    return dict(found)


def table5(ragex: dict[str, dict[str, float]], kg: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Medians and means of each definition's calls and tokens per method, over the questions
    both explained, and the difference of the medians (RAG-Ex - KGRAG-Ex)."""
    shared = sorted(set(ragex) & set(kg))
    out: dict[str, Any] = {"questions": len(shared)}
    for definition in DEFINITIONS:
        for measure in MEASURES:
            column = f"{definition} {measure}"
            if not all(column in table[q] for table in (ragex, kg) for q in shared):
                continue
            pair = {
                "RAG-Ex": Summary.of([ragex[q][column] for q in shared]),
                "KGRAG-Ex": Summary.of([kg[q][column] for q in shared]),
            }
            difference = (pair["RAG-Ex"].median - pair["KGRAG-Ex"].median) if shared else None
            out[column] = {**pair, "Difference": difference}
    return out


def read_authors_comparison(source: str | Path | dict) -> tuple[dict, dict]:
    """The authors' ``<dataset>_calls_amount_comparison.json`` ({"comparison_of_test_N": {"simple":
    {"llm_calls", "total_tokens"}, "kg": {...}}}) as (RAG-Ex, KGRAG-Ex) per-question costs."""
    data = source if isinstance(source, dict) else json.loads(Path(source).read_text(encoding="utf-8"))
    ragex, kg = {}, {}
    for key, pair in data.items():
        for side, table in (("simple", ragex), ("kg", kg)):
            entry = pair.get(side) if isinstance(pair, dict) else None
            if not isinstance(entry, dict) or not {"llm_calls", "total_tokens"} <= set(entry):
                raise ValueError(f"{key}: field {side}: needs llm_calls and total_tokens, got {entry!r}")
            table[key] = {"authors calls": entry["llm_calls"], "authors tokens": entry["total_tokens"]}
    return ragex, kg
