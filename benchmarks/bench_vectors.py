"""Benchmark: the HNSW vector index (usearch) against exact search, at 100k vectors by default.

Vectors are synthetic but shaped like sentence embeddings: normalised 384-dimensional points
around a few thousand topic centres (uniform random vectors would be unrealistically hard for
any nearest-neighbour graph). Queries are perturbed copies of stored vectors. Both indices go
through ``VectorIndex.save``/``load`` as a knowledge base stores them, and queries through
``VectorIndex.search`` (the call every graph view makes).

Prints: build time of the HNSW index, mean query time exact vs HNSW, their ratio, recall@10 of
HNSW against exact (target >= 0.98), and resident sizes of both.
Run: ``python benchmarks/bench_vectors.py [--vectors 100000] [--queries 300]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from provbench.kb.embeddings import EMBEDDING_DIM, VectorIndex, normalise


def synthetic(n: int, topics: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.standard_normal((topics, EMBEDDING_DIM)).astype(np.float32)
    members = rng.integers(0, topics, n)
    return normalise(centres[members] + 0.6 * rng.standard_normal((n, EMBEDDING_DIM)).astype(np.float32))


def timed_queries(index: VectorIndex, queries: np.ndarray, k: int) -> tuple[list[list[str]], float]:
    started = time.perf_counter()
    results = [[item for item, _ in index.search(q, k, lambda _: True)] for q in queries]
    return results, (time.perf_counter() - started) / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    vectors = synthetic(args.vectors, max(10, args.vectors // 50), rng)
    ids = tuple(f"ent:{i}" for i in range(args.vectors))
    picked = rng.integers(0, args.vectors, args.queries)
    queries = normalise(vectors[picked] + 0.3 * rng.standard_normal((args.queries, EMBEDDING_DIM)).astype(np.float32))
    with tempfile.TemporaryDirectory(prefix="provbench-bench-vectors-") as tmp:
        directory = Path(tmp)
        VectorIndex(ids, vectors).save(directory, "exact", ann_min_vectors=None)
        started = time.perf_counter()
        VectorIndex(ids, vectors).save(directory, "hnsw", ann_min_vectors=1)
        build_s = time.perf_counter() - started
        exact, hnsw = VectorIndex.load(directory, "exact"), VectorIndex.load(directory, "hnsw")
        truth, exact_s = timed_queries(exact, queries, args.k)
        found, hnsw_s = timed_queries(hnsw, queries, args.k)
        recall = np.mean([len(set(t) & set(f)) / args.k for t, f in zip(truth, found)])
        ann_mb = (directory / "hnsw.usearch").stat().st_size / 2**20
    print(f"{args.vectors:,} vectors x {EMBEDDING_DIM} dims, {args.queries} queries, k={args.k}")
    print(f"HNSW build: {build_s:.1f} s (usearch, f16, connectivity 16)")
    print(f"query: exact {1000 * exact_s:.2f} ms, HNSW {1000 * hnsw_s:.2f} ms (HNSW {exact_s / hnsw_s:.1f}x faster)")
    print(f"recall@{args.k} of HNSW vs exact: {recall:.3f} (target >= 0.98)")
    print(
        f"memory: exact array {vectors.nbytes / 2**20:.0f} MiB in RAM; HNSW file {ann_mb:.0f} MiB memory-mapped "
        "(its array is memory-mapped too: only re-scored rows are read)"
    )


if __name__ == "__main__":
    main()
