"""Paper 003's local graph and node scoring, equations (2)-(4), as plain functions, and the
authors' released ranking as a named alternative.

Nodes are the facts (triples) extracted from the retrieved documents. Two facts are linked
(undirected, so ``w_ji = w_ij``) when they come from the same document (co-occurrence, weight
``w_cooccur``) and when they share an entity, i.e. one's subject or object equals the other's
after case and space folding (relation link, weight ``w_entity``); both links add up.

  (2) s_i(0)   = alpha * sim(q, d_i) + beta / r_i
  (3) s_i(t+1) = (1 - gamma) * s_i(t) + gamma * sum_{j in N(i)} (w_ji / Z_j) * s_j(t),  Z_j = sum_k w_jk
  (4) score(i) = lambda1 * s_i(T) + lambda2 * centrality(i) + lambda3 * conf(i)

Eq. (3) as printed has no term that keeps an isolated fact's score (one that shares no page and
no entity with another): its sum is empty, so s_i(T) = (1 - gamma)^T s_i(0), 0.25 s_i(0) with the
defaults, and the only fact of the best page can rank last. ``isolated="decay"`` (default) is the
paper's form; ``isolated="keep"`` gives such a fact s(T) = s(0), as a self-loop would.

``gamma = 0`` leaves s(T) = s(0): eqs. (2) and (4) without propagation. That is *not* the
authors' released code, which ranks by none of eqs. (2)-(4): :func:`authors_ranking` is their
formula, confidence x (1 + 0.1 mentions) x retrieval score x (1 + 0.2 query-word overlap).
Centrality is degree centrality (degree / (n - 1)) or PageRank, both over the edge weights by
default (weighted degree = the sum of a node's edge weights / (n - 1)); ``weighted=False`` reads
every edge as 1 for both.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal, Sequence

import networkx as nx

Centrality = Literal["degree", "pagerank"]
Isolated = Literal["decay", "keep"]


@dataclass(frozen=True)
class FactNode:
    id: str
    subject: str
    relation: str
    object: str
    confidence: float
    document: str  # id of the retrieved document the fact came from
    rank: int  # r_i: the document's retrieval rank, from 1
    similarity: float  # sim(q, d_i), eq. (1)
    sources: tuple[str, ...] = ()  # the sentence(s) of the document the fact is tied to


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def local_graph(nodes: Sequence[FactNode], w_cooccur: float = 1.0, w_entity: float = 1.0) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(n.id for n in nodes)
    for a_index, a in enumerate(nodes):
        for b in nodes[a_index + 1 :]:
            weight = 0.0
            if w_cooccur and a.document == b.document:
                weight += w_cooccur
            if w_entity and {_key(a.subject), _key(a.object)} & {_key(b.subject), _key(b.object)}:
                weight += w_entity
            if weight > 0:
                graph.add_edge(a.id, b.id, weight=weight)
    return graph


def initial_scores(nodes: Sequence[FactNode], alpha: float, beta: float) -> dict[str, float]:
    """Eq. (2)."""
    return {n.id: alpha * n.similarity + beta / n.rank for n in nodes}


def propagate(
    graph: nx.Graph, scores: dict[str, float], gamma: float, iterations: int, isolated: Isolated = "decay"
) -> dict[str, float]:
    """Eq. (3), applied ``iterations`` (T) times, all nodes updated from the previous step; a node
    without edges decays (the printed form) or, with ``isolated="keep"``, keeps its score."""
    strength = {j: sum(w for _, _, w in graph.edges(j, data="weight")) for j in graph.nodes}
    kept = {i for i in graph.nodes if not strength[i]} if isolated == "keep" else set()
    current = dict(scores)
    for _ in range(iterations):
        current = {
            i: current[i]
            if i in kept
            else (1 - gamma) * current[i]
            + gamma * sum(graph[j][i]["weight"] / strength[j] * current[j] for j in graph.neighbors(i))
            for i in graph.nodes
        }
    return current


def isolated_facts(graph: nx.Graph) -> list[str]:
    """Nodes without an edge: eq. (3) as printed decays them by (1 - gamma)^T."""
    return [n for n in graph.nodes if graph.degree(n) == 0]


def centrality(graph: nx.Graph, kind: Centrality, weighted: bool = True) -> dict[str, float]:
    """Degree centrality (weighted: strength / (n - 1)) or PageRank, on the same edge weights."""
    if graph.number_of_nodes() == 0:
        return {}
    weight = "weight" if weighted else None
    if kind == "pagerank":
        return nx.pagerank(graph, weight=weight)
    if graph.number_of_nodes() == 1:
        return {n: 0.0 for n in graph.nodes}
    scale = graph.number_of_nodes() - 1
    return {n: degree / scale for n, degree in graph.degree(weight=weight)}


def final_scores(
    propagated: dict[str, float],
    central: dict[str, float],
    confidence: dict[str, float],
    lambdas: tuple[float, float, float],
) -> dict[str, float]:
    """Eq. (4)."""
    l1, l2, l3 = lambdas
    return {i: l1 * propagated[i] + l2 * central[i] + l3 * confidence[i] for i in propagated}


def rank(nodes: Sequence[FactNode], scores: dict[str, float]) -> list[FactNode]:
    """Highest score first; ties keep extraction order (document rank, then position)."""
    order = {n.id: k for k, n in enumerate(nodes)}
    return sorted(nodes, key=lambda n: (-scores[n.id], order[n.id]))


@dataclass(frozen=True)
class Scored:
    graph: nx.Graph
    s0: dict[str, float]  # empty for the authors' ranking, which has no eq. (2)-(3)
    sT: dict[str, float]
    centrality: dict[str, float]
    final: dict[str, float]
    ranked: list[FactNode]


def score_facts(
    nodes: Sequence[FactNode],
    *,
    alpha: float,
    beta: float,
    gamma: float,
    iterations: int,
    lambdas: tuple[float, float, float],
    centrality_kind: Centrality,
    weighted: bool = True,
    w_cooccur: float = 1.0,
    w_entity: float = 1.0,
    isolated: Isolated = "decay",
) -> Scored:
    graph = local_graph(nodes, w_cooccur, w_entity)
    s0 = initial_scores(nodes, alpha, beta)
    sT = propagate(graph, s0, gamma, iterations, isolated)
    central = centrality(graph, centrality_kind, weighted)
    final = final_scores(sT, central, {n.id: n.confidence for n in nodes}, lambdas)
    return Scored(graph, s0, sT, central, final, rank(nodes, final))


def authors_scores(nodes: Sequence[FactNode], claim: str) -> dict[str, float]:
    """The authors' released ranking (their ``TripletRanker``): confidence x (1 + 0.1 x mentions)
    x retrieval score x (1 + 0.2 x overlap). Mentions: graph facts with the same (subject,
    relation, object); retrieval score: max(0.2, 1 - 0.05 x (r_i - 1)); overlap: words (split on
    whitespace, lower-cased) shared by the claim and the fact."""
    mentions = Counter((n.subject, n.relation, n.object) for n in nodes)
    claim_words = set(claim.lower().split())

    def score(n: FactNode) -> float:
        overlap = len(claim_words & set(f"{n.subject} {n.relation} {n.object}".lower().split()))
        retrieval = max(0.2, 1.0 - 0.05 * (n.rank - 1))
        return n.confidence * (1 + 0.1 * mentions[(n.subject, n.relation, n.object)]) * retrieval * (1 + 0.2 * overlap)

    return {n.id: score(n) for n in nodes}


def authors_ranking(nodes: Sequence[FactNode], claim: str, w_cooccur: float = 1.0, w_entity: float = 1.0) -> Scored:
    """Facts ranked by :func:`authors_scores`; the local graph is built for the trace only."""
    final = authors_scores(nodes, claim)
    return Scored(local_graph(nodes, w_cooccur, w_entity), {}, {}, {}, final, rank(nodes, final))
