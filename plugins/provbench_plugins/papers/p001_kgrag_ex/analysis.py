"""Paper 001's analyses over the records of a run (pure functions; the report draws them).

A *critical* perturbation is a variant record whose answer differs from its baseline
(``scores["output_changed"] == 1``). Per question (``explain``): the changed elements, the most
influential element and the two explanations of Table 2. Over the run: Table 4 (which
perturbation type changed the answer most, per question: :func:`table4`), positions of critical changes,
their node labels, and relative ranks by degree, edge betweenness and eq. (1):

    sub-path score = betweenness(edge) / (degree(node1) + degree(node2))

Ranks within one path (the paper: "within the derived path"): 0 = highest value, 1 = lowest,
``rank / (N - 1)``, a path with N < 2 ranked elements left out. Ties as the authors' notebook
settles them (the paper is silent): sub-paths share their average rank; nodes and edges keep the
earlier one on the path first. :func:`authors_rank_histogram` ranks as their notebook does (per
question, each node once by DiGraph degree). :func:`path_lengths` counts the kept paths' edges.

Every analysis reads the units the one pairing rule counts (:func:`group`; units the leak guard
found leaked, without effect, a no-op or not checkable are left out, and the report counts them).

Sub-path records carry the rule they ran under (``rule``: "paper" or "authors"); :func:`group`
takes one rule's, so Table 4 can be read under either. Positions are the paper's k / (m - 1) in
fifths, or the authors' k / m in the 20 bins of their Fig. 3 (``rule="authors"``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from provbench.model import RunRecord
from provbench.plugin_api import left_out_as

from .paths import KINDS

BINS = 5  # relative positions and ranks are counted in fifths of [0, 1]
AUTHORS_BINS = 20  # the authors' Fig. 3 histograms


def changed(record: RunRecord) -> bool:
    return record.status == "ok" and record.scores.get("output_changed") == 1.0


def variant_kind(record: RunRecord) -> str:
    return (record.variant.data.get("kind", "") if record.variant else "") or ""


@dataclass
class QuestionPerturbations:
    question_id: str
    system: str
    baseline_answer: str | None = None
    paths: list[dict] = field(default_factory=list)
    records: dict[str, list[RunRecord]] = field(default_factory=lambda: defaultdict(list))

    def changes(self, kind: str) -> int:
        return sum(changed(r) for r in self.records.get(kind, []))

    def variants(self, kind: str) -> int:
        return len(self.records.get(kind, []))


def subpath_rule(record: RunRecord) -> str:
    return (record.variant.data.get("rule") if record.variant else None) or "paper"


def subpath_rules(records: Iterable[RunRecord], system: str) -> list[str]:
    """The sub-path rules ``system``'s records ran under, the paper's first."""
    found = {subpath_rule(r) for r in records if r.key.system == system and variant_kind(r) == "subpath"}
    return [rule for rule in ("paper", "authors") if rule in found] or ["paper"]


def perturbations(records: Iterable[RunRecord], system: str, rule: str = "paper") -> list[RunRecord]:
    """Every KG perturbation record of ``system`` (sub-path removals of ``rule`` only), counted or not."""
    return [
        r
        for r in records
        if r.key.system == system
        and variant_kind(r) in KINDS
        and (variant_kind(r) != "subpath" or subpath_rule(r) == rule)
    ]


def group(
    records: Iterable[RunRecord], system: str, rule: str = "paper", include_leaked: bool = False
) -> dict[str, QuestionPerturbations]:
    """KG perturbation records of ``system`` by question (sub-path removals of ``rule`` only),
    with the baseline's answer and paths; units the pairing rule leaves out are left out
    (:func:`provbench.plugin_api.left_out_as`; ``include_leaked``: the suite's leak_guard option)."""
    groups: dict[str, QuestionPerturbations] = {}
    records = list(records)
    for r in perturbations(records, system, rule):
        if not left_out_as(r, include_leaked):
            g = groups.setdefault(r.key.question_id, QuestionPerturbations(r.key.question_id, system))
            g.records[variant_kind(r)].append(r)
    for r in records:
        if r.key.system == system and r.key.condition == "baseline" and r.key.question_id in groups and r.trace:
            groups[r.key.question_id].baseline_answer = r.trace.answer
            groups[r.key.question_id].paths = (r.trace.artifacts.get("kgrag") or {}).get("paths", [])
    return groups


# The authors' rule for Table 4 (their experiment notebook): per question, the share of each type's
# variants that changed the answer; the highest share wins, ties go to node, then edge, then sub-path.
TIE_BREAK = ("node", "edge", "subpath")


def table4(
    groups: dict[str, QuestionPerturbations], *, measure: str = "share", tie_break: tuple[str, ...] | None = TIE_BREAK
) -> dict[str, int]:
    """Per question with any change: the perturbation type with the most impact.

    ``measure``: "share" (changed / variants of the type, the authors' rule) or "count" (changed
    variants). ``tie_break``: an order of the three types that settles ties, so node + edge +
    sub-path = examples ("tied" counts how many were settled); None counts ties apart in "tied"."""
    if measure not in ("share", "count"):
        raise ValueError(f"table4(measure=...) must be 'share' or 'count', got {measure!r}")
    if tie_break is not None and sorted(tie_break) != sorted(KINDS):
        raise ValueError(f"table4(tie_break=...) must order {KINDS}, got {tie_break!r}")
    counts = Counter({k: 0 for k in (*KINDS, "tied", "examples")})
    for g in groups.values():
        if not any(g.changes(k) for k in KINDS):
            continue
        impact = {k: _impact(g, k, measure) for k in KINDS}
        top = max(impact.values())
        winners = [k for k in (tie_break or KINDS) if impact[k] == top]
        counts["examples"] += 1
        counts["tied"] += len(winners) > 1
        if len(winners) == 1 or tie_break is not None:
            counts[winners[0]] += 1
    return dict(counts)


def _impact(g: QuestionPerturbations, kind: str, measure: str) -> float:
    if measure == "count":
        return g.changes(kind)
    return g.changes(kind) / g.variants(kind) if g.variants(kind) else 0.0


def bin_of(value: float, bins: int = BINS) -> int:
    return min(bins - 1, int(value * bins))


def bin_labels(bins: int = BINS) -> list[str]:
    return [f"{i / bins:.2g}–{(i + 1) / bins:.2g}" for i in range(bins)]


def position_of(data: dict, rule: str) -> float:
    """Element k of m at k / (m - 1) (the paper) or k / m (the authors' code)."""
    if rule == "authors":
        return float(data.get("position_authors", data.get("index", 0) / max(1, data.get("count", 1))))
    return float(data.get("position", 0.0))


def position_histogram(groups: dict[str, QuestionPerturbations], kind: str, rule: str = "paper") -> list[int]:
    bins = AUTHORS_BINS if rule == "authors" else BINS
    counts = [0] * bins
    for g in groups.values():
        for r in g.records.get(kind, []):
            if changed(r):
                counts[bin_of(position_of(r.variant.data, rule), bins)] += 1
    return counts


def label_counts(groups: dict[str, QuestionPerturbations]) -> dict[str, tuple[int, int]]:
    """Node label -> (critical node removals, node removals)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for g in groups.values():
        for r in g.records.get("node", []):
            label = r.variant.data.get("label") or "(none)"
            out[label][1] += 1
            out[label][0] += changed(r)
    return {k: (v[0], v[1]) for k, v in sorted(out.items(), key=lambda kv: (-kv[1][0], kv[0]))}


def relative_ranks(values: list[float], ties: str = "average") -> list[float]:
    """0 = highest value, 1 = lowest; ties get their average rank, or with ``ties="first"`` keep
    their order (the earlier first), as the authors' ``sorted(...).index`` does for nodes and edges."""
    n = len(values)
    if n < 2:
        return [0.0] * n
    order = sorted(range(n), key=lambda i: -values[i])
    ranks = [0.0] * n
    if ties == "first":
        for position, i in enumerate(order):
            ranks[i] = position / (n - 1)
        return ranks
    i = 0
    while i < n:
        j = i
        while j + 1 < n and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = ((i + j) / 2) / (n - 1)
        i = j + 1
    return ranks


def subpath_score(betweenness: float, degree1: int, degree2: int) -> float:
    """Eq. (1) of paper 001."""
    total = degree1 + degree2
    return betweenness / total if total else 0.0


def element_value(record: RunRecord, metrics: dict[str, Any], measure: str) -> float | None:
    data = record.variant.data
    degree, betweenness = metrics.get("degree", {}), metrics.get("betweenness", {})
    if measure == "degree":
        return degree.get(data.get("element_id"))
    edge = (data.get("edge_ids") or [None])[0]
    if measure == "betweenness":
        return betweenness.get(edge)
    if measure == "eq1":
        nodes = data.get("node_ids") or []
        if edge not in betweenness or len(nodes) != 2:
            return None
        return subpath_score(betweenness[edge], degree.get(nodes[0], 0), degree.get(nodes[1], 0))
    raise ValueError(measure)


RANKED = {"degree": "node", "betweenness": "edge", "eq1": "subpath"}
TIES = {"degree": "first", "betweenness": "first", "eq1": "average"}  # the authors' notebook


def rank_histogram(groups: dict[str, QuestionPerturbations], metrics: dict[str, Any], measure: str) -> list[int]:
    """Relative ranks (within each path) of the critical elements, by ``measure``, in bins. A path
    with fewer than two ranked elements is left out (a lone element has no rank; the authors skip
    N <= 1 too), so one-edge paths do not pile up at rank 0."""
    kind, counts = RANKED[measure], [0] * BINS
    for g in groups.values():
        by_path: dict[str, list[RunRecord]] = defaultdict(list)
        for r in g.records.get(kind, []):
            by_path[r.variant.data.get("path", "")].append(r)
        for recs in by_path.values():
            recs.sort(key=lambda r: r.variant.data.get("index", 0))  # path order settles "first" ties
            scored = [(r, element_value(r, metrics, measure)) for r in recs]
            scored = [(r, v) for r, v in scored if v is not None]
            if len(scored) < 2:
                continue
            for (r, _), rank in zip(scored, relative_ranks([v for _, v in scored], TIES[measure])):
                if changed(r):
                    counts[bin_of(rank)] += 1
    return counts


def authors_rank_histogram(
    groups: dict[str, QuestionPerturbations], metrics: dict[str, Any], measure: str
) -> list[int] | None:
    """The authors' notebook's ranks, in their 20 bins: per question over all its paths; nodes
    once each by DiGraph degree (distinct neighbours per direction; None when the KB predates
    ``digraph_degree``), edges once per node pair by betweenness, sub-paths every variant by eq. (1)
    with averaged ties; nodes and edges skip a question of one element, a lone sub-path ranks 0."""
    kind, counts = RANKED[measure], [0] * AUTHORS_BINS
    if measure == "degree" and "digraph_degree" not in metrics:
        return None
    for g in groups.values():
        values: dict[Any, float] = {}
        critical: list[Any] = []
        for n, r in enumerate(
            sorted(
                g.records.get(kind, []),
                key=lambda r: (r.variant.data.get("path_index", 0), r.variant.data.get("index", 0)),
            )
        ):
            key, value = _authors_element(r, metrics, measure, n)
            if value is None:
                continue
            values.setdefault(key, value)
            if changed(r) and (measure != "degree" or key not in critical):
                critical.append(key)
        keys = list(values)
        if len(keys) < 2 and measure != "eq1":
            continue
        ranks = dict(zip(keys, relative_ranks([values[k] for k in keys], TIES[measure])))
        for key in critical:
            counts[bin_of(ranks[key], AUTHORS_BINS)] += 1
    return counts


def _authors_element(record: RunRecord, metrics: dict[str, Any], measure: str, n: int) -> tuple[Any, float | None]:
    """What the authors rank a variant as: its node, its node pair, or (sub-paths) the variant."""
    data = record.variant.data
    if measure == "degree":
        return data.get("element_id"), metrics["digraph_degree"].get(data.get("element_id"))
    if measure == "betweenness":
        return tuple(data.get("credited") or [data.get("element_id")]), element_value(record, metrics, measure)
    return n, element_value(record, metrics, measure)


def path_lengths(groups: dict[str, QuestionPerturbations]) -> dict[int, int]:
    """Edges per kept path -> how many baseline paths have that many (over the grouped questions)."""
    counts: Counter = Counter(len(p["edges"]) for g in groups.values() for p in g.paths)
    return dict(sorted(counts.items()))
