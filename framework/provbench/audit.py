"""Runs that can be audited later, offline.

Every unit's record keeps what its LLMs were shown and replied (:class:`~provbench.model.RequestLog`:
the messages and replies, redacted, each distinct text once, zlib-compressed), and a unit under a
graph-level intervention keeps everything its view hid (:class:`~provbench.model.HiddenSet`: every
id, compressed, with its size and digest, the view's time and the intervention's notes).
:func:`audit_run` (``provbench audit RUN_DIR``) rebuilds each such unit's view from its record over
the run's knowledge base, replays the stored requests and re-runs the leak guard
(:func:`provbench.leakguard.check_unit`): no model is called. A record changed after the run (its
verdict, its requests, its hidden set) gives a different verdict, or fails its digest.

Size cap: a unit keeps up to :data:`MAX_LOG_CHARS` characters of distinct text (before compression;
an agent resending its history adds only its new messages). Requests past the cap keep only their
hash (``Trace.llm_calls``) and are counted in ``RequestLog.dropped``; the audit says so.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .capture import CapturedRequest
from .errors import UserError
from .model import HiddenSet, LLMCall, RequestLog, RunRecord, UnitKey

if TYPE_CHECKING:
    from .kb.view import GraphView

MAX_LOG_CHARS = 1_000_000


def _pack(data: Any) -> str:
    return base64.b64encode(zlib.compress(json.dumps(data, ensure_ascii=False).encode("utf-8"), 6)).decode("ascii")


def _unpack(text: str, what: str) -> Any:
    try:
        return json.loads(zlib.decompress(base64.b64decode(text)).decode("utf-8"))
    except (ValueError, zlib.error) as exc:
        raise UserError(f"{what}: cannot be read ({type(exc).__name__}: {exc}); was the record changed?") from None


# -- what a record keeps ----------------------------------------------------------------------------


def request_log(requests: Sequence[CapturedRequest], instructions: Sequence[str] = ()) -> RequestLog | None:
    """A unit's captured requests as its record keeps them, with its system's fixed instructions
    (which the leak guard reads the requests without); None: it made none."""
    if not requests:
        return None
    from .leakguard import _redactor

    redact = _redactor().text
    texts: dict[str, int] = {}  # each distinct text once: an agent resends its history
    rows: list[list[Any]] = []
    chars = dropped = 0

    def index(text: str) -> int:
        return texts.setdefault(text, len(texts))

    for request in requests:
        shown = [redact(text) for _, text in request.messages]
        reply = redact(request.reply) if request.reply is not None else None
        new = {t for t in (*shown, reply or "") if t not in texts}
        if chars + sum(map(len, new)) > MAX_LOG_CHARS:
            dropped += 1
            continue
        chars += sum(map(len, new))
        rows.append(
            [
                request.call.purpose,
                request.call.request_hash,
                [[role, index(text)] for (role, _), text in zip(request.messages, shown)],
                None if reply is None else index(reply),
                request.sent,
                request.replied,
            ]
        )
    fixed = [index(redact(text)) for text in instructions]  # mostly a message already kept
    return RequestLog(
        data=_pack({"texts": list(texts), "requests": rows, "instructions": fixed}),
        requests=len(rows),
        chars=chars,
        dropped=dropped,
    )


def logged_requests(log: RequestLog | None, where: str = "record") -> list[CapturedRequest]:
    """The requests a record keeps, as the leak guard reads captured ones ([] without a log)."""
    if log is None or not log.data:
        return []
    data = _unpack(log.data, f"{where}: requests")
    texts = data["texts"]
    return [
        CapturedRequest(
            messages=tuple((role, texts[i]) for role, i in messages),
            call=LLMCall(model="", purpose=purpose, request_hash=request_hash),
            reply=None if reply is None else texts[reply],
            sent=sent,
            replied=replied,
        )
        for purpose, request_hash, messages, reply, sent, replied in data["requests"]
    ]


def logged_instructions(log: RequestLog | None, where: str = "record") -> tuple[str, ...]:
    """The system's fixed instructions a record keeps with its requests (() without them)."""
    if log is None or not log.data:
        return ()
    data = _unpack(log.data, f"{where}: requests")
    return tuple(data["texts"][i] for i in data.get("instructions", []))


def hidden_set(view: "GraphView") -> HiddenSet:
    """Everything ``view`` hides, in full, as a record keeps it."""
    sets = view.hidden.as_dict()
    return HiddenSet(
        data=_pack(sets),
        size=sum(map(len, sets.values())),
        digest=_digest(sets),
        as_of=view.as_of_time,
        notes=list(view.notes),
    )


def hidden_ids(hidden: HiddenSet | None, where: str = "record") -> set[str] | None:
    """Every id a record's hidden set holds, as ``kind:id`` (None: the record keeps no hidden set)."""
    if hidden is None or not hidden.data:
        return None
    return {f"{kind}:{i}" for kind, ids in _unpack(hidden.data, f"{where}: hidden set").items() for i in ids}


def _digest(sets: dict[str, list[str]]) -> str:
    return hashlib.sha256(json.dumps(sets, sort_keys=True).encode("utf-8")).hexdigest()[:32]


def view_of(hidden: HiddenSet, base: "GraphView", where: str = "record") -> "GraphView":
    """The unit's view rebuilt over ``base``'s store; a hidden set that fails its digest is refused."""
    sets = _unpack(hidden.data, f"{where}: hidden set")
    if _digest(sets) != hidden.digest or sum(map(len, sets.values())) != hidden.size:
        raise UserError(f"{where}: the hidden set does not match its digest and size (the record was changed)")
    return base.restored(sets, hidden.as_of)


# -- the audit --------------------------------------------------------------------------------------


@dataclass
class Audited:
    """One unit: the verdict its record holds and the one the audit reached."""

    key: str
    recorded: str
    audited: str
    note: str = ""

    @property
    def same(self) -> bool:
        return self.recorded == self.audited


def audit_run(run_dir: str | Path) -> list[Audited]:
    """Re-run the leak guard on every checked unit of a finished run, from its records alone."""
    from .kb import KnowledgeBase
    from .results.data import load_run

    run = load_run(run_dir)
    directory = (run.suite.get("knowledge_base") or {}).get("directory")
    if not directory or not KnowledgeBase.is_complete(directory):
        raise UserError(f"{run_dir}: the run's knowledge base {directory!r} is not there; the audit reads it")
    records = {r.key.as_str(): r for r in run.records}
    kb = KnowledgeBase.open(directory, read_only=True)
    try:
        base = kb.view()
        return [
            audit_unit(record, run.questions, records, base) for record in run.records if record.leak_check is not None
        ]
    finally:
        kb.close()


def audit_unit(record: RunRecord, questions: dict, records: dict[str, RunRecord], base: "GraphView") -> Audited:
    from .leakguard import check_unit

    key, recorded = record.key.as_str(), record.leak_check.status
    if record.hidden is None or record.trace is None:
        return Audited(key, recorded, "not-checkable", "the record keeps no hidden set or trace")
    baseline = records.get(UnitKey(question_id=record.key.question_id, system=record.key.system).as_str())
    view = view_of(record.hidden, base, key)
    found = check_unit(
        view,
        questions[record.key.question_id],
        record.trace,
        _Replayed(logged_requests(record.requests, key), logged_instructions(record.requests, key)),
        baseline.trace if baseline is not None else None,
        record.leak_check.trace_ids,
        base=base,
        baseline_requests=logged_requests(baseline.requests, key) if baseline is not None else None,
    )
    dropped = record.requests.dropped if record.requests is not None else 0
    note = f"{dropped} request(s) over the size cap were not kept" if dropped else ""
    if found.status == recorded and found.checks != record.leak_check.checks:
        return Audited(key, f"{recorded} {record.leak_check.checks}", f"{found.status} {found.checks}", note)
    return Audited(key, recorded, found.status, note)


@dataclass
class _Replayed:
    requests: list[CapturedRequest]
    instructions: tuple[str, ...] = ()
