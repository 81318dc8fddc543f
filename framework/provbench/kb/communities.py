"""Leiden communities over the entity graph (graspologic's native core)."""

from __future__ import annotations

from collections import Counter
from typing import Iterable


def leiden_communities(edges: Iterable[tuple[str, str]], seed: int = 0,
                       resolution: float = 1.0) -> list[list[str]]:
    """Partition the undirected entity graph; returns member lists, largest first.

    Parallel relations between one pair add up to the edge weight; self-loops carry no
    community information and are dropped. Entities without relations are in no community.
    Member lists and their order are deterministic for a given graph and seed.
    """
    from graspologic_native import leiden

    weights: Counter[tuple[str, str]] = Counter()
    for source, target in edges:
        if source != target:
            weights[(min(source, target), max(source, target))] += 1
    if not weights:
        return []
    weighted = [(a, b, float(w)) for (a, b), w in sorted(weights.items())]
    _, membership = leiden(weighted, resolution=resolution, seed=seed)
    groups: dict[int, list[str]] = {}
    for node, group in membership.items():
        groups.setdefault(group, []).append(node)
    members = [sorted(nodes) for nodes in groups.values()]
    return sorted(members, key=lambda nodes: (-len(nodes), nodes[0]))
