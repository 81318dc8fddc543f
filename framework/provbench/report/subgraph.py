"""A question page's subgraph picture: the part of the knowledge base a trajectory touched, as
inline SVG written from the project's own template (``templates/subgraph.svg.j2``).

What a node was is drawn in separate visual channels, so one node can be several things at once:
the fill says cited, visited or a never-visited neighbour (paper 000's Figure 2); a ring marks the
question's gold; a cross and a dashed outline mark what the record's intervention hid. Edges carry
their relation's label and direction. Every label is placed inside the picture's viewBox, which is
computed from the labels' extent (measured in the picture's font with a margin, and checked in headless
Chromium by the report's browser tests), so no name is cut off at the edge.

:func:`subgraph_data` reads the knowledge base and returns plain data; :func:`draw_subgraph` lays it
out and writes the SVG, in this process or the drawer's (:mod:`.drawer`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

NODE_RADIUS, FONT, EDGE_FONT = 10, 13, 11
# labels are measured in DejaVu Sans (matplotlib's own copy, the SVG's first font); another font
# the browser falls back to may run wider (Verdana: about a tenth), hence the margin
FONT_FILE = ("mpl-data", "fonts", "ttf", "DejaVuSans.ttf")
WIDTH_MARGIN = 1.12
EDGE_LENGTH, GAP, ROW_WIDTH = 150.0, 36.0, 920.0  # px: a relation's typical length, between parts, a row
LABEL_DEPTH = NODE_RADIUS + 6 + FONT * 1.3  # below a node's centre: its label
LEGEND_TEXT = 32  # px from a legend entry's left to its text (the template's too)
MAX_LABEL, MAX_EDGE_LABEL = 28, 24
MARK_KINDS = ("visited", "cited", "gold_entities", "gold_relations", "hidden_entities", "hidden_relations")
LEGEND = (
    ("cited", "cited"),
    ("visited", "visited, not cited"),
    ("neighbour", "neighbour, never visited"),
    ("gold", "gold (the question's gold chain)"),
    ("hidden", "hidden by this intervention"),
)


def picture_marks(
    visited: Iterable[str] = (), cited: Iterable[str] = (), gold: Any = None, hidden: dict[str, Any] | None = None
) -> dict[str, list[str]]:
    """What a picture marks: the trace's visited and cited entities, the gold's entities and
    relations (a :class:`~provbench.kb.goldmap.MappedGold`) and what an intervention hid (a record's
    ``hidden_by_intervention`` summary)."""
    hidden = hidden or {}
    return {
        "visited": list(dict.fromkeys(visited)),
        "cited": sorted(set(cited)),
        "gold_entities": sorted(gold.ids("entity")) if gold is not None else [],
        "gold_relations": sorted(gold.ids("relationship")) if gold is not None else [],
        "hidden_entities": sorted((hidden.get("entities") or {}).get("ids", [])),
        "hidden_relations": sorted(
            {*(hidden.get("relations") or {}).get("ids", []), *(hidden.get("invalidated") or {}).get("ids", [])}
        ),
    }


def subgraph_data(view: Any, marks: dict[str, list[str]], max_unvisited: int = 15, max_hidden: int = 8) -> dict:
    """The picture's graph, read from the knowledge base: the visited, cited and gold entities,
    what the intervention hid (up to ``max_hidden``) and never-visited neighbours of visited
    entities (up to ``max_unvisited``, gold and hidden ones first). Plain data, for another process."""
    visited, cited = marks["visited"], set(marks["cited"])
    gold, hidden = set(marks["gold_entities"]), set(marks["hidden_entities"])
    shown = list(dict.fromkeys([*visited, *sorted(cited), *sorted(gold), *marks["hidden_entities"][:max_hidden]]))
    neighbours: list[str] = []
    for entity_id in visited:
        for neighbour in view.neighbors(entity_id, limit=20):
            other = neighbour.entity.id
            if other not in shown and other not in neighbours:
                neighbours.append(other)
    neighbours.sort(key=lambda n: n not in gold and n not in hidden)  # stable: the rest keep their order
    graph = view.subgraph(shown + neighbours[:max_unvisited])
    gold_relations, hidden_relations = set(marks["gold_relations"]), set(marks["hidden_relations"])

    def roles(node: str) -> list[str]:
        kind = "cited" if node in cited else "visited" if node in visited else "neighbour"
        return [kind] + [flag for flag, ids in (("gold", gold), ("hidden", hidden)) if node in ids]

    return {
        "nodes": [(n, graph.nodes[n].get("name") or n, roles(n)) for n in graph.nodes],
        "edges": [
            (
                u,
                v,
                d.get("label") or "",
                [flag for flag, ids in (("gold", gold_relations), ("hidden", hidden_relations)) if k in ids],
            )
            for u, v, k, d in graph.edges(keys=True, data=True)
        ],
    }


def draw_subgraph(data: dict) -> str | None:
    """The SVG of :func:`subgraph_data`'s result (None for an empty graph)."""
    if not data["nodes"]:
        return None
    widths = {n: _text_width(_short(name, MAX_LABEL), FONT) for n, name, _ in data["nodes"]}
    centres = _layout([n for n, _, _ in data["nodes"]], [(u, v) for u, v, _, _ in data["edges"]], widths)
    nodes = [
        {
            "id": n,
            "x": centres[n][0],
            "y": centres[n][1],
            "name": re.sub(r"\s+", " ", name).strip(),
            "label": _short(name, MAX_LABEL),
            "roles": roles,
        }
        for n, name, roles in data["nodes"]
    ]
    edges = _edges(data["edges"], centres)
    used = {role for node in nodes for role in node["roles"]} | {f for edge in edges for f in edge["roles"]}
    legend = [(role, text) for role, text in LEGEND if role in used]
    left, top, right, bottom = _box(nodes, edges)
    items, legend_bottom = _legend_items(legend, left, max(right - left, 600.0), bottom + 16)
    right = max([right] + [i["x"] + LEGEND_TEXT + _text_width(i["text"], 12) + 8 for i in items])
    uid = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]
    return _template().render(
        uid=uid,
        nodes=nodes,
        edges=edges,
        legend=items,
        legend_text=LEGEND_TEXT,
        radius=NODE_RADIUS,
        font=FONT,
        edge_font=EDGE_FONT,
        view=[round(v, 1) for v in (left, top, right - left, legend_bottom - top)],
    )


def _layout(nodes: list[str], edges: list[tuple[str, str]], widths: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Node centres in px: each connected part laid out on its own (Kamada-Kawai: even spacing
    along paths; seeded, so a picture is the same on every run) at a fixed edge length, parts side
    by side in rows, lone entities in rows below them. ``widths``: each node's label width."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    parts = sorted(nx.connected_components(graph), key=lambda part: (-len(part), min(part)))
    centres: dict[str, tuple[float, float]] = {}
    shelf = _Shelf()
    for part in parts:
        local = _part_layout(graph.subgraph(part))
        left = min(x - max(NODE_RADIUS + 7, widths[n] / 2) for n, (x, _) in local.items())
        right = max(x + max(NODE_RADIUS + 7, widths[n] / 2) for n, (x, _) in local.items())
        top, bottom = min(y for _, y in local.values()), max(y for _, y in local.values())
        x0, y0 = shelf.place(right - left, bottom - top + LABEL_DEPTH, single=len(part) == 1)
        centres.update({n: (round(x - left + x0, 1), round(y - top + y0, 1)) for n, (x, y) in local.items()})
    return centres


class _Shelf:
    """Places boxes left to right in rows no wider than ``ROW_WIDTH``; lone nodes start a new row
    below the connected parts."""

    def __init__(self) -> None:
        self.x = self.y = self.row = 0.0
        self.singles = False

    def place(self, width: float, height: float, single: bool) -> tuple[float, float]:
        if (single and not self.singles and self.x > 0) or (self.x > 0 and self.x + width > ROW_WIDTH):
            self.x, self.y, self.row = 0.0, self.y + self.row + GAP, 0.0
        self.singles = self.singles or single
        at = (self.x, self.y)
        self.x += width + GAP
        self.row = max(self.row, height)
        return at


def _part_layout(part: Any) -> dict[str, tuple[float, float]]:
    """One connected part's centres, scaled so its median edge is ``EDGE_LENGTH`` px long."""
    import networkx as nx

    nodes = sorted(part.nodes)
    if len(nodes) == 1:
        return {nodes[0]: (0.0, 0.0)}
    if len(nodes) == 2:
        return {nodes[0]: (0.0, 0.0), nodes[1]: (EDGE_LENGTH, 0.0)}
    positions = nx.kamada_kawai_layout(part, pos=nx.spring_layout(part, seed=0))
    lengths = sorted(math.dist(positions[u], positions[v]) for u, v in part.edges)
    scale = EDGE_LENGTH / (lengths[len(lengths) // 2] or 1.0)
    return {n: (positions[n][0] * scale, positions[n][1] * scale) for n in nodes}


def _edges(edges: list, centres: dict[str, tuple[float, float]]) -> list[dict[str, Any]]:
    """Each node pair's relations as one line per direction, labels joined; a pair linked both ways
    gets two lines set apart, so neither hides the other."""
    by_pair: dict[tuple[str, str], dict[str, Any]] = {}
    for source, target, label, roles in edges:
        pair = by_pair.setdefault((source, target), {"labels": [], "roles": set()})
        pair["labels"].append(label)
        pair["roles"].update(roles)
    drawn = []
    for (source, target), pair in by_pair.items():
        (x1, y1), (x2, y2) = centres[source], centres[target]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        shift = 5 if (target, source) in by_pair else 0  # to the line's right, seen from its source
        ox, oy = -uy * shift, ux * shift
        inset = NODE_RADIUS + 4  # end at the node's rim, leaving room for the gold ring
        labels = list(dict.fromkeys(label for label in pair["labels"] if label))
        label = _short(", ".join(labels), MAX_EDGE_LABEL)
        # the label beside the line's middle, on its right, clear of the line whatever its slope
        away = 5 + abs(uy) * _text_width(label, EDGE_FONT) / 2 + abs(ux) * EDGE_FONT / 2
        drawn.append(
            {
                "x1": x1 + ux * inset + ox,
                "y1": y1 + uy * inset + oy,
                "x2": x2 - ux * inset + ox,
                "y2": y2 - uy * inset + oy,
                "roles": sorted(pair["roles"]),
                "label": label,
                "full": ", ".join(labels),
                "lx": (x1 + x2) / 2 + ox - uy * away,
                "ly": (y1 + y2) / 2 + oy + ux * away + EDGE_FONT * 0.35,
            }
        )
    return drawn


def _box(nodes: list[dict], edges: list[dict]) -> tuple[float, float, float, float]:
    """The extent of everything drawn (labels by their estimated width), padded."""
    ring = NODE_RADIUS + 7
    xs0 = [n["x"] - max(ring, _text_width(n["label"], FONT) / 2) for n in nodes]
    xs1 = [n["x"] + max(ring, _text_width(n["label"], FONT) / 2) for n in nodes]
    ys0 = [n["y"] - ring for n in nodes]
    ys1 = [n["y"] + LABEL_DEPTH for n in nodes]
    for e in edges:
        half = _text_width(e["label"], EDGE_FONT) / 2
        xs0.append(e["lx"] - half)
        xs1.append(e["lx"] + half)
        ys0.append(e["ly"] - EDGE_FONT)
        ys1.append(e["ly"] + EDGE_FONT / 2)
    pad = 8
    return min(xs0) - pad, min(ys0) - pad, max(xs1) + pad, max(ys1) + pad


def _legend_items(
    legend: list[tuple[str, str]], left: float, width: float, top: float
) -> tuple[list[dict[str, Any]], float]:
    """The legend's entries in rows as wide as the picture; and where the last row ends."""
    items, x, y = [], left + 8, top + 8
    for role, text in legend:
        step = LEGEND_TEXT + _text_width(text, 12) + 16
        if x > left + 8 and x + step > left + width:
            x, y = left + 8, y + 30
        items.append({"role": role, "text": text, "x": x, "y": y})
        x += step
    return items, y + 16


def _text_width(text: str, size: float) -> float:
    """How wide ``text`` runs at ``size`` px, with the margin for fallback fonts."""
    return _font().getlength(text) / 100 * size * WIDTH_MARGIN


@lru_cache(maxsize=1)
def _font() -> Any:
    import importlib.util

    from PIL import ImageFont

    package = Path(importlib.util.find_spec("matplotlib").origin).parent  # found, not imported: pyplot is slow
    return ImageFont.truetype(str(package.joinpath(*FONT_FILE)), 100)


def _short(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@lru_cache(maxsize=1)
def _template() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("provbench.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("subgraph.svg.j2")
