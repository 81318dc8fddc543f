"""The ``qa`` loader: a user's own questions from a plain file, with no code.

Sources: ``.jsonl``, ``.json`` (an array, or ``{"data": [...]}``), ``.csv``, ``.tsv``, ``.parquet``,
or a Hugging Face dataset id (``owner/name``; options ``split``, ``config``; needs the ``hub``
extra). Which column holds what: the option ``fields`` (``{question: query, answer: reference}``)
over defaults for common column names (:data:`.fields.DEFAULT_COLUMNS`). Only ``question`` and
``answer`` (or ``choices`` with ``correct``) are required; ``id`` defaults to the row number.

Answer types (:mod:`.scoring`; option ``answer_type``, default ``auto``): a row with ``choices`` is
multiple choice (``correct`` or ``answer``: the option's letter, its 1-based number or its text);
with the option ``labels`` it is one of that label set; a gold "yes"/"no" is yes-no; anything else
is free text (an answer given as a list: the first is the answer, the rest aliases).

Gold evidence (:mod:`.gold`): supporting sentences, supporting documents (in the folder the option
``documents`` names, relative to the question file) and a gold path of entity names. ``metadata``
keeps ``answer_type``, ``labels`` and ``documents`` (the folder, absolute), which the ``documents``
KB builder reads when it is given no folder of its own.

Every problem names the file, the row and the field; ``provbench data info`` lists the first ten.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench import hookimpl
from provbench.errors import UserError
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from .fields import DEFAULT_COLUMNS, Row, check_mapping, resolve_columns
from .gold import gold_evidence, resolve_documents
from .rows import file_kind, read_rows
from .scoring import LETTERS, option_key, score_answer

LOADER_NAME = "qa"
YES_NO = {"yes", "no"}


class QAOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fields: dict[str, str] = Field(
        default_factory=dict,
        description="provbench field -> your column "
        "(id, question, answer, aliases, choices, correct, supporting_documents, "
        "supporting_sentences, gold_path, gold_triples, type, category)",
    )
    answer_type: Literal["auto", "text", "yes-no", "choice", "label"] = "auto"
    labels: list[str] | None = Field(None, description="the label set of a classification-style dataset")
    documents: str | None = Field(
        None,
        description="folder or glob of the documents that supporting_documents name (relative to the question file)",
    )
    split: str = Field("train", description="hub: the split to read")
    config: str | None = Field(None, description="hub: the dataset configuration")


class QALoader(DatasetLoader):
    """Your own questions from a JSONL / JSON / CSV / Parquet file or a hub dataset, with a field mapping."""

    name = LOADER_NAME
    Options = QAOptions
    facets = ("answer_type", "category", "has_gold")
    provides_gold = True
    claims_as_fallback = True  # it reads any plain file: a loader of the file's own format comes first

    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        questions, problems = self._read(source, self.load_options(options), max_problems=1)
        if problems:
            raise UserError(problems[0])
        if sample and limit is not None:
            questions = random.Random(seed).sample(questions, min(limit, len(questions)))
        return questions[:limit] if limit is not None else questions

    def problems(self, source: str | Path, limit: int = 10, **options: Any) -> list[str]:
        try:
            return self._read(source, self.load_options(options), max_problems=limit)[1]
        except UserError as err:
            return [str(err)]

    def _read(self, source: str | Path, opts: QAOptions, max_problems: int) -> tuple[list[Question], list[str]]:
        check_mapping(opts.fields)
        documents = resolve_documents(opts.documents, source)
        questions: list[Question] = []
        problems: list[str] = []
        seen: dict[str, str] = {}
        for number, (where, data) in enumerate(read_rows(source, opts.split, opts.config), start=1):
            columns = resolve_columns(opts.fields, set(data))  # per row: JSON records may differ in keys
            try:
                q = to_question(Row(where, data, columns), number, opts, documents)
                if q.id in seen:
                    raise UserError(
                        f"{where}: field {columns.get('id', 'id')!r}: question id {q.id!r} is also used at {seen[q.id]}"
                    )
                seen[q.id] = where
                questions.append(q)
            except UserError as err:
                problems.append(str(err))
                if len(problems) >= max_problems:
                    break
        if not questions and not problems:
            problems.append(f"{source}: no questions in it")
        return questions, problems

    def claims(self, source: str | Path) -> bool:
        """A file of a kind it reads whose first record has a question column of the defaults
        (a loader of the file's own format comes first: ``claims_as_fallback``)."""
        if file_kind(source) in (None, "hub") or not Path(str(source)).is_file():
            return False
        try:
            _, first = next(iter(read_rows(source)))
        except (UserError, StopIteration, OSError):
            return False
        return any(column in first for column in DEFAULT_COLUMNS["question"])

    def unclaimed_because(self, source: str | Path) -> str | None:
        if file_kind(source) in (None, "hub") or not Path(str(source)).is_file():
            return None
        try:
            _, first = next(iter(read_rows(source)))
        except (UserError, StopIteration, OSError) as exc:
            return f"cannot read a first record ({exc or 'the file is empty'})"
        return (
            f"looked for a question column ({', '.join(DEFAULT_COLUMNS['question'])}); the file has "
            f"{', '.join(map(str, first)) or 'none'}: map yours with the option fields: {{question: ..., answer: ...}}"
        )

    def normalize(self, text: str) -> str:
        from ..twowiki.scoring import normalize_answer

        return normalize_answer(text)

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        return score_answer(question, prediction)


def to_question(row: Row, number: int, opts: QAOptions, documents: str | None) -> Question:
    choices = row.strings("choices")
    kind = answer_type(row, opts, choices)
    answer, aliases = _answer(row, kind, choices, opts)
    if row.has("aliases"):
        aliases += row.strings("aliases")
    metadata: dict[str, Any] = {"answer_type": kind, "row": row.where}
    if kind == "label":
        metadata["labels"] = list(opts.labels or [])
    if documents:
        metadata["documents"] = documents
    gold = gold_evidence(row, [answer, *aliases] if kind != "choice" else aliases, documents)
    metadata["has_gold"] = "yes" if gold is not None else "no"
    return Question(
        id=row.text("id") or str(number),
        question=row.text("question", required=True),
        answer=answer,
        aliases=list(dict.fromkeys(a for a in aliases if a != answer)),
        choices=choices or None,
        dataset=LOADER_NAME,
        type=row.text("type") or kind,
        category=row.text("category"),
        metadata=metadata,
        gold=gold,
    )


def answer_type(row: Row, opts: QAOptions, choices: list[str]) -> str:
    if opts.answer_type != "auto":
        return opts.answer_type
    if choices:
        return "choice"
    if opts.labels:
        return "label"
    answers = row.strings("answer")
    return "yes-no" if answers and answers[0].casefold() in YES_NO else "text"


def _answer(row: Row, kind: str, choices: list[str], opts: QAOptions) -> tuple[str, list[str]]:
    """(answer, aliases) as the answer type wants them, checked."""
    if kind == "choice":
        if len(choices) < 2 or len(choices) > len(LETTERS):
            raise row.problem(
                "choices", f"a multiple-choice question needs 2 to {len(LETTERS)} choices, got {len(choices)}"
            )
        field = "correct" if row.has("correct") else "answer"
        letter = _letter(row, field, row.text(field, required=True), choices)
        return letter, [choices[LETTERS.index(letter)]]
    answers = row.strings("answer")
    if not answers:
        row.text("answer", required=True)  # raises: missing or empty
    answer, aliases = answers[0], answers[1:]
    if kind == "yes-no" and answer.casefold() not in YES_NO:
        raise row.problem("answer", f"a yes-no question's answer must be yes or no, got {answer!r}")
    if kind == "label":
        labels = {label.casefold(): label for label in opts.labels or []}
        if not labels:
            raise UserError(f"{row.where}: answer_type 'label' needs the loader option 'labels' (the label set)")
        if answer.casefold() not in labels:
            raise row.problem("answer", f"{answer!r} is not one of the labels {', '.join(labels.values())}")
        answer = labels[answer.casefold()]
    return answer, aliases


def _letter(row: Row, field: str, value: str, choices: list[str]) -> str:
    """The correct option as a letter, from a letter, a 1-based number or the option's text."""
    if len(value) == 1 and value.upper() in LETTERS[: len(choices)]:
        return value.upper()
    if value.isdigit() and 1 <= int(value) <= len(choices):
        return LETTERS[int(value) - 1]
    texts = [option_key(c) for c in choices]
    if option_key(value) in texts:
        return LETTERS[texts.index(option_key(value))]
    raise row.problem(
        field,
        f"{value!r} names none of the {len(choices)} choices (give a letter A-"
        f"{LETTERS[len(choices) - 1]}, a number 1-{len(choices)}, or the option's text)",
    )


@hookimpl
def provbench_register_dataset_loaders():
    return {LOADER_NAME: QALoader}
