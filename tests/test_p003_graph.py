"""Paper 003's equations (2)-(4) on a five-node graph computed by hand, gamma = 0 (no
propagation), both centralities over the same edge weights, and the authors' released ranking."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from provbench_plugins.papers.p003_ga_rag.graph import (
    FactNode,
    authors_ranking,
    centrality,
    initial_scores,
    local_graph,
    propagate,
    rank,
    score_facts,
)

# A and B come from one document and share "Y"; A-E and B-E share "Y"; B-C share "Z"; D-E share "R".
NODES = [
    FactNode("A", "X", "r", "Y", 0.8, "d1", 1, 0.9),
    FactNode("B", "Y", "r", "Z", 0.6, "d1", 1, 0.9),
    FactNode("C", "z", "r", "W", 1.0, "d2", 2, 0.5),  # "z" matches "Z": names are case-folded
    FactNode("D", "Q", "r", "R", 0.5, "d3", 3, 0.4),
    FactNode("E", "R", "r", "Y", 0.9, "d4", 4, 0.2),
]
# by hand: edge weights AB = 1 (same document) + 1 (shared entity) = 2, AE = BC = BE = DE = 1
EDGES = {("A", "B"): 2, ("A", "E"): 1, ("B", "C"): 1, ("B", "E"): 1, ("D", "E"): 1}
Z = {"A": 3, "B": 4, "C": 1, "D": 1, "E": 3}  # Z_j = sum_k w_jk
S0 = {
    "A": F(8, 10) * F(9, 10) + F(2, 10) / 1,  # eq. (2), alpha 0.8, beta 0.2
    "B": F(8, 10) * F(9, 10) + F(2, 10) / 1,
    "C": F(8, 10) * F(5, 10) + F(2, 10) / 2,
    "D": F(8, 10) * F(4, 10) + F(2, 10) / 3,
    "E": F(8, 10) * F(2, 10) + F(2, 10) / 4,
}
G = F(1, 2)  # gamma
S1 = {
    "A": (1 - G) * S0["A"] + G * (F(2, 4) * S0["B"] + F(1, 3) * S0["E"]),  # eq. (3), T = 1
    "B": (1 - G) * S0["B"] + G * (F(2, 3) * S0["A"] + F(1, 1) * S0["C"] + F(1, 3) * S0["E"]),
    "C": (1 - G) * S0["C"] + G * (F(1, 4) * S0["B"]),
    "D": (1 - G) * S0["D"] + G * (F(1, 3) * S0["E"]),
    "E": (1 - G) * S0["E"] + G * (F(1, 3) * S0["A"] + F(1, 4) * S0["B"] + F(1, 1) * S0["D"]),
}
DEGREE = {i: F(Z[i], 4) for i in Z}  # weighted degree: sum of the node's edge weights / (n - 1)
UNWEIGHTED = {"A": F(2, 4), "B": F(3, 4), "C": F(1, 4), "D": F(1, 4), "E": F(3, 4)}  # degree / (n - 1)
CONF = {"A": F(8, 10), "B": F(6, 10), "C": F(1), "D": F(5, 10), "E": F(9, 10)}
LAMBDAS = (F(6, 10), F(2, 10), F(2, 10))
FINAL = {i: LAMBDAS[0] * S1[i] + LAMBDAS[1] * DEGREE[i] + LAMBDAS[2] * CONF[i] for i in S1}  # eq. (4)


def scored(gamma: float, iterations: int):
    return score_facts(
        NODES,
        alpha=0.8,
        beta=0.2,
        gamma=gamma,
        iterations=iterations,
        lambdas=(0.6, 0.2, 0.2),
        centrality_kind="degree",
    )


def test_local_graph_edges_and_weights():
    graph = local_graph(NODES)
    assert {tuple(sorted(e)): w for *e, w in graph.edges(data="weight")} == EDGES


def test_equations_2_to_4_on_five_nodes():
    result = scored(0.5, 1)
    for node in "ABCDE":
        assert result.s0[node] == pytest.approx(float(S0[node]), abs=1e-9)
        assert result.sT[node] == pytest.approx(float(S1[node]), abs=1e-9)
        assert result.centrality[node] == pytest.approx(float(DEGREE[node]), abs=1e-9)
        assert result.final[node] == pytest.approx(float(FINAL[node]), abs=1e-9)
    assert [n.id for n in result.ranked] == sorted(FINAL, key=lambda i: -FINAL[i])


def test_two_iterations_apply_eq_3_twice():
    graph = local_graph(NODES)
    once = propagate(graph, initial_scores(NODES, 0.8, 0.2), 0.5, 1)
    twice = propagate(graph, once, 0.5, 1)
    assert propagate(graph, initial_scores(NODES, 0.8, 0.2), 0.5, 2) == pytest.approx(twice, abs=1e-12)
    assert once["B"] != twice["B"]


def test_gamma_zero_is_no_propagation():
    without = scored(0.0, 5)
    assert without.sT == pytest.approx(without.s0, abs=1e-12)
    by_hand = {i: 0.6 * without.s0[i] + 0.2 * float(DEGREE[i]) + 0.2 * float(CONF[i]) for i in "ABCDE"}
    assert [n.id for n in without.ranked] == [n.id for n in rank(NODES, by_hand)]
    assert [n.id for n in without.ranked] != [n.id for n in scored(0.5, 1).ranked]


def test_pagerank_centrality_sums_to_one():
    result = score_facts(
        NODES, alpha=0.8, beta=0.2, gamma=0.5, iterations=1, lambdas=(0, 1, 0), centrality_kind="pagerank"
    )
    assert sum(result.centrality.values()) == pytest.approx(1.0)
    assert result.final == pytest.approx(result.centrality)


def test_both_centralities_read_the_edge_weights_unless_told_not_to():
    import networkx as nx

    graph = local_graph(NODES)
    assert centrality(graph, "degree") == pytest.approx({i: float(v) for i, v in DEGREE.items()})
    assert centrality(graph, "degree", weighted=False) == pytest.approx({i: float(v) for i, v in UNWEIGHTED.items()})
    assert centrality(graph, "degree", weighted=False) == pytest.approx(nx.degree_centrality(graph))
    assert centrality(graph, "pagerank") == pytest.approx(nx.pagerank(graph, weight="weight"))
    assert centrality(graph, "pagerank", weighted=False) == pytest.approx(nx.pagerank(graph, weight=None))
    assert centrality(graph, "pagerank") != pytest.approx(centrality(graph, "pagerank", weighted=False))


def test_authors_ranking_by_hand():
    """confidence x (1 + 0.1 mentions) x max(0.2, 1 - 0.05 (rank - 1)) x (1 + 0.2 overlap); no eqs. (2)-(4)."""
    claim = "X is r of y"  # words x, is, r, of, y
    overlap = {"A": 3, "B": 2, "C": 1, "D": 1, "E": 2}  # A: x r y; B: y r; C: r; D: r; E: r y
    by_hand = {n.id: n.confidence * 1.1 * max(0.2, 1 - 0.05 * (n.rank - 1)) * (1 + 0.2 * overlap[n.id]) for n in NODES}
    result = authors_ranking(NODES, claim)
    assert result.final == pytest.approx(by_hand)
    assert [n.id for n in result.ranked] == sorted(by_hand, key=lambda i: -by_hand[i])
    assert result.s0 == {} and result.sT == {} and result.graph.number_of_edges() == len(EDGES)
    twice = [*NODES, FactNode("F", "X", "r", "Y", 0.8, "d2", 2, 0.5)]  # A's triple again: 2 mentions each
    assert authors_ranking(twice, claim).final["A"] == pytest.approx(by_hand["A"] / 1.1 * 1.2)


# The only fact of the best page (sim 0.954) shares no page and no entity with the others.
LONE = [
    FactNode("top", "Ostbra", "is", "a town", 0.9, "d1", 1, 0.954),
    *(FactNode(f"p{k}", f"S{k}", "r", f"O{k}", 0.9, "d2", 2, 0.6) for k in range(2)),
]


def test_eq_3_as_printed_decays_an_isolated_fact_by_one_minus_gamma_to_the_t():
    result = score_facts(
        LONE, alpha=0.8, beta=0.2, gamma=0.5, iterations=2, lambdas=(0.6, 0.2, 0.2), centrality_kind="degree"
    )
    assert result.sT["top"] == pytest.approx(0.25 * result.s0["top"])
    assert [n.id for n in result.ranked][-1] == "top"  # the best page's only fact ranks last


def test_the_keep_option_leaves_an_isolated_fact_its_initial_score_and_nothing_else():
    decay = score_facts(
        LONE, alpha=0.8, beta=0.2, gamma=0.5, iterations=2, lambdas=(0.6, 0.2, 0.2), centrality_kind="degree"
    )
    keep = score_facts(
        LONE,
        alpha=0.8,
        beta=0.2,
        gamma=0.5,
        iterations=2,
        lambdas=(0.6, 0.2, 0.2),
        centrality_kind="degree",
        isolated="keep",
    )
    assert keep.sT["top"] == pytest.approx(keep.s0["top"])
    assert [n.id for n in keep.ranked][0] == "top"
    assert {i: keep.sT[i] for i in keep.sT if i != "top"} == {i: decay.sT[i] for i in decay.sT if i != "top"}
    # on a graph without isolated nodes the option changes nothing
    assert propagate(local_graph(NODES), S0, 0.5, 2, "keep") == propagate(local_graph(NODES), S0, 0.5, 2)


def test_ga_rag_passes_its_isolated_option_to_eq_3_and_lists_the_isolated_facts():
    from provbench.model import Question
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG, graph_artifact

    claim = Question(id="q", question="Ostbra is a town.", answer="SUPPORTS")
    for option, first in (("decay", "p0"), ("keep", "top")):
        system = GARAG(isolated=option)
        scored = system.score(LONE, claim)
        assert scored.ranked[0].id == first
        artifact = graph_artifact(scored, system.options)
        assert artifact["isolated"] == ["top"] and artifact["params"]["isolated"] == option
