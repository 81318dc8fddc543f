"""Degree and edge betweenness of a labelled graph, computed once at build time.

Written to ``graph_metrics.json`` in the knowledge-base directory: ``degree`` (entity id ->
in + out degree over all relations), ``digraph_degree`` (in + out distinct neighbours, as the
authors' ``nx.DiGraph`` counts: two triples on one ordered pair are one edge), ``betweenness``
(relation id -> edge betweenness of its node pair in the undirected simple graph, the graph
shortest paths are searched in) and ``labels`` (entity id -> label); the builder adds
``relation_sources`` (relation id -> the SourceFilename a triples file gave it, kept for
traceability even where no chunk holds the edge). Exact betweenness costs O(n m); ``k`` samples
k source nodes (networkx's approximation, seeded) for large graphs.

:func:`summary` and :func:`corpus_summary` give paper 001's Table 3 (graph and corpus halves);
:func:`side_by_side` puts them next to the paper's figures.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

METRICS_FILE = "graph_metrics.json"


def compute(
    entities: dict[str, str], relations: Iterable[tuple[str, str, str]], *, k: int | None = None, seed: int = 0
) -> dict[str, Any]:
    """``entities``: id -> label; ``relations``: (relation id, source id, target id)."""
    import networkx as nx

    relations = list(relations)
    degree = Counter()
    graph, digraph = nx.Graph(), nx.DiGraph()
    graph.add_nodes_from(entities)
    digraph.add_nodes_from(entities)
    for _, source, target in relations:
        degree[source] += 1
        degree[target] += 1
        digraph.add_edge(source, target)
        if source != target:
            graph.add_edge(source, target)
    sample = k if k is not None and k < graph.number_of_nodes() else None
    by_pair = nx.edge_betweenness_centrality(graph, k=sample, seed=seed if sample else None, normalized=True)
    betweenness = {}
    for rid, source, target in relations:
        value = by_pair.get((source, target), by_pair.get((target, source), 0.0))
        betweenness[rid] = round(float(value), 8)
    return {
        "degree": {e: degree.get(e, 0) for e in entities},
        "digraph_degree": dict(digraph.degree()),
        "betweenness": betweenness,
        "labels": dict(entities),
        "betweenness_samples": sample,
    }


def summary(metrics: dict[str, Any], relation_count: int, chunk_sources: Iterable[str] | None = None) -> dict[str, Any]:
    """Counts, mean degrees and label shares (%), as paper 001's Table 3 reports them; with
    ``chunk_sources`` (each chunk's document) also the corpus half under "corpus"."""
    nodes = len(metrics["labels"])
    shares = Counter(metrics["labels"].values())
    mean_in = relation_count / nodes if nodes else 0.0
    found = {
        "nodes": nodes,
        "edges": relation_count,
        "mean_in_degree": round(mean_in, 3),
        "mean_out_degree": round(mean_in, 3),
        "mean_total_degree": round(2 * mean_in, 3),
        "label_shares_percent": {label: round(100 * n / nodes, 2) for label, n in shares.most_common()},
    }
    if chunk_sources is not None:
        found["corpus"] = corpus_summary(chunk_sources)
    return found


def corpus_summary(chunk_sources: Iterable[str]) -> dict[str, Any]:
    """Table 3's corpus half from each chunk's document: documents, chunks, and chunks per
    document (mean, population standard deviation, min, max)."""
    per_document = list(Counter(chunk_sources).values())
    if not per_document:
        return {
            "documents": 0,
            "chunks": 0,
            "mean_chunks_per_document": 0.0,
            "std_chunks_per_document": 0.0,
            "min_chunks_per_document": 0,
            "max_chunks_per_document": 0,
        }
    return {
        "documents": len(per_document),
        "chunks": sum(per_document),
        "mean_chunks_per_document": round(statistics.fmean(per_document), 2),
        "std_chunks_per_document": round(statistics.pstdev(per_document), 2),
        "min_chunks_per_document": min(per_document),
        "max_chunks_per_document": max(per_document),
    }


# Table 3's corpus rows, titled so that kb info's sorted listing keeps the per-document ones together
CORPUS_ROWS = {
    "documents": "documents",
    "chunks": "text chunks",
    "mean_chunks_per_document": "chunks per document: mean",
    "std_chunks_per_document": "chunks per document: std",
    "min_chunks_per_document": "chunks per document: min",
    "max_chunks_per_document": "chunks per document: max",
}


def table3_rows(
    ours: dict[str, Any], paper: dict[str, Any], paper_shares: dict[str, float]
) -> list[tuple[str, str, str]]:
    """Table 3 as (row, this KB, paper) with figures formatted: the corpus half (when ``ours``
    has it), node and edge counts, mean degrees, then label shares in %."""
    rows = [
        (title, _figure(ours["corpus"][name]), _figure(paper["corpus"][name]))
        for name, title in CORPUS_ROWS.items()
        if name in ours.get("corpus", {}) and name in paper.get("corpus", {})
    ]
    rows += [(name, f"{ours[name]:,}", f"{paper[name]:,}") for name in ("nodes", "edges")]
    rows += [
        (name, f"{ours[name]:.3f}", f"{paper[name]:.3f}")
        for name in ("mean_in_degree", "mean_out_degree", "mean_total_degree")
    ]
    shares = ours["label_shares_percent"]
    rows += [
        (f"{label} %", f"{shares.get(label, 0.0):.2f}", f"{paper_shares.get(label, 0.0):.2f}")
        for label in dict.fromkeys([*paper_shares, *shares])
    ]
    return rows


def side_by_side(ours: dict[str, Any], paper: dict[str, Any], paper_shares: dict[str, float]) -> dict[str, str]:
    """Table 3's rows as "this KB / paper" strings, so ``kb info`` shows them next to each other."""
    return {name: f"{mine} / {theirs}" for name, mine, theirs in table3_rows(ours, paper, paper_shares)}


def _figure(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def save(kb_dir: Path, metrics: dict[str, Any]) -> None:
    (Path(kb_dir) / METRICS_FILE).write_text(json.dumps(metrics, sort_keys=True), encoding="utf-8")


def load(kb_dir: str | Path | None) -> dict[str, Any] | None:
    """The metrics of the KB at ``kb_dir``, or None when it has none (not a labelled KB)."""
    if not kb_dir:
        return None
    path = Path(kb_dir) / METRICS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
