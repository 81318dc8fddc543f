"""The "mmlu" loader: MMLU as released, all 57 subjects (paper 001 evaluates on MMLU; MIRAGE's
``mmlu-medical`` keeps only its six medical subjects).

Sources, each read lazily row by row:

- a ``.jsonl`` file in the hub's ``cais/mmlu`` layout: ``question``, ``subject``, ``choices`` (four
  texts) and ``answer`` (index 0-3; a letter A-D is accepted too);
- a ``.csv`` file of the original release (no header: question, four options, answer letter;
  the subject is the file name without its ``_test``/``_dev``/``_val`` suffix) or a folder of them
  (e.g. ``data/test/``, every subject);
- a hub id such as ``cais/mmlu`` (options ``config``, default "all", and ``split``, default
  "test"), through ``datasets``.

Questions have the MedMCQA loader's form (``answer`` a letter, ``choices`` the option texts,
``category`` and ``metadata.subject`` the subject, ``dataset`` "mmlu") and its scoring.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from provbench.errors import UserError
from provbench.jsonlines import located as line_of, read_json_lines
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from ..hub import load_split
from .loader import MedMCQALoader, sample_by_subject, to_question
from .records import LETTERS, MCQ, located

HUB_ID = "cais/mmlu"
SPLIT_SUFFIXES = ("_test", "_dev", "_val", "_validation")


class MMLURecord(BaseModel):
    """One row in the hub's layout."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    subject: str = ""
    choices: list[str] = Field(min_length=4, max_length=4)
    answer: int = Field(ge=0, le=3)

    @field_validator("answer", mode="before")
    @classmethod
    def _letter(cls, value: Any) -> Any:
        letter = value.strip().upper() if isinstance(value, str) else None
        return LETTERS.index(letter) if letter in LETTERS else value

    def to_mcq(self, record_id: str) -> MCQ:
        return MCQ(
            id=record_id,
            question=self.question,
            options=tuple(self.choices),
            answer=LETTERS[self.answer],
            subject=self.subject,
        )


def validated(raw: Any, where: str, record_id: str) -> MCQ:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: record {record_id} is {type(raw).__name__}, not an object")
    try:
        return MMLURecord.model_validate(raw).to_mcq(record_id)
    except ValidationError as exc:
        raise located(where, record_id, exc) from None


def read_jsonl(path: Path) -> Iterator[MCQ]:
    for number, raw in read_json_lines(path, objects=False):
        yield validated(raw, line_of(path, number), f"{path.stem}-{number}")


def subject_of(path: Path) -> str:
    stem = path.stem
    for suffix in SPLIT_SUFFIXES:
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def read_csv(path: Path) -> Iterator[MCQ]:
    """The original release: question, A, B, C, D, answer letter; no header."""
    subject = subject_of(path)
    with path.open(encoding="utf-8", newline="") as f:
        for number, row in enumerate(csv.reader(f), 1):
            if not row:
                continue
            if len(row) != 6:
                raise UserError(f"{path}:{number}: expected 6 columns (question, A, B, C, D, answer), found {len(row)}")
            raw = {"question": row[0], "choices": row[1:5], "answer": row[5], "subject": subject}
            yield validated(raw, f"{path}:{number}", f"{subject}-{number}")


def read_hub(source: str, config: str, split: str) -> Iterator[MCQ]:
    where = f"{source} [{config}/{split}]"
    for index, raw in enumerate(load_split(source, split, config)):
        yield validated(dict(raw), where, f"{split}-{index}")


def read_mmlu(source: str | Path, *, config: str, split: str) -> Iterable[MCQ]:
    path = Path(source)
    if path.is_dir():
        files = sorted(path.rglob("*.csv"))
        if not files:
            raise UserError(f"{path}: no MMLU .csv files (the original release's data/<split>/ folder)")
        return (mcq for f in files for mcq in read_csv(f))
    if path.is_file():
        kind = path.suffix.lower()
        if kind in (".jsonl", ".csv"):
            return read_jsonl(path) if kind == ".jsonl" else read_csv(path)
        raise UserError(f"{path}: unknown MMLU file type {path.suffix!r} (use .jsonl in the hub layout, or .csv)")
    if len(str(source).split("/")) == 2 and not str(source).endswith((".jsonl", ".csv")):
        return read_hub(str(source), config, split)
    raise UserError(
        f"MMLU dataset not found: {source} (a .jsonl/.csv file, a folder of .csv, or a hub id like {HUB_ID})"
    )


class MMLUOptions(BaseModel):
    """A suite's ``dataset.options`` for the mmlu loader."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    config: str = Field("all", description="hub configuration: 'all' or one subject")
    split: str = Field("test", description="hub split")


class MMLULoader(MedMCQALoader):
    """MMLU, all subjects (hub layout jsonl, original csv, hub id), scored like MedMCQA."""

    name = "mmlu"
    Options = MMLUOptions
    default_subset = "mmlu"
    facets = ("subject", "dataset")
    provides_gold = False  # MMLU as released carries no gold evidence

    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        opts = self.load_options(options)
        questions = [to_question(mcq, "mmlu") for mcq in read_mmlu(source, config=opts.config, split=opts.split)]
        if sample:
            return sample_by_subject(questions, limit, seed)
        return questions[:limit] if limit is not None else questions

    def claims(self, source: str | Path) -> bool:
        """A jsonl whose first record has the hub layout's fields."""
        path = Path(source)
        if not (path.is_file() and path.suffix.lower() == ".jsonl"):
            return False
        try:
            with path.open(encoding="utf-8") as lines:
                first = json.loads(next((line for line in lines if line.strip()), "{}"))
        except (OSError, ValueError):
            return False
        return isinstance(first, dict) and {"question", "choices", "answer"} <= set(first)

    def problems(self, source: str | Path, limit: int = 10, **options: Any) -> list[str]:
        """The first problem :meth:`load` meets (the MedMCQA loader's jsonl check does not apply)."""
        return DatasetLoader.problems(self, source, limit, **options)
