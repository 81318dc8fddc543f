"""Fault injection (issue 15): a small suite through litellm against a loopback OpenAI-compatible
server that injects 429, 500, hangs, invalid JSON and connection resets; kill -9 at a random
point mid-run and mid-KB-build; two processes on one run directory.

No timing is asserted here: benchmarks/bench_faults.py measures the cost of faults."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fault_helpers import essence, nan_metrics, records, run_faults, server_reply, write_fault_suite

from provbench.testing.faults import FAULTS, FaultServer

HERE = Path(__file__).resolve().parent
N_QUESTIONS = 5
UNITS = 2 * N_QUESTIONS + 2 * N_QUESTIONS * 2  # two systems' baselines + toy-hide-random x 2 repeats


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The same suite on a fault-free server: what every faulty run must end up equal to."""
    folder = tmp_path_factory.mktemp("fault-free")
    with FaultServer(server_reply, rate=0.0, lifetime_s=300) as server:
        run = run_faults(write_fault_suite(folder / "suite", server.api_base, n_questions=N_QUESTIONS), folder / "run")
    result = essence(run)
    assert len(result) == UNITS and {status for status, _ in result.values()} == {"ok"}
    return result


def unit_keys(run: Path) -> list[str]:
    return [
        f"{r['key']['system']}|{r['key']['condition']}|{r['key']['repeat']}|{r['key']['question_id']}"
        for r in records(run)
    ]


@pytest.mark.parametrize("rate", [0.2, 0.4])
def test_a_suite_under_faults_finishes_and_heals_on_resume(tmp_path, reference, rate):
    with FaultServer(
        server_reply, rate=rate, seed=int(rate * 100), hang_s=2.0, max_requests=2000, lifetime_s=300
    ) as server:
        suite = write_fault_suite(tmp_path / "suite", server.api_base, n_questions=N_QUESTIONS)
        run = run_faults(suite, tmp_path / "run")  # finishes: no exception escapes
        assert set(server.injected) == set(FAULTS) and sum(server.injected.values()) > 0
        keys = unit_keys(run)
        assert len(keys) == len(set(keys)) == UNITS  # every unit exactly one record
        assert nan_metrics(run) == []

        server.rate = 0.0  # the outage is over: a resume heals what the retries did not
        run_faults(suite, run)
        keys = unit_keys(run)
        assert len(keys) == len(set(keys)) == UNITS
        assert essence(run) == reference
        assert nan_metrics(run) == []


def test_each_kind_of_fault_is_survived(tmp_path, reference):
    """Every fault on every first request: the retries alone must carry the run."""
    for fault in FAULTS:
        with FaultServer(server_reply, rate=0.5, faults=(fault,), seed=7, hang_s=2.0, lifetime_s=300) as server:
            suite = write_fault_suite(tmp_path / fault / "suite", server.api_base, n_questions=N_QUESTIONS, attempts=4)
            run = run_faults(suite, tmp_path / fault / "run")
            assert server.injected[fault] > 0
            assert len(set(unit_keys(run))) == UNITS
            server.rate = 0.0
            run_faults(suite, run)
            assert essence(run) == reference, fault


# -- kill -9 -------------------------------------------------------------------------------------------


def _child(args: list[str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(HERE / "fault_helpers.py"), *args],
        cwd=HERE.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_kill_9_at_a_random_point_mid_run_resumes_to_the_uninterrupted_records(tmp_path, reference):
    rng = random.Random(os.environ.get("PROVBENCH_KILL_SEED"))
    with FaultServer(server_reply, rate=0.0, hang_s=0.3, lifetime_s=300) as server:
        # every request slowed a little so a kill lands mid-run; the point is drawn at random
        server.rate, server.faults = 1.0, ("hang",)
        suite = write_fault_suite(
            tmp_path / "suite", server.api_base, n_questions=N_QUESTIONS, timeout=5, concurrency=2
        )
        out = tmp_path / "run"
        stop_after = rng.randint(1, 8)  # of 10 baselines (interventions then hit the cache)
        child = _child(["run", str(suite), str(out)])
        records_file = out / "records.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if records_file.exists() and records_file.read_bytes().count(b"\n") >= stop_after:
                break
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.1))  # not always between two records
        assert child.poll() is None, f"the run ended before it could be killed: {child.stderr.read()[-2000:]}"
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert records_file.read_bytes().count(b"\n") < UNITS, "the kill must land mid-run"

        server.rate = 0.0
        run_faults(suite, out)
    keys = unit_keys(out)
    assert len(keys) == len(set(keys)) == UNITS
    assert essence(out) == reference


def test_kill_9_at_a_random_point_mid_kb_build_rebuilds_to_the_same_kb(tmp_path):
    from kb_2wiki_helpers import scripted_kb_llm, tiny_questions

    from provbench.kb import KnowledgeBase
    from provbench_plugins.kb_builders.twowiki import builder as K

    llm, _ = scripted_kb_llm()
    reference = K.TwoWikiKBBuilder().build(tiny_questions(), tmp_path / "reference", llm)
    try:
        expected = (reference.stats(), reference.build_info["inputs"]["fingerprint"])
    finally:
        reference.close()

    kb_dir = tmp_path / "kb"
    child = _child(["kb", str(kb_dir), "0.05"])  # 50 ms per LLM call: the build takes seconds
    assert child.stdout.readline().strip() == "building", child.stderr.read()[-2000:]
    time.sleep(random.Random(os.environ.get("PROVBENCH_KILL_SEED")).uniform(0.1, 1.5))
    assert child.poll() is None, f"the build ended before it could be killed: {child.stderr.read()[-2000:]}"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert not KnowledgeBase.is_complete(kb_dir)

    llm, _ = scripted_kb_llm()
    rebuilt = K.TwoWikiKBBuilder().build(tiny_questions(), kb_dir, llm)
    try:
        assert (rebuilt.stats(), rebuilt.build_info["inputs"]["fingerprint"]) == expected
    finally:
        rebuilt.close()


# -- two processes on one run directory ----------------------------------------------------------------


def test_two_processes_on_one_run_directory_never_duplicate_records(tmp_path, reference):
    with FaultServer(server_reply, rate=1.0, faults=("hang",), hang_s=0.2, lifetime_s=300) as server:
        suite = write_fault_suite(tmp_path / "suite", server.api_base, n_questions=N_QUESTIONS, timeout=5)
        out = tmp_path / "run"
        first = _child(["run", str(suite), str(out)])
        deadline = time.monotonic() + 60
        while not (out / ".lock.holder").exists() and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.02)
        second = _child(["run", str(suite), str(out)])
        second_err = second.communicate(timeout=120)[1]
        assert second.returncode == 2, second_err[-2000:]
        assert f"is in use by pid {first.pid}" in second_err
        first.communicate(timeout=120)
        assert first.returncode == 0
    keys = unit_keys(out)
    assert len(keys) == len(set(keys)) == UNITS
    assert essence(out) == reference


# -- rate limits: Retry-After ------------------------------------------------------------------------


def test_a_429_with_retry_after_is_retried_no_sooner_than_the_server_asked(tmp_path):
    """The client's own backoff (0.05 s) is far shorter than the server's Retry-After (1.5 s):
    the retry waits for the server, and the suite still finishes with every unit ok."""
    with FaultServer(server_reply, first_faults=("429",), retry_after="1.5", lifetime_s=120) as server:
        suite = write_fault_suite(tmp_path / "suite", server.api_base, n_questions=1, concurrency=1)
        run = run_faults(suite, tmp_path / "run")
        assert server.injected["429"] == 1
        assert server.arrivals[1] - server.arrivals[0] >= 1.5
    assert {r["status"] for r in records(run)} == {"ok"}
    attempts = [c["attempts"] for r in records(run) for c in r["trace"]["llm_calls"]]
    assert sorted(attempts)[-1] == 2  # the rate-limited call succeeded on its second attempt


def test_a_retry_after_beyond_the_deadline_fails_the_call_at_once(tmp_path):
    """Waiting 30 s would pass the call's 5 s deadline: no retry, a failed unit, and no 30 s wait."""
    with FaultServer(server_reply, first_faults=("429",), retry_after="30", lifetime_s=120) as server:
        suite = write_fault_suite(tmp_path / "suite", server.api_base, n_questions=1, concurrency=1)
        started = time.monotonic()
        run = run_faults(suite, tmp_path / "run")
        assert time.monotonic() - started < 20
    failed = [r for r in records(run) if r["status"] == "failed"]
    assert failed and "RateLimitError" in failed[0]["error"]
