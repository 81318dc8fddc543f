"""Benchmark: does the 2Wiki knowledge-base build grow linearly with the corpus?

Writes invented worlds of increasing size with the seeded generator (tools/provbench_tools/world_2wiki/),
loads them with the "2wiki" loader and builds each knowledge base with the paper-000 builder on
real Kùzu and the real MiniLM embedder. LLM extraction and community summaries are off, so the
figures measure provbench's own work (merging paragraphs, chunking, the gold graph, mention
links, Leiden, embeddings, writing Kùzu), not a model.

Per size it prints the text units, entities and relations, the whole build's seconds and
milliseconds per text unit, and two steps on their own: linking every entity to the text units
naming it (``link_mentions``) and ranking candidate text units for extraction
(``choose_extraction_units``, all distractor text units). At the smallest size the same two steps
also run the old way (one regular expression per entity per text unit) as the baseline. Last:
the cost per text unit of the largest world over the smallest (near 1 = linear).

By default the embedding step stores random unit vectors (``finalize(embed=False)``) so the
sweep measures provbench's own work; embedding is linear by construction (one model pass per
text) and its rate is printed once, on a fixed sample, in texts per second (against the raw
model's rate: ``benchmarks/bench_embed.py``). ``--embed`` embeds for real inside every build
(on 2 cores about a tenth of the machine's time goes to the rest).

Run: ``python benchmarks/bench_kb_build.py [--text-units 1000 3000 10000] [--embed]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from provbench.kb import KnowledgeBase
from provbench.llm import make_llm
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader
from provbench_plugins.kb_builders.common.extraction import choose_extraction_units
from provbench_plugins.kb_builders.common.graph import Graph, link_mentions
from provbench_plugins.kb_builders.common.matcher import mention_pattern
from provbench_plugins.kb_builders.twowiki.builder import TwoWikiKBBuilder, parse_options
from provbench_plugins.kb_builders.twowiki.gold import add_gold_graph
from provbench_plugins.kb_builders.twowiki.questions import build_corpus, read_question
from provbench_tools.world_2wiki import write_world

TEXT_UNITS_PER_QUESTION = 4.8  # measured on the generator (seed 1): 60 questions -> 290 text units


def regex_link(graph: Graph, texts: dict[str, str]) -> None:
    """The old linking: one regular-expression search per entity per text unit."""
    for draft in graph.entities.values():
        pattern = mention_pattern(draft.name)
        draft.text_unit_ids.update(t for t, text in texts.items() if pattern.search(text))


def regex_rank(graph: Graph, texts: dict[str, str], candidates: list[str]) -> list[str]:
    patterns = [mention_pattern(e.name) for e in graph.entities.values()]
    return sorted(candidates, key=lambda t: -sum(1 for p in patterns if p.search(texts[t])))


def steps(questions, baseline: bool) -> dict[str, float]:
    """Seconds of the two linear-time steps (and of the regex baseline when asked)."""
    data = [read_question(q) for q in questions]
    corpus = build_corpus(data, parse_options({}))
    graph = Graph()
    add_gold_graph(graph, corpus, data)
    candidates = [t for t in corpus.text_units if t not in corpus.supporting_units]
    out = {}
    started = time.perf_counter()
    choose_extraction_units(corpus, graph, candidates, None)
    out["rank_s"] = time.perf_counter() - started
    started = time.perf_counter()
    link_mentions(graph, corpus)
    out["link_s"] = time.perf_counter() - started
    if baseline:
        texts = corpus.texts()
        started = time.perf_counter()
        regex_rank(graph, texts, candidates)
        out["regex_rank_s"] = time.perf_counter() - started
        started = time.perf_counter()
        regex_link(graph, texts)
        out["regex_link_s"] = time.perf_counter() - started
    return out


def embedding_rate(sample: int = 512) -> float:
    """Texts per second of the real embedder on text-unit-sized passages (model already loaded)."""
    from provbench.kb.embeddings import embed_texts

    texts = [
        f"Passage {i}: the film was directed by Orin Vale{i} and released in {1900 + i % 120} in Sorrel. " * (1 + i % 4)
        for i in range(sample)
    ]
    embed_texts(texts[:32])
    started = time.perf_counter()
    embed_texts(texts)
    return sample / (time.perf_counter() - started)


def build_once(target_units: int, workdir: Path, baseline: bool) -> dict[str, float]:
    n_questions = max(4, round(target_units / TEXT_UNITS_PER_QUESTION))
    data = write_world(workdir / f"world-{n_questions}.json", n_questions=n_questions, seed=1)
    questions = TwoWikiLoader().load(data)
    row = steps(questions, baseline)
    llm = make_llm("scripted", cache_dir=workdir / f"llm-{n_questions}")  # never called: no extraction
    builder = TwoWikiKBBuilder(extract=False, summarize=False)
    started = time.perf_counter()
    kb = builder.build(questions, workdir / f"kb-{n_questions}", llm)
    seconds = time.perf_counter() - started
    stats = kb.stats()
    kb.close()
    return {
        **row,
        "questions": n_questions,
        "text_units": stats.text_units,
        "entities": stats.entities,
        "relations": stats.relations,
        "communities": stats.communities,
        "seconds": seconds,
        "ms_per_text_unit": 1000 * seconds / max(1, stats.text_units),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text-units", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--embed", action="store_true", help="embed for real inside every build")
    args = parser.parse_args()
    if not args.embed:  # benchmark only: a KB with random vectors must never be read by a system
        original = KnowledgeBase.finalize
        KnowledgeBase.finalize = lambda self, info, embed=True, **kw: original(self, info, False, **kw)
    else:
        print(f"embedding: {embedding_rate():.0f} texts/s (MiniLM, batched, sorted by length)", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="provbench-bench-kb-") as tmp:
        build_once(50, Path(tmp), baseline=False)  # warm-up: loads Kùzu (and the embedder) once, outside the figures
        for i, size in enumerate(args.text_units):
            row = build_once(size, Path(tmp), baseline=i == 0)
            rows.append(row)
            print(
                f"{row['text_units']:>6,} text units {row['entities']:>6,} entities {row['relations']:>6,} relations "
                f"{row['communities']:>3,} communities | build {row['seconds']:6.1f} s = "
                f"{row['ms_per_text_unit']:5.1f} ms per text unit | link {row['link_s']:.2f} s, "
                f"rank {row['rank_s']:.2f} s",
                flush=True,
            )
            if "regex_link_s" in row:
                print(
                    f"       baseline (regex per entity x text unit) at this size: link {row['regex_link_s']:.2f} s "
                    f"({row['regex_link_s'] / row['link_s']:.0f}x), rank {row['regex_rank_s']:.2f} s "
                    f"({row['regex_rank_s'] / max(row['rank_s'], 1e-9):.0f}x)",
                    flush=True,
                )
    if not args.embed:
        print(
            f"embedding (not in the builds above): {embedding_rate():.0f} texts/s (MiniLM, batched, sorted by length)"
        )
    first, last = rows[0], rows[-1]
    print(
        f"cost per text unit, {last['text_units']:,} / {first['text_units']:,} text units: "
        f"build {last['ms_per_text_unit'] / first['ms_per_text_unit']:.2f}, "
        f"link {(last['link_s'] / last['text_units']) / (first['link_s'] / first['text_units']):.2f}, "
        f"rank {(last['rank_s'] / last['text_units']) / (first['rank_s'] / first['text_units']):.2f}"
    )


if __name__ == "__main__":
    main()
