"""Benchmark: what KGRAG-Ex's ``max_paths`` does to a paper-001 suite's size and run time.

Runs ``suites/medmcqa-kgragex.yaml`` (4 medical-mini questions) on the schema-following test LLM
once per ``max_paths`` value, baseline ``max_paths: 1``, each in a fresh run directory, and prints
per value: KGRAG-Ex paths, units (records), LLM calls made (cache misses: what a real model would
be asked) and the wall time, with their ratios to the baseline measured in the same run. With the
embedded model a run's time is about its calls times the model's seconds per call, so the calls
ratio is the run-time ratio to expect there.

Run: ``python benchmarks/bench_p001_max_paths.py [--values 1 3] [--limit 4]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from provbench.runner import run_suite
from provbench.testing import schema_following_llm

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "suites" / "medmcqa-kgragex.yaml"


def suite_with(folder: Path, max_paths: int, limit: int) -> Path:
    from ruamel.yaml import YAML

    yaml = YAML()
    data = yaml.load(SUITE.read_text(encoding="utf-8"))
    data["dataset"]["path"] = str(REPO / "datasets" / "medical-mini" / "dev.jsonl")
    data["dataset"]["limit"] = limit
    for system in data["systems"]:
        if isinstance(system, dict) and system.get("name") == "kgrag-ex":
            system["options"]["max_paths"] = max_paths
    path = folder / f"suite-{max_paths}.yaml"
    with path.open("w", encoding="utf-8") as f:
        yaml.dump(data, f)
    return path


def measure(folder: Path, max_paths: int, limit: int) -> dict:
    out = folder / f"run-{max_paths}"
    llm = schema_following_llm(cache_dir=out / "llm")
    started = time.monotonic()
    run_dir = run_suite(suite_with(folder, max_paths, limit), out=out, llm=llm)
    seconds = time.monotonic() - started
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    kg = [r for r in records if r["key"]["system"] == "kgrag-ex"]
    paths = sum(len(r["trace"]["paths"]) for r in kg if r["key"]["condition"] == "baseline")
    return {
        "max_paths": max_paths,
        "paths": paths,
        "units": len(records),
        "kg_units": len(kg),
        "calls": len(llm.backend.calls),
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--limit", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(Path(tmp), value, args.limit) for value in args.values]
    base = rows[0]
    for row in rows:
        ratio = {k: row[k] / base[k] if base[k] else float("nan") for k in ("units", "calls", "seconds")}
        print(
            f"max_paths {row['max_paths']}: {row['paths']} KGRAG-Ex paths, {row['units']} units "
            f"({row['kg_units']} KGRAG-Ex), {row['calls']} LLM calls, {row['seconds']:.1f} s; x{ratio['units']:.2f} "
            f"units, x{ratio['calls']:.2f} calls, x{ratio['seconds']:.2f} time vs max_paths {base['max_paths']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
