"""Leiden communities over the entity graph (graspologic's native core), flat or hierarchical.

Leiden only ever merges nodes that are connected, so a flat partition has at least one
community per connected component: an extracted graph with hundreds of small islands gets
hundreds of communities. GraphRAG's answer, offered here, is to cluster the largest connected
component only (``scope="largest-component"``) and to split clusters above ``max_cluster_size``
again (hierarchical Leiden), keeping the top levels as community reports.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Literal

Scope = Literal["all", "largest-component"]


@dataclass(frozen=True)
class Cluster:
    """One community: its members, its level (0 = top) and its parent's index in the result list."""

    members: tuple[str, ...]
    level: int = 0
    parent: int | None = None


def weighted_edges(edges: Iterable[tuple[str, str]]) -> list[tuple[str, str, float]]:
    """Undirected, self-loops dropped, parallel relations summed into the weight; sorted (deterministic)."""
    weights: Counter[tuple[str, str]] = Counter()
    for source, target in edges:
        if source != target:
            weights[(min(source, target), max(source, target))] += 1
    return [(a, b, float(w)) for (a, b), w in sorted(weights.items())]


def largest_component(edges: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """The edges of the largest connected component (ties: the one with the smallest node id)."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_weighted_edges_from(edges)
    if graph.number_of_nodes() == 0:
        return []
    best = min(nx.connected_components(graph), key=lambda nodes: (-len(nodes), min(nodes)))
    return [e for e in edges if e[0] in best]


def detect_clusters(
    edges: Iterable[tuple[str, str]],
    *,
    seed: int = 0,
    resolution: float = 1.0,
    hierarchical: bool = False,
    max_cluster_size: int = 10,
    levels: int = 1,
    scope: Scope = "all",
) -> list[Cluster]:
    """Communities of the entity graph.

    ``hierarchical``: graspologic's hierarchical Leiden; a cluster above ``max_cluster_size``
    members is split again one level down. ``levels`` top levels are returned (1: the top level
    only). ``scope="largest-component"`` clusters only the largest connected component; the other
    entities are in no community. Clusters are ordered by level, then largest first; a
    cluster below the top names its parent by index in the returned list.
    """
    from graspologic_native import hierarchical_leiden, leiden

    weighted = weighted_edges(edges)
    if scope == "largest-component":
        weighted = largest_component(weighted)
    if not weighted:
        return []
    if not hierarchical:
        _, membership = leiden(weighted, resolution=resolution, seed=seed)
        return [Cluster(tuple(m)) for m in _groups(membership.items())]
    rows = hierarchical_leiden(weighted, resolution=resolution, max_cluster_size=max_cluster_size, seed=seed)
    by_level: dict[int, dict[int, list[str]]] = {}
    parent_of: dict[tuple[int, int], int | None] = {}
    for row in rows:
        if row.level >= levels:
            continue
        by_level.setdefault(row.level, {}).setdefault(row.cluster, []).append(row.node)
        parent_of[(row.level, row.cluster)] = row.parent_cluster
    clusters: list[Cluster] = []
    index_of: dict[tuple[int, int], int] = {}
    for level in sorted(by_level):
        groups = sorted(by_level[level].items(), key=lambda kv: (-len(kv[1]), min(kv[1])))
        for cluster_id, members in groups:
            parent = parent_of[(level, cluster_id)]
            index_of[(level, cluster_id)] = len(clusters)
            clusters.append(
                Cluster(
                    tuple(sorted(members)), level, index_of.get((level - 1, parent)) if parent is not None else None
                )
            )
    return clusters


def _groups(membership: Iterable[tuple[str, int]]) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    for node, group in membership:
        groups.setdefault(group, []).append(node)
    members = [sorted(nodes) for nodes in groups.values()]
    return sorted(members, key=lambda nodes: (-len(nodes), nodes[0]))
