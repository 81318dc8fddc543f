"""Every number that leaves provbench says whether it is certified on this run (a new user's trial,
task nucert item 1): summary.json's headline and covered cells, export's column per row, the
compare page per run and cell, and the report's "All metric values" table of a run never
validated; the "Not validated" hint names the command that certifies this very run (item 2)."""

from __future__ import annotations

import json
import shutil
from html import unescape
from pathlib import Path

import pytest

from provbench.export import export_run
from provbench.gates import SUMMARY_FILE, write_ci_files
from provbench.report.compare import write_comparison
from provbench.report.data import load_run
from provbench.report.render import metric_listing
from provbench.results.claims import Verdict
from provbench.results.validity import NOT_VALIDATED, UNCERTIFIED, Validity, write_validity
from runner_helpers import run_toy, write_toy_suite

COVERED = "toy-graph x toy-hide-cited"


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("certified")
    return run_toy(write_toy_suite(folder / "suite", kb=False), folder / "run", write_report=False)


def copy_of(run_dir: Path, target: Path, validated: bool) -> Path:
    """The toy run in ``target``, with a claim certified on it that covers only COVERED."""
    shutil.copytree(run_dir, target)
    if validated:
        verdict = Verdict(claim="c", control="oracle", expected="e", observed="o", passed=True)
        cells = [COVERED, "toy-plain x toy-hide-cited", "toy-graph x toy-hide-random"]
        write_validity(
            Validity(suite_name="toy", suite_sha256="", verdicts=[verdict], covers={"c": [COVERED]}, suite_cells=cells),
            target,
        )
    return target


def test_summary_json_heads_with_the_certification_and_how_to_get_it(toy_run, tmp_path):
    plain = copy_of(toy_run, tmp_path / "plain", validated=False)
    unvalidated = write_ci_files(plain)["certification"]
    assert unvalidated["status"] == "not validated" and unvalidated["certified_cells"] == []
    assert f"--out {plain}" in unvalidated["certify"] and "--model scripted" in unvalidated["certify"]
    checked = copy_of(toy_run, tmp_path / "checked", validated=True)
    write_ci_files(checked)
    certification = json.loads((checked / SUMMARY_FILE).read_text(encoding="utf-8"))["certification"]
    assert certification["status"] == "certified with exceptions"
    assert certification["certified_cells"] == [COVERED]
    assert certification["uncovered"] == ["toy-plain x toy-hide-cited", "toy-graph x toy-hide-random"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_gives_each_row_its_certification(toy_run, tmp_path, fmt):
    def certification(run_dir: Path) -> dict[tuple[str, str], set[str]]:
        target = export_run(run_dir, fmt, tmp_path / f"{run_dir.name}.{fmt}")
        rows = load_rows(target, fmt)
        found: dict[tuple[str, str], set[str]] = {}
        for row in rows:
            found.setdefault((row["system"], row["condition"]), set()).add(row["certification"])
        return found

    assert set.union(*certification(copy_of(toy_run, tmp_path / "plain", False)).values()) == {"not validated"}
    checked = certification(copy_of(toy_run, tmp_path / "checked", True))
    assert checked.pop(("toy-graph", "toy-hide-cited")) == {"certified"}
    assert set.union(*checked.values()) == {"uncertified"}  # the baseline too: no claim reads it


def load_rows(target: Path, fmt: str) -> list[dict]:
    import csv

    import pyarrow.parquet as pq

    if fmt == "parquet":
        return pq.read_table(target).to_pylist()
    with target.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh)) if fmt == "csv" else [json.loads(line) for line in fh]


def test_all_metric_values_of_a_run_never_validated_are_marked(toy_run, tmp_path):
    values = metric_listing(load_run(copy_of(toy_run, tmp_path / "plain", False)))["all"]
    assert values and all(v["shown"].endswith("†") and NOT_VALIDATED in v["note"] for v in values)
    checked = metric_listing(load_run(copy_of(toy_run, tmp_path / "checked", True)))["all"]
    marked = {(v["system"], v.get("condition") or "baseline") for v in checked if v["shown"].endswith("†")}
    assert ("toy-graph", "toy-hide-cited") not in marked and ("toy-plain", "toy-hide-cited") in marked
    # a baseline is marked when no certified claim covers any of its system's cells (results.validity.baseline_uncertified)
    assert ("toy-plain", "baseline") in marked and ("toy-graph", "baseline") not in marked


def test_compare_says_per_run_whether_it_was_validated_and_marks_its_cells(toy_run, tmp_path):
    checked = copy_of(toy_run, tmp_path / "checked", True)
    plain = copy_of(toy_run, tmp_path / "plain", False)
    html = unescape(write_comparison([checked, plain], tmp_path / "compare.html").read_text(encoding="utf-8"))
    assert "A validity</b>Certified with exceptions" in html
    assert "B validity</b>Not validated: its numbers are not certified (run provbench validate" in html
    assert f"--out {plain}" in html and NOT_VALIDATED in html and UNCERTIFIED in html
    conditions = html.split('class="compare-conditions"')[1]
    row = next(r for r in conditions.split("<tr>") if "toy-hide-cited</td><td>toy-graph" in r)
    cells = row.split('<td class="num">')[1:]
    assert "†" not in cells[0] and "†" in cells[1]  # output changed: A certified, B never validated
    accuracy = html.split('class="compare-accuracy"')[1].split("</table>")[0]
    assert accuracy.count(NOT_VALIDATED) == 2 and UNCERTIFIED not in accuracy  # each baseline of B only
