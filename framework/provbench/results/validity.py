"""``validity.json``: the verdicts of a suite's claims, as ``provbench validate`` wrote them.

It lies in the suite's run directory (and in each control run's), where the report finds it and
shows a "Suite validity" section (:mod:`provbench.report.validity`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from ..model import utc_now
from .claims import Verdict

VALIDITY_FILE = "validity.json"


class Validity(BaseModel):
    """Every verdict of one ``provbench validate``, with where the control runs are."""

    suite_name: str
    suite_sha256: str = Field(description="sha256 of the suite file the controls ran from")
    created_at: str = Field(default_factory=utc_now)
    runs: dict[str, str] = Field(default_factory=dict, description="control LLM -> its run directory")
    verdicts: list[Verdict] = Field(default_factory=list)
    failed_units: int = 0

    @property
    def failures(self) -> list[Verdict]:
        """Verdicts that fail the suite (expected failures excluded)."""
        return [v for v in self.verdicts if v.counts_as_failure]


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
