"""CI gates: a finished run's assertions (:mod:`provbench.assertions`) checked, and the two files a
CI system reads, written into the run directory:

* ``summary.json``: one file with the run's outcome: units (ok, failed, and which failed, why),
  baseline accuracy per system, the leak guard's counts, every assertion with its value and
  verdict, the exit status ``provbench run`` gives (0 ok, 3 units failed, 5 an assertion failed)
  and its certification (``provbench validate``: certified, certified with exceptions, failed or
  not validated, with the system x condition cells a certified claim covers);
* ``junit.xml``: a JUnit XML report (the format GitHub Actions, GitLab, Jenkins and Azure read):
  one test case per assertion, and one per failed unit.

An assertion's value is the run's metric value of that name (``metrics.json``) for the system and
condition; when the run has none, the mean of the records' score of that name over the questions
(all questions at baseline, the analysed ones under an intervention; ``accuracy`` is the graded
correctness, a failed unit scoring 0). No value at all fails the assertion: a gate must not pass
on a metric the run never computed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .assertions import BASELINE, AssertionSpec
from .costs import CostTotal, record_calls
from .model import RunRecord
from .results.data import RunData, load_run
from .results.stats import per_question, share
from .results.validity import certification_summary, certify_command, read_validity
from .run_store import leak_status

SUMMARY_FILE = "summary.json"
JUNIT_FILE = "junit.xml"
SUMMARY_FORMAT_VERSION = 1
EXIT_OK, EXIT_UNITS_FAILED, EXIT_ASSERTION_FAILED = 0, 3, 5
EXIT_BUDGET = 6  # the suite's budget stopped the run (provbench run's status, cli.EXIT_BUDGET)


@dataclass
class AssertionResult:
    name: str
    metric: str
    system: str | None
    condition: str
    min: float | None
    max: float | None
    value: float | None
    source: str  # "metrics.json", "records" or "" (no value)
    passed: bool
    message: str


def check_run(run: RunData) -> list[AssertionResult]:
    """Every assertion of the run's suite, evaluated on its records and metric values."""
    specs = [AssertionSpec.model_validate(a) for a in run.suite.get("assertions") or []]
    return [result for spec in specs for result in _check(run, spec)]


def _check(run: RunData, spec: AssertionSpec) -> list[AssertionResult]:
    systems = [spec.system] if spec.system else [s for s in run.systems if _value(run, spec, s)[0] is not None]
    if not systems:
        return [_verdict(spec, None, None, "", spec.condition or BASELINE)]
    return [_verdict(spec, system, *_value(run, spec, system)) for system in systems]


def _value(run: RunData, spec: AssertionSpec, system: str) -> tuple[float | None, str, str]:
    """(value, where it came from, the condition it is for). Without a condition: the metric's one
    value for the system, or its baseline value when it has several."""
    found = {
        v.get("condition"): v["value"]
        for v in run.metric_values(spec.metric)
        if v.get("system") == system and v.get("value") is not None
    }
    condition = spec.condition or (next(iter(found)) if len(found) == 1 else BASELINE)
    if condition in found:
        return float(found[condition]), "metrics.json", condition
    records = run.select(system, condition)
    if spec.metric != "accuracy" and not any(r.scores.get(spec.metric) is not None for r in records):
        return None, "", condition
    questions = run.question_ids if condition == BASELINE else run.analysed
    return share(per_question(records, spec.metric), questions).value, "records", condition


def _verdict(
    spec: AssertionSpec, system: str | None, value: float | None, source: str, condition: str
) -> AssertionResult:
    label = spec.label(system, condition)
    if value is None:
        passed = False
        message = (
            f"no value of {spec.metric!r} for {system or 'any system'} under {condition!r} in this run "
            "(is the metric listed under metrics:, and did its units run?)"
        )
    else:
        passed = (spec.min is None or value >= spec.min) and (spec.max is None or value <= spec.max)
        message = f"{value:.4g} {'within' if passed else 'outside'} [{_bound(spec.min)}, {_bound(spec.max)}]"
    return AssertionResult(label, spec.metric, system, condition, spec.min, spec.max, value, source, passed, message)


def _bound(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


# -- the files ---------------------------------------------------------------------------------------


def summary(run: RunData, results: list[AssertionResult]) -> dict[str, Any]:
    """The one-file summary of a run for CI (what ``summary.json`` holds)."""
    failed = [r for r in run.records if r.status == "failed"]
    leaks = Counter(s for s in map(leak_status, run.records) if s)
    assertions_failed = sum(not r.passed for r in results)
    m = run.manifest
    status = _exit_status(m.stopped, assertions_failed, failed)
    accuracy = {s: share(per_question(run.select(s)), run.question_ids).value for s in run.systems}
    cost = CostTotal.of(c for r in run.records for c in record_calls(r))
    return {
        "format_version": SUMMARY_FORMAT_VERSION,
        "suite": m.suite_name,
        "run_id": m.run_id,
        "run_dir": str(run.run_dir),
        "model": m.models.get("llm", ""),
        "started_at": m.created_at,
        "finished_at": m.finished_at,
        "passed": status == EXIT_OK,
        "exit_status": status,
        "units": {"total": len(run.records), "ok": len(run.records) - len(failed), "failed": len(failed)},
        "failed_units": [_failed_unit(r) for r in failed],
        "stopped": m.stopped,
        "baseline_accuracy": accuracy,
        "leak_guard": dict(sorted(leaks.items())),
        "cost": _cost(cost),
        "assertions": [asdict(r) for r in results],
        "assertions_failed": assertions_failed,
        "report": str(run.run_dir / "report.html"),
        "certification": certification_summary(read_validity(run.run_dir), certify_command(run)),
    }


def _exit_status(stopped: Any, assertions_failed: int, failed: list[RunRecord]) -> int:
    """``provbench run``'s exit status, in its order: budget, then assertions, then failed units."""
    if stopped:
        return EXIT_BUDGET
    if assertions_failed:
        return EXIT_ASSERTION_FAILED
    return EXIT_UNITS_FAILED if failed else EXIT_OK


def _failed_unit(record: RunRecord) -> dict[str, Any]:
    key = record.key
    return {
        "unit": key.as_str(),
        "question_id": key.question_id,
        "system": key.system,
        "condition": key.condition,
        "repeat": key.repeat,
        "variant": key.variant,
        "error": record.error or "",
    }


def _cost(cost: CostTotal) -> dict[str, Any]:
    return {
        "usd": round(cost.usd, 8),
        "calls": cost.calls,
        "unpriced_calls": cost.unknown,
        "local_calls": cost.local,
        "text": cost.describe(),
    }


def junit_xml(run: RunData, results: list[AssertionResult]) -> ET.ElementTree:
    """Assertions and failed units as JUnit XML test cases (failures and errors)."""
    failed = [r for r in run.records if r.status == "failed"]
    root = ET.Element("testsuites", name=f"provbench {run.manifest.suite_name}")
    checks = _suite(root, "assertions", len(results), failures=sum(not r.passed for r in results))
    for result in results:
        case = ET.SubElement(
            checks, "testcase", classname=f"provbench.{run.manifest.suite_name}.assertions", name=result.name
        )
        if not result.passed:
            ET.SubElement(case, "failure", message=result.message, type="AssertionFailed").text = result.message
        else:
            ET.SubElement(case, "system-out").text = result.message
    units = _suite(root, "units", max(1, len(failed)), errors=len(failed))
    for record in failed:
        case = ET.SubElement(
            units,
            "testcase",
            classname=f"provbench.{run.manifest.suite_name}.units.{record.key.system}",
            name=record.key.as_str(),
        )
        ET.SubElement(case, "error", message=(record.error or "failed")[:500], type="UnitFailed").text = record.error
    if not failed:
        ET.SubElement(
            units,
            "testcase",
            classname=f"provbench.{run.manifest.suite_name}.units",
            name=f"all {len(run.records)} units ran",
        )
    root.set("tests", str(len(results) + max(1, len(failed))))
    root.set("failures", checks.get("failures"))
    root.set("errors", str(len(failed)))
    ET.indent(root)
    return ET.ElementTree(root)


def _suite(root: ET.Element, name: str, tests: int, failures: int = 0, errors: int = 0) -> ET.Element:
    return ET.SubElement(
        root, "testsuite", name=name, tests=str(tests), failures=str(failures), errors=str(errors), skipped="0"
    )


def write_ci_files(run_dir: str | Path) -> dict[str, Any]:
    """Check the run's assertions and write ``summary.json`` and ``junit.xml``; returns the summary."""
    run = load_run(run_dir)
    results = check_run(run)
    data = summary(run, results)
    (run.run_dir / SUMMARY_FILE).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    junit_xml(run, results).write(run.run_dir / JUNIT_FILE, encoding="utf-8", xml_declaration=True)
    return data
