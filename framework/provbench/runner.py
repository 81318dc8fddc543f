"""Run a suite: knowledge base, baselines, the exclusion step, interventions, scores, report.

A *unit* is one question x system x condition x repeat (:class:`provbench.model.UnitKey`).
It depends only on its inputs (the question, the plugin references, the baseline trace for an
intervention, a seed derived from the suite seed and the key) and on the LLM cache, so any
executor could run it (:mod:`provbench.execution`: threads by default, or Ray), and an
intervention unit starts as soon as its own baseline (and the exclusion step's reference) exists.
Each finished unit is scored and appended to ``records.jsonl`` straight away; a re-run skips
every unit already recorded, so an interrupted run resumes and a finished one makes no LLM call.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import platform
import random
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .errors import UserError
from .execution import reopen_read_only, warm_up_embeddings
from .model import Question, RunManifest, RunRecord, Trace, UnitKey, utc_now
from .plugin_api import (Environment, Intervention, MetricContext, Results, Variant, answered_by_reference,
                         compared_output)
from .locks import kb_build_lock
from .secrets import Redactor, redacted_logs
from .store import RunMetrics, RunStore, export_csv
from .suite import LoadedSuite, PluginRef, Suite, load_suite

if TYPE_CHECKING:
    import pluggy
    from rich.console import Console

    from .kb.types import KBStats
    from .registry import Registry

log = logging.getLogger(__name__)

KEY_PACKAGES = ("pydantic", "pluggy", "kuzu", "llama-index-core", "litellm", "ragas", "llama-cpp-python",
                "sentence-transformers", "networkx", "numpy", "scipy", "matplotlib", "jinja2")


# -- the context shared by every unit ------------------------------------------------------------

@dataclass
class RunContext:
    loaded: LoadedSuite
    registry: "Registry"
    questions: dict[str, Question]
    loader: Any
    llm: Any
    view: Any  # GraphView or None (a suite without a knowledge base)
    metrics: list[tuple[str, Any]] = field(default_factory=list)
    kb_dir: Path | None = None  # where remote workers open the knowledge base (read-only)
    retry: set[str] = field(default_factory=set)  # recorded units to run again (failed before)

    @property
    def suite(self) -> Suite:
        return self.loaded.suite


@dataclass(frozen=True)
class Unit:
    key: UnitKey
    system: PluginRef
    intervention: PluginRef | None = None
    seed: int = 0
    variant: Variant | None = None  # the variant of an enumerated intervention this unit runs


def unit_seed(base: int, key: UnitKey) -> int:
    """A stable seed per unit: the same key always gets the same seed, whatever the order."""
    digest = hashlib.sha256(f"{base}|{key.as_str()}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


# -- public entry points ---------------------------------------------------------------------------

def run_suite(suite_path: str | Path, model: str | None = None, limit: int | None = None,
              out: str | Path | None = None, console: "Console | None" = None, *,
              pm: "pluggy.PluginManager | None" = None, llm: Any = None, write_report: bool = True,
              retry_failed: bool = True) -> Path:
    """Run (or resume) a suite; returns the run directory. ``pm``/``llm`` let tests inject plugins and a scripted LLM.
    On resume, units recorded as failed run again unless ``retry_failed`` is False."""
    pm, registry = _plugins(pm)
    loaded = _load(suite_path, registry, model, limit)
    suite = loaded.suite
    redactor = Redactor.for_run(suite.model_dump(mode="json"))
    store = RunStore(Path(out) if out else Path("reports") / suite.name, redactor)
    loader = registry.create("dataset_loader", suite.dataset.loader)
    questions = _load_questions(loaded, loader)  # validated before the run directory exists
    _check_same_model(store, suite)
    with store.claim(), redacted_logs(redactor):
        done = store.load_records()
        warm_up = warm_up_embeddings(suite) if llm is None else None  # loads while litellm and the KB do
        llm = llm if llm is not None else _make_llm(suite, store.cache_dir)
        kb_dir, kb = _knowledge_base(loaded, registry, list(questions.values()), llm, console, store.run_dir.parent)
        try:
            manifest = _manifest(store, loaded, llm, kb_dir, pm, console)
            store.write_questions(questions.values())
            pm.hook.provbench_run_started(manifest=manifest, run_dir=store.run_dir)
            if kb is not None and suite.executor.kind != "threads":
                kb = reopen_read_only(kb, kb_dir)  # workers in other processes open it too
            ctx = RunContext(loaded, registry, questions, loader, llm, kb.view() if kb is not None else None,
                             kb_dir=kb_dir)
            ctx.metrics = [(ref.key, registry.create("metric", ref.name, **ref.options)) for ref in suite.metrics]
            ctx.retry = _failed_to_retry(done, questions, console) if retry_failed else set()
            retried = bool(ctx.retry)
            if warm_up is not None:
                warm_up.join()  # loaded once, before units start, not inside the first ones
            _execute(ctx, store, done, pm, console, draw_pictures=write_report)
            if retried:
                _drop_unplanned(ctx, done)
                store.compact(done)  # one line per unit again
            _finish(ctx, store, manifest, done, pm)
            if console is not None:
                failed = sum(r.status == "failed" for r in done.values())
                console.print(f"{len(done)} record(s) in {store.run_dir}" + (f", {failed} failed" if failed else ""))
        finally:
            if kb is not None:
                kb.close()
        if write_report:
            from .report import write_report as render

            render(store.run_dir, pm)
    return store.run_dir


def _failed_to_retry(done: dict[str, RunRecord], questions: dict[str, Question], console: "Console | None") -> set[str]:
    """Keys of this run's failed units: they run again (a fault may have healed since)."""
    failed = {key for key, record in done.items() if record.status == "failed" and record.key.question_id in questions}
    if failed:
        message = f"retrying {len(failed)} unit(s) that failed before (--no-retry-failed keeps them)"
        log.info(message)
        if console is not None:
            console.print(message)
    return failed


def _drop_unplanned(ctx: RunContext, done: dict[str, RunRecord]) -> None:
    """Failed intervention units of a question the exclusion step now leaves out (its baseline
    healed and answered correctly) are no longer part of the run: forget their old records."""
    excluded = excluded_questions(ctx.suite, done)
    for key in ctx.retry:
        if key in done and done[key].key.condition != "baseline" and done[key].key.question_id in excluded:
            del done[key]


def build_suite_kb(suite_path: str | Path, model: str | None = None, limit: int | None = None,
                   console: "Console | None" = None, *, pm: "pluggy.PluginManager | None" = None,
                   llm: Any = None) -> tuple[Path, "KBStats", bool]:
    """Build (or reuse) the knowledge base a suite declares: (directory, stats, reused)."""
    from .kb import KnowledgeBase

    _, registry = _plugins(pm)
    loaded = _load(suite_path, registry, model, limit)
    if loaded.suite.knowledge_base is None:
        raise UserError(f"{loaded.path}: the suite declares no knowledge_base")
    kb_dir = default_kb_dir(loaded, Path("reports"))
    reused = KnowledgeBase.is_complete(kb_dir)
    llm = llm if llm is not None else _make_llm(loaded.suite, kb_llm_cache_dir(kb_dir))
    loader = registry.create("dataset_loader", loaded.suite.dataset.loader)
    questions = list(_load_questions(loaded, loader).values())
    _, kb = _knowledge_base(loaded, registry, questions, llm, console, Path("reports"))
    try:
        return kb_dir, kb.stats(), reused
    finally:
        kb.close()


def kb_llm_cache_dir(kb_dir: Path) -> Path:
    """The builder's LLM cache sits beside the KB, so rebuilding a KB re-asks nothing."""
    return kb_dir.parent / (kb_dir.name + "-llm-cache")


def build_dataset_kb(dataset: str | Path, out: Path, *, loader: str | None, builder: str, model: str = "embedded",
                     limit: int | None = None, options: dict[str, Any] | None = None,
                     console: "Console | None" = None, llm: Any = None,
                     concurrency: int | None = None) -> tuple[Path, "KBStats", bool]:
    """Build (or reuse) a knowledge base straight from a dataset file: (directory, stats, reused).

    The LLM client allows ``concurrency`` calls at once; by default the builder's ``max_workers``
    option (the shared builder option), else 2.
    """
    from .kb import KnowledgeBase
    from .llm import make_llm

    _, registry = _plugins(None)
    _check_limit(limit)
    kb_dir = Path(out).resolve()
    reused = KnowledgeBase.is_complete(kb_dir)
    from .datainfo import resolve_loader

    questions = resolve_loader(registry, dataset, loader).load(dataset, limit=limit)
    if llm is None:
        workers = concurrency or (options or {}).get("max_workers") or 2
        llm = make_llm(model, cache_dir=kb_llm_cache_dir(kb_dir), max_concurrency=int(workers))
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    with _status(console, "building or reusing the knowledge base"), kb_build_lock(kb_dir):
        kb = registry.create("kb_builder", builder, **(options or {})).build(questions, kb_dir, llm)
    try:
        return kb_dir, kb.stats(), reused
    finally:
        kb.close()


# -- setup ------------------------------------------------------------------------------------------

def _plugins(pm: "pluggy.PluginManager | None") -> tuple["pluggy.PluginManager", "Registry"]:
    from .registry import build_registry, default_plugin_manager, default_registry

    if pm is None:
        return default_plugin_manager(), default_registry()
    return pm, build_registry(pm)


def _load(suite_path: str | Path, registry: "Registry", model: str | None, limit: int | None) -> LoadedSuite:
    loaded = load_suite(suite_path, registry)
    if model:
        loaded.suite.model.id = model
    if limit is not None:
        _check_limit(limit)
        loaded.suite.dataset.limit = limit
    return loaded


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")


def _check_same_model(store: RunStore, suite: Suite) -> None:
    """Resuming with another model would mix two models' answers in one run: refuse."""
    previous = store.read_manifest()
    used = previous.models.get("suite_model") if previous else None
    if used and used != suite.model.id:
        raise UserError(f"{store.run_dir} holds a run with model {used!r}, not {suite.model.id!r}; "
                        "pass --out with a new directory to run another model")


def _make_llm(suite: Suite, cache_dir: Path) -> Any:
    from .llm import make_llm

    return make_llm(suite.model.id, cache_dir=cache_dir, max_concurrency=suite.concurrency, **suite.model.params)


def _load_questions(loaded: LoadedSuite, loader: Any) -> dict[str, Question]:
    spec = loaded.suite.dataset
    questions = loader.load(loaded.dataset_source(), limit=spec.limit, seed=spec.seed, sample=spec.sample,
                            **spec.options)
    if not questions:
        raise UserError(f"{loaded.path}: dataset {spec.path!r} gave no questions")
    by_id: dict[str, Question] = {}
    for q in questions:
        if q.id in by_id:
            raise UserError(f"{loaded.path}: dataset {spec.path!r} has question id {q.id!r} twice")
        by_id[q.id] = q
    return by_id


def default_kb_dir(loaded: LoadedSuite, runs_root: Path) -> Path:
    """The suite's KB directory, or a cache dir keyed by dataset + builder + options + model."""
    spec = loaded.suite.knowledge_base
    assert spec is not None
    if spec.directory:
        return (loaded.base_dir / spec.directory).resolve()
    d = loaded.suite.dataset
    inputs = {"dataset": d.path, "dataset_sha": _file_sha(loaded.dataset_source()), "loader": d.loader, "options": d.options,
              "limit": d.limit, "seed": d.seed, "sample": d.sample, "builder": spec.builder,
              "builder_options": spec.options, "model": loaded.suite.model.id}
    if spec.graph_store != "kuzu":  # keeps the keys of existing Kùzu KBs unchanged
        inputs["graph_store"] = spec.graph_store
    digest = hashlib.sha256(repr(sorted(inputs.items())).encode()).hexdigest()[:16]
    return (runs_root / ".kb-cache" / f"{spec.builder}-{digest}").resolve()


def _file_sha(source: str) -> str:
    path = Path(source)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _knowledge_base(loaded: LoadedSuite, registry: "Registry", questions: list[Question], llm: Any,
                    console: "Console | None", runs_root: Path) -> tuple[Path | None, Any]:
    from .kb.backends import default_graph_store
    from .kb.store import graph_store_of

    spec = loaded.suite.knowledge_base
    if spec is None:
        return None, None
    kb_dir = default_kb_dir(loaded, runs_root)
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    builder = registry.create("kb_builder", spec.builder, **spec.options)
    if console is not None:
        console.print(f"knowledge base: {kb_dir}")
    with _status(console, "building or reusing the knowledge base"), kb_build_lock(kb_dir), \
            default_graph_store(spec.graph_store):
        kb = builder.build(questions, kb_dir, llm)
    if graph_store_of(kb_dir) != spec.graph_store:
        kb.close()
        raise UserError(f"{loaded.path}: knowledge base {kb_dir} lives in {graph_store_of(kb_dir)!r}, not the "
                        f"suite's graph_store {spec.graph_store!r}; give another directory")
    return kb_dir, kb


def _manifest(store: RunStore, loaded: LoadedSuite, llm: Any, kb_dir: Path | None,
              pm: "pluggy.PluginManager", console: "Console | None" = None) -> RunManifest:
    from .registry import build_registry, plugin_source

    previous = store.read_manifest()
    if previous is not None and previous.suite_sha256 != loaded.sha256:
        log.warning("%s changed since run %s started; its recorded units are kept", loaded.path, previous.run_id)
        if console is not None:
            console.print(f"[yellow]note:[/] {loaded.path} changed since this run started; recorded units are kept")
    suite = loaded.suite
    suite_dump = suite.model_dump(mode="json")
    if kb_dir is not None:
        suite_dump["knowledge_base"]["directory"] = str(kb_dir)
    manifest = RunManifest(
        run_id=previous.run_id if previous else uuid.uuid4().hex[:12],
        suite_name=suite.name, suite_path=str(loaded.path), suite=suite_dump, suite_sha256=loaded.sha256,
        models={"llm": str(getattr(llm, "model_id", suite.model.id)), "suite_model": suite.model.id},
        seeds=[suite.seed, suite.dataset.seed], versions=_versions(), git_revision=_git_revision(loaded.path),
        plugins={name: plugin_source(pm, plugin) for name, plugin in pm.list_name_plugin()},
        plugin_versions=build_registry(pm).versions(),
        created_at=previous.created_at if previous else utc_now())
    store.write_manifest(manifest)
    return manifest


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in ("provbench",) + KEY_PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def _git_revision(near: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=near.parent, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


# -- planning ---------------------------------------------------------------------------------------

def baseline_units(suite: Suite, questions: Iterable[str]) -> list[Unit]:
    units = []
    for ref in suite.systems:
        for qid in questions:
            key = UnitKey(question_id=qid, system=ref.key)
            units.append(Unit(key, ref, seed=unit_seed(suite.seed, key)))
    return units


def excluded_questions(suite: Suite, records: dict[str, RunRecord]) -> set[str]:
    """The suite's exclusion step over the baseline records so far."""
    if not suite.exclusion.enabled:
        return set()
    return answered_by_reference(records.values(), suite.exclusion.reference_system)


def intervention_units(ctx: RunContext, questions: Iterable[str],
                       done: dict[str, RunRecord] | None = None, systems: Iterable[str] | None = None) -> list[Unit]:
    """Units of every intervention x target system (among ``systems``, default all) x question:
    ``repeats`` of each, or, for an enumerated intervention, one per variant it lists from the
    baseline trace in ``done``."""
    suite, units, done = ctx.suite, [], done or {}
    only = set(systems) if systems is not None else None
    targets = [ref for ref in suite.systems
               if ref.key in suite.targets_of_interventions() and (only is None or ref.key in only)]
    for iref in suite.interventions:
        probe = ctx.registry.create("intervention", iref.name, **iref.options)
        repeats = suite.repeats if suite.repeats and probe.repeats > 1 else probe.repeats
        for sref in targets:
            if probe.level == "context" and not getattr(ctx.registry.create("system", sref.name, **sref.options),
                                                        "supports_resume", False):
                log.warning("skipping %s x %s: the system cannot resume from a perturbed context", iref.key, sref.key)
                continue
            for qid in questions:
                variants = _variants(ctx, probe, qid, sref.key, iref.key, done)
                if variants is not None:
                    units += [_variant_unit(suite, qid, sref, iref, v) for v in variants]
                    continue
                for repeat in range(repeats):
                    key = UnitKey(question_id=qid, system=sref.key, condition=iref.key, repeat=repeat)
                    units.append(Unit(key, sref, iref, seed=unit_seed(suite.seed, key)))
    return units


def _variants(ctx: RunContext, intervention: Intervention, qid: str, system: str, condition: str,
              done: dict[str, RunRecord]) -> list[Variant] | None:
    """The variants an enumerated intervention lists for one baseline trace (None: not enumerated,
    or no usable baseline, in which case one unit is planned and records why it could not run)."""
    baseline = done.get(UnitKey(question_id=qid, system=system).as_str())
    if baseline is None or baseline.status != "ok" or baseline.trace is None:
        return None
    rng = random.Random(unit_seed(ctx.suite.seed, UnitKey(question_id=qid, system=system, condition=condition)))
    variants = intervention.variants(ctx.questions[qid], baseline.trace.model_copy(deep=True), rng)
    if variants is None:
        return None
    ids = [v.id for v in variants]
    if len(set(ids)) != len(ids) or not all(ids):
        raise UserError(f"intervention {condition!r} listed variant ids that are empty or repeated for "
                        f"question {qid!r}: {ids}")
    return variants


def _variant_unit(suite: Suite, qid: str, sref: PluginRef, iref: PluginRef, variant: Variant) -> Unit:
    key = UnitKey(question_id=qid, system=sref.key, condition=iref.key, variant=variant.id)
    return Unit(key, sref, iref, seed=unit_seed(suite.seed, key), variant=variant)


# -- execution ---------------------------------------------------------------------------------------

def _execute(ctx: RunContext, store: RunStore, done: dict[str, RunRecord], pm: Any, console: Any,
             draw_pictures: bool = False) -> None:
    """Run every unit not yet recorded: interventions start as soon as their baselines exist."""
    from .execution import Scheduler, make_executor, pictures_ahead

    baselines = baseline_units(ctx.suite, list(ctx.questions))
    with _progress(console) as progress:
        task = progress.add_task("units", total=0)

        def planned(count: int, recorded_before: int) -> None:
            progress.update(task, total=(progress.tasks[0].total or 0) + count, advance=recorded_before)

        pictures = pictures_ahead(ctx, store) if draw_pictures else None

        def recorded(record: RunRecord) -> None:
            store.append(record)
            pm.hook.provbench_record_written(record=record, run_dir=store.run_dir)
            progress.advance(task)
            if pictures is not None:
                pictures.record_landed(record)

        plan = lambda qid, system: intervention_units(ctx, [qid], done, systems=[system])  # noqa: E731
        scheduler = Scheduler(ctx, done, plan, recorded, planned)
        try:
            scheduler.run(baselines, make_executor(ctx, run_unit))
        finally:
            if pictures is not None:
                pictures.close()
    ctx.retry -= scheduler.planned_keys  # what is left was not planned this time
    if console is not None and ctx.suite.interventions and ctx.suite.exclusion.enabled:
        excluded = excluded_questions(ctx.suite, done) & set(ctx.questions)
        console.print(f"exclusion step: {len(excluded)} question(s) answered correctly by "
                      f"{ctx.suite.exclusion.reference_system!r} left out of the interventions")


def run_unit(ctx: RunContext, unit: Unit, baseline: RunRecord | None = None) -> RunRecord:
    """One unit, scored. A system or LLM failure becomes a ``failed`` record, never an exception."""
    question = ctx.questions[unit.key.question_id]
    record = RunRecord(key=unit.key, gold=question.answer, seed=unit.seed, variant=unit.variant)
    started = time.perf_counter()
    try:
        trace = _produce_trace(ctx, unit, question, baseline)
        trace.wall_time_s = round(time.perf_counter() - started, 4)
    except Exception as exc:  # noqa: BLE001 - a unit's failure is data, not a crash
        log.debug("unit %s failed", unit.key.as_str(), exc_info=True)
        record.status, record.error = "failed", f"{type(exc).__name__}: {exc}"[:2000]
    else:
        record.trace = trace
        if trace.outcome == "failed":
            record.status, record.error = "failed", trace.error or "the system reported a failure"
    _score(ctx, record, question, baseline)
    record.finished_at = utc_now()
    return record


def _produce_trace(ctx: RunContext, unit: Unit, question: Question, baseline: RunRecord | None) -> Trace:
    system = ctx.registry.create("system", unit.system.name, **unit.system.options)
    env = Environment(view=ctx.view, llm=ctx.llm, seed=unit.seed, options=dict(unit.system.options))
    if unit.intervention is None:
        return system.run(question, env)
    if baseline is None or baseline.status != "ok" or baseline.trace is None:
        raise RuntimeError("no usable baseline trace for this question and system; the intervention cannot apply")
    intervention: Intervention = ctx.registry.create("intervention", unit.intervention.name, **unit.intervention.options)
    rng = random.Random(unit.seed)
    chosen = {"variant": unit.variant} if unit.variant is not None else {}
    if intervention.level == "context":
        perturbed = intervention.perturb(question, baseline.trace.model_copy(deep=True), rng, **chosen)
        return system.resume(question, env, perturbed)
    env.view = intervention.make_view(ctx.view, question, baseline.trace, rng, **chosen)
    trace = system.run(question, env)
    if env.view is not None:  # record what this run could not see
        trace.artifacts["hidden_by_intervention"] = env.view.hidden.summary()
    return trace


def _score(ctx: RunContext, record: RunRecord, question: Question, baseline: RunRecord | None) -> None:
    """Dataset correctness, "output changed" against the baseline, then per-record metrics."""
    answer = record.trace.answer if record.status == "ok" and record.trace else None
    # the loader sees None only for a deliberate abstention (which may be the right reply to an
    # unanswerable question); a run that ended with no answer otherwise is scored as an empty one
    abstained = record.status == "ok" and record.trace is not None and record.trace.outcome == "abstained"
    prediction = answer if answer is not None or abstained else ""
    try:
        record.scores.update(ctx.loader.score_answer(question, prediction))
    except Exception as exc:  # noqa: BLE001
        record.score_notes["accuracy"] = f"scoring failed: {type(exc).__name__}: {exc}"[:500]
    if baseline is not None and baseline.trace is not None and record.status == "ok":
        # an abstention is its own output, never an empty answer (plugin_api.compared_output)
        record.scores["output_changed"] = float(compared_output(baseline.trace, ctx.loader.normalize)
                                                != compared_output(record.trace, ctx.loader.normalize))
    metric_ctx = metric_context(ctx)
    for name, metric in ctx.metrics:
        try:
            record.scores.update(metric.score(record, question, metric_ctx) or {})
        except Exception as exc:  # noqa: BLE001 - a judge failure leaves a note, never a crash
            record.score_notes[name] = f"{type(exc).__name__}: {exc}"[:500]


def metric_context(ctx: RunContext) -> MetricContext:
    return MetricContext(llm=ctx.llm, view=ctx.view, loader=ctx.loader)


# -- finishing ---------------------------------------------------------------------------------------

def _finish(ctx: RunContext, store: RunStore, manifest: RunManifest, done: dict[str, RunRecord], pm: Any) -> None:
    wanted = set(ctx.questions)
    records = [r for r in done.values() if r.key.question_id in wanted and r.key.system in ctx.suite.system_names]
    excluded = excluded_questions(ctx.suite, done) & wanted
    results = Results(records=records, questions=ctx.questions, excluded=excluded, loader=ctx.loader)
    values, errors = [], {}
    for name, metric in ctx.metrics:
        try:
            values += list(metric.aggregate(results, metric_context(ctx)))
        except Exception as exc:  # noqa: BLE001
            errors[name] = f"{type(exc).__name__}: {exc}"[:1000]
    store.write_metrics(RunMetrics(values=values, errors=errors, excluded=sorted(excluded),
                                   exclusion=ctx.suite.exclusion.model_dump()))
    manifest.finished_at = utc_now()
    store.write_manifest(manifest)
    export_csv(store.run_dir)
    pm.hook.provbench_run_finished(manifest=manifest, run_dir=store.run_dir)


# -- console helpers ----------------------------------------------------------------------------------

def _progress(console: Any):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=console is None, transient=False)


class _status:
    def __init__(self, console: Any, message: str):
        self._inner = console.status(message) if console is not None else None

    def __enter__(self):
        return self._inner.__enter__() if self._inner else None

    def __exit__(self, *exc: Any) -> None:
        if self._inner:
            self._inner.__exit__(*exc)
