"""Benchmark: what the LlamaIndex view store adds per retrieval, against the view's own calls.

Builds a synthetic knowledge base on real Kùzu (``bench_view.synthetic_graph``: 5,000 entities,
13,000 relations, random unit vectors, no embedding model) and a view hiding 100 entities (without the knowledge
base's read cache, so no path is timed on what another one read). For
random query vectors it times, median per retrieval:

* **view**: the reads a vector-context retrieval needs, made on the view directly:
  ``search_entities_by_vector`` (k=4), those entities, their neighbours, the relations' text units;
* **store**: the same through ``ViewPropertyGraphStore`` (``vector_query``, ``get_rel_map`` at
  depth 1, ``get_llama_nodes``), i.e. plus building LlamaIndex's node objects;
* **retriever**: LlamaIndex's own ``VectorContextRetriever.retrieve`` on the store with
  ``include_text=True`` (the query bundle carries the vector), i.e. plus LlamaIndex's own work.

and prints the ratios store / view and retriever / view, measured in the same run; and the time
to build a unit's index (``property_graph_index`` over the view, as the ``llamaindex`` system does).
Run: ``python benchmarks/bench_llamaindex_store.py [--entities N] [--queries N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_view import HIDDEN, build  # noqa: E402

from provbench.kb import GraphView, KnowledgeBase  # noqa: E402
from provbench.kb.embeddings import random_unit_vectors  # noqa: E402

K = 4


def through_view(view, vector) -> int:
    hits = view.search_entities_by_vector(vector, K)
    entities = view.entities(h.id for h in hits)
    relations = [nb.relation for e in entities for nb in view.neighbors(e.id)]
    units = view.text_units({r.text_unit_id for r in relations if r.text_unit_id})
    return len(relations) + len(units)


def through_store(store, vector) -> int:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    nodes, _ = store.vector_query(VectorStoreQuery(query_embedding=vector.tolist(), similarity_top_k=K))
    triplets = store.get_rel_map(nodes, depth=1, limit=1000)
    units = store.get_llama_nodes(list({t[1].properties.get("triplet_source_id") for t in triplets} - {None}))
    return len(triplets) + len(units)


def through_retriever(retriever, vector) -> int:
    from llama_index.core.schema import QueryBundle

    return len(retriever.retrieve(QueryBundle(query_str="benchmark query", embedding=vector.tolist())))


def median_s(fn, vectors) -> float:
    times = []
    for vector in vectors:
        started = time.perf_counter()
        fn(vector)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    from llama_index.core.indices.property_graph import VectorContextRetriever

    from provbench.integrations.llamaindex import llamaindex_embedding, property_graph_index, property_graph_store

    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp) / "kb", args.entities)
        kb = KnowledgeBase.open(Path(tmp) / "kb")
        hidden = [f"ent:{i}" for i in random.Random(1).sample(range(args.entities), HIDDEN)]
        # a view without the knowledge base's read cache, so no path is timed on results another one read
        view = GraphView(kb.store).hide(entities=hidden)
        store = property_graph_store(view)
        retriever = VectorContextRetriever(
            store, embed_model=llamaindex_embedding(), similarity_top_k=K, limit=1000, include_text=True
        )
        vectors = list(random_unit_vectors(args.queries + 20))
        warm, timed = vectors[:20], vectors[20:]
        for fn in (lambda v: through_view(view, v), lambda v: through_store(store, v)):
            for vector in warm:
                fn(vector)  # statements prepared for both alike
        figures = {
            "view": median_s(lambda v: through_view(view, v), timed),
            "store": median_s(lambda v: through_store(store, v), timed),
            "retriever": median_s(lambda v: through_retriever(retriever, v), timed),
        }
        index_s = median_s(lambda v: property_graph_index(view), timed[:50])
        kb.close()
    print(f"{args.entities} entities, {HIDDEN} hidden, {args.queries} queries, k={K}, median per retrieval:")
    for name, seconds in figures.items():
        print(f"  {name:<10} {seconds * 1000:8.2f} ms")
    print(f"ratio store / view:     {figures['store'] / figures['view']:.2f}")
    print(f"ratio retriever / view: {figures['retriever'] / figures['view']:.2f}")
    print(f"a unit's index (property_graph_index): {index_s * 1000:.2f} ms")


if __name__ == "__main__":
    main()
