"""The run store: one directory per run.

    manifest.json    RunManifest (suite, models, seeds, versions, git revision; never secrets)
    questions.jsonl  the questions the run used (so a report needs nothing but the directory)
    records.jsonl    one RunRecord per unit, appended, flushed and fsynced one by one
    metrics.json     RunMetrics: format version, run-level MetricValues, excluded questions, metric errors
    cache/           the LLM response cache
    report.html, records.csv, pages/   written by the report

A run killed at any moment (kill -9 included) leaves at most one truncated last line in
records.jsonl; :meth:`RunStore.load_records` drops it (and cuts it from the file) so the
resumed run re-does that unit and appends cleanly (and says so).

One process at a time owns a run directory: :meth:`RunStore.lock` takes an inter-process lock
(``.lock``, with the holder's pid and host beside it); a second process gets an error naming it.
Everything written goes through the store's :class:`~provbench.secrets.Redactor`.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import UserError
from .locks import DirLock
from .model import MetricValue, Question, RunManifest, RunRecord, utc_now
from .secrets import Redactor

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
QUESTIONS = "questions.jsonl"
RECORDS = "records.jsonl"
METRICS = "metrics.json"
CSV_EXPORT = "records.csv"
LOCK = ".lock"


class RunStore:
    def __init__(self, run_dir: str | Path, redactor: Redactor | None = None):
        self.run_dir = Path(run_dir)
        self.redactor = redactor or Redactor()
        self._lock = threading.Lock()
        self.stale_lines = 0

    def lock(self) -> DirLock:
        """The inter-process lock on this run directory (acquire it, or use it as a context)."""
        return DirLock(self.run_dir / LOCK, f"run directory {self.run_dir}")

    @contextmanager
    def claim(self) -> Iterator[None]:
        """Create and lock the run directory for this process. A new directory that setup rejects
        (a UserError before any record) is removed again: a mistake leaves no empty run behind."""
        created = not self.run_dir.exists()
        lock = self.lock()
        try:
            self.create()
            lock.acquire()
        except OSError as exc:  # read-only, a file in the way, no permission: say where
            raise UserError(
                f"run directory {self.run_dir}: cannot write there ({exc.strerror or exc}); "
                "choose another output directory"
            ) from None
        try:
            yield
        except UserError:
            if created and not self.records_path.exists():
                lock.release()
                shutil.rmtree(self.run_dir, ignore_errors=True)
            raise
        finally:
            lock.release()

    # -- paths -----------------------------------------------------------------------------
    @property
    def records_path(self) -> Path:
        return self.run_dir / RECORDS

    @property
    def manifest_path(self) -> Path:
        return self.run_dir / MANIFEST

    @property
    def cache_dir(self) -> Path:
        return self.run_dir / "cache"

    def create(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)

    # -- records ---------------------------------------------------------------------------
    def load_records(self) -> dict[str, RunRecord]:
        """Records by unit key, the last line of each unit winning (``stale_lines`` counts the
        others). A truncated last line (a killed writer) is cut off the file; a corrupt line
        elsewhere is an error naming it."""
        self.stale_lines = 0  # lines a later line of the same unit replaces (compact() drops them)
        if not self.records_path.exists():
            return {}
        data = self.records_path.read_bytes()
        records: dict[str, RunRecord] = {}
        offset = 0
        lines = data.split(b"\n")
        for number, line in enumerate(lines, start=1):
            is_last = number == len(lines)
            if not line.strip():
                offset += len(line) + 1
                continue
            try:
                record = RunRecord.model_validate_json(line)
            except ValidationError as exc:
                if is_last:  # written partly when the process died: forget it
                    self._truncate(offset)
                    log.warning(
                        "%s: cut a torn last line (%d bytes, a record an interrupted run was "
                        "writing); its unit runs again",
                        self.records_path,
                        len(line),
                    )
                    break
                raise UserError(
                    f"{self.records_path}, line {number}: corrupt record: {exc.errors()[0]['msg']}"
                ) from None
            self.stale_lines += record.key.as_str() in records
            records[record.key.as_str()] = record  # a unit run again (a retried failure) keeps its last line
            offset += len(line) + 1
            if is_last:  # complete JSON but no newline yet: finish the line
                with self.records_path.open("ab") as fh:
                    fh.write(b"\n")
        return records

    def compact(self, records: dict[str, RunRecord]) -> None:
        """Rewrite records.jsonl with one line per unit (after failed units were re-run)."""
        text = "".join(self.redactor.json_line(r.model_dump_json()) + "\n" for r in records.values())
        with self._lock:
            _atomic_write(self.records_path, text)

    def _truncate(self, size: int) -> None:
        with self.records_path.open("r+b") as fh:
            fh.truncate(size)
            fh.flush()
            os.fsync(fh.fileno())

    def append(self, record: RunRecord) -> None:
        """Durably add one record: the line is on disk before this returns."""
        line = self.redactor.json_line(record.model_dump_json()) + "\n"
        with self._lock, self.records_path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    # -- manifest, questions, metrics ------------------------------------------------------
    def read_manifest(self) -> RunManifest | None:
        if not self.manifest_path.exists():
            return None
        return _read_model(self.manifest_path, 1, RunManifest, self.manifest_path.read_bytes())

    def write_manifest(self, manifest: RunManifest) -> None:
        _atomic_write(
            self.manifest_path,
            json.dumps(self.redactor.data(manifest.model_dump(mode="json")), indent=2, ensure_ascii=False),
        )

    def write_questions(self, questions: Iterable[Question]) -> None:
        _atomic_write(
            self.run_dir / QUESTIONS, "".join(self.redactor.json_line(q.model_dump_json()) + "\n" for q in questions)
        )

    def read_questions(self) -> list[Question]:
        path = self.run_dir / QUESTIONS
        if not path.exists():
            return []
        return [
            _read_model(path, number, Question, line)
            for number, line in enumerate(path.read_bytes().splitlines(), 1)
            if line.strip()
        ]

    def write_metrics(self, metrics: "RunMetrics") -> None:
        text = metrics.model_dump_json(indent=2)
        if self.redactor.needed(text):
            text = json.dumps(self.redactor.data(json.loads(text), by_name=False), indent=2, ensure_ascii=False)
        _atomic_write(self.run_dir / METRICS, text)

    def read_run_metrics(self) -> "RunMetrics | None":
        path = self.run_dir / METRICS
        if not path.exists():
            return None
        try:
            return RunMetrics.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            error = exc.errors()[0]
            raise UserError(f"{path}: field {'.'.join(map(str, error['loc']))}: {error['msg']}") from None

    def read_metrics(self) -> dict[str, Any]:
        """metrics.json as plain JSON data (validated), {} before a run has finished."""
        metrics = self.read_run_metrics()
        return metrics.model_dump(mode="json") if metrics is not None else {}


METRICS_FORMAT_VERSION = 1


class RunMetrics(BaseModel):
    """metrics.json: run-level metric values, metric errors and the exclusion step's result.
    ``format_version`` says how to read it; files written before it existed are version 1."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = METRICS_FORMAT_VERSION
    values: list[MetricValue] = Field(default_factory=list)
    errors: dict[str, str] = Field(default_factory=dict, description="metric key -> why aggregate failed")
    excluded: list[str] = Field(default_factory=list, description="question ids left out of intervention analysis")
    exclusion: dict[str, Any] = Field(default_factory=dict, description="the suite's exclusion settings")
    written_at: str = Field(default_factory=utc_now)

    @field_validator("format_version")
    @classmethod
    def _readable(cls, version: int) -> int:
        if version > METRICS_FORMAT_VERSION:
            raise ValueError(
                f"format_version {version} is newer than this provbench reads "
                f"({METRICS_FORMAT_VERSION}); upgrade provbench"
            )
        return version


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


# -- export -----------------------------------------------------------------------------------


def flat_row(record: RunRecord) -> dict[str, Any]:
    """One record as a flat row: key, status, answer, footprint, cost, leak check, every score
    (``score.<name>``). The one flattening every export uses (CSV, parquet, JSON lines, pandas)."""
    trace = record.trace
    row: dict[str, Any] = {
        "question_id": record.key.question_id,
        "system": record.key.system,
        "condition": record.key.condition,
        "repeat": record.key.repeat,
        "variant": record.key.variant,
        "status": record.status,
        "error": record.error or "",
        "gold": record.gold,
        "answer": trace.answer if trace and trace.answer is not None else "",
        "outcome": trace.outcome if trace else "",
        "confidence": trace.confidence if trace else None,
        "seed": record.seed,
        "steps": len(trace.steps) if trace else 0,
        "llm_calls": len(trace.llm_calls) if trace else 0,
        "tokens": trace.tokens if trace else 0,
        "cost_usd": _known_cost(trace.llm_calls) if trace else None,
        "wall_time_s": trace.wall_time_s if trace else None,
        "leak_check": leak_status(record) or "",
    }
    if trace is not None:
        row.update(trace.footprint())
    row.update({f"score.{name}": value for name, value in sorted(record.scores.items())})
    return row


def leak_status(record: RunRecord) -> str | None:
    """The leak guard's verdict on a record (clean, leaked, no-effect, not-checkable), None when
    the record carries none (a baseline, a context-level intervention, or a run before the guard)."""
    return record.leak_check.status if record.leak_check is not None else None


def flat_rows(records: Iterable[RunRecord], questions: dict[str, Question]) -> list[dict[str, Any]]:
    """One :func:`flat_row` per record with its question's text, type and category, in export
    order (system, condition, repeat, question, variant)."""
    out = []
    for record in sorted(records, key=sort_key):
        q = questions.get(record.key.question_id)
        row = flat_row(record)
        row.update(
            {
                "question": q.question if q else "",
                "question_type": q.type if q else "",
                "category": q.category if q else "",
            }
        )
        out.append(row)
    return out


def columns_of(rows: list[dict[str, Any]]) -> list[str]:
    """Every column of ``rows`` in first-seen order, the question's own columns after its id."""
    columns = list(dict.fromkeys(c for row in rows for c in row))
    front = [c for c in ("question_id", "question", "question_type", "category") if c in columns]
    return front + [c for c in columns if c not in front]


def _read_model(path: Path, line: int, model: type[BaseModel], data: bytes) -> Any:
    """``model`` from one JSON document of a run directory's file, or an error naming file, line
    and field (a damaged file: provbench never writes one, but a disk, an editor or a copy can)."""
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(map(str, error["loc"])) or "(the document)"
        raise UserError(
            f"{path}:{line}: field {field}: {error['msg']}; the file is damaged: restore it, or "
            "start the run in a new directory"
        ) from None


def export_csv(run_dir: str | Path, path: str | Path | None = None, records: Iterable[RunRecord] | None = None) -> Path:
    """Write every record as one CSV row (stdlib csv, the columns of :func:`flat_rows`); returns the
    file. ``records``: the run's records when the caller holds them already (else they are read
    from the run directory)."""
    run_dir = Path(run_dir)
    store = RunStore(run_dir)
    records = store.load_records().values() if records is None else records
    rows = flat_rows(records, {q.id: q for q in store.read_questions()})
    return write_csv(rows, Path(path) if path else run_dir / CSV_EXPORT)


def write_csv(rows: list[dict[str, Any]], target: Path) -> Path:
    """``rows`` as CSV (the columns of :func:`columns_of`, a value a row lacks empty)."""
    with target.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns_of(rows), restval="")
        writer.writeheader()
        writer.writerows(rows)
    return target


def _known_cost(calls: list[Any]) -> float | None:
    """The calls' dollars, or None (empty in the CSV) when one of them has no price."""
    return None if any(c.cost_usd is None for c in calls) else round(sum(c.cost_usd for c in calls), 8)


def sort_key(record: RunRecord) -> tuple:
    """Exports' row order: system, condition, repeat, question, variant."""
    k = record.key
    return (k.system, k.condition, k.repeat, k.question_id, k.variant)
