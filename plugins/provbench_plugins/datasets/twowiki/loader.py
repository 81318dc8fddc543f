"""The "2wiki" dataset loader: 2WikiMultiHopQA in its official formats.

Sources it reads:
  - a local ``.json`` file: the plain dev.json release or the "data_ids" release (which adds
    entity_ids, evidences_id and answer_id, and stores the list fields as Python-literal text);
  - a local ``.jsonl`` file (one record a line) or ``.parquet`` file;
  - a Hugging Face hub id such as ``xanhho/2WikiMultihopQA`` (or a local directory laid out like
    a hub dataset) through the ``datasets`` library (``pip install provbench[hub]``); option
    ``split`` (default "dev").

Every record is validated; a bad one raises a UserError naming the file, the record id and
the field. Each question carries its gold evidence (``Question.gold``, :mod:`.gold`).
Options: ``select`` applies paper 000's selection (see twowiki_selection), with
``quotas`` per category (default 12/12/6); ``limit`` and seeded ``sample`` apply after it.
``id_aliases`` reads the data_ids release's ``id_aliases.json`` (:mod:`.aliases`): each
question's ``aliases`` become the aliases and demonyms of its ``answer_id``, which scoring
accepts as the official evaluation does.
"""

from __future__ import annotations

import ast
import json
import logging
import random
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from provbench import hookimpl
from provbench.errors import UserError
from provbench.jsonlines import read_json_lines
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from ..hub import load_split
from . import scoring
from . import selection
from .aliases import read_id_aliases, resolve_aliases_path
from .gold import gold_evidence

log = logging.getLogger(__name__)

LOADER_NAME = "2wiki"
DEFAULT_HUB_SPLIT = "dev"
LIST_FIELDS = ("context", "supporting_facts", "evidences", "evidences_id")


class TwoWikiRecord(BaseModel):
    """One 2WikiMultiHopQA record after its list fields are decoded."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str = Field(alias="_id", min_length=1)
    type: str
    question: str = Field(min_length=1)
    answer: str
    context: list[tuple[str, list[str]]] = Field(min_length=1)
    supporting_facts: list[tuple[str, int]]
    evidences: list[tuple[str, str, str]] = Field(default_factory=list)
    entity_ids: str | None = None
    evidences_id: list[tuple[str, str, str]] | None = None
    answer_id: str | None = None

    @field_validator("supporting_facts")
    @classmethod
    def _facts_name_context(cls, facts: list[tuple[str, int]], info: Any) -> list[tuple[str, int]]:
        titles = {title for title, _ in info.data.get("context", [])}
        missing = [title for title, _ in facts if titles and title not in titles]
        if missing:
            raise ValueError(f"names paragraphs not in context: {missing[:3]}")
        return facts

    def facts_beyond_context(self) -> list[str]:
        """One line per supporting fact naming a sentence its paragraph does not have. The fact is kept:
        its gold sentence has no text, so the question's sentence evidence is never complete (gold.py),
        where dropping it would make the rest look complete."""
        sentences = {title: len(lines) for title, lines in self.context}
        return [
            f"record {self.id!r}: supporting fact [{t!r}, {s}]: paragraph {t!r} has {sentences.get(t, 0)} sentence(s)"
            for t, s in self.supporting_facts
            if not 0 <= s < sentences.get(t, 0)
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "answer": self.answer,
            "context": [[t, list(s)] for t, s in self.context],
            "supporting_facts": [list(f) for f in self.supporting_facts],
            "evidences": [list(e) for e in self.evidences],
        }


# --- decoding the shapes the releases and mirrors use ---------------------------------------


def _decode_text(value: str) -> Any:
    """Mirrors store list fields as JSON text, the data_ids release as Python literals."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value  # left for validation to reject with the field's name


def _columns_to_rows(value: dict[str, Any], keys: tuple[str, ...]) -> list[list[Any]]:
    """Hub parquet stores a list of tuples as a struct of parallel lists."""
    return [list(row) for row in zip(*(value[k] for k in keys))]


_STRUCT_COLUMNS = {
    "context": ("title", "sentences"),
    "supporting_facts": ("title", "sent_id"),
    "evidences": ("fact", "relation", "entity"),
    "evidences_id": ("fact", "relation", "entity"),
}


def _decode_field(name: str, value: Any) -> Any:
    if isinstance(value, str):
        value = _decode_text(value)
    if isinstance(value, dict) and all(k in value for k in _STRUCT_COLUMNS[name]):
        value = _columns_to_rows(value, _STRUCT_COLUMNS[name])
    return _plain(value)


def _plain(item: Any) -> Any:
    """Nested lists of plain values (parquet may hand back numpy arrays and tuples)."""
    if hasattr(item, "tolist"):
        item = item.tolist()
    if isinstance(item, (list, tuple)):
        return [_plain(x) for x in item]
    return item


def decode_record(raw: dict[str, Any]) -> dict[str, Any]:
    record = dict(raw)
    for name in LIST_FIELDS:
        if name in record and record[name] is not None:
            record[name] = _decode_field(name, record[name])
    if record.get("answer_id") is not None:
        record["answer_id"] = str(record["answer_id"])
    return record


def validate_record(raw: Any, where: str, index: int) -> TwoWikiRecord:
    """A validated record, or a UserError naming file, record and field."""
    if not isinstance(raw, dict):
        raise UserError(f"{where}: record #{index} is {type(raw).__name__}, not an object")
    record_id = raw.get("_id") or f"#{index}"
    try:
        return TwoWikiRecord.model_validate(decode_record(raw))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(record)"
        raise UserError(f"{where}: record {record_id!r}: field {field}: {error['msg']}") from None


# --- reading sources ------------------------------------------------------------------------


def _read_json(path: Path) -> Iterator[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if isinstance(data, dict) and "data" in data:
        data = data["data"]
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON list of 2Wiki records, got {type(data).__name__}")
    yield from data


def _read_jsonl(path: Path) -> Iterator[Any]:
    for _, record in read_json_lines(path, objects=False):  # a non-object is named by validation
        yield record


def _read_parquet(path: Path) -> Iterator[Any]:
    import pyarrow.parquet as pq

    yield from pq.read_table(path).to_pylist()


def _read_hub(source: str, split: str) -> Iterator[Any]:
    yield from load_split(source, split)


READERS = {".json": _read_json, ".jsonl": _read_jsonl, ".parquet": _read_parquet}


def read_records(source: str | Path, split: str = DEFAULT_HUB_SPLIT) -> list[TwoWikiRecord]:
    path = Path(source)
    if path.is_file():
        reader = READERS.get(path.suffix.lower())
        if reader is None:
            raise UserError(f"{path}: unknown 2Wiki file type {path.suffix!r} (use .json, .jsonl or .parquet)")
        raw_records, where = reader(path), str(path)
    elif path.is_dir() or _looks_like_hub_id(str(source)):
        raw_records, where = _read_hub(str(source), split), f"{source} [{split}]"
    else:
        raise UserError(f"2Wiki dataset not found: {source} (a file path or a hub id like xanhho/2WikiMultihopQA)")
    records = [validate_record(raw, where, i) for i, raw in enumerate(raw_records)]
    beyond = [line for record in records for line in record.facts_beyond_context()]
    if beyond:  # published data may hold a few: counted, not fatal
        log.warning(
            "%s: %d supporting fact(s) point at a sentence their paragraph does not have; kept as gold "
            "no prompt can hold (first: %s)",
            where,
            len(beyond),
            "; ".join(beyond[:3]),
        )
    return records


def _looks_like_hub_id(source: str) -> bool:
    parts = source.split("/")
    return len(parts) == 2 and all(parts) and not source.endswith((".json", ".jsonl", ".parquet"))


# --- the loader -----------------------------------------------------------------------------


def to_question(record: TwoWikiRecord, category: str, aliases: dict[str, list[str]] | None = None) -> Question:
    metadata: dict[str, Any] = {
        "context": [{"title": t, "sentences": list(s)} for t, s in record.context],
        "supporting_facts": [list(f) for f in record.supporting_facts],
        "evidences": [list(e) for e in record.evidences],
    }
    for name in ("entity_ids", "evidences_id", "answer_id"):
        value = getattr(record, name)
        if value is not None:
            metadata[name] = [list(e) for e in value] if name == "evidences_id" else value
    accepted = [a for a in (aliases or {}).get(record.answer_id or "", []) if a != record.answer]
    return Question(
        id=record.id,
        question=record.question,
        answer=record.answer,
        dataset=LOADER_NAME,
        type=record.type,
        category=category,
        aliases=accepted,
        metadata=metadata,
        gold=gold_evidence(record.context, record.supporting_facts, record.evidences),
    )


class LoadOptions(BaseModel):
    """A suite's ``dataset.options`` for the 2wiki loader."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    select: bool = Field(False, description="apply paper 000's question selection")
    quotas: dict[str, int] | None = Field(None, description="questions per category (implies select)")
    split: str = Field(DEFAULT_HUB_SPLIT, description="split of a hub dataset")
    id_aliases: str | None = Field(
        None,
        description="id_aliases.json of the data_ids release (relative to the "
        "dataset file's folder): answer aliases and demonyms",
    )


class TwoWikiLoader(DatasetLoader):
    """2WikiMultiHopQA (json, jsonl, parquet, hub) with paper 000's selection as an option."""

    name = LOADER_NAME
    Options = LoadOptions
    facets = ("type", "category")
    provides_gold = True  # supporting facts (with their sentences) and evidence triples

    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        opts = self.load_options(options)
        records = read_records(source, opts.split)
        if sample:  # before selection, so quotas fill in the seeded order
            random.Random(seed).shuffle(records)
        chosen, shortfall = self._choose(records, opts.select, opts.quotas)
        if limit is not None:
            chosen = chosen[:limit]
        aliases = self._aliases(source, opts.id_aliases, [r for r, _ in chosen])
        questions = [to_question(record, cat, aliases) for record, cat in chosen]
        if shortfall:
            for q in questions:  # the report's selection note reads it from any question
                q.metadata["selection_shortfall"] = shortfall
        return questions

    @staticmethod
    def _aliases(source: str | Path, option: str | None, records: list[TwoWikiRecord]) -> dict[str, list[str]] | None:
        if option is None:
            return None
        path = resolve_aliases_path(source, option)
        if records and not any(r.answer_id for r in records):
            raise UserError(
                f"{source}: option id_aliases ({path}) needs records with answer_id (the data_ids "
                "release of 2WikiMultihopQA); none of the loaded records has one"
            )
        return read_id_aliases(path)

    def claims(self, source: str | Path) -> bool:
        path = Path(source)
        reader = READERS.get(path.suffix.lower()) if path.is_file() else None
        if reader is None:
            return False
        try:
            first = next(iter(reader(path)), None)
        except (UserError, OSError, ValueError):
            return False
        return isinstance(first, dict) and {"_id", "question", "context", "supporting_facts"} <= set(first)

    def problems(self, source: str | Path, limit: int = 10, **options: Any) -> list[str]:
        """Every record is validated (not only up to the first bad one)."""
        path = Path(source)
        reader = READERS.get(path.suffix.lower()) if path.is_file() else None
        if reader is None:
            return super().problems(source, limit, **options)
        found: list[str] = []
        try:
            for index, raw in enumerate(reader(path)):
                try:
                    validate_record(raw, str(path), index)
                except UserError as err:
                    found.append(str(err))
                if len(found) >= limit:
                    break
        except UserError as err:  # the file itself (JSON syntax, top-level shape)
            found.append(str(err))
        return found or super().problems(source, limit, **options)

    @staticmethod
    def _choose(records: list[TwoWikiRecord], select: bool, quotas: dict[str, int] | None):
        if quotas is not None:
            unknown = set(quotas) - set(selection.CATEGORIES)
            if unknown:
                raise UserError(
                    f"2wiki loader: unknown categories in quotas {sorted(unknown)}; known: {list(selection.CATEGORIES)}"
                )
            select = True
        by_dict = [(r, r.as_dict()) for r in records]
        if not select:
            return [(r, _category_or_blank(d)) for r, d in by_dict], None
        wanted = quotas or selection.PAPER_QUOTAS
        picked = selection.select([d for _, d in by_dict], wanted)
        index = {id(d): r for r, d in by_dict}
        return [(index[id(d)], cat) for d, cat in picked], selection_shortfall(wanted, [cat for _, cat in picked])

    def normalize(self, text: str) -> str:
        return scoring.normalize_answer(text)

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        """accuracy (provbench's rule, see :mod:`.scoring`), em and f1 (the official ones)."""
        return scoring.score(prediction, [question.answer, *question.aliases], scoring.other_candidates(question))


def selection_shortfall(quotas: dict[str, int], categories: list[str]) -> dict[str, dict[str, int]] | None:
    """Categories with fewer eligible questions than their quota ({category: {quota, selected}}),
    warned about in the run log; None when every quota is met."""
    short = {
        cat: {"quota": quota, "selected": categories.count(cat)}
        for cat, quota in quotas.items()
        if categories.count(cat) < quota
    }
    if short:
        log.warning(
            "2wiki selection shortfall: fewer eligible questions than the quotas: %s",
            "; ".join(f"{c} {v['selected']} of {v['quota']}" for c, v in short.items()),
        )
    return short or None


def _category_or_blank(record: dict[str, Any]) -> str:
    """Unselected loads still label eligible questions, so reports can group by category."""
    return selection.category(record) if selection.ineligible_reason(record) is None else ""


@hookimpl
def provbench_register_dataset_loaders():
    return {LOADER_NAME: TwoWikiLoader}
