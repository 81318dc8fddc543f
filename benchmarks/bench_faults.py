"""Benchmark: what injected faults cost in wall time, against a fault-free run measured alongside.

Runs the small fault suite of tests/fault_helpers.py (toy systems through litellm, ``openai/toy``
with ``api_base`` on a loopback :class:`provbench.testing.faults.FaultServer`) with no faults,
then with 20 % and 40 % of requests failing (429, 500, hang, invalid JSON, connection reset in
equal shares), each in a fresh run directory, then resumes each faulty run with the faults gone.
Prints per rate: wall time of the faulty run, of the healing resume, their sum, and the ratio of
the sum to the fault-free run; faults injected; units failed after the first pass.

The client settings are the suite's: ``timeout`` per request (a hang costs that), ``max_attempts``,
exponential backoff from ``backoff_s``, ``deadline_s`` per call. Run:
``python benchmarks/bench_faults.py [--questions 20] [--timeout 1.0] [--hang 10]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fault_helpers import records, run_faults, server_reply, write_fault_suite  # noqa: E402

from provbench.testing.faults import FaultServer  # noqa: E402


def timed_run(root: Path, name: str, rate: float, args: argparse.Namespace) -> dict:
    with FaultServer(server_reply, rate=rate, seed=11, hang_s=args.hang, lifetime_s=3600) as server:
        suite = write_fault_suite(
            root / name / "suite",
            server.api_base,
            n_questions=args.questions,
            timeout=args.timeout,
            attempts=args.attempts,
            deadline=args.deadline,
        )
        started = time.perf_counter()
        run = run_faults(suite, root / name / "run")
        first = time.perf_counter() - started
        failed = sum(r["status"] == "failed" for r in records(run))
        injected = dict(server.injected)
        server.rate = 0.0
        started = time.perf_counter()
        run_faults(suite, run)
        resume = time.perf_counter() - started
        healed = all(r["status"] == "ok" for r in records(run))
    return {
        "rate": rate,
        "first_s": first,
        "resume_s": resume,
        "failed_after_first": failed,
        "injected": injected,
        "units": len(records(run)),
        "healed": healed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds per request")
    parser.add_argument("--hang", type=float, default=10.0, help="how long a hung request would take")
    parser.add_argument("--attempts", type=int, default=4)
    parser.add_argument("--deadline", type=float, default=20.0, help="seconds per call, retries included")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        timed_run(root, "warm-up", 0.0, args)  # imports and first-call costs out of the figures
        base = timed_run(root, "fault-free", 0.0, args)
        print(
            f"fault-free: {base['first_s']:.2f} s for {base['units']} units "
            f"(timeout {args.timeout} s, hang {args.hang} s, attempts {args.attempts}, deadline {args.deadline} s)"
        )
        for rate in (0.2, 0.4):
            r = timed_run(root, f"faults-{rate}", rate, args)
            total = r["first_s"] + r["resume_s"]
            print(
                f"{rate:.0%} faults: first pass {r['first_s']:.2f} s ({r['failed_after_first']} unit(s) failed), "
                f"healing resume {r['resume_s']:.2f} s, total {total:.2f} s = "
                f"{total / base['first_s']:.1f}x fault-free; healed: {r['healed']}; "
                f"injected {json.dumps(r['injected'])}"
            )


if __name__ == "__main__":
    main()
