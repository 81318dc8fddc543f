"""The per-question explanation of paper 001's Table 2.

An entity's influence is how many answer-changing perturbations credit it, as Table 2 counts
("Removing PPHN led to a different answer 2 times": its node removal and the removal of an edge
it ends): a node removal credits its node, an edge or sub-path removal its two end nodes
(``credited`` in the variant's data; the authors' ``important_entities``). Influence is keyed by
entity id (two paths may share a name) and shown by name. The most influential entity has the
highest count (ties: the earlier on the path). The end-user explanation names it; the technical
one lists every credited entity and how often; the source files are those of the edges it ends.
Beside them, ``relation_influence`` counts per relation the answer-changing removals that blanked
it (its edge removal and its sub-path), so a relation that matters stays visible too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .analysis import QuestionPerturbations, changed
from .paths import KINDS

SINGULAR = {
    "Diseases": "condition",
    "Symptoms": "symptom",
    "Treatments": "treatment",
    "Body Parts": "body part",
    "Diagnostic Tests": "diagnostic test",
    "Risk Factors": "risk factor",
    "Medications": "medication",
}


@dataclass
class Explanation:
    question_id: str
    changed_elements: list[tuple[str, str, str | None]] = field(default_factory=list)  # kind, element, new answer
    influence: dict[str, int] = field(default_factory=dict)  # entity id -> answer-changing removals crediting it
    relation_influence: dict[str, int] = field(default_factory=dict)  # relation id -> answer-changing removals of it
    names: dict[str, str] = field(default_factory=dict)  # element id -> the name shown for it
    most_influential: str | None = None
    most_influential_id: str | None = None
    for_user: str = ""
    technical: str = ""
    sources: list[str] = field(default_factory=list)


@dataclass
class _PathIndex:
    """Names, labels, order on the path, relation ends and source files of a question's paths."""

    names: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    order: dict = field(default_factory=dict)
    ends: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)


def _index(paths: list[dict], relation_sources: dict[str, str]) -> _PathIndex:
    ix = _PathIndex()
    for path in paths:
        for i, node in enumerate(path["nodes"]):
            ix.names[node["id"]], ix.labels[node["id"]] = node["name"], node.get("label", "")
            ix.order.setdefault(node["id"], (path["id"], 2 * i))
            ix.files.setdefault(node["id"], [])
        for i, edge in enumerate(path["edges"]):
            ix.names[edge["id"]] = edge["label"]
            ix.ends[edge["id"]] = (path["nodes"][i]["name"], path["nodes"][i + 1]["name"])
            ix.order.setdefault(edge["id"], (path["id"], 2 * i + 1))
            source = edge.get("source_file") or relation_sources.get(edge["id"], "")
            ix.files[edge["id"]] = [source] if source else []
            for node in (path["nodes"][i], path["nodes"][i + 1]):
                if source and source not in ix.files[node["id"]]:
                    ix.files[node["id"]].append(source)
    return ix


def _credited(data: dict) -> list[str]:
    """Entities a change credits (records made before ``credited`` existed: the element's nodes)."""
    if "credited" in data:
        return list(data["credited"])
    return list(dict.fromkeys([*data.get("node_ids", [])] or [data.get("element_id")]))


def explain(g: QuestionPerturbations, relation_sources: dict[str, str] | None = None) -> Explanation:
    """``relation_sources`` (relation id -> file, from the KB's graph metrics) names the file of
    an edge whose path entry has none (no chunk holds it)."""
    out = Explanation(g.question_id)
    ix = _index(g.paths, relation_sources or {})
    nodes: Counter = Counter()
    relations: Counter = Counter()
    for kind in KINDS:
        for r in g.records.get(kind, []):
            if not changed(r):
                continue
            data = r.variant.data
            out.changed_elements.append((kind, data.get("element", ""), r.trace.answer if r.trace else None))
            nodes.update(e for e in _credited(data) if e)
            relations.update(data.get("edge_ids", []))
    out.influence, out.relation_influence = dict(nodes.most_common()), dict(relations.most_common())
    out.names = {e: display_name(e, ix.names, ix.ends) for e in [*nodes, *relations]}
    if not nodes:
        out.for_user = "No single removal changed the answer: no path element stands out."
        return out
    top = min(nodes, key=lambda e: (-nodes[e], ix.order.get(e, ("~", 0))))
    out.most_influential_id, out.most_influential = top, out.names[top]
    noun = SINGULAR.get(ix.labels.get(top, ""), "element")
    out.for_user = (
        f"The most important {noun} for answering the question is {out.most_influential}. "
        "It had the biggest impact on the result."
    )
    out.technical = " ".join(
        f"Removing {out.names[e]} led to a different answer {n} time{'s' * (n != 1)}." for e, n in nodes.most_common()
    )
    out.sources = ix.files.get(top, [])
    return out


def display_name(element: str, names: dict[str, str], ends: dict[str, tuple[str, str]]) -> str:
    """An element's name; a relation whose text another element shares also names its two ends,
    so two "AFFECTS" edges stay apart in the explanation."""
    name = names.get(element, element)
    shared = sum(1 for other, n in names.items() if n == name and other != element)
    if not shared:
        return name
    return f"{name} ({ends[element][0]} – {ends[element][1]})" if element in ends else f"{name} [{element}]"
