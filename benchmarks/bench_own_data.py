"""Benchmark: does the own-data ``documents`` builder grow linearly with the number of documents?

Writes a generated corpus of a given size (Markdown documents titled by the entity they are about,
one in ten untitled plain text, one in twenty long enough for several text units; every document
names a handful of other entities of the corpus) and builds it as a user would:
``provbench kb build DOCS --builder documents --model schema-following`` (the runner's
``build_dataset_kb``, real Kùzu, LLM cache and all). ``schema-following`` answers every extraction
and summary request offline, so what is timed is provbench's own work, not a model's.

Per size it prints documents, text units, entities, relations and communities, the whole build's
time per document, and the time per document of each phase of the builder (read, chunk, extract,
own text, mention linking, describe, records, write to Kùzu, communities and summaries, finish):
the phases are timed by wrapping the builder module's functions, which changes nothing they do.
Last: the cost per document of the largest corpus over the smallest, per phase (near 1 = linear),
from unrounded times.

As in ``bench_kb_build.py``, the embedding step stores random unit vectors so the sweep measures
provbench's own work; the real embedder's rate is printed once, apart. ``--ray`` also builds the
smallest corpus again with the Ray executor (``--executor ray``: every index embedded by a Ray
Data job on a local Ray) and, for the comparison, in process, both embedding for real.

Run: ``python benchmarks/bench_own_data.py [--documents 1000 10000] [--ray]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from provbench.kb import KnowledgeBase
from provbench_plugins.kb_builders.documents import builder as documents_builder

PHASES = {  # builder-module name -> what the phase is
    "read_documents": "read",
    "chunk_corpus": "chunk",
    "add_title_entities": "titles",
    "extract": "extract",
    "declare_own_text": "own text",
    "link_mentions": "link",
    "describe_entities": "describe",
    "to_records": "records",
    "write_kb": "write",
    "write_sources": "sources",
    "summarize_communities": "communities",
    "finish": "finish",
}
ONSETS = ("br", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "st", "t", "th", "v", "w")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea")
ENDINGS = ("n", "r", "s", "l", "th", "more", "wick", "dane", "vale", "mont", "hart", "ford", "ley")
KINDS = ("person", "place", "organization", "work")


def invented_name(rng: random.Random, taken: set[str]) -> str:
    """A new two-word name of invented syllables ("Brelan Tovale")."""
    while True:
        words = [
            "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.randint(1, 2))) + rng.choice(ENDINGS)
            for _ in range(2)
        ]
        name = " ".join(w.capitalize() for w in words)
        if name.casefold() not in taken:
            taken.add(name.casefold())
            return name


def sentence(rng: random.Random, subject: str, names: list[tuple[str, str]]) -> str:
    other, kind = rng.choice(names)
    year = rng.randint(1800, 2020)
    templates = {
        "person": [f"{subject} met {other} in {year}.", f"{subject} wrote letters to {other} for many years."],
        "place": [f"{subject} was founded near {other} in {year}.", f"{subject} lies on the road to {other}."],
        "organization": [f"{subject} worked with {other} from {year}.", f"{subject} received a grant from {other}."],
        "work": [f"{subject} is described in {other}, published in {year}.", f"{subject} inspired {other}."],
    }
    return rng.choice(templates[kind])


def write_corpus(folder: Path, n_documents: int, seed: int = 1) -> None:
    """``n_documents`` files in ``folder``: titled Markdown, one in ten untitled .txt, one in twenty long."""
    rng, taken = random.Random(seed), set()
    names = [(invented_name(rng, taken), KINDS[i % len(KINDS)]) for i in range(n_documents)]
    folder.mkdir(parents=True)
    for i, (name, kind) in enumerate(names):
        count = 60 if i % 20 == 7 else rng.randint(5, 10)
        body = " ".join(sentence(rng, name, names) for _ in range(count))
        intro = f"{name} is a {kind} of the Lisk coast."
        if i % 10 == 3:
            (folder / f"note-{i:05d}.txt").write_text(f"{intro} {body}\n", encoding="utf-8")
        else:
            (folder / f"doc-{i:05d}.md").write_text(f"# {name}\n\n{intro}\n\n{body}\n", encoding="utf-8")


@contextlib.contextmanager
def timed_phases():
    """Seconds spent in each of the builder module's phase functions while the block runs, and
    in the garbage collector's full (generation 2) collections (``gc``; in whichever phase they fell)."""
    spent: dict[str, float] = defaultdict(float)
    collecting: list[float] = []

    def on_gc(stage: str, info: dict) -> None:
        if info["generation"] == 2 and stage == "start":
            collecting.append(time.perf_counter())
        elif info["generation"] == 2 and collecting:
            spent["gc"] += time.perf_counter() - collecting.pop()

    gc.callbacks.append(on_gc)
    originals = {name: getattr(documents_builder, name) for name in PHASES}

    def timer(name, function):
        def wrapped(*args, **kwargs):
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[PHASES[name]] += time.perf_counter() - started
                spent[PHASES[name] + " CPU"] += time.process_time() - cpu

        return wrapped

    for name, function in originals.items():
        setattr(documents_builder, name, timer(name, function))
    try:
        yield spent
    finally:
        gc.callbacks.remove(on_gc)
        for name, function in originals.items():
            setattr(documents_builder, name, function)


def build(docs: Path, out: Path, executor: str | None = None) -> dict:
    """``kb build DOCS --builder documents --model schema-following`` (with ``--executor``)."""
    from provbench import runner
    from provbench.suite import ExecutorSpec

    spec = ExecutorSpec(kind=executor) if executor else None
    with timed_phases() as spent:
        started, cpu = time.perf_counter(), time.process_time()
        _, stats, _ = runner.build_dataset_kb(
            docs, out, loader=None, builder="documents", model="schema-following", executor=spec
        )
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "phases": dict(spent), "stats": stats}


def random_vectors() -> None:
    """Benchmark only: the build stores random vectors (a KB that no system may ever read)."""
    original = KnowledgeBase.finalize
    KnowledgeBase.finalize = lambda self, info, embed=True, **kw: original(self, info, False, **kw)
    return original


def embedding_rate(sample: int = 512) -> float:
    from provbench.kb.embeddings import embed_texts

    texts = [f"Brelan Tovale {i} met Sorin Mavale in {1800 + i % 200}. " * (2 + i % 6) for i in range(sample)]
    embed_texts(texts[:32])
    started = time.perf_counter()
    embed_texts(texts)
    return sample / (time.perf_counter() - started)


def print_row(n: int, row: dict) -> None:
    stats = row["stats"]
    per_doc = {phase: 1000 * s / n for phase, s in row["phases"].items() if not phase.endswith(" CPU")}
    cpu = {phase[:-4]: 1000 * s / n for phase, s in row["phases"].items() if phase.endswith(" CPU")}
    print(
        f"{n:>6,} documents {stats.text_units:>6,} text units {stats.entities:>6,} entities "
        f"{stats.relations:>6,} relations {stats.communities:>5,} communities | build {row['seconds']:6.1f} s = "
        f"{1000 * row['seconds'] / n:5.2f} ms per document ({1000 * row['cpu'] / n:5.2f} ms CPU, all threads)",
        flush=True,
    )
    print("       ms per document: " + ", ".join(f"{p} {v:.2f}" for p, v in per_doc.items()), flush=True)
    print("       ms CPU per document: " + ", ".join(f"{p} {v:.2f}" for p, v in cpu.items()), flush=True)


def load_average() -> str:
    with contextlib.suppress(OSError):
        return Path("/proc/loadavg").read_text().split()[0]
    return "?"


def sweep(sizes: list[int], tmp: Path) -> None:
    original = random_vectors()
    try:
        warm = tmp / "warm"
        write_corpus(warm, 20, seed=9)
        build(warm, tmp / "kb-warm")  # loads Kùzu, LlamaIndex and the plugins once, outside the figures
        rows = {}
        for n in sizes:
            write_corpus(tmp / f"docs-{n}", n)
            rows[n] = build(tmp / f"docs-{n}", tmp / f"kb-{n}")
            print_row(n, rows[n])
            print(f"       load average {load_average()}", flush=True)
    finally:
        KnowledgeBase.finalize = original
    small, large = min(rows), max(rows)
    ratio = (rows[large]["seconds"] / large) / (rows[small]["seconds"] / small)
    cpu_ratio = (rows[large]["cpu"] / large) / (rows[small]["cpu"] / small)
    phases = ", ".join(
        f"{p} {(rows[large]['phases'].get(p, 0) / large) / max(rows[small]['phases'][p] / small, 1e-12):.2f}"
        for p in rows[small]["phases"]
    )
    print(
        f"cost per document, {large:,} / {small:,} documents: build {ratio:.2f} (CPU {cpu_ratio:.2f}); per phase: {phases}"
    )
    print(f"embedding (not in the builds above): {embedding_rate():.0f} texts/s (MiniLM, batched, sorted by length)")


def ray_against_local(n: int, tmp: Path) -> None:
    """The same corpus built (embedding for real) in process and with the Ray executor."""
    docs = tmp / f"docs-ray-{n}"
    write_corpus(docs, n)
    here = build(docs, tmp / "kb-here", executor="threads")
    print(
        f"{n:,} documents, in process: {here['seconds']:.1f} s (finish, embedding included: {here['phases']['finish']:.1f} s)"
    )
    remote = build(docs, tmp / "kb-ray", executor="ray")
    print(
        f"ray executor: {remote['seconds']:.1f} s (finish, Ray start and the Ray Data job included: "
        f"{remote['phases']['finish']:.1f} s); ray / in process {remote['seconds'] / here['seconds']:.2f}, "
        f"load average {load_average()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--ray", action="store_true", help="also build the smallest corpus on the Ray executor")
    parser.add_argument("--no-sweep", action="store_true", help="only the Ray comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="provbench-bench-own-") as tmp:
        if not args.no_sweep:
            sweep(args.documents, Path(tmp))
        if args.ray or args.no_sweep:
            ray_against_local(min(args.documents), Path(tmp))


if __name__ == "__main__":
    main()
