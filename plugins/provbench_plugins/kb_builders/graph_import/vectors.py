"""An imported store's own chunk vectors: used as the KB's text-unit vectors when they come from the
KB's embedding model, computed again otherwise.

LlamaIndex's stores do not record which model made their vectors, so a sample decides: up to
:data:`SAMPLE` chunks (spread over the store) are embedded with the KB's model and compared with
their stored vectors. The same model gives cosines near 1 (LlamaIndex embeds a chunk's metadata
with its text, so not exactly 1: 0.84-0.97 on the own-docs corpus), another model unrelated ones.
The vectors are reused when the dimensions match and the median cosine is at least
:data:`MIN_MEDIAN_COSINE`. Entities, names and communities are always embedded by provbench: their
indexed text (name, type, description; summaries) is its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SAMPLE = 16
MIN_MEDIAN_COSINE = 0.8


def stored_vector(node: Any) -> list[float] | None:
    """A chunk's vector as its store kept it (the Kùzu store returns it among the properties)."""
    vector = getattr(node, "embedding", None)
    if vector is None:
        vector = (node.properties or {}).get("embedding")
    return list(vector) if vector is not None and len(vector) else None


def reusable_vectors(texts: dict[str, str], stored: dict[str, list[float]]) -> tuple[dict[str, Any], str]:
    """(text unit -> vector to reuse, what was decided and why); ``texts``: text unit -> its text,
    ``stored``: text unit -> the store's vector. Nothing is reused unless the sample agrees."""
    from provbench.kb.embeddings import EMBEDDING_DIM, EMBEDDING_MODEL_NAME, embed_texts

    kept = {unit: vector for unit, vector in stored.items() if unit in texts}
    if not kept:
        return {}, "re-embedded with the KB's model (the store holds no chunk vectors)"
    sizes = {len(vector) for vector in kept.values()}
    if sizes != {EMBEDDING_DIM}:
        return {}, (
            f"re-embedded with the KB's model (the store's vectors have {sorted(sizes)} dimensions, "
            f"{EMBEDDING_MODEL_NAME} {EMBEDDING_DIM})"
        )
    units = sorted(kept)
    sample = [units[round(i * (len(units) - 1) / max(1, SAMPLE - 1))] for i in range(min(SAMPLE, len(units)))]
    sample = list(dict.fromkeys(sample))
    theirs = np.asarray([kept[u] for u in sample], dtype=np.float32)
    theirs /= np.maximum(np.linalg.norm(theirs, axis=1, keepdims=True), 1e-12)
    cosines = np.sum(theirs * embed_texts([texts[u] for u in sample]), axis=1)
    median = float(np.median(cosines))
    measured = f"median cosine {median:.2f} on {len(sample)} sampled chunk(s)"
    if median < MIN_MEDIAN_COSINE:
        return {}, f"re-embedded with the KB's model (the store's vectors are of another model: {measured})"
    return kept, (
        f"{len(kept)} text unit(s) keep the store's own vectors ({EMBEDDING_MODEL_NAME}: {measured}); "
        f"{len(texts) - len(kept)} text unit(s), the entities and the communities embedded with it"
    )
