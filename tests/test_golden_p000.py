"""Paper 000's suite gives the same records as a stored reference run (the schema-following LLM).

The reference (tests/golden/p000-records.json) was written by this file's ``--write`` mode before
the framework-v2 restructuring; any change to what paper 000's systems, ablations or metrics
record shows up here as a diff. Regenerate it only for an intended change of behaviour:

    .venv/bin/python tests/test_golden_p000.py --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "p000-records.json"
SUITE = REPO / "suites" / "2wiki-provenance.yaml"
LIMIT = 4
VOLATILE_CALL_FIELDS = ("latency_s", "cached", "original_latency_s", "cost_usd", "cost_source")  # cost: added later
# added by the leak guard after the reference was written, and tested by its own tests
# (tests/test_capture.py, tests/test_leak_guard_suite.py): request hashes and each unit's leak check
LEAK_GUARD_FIELDS = ("request_hash",)
# added to every step by the gold-trajectory work after the reference was written, and tested by its
# own tests (tests/test_trajectory_steps.py): what a step showed and the model's raw reply
STEP_FIELDS = ("shown", "reply")
GOLD_SCORES = "gold."  # the gold-trajectory metric's per-record scores (tests/test_trajectory_scores.py)
# Similarity scores move in their 7th-8th digit with the BLAS threading of the machine that embeds
# (seen: 0.13610854 vs 0.13610858), which can flip a score a tool rounds to 4 decimals: floats are
# compared within this tolerance; a ranking or answer change still shows as a changed id or text.
FLOAT_TOLERANCE = 2e-4


def same(expected: Any, actual: Any) -> bool:
    """Equal, floats within FLOAT_TOLERANCE (dicts and lists walked)."""
    if isinstance(expected, float) and isinstance(actual, float):
        return abs(expected - actual) <= FLOAT_TOLERANCE
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(same, expected, actual))
    return expected == actual


def projected_records(out: Path) -> dict[str, Any]:
    """The suite's records with timing dropped, keyed by unit."""
    from provbench.runner import run_suite
    from provbench.run_store import RunStore
    from provbench.testing import schema_following_llm

    run_dir = run_suite(
        SUITE, limit=LIMIT, out=out, llm=schema_following_llm(cache_dir=out / "llm"), write_report=False
    )
    projected = {}
    for record in RunStore(run_dir).load_records().values():
        # exclude_defaults: fields added later with a default do not count as a change
        # judge_calls: the metrics' LLM accounting, added after the reference was written (the scores stay pinned)
        # requests, hidden: what each unit's model read and its view hid, kept for `provbench audit`
        # (added after the reference was written; tests/test_leak_guard_suite.py tests them)
        data = record.model_dump(
            mode="json",
            exclude={"started_at", "finished_at", "leak_check", "judge_calls", "requests", "hidden"},
            exclude_defaults=True,
        )
        if "scores" in data:
            data["scores"] = {k: v for k, v in data["scores"].items() if not k.startswith(GOLD_SCORES)}
        trace = data.get("trace") or {}
        trace.pop("wall_time_s", None)
        for call in trace.get("llm_calls", []):
            for name in VOLATILE_CALL_FIELDS + LEAK_GUARD_FIELDS:
                call.pop(name, None)
        for step in trace.get("steps", []):
            for name in STEP_FIELDS:
                step.pop(name, None)
        projected[record.key.as_str()] = data
    return dict(sorted(projected.items()))


def test_paper000_records_unchanged(tmp_path):
    expected = json.loads(GOLDEN.read_text())
    systems = {key.split("|")[0] for key in expected}
    # the suite also runs other papers' systems (paper 002's planning loop): they are not pinned here
    actual = {
        key: record
        for key, record in json.loads(json.dumps(projected_records(tmp_path / "run"))).items()
        if key.split("|")[0] in systems
    }
    assert sorted(actual) == sorted(expected)
    changed = [key for key in expected if not same(expected[key], actual[key])]
    assert not changed, (
        f"{len(changed)} record(s) differ, first: {changed[0]}\n"
        f"expected {expected[changed[0]]}\nactual   {actual[changed[0]]}"
    )


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        records = {k: v for k, v in projected_records(Path(tmp) / "run").items() if not k.startswith("planning-loop|")}
    lines = (f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in records.items())
    GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one record a line: diffs stay readable
    print(f"wrote {len(records)} records to {GOLDEN}")
