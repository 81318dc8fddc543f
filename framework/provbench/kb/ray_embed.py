"""Embedding a very large corpus as a Ray Data batch job (``pip install 'provbench[ray]'``).

:func:`embed_texts_ray` gives what :func:`provbench.kb.embeddings.embed_texts` gives (normalised
float32 rows, in input order), computed by ``concurrency`` Ray actors that each load the model
once and embed ``batch_size`` texts at a time, on every core of a machine or a cluster. Only the
vectors come back to the caller, which saves them as usual (the graph keeps a single writer).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .embeddings import EMBEDDING_DIM


class _Embedder:
    """One Ray Data actor: the embedding model loaded once, then batch after batch."""

    def __init__(self) -> None:
        from .embeddings import embedding_model

        embedding_model()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from .embeddings import embed_texts

        return {"row": batch["row"], "vector": embed_texts([str(t) for t in batch["text"]])}


def embed_texts_ray(texts: Sequence[str], batch_size: int = 256, concurrency: int = 1) -> np.ndarray:
    """Normalised float32 vectors of ``texts`` (row i embeds texts[i]), computed with Ray Data."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    import ray

    dataset = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
    embedded = dataset.map_batches(_Embedder, batch_size=batch_size, concurrency=concurrency, batch_format="numpy")
    rows, vectors = [], []
    for batch in embedded.iter_batches(batch_size=None, batch_format="numpy"):
        rows.append(batch["row"])
        vectors.append(np.asarray(batch["vector"], dtype=np.float32))
    order = np.argsort(np.concatenate(rows), kind="stable")
    return np.concatenate(vectors)[order]
