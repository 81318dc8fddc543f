"""Units on worker threads of this process, the default executor (:mod:`provbench.execution`).

The workers are daemon threads of its own, not a ``ThreadPoolExecutor``: a thread cannot be
killed, and a pool waits for (and, at exit, joins) a hung one forever. A unit past its timeout is
abandoned instead (docs/reliability.md, "Hung units").
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Callable

from .model import RunRecord

if TYPE_CHECKING:
    from .units import RunContext, Unit

log = logging.getLogger(__name__)


class ThreadExecutor:
    """Units on worker threads in this process (they share the knowledge base and the LLM client).

    The workers are daemon threads of its own, not a ``ThreadPoolExecutor``: a thread cannot be
    killed, and a pool waits for (and, at exit, joins) a hung one forever. A unit past its
    timeout is :meth:`abandon`-ed instead: its worker is retired (if its plugin ever returns,
    the thread ends and its result is dropped) and a fresh worker takes its place, so the run
    keeps its concurrency; a daemon thread never keeps the process alive."""

    def __init__(self, ctx: "RunContext", run_unit: Callable[..., RunRecord]) -> None:
        self._run_unit = run_unit
        self._ctx = ctx
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._running: dict[Future, threading.Thread] = {}
        self._retired: set[threading.Thread] = set()
        self._when_idle: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._started = 0
        self._workers = [self._start_worker() for _ in range(ctx.suite.concurrency)]

    def _start_worker(self) -> threading.Thread:
        self._started += 1
        worker = threading.Thread(target=self._work, name=f"unit-{self._started}", daemon=True)
        worker.start()
        return worker

    def _work(self) -> None:
        me = threading.current_thread()
        while me not in self._retired:
            job = self._jobs.get()
            if job is None:
                return
            future, unit, baseline = job
            if not future.set_running_or_notify_cancel():
                continue
            with self._lock:
                self._running[future] = me
            record, error = None, None
            try:
                record = self._run_unit(self._ctx, unit, baseline)
            except BaseException as exc:  # noqa: BLE001 - even a plugin's SystemExit: the scheduler records it
                error = exc
            self._left(future)  # first: once the run has every record, nothing of a unit runs here
            if error is None:
                future.set_result(record)
            else:
                future.set_exception(error)

    def _left(self, future: Future) -> None:
        """A unit's thread is done with it; the last one out runs what waited for idle workers."""
        with self._lock:
            self._running.pop(future, None)
            actions, self._when_idle = (self._when_idle, []) if not self._running else ([], self._when_idle)
        for action in actions:
            action()

    def when_idle(self, action: Callable[[], None]) -> None:
        """Run ``action`` once no unit's code runs on a worker (now, if none does): after Ctrl-C or
        an abandoned unit, the knowledge base closes only when no thread can be inside a query."""
        with self._lock:
            if self._running:
                self._when_idle.append(action)
                return
        action()

    def submit(self, unit: "Unit", baseline: RunRecord | None) -> Future:
        future: Future = Future()
        self._jobs.put((future, unit, baseline))
        return future

    def abandon(self, future: Future) -> None:
        """Give up on a unit that overran its timeout: retire its worker, start another."""
        with self._lock:
            worker = self._running.get(future)  # still running: it leaves _running when it returns
            if worker is None:
                return
            self._retired.add(worker)
            self._workers = [w for w in self._workers if w is not worker] + [self._start_worker()]
        log.warning("abandoned the hung thread %s; %s replaces it", worker.name, self._workers[-1].name)

    def shutdown(self) -> None:
        """Stop the workers without waiting for a unit still running (on Ctrl-C, or a hung one)."""
        for _ in self._workers:
            self._jobs.put(None)
