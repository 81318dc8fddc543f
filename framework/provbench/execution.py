"""Executing a run's units: a scheduler without phase barriers, on a pluggable executor.

An intervention unit needs only its own baseline record (and, when the exclusion step is on,
the reference system's baseline for the same question), so the scheduler plans a question x
system's intervention units the moment those records land instead of waiting for every
baseline. Ready interventions go ahead of baselines that unlock nothing, which keeps the
longest chains (agent baseline, then its ablations) moving.

Executors run :func:`provbench.units.run_unit` somewhere and hand back records:

* ``threads`` (default): :mod:`provbench.workers`, ``suite.concurrency`` worker threads in this process;
* ``ray``: :mod:`provbench.ray_executor`, units on Ray workers (every core, or a cluster).

Whatever the executor, the driver (this process) is the only writer of the run directory: it
appends each record and stores the LLM-cache entries a remote unit brings back. The executor
also decides where a knowledge base built for the run embeds (:func:`kb_embedding`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Protocol

from .model import RunRecord, UnitKey
from .results.rules import answered_by_reference

if TYPE_CHECKING:
    from pathlib import Path

    from .units import RunContext, Unit
    from .run_store import RunStore
    from .suite import ExecutorSpec, Suite

log = logging.getLogger(__name__)


class Executor(Protocol):
    def submit(self, unit: "Unit", baseline: RunRecord | None) -> Future:
        """Start one unit; the future's result is its RunRecord (a unit's failure is a failed record)."""

    def shutdown(self) -> None:
        """Drop queued units and release workers (recorded units stay)."""


def make_executor(ctx: "RunContext", run_unit: Callable[..., RunRecord]) -> Executor:
    """The suite's executor running ``run_unit(ctx, unit, baseline)`` (passed in: this module is below the runner)."""
    spec = ctx.suite.executor
    if spec.kind == "ray":
        from .ray_executor import RayExecutor

        return RayExecutor(ctx, run_unit, address=spec.address, workers=spec.workers)
    from .workers import ThreadExecutor

    return ThreadExecutor(ctx, run_unit)


def baseline_key(question_id: str, system: str) -> str:
    return UnitKey(question_id=question_id, system=system).as_str()


class Scheduler:
    """Hands units to an executor as their inputs become ready; records each result as it lands.

    ``plan(question_id, system)`` returns a pair's intervention units once the records they need
    exist; ``on_record(record)`` stores a finished record (append, hooks, progress); a unit still
    running ``suite.unit_timeout_s`` after it started is abandoned and recorded as failed;
    ``on_planned(planned, already_recorded)`` counts units as they are planned. ``stop()`` returns
    why no more units may start (a budget reached), or None: then units already started finish,
    the rest stay unrun (``stopped`` says why, ``left`` how many were ready).
    """

    def __init__(
        self,
        ctx: "RunContext",
        done: dict[str, RunRecord],
        plan: Callable[[str, str], list["Unit"]],
        on_record: Callable[[RunRecord], None],
        on_planned: Callable[[int, int], None] = lambda planned, recorded: None,
        stop: Callable[[], str | None] | None = None,
    ) -> None:
        suite = ctx.suite
        self.ctx, self.done, self.plan, self.on_record, self.on_planned = ctx, done, plan, on_record, on_planned
        self.window = suite.concurrency
        self.targets = set(suite.targets_of_interventions()) if suite.interventions else set()
        reference = suite.exclusion.reference_system
        self.reference = reference if suite.exclusion.enabled and reference in suite.system_names else None
        self.waiting = {(q, s) for q in ctx.questions for s in self.targets}  # pairs not yet planned
        self.ready: deque["Unit"] = deque()
        self.rerun = set(getattr(ctx, "retry", ()))  # recorded (failed) units to run again: not yet usable
        self.planned_keys: set[str] = set()
        self.planned_pairs: set[tuple[str, str]] = set()  # (question, system) pairs whose interventions were planned
        self.stop = stop or (lambda: None)
        self.stopped: str | None = None
        self.left = 0
        self.timeout_s = suite.unit_timeout_s

    def run(self, baselines: list["Unit"], executor: Executor) -> None:
        # the longest chains of work first (a costly baseline that unlocks interventions), then
        # question by question so pairs unlock early; a run's tail is then short units, not a long one
        order = {q: n for n, q in enumerate(self.ctx.questions)}
        chain = self._chain_costs()
        self.ctx.executor = executor  # the runner closes what units use once they are done (after_units)
        self._queue(sorted(baselines, key=lambda u: (-chain[u.key.system], order[u.key.question_id])))
        self._plan_ready()
        in_flight: dict[Future, tuple["Unit", float]] = {}  # unit, and when it must be done by
        try:
            while in_flight or (self.ready and not self.stopped):
                while self.ready and len(in_flight) < self.window and not self._stopping():
                    unit = self.ready.popleft()
                    future = executor.submit(unit, self._baseline_of(unit))
                    in_flight[future] = (unit, time.monotonic() + self.timeout_s)
                if not in_flight:  # the budget stopped the run before another unit started
                    break
                next_deadline = min(deadline for _, deadline in in_flight.values())
                finished, _ = wait(
                    in_flight, timeout=max(0.0, next_deadline - time.monotonic()), return_when=FIRST_COMPLETED
                )
                for future in finished:
                    self._land(self._record_of(future, in_flight.pop(future)[0]))
                for future in self._overdue(in_flight):
                    unit, _ = in_flight.pop(future)
                    getattr(executor, "abandon", lambda f: None)(future)
                    self._land(
                        self._failed(
                            unit,
                            f"timed out: the unit ran longer than unit_timeout_s "
                            f"({self.timeout_s:g} s) and was abandoned",
                        )
                    )
            self.left = len(self.ready) if self.stopped else 0
        finally:  # on Ctrl-C, drop queued and running units at once; recorded ones stay
            executor.shutdown()

    def _land(self, record: RunRecord) -> None:
        self.done[record.key.as_str()] = record
        self.rerun.discard(record.key.as_str())
        self.on_record(record)
        if record.key.condition == "baseline":
            self._plan_ready()

    def _record_of(self, future: Future, unit: "Unit") -> RunRecord:
        """The unit's record; an exception that escaped it (a plugin's ``sys.exit`` while scoring,
        a lost Ray worker) makes it a failed record instead of ending the run."""
        error = future.exception()  # the future is done: this never waits
        if error is None:
            return future.result()
        return self._failed(unit, f"{type(error).__name__}: {error}")

    def _failed(self, unit: "Unit", reason: str) -> RunRecord:
        from .units import failed_record

        return failed_record(self.ctx, unit, reason)

    @staticmethod
    def _overdue(in_flight: dict[Future, tuple["Unit", float]]) -> list[Future]:
        now = time.monotonic()
        return [f for f, (_, deadline) in in_flight.items() if deadline <= now and not f.done()]

    def _stopping(self) -> bool:
        self.stopped = self.stopped or self.stop()
        return self.stopped is not None

    def _chain_costs(self) -> dict[str, float]:
        """Per system, the expected LLM calls of its baseline plus what it unlocks: its own
        interventions (about its cost again) and, for the exclusion reference, the costliest target's."""
        from .units import expected_system_calls

        suite = self.ctx.suite
        cost = {
            ref.key: expected_system_calls(self.ctx.registry.create("system", ref.name, **ref.options), ref.key)[0]
            for ref in suite.systems
        }
        unlocked = max((cost[t] for t in self.targets if t in cost), default=0.0)
        return {
            key: c + (c if key in self.targets else 0.0) + (unlocked if key == self.reference else 0.0)
            for key, c in cost.items()
        }

    def _queue(self, units: list["Unit"], first: bool = False) -> None:
        todo = [u for u in units if u.key.as_str() not in self.done or u.key.as_str() in self.rerun]
        self.planned_keys |= {u.key.as_str() for u in units}
        self.on_planned(len(units), len(units) - len(todo))
        if first:
            self.ready.extendleft(reversed(todo))
        else:
            self.ready.extend(todo)

    def _plan_ready(self) -> None:
        """Plan every waiting (question, system) pair whose baseline (and reference) records exist."""
        for question_id, system in sorted(self.waiting):
            if not self._recorded(baseline_key(question_id, system)):
                continue
            if self.reference is not None:
                reference_key = baseline_key(question_id, self.reference)
                if not self._recorded(reference_key):
                    continue
                reference = self.done[reference_key]
                if answered_by_reference([reference], self.reference):  # the exclusion step
                    self.waiting.discard((question_id, system))
                    continue
            self.waiting.discard((question_id, system))
            self.planned_pairs.add((question_id, system))
            self._queue(self.plan(question_id, system), first=True)

    def _recorded(self, key: str) -> bool:
        return key in self.done and key not in self.rerun

    def _baseline_of(self, unit: "Unit") -> RunRecord | None:
        if unit.intervention is None:
            return None
        return self.done.get(baseline_key(unit.key.question_id, unit.key.system))


def after_units(ctx: "RunContext | None", action: Callable[[], None]) -> None:
    """``action`` (closing the knowledge base) once no unit of the run is still running: now, or
    when the last one left running after Ctrl-C or a timeout returns (never, for a unit hung for good)."""
    when_idle = getattr(getattr(ctx, "executor", None), "when_idle", None)
    if when_idle is None:
        action()
    else:
        when_idle(action)


def executor_session(spec: "ExecutorSpec") -> ContextManager[Any]:
    """Around a whole run: the ``ray`` executor keeps one Ray running (KB embedding, then units)."""
    if spec.kind != "ray":
        return contextlib.nullcontext()
    from .ray_executor import ray_session

    return ray_session(spec.address)


def kb_embedding(spec: "ExecutorSpec") -> ContextManager[Any]:
    """Around a knowledge-base build: with the ``ray`` executor its indices are embedded by a
    Ray Data job over ``spec.workers`` actors (default: the cluster's CPUs), else in this process."""
    if spec.kind != "ray":
        return contextlib.nullcontext()
    from .kb.ray_embed import ray_build_embedding

    return ray_build_embedding(spec.address, spec.workers)


# -- around the units: warm-up, read-only reopening, pictures drawn ahead of the report --


class WarmUp:
    """The embedding model, loading while a run starts. Over a knowledge base already built, a child
    process loads it and embeds the run's queries (``queries``, for
    :func:`provbench.kb.embeddings.query_embedder`): the run's process never imports the embedding
    stack, and the child loads on another core while the run imports litellm and opens the
    knowledge base. A knowledge base still to build needs the model here: a thread loads it."""

    def __init__(self, kb_built: bool) -> None:
        self.queries, self._thread = None, None
        if kb_built:
            from .kb.embed_process import EmbeddingProcess

            self.queries = EmbeddingProcess()
        else:
            # the build imports LlamaIndex at once, and scipy looks up torch.Tensor whenever torch
            # is in sys.modules: both imported here first, not from two threads at once (that fails
            # at random, "partially initialized module 'torch' has no attribute 'Tensor'")
            import llama_index.core  # noqa: F401 - imported for its side effect, see above

            with contextlib.suppress(ImportError):  # without torch the first search says so
                import torch  # noqa: F401 - imported for its side effect, see above

            self._thread = threading.Thread(target=self._load, name="warm-up", daemon=True)
            self._thread.start()

    @staticmethod
    def _load() -> None:
        try:
            from .kb.embeddings import embedding_model

            embedding_model()
        except Exception:  # the first search reports it properly
            log.debug("embedding model warm-up failed", exc_info=True)

    def before_units(self) -> None:
        """A model loading here is ready before the first unit (not inside the first ones); the
        child is not waited for: units that need no search start at once."""
        if self._thread is not None:
            self._thread.join()

    def close(self) -> None:
        if self.queries is not None:
            self.queries.close()


def warm_up_embeddings(suite: Suite, kb_dir: Path | None) -> WarmUp | None:
    """Start loading the embedding model for a run over ``kb_dir`` (None: the suite searches no
    knowledge base here, or its units run on Ray workers, which load their own)."""
    if suite.knowledge_base is None or suite.executor.kind != "threads" or kb_dir is None:
        return None
    from .kb import KnowledgeBase

    return WarmUp(KnowledgeBase.is_complete(kb_dir))


def warm_up_later_work(metrics: list[tuple[str, Any]], report: bool) -> threading.Event:
    """Slow imports the run needs after its first units (the metrics' own, e.g. ragas; the report's
    charts), on threads: done while units wait on the LLM, not inside the first scored unit or
    after the last one. Returns an event set when the metrics' part is done: scoring waits for it,
    since one package imported from two threads at once can fail to import."""
    ready = threading.Event()

    def metrics_part() -> None:
        try:
            for name, metric in metrics:
                try:
                    metric.warm_up()
                except Exception:  # scoring reports a real problem where it happens
                    log.debug("warm-up of metric %s failed", name, exc_info=True)
        finally:
            ready.set()

    threading.Thread(target=metrics_part, name="warm-up-metrics", daemon=True).start()
    if report:
        from .report import charts  # provbench's own modules here; only matplotlib on the thread

        threading.Thread(target=charts.warm_up, name="warm-up-charts", daemon=True).start()
    return ready


def reopen_read_only(kb: Any, kb_dir: Path) -> Any:
    """The same knowledge base opened read-only: the database lets many read-only openers share it."""
    from .kb import KnowledgeBase

    kb.close()
    return KnowledgeBase.open(kb_dir, read_only=True)


def pictures_ahead(ctx: RunContext, store: RunStore) -> Any:
    """The report's subgraph pictures, drawn while units wait on the LLM (None: the report has none)."""
    report = ctx.suite.report
    if ctx.view is None or not (report.per_question_pages and report.subgraph_pictures):
        return None
    from .report.pictures import PictureAhead

    return PictureAhead(store.run_dir, ctx.view, ctx.questions)
