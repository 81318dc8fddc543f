"""Retrieved KG paths as the system keeps them, how they read, and how they are perturbed.

A path is a JSON-friendly dict (it lives in ``trace.artifacts``)::

    {"id": "path:0", "nodes": [{"id", "name", "label"}, ...],
     "edges": [{"id", "label", "source", "target", "text_unit", "source_file"}, ...],
     "format": "lines" | "chain", "subpath_rule": "paper" | "authors",
     "removed": {"node": [k, ...], "edge": [k, ...], "subpath": [k, ...]}}

edge k joins nodes k and k+1 (``source``/``target`` keep the relation's own direction). A path
reads (``format``) as one triplet line per edge, "head ->[RELATION]-> tail" in the relation's own
direction, as paper 001's Tables 1-2 show; or as the authors' code writes it, one chain
"n0->[r0]->n1->[r1]->n2" in path order.

Perturbations (paper 001, section 4; one variant per element):

- **node** k: the node's name becomes "__"; edges stay (n variants);
- **edge** k: the relation text becomes "__"; both nodes stay (n-1 variants);
- **sub-path** k, the triplet (node k, edge k, node k+1) (n-1 variants), by one of two rules:
  ``paper`` (Table 2's worked example): the triplet's line is dropped, so a node stays when
  another remaining triplet holds it; ``authors`` (their experiment notebook): node k, edge k and
  node k+1 all become "__" where they stand in the chain ("a->[R]->__->[__]->__").

Each variant says what it blanked (``blanked``: node and edge ids no longer shown) and whom the
paper's explanation credits when it changes the answer (``credited``: a node removal its node; an
edge or sub-path removal its two end nodes, which is how Table 2 counts "PPHN 2 times").

Relative position of element k among the m of its kind: k / (m - 1) as the paper's text says (0 =
start, 1 = end; 0 when m = 1), and the authors' k / m beside it (``position_authors``).
"""

from __future__ import annotations

from typing import Any

BLANK = "__"
KINDS = ("node", "edge", "subpath")
RULES = ("paper", "authors")
FORMATS = ("lines", "chain")
NOUNS = {"node": "node", "edge": "edge", "subpath": "sub-path"}


def make_path(path_id: str, nodes: list[dict], edges: list[dict], fmt: str = "lines") -> dict[str, Any]:
    if len(edges) != len(nodes) - 1:
        raise ValueError(f"a path of {len(nodes)} nodes needs {len(nodes) - 1} edges, got {len(edges)}")
    if fmt not in FORMATS:
        raise ValueError(f"path format must be one of {FORMATS}, got {fmt!r}")
    return {"id": path_id, "nodes": nodes, "edges": edges, "format": fmt, "removed": {k: [] for k in KINDS}}


def removed(path: dict, kind: str) -> set[int]:
    return set((path.get("removed") or {}).get(kind, []))


def shown(path: dict) -> tuple[list[str], list[str], set[int]]:
    """What each node and edge shows after the path's perturbations, and the dropped edges."""
    nodes, edges = path["nodes"], path["edges"]
    node_text = [BLANK if i in removed(path, "node") else n["name"] for i, n in enumerate(nodes)]
    edge_text = [BLANK if k in removed(path, "edge") else e["label"] for k, e in enumerate(edges)]
    dropped: set[int] = set()
    for k in removed(path, "subpath"):
        if path.get("subpath_rule", "paper") == "authors":
            node_text[k] = node_text[k + 1] = edge_text[k] = BLANK
        else:
            dropped.add(k)
    return node_text, edge_text, dropped


def triplet_lines(path: dict) -> list[str]:
    """The path as it is shown (its ``format``), with every perturbation applied."""
    node_text, edge_text, dropped = shown(path)
    if path.get("format", "lines") == "chain":
        return _chains(node_text, edge_text, dropped)
    lines = []
    for k in range(len(path["edges"])):
        if k not in dropped:
            head, tail = edge_ends(path, k)
            lines.append(f"{node_text[head]} ->[{edge_text[k]}]-> {node_text[tail]}")
    return lines


def edge_ends(path: dict, k: int) -> tuple[int, int]:
    """Indices of edge k's head and tail on the path: the relation's own direction, which an
    undirected search may walk backwards (a relation whose ends are not the path's nodes keeps
    the path order)."""
    nodes, edge = path["nodes"], path["edges"][k]
    ends = {nodes[k]["id"]: k, nodes[k + 1]["id"]: k + 1}
    head, tail = ends.get(edge.get("source"), k), ends.get(edge.get("target"), k + 1)
    return (k, k + 1) if head == tail else (head, tail)


def _chains(node_text: list[str], edge_text: list[str], dropped: set[int]) -> list[str]:
    """The authors' "a->[r]->b->[s]->c", one chain per run of edges left between dropped ones."""
    chains, current = [], ""
    for k, relation in enumerate(edge_text):
        if k in dropped:
            if current:
                chains.append(current)
            current = ""
            continue
        current = (current or node_text[k]) + f"->[{relation}]->{node_text[k + 1]}"
    return chains + [current] if current else chains


def path_text(path: dict) -> str:
    return "\n".join(triplet_lines(path)) or "(the path is empty after the perturbation)"


def relative_position(index: int, count: int) -> float:
    return index / (count - 1) if count > 1 else 0.0


def element_count(path: dict, kind: str) -> int:
    return len(path["nodes"]) if kind == "node" else len(path["edges"])


def describe_element(path: dict, kind: str, k: int) -> dict[str, Any]:
    """What variant k of ``kind`` removes: ids, a readable name, label and source files."""
    nodes, edges = path["nodes"], path["edges"]
    if kind == "node":
        touching = [e for i, e in enumerate(edges) if i in (k - 1, k)]
        return {
            "element_id": nodes[k]["id"],
            "element": nodes[k]["name"],
            "label": nodes[k].get("label", ""),
            "node_ids": [nodes[k]["id"]],
            "edge_ids": [],
            "source_files": _files(touching),
        }
    edge = edges[k]
    data = {
        "element_id": edge["id"],
        "element": edge["label"],
        "label": "",
        "edge_ids": [edge["id"]],
        "source_files": _files([edge]),
        "node_ids": [],
    }
    if kind == "subpath":
        data["node_ids"] = [nodes[k]["id"], nodes[k + 1]["id"]]
        head, tail = edge_ends(path, k)
        data["element"] = f"{nodes[head]['name']} ->[{edge['label']}]-> {nodes[tail]['name']}"
    return data


def _files(edges: list[dict]) -> list[str]:
    return list(dict.fromkeys(e["source_file"] for e in edges if e.get("source_file")))


def blanked(before: dict, after: dict) -> dict[str, list[str]]:
    """Ids of the nodes and edges ``after`` no longer shows (blanked, or gone with a dropped line)."""
    node_text, edge_text, dropped = shown(after)
    still = {k for k in range(len(edge_text)) if k not in dropped}
    gone_nodes = [
        n["id"]
        for i, n in enumerate(before["nodes"])
        if node_text[i] == BLANK or not any(k in still for k in (i - 1, i))
    ]
    gone_edges = [e["id"] for k, e in enumerate(before["edges"]) if k in dropped or edge_text[k] == BLANK]
    return {"nodes": gone_nodes, "edges": gone_edges}


def credited(path: dict, kind: str, k: int) -> list[str]:
    """The nodes the paper's explanation credits when this removal changes the answer."""
    ends = [k] if kind == "node" else [k, k + 1]
    return [path["nodes"][i]["id"] for i in ends]


def enumerate_variants(paths: list[dict], kind: str, rule: str = "paper") -> list[dict[str, Any]]:
    """One variant per element of ``kind`` on every path: id, description and data (what it
    removes, what that blanks, whom a change credits, and the path as it then reads)."""
    if rule not in RULES:
        raise ValueError(f"sub-path rule must be one of {RULES}, got {rule!r}")
    variants = []
    for p, path in enumerate(paths):
        if len(path["nodes"]) < 2:
            continue
        count = element_count(path, kind)
        for k in range(count):
            data = {
                "kind": kind,
                "path": path["id"],
                "path_index": p,
                "index": k,
                "count": count,
                "position": round(relative_position(k, count), 6),
                "position_authors": round(k / count, 6),
                **({"rule": rule} if kind == "subpath" else {}),
                **describe_element(path, kind, k),
            }
            after = apply_variant([path], {**data, "path_index": 0})[0]
            data.update(blanked=blanked(path, after), credited=credited(path, kind, k), path_after=triplet_lines(after))
            suffix = " (the authors' blanking)" if kind == "subpath" and rule == "authors" else ""
            variants.append(
                {
                    "id": f"{kind}:{p}:{k}",
                    "data": data,
                    "description": f"remove {NOUNS[kind]} {k + 1}/{count} of {path['id']}: {data['element']}{suffix}",
                }
            )
    return variants


def apply_variant(paths: list[dict], data: dict[str, Any]) -> list[dict]:
    """Copies of ``paths`` with the variant's element marked removed on its path."""
    out = []
    for p, path in enumerate(paths):
        copy = {**path, "removed": {k: list(v) for k, v in (path.get("removed") or {}).items()}}
        if p == data["path_index"]:
            copy["removed"].setdefault(data["kind"], []).append(data["index"])
            if data["kind"] == "subpath":
                copy["subpath_rule"] = data.get("rule", "paper")
        out.append(copy)
    return out
