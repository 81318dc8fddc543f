"""Units on Ray workers (``executor: {kind: ray, address: auto}``; ``pip install 'provbench[ray]'``).

Each worker is a threaded Ray actor holding what a unit needs: the knowledge base opened
read-only, the plugins, the driver's dataset loader (pickled after it loaded the questions, so
the suite's loader options, e.g. FEVER's ``idk_credit``, score the workers' records too), the
metrics and an LLM client over the driver's backend (pickled: its settings, never a live
connection). A worker's LLM cache is a :class:`RecordingCache`: the replies a unit fetched
travel back with its record and the driver stores them in the run's cache, so the driver stays
the only writer of the run directory and a finished run re-runs with no call, whichever executor
ran it. The knowledge base's path must be readable by every worker (one machine, or a shared
file system).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import sqlite3
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .errors import UserError
from .model import Question, RunRecord

if TYPE_CHECKING:
    from .registry import Registry
    from .units import RunContext, Unit
    from .suite import LoadedSuite

log = logging.getLogger(__name__)
_unit_entries: contextvars.ContextVar[list | None] = contextvars.ContextVar("provbench_unit_cache", default=None)


class RecordingCache:
    """An in-memory LLM cache that also lists what each unit added (the ``ResponseCache`` interface).

    It reads through to the run's cache at ``run_cache`` when this worker can see that directory
    (one machine or a shared file system), so a resumed run or a retry makes no call the driver
    already paid for; it never writes there.
    """

    directory = Path("<ray worker>")

    def __init__(self, run_cache: str | None = None) -> None:
        self._entries: dict[str, dict[str, Any]] = {}
        self._run_cache = _open_for_reading(run_cache)
        self._orphans: list[tuple[str, dict[str, Any]]] = []  # added outside a unit's context
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._entries.get(key)
        if found is None and self._run_cache is not None:
            try:
                found = self._run_cache.get(key)
            except sqlite3.Error:  # the driver's cache is the driver's to repair: ask the LLM again
                found = None
        return found

    def put(self, key: str, reply: dict[str, Any]) -> None:
        with self._lock:
            self._entries[key] = reply
            target = _unit_entries.get()
            (target if target is not None else self._orphans).append((key, reply))

    def take_orphans(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            orphans, self._orphans = self._orphans, []
        return orphans

    def __len__(self) -> int:
        return len(self._entries)

    def close(self) -> None:
        if self._run_cache is not None:
            self._run_cache.close()


def _open_for_reading(directory: str | None) -> Any:
    """The run's diskcache at ``directory`` if this machine sees it (None otherwise: nothing is created)."""
    if not directory or not (Path(directory) / "cache.db").is_file():
        return None
    import diskcache

    try:
        return diskcache.Cache(directory)
    except sqlite3.Error:
        return None


@dataclass
class WorkerSpec:
    """Everything a worker needs to rebuild the run's context (picklable)."""

    loaded: "LoadedSuite"
    registry: "Registry"
    questions: dict[str, Question]
    loader: Any  # the driver's, configured by its load() call with the suite's options
    kb_dir: str | None
    llm_backend: Any
    llm_settings: dict[str, Any]
    cache_dir: str | None  # the run's LLM cache, read through where a worker can see it
    run_unit: Callable[..., RunRecord]  # the runner's, by reference (this module is below the runner)
    context_class: type
    judge: tuple[Any, dict[str, Any]] | None = None  # (backend, settings) of a judge apart from the systems' model

    @classmethod
    def from_context(cls, ctx: "RunContext", run_unit: Callable[..., RunRecord], workers: int = 1) -> "WorkerSpec":
        cache = getattr(ctx.llm.cache, "directory", None) if ctx.llm.cache is not None else None
        backend, settings = _client_parts(ctx.llm, workers)
        judge = _client_parts(ctx.judge, workers) if ctx.judge is not None else None
        return cls(
            ctx.loaded,
            ctx.registry,
            ctx.questions,
            ctx.loader,
            str(ctx.kb_dir) if ctx.kb_dir else None,
            backend,
            settings,
            str(cache) if cache else None,
            run_unit,
            type(ctx),
            judge,
        )

    def context(self) -> tuple["RunContext", Any, RecordingCache]:
        from .kb import KnowledgeBase
        from .llm import LLMClient

        llm = LLMClient(self.llm_backend, **self.llm_settings)
        cache = llm.cache = RecordingCache(self.cache_dir)
        judge = LLMClient(self.judge[0], **self.judge[1]) if self.judge is not None else None
        if judge is not None:
            judge.cache = cache  # its entries travel back with the unit's too
        kb = KnowledgeBase.open(self.kb_dir, read_only=True) if self.kb_dir else None
        suite = self.loaded.suite
        ctx = self.context_class(
            self.loaded,
            self.registry,
            self.questions,
            self.loader,
            llm,
            kb.view() if kb is not None else None,
            kb_dir=Path(self.kb_dir) if self.kb_dir else None,
            judge=judge,
        )
        ctx.metrics = [(ref.key, self.registry.create("metric", ref.name, **ref.options)) for ref in suite.metrics]
        return ctx, kb, cache


def _client_parts(llm: Any, workers: int) -> tuple[Any, dict[str, Any]]:
    """A client's backend and settings for a worker; its rate limits shared out between ``workers``."""
    settings = {
        "max_concurrency": llm.max_concurrency,
        "max_attempts": llm.max_attempts,
        "backoff_s": llm.backoff_s,
        "max_backoff_s": llm.max_backoff_s,
        "deadline_s": llm.deadline_s,
        "json_retries": llm.json_retries,
        "pinned_params": tuple(llm.pinned),
        **llm.default_params,
    }
    limiter = llm.rate_limiter
    if limiter is not None:
        from .llm.ratelimit import RateLimiter

        share = {k: math.ceil(v / workers) for k, v in limiter.spec.model_dump().items() if v}
        settings["rate_limiter"] = RateLimiter(limiter.spec.model_copy(update=share))
    return llm.backend, settings


class UnitWorker:
    """One worker process: runs units on its threads against one read-only knowledge base."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.ctx, self.kb, self.cache = spec.context()
        self.run_unit = spec.run_unit

    def run(self, unit: "Unit", baseline: RunRecord | None) -> tuple[RunRecord, list]:
        entries: list = []
        token = _unit_entries.set(entries)
        try:
            record = self.run_unit(self.ctx, unit, baseline)
        finally:
            _unit_entries.reset(token)
        return record, entries + self.cache.take_orphans()

    def ready(self) -> bool:
        """Answers once the worker is built (its knowledge base open, its plugins loaded)."""
        return True

    def close(self) -> None:
        if self.kb is not None:
            self.kb.close()


def _ray():
    try:
        import ray
    except ImportError:
        raise UserError("executor 'ray' needs Ray: pip install 'provbench[ray]'") from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None) -> Iterator[None]:
    """Ray running for the whole block (started here unless it already runs, stopped after if so):
    a run's KB embedding job and its units then share one Ray instead of starting it twice."""
    ray = _ray()
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        if started:
            ray.shutdown()


class RayExecutor:
    """Spreads units over ``workers`` Ray actors, each running several at once on threads.

    A unit past its timeout is :meth:`abandon`-ed as on threads: its actor is retired (it gets no
    more units, and is killed, with the hung thread in it, once no other unit runs there) and a
    fresh actor takes its place, so the run keeps its workers. An actor that dies (its process
    killed or crashed) is replaced the same way; its units are recorded failed by the scheduler."""

    def __init__(
        self,
        ctx: "RunContext",
        run_unit: Callable[..., RunRecord],
        address: str | None = None,
        workers: int | None = None,
    ) -> None:
        ray = self._ray = _ray()
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = max(1, min(workers or cpus, ctx.suite.concurrency))
        per_worker = math.ceil(ctx.suite.concurrency / count)
        self._spec = ray.put(WorkerSpec.from_context(ctx, run_unit, workers=count))
        self._actor = ray.remote(num_cpus=0)(UnitWorker).options(
            max_concurrency=per_worker, scheduling_strategy="SPREAD"
        )
        self._lock = threading.Lock()
        self._live = [self._start_actor() for _ in range(count)]
        self._retired: list[_Actor] = []
        try:  # built before the first unit: a unit's timeout counts from its start, not the workers'
            ray.get([actor.handle.ready.remote() for actor in self._live])
        except ray.exceptions.RayActorError as exc:
            self.shutdown()
            raise UserError(f"the Ray workers could not start: {exc}"[:2000]) from None
        self._cache = ctx.llm.cache

    def _start_actor(self) -> "_Actor":
        return _Actor(self._actor.remote(self._spec))

    def submit(self, unit: "Unit", baseline: RunRecord | None) -> Future:
        result: Future = Future()
        with self._lock:
            actor = min(self._live, key=lambda a: len(a.running))
            actor.running.add(result)
        remote = actor.handle.run.remote(unit, baseline).future()

        def landed(done: Future) -> None:  # on Ray's event loop: nothing here may wait on Ray (_off_the_loop)
            _off_the_loop(self._left, actor, result)
            try:
                record, entries = done.result()
                if self._cache is not None:  # the driver writes the run's cache, nobody else
                    for key, reply in entries:
                        self._cache.put(key, reply)
                result.set_result(record)
            except BaseException as exc:  # noqa: BLE001 - a lost worker surfaces in the driver
                if isinstance(exc, self._ray.exceptions.RayActorError):
                    _off_the_loop(self._replace, actor, False)
                result.set_exception(exc)

        remote.add_done_callback(landed)
        return result

    def abandon(self, future: Future) -> None:
        """Give up on a unit that overran its timeout: retire its actor, start another (and wait for it)."""
        with self._lock:
            actor = next((a for a in self._live + self._retired if future in a.running), None)
            if actor is None:
                return
            actor.running.discard(future)
        if self._replace(actor, wait=True) is not None:
            log.warning("abandoned a hung unit: its Ray worker is retired and a fresh one replaces it")

    def _replace(self, actor: "_Actor", wait: bool) -> "_Actor | None":
        """Retire ``actor`` (killed now if idle, else when its last unit leaves) and start a fresh one."""
        with self._lock:
            fresh = self._start_actor() if actor in self._live else None  # None: already replaced
            if fresh is not None:
                self._live = [a for a in self._live if a is not actor] + [fresh]
                self._retired.append(actor)
            idle = not actor.running
        if idle:
            self._kill(actor)
        if wait and fresh is not None:
            self._ray.get(fresh.handle.ready.remote())
        return fresh

    def _left(self, actor: "_Actor", result: Future) -> None:
        with self._lock:
            actor.running.discard(result)
            done_with = actor in self._retired and not actor.running
        if done_with:
            self._kill(actor)

    def _kill(self, actor: "_Actor") -> None:
        try:
            self._ray.kill(actor.handle)
        except Exception:  # noqa: BLE001 - already dead
            pass

    def shutdown(self) -> None:
        ray = self._ray
        for actor in self._live:
            try:
                ray.get(actor.handle.close.remote(), timeout=30)
            except Exception:  # noqa: BLE001 - a dead worker has nothing left to close
                pass
        for actor in self._live + self._retired:
            self._kill(actor)
        self._live, self._retired = [], []
        if self._started_ray:
            ray.shutdown()


def _off_the_loop(action: Callable[..., Any], *args: Any) -> None:
    """``action(*args)`` on a thread of its own: a future's callback runs on Ray's event loop, where
    a call that waits for Ray (``ray.kill``, ``ray.get``) never returns."""
    threading.Thread(target=action, args=args, name="ray-worker-upkeep", daemon=True).start()


@dataclass(eq=False)
class _Actor:
    """A Ray worker and the units it runs now (their futures)."""

    handle: Any
    running: set = field(default_factory=set)
