"""Retrieved KG paths as the system keeps them, how they read, and how they are perturbed.

A path is a JSON-friendly dict (it lives in ``trace.artifacts``)::

    {"id": "path:0", "nodes": [{"id", "name", "label"}, ...],
     "edges": [{"id", "label", "source", "target", "text_unit", "source_file"}, ...],
     "removed": {"node": [k, ...], "edge": [k, ...], "subpath": [k, ...]}}

edge k joins nodes k and k+1 (``source``/``target`` keep the relation's own direction). A path
reads as one triplet line per edge, "head ->[RELATION]-> tail", as paper 001's Tables 1-2 show.

Perturbations (paper 001, section 4; one variant per element):

- **node** k: the node's name becomes "__" wherever it appears; edges stay (n variants);
- **edge** k: the relation text becomes "__"; both nodes stay (n-1 variants);
- **sub-path** k: the triplet (node k, edge k, node k+1) is removed: its line disappears, so a
  node stays only if another remaining triplet holds it (n-1 variants). This is the sub-path
  eq. (1) scores (two nodes and the edge between them) and the one Table 2 removes.

Relative position of element k among m elements of its kind: k / (m - 1) (0 = start, 1 = end;
0 when m = 1).
"""

from __future__ import annotations

from typing import Any

BLANK = "__"
KINDS = ("node", "edge", "subpath")


def make_path(path_id: str, nodes: list[dict], edges: list[dict]) -> dict[str, Any]:
    if len(edges) != len(nodes) - 1:
        raise ValueError(f"a path of {len(nodes)} nodes needs {len(nodes) - 1} edges, got {len(edges)}")
    return {"id": path_id, "nodes": nodes, "edges": edges, "removed": {k: [] for k in KINDS}}


def removed(path: dict, kind: str) -> set[int]:
    return set((path.get("removed") or {}).get(kind, []))


def triplet_lines(path: dict) -> list[str]:
    """The path as triplet lines, with every perturbation applied."""
    nodes, lines = path["nodes"], []
    gone_nodes, gone_edges, gone_triplets = removed(path, "node"), removed(path, "edge"), removed(path, "subpath")
    for k, edge in enumerate(path["edges"]):
        if k in gone_triplets:
            continue
        ends = {nodes[k]["id"]: k, nodes[k + 1]["id"]: k + 1}
        head, tail = ends.get(edge.get("source"), k), ends.get(edge.get("target"), k + 1)
        if head == tail:  # a relation whose ends are not the path's nodes: keep the path order
            head, tail = k, k + 1
        name = lambda i: BLANK if i in gone_nodes else nodes[i]["name"]  # noqa: E731
        relation = BLANK if k in gone_edges else edge["label"]
        lines.append(f"{name(head)} ->[{relation}]-> {name(tail)}")
    return lines


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
        return {"element_id": nodes[k]["id"], "element": nodes[k]["name"], "label": nodes[k].get("label", ""),
                "node_ids": [nodes[k]["id"]], "edge_ids": [],
                "source_files": _files(touching)}
    edge = edges[k]
    data = {"element_id": edge["id"], "element": edge["label"], "label": "", "edge_ids": [edge["id"]],
            "source_files": _files([edge]), "node_ids": []}
    if kind == "subpath":
        data["node_ids"] = [nodes[k]["id"], nodes[k + 1]["id"]]
        data["element"] = f"{nodes[k]['name']} ->[{edge['label']}]-> {nodes[k + 1]['name']}"
    return data


def _files(edges: list[dict]) -> list[str]:
    return list(dict.fromkeys(e["source_file"] for e in edges if e.get("source_file")))


def enumerate_variants(paths: list[dict], kind: str) -> list[dict[str, Any]]:
    """One variant per element of ``kind`` on every path: id, description and data."""
    variants = []
    for p, path in enumerate(paths):
        if len(path["nodes"]) < 2:
            continue
        count = element_count(path, kind)
        for k in range(count):
            data = {"kind": kind, "path": path["id"], "path_index": p, "index": k, "count": count,
                    "position": round(relative_position(k, count), 6), **describe_element(path, kind, k)}
            noun = {"node": "node", "edge": "edge", "subpath": "sub-path"}[kind]
            variants.append({"id": f"{kind}:{p}:{k}", "data": data,
                             "description": f"remove {noun} {k + 1}/{count} of {path['id']}: {data['element']}"})
    return variants


def apply_variant(paths: list[dict], data: dict[str, Any]) -> list[dict]:
    """Copies of ``paths`` with the variant's element marked removed on its path."""
    out = []
    for p, path in enumerate(paths):
        copy = {**path, "removed": {k: list(v) for k, v in (path.get("removed") or {}).items()}}
        if p == data["path_index"]:
            copy["removed"].setdefault(data["kind"], []).append(data["index"])
        out.append(copy)
    return out
