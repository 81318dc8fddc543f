"""Communities and their reports: Leiden (flat or hierarchical) and LLM-written summaries.

:func:`summarize_communities` detects communities on the knowledge base (options in
:class:`CommunitySettings`), asks the LLM for a title and summary of the largest ones, and gives
every other community (and any whose reply failed or was invalid) a deterministic summary that
lists its members. Those fallbacks are counted in :class:`SummaryCounts`, so ``kb info`` and
the report can say how many community "summaries" are member lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import prompts as P
from .graph import EntityDraft, Graph, RelationDraft
from .llm_calls import LLMTally, run_calls
from .names import pick_type

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.kb.types import Community
    from provbench.llm import LLMClient

PURPOSE = "kb-community-summary"


@dataclass(frozen=True)
class CommunitySettings:
    hierarchical: bool = True
    resolution: float = 0.2
    max_cluster_size: int = 10
    levels: int = 1
    scope: str = "largest-component"
    seed: int = 0


@dataclass(frozen=True)
class SummarySettings:
    summarize: bool = True
    max_summaries: int | None = 40  # largest communities summarised by the LLM; None = all
    max_tokens: int = 160
    seed: int = 0


class Summary(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)  # a blank title is no title
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=2000)


@dataclass
class SummaryCounts:
    communities: int = 0
    levels: int = 0
    clustered_entities: int = 0  # entities in some community (the rest are outside the clustered component)
    by_llm: int = 0
    failed_calls: int = 0  # the LLM call failed for good: the member-list summary stands in
    fallback_invalid: int = 0  # the reply was invalid: the member-list summary stands in
    deterministic: int = 0  # not sent to the LLM (summarize off or beyond max_summaries): member list


def fallback_summary(names: list[str], relations: list[str]) -> tuple[str, str]:
    """A deterministic title and summary listing the members (used when the LLM gives none)."""
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    title = "Community of " + ", ".join(names[:3]) + (" and others" if len(names) > 3 else "")
    summary = f"Entities: {shown}."
    if relations:
        summary += " Relations: " + "; ".join(relations[:5]) + "."
    return title[:120], summary


def detect(kb: "KnowledgeBase", settings: CommunitySettings) -> list["Community"]:
    return kb.detect_communities(
        seed=settings.seed,
        resolution=settings.resolution,
        hierarchical=settings.hierarchical,
        max_cluster_size=settings.max_cluster_size,
        levels=settings.levels,
        scope=settings.scope,
    )


def summarize_communities(
    kb: "KnowledgeBase",
    graph: Graph,
    llm: "LLMClient",
    communities: CommunitySettings,
    summaries: SummarySettings,
    tally: LLMTally,
    workers: int,
    type_priority: tuple[str, ...] = (),
) -> SummaryCounts:
    """Detect communities, then give each a title and summary (LLM for the largest, else a member list)."""
    found = detect(kb, communities)
    counts = SummaryCounts(
        communities=len(found),
        levels=len({c.level for c in found}),
        clustered_entities=len({e for c in found for e in c.entity_ids}),
    )
    by_id = {d.id: d for d in graph.entities.values()}
    ranked = sorted(found, key=lambda c: (c.level, -len(c.entity_ids), c.id))
    budget = (
        0 if not summaries.summarize else (len(ranked) if summaries.max_summaries is None else summaries.max_summaries)
    )
    outgoing = relations_by_source(graph)
    prompts = {c.id: community_lines(c.entity_ids, by_id, outgoing, type_priority) for c in ranked}
    to_llm = [c.id for c in ranked[:budget]]

    def ask(cid: str) -> Summary | None | bool:
        entity_lines, relation_lines = prompts[cid]
        resp = tally.chat(
            llm,
            P.summary_messages(entity_lines, relation_lines),
            PURPOSE,
            schema=P.SUMMARY_SCHEMA,
            max_tokens=summaries.max_tokens,
            temperature=0.0,
            seed=summaries.seed,
        )
        if resp is None:  # counted; the community gets the deterministic summary
            return False
        try:
            return Summary.model_validate(resp.data)
        except ValidationError:
            return None

    answers = dict(zip(to_llm, run_calls(ask, to_llm, workers, "summarising communities")))
    written: dict[str, tuple[str, str]] = {}
    for c in ranked:
        answer = answers.get(c.id)
        if isinstance(answer, Summary):
            counts.by_llm += 1
            written[c.id] = (answer.title, answer.summary)
            continue
        counts.failed_calls += answer is False
        counts.fallback_invalid += c.id in answers and answer is None
        counts.deterministic += c.id not in answers
        names = [by_id[e].name for e in c.entity_ids if e in by_id]
        written[c.id] = fallback_summary(names, prompts[c.id][1])
    kb.set_community_summaries(written)
    return counts


def relations_by_source(graph: Graph) -> dict[str, list[tuple[int, RelationDraft]]]:
    """Each entity's outgoing relations with their position in the graph (for ordered, linear look-ups)."""
    out: dict[str, list[tuple[int, RelationDraft]]] = {}
    for position, r in enumerate(graph.relations.values()):
        out.setdefault(r.source, []).append((position, r))
    return out


def community_lines(
    entity_ids: Iterable[str],
    by_id: dict[str, EntityDraft],
    outgoing: dict[str, list[tuple[int, RelationDraft]]],
    type_priority: tuple[str, ...] = (),
    max_entities: int = 15,
    max_relations: int = 12,
) -> tuple[list[str], list[str]]:
    """Short prompt lines: the best-linked members first, and relations inside the community (graph order)."""
    members = sorted((by_id[e] for e in entity_ids if e in by_id), key=lambda d: (-len(d.text_unit_ids), d.name))
    inside = {d.id for d in members}
    entity_lines = [
        f"{d.name} ({pick_type(d.types, type_priority)}): {d.description[:100]}".rstrip(": ")
        for d in members[:max_entities]
    ]
    internal = sorted((position, r) for d in members for position, r in outgoing.get(d.id, ()) if r.target in inside)
    relation_lines = [
        f"{by_id[r.source].name} -{r.label}-> {by_id[r.target].name}" for _, r in internal[:max_relations]
    ]
    return entity_lines, relation_lines
