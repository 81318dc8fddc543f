"""Benchmark: what the leak guard costs each intervention unit, against the unit's own run time.

Runs paper 000's protocol (six systems, six ablations, random removal once) on a generated
2WikiMultiHopQA world of N questions with the in-process schema-following LLM (replies in
microseconds, so a unit's run time is nearly all graph reads and prompt building: the guard's
share is at its largest here; with a real model each unit waits seconds more). The guard's
entry point is wrapped to time every check; the index of the knowledge base's text, built once
per process on first use, is timed apart. Prints, for the graph-level intervention units:

* units checked, their summed run time (``trace.wall_time_s``) and the guard's summed time;
* the ratio guard / unit run time (the baseline: the same units, in the same run), overall and
  the median and 95th percentile of the per-unit ratio;
* the one-off index build, and the requests scanned per unit;
* what keeping every unit's requests in its record costs (:func:`provbench.audit.request_log`), and its size.

Run: ``python benchmarks/bench_leak_guard.py [--questions 30]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

SUITE = """\
name: bench-leak-guard
dataset: {{loader: 2wiki, path: {dataset}}}
knowledge_base: {{builder: 2wiki-paper000, directory: {kb}, options: {{extract: false, summarize: false}}}}
model: {{id: schema-following}}
systems: [llm-only, p000/rag, graphrag, agentic-graphrag, agentic-visited-only, agentic-evidence-first]
intervention_systems: [graphrag, agentic-graphrag, agentic-visited-only, agentic-evidence-first]
interventions: [full-isolation, text-only-isolation, cited-removal, {{name: random-removal, options: {{repeats: 1}}}},
                entity-removal, entity-text-mask]
concurrency: 1
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()

    import provbench.units as units
    from provbench.kb import hidden
    from provbench.runner import run_suite
    from provbench.run_store import RunStore
    from provbench.leakguard import STATUSES
    from provbench.testing import schema_following_llm
    from provbench_tools.world_2wiki import write_world

    timed: dict[str, float] = {}
    logged: list[float] = []  # keeping each unit's requests in its record (provbench.audit)
    check, build, log_requests = units.check_unit, hidden.build_index, units.request_log

    def timed_check(view, question, trace, capture, *args, **kwargs):
        started = time.perf_counter()
        result = check(view, question, trace, capture, *args, **kwargs)
        timed[capture.key] = time.perf_counter() - started
        return result

    def timed_log(requests):
        started = time.perf_counter()
        result = log_requests(requests)
        logged.append(time.perf_counter() - started)
        return result

    index_s: list[float] = []

    def timed_build(store):
        started = time.perf_counter()
        index = build(store)
        index_s.append(time.perf_counter() - started)
        return index

    units.check_unit, hidden.build_index, units.request_log = timed_check, timed_build, timed_log
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        dataset = write_world(tmp_path / "dev.json", n_questions=args.questions, seed=11)
        (tmp_path / "suite.yaml").write_text(SUITE.format(dataset=dataset, kb=tmp_path / "kb"))
        run_dir = run_suite(
            tmp_path / "suite.yaml", out=tmp_path / "run", llm=schema_following_llm(), write_report=False
        )
        every = list(RunStore(run_dir).load_records().values())
        records = [r for r in every if r.leak_check is not None]
    index_build = sum(index_s)
    guard = {r.key.as_str(): timed[r.key.as_str()] for r in records}
    guard[next(iter(guard))] -= index_build  # the first check paid the one-off index build
    run_time = {r.key.as_str(): r.trace.wall_time_s for r in records}
    ratios = sorted(guard[k] / run_time[k] for k in guard if run_time[k])
    print(f"units checked: {len(records)} ({args.questions} questions)")
    print(f"unit run time (sum): {sum(run_time.values()):.3f} s; leak guard (sum): {sum(guard.values()):.3f} s")
    print(
        f"guard / unit run time: {sum(guard.values()) / sum(run_time.values()):.3f} overall; per unit median "
        f"{statistics.median(ratios):.3f}, p95 {ratios[int(0.95 * (len(ratios) - 1))]:.3f}"
    )
    print(
        f"guard per unit: median {1000 * statistics.median(guard.values()):.2f} ms, "
        f"max {1000 * max(guard.values()):.2f} ms; requests per unit: median "
        f"{statistics.median(r.leak_check.requests for r in records):g}"
    )
    print(f"text index (once per process): {1000 * index_build:.1f} ms")
    print("statuses: " + ", ".join(f"{s} {sum(r.leak_check.status == s for r in records)}" for s in STATUSES))
    all_time = sum(r.trace.wall_time_s or 0.0 for r in every if r.trace is not None)
    print(
        f"request logs, every unit ({len(logged)}): {sum(logged):.3f} s against {all_time:.3f} s of unit run time; "
        f"kept {sum(len(r.requests.data) for r in every if r.requests) / 1e6:.2f} MB compressed "
        f"(from {sum(r.requests.chars for r in every if r.requests) / 1e6:.2f} M characters)"
    )


if __name__ == "__main__":
    main()
