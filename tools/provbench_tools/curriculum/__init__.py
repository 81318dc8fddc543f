"""A seeded generator of curriculum-mini: paper 002's concept graph and its questions, each with
its gold chain.

The hand-written curriculum (:mod:`.core`: 36 concepts of LLM engineering, 45 edges, questions
cm-01..cm-21) is kept as it was; :mod:`.tracks` adds invented tracks of course units with their
electives and the questions the planning loop's claims need (deep, too deep for its round budget,
stale-edge, unanswerable). Files, in the formats the ``curriculum`` loader and the
``concept-graph`` builder read:

* ``concepts.csv``: ``id``, ``name``, ``kind``, ``description``, ``aliases`` (``|``-separated);
* ``edges.csv``: ``id``, ``source``, ``relation``, ``target``, ``valid_from``, ``recorded_at``,
  ``invalidated_at``;
* ``questions.jsonl``: ``id``, ``question``, ``answer`` (a concept name; null when unanswerable),
  ``answerable`` (false only), ``hops``, ``type``, ``chain_from`` and ``chain`` (the gold chain:
  edge ids in order, walked from that concept), ``stale_answer`` (stale-edge questions).

Questions are interleaved by kind so that a run with ``--limit N`` sees every kind early.
``python -m provbench_tools.curriculum [OUT_DIR] [--seed S]``; with no options it rewrites the
bundled datasets/curriculum-mini byte for byte.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Sequence

from . import core
from .tracks import Tracks, generate_tracks

MINI_SEED = 24
MINI_COUNTS = {"deep": 8, "too_deep": 4, "stale": 4, "unanswerable": 4}
FIRST_GENERATED_QUESTION = 22
KIND_ORDER = ("answerable", "deep", "unanswerable", "stale", "too-deep")  # the interleaving's cycle


def concept_rows(tracks: Tracks) -> list[list[str]]:
    rows = [
        [cid, name, kind, description, "|".join(aliases)] for cid, name, kind, description, aliases in core.CONCEPTS
    ]
    return rows + [[u.id, u.name, u.kind, u.description, ""] for u in tracks.units.values()]


def edge_rows(tracks: Tracks) -> list[list[str]]:
    rows = []
    for eid, source, relation, target, valid, invalidated in core.EDGES:
        recorded = date.fromisoformat(valid) + timedelta(days=core.RECORDED_AFTER_DAYS)
        rows.append([eid, source, relation, target, valid, recorded.isoformat(), invalidated or ""])
    return rows + [
        [e.id, e.source, e.relation, e.target, e.valid_from, e.recorded_at, e.invalidated_at or ""]
        for e in tracks.edges
    ]


def question_records(tracks: Tracks) -> list[dict]:
    """Every question, numbered (generated ones from cm-22) and interleaved by kind."""
    for number, record in enumerate(tracks.questions, start=FIRST_GENERATED_QUESTION):
        record["id"] = f"cm-{number:02d}"
    core_unanswerable = list(core.UNANSWERABLE)
    groups = {
        "answerable": list(core.ANSWERABLE),
        "deep": [],
        "unanswerable": core_unanswerable,
        "stale": [],
        "too-deep": [],
    }
    for record in tracks.questions:
        groups[record["type"]].append(record)
    ordered: list[dict] = []
    while any(groups.values()):
        for kind in KIND_ORDER:
            if groups[kind]:
                ordered.append(groups[kind].pop(0))
    return ordered


def write_curriculum(out: Path, seed: int = MINI_SEED, **counts: int) -> Path:
    chosen = {**MINI_COUNTS, **counts}
    core_names = {name.lower() for _, name, _, _, _ in core.CONCEPTS}
    tracks = generate_tracks(random.Random(seed), len(core.EDGES) + 1, core_names, **chosen)
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "concepts.csv", ["id", "name", "kind", "description", "aliases"], concept_rows(tracks))
    _write_csv(
        out / "edges.csv",
        ["id", "source", "relation", "target", "valid_from", "recorded_at", "invalidated_at"],
        edge_rows(tracks),
    )
    with (out / "questions.jsonl").open("w", encoding="utf-8") as handle:
        for record in question_records(tracks):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m provbench_tools.curriculum",
        description="Write curriculum-mini: a concept graph and questions with gold chains.",
    )
    parser.add_argument("out", type=Path, nargs="?", default=Path("datasets/curriculum-mini"))
    parser.add_argument("--seed", type=int, default=MINI_SEED)
    args = parser.parse_args(argv)
    path = write_curriculum(args.out, args.seed)
    print(f"wrote curriculum-mini (seed {args.seed}) to {path}")


__all__ = ["write_curriculum", "MINI_SEED", "MINI_COUNTS", "main"]
