"""Benchmark: how the 2Wiki knowledge-base build scales with the number of questions.

Writes invented worlds of increasing size with the seeded generator (tools/provbench_tools/world_2wiki/),
loads them with the "2wiki" loader and builds each knowledge base with the paper-000 builder on
real Kùzu and the real MiniLM embedder. LLM extraction and community summaries are off, so the
figures measure provbench's own work (merging paragraphs, chunking, the gold graph, mention
links, Leiden, embeddings, writing Kùzu), not a model. With the embedded model, add roughly
2-10 s per LLM-enriched text unit and per summarised community (see the builder's options).

Prints, per size: questions, paragraphs, text units, entities, relations, communities, build
seconds and milliseconds per text unit; then the per-text-unit cost of the largest world against
the smallest (a ratio near 1 means the build grows linearly).
Run: ``python benchmarks/bench_kb_build.py [--sizes 30 100 300]`` (embedding the text is most of the time).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from provbench.llm import make_llm
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader
from provbench_plugins.kb_builders.twowiki.builder import TwoWikiKBBuilder
from provbench_tools.world_2wiki import write_world


def build_once(n_questions: int, workdir: Path) -> dict[str, float]:
    data = write_world(workdir / f"world-{n_questions}.json", n_questions=n_questions, seed=1)
    questions = TwoWikiLoader().load(data)
    llm = make_llm("scripted", cache_dir=workdir / f"llm-{n_questions}")  # never called: no extraction
    builder = TwoWikiKBBuilder(extract=False, summarize=False)
    started = time.perf_counter()
    kb = builder.build(questions, workdir / f"kb-{n_questions}", llm)
    seconds = time.perf_counter() - started
    stats = kb.stats()
    kb.close()
    return {"questions": n_questions, "paragraphs": stats.documents, "text_units": stats.text_units,
            "entities": stats.entities, "relations": stats.relations, "communities": stats.communities,
            "seconds": seconds, "ms_per_text_unit": 1000 * seconds / max(1, stats.text_units)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 100, 300])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="provbench-bench-kb-") as tmp:
        build_once(10, Path(tmp))  # warm-up: loads the embedder and Kùzu once, outside the figures
        for size in args.sizes:
            row = build_once(size, Path(tmp))
            rows.append(row)
            print(f"{row['questions']:>6,} questions | {row['paragraphs']:>6,} paragraphs {row['text_units']:>6,} "
                  f"text units {row['entities']:>6,} entities {row['relations']:>6,} relations "
                  f"{row['communities']:>4,} communities | build {row['seconds']:7.1f} s "
                  f"({row['ms_per_text_unit']:.1f} ms per text unit)", flush=True)
    ratio = rows[-1]["ms_per_text_unit"] / rows[0]["ms_per_text_unit"]
    print(f"cost per text unit, {rows[-1]['questions']:,} questions / {rows[0]['questions']:,} questions: {ratio:.2f}")


if __name__ == "__main__":
    main()
