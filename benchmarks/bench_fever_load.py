"""Benchmark: loading FEVER claims and streaming a pages dump.

Writes, in a temporary directory, a claims file shaped like paper_dev (10,000 claims, a third
per label, SUPPORTS/REFUTES with one to three evidence sets, NEI with nulls) and a pages dump of
``--pages`` pages, then prints:

* the time to load all claims with the ``fever`` loader (validated, as Questions), and the
  ratio against a bare ``json.loads`` of every line (the floor any loader pays);
* the time of a label-stratified seeded sample of 300;
* the time to stream the dump keeping only the evidence pages of 300 claims plus the pages a
  claim names, against a full parse of the dump, and the pages kept.

Run: ``python benchmarks/bench_fever_load.py [--claims N] [--pages N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from provbench_plugins.datasets.fever.loader import FeverLoader
from provbench_plugins.datasets.fever.pages import read_pages, title_matcher

LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")


def write_claims(path: Path, n: int, pages: int, rng: random.Random) -> None:
    with path.open("w") as handle:
        for i in range(n):
            label = LABELS[i % 3]
            if label == "NOT ENOUGH INFO":
                evidence = [[[i, None, None, None]]]
            else:
                evidence = [
                    [
                        [i, i * 10 + k, f"Page_{rng.randrange(pages)}", rng.randrange(8)]
                        for k in range(rng.choice((1, 1, 2)))
                    ]
                    for _ in range(rng.randint(1, 3))
                ]
            handle.write(
                json.dumps(
                    {
                        "id": i,
                        "verifiable": "NOT VERIFIABLE" if label == LABELS[2] else "VERIFIABLE",
                        "label": label,
                        "claim": f"Page {rng.randrange(pages)} is a claim number {i}.",
                        "evidence": evidence,
                    }
                )
                + "\n"
            )


def write_pages(path: Path, n: int) -> None:
    with path.open("w") as handle:
        for i in range(n):
            lines = "\n".join(
                f"{k}\tPage {i} sentence {k} about Page {i + 1} .\tPage {i + 1}\tPage {i + 1}" for k in range(8)
            )
            handle.write(json.dumps({"id": f"Page_{i}", "text": "", "lines": lines}) + "\n")


def timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=100_000)
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        claims, pages = Path(tmp) / "paper_dev.jsonl", Path(tmp) / "wiki-001.jsonl"
        write_claims(claims, args.claims, args.pages, rng)
        write_pages(pages, args.pages)
        _, floor = timed(lambda: [json.loads(line) for line in claims.open()])
        questions, load = timed(lambda: FeverLoader().load(claims))
        _, sample = timed(lambda: FeverLoader().load(claims, limit=300, sample=True, seed=1))
        print(
            f"claims: {len(questions):,} loaded in {load:.2f} s "
            f"({load / floor:.1f}x a bare json.loads of every line, {floor:.2f} s)"
        )
        print(f"stratified sample of 300: {sample:.2f} s")
        chosen = questions[:300]
        needed = {p for q in chosen for p in q.metadata["evidence_pages"]}
        kept, stream = timed(lambda: read_pages(pages, needed, title_matcher(q.question for q in chosen)))
        _, full = timed(lambda: read_pages(pages))
        size = pages.stat().st_size / 1e6
        print(
            f"pages: {args.pages:,} in {size:.0f} MB; kept {len(kept):,} for 300 claims in {stream:.2f} s "
            f"(full parse {full:.2f} s, ratio {stream / full:.2f})"
        )


if __name__ == "__main__":
    main()
