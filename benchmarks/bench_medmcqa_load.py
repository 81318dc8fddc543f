"""Benchmark: loading all 4,183 MedMCQA dev records (raw jsonl and MIRAGE json forms).

The real dev file is not shipped, so a file of the same size and shape is written: the shared
sample's records (../shared/datasets/medmcqa/dev.sample50.jsonl when present, otherwise
medical-mini's) repeated under new ids up to 4,183. Prints, per form, the median time of the
"medmcqa" loader (read, validate with pydantic, build Questions) and of bare ``json.loads`` of
the same file measured in the same run, and their ratio (the price of validation).

Run: ``python benchmarks/bench_medmcqa_load.py [--records 4183] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from provbench_plugins.datasets.medmcqa.loader import MedMCQALoader

REPO = Path(__file__).resolve().parents[1]
SOURCES = (
    REPO.parent / "shared" / "datasets" / "medmcqa" / "dev.sample50.jsonl",
    Path("/work/shared/datasets/medmcqa/dev.sample50.jsonl"),
    REPO / "datasets" / "medical-mini" / "dev.jsonl",
)


def write_files(folder: Path, count: int) -> tuple[Path, Path, str]:
    source = next(p for p in SOURCES if p.is_file())
    seed = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    records = [{**seed[i % len(seed)], "id": f"bench-{i}"} for i in range(count)]
    raw = folder / "dev.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in records))
    mirage = folder / "benchmark.json"
    mirage.write_text(
        json.dumps(
            {
                "medmcqa": {
                    r["id"]: {
                        "question": r["question"],
                        "options": {k: r["op" + k.lower()] for k in "ABCD"},
                        "answer": "ABCD"[r["cop"] - 1],
                    }
                    for r in records
                }
            }
        )
    )
    return raw, mirage, str(source)


def median_seconds(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bare_json(path: Path) -> None:
    if path.suffix == ".jsonl":
        [json.loads(line) for line in path.open()]
    else:
        json.loads(path.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=4183)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw, mirage, source = write_files(Path(tmp), args.records)
        print(f"{args.records} records shaped like {source}")
        for label, path in (("raw jsonl", raw), ("MIRAGE json", mirage)):
            loaded = len(MedMCQALoader().load(path))
            ours = median_seconds(lambda: MedMCQALoader().load(path), args.repeats)
            bare = median_seconds(lambda: bare_json(path), args.repeats)
            print(
                f"{label:12s} {loaded} questions in {ours:.3f} s (median of {args.repeats}); bare json.loads "
                f"{bare:.3f} s; ratio {ours / bare:.1f}x"
            )


if __name__ == "__main__":
    main()
