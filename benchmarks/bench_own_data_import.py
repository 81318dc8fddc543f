"""Benchmark: importing a large LlamaIndex Kùzu graph with the ``property-graph`` builder.

Writes the kind of database a user's ``PropertyGraphIndex`` leaves in a ``KuzuPropertyGraphStore``
(the store's own tables, made by the store: ``Chunk``, ``Entity``, ``LINKS``, ``MENTIONS``; chunks
labelled ``text_chunk`` with their file, entities and relations with their ``triplet_source_id``),
of a given number of nodes: a tenth of them chunks (ten per document, the first opening with the
document's title), the rest entities, 1.5 relations per entity between entities named in the
same chunk, and the MENTIONS edges the store adds for each relation. The database is filled with
``COPY FROM`` (setting up is not what is measured) and has no vectors.

Then it is imported as a user's suite would (``knowledge_base: {builder: property-graph, options:
{source: GRAPH}}``, model ``schema-following``: the registry's builder and LLM client), with random vectors
as in ``bench_kb_build.py`` (vectors excluded: embedding a 100k-node KB is its own cost, about
115 texts/s on 2 cores). Printed: nodes and edges written, the import's seconds per phase
(reading the store, mapping, linking, writing the KB, communities and summaries, finish) and in
all, and what the KB holds.

Run: ``python benchmarks/bench_own_data_import.py [--nodes 100000] [--ann-min-vectors 1000000]``.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from provbench.kb import KnowledgeBase
from provbench_plugins.kb_builders.graph_import import builder as import_builder

PHASES = {
    "read_graph": "read store",
    "map_graph": "map",
    "add_title_entities": "titles",
    "declare_own_text": "own text",
    "link_mentions": "link",
    "describe_entities": "describe",
    "to_records": "records",
    "write_kb": "write",
    "reusable_vectors": "vector check",
    "summarize_communities": "communities",
    "finish": "finish",
}
CHUNKS_PER_DOCUMENT = 10
RELATIONS_PER_ENTITY = 1.5
LABELS = ("PERSON", "PLACE", "ORGANIZATION", "WORK")
VERBS = ("met", "visited", "worked with", "wrote about", "founded", "succeeded")


def entity_name(i: int) -> str:
    syllables = ("bra", "ke", "lo", "mi", "su", "ta", "ven", "dor", "rin", "sal")
    first = "".join(syllables[(i // 10**k) % 10] for k in range(3)).capitalize()
    last = "".join(syllables[(i // 10**k) % 10] for k in range(3, 6)).capitalize()
    return f"{first} {last}" if i < 10**6 else f"{first} {last} {i}"


def graph_tables(n_nodes: int, seed: int = 1) -> dict[str, list[dict]]:
    """Rows of the store's four tables for a graph of ``n_nodes`` nodes."""
    rng = random.Random(seed)
    n_chunks = max(CHUNKS_PER_DOCUMENT, n_nodes // 10)
    n_entities = n_nodes - n_chunks
    names = [entity_name(i) for i in range(n_entities)]
    per_chunk: list[list[int]] = [[] for _ in range(n_chunks)]
    for e in range(n_entities):  # every entity appears in one chunk at least, some in two
        per_chunk[e % n_chunks].append(e)
        if rng.random() < 0.3:
            per_chunk[rng.randrange(n_chunks)].append(e)
    links, mentions, source_of = [], set(), {}
    for c, members in enumerate(per_chunk):
        for _ in range(round(RELATIONS_PER_ENTITY * len(members))) if len(members) > 1 else ():
            a, b = rng.sample(members, 2)
            links.append(
                {"from": names[a], "to": names[b], "label": rng.choice(VERBS), "triplet_source_id": f"chunk-{c}"}
            )
            mentions |= {(c, a), (c, b)}
        for e in members:
            source_of.setdefault(e, c)
    chunks = []
    for c, members in enumerate(per_chunk):
        doc = c // CHUNKS_PER_DOCUMENT
        heading = f"# {names[per_chunk[doc * CHUNKS_PER_DOCUMENT][0]]}\n\n" if c % CHUNKS_PER_DOCUMENT == 0 else ""
        body = " ".join(f"{names[e]} {rng.choice(VERBS)} {names[rng.choice(members)]}." for e in members)
        text = heading + (body or "An empty passage.") + " " + "The archive holds more letters." * 3
        chunks.append({"id": f"chunk-{c}", "text": text, "label": "text_chunk", "file_name": f"doc-{doc:05d}.md"})
    entities = [
        {"id": n, "name": n, "label": LABELS[i % len(LABELS)], "triplet_source_id": f"chunk-{source_of[i]}"}
        for i, n in enumerate(names)
    ]
    mention_rows = [{"from": f"chunk-{c}", "to": names[e], "label": "MENTIONS"} for c, e in sorted(mentions)]
    return {"Chunk": chunks, "Entity": entities, "LINKS": links, "MENTIONS": mention_rows}


def write_llamaindex_graph(path: Path, tables: dict[str, list[dict]]) -> None:
    """A Kùzu database with KuzuPropertyGraphStore's schema (made by the store), filled by COPY FROM."""
    import kuzu
    import pyarrow as pa
    import pyarrow.parquet as pq
    from llama_index.graph_stores.kuzu import KuzuPropertyGraphStore

    database = kuzu.Database(str(path))
    KuzuPropertyGraphStore(database, use_vector_index=False)  # creates the store's tables
    connection = kuzu.Connection(database)
    columns = {
        "Chunk": "(id, text, label, file_name)",
        "Entity": "(id, name, label, triplet_source_id)",
    }
    for table, rows in tables.items():
        file = path.parent / f"{table}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), file)
        if table == "MENTIONS":  # a relation table between several pairs of node tables
            connection.execute(f"COPY {table} (label) FROM '{file}' (from='Chunk', to='Entity')")
        else:
            connection.execute(f"COPY {table}{columns.get(table, '')} FROM '{file}'")
    database.close()


@contextlib.contextmanager
def timed_phases():
    """Wall and CPU seconds (this process, all its threads: Kùzu's included) per phase of the builder."""
    spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def add(name: str, wall: float, cpu: float) -> None:
        spent[PHASES[name]][0] += time.perf_counter() - wall
        spent[PHASES[name]][1] += time.process_time() - cpu

    originals = {name: getattr(import_builder, name) for name in PHASES}

    def timer(name, function):
        if name == "read_graph":  # a context manager: time its opening (the reading)

            @contextlib.contextmanager
            def wrapped_context(*args, **kwargs):
                wall, cpu = time.perf_counter(), time.process_time()
                with function(*args, **kwargs) as value:
                    add(name, wall, cpu)
                    yield value

            return wrapped_context

        def wrapped(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                add(name, wall, cpu)

        return wrapped

    for name, function in originals.items():
        setattr(import_builder, name, timer(name, function))
    try:
        yield spent
    finally:
        for name, function in originals.items():
            setattr(import_builder, name, function)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument(
        "--ann-min-vectors",
        type=int,
        default=None,
        help="the builder option (default the KB's: an HNSW index for indices of 20,000 rows or more, "
        "built in finish; a large value keeps every index exact, leaving vector work out of the figures)",
    )
    args = parser.parse_args()
    from provbench.llm_setup import make_llm
    from provbench.registry import default_registry

    original = KnowledgeBase.finalize  # benchmark only: random vectors (no system reads this KB)
    KnowledgeBase.finalize = lambda self, info, embed=True, **kw: original(self, info, False, **kw)
    with tempfile.TemporaryDirectory(prefix="provbench-bench-import-") as tmp:
        graph = Path(tmp) / "user-graph.kuzu"
        tables = graph_tables(args.nodes)
        write_llamaindex_graph(graph, tables)
        print(
            f"user graph: {len(tables['Chunk']):,} chunks + {len(tables['Entity']):,} entities = "
            f"{len(tables['Chunk']) + len(tables['Entity']):,} nodes; {len(tables['LINKS']):,} relations, "
            f"{len(tables['MENTIONS']):,} MENTIONS edges",
            flush=True,
        )
        with timed_phases() as spent:
            started, cpu = time.perf_counter(), time.process_time()
            llm = make_llm("schema-following", cache_dir=Path(tmp) / "kb-llm-cache")  # as kb build makes it
            options = {"source": str(graph)} | (
                {"ann_min_vectors": args.ann_min_vectors} if args.ann_min_vectors else {}
            )
            builder = default_registry().create("kb_builder", "property-graph", **options)
            kb = builder.build([], Path(tmp) / "kb", llm)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            stats = kb.stats()
            kb.close()
    print(
        f"imported in {seconds:.1f} s wall, {cpu:.1f} s CPU: {stats.text_units:,} text units, {stats.entities:,} entities, "
        f"{stats.relations:,} relations, {stats.communities:,} communities"
    )
    print("per phase, wall / CPU seconds: " + ", ".join(f"{p} {w:.1f} / {c:.1f}" for p, (w, c) in spent.items()))
    with contextlib.suppress(OSError):
        print(f"load average {Path('/proc/loadavg').read_text().split()[0]}")


if __name__ == "__main__":
    main()
