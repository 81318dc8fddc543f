"""Benchmark: the validity of provbench's provenance scores, output changed and the RAGAS scores.

Runs paper 000's agent (``agentic-graphrag``) with the six graph ablations, RAGAS faithfulness and
the reference-based RAGAS scores (answer correctness, context precision, recall, entity recall) on
the known-truth controls: the faithful ``oracle`` and the five planted behaviours
(``uses-uncited``, ``parametric``, ``cites-everything``, ``ignores-context``, ``random``), one run
each, on ``datasets/2wiki-controls`` (64 questions), offline. RAGAS is judged by the suites'
judge, ``control:judge`` (ragas' real prompts and parsing, replies by rule:
``provbench.controls.judge``).
Then, for every metric (``provbench_plugins.metrics.metric_validity.CHECKS``), prints:

* what a flag says and the planted behaviours it is meant to flag (stated before measuring);
* per control, the share of questions it flags (target cells: its sensitivity) and, on the
  oracle, the share it rightly leaves quiet (its specificity); a question without a reading
  (NaN) counts against the metric in both;
* the run-level value each run's report shows;
* a check that each metric's per-question terms average to the metric's own value.

Run: ``python benchmarks/bench_metric_validity.py [--questions 64] [--out DIR]`` (a second run
on the same ``--out`` reuses every recorded unit).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=64)
    parser.add_argument("--out", type=Path, default=None, help="run directories (default: a temporary folder)")
    parser.add_argument("--dataset", type=Path, default=REPO / "datasets" / "2wiki-controls" / "dev.json")
    args = parser.parse_args()

    from provbench_plugins.metrics.metric_validity import CONTROLS, disagreements, metric_validity, run_controls

    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        started = time.perf_counter()
        runs = run_controls(args.dataset, out, questions=args.questions)
        elapsed = time.perf_counter() - started
        failed = {c: sum(r.status == "failed" for r in run.records) for c, run in runs.items()}
        print(
            f"{args.questions} questions x {len(CONTROLS)} controls: {sum(len(r.records) for r in runs.values())} "
            f"records ({sum(failed.values())} failed) in {elapsed:.0f} s"
        )
        problems = disagreements(runs)
        print(
            "per-question terms average to each metric's value: "
            + ("yes" if not problems else "NO\n  " + "\n  ".join(problems))
        )
        results = metric_validity(runs)
        print("\n" + matrix(results) + "\n\n" + summary(results) + "\n\n" + reported(results, runs))


def rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def matrix(results) -> str:
    """Share of questions flagged per control (target cells in bold: sensitivity); the oracle
    column is the share left quiet (specificity); NaN counts in brackets."""
    from provbench_plugins.metrics.metric_validity import CONTROLS, FAITHFUL

    lines = [
        "| metric | flags when | oracle: quiet | " + " | ".join(CONTROLS[1:]) + " |",
        "|---|---|---|" + "---|" * (len(CONTROLS) - 1),
    ]
    for v in results:
        cells = []
        for control in CONTROLS:
            c = v.cells[control]
            text = rate(c.quiet_rate if control == FAITHFUL else c.flag_rate)
            text = f"**{text}**" if control in v.check.targets else text
            cells.append(text + (f" [{c.no_reading} NaN]" if c.no_reading else ""))
        sign = "<" if v.check.flags_when == "low" else ">="
        lines.append(f"| {v.check.name} | {sign} 0.5 | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(results) -> str:
    lines = ["| metric | a flag says | meant to flag | sensitivity | specificity |", "|---|---|---|---|---|"]
    for v in results:
        sens = ", ".join(f"{t} {rate(s)}" for t, s in v.sensitivity.items())
        lines.append(
            f"| {v.check.name} | {v.check.flag_says} | {', '.join(v.check.targets)} | {sens} | {rate(v.specificity)} |"
        )
    return "\n".join(lines)


def reported(results, runs) -> str:
    from provbench_plugins.metrics.metric_validity import CONTROLS, reported_value

    lines = ["| metric (run-level value) | " + " | ".join(CONTROLS) + " |", "|---|" + "---|" * len(CONTROLS)]
    for v in results:
        lines.append(
            f"| {v.check.name} | " + " | ".join(rate(reported_value(v.check, runs[c])) for c in CONTROLS) + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
