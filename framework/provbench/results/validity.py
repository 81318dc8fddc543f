"""``validity.json``: the verdicts of a suite's claims, as ``provbench validate`` wrote them.

It lies in the suite's run directory (and in each control run's), where the report finds it and
shows a "Suite validity" section (:mod:`provbench.report.validity_section`)."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, Field

from ..model import BASELINE, RunRecord, utc_now
from .claims import Verdict

VALIDITY_FILE = "validity.json"


PowerStatus = Literal["power", "no power", "indistinct", "untested", "reference", "not run", "not measured"]


class PowerRow(BaseModel):
    """One cell of the claim x sham matrix (:mod:`provbench.controls.shams`)."""

    claim: str
    sham: str = Field(description="what stood in for what the claim is about, in words")
    status: PowerStatus = Field(
        description="power: the claim fails under the sham; no power: it still passes; "
        "indistinct: it still passes under a same-size random set that is mostly what the real "
        "intervention hid (no set of that size could differ); untested: a condition the claim "
        "names with no positive expectation; reference: one it compares a tested condition "
        "with; not run: "
        "the sham has no stand-in here; not measured: the claim itself fails"
    )
    observed: str = ""
    excused: str = Field(
        default="",
        description="why a 'no power' does not fail validate (the claim is declared "
        "open, expected to fail, or expected to have no power yet)",
    )

    @property
    def counts_as_failure(self) -> bool:
        return self.status == "no power" and not self.excused

    @property
    def shown_status(self) -> str:
        if self.status == "no power":
            return f"no power (excused: {self.excused})" if self.excused else f"NO POWER against {self.sham}"
        return self.status


class Validity(BaseModel):
    """Every verdict of one ``provbench validate``, with where the control runs are."""

    suite_name: str
    suite_sha256: str = Field(description="sha256 of the suite file the controls ran from")
    created_at: str = Field(default_factory=utc_now)
    runs: dict[str, str] = Field(default_factory=dict, description="control LLM -> its run directory")
    verdicts: list[Verdict] = Field(default_factory=list)
    power: list[PowerRow] = Field(default_factory=list, description="the claim x sham matrix")
    differences: list[str] = Field(
        default_factory=list,
        description="how the controls' configuration differs from the suite's (empty: they ran the suite's own)",
    )
    failed_units: int = 0
    covers: dict[str, list[str]] = Field(
        default_factory=dict, description="claim -> the 'system x condition' cells of the suite it reads"
    )
    suite_cells: list[str] = Field(
        default_factory=list, description="the suite's own 'system x condition' cells (systems under interventions)"
    )

    @property
    def failures(self) -> list[Verdict]:
        """Verdicts that fail the suite (expected failures excluded)."""
        return [v for v in self.verdicts if v.counts_as_failure]

    @property
    def powerless(self) -> list[PowerRow]:
        """Shams a claim still passes under, not excused: they fail the suite too."""
        return [row for row in self.power if row.counts_as_failure]

    @property
    def indistinct(self) -> list[PowerRow]:
        """Random shams a claim passes under that are mostly the real set: not failures, not shown specific either."""
        return [row for row in self.power if row.status == "indistinct"]

    @property
    def failed_claims(self) -> list[str]:
        """Claims that fail validation: a failed verdict, or no power against a sham."""
        return sorted({v.claim for v in self.failures} | {row.claim for row in self.powerless})

    @property
    def exceptions(self) -> list[str]:
        """What was excused rather than certified: power cells (``expect_no_power``), expected
        failures, open claims and expected unmeasurable verdicts, each with its reason, and the
        claims whose random sham was indistinct (their specificity untested)."""
        found = [
            f"{r.claim}: no power against {r.sham} (excused: {r.excused})"
            for r in self.power
            if r.excused and r.status == "no power"
        ]
        # indistinct is no failure (no same-size set could differ), but nor is the claim's specificity shown
        found += [f"{r.claim}: specificity untested ({r.sham} is mostly the real set)" for r in self.indistinct]
        for v in self.verdicts:
            why = (v.unmeasured and v.unmeasured_expected) or v.expected_failure or v.open
            if why and not v.passed:
                found.append(f"{v.claim} on {v.control}: {v.status} ({why})")
        return list(dict.fromkeys(found))

    @property
    def certified_claims(self) -> set[str]:
        """Claims every verdict of which passed and none of whose power cells was excused."""
        excused = {r.claim for r in self.power if r.excused and r.status == "no power"}
        return {v.claim for v in self.verdicts} - {v.claim for v in self.verdicts if not v.passed} - excused

    @property
    def certified_cells(self) -> set[str]:
        return {cell for claim in self.certified_claims for cell in self.covers.get(claim, [])}

    @property
    def uncovered(self) -> list[str]:
        """The suite's 'system x condition' cells no certified claim reads."""
        return [cell for cell in self.suite_cells if cell not in self.certified_cells]

    @property
    def foreign_systems(self) -> list[str]:
        """Systems a claim reads that the suite runs under no intervention: what such a claim
        certifies is not this suite's (a suite whose systems were replaced after init)."""
        own = {_system_of(cell) for cell in self.suite_cells}
        return sorted({_system_of(c) for cells in self.covers.values() for c in cells} - own)

    @property
    def unclaimed_systems(self) -> list[str]:
        """The suite's systems under interventions that no claim reads at all, certified or not."""
        read = {_system_of(c) for cells in self.covers.values() for c in cells}
        return list(dict.fromkeys(s for s in map(_system_of, self.suite_cells) if s not in read))

    def warnings(self) -> list[str]:
        """What validate says loudly: claims about systems this suite does not run, and suite
        systems no claim reads (their numbers cannot be certified by these controls)."""
        found = []
        if self.foreign_systems:
            found.append(f"the claims read systems this suite does not run: {', '.join(self.foreign_systems)}")
        if self.unclaimed_systems:
            found.append(f"no claim reads the suite's systems {', '.join(self.unclaimed_systems)}")
        return found

    @property
    def status(self) -> str:
        """The headline's word: failed, certified with exceptions, or certified."""
        if self.failed_claims:
            return "failed"
        return "certified with exceptions" if self.exceptions or self.uncovered or self.warnings() else "certified"


UNCERTIFIED = "† not certified: no claim validated on this suite's controls covers this system under this condition"
NOT_VALIDATED = (
    "† not certified: this run was never validated (provbench validate --out its directory), so none of its numbers is"
)

Certification = Literal["certified", "uncertified", "not validated"]


def cell_certification(validity: Validity | None, system: str, condition: str) -> Certification:
    """Whether a number of ``system`` under ``condition`` is certified on this run. A baseline is
    read by no claim, so it is uncertified in a validated run (the report leaves it unmarked)."""
    if validity is None:
        return "not validated"
    return "certified" if cell_name(system, condition) in validity.certified_cells else "uncertified"


def cell_mark(validity: Validity | None, system: str, condition: str, records: Iterable[RunRecord] = ()) -> str:
    """The note a report's cell carries when its number is not certified ('' when it needs none):
    every cell of an unvalidated run, an intervention cell no certified claim covers otherwise,
    and a baseline by :func:`baseline_uncertified` (``records``: the run's)."""
    if condition == BASELINE:
        return baseline_uncertified(records, system, validity) or (NOT_VALIDATED if validity is None else "")
    if validity is None:
        return NOT_VALIDATED
    return "" if cell_certification(validity, system, condition) == "certified" else UNCERTIFIED


# leak-guard statuses that say a system answers from outside its view (a store or answer key of its
# own): its baseline accuracy then measures that store, not the knowledge base
OUTSIDE_VIEW = ("leaked", "not-checkable")


def baseline_uncertified(records: Iterable[RunRecord], system: str, validity: Validity | None) -> str:
    """Why a system's baseline numbers carry the † mark ("" when nothing says they are not certified):
    the leak guard flagged its intervention units as reading outside their view, or, in a validated
    run, no certified claim covers any of its cells. Baselines are outside ``suite_cells``, so
    Table 2's rule alone never marks them."""
    flagged = Counter(
        r.leak_check.status
        for r in records
        if r.key.system == system and r.leak_check is not None and r.leak_check.status in OUTSIDE_VIEW
    )
    if flagged:
        counts = ", ".join(f"{n} {status}" for status, n in flagged.items())
        return (
            f"† not certified: the leak guard flagged its intervention units ({counts}): it answers from "
            "outside the knowledge-base view, so its accuracy does not measure the knowledge base"
        )
    if validity is not None and not any(c.startswith(cell_name(system, "")) for c in validity.certified_cells):
        return "† not certified: no claim validated on this suite's controls covers this system"
    return ""


def baseline_mark(run: Any, system: str) -> str:
    """:func:`cell_mark` of a run's system at baseline, with the run's own ``validity.json`` and
    records (``run``: a RunData)."""
    return cell_mark(read_validity(run.run_dir), system, BASELINE, run.records)


def certification_summary(validity: Validity | None, certify: str) -> dict[str, object]:
    """What summary.json says of the run's certification; ``certify``: the command that would."""
    if validity is None:
        return {"status": "not validated", "certified_cells": [], "uncovered": [], "certify": certify}
    return {
        "status": validity.status,
        "checked_at": validity.created_at,
        "certified_cells": sorted(validity.certified_cells),
        "uncovered": validity.uncovered,
        "failed_claims": validity.failed_claims,
        "exceptions": validity.exceptions,
    }


def certify_command(run: Any) -> str:
    """The commands that certify THIS run: validate into its own directory (which re-renders its
    report and summary.json), or run it again with --controls and the model it used. ``run``: a
    RunData (typed Any: importing it here would close an import circle)."""
    suite = shlex.quote(run.manifest.suite_path or run.manifest.suite_name)
    model = run.manifest.models.get("llm", "")
    out = f"--out {shlex.quote(str(run.run_dir))}"
    again = f"provbench run {suite}" + (f" --model {shlex.quote(model)}" if model else "")
    return f"provbench validate {suite} {out} (or {again} {out} --controls)"


UNCERTIFIED = "† not certified: no claim validated on this suite's controls covers this system under this condition"


def cell_name(system: str, condition: str) -> str:
    """How ``covers`` and ``suite_cells`` name a system under a condition."""
    return f"{system} x {condition}"


def _system_of(cell: str) -> str:
    return cell.rsplit(" x ", 1)[0]


def write_validity(validity: Validity, *directories: Path) -> None:
    text = json.dumps(validity.model_dump(mode="json"), indent=1, ensure_ascii=False)
    for directory in directories:
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / VALIDITY_FILE).write_text(text + "\n", encoding="utf-8")


def read_validity(run_dir: Path) -> Validity | None:
    path = Path(run_dir) / VALIDITY_FILE
    if not path.is_file():
        return None
    return Validity.model_validate_json(path.read_text(encoding="utf-8"))
