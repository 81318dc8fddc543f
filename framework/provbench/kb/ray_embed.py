"""Embedding a very large corpus as a Ray Data batch job (``pip install 'provbench[ray]'``).

:func:`embed_texts_ray` gives what :func:`provbench.kb.embeddings.embed_texts` gives (normalised
float32 rows, in input order), computed by ``concurrency`` Ray actors that each load the model
once and embed ``batch_size`` texts at a time, on every core of a machine or a cluster. Only the
vectors come back to the caller, which saves them as usual (the graph keeps a single writer).

:class:`RayDataEmbedder` is the build embedder on top of it: a build that runs inside
:func:`ray_build_embedding` (the runner does this when a suite chooses the Ray executor, the CLI
with ``kb build --executor ray``) embeds all its indices in one Ray Data job, whatever the builder.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import UserError
from .embeddings import EMBEDDING_DIM, build_embedder


class _Embedder:
    """One Ray Data actor: the embedding model loaded once, then batch after batch."""

    def __init__(self) -> None:
        from .embeddings import embedding_model

        embedding_model()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from .embeddings import embed_texts

        return {"row": batch["row"], "vector": embed_texts([str(t) for t in batch["text"]])}


def _ray():
    try:
        import ray
    except ImportError:
        raise UserError("embedding with Ray needs Ray: pip install 'provbench[ray]'") from None
    return ray


def embed_texts_ray(
    texts: Sequence[str],
    batch_size: int = 256,
    concurrency: int = 1,
    progress: Callable[[np.ndarray], None] | None = None,
) -> np.ndarray:
    """Normalised float32 vectors of ``texts`` (row i embeds texts[i]), computed with Ray Data.

    ``progress(rows)`` gets the input positions of each batch as it comes back.
    """
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    ray = _ray()
    blocks = -(-len(texts) // batch_size)  # one block per batch, not Ray's default of hundreds of tiny ones
    rows, vectors = [], []
    context = ray.data.DataContext.get_current()  # a dataset copies it when created
    bars, context.enable_progress_bars = context.enable_progress_bars, False  # the caller reports progress
    try:
        dataset = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)], override_num_blocks=blocks)
        embedded = dataset.map_batches(
            _Embedder, batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=concurrency), batch_format="numpy"
        )
        for batch in embedded.iter_batches(batch_size=None, batch_format="numpy"):
            rows.append(batch["row"])
            vectors.append(np.asarray(batch["vector"], dtype=np.float32))
            if progress is not None:
                progress(batch["row"])
    finally:
        context.enable_progress_bars = bars
    order = np.argsort(np.concatenate(rows), kind="stable")
    return np.concatenate(vectors)[order]


class RayDataEmbedder:
    """A build embedder: every index of a build in one Ray Data job over ``concurrency`` actors.

    Ray starts on first use (joining ``address``, or a local cluster when None) unless it is
    already running; :meth:`close` stops it only if this embedder started it. ``concurrency``
    defaults to the cluster's CPUs (one model per actor).
    """

    name = "ray-data"

    def __init__(self, address: str | None = None, concurrency: int | None = None, batch_size: int = 256) -> None:
        self.address, self.concurrency, self.batch_size = address, concurrency, batch_size
        self._started_ray = False

    def embed_groups(
        self, groups: Sequence[Sequence[str]], progress: Callable[[int, int], None] | None = None
    ) -> list[np.ndarray]:
        texts = [text for group in groups for text in group]
        if not texts:  # nothing to embed: Ray need not start
            return [np.zeros((0, EMBEDDING_DIM), dtype=np.float32) for _ in groups]
        ends = np.cumsum([len(group) for group in groups])

        def landed(rows: np.ndarray) -> None:
            if progress is not None:
                counts = np.bincount(np.searchsorted(ends, rows, side="right"), minlength=len(groups))
                for group, n in enumerate(counts[: len(groups)]):
                    if n:
                        progress(group, int(n))

        vectors = embed_texts_ray(texts, self.batch_size, self._actors(len(texts)), landed)
        return np.split(vectors, ends[:-1])

    def _actors(self, count: int) -> int:
        """How many actors to start: as asked, else one per CPU, never more than there are batches."""
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            self._started_ray = True
        wanted = self.concurrency or int(ray.cluster_resources().get("CPU", 1))
        return max(1, min(wanted, -(-count // self.batch_size)))

    def close(self) -> None:
        if self._started_ray:
            _ray().shutdown()
            self._started_ray = False


@contextlib.contextmanager
def ray_build_embedding(address: str | None = None, concurrency: int | None = None) -> Iterator[RayDataEmbedder]:
    """Knowledge bases finalized inside this block embed with Ray Data (Ray starts only if one is built)."""
    _ray()  # a missing Ray is reported before the build starts, not after its graph is written
    embedder = RayDataEmbedder(address, concurrency)
    try:
        with build_embedder(embedder):
            yield embedder
    finally:
        embedder.close()
