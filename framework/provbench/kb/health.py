"""Is a knowledge base fit to measure anything? A degenerate one never yields results.

A knowledge base is **degenerate** when it has no text units, no entities or no relations, when
none of its entities is linked to a text unit (no ablation of paper 000 could hide or keep any
text), or when the share of its text units whose LLM extraction failed (the call failed, or the
reply was not JSON of the schema) is above the builder option ``max_failed_extraction_share``
(default :data:`DEFAULT_MAX_FAILED_EXTRACTION_SHARE`). An evaluation that never reads entity text
(paper 001's KG paths over triples with file-level provenance only) says so with the builder
option ``allow_unlinked_entities``. ``provbench run`` and ``validate`` refuse a degenerate KB
with these reasons; ``kb info`` and the report's knowledge-base section show them first.

One reason costs only some interventions their meaning: a KB with text units and entities but no
relations still measures what the systems read and the entity-level ablations, but not an
intervention that acts on relations (its ``needs``: edge invalidation). Such a run goes on, and
those interventions are marked not measurable, with the reason (:func:`not_measurable_interventions`:
the console, the manifest, the report's knowledge-base section) instead of being run.

The typical route there: a corpus converted into a built-in format whose builder takes its graph
from fields the corpus lacks (2Wiki JSON without ``evidences``: no gold triples, and extraction
only on text units that support no question), which builds 0 entities and 0 relations.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import UserError

if TYPE_CHECKING:
    from ..model import Question
    from .knowledge_base import KnowledgeBase

log = logging.getLogger(__name__)

DEFAULT_MAX_FAILED_EXTRACTION_SHARE = 0.5
# the part of a KB some interventions need (Intervention.needs) -> the reason a KB without it gives
PARTS = {"relations": "it has no relations"}


def degenerate_reasons(
    counts: dict[str, Any],
    build_info: dict[str, Any],
    linked_entities: int | None = None,
    options: dict[str, Any] | None = None,
) -> list[str]:
    """Why a knowledge base with these ``counts`` (text_units, entities, relations) and build info
    is degenerate; [] when it is fit. ``linked_entities``: entities linked to some text unit (None:
    not known, not checked). The builder options ``max_failed_extraction_share`` and
    ``allow_unlinked_entities`` are read from ``options`` (a suite's, now), else from the build's."""
    settings = {**(build_info.get("options") or {}), **(options or {})}
    reasons = []
    for name, what in (("text_units", "text units"), ("entities", "entities"), ("relations", "relations")):
        if counts.get(name) == 0:
            reasons.append(f"it has no {what}")
    if (
        linked_entities == 0
        and counts.get("entities")
        and counts.get("text_units")
        and not settings.get("allow_unlinked_entities")
    ):
        reasons.append(
            f"none of its {counts['entities']} entities is linked to a text unit (builder option "
            "allow_unlinked_entities: true if the evaluation never reads entity text)"
        )
    extraction = build_info.get("extraction") or {}
    tried = extraction.get("text_units") or 0
    failed = (extraction.get("failed_calls") or 0) + (extraction.get("invalid_outputs") or 0)
    limit = settings.get("max_failed_extraction_share")
    limit = DEFAULT_MAX_FAILED_EXTRACTION_SHARE if limit is None else float(limit)
    if tried and failed / tried > limit:
        reasons.append(
            f"extraction failed on {failed} of {tried} text units ({failed / tried:.0%}, above the "
            f"builder option max_failed_extraction_share={limit:g})"
        )
    return reasons


def kb_degenerate_reasons(kb: "KnowledgeBase", options: dict[str, Any] | None = None) -> list[str]:
    """:func:`degenerate_reasons` of an open knowledge base, its counts read from the database."""
    stats = kb.stats()
    linked = kb.store.scalar("MATCH (:Chunk)-[:MENTIONS]->(e:Entity) RETURN count(DISTINCT e)")
    return degenerate_reasons(stats.model_dump(), kb.build_info, linked, options)


def degenerate_reasons_at(kb_dir: Any) -> list[str]:
    """:func:`kb_degenerate_reasons` of the finished knowledge base at ``kb_dir`` (opened read-only)."""
    from .knowledge_base import KnowledgeBase

    with KnowledgeBase.open(kb_dir, read_only=True) as kb:
        return kb_degenerate_reasons(kb)


def refusal(kb_dir: Any, reasons: list[str]) -> str:
    return (
        f"the knowledge base at {kb_dir} is degenerate, so nothing measured on it would mean anything: "
        + "; ".join(reasons)
        + ". See `provbench kb info` for its build; fix the data or the builder options "
        "(docs/own-data.md) and build it again"
    )


def check_run_kb(
    kb: "KnowledgeBase | None", kb_dir: Any, questions: "Iterable[Question]", options: dict[str, Any] | None = None
) -> list[str]:
    """What a run checks on its knowledge base before any unit: a degenerate one is refused (a
    UserError with the reasons; ``options``: the suite's builder options); otherwise the lines that
    say how much of the questions' gold it holds, each question whose gold it does not hold wholly
    listed (also logged), so none is dropped silently (:mod:`provbench.kb.goldmap`)."""
    from ..gold import unclaimed_lines
    from .goldmap import gold_mapping_report

    if kb is None:
        return []
    reasons = kb_degenerate_reasons(kb, options)
    if set(reasons) - set(PARTS.values()):  # all of them said: the missing parts too
        kb.close()
        raise UserError(refusal(kb_dir, reasons))
    questions = list(questions)
    lines = unclaimed_lines(questions)  # gold the loader would not claim is named, never passed over
    if any(q.gold is not None for q in questions):
        with_gold, unmapped = gold_mapping_report(kb.view(), questions)
        lines = [
            f"gold evidence: {with_gold - len(unmapped)} of {with_gold} question(s) map wholly onto the knowledge base",
            *(f"  {qid}: {'; '.join(items)}" for qid, items in unmapped.items()),
            *lines,
        ]
    if len(lines) > 1:
        log.warning("\n".join(lines))
    return lines


def not_measurable_interventions(
    kb: "KnowledgeBase | None", needs: dict[str, tuple[str, ...]], options: dict[str, Any] | None = None
) -> dict[str, str]:
    """Intervention key -> why it is not measurable on ``kb``: a part it ``needs`` is missing (``needs``:
    each intervention's key and :attr:`provbench.plugin_api.Intervention.needs`)."""
    if kb is None:
        return {}
    reasons = set(kb_degenerate_reasons(kb, options))
    return {
        key: f"not measurable: the knowledge base {PARTS[part].removeprefix('it ')}, which it acts on"
        for key, parts in needs.items()
        for part in parts
        if PARTS.get(part) in reasons
    }
