"""Subgraph pictures drawn while a run executes, so writing the report only reads them.

A baseline record's picture (paper 000's Figure 2) depends on its trace and the knowledge base
alone, so the runner draws it on a background thread as soon as the record lands, while units
wait on the LLM; the report draws only what is still missing. Pictures are cached in the run
directory under ``pictures/``, keyed by the visited and cited entities (an empty file: nothing to
draw), and written by the driver like everything else there.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable

from ..model import BASELINE, RunRecord
from . import charts

PICTURES_DIR = "pictures"
log = logging.getLogger(__name__)


def picture_key(visited: Iterable[str], cited: Iterable[str]) -> str:
    payload = json.dumps([list(dict.fromkeys(visited)), sorted(set(cited))])
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def cached_picture(run_dir: Path | None, view: Any, visited: list[str], cited: list[str],
                   draw: Callable[[dict], str | None] = charts.draw_subgraph) -> str | None:
    """The trace's subgraph picture from the run's cache, drawn (by ``draw``) and cached when missing."""
    path = Path(run_dir) / PICTURES_DIR / f"{picture_key(visited, cited)}.svg" if run_dir else None
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8") or None
    svg = draw(charts.subgraph_data(view, visited, cited))
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

    def __init__(self, run_dir: Path, view: Any) -> None:
        from .drawer import Drawer

        self.run_dir, self.view = run_dir, view
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pictures")
        self._drawer = Drawer()
        self._pending: list[Future] = []

    def record_landed(self, record: RunRecord) -> None:
        trace = record.trace
        if record.key.condition != BASELINE or trace is None or not (trace.visited_entities or trace.citations.entities):
            return
        self._pending.append(self._pool.submit(self._draw, list(trace.visited_entities),
                                               list(trace.citations.entities)))

    def _draw(self, visited: list[str], cited: list[str]) -> None:
        try:
            cached_picture(self.run_dir, self.view, visited, cited, draw=self._drawer.draw)
        except Exception as exc:  # noqa: BLE001 - the report tries again and says why
            log.debug("picture ahead of the report failed: %s", exc)

    def close(self) -> None:
        """Stop: pictures not started yet are left to the report (the KB closes after this)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._drawer.close()
