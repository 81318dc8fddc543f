"""Benchmark: graph views cost the same on a small and a large knowledge base.

Builds two synthetic knowledge bases on real Kùzu (about 1,000 entities / 2,600 relations and
about 50,000 entities / 130,000 relations) with ``KnowledgeBase.bulk_load``, then prints for each:

* the time to create a view hiding 100 entities (median over many repeats), and the ratio of
  the large graph's figure to the small one's (the issue asks for it to stay within 2x);
* the time of a neighbour query through that view (median over sampled entities), plus an
  entity lookup and a shortest-path query for context.

No embedding model is loaded: ``finalize(embed=False)`` stores random unit vectors, because this
measures graph access, not search. Run: ``python benchmarks/bench_view.py [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
import timeit
from pathlib import Path

from provbench.kb import KnowledgeBase
from provbench.kb.types import Entity, Relation, TextUnit

RELATIONS_PER_ENTITY = 2.6  # 50,000 entities -> 130,000 relations
ENTITIES_PER_TEXT_UNIT = 4
TEXT_UNITS_PER_DOCUMENT = 3
HIDDEN = 100


def synthetic_graph(n_entities: int, seed: int = 0) -> tuple[list[TextUnit], list[Entity], list[Relation]]:
    """Random entities linked to text units, and random relations between them (seeded)."""
    rng = random.Random(seed)
    n_units = max(1, n_entities // ENTITIES_PER_TEXT_UNIT)
    units = [
        TextUnit(id=f"tu:{i}", text=f"Synthetic passage {i}.", document_id=f"doc:{i // TEXT_UNITS_PER_DOCUMENT}")
        for i in range(n_units)
    ]
    entities = [
        Entity(
            id=f"ent:{i}",
            name=f"Entity {i}",
            label=rng.choice(["PERSON", "PLACE", "WORK"]),
            description=f"Synthetic entity number {i}.",
            text_unit_ids=(f"tu:{i % n_units}",),
        )
        for i in range(n_entities)
    ]
    relations = []
    for i in range(int(n_entities * RELATIONS_PER_ENTITY)):
        source, target = rng.randrange(n_entities), rng.randrange(n_entities)
        relations.append(
            Relation(
                id=f"rel:{i}",
                source=f"ent:{source}",
                target=f"ent:{target}",
                label=rng.choice(["related_to", "part_of", "knows"]),
                text_unit_id=f"tu:{source % n_units}",
            )
        )
    return units, entities, relations


def build(directory: Path, n_entities: int) -> dict[str, float]:
    """Bulk-load, detect communities, finalize (random vectors); returns the seconds each took."""
    units, entities, relations = synthetic_graph(n_entities)
    times = {}
    started = time.perf_counter()
    kb = KnowledgeBase.create(directory)
    kb.bulk_load(text_units=units, entities=entities, relations=relations)
    times["load_s"] = time.perf_counter() - started
    started = time.perf_counter()
    communities = kb.detect_communities(seed=0)
    times["communities_s"] = time.perf_counter() - started
    kb.set_community_summaries({c.id: (f"Community {c.id}", f"{len(c.entity_ids)} members") for c in communities})
    kb.finalize({"builder": "benchmarks/bench_view.py", "entities": n_entities}, embed=False)
    kb.close()
    return times


def median_call_time(fn, number: int, repeat: int) -> float:
    """Median seconds per call over ``repeat`` batches of ``number`` calls."""
    return statistics.median(t / number for t in timeit.repeat(fn, number=number, repeat=repeat))


def hidden_ids(kb: KnowledgeBase, seed: int = 1) -> list[str]:
    """100 random entity ids, as fresh strings (as a trace would hand them over)."""
    return [f"ent:{i}" for i in random.Random(seed).sample(range(kb.stats().entities), HIDDEN)]


def creation_time(kb: KnowledgeBase) -> float:
    """Median seconds to create a view hiding 100 entities (200 calls per batch, 25 batches)."""
    view, hidden = kb.view(), hidden_ids(kb)
    return median_call_time(lambda: view.hide(entities=hidden), number=200, repeat=25)


def measure(kb: KnowledgeBase, seed: int = 1) -> dict[str, float]:
    rng = random.Random(seed + 1)
    stats = kb.stats()
    ids = [f"ent:{i}" for i in range(stats.entities)]
    hidden = hidden_ids(kb, seed)
    narrowed = kb.view().hide(entities=hidden)
    probes = rng.sample([i for i in ids if i not in set(hidden)], 50)
    neighbour_times, entity_times, path_times, degrees = [], [], [], []
    for entity_id in probes:
        t0 = time.perf_counter()
        degrees.append(len(narrowed.neighbors(entity_id)))
        t1 = time.perf_counter()
        narrowed.entity(entity_id)
        t2 = time.perf_counter()
        neighbour_times.append(t1 - t0)
        entity_times.append(t2 - t1)
    for a, b in zip(probes[:10], probes[10:20]):
        t0 = time.perf_counter()
        narrowed.shortest_paths(a, b, max_hops=4, limit=5)
        path_times.append(time.perf_counter() - t0)
    return {
        "entities": stats.entities,
        "relations": stats.relations,
        "text_units": stats.text_units,
        "communities": stats.communities,
        "neighbors_s": statistics.median(neighbour_times),
        "mean_degree": statistics.mean(degrees),
        "entity_s": statistics.median(entity_times),
        "shortest_paths_s": statistics.median(path_times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 50_000])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of view-creation timing")
    parser.add_argument("--keep", type=Path, help="build the graphs here and keep them (default: a temp dir)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="provbench-bench-"))
    kbs: list[KnowledgeBase] = []
    try:
        for size in args.sizes:
            directory = root / f"kb-{size}"
            times = {"load_s": float("nan"), "communities_s": float("nan")}  # nan: reused from --keep
            if not KnowledgeBase.is_complete(directory):
                shutil.rmtree(directory, ignore_errors=True)
                times = build(directory, size)
            kb = KnowledgeBase.open(directory, read_only=True)
            kbs.append(kb)
            row = measure(kb) | times
            print(
                f"{row['entities']:>7,} entities {row['relations']:>8,} relations {row['text_units']:>6,} text units"
                f" {row['communities']:>5,} communities | bulk load {row['load_s']:5.1f} s,"
                f" Leiden + write {row['communities_s']:5.1f} s"
                f" | through a view hiding {HIDDEN}: neighbors {row['neighbors_s'] * 1e3:6.2f} ms"
                f" (mean degree {row['mean_degree']:.1f}), entity {row['entity_s'] * 1e3:5.2f} ms,"
                f" shortest paths (<=4 hops) {row['shortest_paths_s'] * 1e3:6.2f} ms",
                flush=True,
            )
        # creation timing alternates between the graphs so that load on the machine hits both alike
        rounds = [[creation_time(kb) for kb in kbs] for _ in range(args.rounds)]
        medians = [statistics.median(r[i] for r in rounds) for i in range(len(kbs))]
        for size, kb, median in zip(args.sizes, kbs, medians):
            print(
                f"view creation hiding {HIDDEN} entities, {kb.stats().entities:>7,} entities: {median * 1e6:6.1f} us"
                f" (median of {args.rounds} rounds x 25 batches x 200 calls)"
            )
        if len(medians) >= 2:
            ratio = medians[-1] / medians[0]
            verdict = "OK (within 2x)" if 0.5 <= ratio <= 2 else "FAIL (more than 2x apart)"
            print(f"view creation time, largest / smallest graph: {ratio:.2f}  {verdict}")
    finally:
        for kb in kbs:
            kb.close()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
