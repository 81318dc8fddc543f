"""The "medmcqa" and "mmlu-medical" dataset loaders: four-option medical questions (the "mmlu"
loader for all 57 MMLU subjects is in :mod:`.mmlu`).

Sources: raw MedMCQA ``.jsonl``; a MIRAGE ``benchmark.json`` (option ``subset``: "medmcqa" or
"mmlu"; the "mmlu-medical" loader defaults to "mmlu"); a hub id such as
``openlifescienceai/medmcqa`` or a local hub-style directory (option ``split``, default
"validation"). Unlabelled rows (hub test split, ``cop`` -1) are skipped and counted.

Questions: ``answer`` is the option letter, ``choices`` the four option texts, ``aliases`` the
correct option's text; ``metadata`` keeps subject, topic, choice type and the explanation, which
also fill ``category`` (subject) and ``type`` (choice type). ``facets`` names what
``provbench data info`` counts. Scoring reads a reply that is a single letter ("C", "c", "(C)")
as that letter (real MedMCQA has options whose text is a letter: 'a', 'c', 'bc'); otherwise it
takes the exact text of an option first (case, spacing and end punctuation aside: "A sequence."
is the option "a sequence"; a text two options share is ambiguous, scored wrong and marked
``ambiguous_reply``), or an option's text after
its own letter or an article ("A bone marrow" when A is "bone marrow"), then an option letter
written as one: a capital alone or with punctuation ("C", "C.", "(C)", "C)", "C. text",
"Answer: C"), or a small letter closed by a bracket or a full stop ("(c)", "c)", "c."). An "a"
or "an" opening a reply is an article, never option A.

``Question.gold`` is a record's ``gold`` when it has one (the generated medical-mini questions:
their gold path as ordered triples, :mod:`provbench.gold`), else None (real MedMCQA and MIRAGE).

``sample: true`` draws ``limit`` questions spread over subjects (round-robin over subjects in a
seeded order, each subject shuffled with the seed), so a small sample still covers subjects.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from provbench.errors import UserError
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from .records import LETTERS, MCQ, read_hub, read_jsonl, read_mirage

DEFAULT_HUB_SPLIT = "validation"
HUB_ID = "openlifescienceai/medmcqa"
# An option letter as a reply writes one: optionally "Answer:"/"The answer is"/"Option", then a
# capital alone or followed by punctuation, or a small letter closed by a bracket or a full stop.
# A letter followed by a space and a word ("A sequence", "a sequence") is prose, not a letter.
_LEAD = r"^\s*(?:(?i:(?:the\s+)?(?:correct\s+)?(?:answer|option)(?:\s+is)?)\s*[:\-]?\s*)?"
_LETTER = re.compile(_LEAD + r"(?:[\(\[]?([A-D])(?:[\)\]\.:,]|\s*$)|[\(\[]?([a-d])[\)\]\.])")
_EDGE_PUNCT = " \t\n.,;:!?\"'`*"


def read_questions(source: str | Path, *, subset: str, split: str) -> Iterable[MCQ]:
    path = Path(source)
    if path.is_file():
        if path.suffix.lower() == ".jsonl":
            return read_jsonl(path)
        if path.suffix.lower() == ".json":
            return read_mirage(path, subset)
        raise UserError(f"{path}: unknown MedMCQA file type {path.suffix!r} (use .jsonl, or MIRAGE .json)")
    if path.is_dir() or _looks_like_hub_id(str(source)):
        return read_hub(str(source), split)
    raise UserError(f"MedMCQA dataset not found: {source} (a .jsonl/.json file or a hub id like {HUB_ID})")


def _looks_like_hub_id(source: str) -> bool:
    parts = source.split("/")
    return len(parts) == 2 and all(parts) and not source.endswith((".json", ".jsonl"))


def to_question(mcq: MCQ, dataset: str) -> Question:
    assert mcq.answer is not None
    metadata = {"subject": mcq.subject, "topic": mcq.topic, "choice_type": mcq.choice_type}
    if mcq.explanation:
        metadata["explanation"] = mcq.explanation
    return Question(
        id=mcq.id,
        question=mcq.question,
        answer=mcq.answer,
        aliases=[mcq.options[LETTERS.index(mcq.answer)]],
        choices=list(mcq.options),
        dataset=dataset,
        type=mcq.choice_type,
        category=mcq.subject,
        metadata=metadata,
        gold=mcq.gold,
    )


def sample_by_subject(questions: list[Question], limit: int | None, seed: int) -> list[Question]:
    """Round-robin over subjects (seeded order), each subject's questions seeded-shuffled."""
    rng = random.Random(seed)
    groups: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        groups[q.category].append(q)
    subjects = sorted(groups)
    rng.shuffle(subjects)
    for name in subjects:
        rng.shuffle(groups[name])
    picked: list[Question] = []
    wanted = len(questions) if limit is None else min(limit, len(questions))
    while len(picked) < wanted:
        for name in subjects:
            if groups[name] and len(picked) < wanted:
                picked.append(groups[name].pop())
    return picked


def option_letter(prediction: str | None, question: Question | None = None) -> str | None:
    """The option a prediction names (None when it names none, or several: see :func:`read_option`)."""
    return read_option(prediction, question)[0]


def read_option(prediction: str | None, question: Question | None = None) -> tuple[str | None, bool]:
    """(letter, ambiguous): a reply that is a single letter is that letter (real MedMCQA has
    options whose text is a letter, 'c' or 'bc', so "C" must not be read as the option "c"); else
    the exact text of one of ``question``'s options (tried before letters, so "a sequence" is never
    read as A), or that text after its own letter ("A bone marrow" when A is "bone marrow") or
    after an article ("a sequence" when C is "sequence"); else an option letter written as one.
    A text naming two options with the same text (21 real dev records) is ambiguous: no letter."""
    if not prediction:
        return None, False
    if lone := lone_letter(prediction):
        return lone, False
    if question is not None and question.choices:
        texts: dict[str, list[str]] = defaultdict(list)
        for letter, text in zip(LETTERS, question.choices):
            texts[option_text_key(text)].append(letter)
        named = texts.get(option_text_key(prediction)) or _text_after_letter(option_text_key(prediction), texts)
        if named:
            return (named[0], False) if len(named) == 1 else (None, True)
    return letter_of(prediction), False


def _text_after_letter(wanted: str, texts: dict[str, list[str]]) -> list[str]:
    """The options whose text follows their own letter or an article ("A bone marrow")."""
    head, _, rest = wanted.partition(" ")
    rest = rest.lstrip(_EDGE_PUNCT + ")]")
    head = head.strip("([").rstrip(_EDGE_PUNCT + ")]")
    letters = texts.get(rest, [])
    if head.upper() in letters:
        return [head.upper()]
    return letters if head in ("a", "an", "the") else []


def lone_letter(reply: str) -> str | None:
    """The option letter of a reply that is one letter, either case, brackets and punctuation aside."""
    lone = option_text_key(reply).strip("()[]")
    return lone.upper() if len(lone) == 1 and lone.upper() in LETTERS else None


def letter_of(prediction: str) -> str | None:
    """The letter of "C", "C.", "(C)", "C)", "C. text", "Answer: C", "(c)", "c)", "c."; else None."""
    match = _LETTER.match(prediction)
    return (match.group(1) or match.group(2).upper()) if match else None


def option_text_key(text: str) -> str:
    """Option text compared without case, repeated spaces or surrounding punctuation."""
    return " ".join(text.lower().split()).strip(_EDGE_PUNCT)


class LoadOptions(BaseModel):
    """A suite's ``dataset.options`` for the medmcqa / mmlu-medical loaders."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subset: str | None = Field(None, description='part of a MIRAGE benchmark.json ("medmcqa" or "mmlu")')
    split: str = Field(DEFAULT_HUB_SPLIT, description="split of a hub dataset")


class MedMCQALoader(DatasetLoader):
    """MedMCQA (raw jsonl, hub, MIRAGE) with option-letter scoring and per-subject sampling."""

    name = "medmcqa"
    Options = LoadOptions
    default_subset = "medmcqa"
    facets = ("subject", "choice_type", "dataset")
    provides_gold = True  # a record's ``gold`` (medical-mini's gold paths); real MedMCQA has none: None

    def __init__(self) -> None:
        self.skipped_unlabelled = 0

    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        opts = self.load_options(options)
        subset = opts.subset or self.default_subset
        questions, self.skipped_unlabelled = [], 0
        for mcq in read_questions(source, subset=subset, split=opts.split):
            if mcq.answer is None:
                self.skipped_unlabelled += 1
                continue
            questions.append(to_question(mcq, subset))
        if sample:
            return sample_by_subject(questions, limit, seed)
        return questions[:limit] if limit is not None else questions

    def claims(self, source: str | Path) -> bool:
        """A jsonl whose first record has MedMCQA's option fields, or a MIRAGE json with our part."""
        path = Path(source)
        try:
            if path.suffix.lower() == ".jsonl" and path.is_file():
                with path.open(encoding="utf-8") as lines:
                    first = json.loads(next((line for line in lines if line.strip()), "{}"))
                return (
                    self.default_subset == "medmcqa"
                    and isinstance(first, dict)  # a first line may be an array
                    and {"opa", "cop", "question"} <= set(first)
                )
            if path.suffix.lower() == ".json" and path.is_file():
                return isinstance(json.loads(path.read_text(encoding="utf-8")).get(self.default_subset), dict)
        except (OSError, ValueError, AttributeError):
            return False
        return False

    def problems(self, source: str | Path, limit: int = 10, **options: Any) -> list[str]:
        """Every record of a raw jsonl file is checked (not only up to the first bad one)."""
        path = Path(source)
        if not (path.is_file() and path.suffix.lower() == ".jsonl"):
            return super().problems(source, limit, **options)
        found: list[str] = []
        for _ in read_jsonl(path, found):
            if len(found) >= limit:
                break
        return found[:limit]

    def normalize(self, text: str) -> str:
        """For "output changed": a written letter stays a letter, anything else is compared as
        option text ("a sequence" and "a syndrome" differ). Without the question a letter and an
        option's text are not matched to each other, so a system should answer in one form."""
        return lone_letter(text) or letter_of(text) or option_text_key(text)

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        letter, ambiguous = read_option(prediction, question)
        return {"accuracy": float(letter == question.answer), **({"ambiguous_reply": 1.0} if ambiguous else {})}


class MMLUMedicalLoader(MedMCQALoader):
    """MMLU-medical as MIRAGE ships it (subset "mmlu" of benchmark.json)."""

    name = "mmlu-medical"
    default_subset = "mmlu"


def facet_counts(questions: Iterable[Question], facet: str) -> dict[str, int]:
    """How many questions have each value of ``facet`` (a metadata key, or type/category)."""
    counts: dict[str, int] = defaultdict(int)
    for q in questions:
        value = q.metadata.get(facet, getattr(q, facet, "")) or "(none)"
        counts[str(value)] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
