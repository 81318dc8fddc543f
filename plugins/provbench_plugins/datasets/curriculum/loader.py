"""Loader for concept-graph question sets such as ``datasets/curriculum-mini`` (paper 002).

A dataset is a directory (or its ``questions.jsonl``) holding:

* ``questions.jsonl``: one object per line: ``id``, ``question``, ``answer`` (null when the
  graph cannot answer it), optional ``aliases``, ``hops`` (edges on the answer path),
  ``answerable`` (default true; false marks a question to which abstaining is the right reply),
  ``type``;
* ``concepts.csv|jsonl`` and ``edges.csv|jsonl``: the concept graph (see
  :mod:`provbench_plugins.kb_builders.concepts.files`); their absolute paths go into each
  question's ``metadata["concept_graph"]`` so the ``concept-graph`` builder finds them.

Scoring (2Wiki's normalisation and scores: case, punctuation and articles ignored): an
answerable question's ``accuracy`` is 1 when the short answer contains the gold answer or an
alias as a token span (``em`` and ``f1`` are reported beside it). An
unanswerable question is right (accuracy 1) only when the system abstained (no answer), wrong
when it answered anything. ``metadata["answerable"]`` is the convention abstention metrics read.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from provbench import hookimpl
from provbench.errors import UserError
from provbench.jsonlines import located, read_json_lines
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from provbench_plugins.datasets.twowiki import scoring

LOADER_NAME = "curriculum"
QUESTIONS_FILE = "questions.jsonl"


class CurriculumLoader(DatasetLoader):
    """Questions over a concept graph in plain files; unanswerable ones are marked."""

    name = LOADER_NAME

    def claims(self, source: str | Path) -> bool:
        """A directory, or its questions.jsonl, with the concept and edge files beside the questions."""
        path = Path(source)
        questions_path = path / QUESTIONS_FILE if path.is_dir() else path
        if questions_path.name != QUESTIONS_FILE or not questions_path.is_file():
            return False
        try:
            return set(graph_files(questions_path.parent)) == {"concepts", "edges"}
        except UserError:  # both a .csv and a .jsonl: load() says so
            return True

    def load(self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False,
             **options: Any) -> list[Question]:
        if options:
            raise UserError(f"dataset loader {LOADER_NAME!r}: unknown options {sorted(options)}")
        path = Path(source)
        questions_path = path / QUESTIONS_FILE if path.is_dir() else path
        if not questions_path.is_file():
            raise UserError(f"{questions_path}: no such file (a {LOADER_NAME} dataset needs {QUESTIONS_FILE})")
        graph = graph_files(questions_path.parent)
        questions = [self.question(questions_path, number, row, graph)
                     for number, row in read_json_lines(questions_path)]
        _check_unique(questions_path, questions)
        if sample and limit is not None:
            questions = random.Random(seed).sample(questions, min(limit, len(questions)))
        return questions[:limit] if limit is not None else questions

    def question(self, path: Path, number: int, row: dict[str, Any], graph: dict[str, str]) -> Question:
        where = located(path, number)
        for name in ("id", "question"):
            if not isinstance(row.get(name), str) or not row[name].strip():
                raise UserError(f"{where}: field {name!r} must be a non-empty string")
        answerable = row.get("answerable", True)
        if not isinstance(answerable, bool):
            raise UserError(f"{where}: field 'answerable' must be true or false")
        answer = row.get("answer")
        if answerable and (not isinstance(answer, str) or not answer.strip()):
            raise UserError(f"{where}: field 'answer' must be a non-empty string (or set answerable: false)")
        if not answerable and answer not in (None, ""):
            raise UserError(f"{where}: field 'answer' must be null when answerable is false")
        aliases = row.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise UserError(f"{where}: field 'aliases' must be a list of strings")
        hops = row.get("hops", 0)
        if not isinstance(hops, int) or isinstance(hops, bool) or hops < 0:
            raise UserError(f"{where}: field 'hops' must be a non-negative integer")
        return Question(id=row["id"], question=row["question"], answer=answer or "", aliases=aliases,
                        dataset=LOADER_NAME, type=str(row.get("type", "")),
                        category=f"{hops}-hop" if answerable else "unanswerable",
                        metadata={"answerable": answerable, "hops": hops, "concept_graph": graph})

    def normalize(self, text: str) -> str:
        return scoring.normalize_answer(text)

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        if question.metadata.get("answerable", True) is False:
            return {"accuracy": float(prediction is None)}
        return scoring.score(prediction, [question.answer, *question.aliases])


def graph_files(directory: Path) -> dict[str, str]:
    """Absolute paths of the concept and edge files beside the questions ({} if there are none)."""
    found = {}
    for kind in ("concepts", "edges"):
        candidates = [directory / f"{kind}{suffix}" for suffix in (".csv", ".jsonl")]
        existing = [p for p in candidates if p.is_file()]
        if len(existing) > 1:
            raise UserError(f"{directory}: both {existing[0].name} and {existing[1].name}; keep one")
        if existing:
            found[kind] = str(existing[0].resolve())
    return found


def _check_unique(path: Path, questions: list[Question]) -> None:
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise UserError(f"{path}: question id {q.id!r} appears twice")
        seen.add(q.id)


@hookimpl
def provbench_register_dataset_loaders():
    return {LOADER_NAME: CurriculumLoader}
