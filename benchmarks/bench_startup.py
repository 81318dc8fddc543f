"""Benchmark: `provbench run` as a user runs it (a process), against the same run inside one process.

The quickstart suite with ``--model openai/bench --limit 12`` against a loopback OpenAI-compatible
server (``provbench.testing.server`` in a child process: 127.0.0.1, a fixed latency per request,
stops by itself when idle), its knowledge base built once beforehand (``provbench kb build``
through the same server), then, for concurrency 1 and 16 (the suite's ``concurrency``), each in a
fresh run directory (no LLM cache):

* process level: the wall time of the ``provbench run`` process, from exec to exit (imports, the
  embedding model, the units, metrics, report and interpreter teardown all included);
* in process: ``run_suite`` called in this process after a warm-up run, so its imports and the
  embedding model are already loaded (what a long-lived driver pays).

It prints both speed-ups (c=1 over c=16) and the machine's load average (figures from a loaded
machine are not comparable). Run: ``python benchmarks/bench_startup.py [--latency 0.5] [--questions 12]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from provbench.testing.server import spawn

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "suites" / "quickstart.yaml"
MODEL = "openai/bench"


def suite_copy(work: Path, concurrency: int) -> Path:
    """The quickstart with another concurrency and its dataset path made absolute."""
    text = QUICKSTART.read_text().replace("../datasets/", f"{REPO}/datasets/")
    text = text.replace("concurrency: 2", f"concurrency: {concurrency}")
    path = work / f"quickstart-c{concurrency}.yaml"
    path.write_text(text)
    return path


def cli(args: list[str], work: Path, env: dict[str, str]) -> float:
    """Wall time of one ``provbench`` process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "provbench.cli", *args],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 3):
        raise SystemExit(f"provbench {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return elapsed


def in_process(suite: Path, out: Path, questions: int) -> float:
    from provbench.runner import run_suite

    started = time.perf_counter()
    run_suite(suite, model=MODEL, limit=questions, out=out)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--skip-in-process", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="provbench-bench-startup-") as tmp:
        work = Path(tmp)
        proc, api_base = spawn(args.latency)
        env = {**os.environ, "OPENAI_API_BASE": api_base, "OPENAI_API_KEY": "none"}
        os.environ.update(OPENAI_API_BASE=api_base, OPENAI_API_KEY="none")
        try:
            suites = {c: suite_copy(work, c) for c in (1, 16)}
            common = ["--model", MODEL, "--limit", str(args.questions)]
            built = cli(["kb", "build", str(suites[16]), *common], work, env)
            print(f"knowledge base built in {built:.1f} s (through the loopback server)", flush=True)
            process = {}
            for c in (1, 16):
                process[c] = cli(["run", str(suites[c]), *common, "--out", f"reports/process-c{c}"], work, env)
                print(f"process    c={c:<2} {process[c]:7.2f} s", flush=True)
            inside = {}
            if not args.skip_in_process:
                os.chdir(work)
                in_process(suites[16], work / "reports" / "warm-up", args.questions)  # imports, model
                for c in (1, 16):
                    inside[c] = in_process(suites[c], work / "reports" / f"inside-c{c}", args.questions)
                    print(f"in process c={c:<2} {inside[c]:7.2f} s", flush=True)
        finally:
            proc.terminate()
            os.chdir(REPO)
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nprocess-level speed-up c=1 / c=16: {process[1] / process[16]:.2f}x (target >= 6x)")
    if inside:
        print(f"in-process speed-up c=1 / c=16:    {inside[1] / inside[16]:.2f}x")
    print(
        f"load average before: {load_before[0]:.2f} / {load_before[1]:.2f}, after: "
        f"{os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} (1 / 5 min) on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
