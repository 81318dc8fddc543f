"""``validity.json``: the verdicts of a suite's claims, as ``provbench validate`` wrote them.

It lies in the suite's run directory (and in each control run's), where the report finds it and
shows a "Suite validity" section (:mod:`provbench.report.validity_section`)."""

from __future__ import annotations

import json
from pathlib import Path

from typing import Literal

from pydantic import BaseModel, Field

from ..model import utc_now
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


UNCERTIFIED = "† not certified: no claim validated on this suite's controls covers this system under this condition"


def cell_name(system: str, condition: str) -> str:
    """How ``covers`` and ``suite_cells`` name a system under a condition."""
    return f"{system} x {condition}"


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
