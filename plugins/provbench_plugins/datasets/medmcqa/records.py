"""The three shapes MedMCQA questions come in, validated with pydantic, and their reading.

- raw jsonl as released (``cop`` 1-based: 1 = opa);
- the hub form ``openlifescienceai/medmcqa`` (``cop`` 0-based, -1 on unlabelled test rows);
- MIRAGE ``benchmark.json``: ``{"medmcqa": {id: {question, options{A..D}, answer}}, "mmlu": ...}``.

A record may carry ``gold`` (provbench.gold.GoldEvidence's form), as the generated medical-mini
questions do (their gold path); real MedMCQA and MIRAGE records have none.

Every record becomes a :class:`MCQ`; a bad one raises a UserError naming file, record and field.
Files are read line by line (jsonl) so thousands of records load in well under a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from provbench.errors import UserError
from provbench.gold import GoldEvidence
from provbench.jsonlines import located as line_of, read_json_lines

from ..hub import load_split

LETTERS = ("A", "B", "C", "D")


class MCQ(BaseModel):
    """One four-option question in the loader's common form (``answer`` is a letter, or None
    for an unlabelled test row)."""

    id: str
    question: str
    options: tuple[str, str, str, str]
    answer: Literal["A", "B", "C", "D"] | None
    subject: str = ""
    topic: str = ""
    choice_type: str = ""  # MedMCQA's "single"/"multi"; MIRAGE's form does not say
    explanation: str = ""
    gold: GoldEvidence | None = None


class RawRecord(BaseModel):
    """A MedMCQA record as released: ``cop`` 1..4 (hub form: 0..3, or -1 when unlabelled)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    opa: str
    opb: str
    opc: str
    opd: str
    cop: int
    exp: str | None = None
    subject_name: str | None = None
    topic_name: str | None = None
    choice_type: Literal["single", "multi"] = "single"
    gold: GoldEvidence | None = None

    @field_validator("opa", "opb", "opc", "opd", mode="before")
    @classmethod
    def _option_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    def to_mcq(self, zero_based: bool) -> MCQ:
        index = self.cop if zero_based else self.cop - 1
        return MCQ(
            id=self.id,
            question=self.question,
            options=(self.opa, self.opb, self.opc, self.opd),
            answer=None if index < 0 else LETTERS[index],
            subject=self.subject_name or "",
            topic=self.topic_name or "",
            choice_type=self.choice_type,
            explanation=self.exp or "",
            gold=self.gold,
        )


def _check_cop(record: RawRecord, zero_based: bool) -> None:
    allowed = range(-1, 4) if zero_based else range(1, 5)
    if record.cop not in allowed:
        form = "0..3 (or -1 unlabelled) in the hub form" if zero_based else "1..4 (1 = opa) in raw MedMCQA"
        raise ValueError(f"cop={record.cop} is out of range: {form}")


class MirageRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    options: dict[Literal["A", "B", "C", "D"], str]
    answer: Literal["A", "B", "C", "D"]
    gold: GoldEvidence | None = None

    @field_validator("options")
    @classmethod
    def _four_options(cls, options: dict[str, str]) -> dict[str, str]:
        missing = [k for k in LETTERS if k not in options]
        if missing:
            raise ValueError(f"options lack {missing}")
        return options


def located(where: str, record_id: str, exc: ValidationError | ValueError) -> UserError:
    """A UserError naming file, record and the first bad field."""
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "(record)"
        return UserError(f"{where}: record {record_id}: field {field}: {error['msg']}")
    return UserError(f"{where}: record {record_id}: field cop: {exc}")


def validate_raw(raw: Any, where: str, index: int, zero_based: bool) -> MCQ:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: record #{index} is {type(raw).__name__}, not an object")
    record_id = repr(raw["id"]) if isinstance(raw.get("id"), str) and raw["id"] else f"#{index}"
    try:
        record = RawRecord.model_validate(raw)
        _check_cop(record, zero_based)
    except (ValidationError, ValueError) as exc:
        raise located(where, record_id, exc) from None
    return record.to_mcq(zero_based)


# -- sources ---------------------------------------------------------------------------------------


def read_jsonl(path: Path, problems: list[str] | None = None) -> Iterator[MCQ]:
    """Records of a raw jsonl file; with a ``problems`` list, bad records are noted there and
    skipped instead of raising (how ``provbench data info`` lists several)."""
    for number, raw in read_json_lines(path, objects=False, problems=problems):
        try:
            yield validate_raw(raw, line_of(path, number), number, zero_based=False)
        except UserError as err:
            if problems is None:
                raise
            problems.append(str(err))


def read_mirage(path: Path, subset: str) -> Iterator[MCQ]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get(subset), dict):
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise UserError(f"{path}: expected a MIRAGE benchmark with a {subset!r} object (found: {found})")
    for record_id, raw in data[subset].items():
        try:
            record = MirageRecord.model_validate(raw)
        except ValidationError as exc:
            raise located(f"{path} [{subset}]", repr(record_id), exc) from None
        yield MCQ(
            id=str(record_id),
            question=record.question,
            options=tuple(record.options[k] for k in LETTERS),
            answer=record.answer,
            gold=record.gold,
        )


def read_hub(source: str, split: str) -> Iterator[MCQ]:
    rows = load_split(source, split)
    where = f"{source} [{split}]"
    for index, raw in enumerate(rows):
        yield validate_raw(dict(raw), where, index, zero_based=True)
