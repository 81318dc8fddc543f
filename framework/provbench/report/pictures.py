"""Subgraph pictures drawn while a run executes, so writing the report only reads them.

A record's picture (:mod:`.subgraph`) depends on its trace, its question's gold and the knowledge
base alone, so the runner draws it on a background thread as soon as the record lands, while units
wait on the LLM; the report draws only what is still missing. Pictures are cached in the run
directory under ``pictures/``, keyed by what the picture marks (an empty file: nothing to
draw), and written by the driver like everything else there.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from ..model import BASELINE, Question, RunRecord
from . import subgraph

PICTURES_DIR = "pictures"
log = logging.getLogger(__name__)


def picture_key(marks: dict[str, list[str]]) -> str:
    payload = json.dumps([marks[k] for k in subgraph.MARK_KINDS])
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def record_marks(record: RunRecord, question: Question | None, view: Any) -> dict[str, list[str]] | None:
    """What ``record``'s picture marks, or None when it gets none: a baseline with a trace that
    visited or cited entities gets one; an intervention's record only when its intervention hid
    entities or relations (the picture shows what it hid)."""
    trace = record.trace
    if trace is None or not (trace.visited_entities or trace.citations.entities):
        return None
    hidden = trace.artifacts.get("hidden_by_intervention") or {}
    if record.key.condition != BASELINE and not {"entities", "relations", "invalidated"} & set(hidden):
        return None
    from ..kb.goldmap import map_gold

    gold = map_gold(view, question) if question is not None else None
    return subgraph.picture_marks(trace.visited_entities, trace.citations.entities, gold, hidden)


def record_picture(
    run_dir: Path | None,
    view: Any,
    record: RunRecord,
    question: Question | None,
    draw: Callable[[dict], str | None] = subgraph.draw_subgraph,
) -> str | None:
    """``record``'s subgraph picture (None: it gets none), from the run's cache when drawn before."""
    marks = record_marks(record, question, view)
    return None if marks is None else cached_picture(run_dir, view, marks, draw)


def cached_picture(
    run_dir: Path | None,
    view: Any,
    marks: dict[str, list[str]],
    draw: Callable[[dict], str | None] = subgraph.draw_subgraph,
) -> str | None:
    """The picture of ``marks`` from the run's cache, drawn (by ``draw``) and cached when missing."""
    path = Path(run_dir) / PICTURES_DIR / f"{picture_key(marks)}.svg" if run_dir else None
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8") or None
    svg = draw(subgraph.subgraph_data(view, marks))
    if path is not None:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(svg or "", encoding="utf-8")
        os.replace(tmp, path)
    return svg


class PictureAhead:
    """Draws baseline records' pictures while the run goes on: one background thread reads each
    picture's subgraph, a child process (:mod:`.drawer`) draws it, so drawing takes neither the
    GIL nor the units' core."""

    def __init__(self, run_dir: Path, view: Any, questions: dict[str, Question]) -> None:
        from .drawer import Drawer

        self.run_dir, self.view, self.questions = run_dir, view, questions
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pictures")
        self._drawer = Drawer()
        self._pending: list[Future] = []

    def record_landed(self, record: RunRecord) -> None:
        trace = record.trace
        if trace is not None and (trace.visited_entities or trace.citations.entities):
            self._pending.append(self._pool.submit(self._draw, record))

    def _draw(self, record: RunRecord) -> None:
        try:
            record_picture(
                self.run_dir, self.view, record, self.questions.get(record.key.question_id), draw=self._drawer.draw
            )
        except Exception as exc:  # noqa: BLE001 - the report tries again and says why
            log.debug("picture ahead of the report failed: %s", exc)

    def close(self) -> None:
        """Stop: pictures not started yet are left to the report (the KB closes after this)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._drawer.close()
