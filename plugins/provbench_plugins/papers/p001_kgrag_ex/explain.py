"""The per-question explanation of paper 001's Table 2.

An element's influence is how many answer-changing perturbations removed it: its own node or
edge removal, and every removed sub-path that holds it. Influence is keyed by element id (two
relations may share a text, two paths may share a node name) and shown by name. The most influential element is the one
with the highest count (ties: the earlier on the path). The end-user explanation names it; the
technical one lists every element that changed the answer and how often; the source files are
those of the edges it came from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .analysis import QuestionPerturbations, changed
from .paths import KINDS

SINGULAR = {"Diseases": "condition", "Symptoms": "symptom", "Treatments": "treatment", "Body Parts": "body part",
            "Diagnostic Tests": "diagnostic test", "Risk Factors": "risk factor", "Medications": "medication"}


@dataclass
class Explanation:
    question_id: str
    changed_elements: list[tuple[str, str, str | None]] = field(default_factory=list)  # kind, element, new answer
    influence: dict[str, int] = field(default_factory=dict)  # element id -> answer-changing removals
    names: dict[str, str] = field(default_factory=dict)  # element id -> the name shown for it
    most_influential: str | None = None
    for_user: str = ""
    technical: str = ""
    sources: list[str] = field(default_factory=list)


def explain(g: QuestionPerturbations, relation_sources: dict[str, str] | None = None) -> Explanation:
    """``relation_sources`` (relation id -> file, from the KB's graph metrics) names the file of
    an edge whose path entry has none (no chunk holds it)."""
    out = Explanation(g.question_id)
    counts: Counter = Counter()
    names, labels, files, order, ends = {}, {}, {}, {}, {}
    for path in g.paths:
        for i, node in enumerate(path["nodes"]):
            names[node["id"]], labels[node["id"]] = node["name"], node.get("label", "")
            order.setdefault(node["id"], (path["id"], 2 * i))
        for i, edge in enumerate(path["edges"]):
            names[edge["id"]] = edge["label"]
            ends[edge["id"]] = (path["nodes"][i]["name"], path["nodes"][i + 1]["name"])
            order.setdefault(edge["id"], (path["id"], 2 * i + 1))
            source = edge.get("source_file") or (relation_sources or {}).get(edge["id"], "")
            files[edge["id"]] = [source] if source else []
            for node in (path["nodes"][i], path["nodes"][i + 1]):
                files.setdefault(node["id"], [])
                if source and source not in files[node["id"]]:
                    files[node["id"]].append(source)
    for kind in KINDS:
        for r in g.records.get(kind, []):
            if not changed(r):
                continue
            data = r.variant.data
            out.changed_elements.append((kind, data.get("element", ""), r.trace.answer if r.trace else None))
            for element in {data.get("element_id"), *data.get("node_ids", []), *data.get("edge_ids", [])} - {None}:
                counts[element] += 1
    out.influence = dict(counts.most_common())
    out.names = {e: display_name(e, names, ends) for e in counts}
    if not counts:
        out.for_user = "No single removal changed the answer: no path element stands out."
        return out
    top = min(counts, key=lambda e: (-counts[e], order.get(e, ("~", 0))))
    out.most_influential = out.names[top]
    noun = SINGULAR.get(labels.get(top, ""), "element" if top in labels else "relation")
    out.for_user = (f"The most important {noun} for answering the question is {out.most_influential}. "
                    "It had the biggest impact on the result.")
    out.technical = " ".join(f"Removing {out.names[e]} led to a different answer {n} time{'s' * (n != 1)}."
                             for e, n in counts.most_common())
    out.sources = files.get(top, [])
    return out


def display_name(element: str, names: dict[str, str], ends: dict[str, tuple[str, str]]) -> str:
    """An element's name; a relation whose text another element shares also names its two ends,
    so two "AFFECTS" edges stay apart in the explanation."""
    name = names.get(element, element)
    shared = sum(1 for other, n in names.items() if n == name and other != element)
    if not shared:
        return name
    return f"{name} ({ends[element][0]} – {ends[element][1]})" if element in ends else f"{name} [{element}]"
