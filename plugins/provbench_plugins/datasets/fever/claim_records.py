"""FEVER claims in their three forms, validated, as provbench Questions.

* the official jsonl (``paper_dev.jsonl``, ``train.jsonl``...): one claim a line with ``id``,
  ``verifiable``, ``label``, ``claim`` and ``evidence`` = sets of
  ``[annotation_id, evidence_id, wiki_url, sent_id]`` (NOT ENOUGH INFO items carry nulls);
* the shared-task test file: ``id`` and ``claim`` only (no label, no evidence);
* the hub form (``fever``, config ``v1.0``): one row per evidence sentence
  (``id, label, claim, evidence_annotation_id, evidence_id, evidence_wiki_url,
  evidence_sentence_id``), regrouped here by claim id and annotation id.

A record that does not fit raises a UserError naming the file, the line (or hub row) and field.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from provbench.errors import UserError
from provbench.jsonlines import located, read_json_lines
from provbench.model import Question

from ..hub import load_split
from .scoring import LABELS, NEI

EvidenceItem = tuple[int | None, int | None, str | None, int | None]


class ClaimRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int | str
    claim: str = Field(min_length=1)
    label: Literal["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"] | None = None
    verifiable: Literal["VERIFIABLE", "NOT VERIFIABLE"] | None = None
    evidence: list[list[EvidenceItem]] = Field(default_factory=list)

    @field_validator("evidence")
    @classmethod
    def _complete_unless_nei(cls, sets: list[list[EvidenceItem]], info: Any) -> list[list[EvidenceItem]]:
        label = info.data.get("label")
        for i, group in enumerate(sets):
            for j, item in enumerate(group):
                if label in ("SUPPORTS", "REFUTES") and (item[2] is None or item[3] is None):
                    raise ValueError(f"evidence[{i}][{j}] has no page or sentence, but the label is {label}")
        return sets

    def gold_sets(self) -> list[list[list]]:
        """Evidence sets with a page and sentence (empty for NEI), as [page, line] pairs."""
        return [
            [[item[2], item[3]] for item in group]
            for group in self.evidence
            if group and all(item[2] is not None and item[3] is not None for item in group)
        ]


def located_error(where: str, err: ValidationError) -> UserError:
    problems = "; ".join(f"field {'.'.join(map(str, e['loc'])) or '(record)'}: {e['msg']}" for e in err.errors())
    return UserError(f"{where}: {problems}")


def validate_claim(path: Path, number: int, raw: dict) -> ClaimRecord:
    try:
        return ClaimRecord.model_validate(raw)
    except ValidationError as err:
        raise located_error(f"{located(path, number)} (claim id {raw.get('id')!r})", err) from None


def read_jsonl(path: Path) -> Iterator[ClaimRecord]:
    for number, raw in read_json_lines(path):
        yield validate_claim(path, number, raw)


def jsonl_problems(path: Path, limit: int) -> list[str]:
    """Every located problem of a claims file, up to ``limit`` (not just the first)."""
    problems: list[str] = []
    for number, raw in read_json_lines(path, problems=problems):
        if len(problems) >= limit:
            break
        try:
            validate_claim(path, number, raw)
        except UserError as err:
            problems.append(str(err))
    return problems[:limit]


def regroup_hub_rows(rows: Iterable[dict], source: str) -> list[ClaimRecord]:
    """The hub's one-row-per-evidence-sentence form back into one record per claim."""
    claims: dict[Any, dict] = {}
    groups: dict[Any, dict[Any, list]] = defaultdict(dict)
    for index, row in enumerate(rows):
        where = f"{source}, row {index}"
        for name in ("id", "claim", "label"):
            if name not in row:
                raise UserError(f"{where}: field {name!r} is missing")
        claims.setdefault(row["id"], {"id": row["id"], "claim": row["claim"], "label": row["label"] or None})
        page, line = row.get("evidence_wiki_url") or None, row.get("evidence_sentence_id")
        item = [
            row.get("evidence_annotation_id"),
            row.get("evidence_id"),
            page,
            None if page is None or line in (None, -1) else line,
        ]
        groups[row["id"]].setdefault(row.get("evidence_annotation_id"), []).append(item)
    records = []
    for claim_id, raw in claims.items():
        raw["evidence"] = [g for g in groups[claim_id].values()]
        try:
            records.append(ClaimRecord.model_validate(raw))
        except ValidationError as err:
            raise located_error(f"{source}, claim id {claim_id!r}", err) from None
    return records


def read_hub(source: str, split: str, config: str | None = "v1.0") -> list[ClaimRecord]:
    return regroup_hub_rows(load_split(source, split, config), f"{source}[{split}]")


def to_question(record: ClaimRecord, dataset: str, pages: str | None) -> Question:
    sets = record.gold_sets()
    metadata: dict[str, Any] = {
        "label": record.label or "(unlabelled)",
        "evidence": sets,
        "evidence_pages": sorted({page for group in sets for page, _ in group}),
        "verifiable": record.verifiable,
    }
    if pages:
        metadata["pages"] = pages
    # the three labels as choices: a system that shows a question's options answers with a label
    return Question(
        id=str(record.id),
        question=record.claim,
        answer=record.label or "",
        choices=list(LABELS),
        dataset=dataset,
        type=record.label or "",
        category=record.label or "",
        metadata=metadata,
    )


def stratified_sample(records: list[ClaimRecord], limit: int, seed: int) -> list[ClaimRecord]:
    """``limit`` records drawn per label as evenly as the labels allow, in a seeded order; the
    result keeps the file's order."""
    rng = random.Random(seed)
    by_label: dict[str, list[int]] = defaultdict(list)
    for index, record in enumerate(records):
        by_label[record.label or ""].append(index)
    for indices in by_label.values():
        rng.shuffle(indices)
    order = [label for label in (*LABELS, "") if by_label.get(label)]
    chosen: list[int] = []
    while len(chosen) < limit and any(by_label[label] for label in order):
        for label in order:
            if by_label[label] and len(chosen) < limit:
                chosen.append(by_label[label].pop())
    return [records[i] for i in sorted(chosen)]


def official_evidence(question: Question) -> list[list[list]]:
    """A question's gold evidence in the scorer's form [[ [None, None, page, line], ... ], ...]."""
    if question.answer == NEI:
        return []
    return [[[None, None, page, line] for page, line in group] for group in question.metadata.get("evidence", [])]
