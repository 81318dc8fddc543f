"""Benchmark: ``GraphView.shortest_paths`` on a graph whose hubs multiply the shortest paths.

A layered graph on real Kùzu: a source, ``--layers`` layers of ``--width`` hub entities each,
and a target, every entity of a layer joined to every entity of the next, so the source and
the target are joined by width ** layers shortest paths of layers + 1 hops. Around it, a random
graph of ``--background`` entities makes the database realistic in size. Three queries run in
the same process, each timed by its median over ``--repeat`` calls:

* ``LIMIT 1`` inside the query, as the view once did (Kùzu's traversal order picked the path);
* every tie fetched and sorted, as the view did before the cap (``limit`` above every tie);
* the view today: at most ``MAX_TIED_PATHS`` fetched, then sorted (``limit`` = the cap, so the
  rows it fetched are counted),

and the script prints the paths each fetched and its time as a ratio of the ``LIMIT 1`` query's.
No embedding model is loaded (``finalize(embed=False)``).

    python benchmarks/bench_shortest_paths.py [--width 30] [--layers 3] [--background 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from provbench.kb import KnowledgeBase
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.kb.view import MAX_TIED_PATHS, GraphView


def hub_graph(width: int, layers: int, background: int, seed: int = 0) -> tuple[list, list, list]:
    """Source -> layers of ``width`` fully joined hubs -> target, beside a random background graph."""
    rng = random.Random(seed)
    unit = TextUnit(id="tu:0", text="Synthetic passage.", document_id="doc:0")
    names = [
        "source",
        *[f"hub-{layer}-{i}" for layer in range(layers) for i in range(width)],
        "target",
        *[f"background-{i}" for i in range(background)],
    ]
    entities = [Entity(id=f"ent:{n}", name=n, text_unit_ids=("tu:0",)) for n in names]
    levels = [
        ["ent:source"],
        *[[f"ent:hub-{layer}-{i}" for i in range(width)] for layer in range(layers)],
        ["ent:target"],
    ]
    pairs = [(a, b) for upper, lower in zip(levels, levels[1:]) for a in upper for b in lower]
    pairs += [
        (f"ent:background-{rng.randrange(background)}", f"ent:background-{rng.randrange(background)}")
        for _ in range(3 * background)
    ]
    relations = [
        Relation(id=f"rel:{i}", source=a, target=b, label="linked", text_unit_id="tu:0")
        for i, (a, b) in enumerate(pairs)
    ]
    return [unit], entities, relations


def median_seconds(fn, repeat: int) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), rows


def limit_one(kb: KnowledgeBase, hops: int) -> int:
    """The query as it was before every tie was fetched: LIMIT 1 inside it (rows returned)."""
    query = (
        f"MATCH p = (a:Entity {{id: $source}})-[r:LINKS* ALL SHORTEST 1..{hops}]-(b:Entity {{id: $target}}) "
        "RETURN nodes(p), rels(p) LIMIT 1"
    )
    return len(kb.store.rows(query, {"source": "ent:source", "target": "ent:target"}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=30, help="hub entities per layer")
    parser.add_argument("--layers", type=int, default=3, help="layers of hubs between source and target")
    parser.add_argument("--background", type=int, default=20_000, help="entities of the random graph beside it")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    hops = args.layers + 1
    with tempfile.TemporaryDirectory() as folder:
        kb = KnowledgeBase.create(Path(folder) / "kb")
        units, entities, relations = hub_graph(args.width, args.layers, args.background)
        kb.bulk_load(text_units=units, entities=entities, relations=relations)
        kb.finalize({"builder": "benchmarks/bench_shortest_paths.py"}, embed=False)
        kb.close()
        kb = KnowledgeBase.open(Path(folder) / "kb", read_only=True)
        view = GraphView(kb.store)  # not kb.view(): that one remembers query results, and every repeat would hit
        print(
            f"{len(entities):,} entities, {len(relations):,} relations; source and target joined by "
            f"{args.width**args.layers:,} shortest paths of {hops} hops (MAX_TIED_PATHS = {MAX_TIED_PATHS:,})"
        )
        runs = {
            "LIMIT 1 in the query (old)": lambda: limit_one(kb, hops),
            "every tie, sorted (before the cap)": lambda: len(
                view.shortest_paths("ent:source", "ent:target", max_hops=hops, limit=10**9)
            ),
            "capped, sorted (now)": lambda: min(
                MAX_TIED_PATHS,
                len(view.shortest_paths("ent:source", "ent:target", max_hops=hops, limit=MAX_TIED_PATHS)),
            ),
        }
        results = {name: median_seconds(fn, args.repeat) for name, fn in runs.items()}
        kept = view.shortest_paths("ent:source", "ent:target", max_hops=hops, limit=1)[0]
        base = results["LIMIT 1 in the query (old)"][0]
        print(f"{'query':<36} {'paths fetched':>13} {'median s':>10} {'x old':>8}")
        for name, (seconds, rows) in results.items():
            print(f"{name:<36} {rows:>13,} {seconds:>10.4f} {seconds / base:>8.1f}")
        print("view keeps:", " ".join(r.id for r in kept.relations))
        kb.close()


if __name__ == "__main__":
    main()
