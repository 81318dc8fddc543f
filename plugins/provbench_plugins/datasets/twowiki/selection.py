"""Paper 000's question selection for 2WikiMultiHopQA, as a documented, deterministic rule.

The paper (section 2.1) keeps "bridge or comparison questions with short entity answers, at
least two evidence triples, at least two supporting facts, and enough context", and sorts the
30 it keeps into 12 local-path, 12 distractor-path and 6 summary-vs-local questions. It does not
say how; provbench uses this rule (docs/datasets.md repeats it):

Eligible, all of:
  1. type is compositional or inference (bridge) or comparison or bridge_comparison;
  2. the answer is short: at most ``MAX_ANSWER_TOKENS`` tokens, and not "yes"/"no"
     (an entity, a date or a place, not a verdict);
  3. at least 2 evidence triples and at least 2 supporting facts;
  4. enough context: at least ``MIN_DISTRACTORS`` distractor paragraphs, i.e. paragraphs whose
     title no supporting fact names.

Category, first rule that applies:
  - summary-vs-local: comparison or bridge_comparison type (the answer compares or combines
    facts about several entities);
  - distractor-path: a distractor paragraph overlaps the gold route: its title, without a
    trailing "(...)" qualifier, equals the qualifier-free title of a gold paragraph or an
    evidence entity (a namesake, e.g. a novel and a film of one title), or its text mentions an
    evidence entity other than the answer (a plausible wrong hop);
  - local-path: otherwise (the answer follows the gold evidence chain alone).

Quotas take the first eligible questions of each category in file order (in seeded order
when sampling), so the same file and seed always give the same selection.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from provbench_plugins.kb_builders.common.matcher import mention_pattern, mentions  # noqa: F401 (re-exported)

BRIDGE_TYPES = frozenset({"compositional", "inference"})
COMPARISON_TYPES = frozenset({"comparison", "bridge_comparison"})
CATEGORIES = ("local-path", "distractor-path", "summary-vs-local")
PAPER_QUOTAS = {"local-path": 12, "distractor-path": 12, "summary-vs-local": 6}
MAX_ANSWER_TOKENS = 5
MIN_DISTRACTORS = 2

_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def base_title(title: str) -> str:
    """A title without its trailing disambiguation, lower-cased: "Glass Harbor (film)" -> "glass harbor"."""
    return " ".join(_QUALIFIER.sub("", title).split()).lower()


def ineligible_reason(record: dict[str, Any]) -> str | None:
    """Why a (validated) 2Wiki record fails the selection filter, or None if it passes."""
    if record["type"] not in BRIDGE_TYPES | COMPARISON_TYPES:
        return f"type {record['type']!r} is neither bridge nor comparison"
    answer = record["answer"].strip()
    if answer.lower() in {"yes", "no"} or not answer:
        return "answer is not an entity"
    if len(answer.split()) > MAX_ANSWER_TOKENS:
        return f"answer longer than {MAX_ANSWER_TOKENS} tokens"
    if len(record["evidences"]) < 2:
        return "fewer than 2 evidence triples"
    if len(record["supporting_facts"]) < 2:
        return "fewer than 2 supporting facts"
    if len(distractor_paragraphs(record)) < MIN_DISTRACTORS:
        return f"fewer than {MIN_DISTRACTORS} distractor paragraphs"
    return None


def distractor_paragraphs(record: dict[str, Any]) -> list[tuple[str, list[str]]]:
    gold = {title for title, _ in record["supporting_facts"]}
    return [(title, sentences) for title, sentences in record["context"] if title not in gold]


def category(record: dict[str, Any]) -> str:
    """The record's category under the rule in this module's docstring."""
    if record["type"] in COMPARISON_TYPES:
        return "summary-vs-local"
    gold_titles = {base_title(title) for title, _ in record["supporting_facts"]}
    entities = {e for s, _, o in record["evidences"] for e in (s, o)}
    gold_names = gold_titles | {base_title(e) for e in entities}
    hops = [e for e in entities if base_title(e) != base_title(record["answer"])]
    for title, sentences in distractor_paragraphs(record):
        if base_title(title) in gold_names:
            return "distractor-path"
        text = " ".join(sentences)
        if any(mentions(text, e) for e in hops):
            return "distractor-path"
    return "local-path"


def select(records: Sequence[dict[str, Any]], quotas: dict[str, int] | None = None) -> list[tuple[dict[str, Any], str]]:
    """Eligible records in the given order with their category, up to ``quotas`` per category
    (None: all). Callers that sample shuffle ``records`` first."""
    taken = {c: 0 for c in CATEGORIES}
    chosen: list[tuple[dict[str, Any], str]] = []
    for record in records:
        if ineligible_reason(record) is not None:
            continue
        cat = category(record)
        if quotas is not None and taken[cat] >= quotas.get(cat, 0):
            continue
        taken[cat] += 1
        chosen.append((record, cat))
    return chosen
