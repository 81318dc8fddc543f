"""The "fever" dataset loader (FEVER 1.0 claims; the pages a KB needs come from
:mod:`.pages`).

Sources: a local claims ``.jsonl`` (official or shared-task test form), or a hub id such as
``fever`` (options ``config``, default ``v1.0``, null for none, and ``split``, default ``paper_dev``).
Options:
  ``pages``: the Wikipedia pages (a ``wiki-pages/`` directory, one ``.jsonl`` dump file or a
  BEIR ``corpus.jsonl``), relative to the claims file; default: a ``wiki-pages`` directory next
  to it when there is one. Its resolved path goes into each Question's ``metadata["pages"]`` so
  the ``fever-wiki`` KB builder can find it.
  ``labels``: keep only these labels. ``idk_credit``: accuracy credit of an "I don't know"
  answer or an abstention (paper 003: 0.3; 0 turns it off). ``gold_text`` (default true): read
  the evidence sentences' text from the pages into ``Question.gold`` (false: positions only,
  no pass over the pages; :mod:`.gold`).
``limit`` with ``sample`` draws a label-stratified seeded sample; without it, the first claims.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

from provbench import hookimpl
from provbench.errors import UserError
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from .claim_records import ClaimRecord, jsonl_problems, read_hub, read_jsonl, stratified_sample, to_question
from .gold import evidence_texts, gold_evidence
from .scoring import LABELS, graded_accuracy, normalize_label

log = logging.getLogger(__name__)

LOADER_NAME = "fever"
DEFAULT_HUB_SPLIT = "paper_dev"
KNOWN_OPTIONS = {"pages", "labels", "idk_credit", "split", "config", "gold_text"}


class FeverLoader(DatasetLoader):
    """FEVER claims (official jsonl, shared-task test file, or the hub's v1.0 rows), validated."""

    name = LOADER_NAME
    facets: ClassVar[tuple[str, ...]] = ("label", "verifiable")
    provides_gold = True  # the evidence sets as alternatives, with their sentences' text when the pages are known

    def __init__(self, **options: Any) -> None:
        self.idk_credit = 0.3

    def claims(self, source: str | Path) -> bool:
        path = Path(source)
        if path.suffix != ".jsonl" or not path.is_file():
            return str(source) == "fever"
        with path.open(encoding="utf-8") as handle:
            first = handle.readline()
        return '"claim"' in first and '"id"' in first

    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        unknown = set(options) - KNOWN_OPTIONS
        if unknown:
            raise UserError(
                f"dataset_loader 'fever': unknown option(s) {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(KNOWN_OPTIONS))})"
            )
        self.idk_credit = _credit(options.get("idk_credit", 0.3))
        records, pages = self._read(str(source), options)
        wanted = options.get("labels")
        if wanted is not None:
            labels = {normalize_label(str(x)) for x in (wanted if isinstance(wanted, list) else [wanted])}
            if None in labels:
                raise UserError(f"dataset_loader 'fever': option 'labels' must name labels from {', '.join(LABELS)}")
            records = [r for r in records if r.label in labels]
        if limit is not None and limit < len(records):
            records = stratified_sample(records, limit, seed) if sample else records[:limit]
        questions = [to_question(r, "fever", pages) for r in records]
        self._add_gold(questions, pages if options.get("gold_text", True) else None)
        return questions

    @staticmethod
    def _add_gold(questions: list[Question], pages: str | None) -> None:
        texts = evidence_texts(pages, [group for q in questions for group in q.metadata["evidence"]])
        if pages:  # evidence the pages lack: counted, its gold text left empty
            missing = [
                f"claim {q.id}: [{page!r}, {line}]"
                for q in questions
                for group in q.metadata["evidence"]
                for page, line in group
                if (page, int(line)) not in texts
            ]
            if missing:
                log.warning(
                    "fever: %d evidence sentence(s) name a page or line not in %s (first: %s)",
                    len(missing),
                    pages,
                    "; ".join(missing[:3]),
                )
        for q in questions:
            q.gold = gold_evidence(q.metadata["evidence"], texts)  # None for NEI: it has no evidence sets

    def _read(self, source: str, options: dict[str, Any]) -> tuple[list[ClaimRecord], str | None]:
        path = Path(source)
        if path.is_file():
            return list(read_jsonl(path)), _pages_for(path, options.get("pages"))
        if path.suffix in {".jsonl", ".json"} or path.exists():
            raise UserError(f"{source}: no such claims file")
        hub = read_hub(source, options.get("split", DEFAULT_HUB_SPLIT), options.get("config", "v1.0"))
        return hub, options.get("pages")

    def problems(self, source: str | Path, limit: int = 10, **options: Any) -> list[str]:
        """Up to ``limit`` located problems of a claims file (``provbench data info`` lists them)."""
        path = Path(source)
        if path.is_file():
            return jsonl_problems(path, limit)
        return super().problems(source, limit, **options)  # the hub: the first error load() raises

    def normalize(self, text: str) -> str:
        return normalize_label(text) or " ".join(text.lower().split())

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        if not question.answer:
            return {}  # the shared-task test file has no labels to score against
        return {"accuracy": graded_accuracy(question.answer, prediction, self.idk_credit)}


def _credit(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise UserError(f"dataset_loader 'fever': option 'idk_credit' must be a number in [0, 1], got {value!r}")
    return float(value)


def _pages_for(claims_path: Path, pages: Any) -> str | None:
    if pages is None:
        sibling = claims_path.parent / "wiki-pages"
        return str(sibling.resolve()) if sibling.is_dir() else None
    resolved = (claims_path.parent / str(pages)).resolve()
    if not resolved.exists():
        raise UserError(f"dataset_loader 'fever': option 'pages': {resolved} does not exist")
    return str(resolved)


@hookimpl
def provbench_register_dataset_loaders():
    return {LOADER_NAME: FeverLoader}


@hookimpl
def provbench_register_metrics():
    from .metric import FeverMetric

    return {FeverMetric.name: FeverMetric}
