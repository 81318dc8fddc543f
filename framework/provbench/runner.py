"""Run a suite: knowledge base, baselines, the exclusion step, interventions, scores, report.

A *unit* is one question x system x condition x repeat (:class:`provbench.model.UnitKey`).
It depends only on its inputs (the question, the plugin references, the baseline trace for an
intervention, a seed derived from the suite seed and the key) and on the LLM cache, so any
executor could run it (:mod:`provbench.execution`: threads by default, or Ray), and an
intervention unit starts as soon as its own baseline (and the exclusion step's reference) exists.
Each finished unit is scored and appended to ``records.jsonl`` straight away; a re-run skips
every unit already recorded, so an interrupted run resumes and a finished one makes no LLM call.

Longer than 300 logical lines because :func:`run_suite` reads as the run goes (prepare, clients, knowledge
base and its checks, start, units, scores, summary, report), each step a short function below it, and the
knowledge-base entry points share its setup.
"""

from __future__ import annotations

import hashlib
import logging
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from .costs import Budget, spending_lines
from .errors import UserError
from .execution import (
    Scheduler,
    after_units,
    executor_session,
    kb_embedding,
    make_executor,
    pictures_ahead,
    reopen_read_only,
    warm_up_embeddings,
    warm_up_later_work,
)
from .jsonlines import input_errors
from .kb.embeddings import query_embedder
from .kb.health import check_run_kb, not_measurable_interventions
from .leakguard import leak_lines
from .llm_setup import check_budget_prices, check_same_models, make_judge, make_run_llm
from .manifest import check_same_settings, write_manifest
from .model import Question, RunManifest, RunRecord, utc_now
from .plugin_api import Results, with_left_out_notes
from .progress import status, unit_progress
from .secrets import Redactor, questions_with_secrets, redacted_logs, remember
from .run_store import RunMetrics, RunStore, export_csv
from .suite import ExecutorSpec, LoadedSuite, ModelSpec, Suite, load_suite
from .units import (
    RunContext,
    Unit,
    baseline_units,
    excluded_questions,
    intervention_units,
    metric_context,
    run_unit,
    unit_seed,
)

__all__ = [
    "run_suite",
    "prepare_suite",
    "build_suite_kb",
    "build_dataset_kb",
    "default_kb_dir",
    "suite_kb_dir",
    "kb_llm_cache_dir",
    "run_unit",
    "unit_seed",
    "RunContext",
    "Unit",
]

if TYPE_CHECKING:
    import pluggy
    from rich.console import Console

    from .kb.types import KBStats
    from .registry import Registry

log = logging.getLogger(__name__)


# -- public entry points ---------------------------------------------------------------------------


def run_suite(
    suite_path: "str | Path | LoadedSuite",
    model: str | None = None,
    limit: int | None = None,
    out: str | Path | None = None,
    console: "Console | None" = None,
    *,
    pm: "pluggy.PluginManager | None" = None,
    llm: Any = None,
    write_report: bool = True,
    retry_failed: bool = True,
    judge: str | None = None,
    kb_llm: Any = None,
) -> Path:
    """Run (or resume) a suite (a file, or one already loaded); returns the run directory.
    ``pm``/``llm`` let tests inject plugins and a scripted LLM; ``kb_llm`` builds the knowledge
    base (default: the run's LLM). On resume, units recorded as failed run again unless
    ``retry_failed`` is False. ``judge`` overrides the suite's judge model (the LLM of every
    LLM-judged metric). The LLMs receive the loaded questions (``bind_questions``) first."""
    pm, registry = _plugins(pm, suite_path)
    loaded, store, loader, questions = _prepare(suite_path, registry, model, limit, judge, out, llm)
    suite = loaded.suite
    with store.claim(), redacted_logs(store.redactor), executor_session(suite.executor), ExitStack() as closing:
        done = store.load_records()
        earlier = dict(done)  # records of earlier runs: their LLM calls are not this run's
        if store.stale_lines:  # a run killed between retrying units and compacting: one line per unit first
            store.compact(done)
        warm_up = _warm_up(loaded, store, questions, done, llm)
        if warm_up is not None:
            closing.callback(warm_up.close)
        llm, judge_llm = _clients(suite, store, llm, questions)
        builder_llm = kb_llm if kb_llm is not None else llm
        before = _spent(builder_llm)
        kb_dir, kb = _knowledge_base(loaded, registry, list(questions.values()), builder_llm, console, store.run_dir)
        kb_spent = [after - was for after, was in zip(_spent(builder_llm), before)]
        unmeasurable = _check_kb(loaded, registry, kb, kb_dir, questions, console)
        ctx = None
        try:
            manifest = _start(store, loaded, questions, (llm, judge_llm), kb_dir, pm, console, kb=kb)
            if unmeasurable:
                manifest.knowledge_base["not_measurable"] = unmeasurable
                store.write_manifest(manifest)
            _record_kb_build(store, manifest, kb_spent)
            if kb is not None:  # no plugin can write it; other processes (Ray workers, `kb info`) can open it
                kb = reopen_read_only(kb, kb_dir)
            ctx = RunContext(
                loaded,
                registry,
                questions,
                loader,
                llm,
                kb.view() if kb is not None else None,
                kb_dir=kb_dir,
                judge=judge_llm if judge_llm is not llm else None,
            )
            _plan_work(ctx, done, console, write_report=write_report, retry_failed=retry_failed)
            manifest.stopped = _run_units(ctx, store, done, pm, console, warm_up, draw_pictures=write_report)
            _finish(ctx, store, manifest, done, pm)
            _summarise(ctx, store, done, console, earlier)
        finally:
            if kb is not None:  # not under a unit still running (Ctrl-C, a timeout): it may be in a query
                after_units(ctx, kb.close)
    if write_report:
        from .report import write_report as render

        render(store.run_dir, pm)
    return store.run_dir


# -- the steps of a run, in order ---------------------------------------------------------------------


def _prepare(
    suite_path: "str | Path | LoadedSuite",
    registry: "Registry",
    model: str | None,
    limit: int | None,
    judge: str | None,
    out: str | Path | None,
    llm: Any,
) -> tuple[LoadedSuite, RunStore, Any, dict[str, Question]]:
    """The suite, its run store, dataset loader and questions, checked before the run directory exists."""
    loaded = prepare_suite(suite_path, registry, model, limit, judge)
    suite = loaded.suite
    redactor = Redactor.for_run(suite.model_dump(mode="json"))
    remember(redactor)  # builders and the console redact what the suite holds too
    store = RunStore(Path(out) if out else default_run_dir(loaded), redactor)
    loader = registry.create("dataset_loader", suite.dataset.loader)
    questions = _load_questions(loaded, loader)  # validated before the run directory exists
    check_same_models(store, suite)
    check_same_settings(store, loaded)
    check_budget_prices(loaded, llm)
    return loaded, store, loader, questions


def _warm_up(
    loaded: LoadedSuite, store: RunStore, questions: dict[str, Question], done: dict[str, RunRecord], llm: Any
) -> Any:
    """The embedding model loads while litellm and the KB do; a finished run needs none of them."""
    suite = loaded.suite
    if llm is not None or not _baselines_left(suite, questions, done):
        return None
    return warm_up_embeddings(suite, suite_kb_dir(loaded, store.run_dir) if suite.knowledge_base else None)


def _clients(suite: Suite, store: RunStore, llm: Any, questions: dict[str, Question]) -> tuple[Any, Any]:
    """The systems' LLM and the judge, each given the run's questions (``bind_questions``) first."""
    llm = llm if llm is not None else make_run_llm(suite.model, store.cache_dir, suite.concurrency)
    judge_llm = make_judge(suite, llm, store.cache_dir)
    for client in {id(c): c for c in (llm, judge_llm)}.values():
        if hasattr(client, "bind_questions"):
            client.bind_questions(questions.values())
    return llm, judge_llm


def _start(
    store: RunStore,
    loaded: LoadedSuite,
    questions: dict[str, Question],
    clients: tuple[Any, Any],
    kb_dir: Path | None,
    pm: Any,
    console: "Console | None",
    kb: Any = None,
) -> RunManifest:
    """The manifest and the questions written, and the reporters told the run started."""
    llm, judge_llm = clients
    manifest = write_manifest(store, loaded, llm, kb_dir, pm, console, judge=judge_llm, kb=kb)
    _note_redacted_questions(store, manifest, questions.values(), console)
    store.write_questions(questions.values())
    pm.hook.provbench_run_started(manifest=manifest, run_dir=store.run_dir)
    return manifest


def _spent(llm: Any) -> tuple[float, int]:
    """(dollars, requests sent) by a client so far (one without accounting: nothing)."""
    stats = getattr(llm, "stats", None)
    return (float(getattr(stats, "cost_usd", 0.0)), int(getattr(stats, "calls", 0))) if stats is not None else (0.0, 0)


def _record_kb_build(store: RunStore, manifest: RunManifest, spent: list[float]) -> None:
    """What building the knowledge base cost this run, added to what earlier attempts of the run
    spent on it (the manifest keeps it across a resume), for the budget and the reader."""
    usd, calls = spent
    if not (usd or calls):
        return
    build = manifest.knowledge_base.setdefault("build_llm", {"calls": 0, "cost_usd": 0.0})
    build["calls"] += int(calls)
    build["cost_usd"] += usd
    store.write_manifest(manifest)


def _plan_work(
    ctx: RunContext, done: dict[str, RunRecord], console: "Console | None", *, write_report: bool, retry_failed: bool
) -> None:
    """The metrics (warming up while the first units run) and the failed units to run again."""
    ctx.metrics = [(ref.key, ctx.registry.create("metric", ref.name, **ref.options)) for ref in ctx.suite.metrics]
    if _baselines_left(ctx.suite, ctx.questions, done):
        ctx.metrics_ready = warm_up_later_work(ctx.metrics, report=write_report)
    ctx.retry = _failed_to_retry(done, ctx.questions, console) if retry_failed else set()


def _run_units(
    ctx: RunContext,
    store: RunStore,
    done: dict[str, RunRecord],
    pm: Any,
    console: "Console | None",
    warm_up: Any,
    draw_pictures: bool,
) -> str | None:
    """Baselines, the exclusion step and interventions (scheduled without phase barriers); returns
    why the budget stopped the run, if it did."""
    retried = bool(ctx.retry)
    if warm_up is not None:
        warm_up.before_units()
    budget = Budget(ctx.suite.budget, done.values()) if ctx.suite.budget else None
    if budget is not None:  # the knowledge base this run built counts too
        spent = store.read_manifest().knowledge_base.get("build_llm", {})
        budget.add_spent(float(spent.get("cost_usd", 0.0)), int(spent.get("calls", 0)))
    with query_embedder(warm_up.queries if warm_up is not None else None):
        stopped = _execute(ctx, store, done, pm, console, draw_pictures=draw_pictures, budget=budget)
    if retried:
        _drop_unplanned(ctx, done)
        store.compact(done)  # one line per unit again
    return stopped


def _summarise(
    ctx: RunContext,
    store: RunStore,
    done: dict[str, RunRecord],
    console: "Console | None",
    earlier: dict[str, RunRecord],
) -> None:
    """Records, failures, what this run's LLM calls cost (a record reused from an earlier run is not
    counted again) and the leak guard's findings, on the console."""
    if console is not None:
        failed = sum(r.status == "failed" for r in done.values())
        console.print(
            f"{len(done)} record(s) in {store.run_dir}" + (f", {failed} failed" if failed else ""), markup=False
        )
        fresh = [r for key, r in done.items() if earlier.get(key) is not r]
        reused = len(done) - len(fresh)
        spent = spending_lines(fresh) or (["no LLM call this time"] if reused else [])
        if reused:
            spent.append(f"{reused} record(s) reused from an earlier run (their calls not counted again)")
        for line in spent:
            console.print(line, highlight=False, markup=False)
    _report_leaks(ctx, done, console)


def _note_redacted_questions(store: RunStore, manifest: RunManifest, questions: Any, console: "Console | None") -> None:
    """Say (console, log, manifest) which questions hold key-like text the artefacts redact."""
    manifest.redacted_questions = questions_with_secrets(questions, store.redactor)
    if not manifest.redacted_questions:
        return
    shown = ", ".join(manifest.redacted_questions[:5]) + (" ..." if len(manifest.redacted_questions) > 5 else "")
    line = (
        f"{len(manifest.redacted_questions)} question(s) hold text that looks like a credential ({shown}): "
        "artefacts show it as [REDACTED]; the model is sent it as written"
    )
    log.warning(line)
    if console is not None:
        console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    store.write_manifest(manifest)


def _report_leaks(ctx: RunContext, done: dict[str, RunRecord], console: "Console | None") -> None:
    """The leak guard's findings (system, condition, count), printed once: on the console, or (a
    run without one, from Python) as a logged warning when units leaked."""
    lines = leak_lines(r for r in done.values() if r.key.question_id in ctx.questions)
    if console is not None:
        for line in lines:
            console.print(line, markup=False, highlight=False)  # system labels are the user's: "lo[/x]" is no markup
    elif any(line.startswith(("  leaked", "warning:")) for line in lines):
        log.warning("\n".join(lines))


def _baselines_left(suite: Suite, questions: dict[str, Question], done: dict[str, RunRecord]) -> bool:
    """True if a baseline unit has no record yet or failed (it will run)."""
    return any(
        done.get(unit.key.as_str()) is None or done[unit.key.as_str()].status == "failed"
        for unit in baseline_units(suite, list(questions))
    )


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


def _drop_superseded(ctx: RunContext, done: dict[str, RunRecord], planned_pairs: set[tuple[str, str]]) -> None:
    """Failed intervention units that a pair's new plan no longer holds (a variant listing that
    failed, or a missing baseline, planned one stand-in unit; healed, the variants have keys of
    their own): forget their old records, so they are not retried (and failed) forever."""
    conditions = {ref.key for ref in ctx.suite.interventions}
    for key in list(ctx.retry):
        record = done.get(key)
        if (
            record is not None
            and record.key.condition in conditions
            and (record.key.question_id, record.key.system) in planned_pairs
        ):
            del done[key]
            ctx.retry.discard(key)


def build_suite_kb(
    suite_path: str | Path,
    model: str | None = None,
    limit: int | None = None,
    console: "Console | None" = None,
    *,
    pm: "pluggy.PluginManager | None" = None,
    llm: Any = None,
    executor: ExecutorSpec | None = None,
    out: str | Path | None = None,
) -> tuple[Path, "KBStats", bool]:
    """Build (or reuse) the knowledge base a suite declares: (directory, stats, reused), where a
    run into ``out`` (default: reports/<suite name>) looks for it (:func:`suite_kb_dir`).

    ``executor`` (default: the suite's) decides where the build embeds: Ray Data for ``ray``."""
    from .kb import KnowledgeBase

    _, registry = _plugins(pm, suite_path)
    loaded = prepare_suite(suite_path, registry, model, limit)
    if executor is not None:
        loaded.suite.executor = executor
    if loaded.suite.knowledge_base is None:
        raise UserError(f"{loaded.path}: the suite declares no knowledge_base")
    remember(Redactor.for_run(loaded.suite.model_dump(mode="json")))  # the build's errors may quote them
    run_dir = Path(out) if out else default_run_dir(loaded)
    kb_dir = suite_kb_dir(loaded, run_dir)
    reused = KnowledgeBase.is_complete(kb_dir)
    llm = (
        llm if llm is not None else make_run_llm(loaded.suite.model, kb_llm_cache_dir(kb_dir), loaded.suite.concurrency)
    )
    loader = registry.create("dataset_loader", loaded.suite.dataset.loader)
    questions = list(_load_questions(loaded, loader).values())
    _, kb = _knowledge_base(loaded, registry, questions, llm, console, run_dir)
    try:
        return kb_dir, kb.stats(), reused
    finally:
        kb.close()


def kb_llm_cache_dir(kb_dir: Path) -> Path:
    """The builder's LLM cache sits beside the KB, so rebuilding a KB re-asks nothing."""
    return kb_dir.parent / (kb_dir.name + "-llm-cache")


def build_dataset_kb(
    dataset: str | Path,
    out: Path,
    *,
    loader: str | None,
    builder: str,
    model: str = "embedded",
    limit: int | None = None,
    options: dict[str, Any] | None = None,
    console: "Console | None" = None,
    llm: Any = None,
    concurrency: int | None = None,
    executor: ExecutorSpec | None = None,
) -> tuple[Path, "KBStats", bool]:
    """Build (or reuse) a knowledge base straight from a dataset file: (directory, stats, reused).

    The LLM client allows ``concurrency`` calls at once; by default the builder's ``max_workers``
    option (the shared builder option), else 2. ``executor`` ``ray`` embeds with Ray Data.
    """
    from .kb import KnowledgeBase
    from .llm_setup import make_llm

    _, registry = _plugins(None)
    _check_limit(limit)
    kb_dir = Path(out).resolve()
    reused = KnowledgeBase.is_complete(kb_dir)
    with input_errors(dataset):
        questions, options = _questions_or_source(registry, dataset, loader, builder, limit, options or {})
    if llm is None:
        workers = concurrency or (options or {}).get("max_workers") or 2
        llm = make_llm(model, cache_dir=kb_llm_cache_dir(kb_dir), max_concurrency=int(workers))
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    with (
        status(console, "building or reusing the knowledge base"),
        kb_embedding(executor or ExecutorSpec()),
    ):  # the builder takes the KB lock
        kb = registry.create("kb_builder", builder, **(options or {})).build(questions, kb_dir, llm)
    try:
        return kb_dir, kb.stats(), reused
    finally:
        kb.close()


def _questions_or_source(
    registry: "Registry",
    dataset: str | Path,
    loader: str | None,
    builder: str,
    limit: int | None,
    options: dict[str, Any],
) -> tuple[list[Question], dict[str, Any]]:
    """The dataset's questions and the builder options; a folder given to a builder that reads one
    (its option ``source``: ``documents``, ``property-graph``) is that source, with no questions."""
    from .datainfo import resolve_loader

    takes = registry.get("kb_builder", builder).options_model
    if (
        loader is None
        and Path(dataset).is_dir()
        and "source" not in options
        and takes is not None
        and "source" in takes.model_fields
    ):
        return [], {**options, "source": str(dataset)}
    return resolve_loader(registry, dataset, loader).load(dataset, limit=limit), options


# -- setup ------------------------------------------------------------------------------------------


def _plugins(pm: "pluggy.PluginManager | None", suite_path: Any = None) -> tuple["pluggy.PluginManager", "Registry"]:
    """The plugin manager (default: the process's) with the suite file's own ``plugins:``, and its registry."""
    from .local_plugins import plugin_setup

    return plugin_setup(None if isinstance(suite_path, LoadedSuite) else suite_path, pm)


def prepare_suite(
    suite_path: "str | Path | LoadedSuite",
    registry: "Registry",
    model: str | None,
    limit: int | None,
    judge: str | None = None,
) -> LoadedSuite:
    """The suite (a file, or one already loaded), checked, with the command line's model, judge and limit applied."""
    loaded = suite_path if isinstance(suite_path, LoadedSuite) else load_suite(suite_path, registry)
    if model:
        loaded.suite.model.id = model
    if judge:  # the suite's judge parameters and limits stay, as the model's do with --model
        loaded.suite.judge = (loaded.suite.judge or ModelSpec()).model_copy(update={"id": judge})
    if limit is not None:
        _check_limit(limit)
        loaded.suite.dataset.limit = limit
    return loaded


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")


def _load_questions(loaded: LoadedSuite, loader: Any) -> dict[str, Question]:
    spec = loaded.suite.dataset
    with input_errors(loaded.dataset_source()):
        questions = loader.load(
            loaded.dataset_source(), limit=spec.limit, seed=spec.seed, sample=spec.sample, **spec.options
        )
    if not questions:
        raise UserError(f"{loaded.path}: dataset {spec.path!r} gave no questions")
    by_id: dict[str, Question] = {}
    for q in questions:
        if q.id in by_id:
            raise UserError(f"{loaded.path}: dataset {spec.path!r} has question id {q.id!r} twice")
        by_id[q.id] = q
    return by_id


def default_run_dir(loaded: LoadedSuite) -> Path:
    """Where a suite's run goes without ``--out``."""
    return Path("reports") / loaded.suite.name


def suite_kb_dir(loaded: LoadedSuite, run_dir: Path) -> Path:
    """The one rule for where a suite's knowledge base lives, which ``run``, ``plan`` and ``kb
    build`` all follow for the same ``--out``: the suite's ``knowledge_base.directory`` when it
    names one, else a cache beside the run directory (``<run dir>/../.kb-cache/<builder>-<inputs>``),
    shared by every run in that folder with the same dataset, builder, options and model."""
    return default_kb_dir(loaded, Path(run_dir).parent)


def default_kb_dir(loaded: LoadedSuite, runs_root: Path) -> Path:
    """The suite's KB directory, or a cache dir keyed by dataset + builder + options + model."""
    spec = loaded.suite.knowledge_base
    assert spec is not None
    if spec.directory:
        return (loaded.base_dir / spec.directory).resolve()
    d = loaded.suite.dataset
    inputs = {
        "dataset": d.path,
        "dataset_sha": _file_sha(loaded.dataset_source()),
        "loader": d.loader,
        "options": d.options,
        "limit": d.limit,
        "seed": d.seed,
        "sample": d.sample,
        "builder": spec.builder,
        "builder_options": spec.options,
        "model": loaded.suite.model.id,
    }
    if spec.graph_store != "kuzu":  # keeps the keys of existing Kùzu KBs unchanged
        inputs["graph_store"] = spec.graph_store
    digest = hashlib.sha256(repr(sorted(inputs.items())).encode()).hexdigest()[:16]
    return (runs_root / ".kb-cache" / f"{spec.builder}-{digest}").resolve()


def _file_sha(source: str) -> str:
    path = Path(source)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _check_kb(
    loaded: LoadedSuite,
    registry: "Registry",
    kb: Any,
    kb_dir: Path | None,
    questions: dict[str, Question],
    console: "Console | None",
) -> dict[str, str]:
    """Refuse a degenerate knowledge base; say how much of the questions' gold it holds; leave out
    the interventions that act on a part it lacks, and return why (kb.health)."""
    options = loaded.suite.knowledge_base.options if loaded.suite.knowledge_base else {}
    needs = {
        ref.key: getattr(registry.get("intervention", ref.name).factory, "needs", ())
        for ref in loaded.suite.interventions
    }
    unmeasurable = not_measurable_interventions(kb, needs, options)
    loaded.suite.interventions = [ref for ref in loaded.suite.interventions if ref.key not in unmeasurable]
    lines = check_run_kb(kb, kb_dir, questions.values(), options)
    lines += [f"intervention {key!r} {why} (left out of this run)" for key, why in unmeasurable.items()]
    for line in lines:
        if console is not None:
            console.print(line, highlight=False, markup=False)
    return unmeasurable


def _knowledge_base(
    loaded: LoadedSuite,
    registry: "Registry",
    questions: list[Question],
    llm: Any,
    console: "Console | None",
    run_dir: Path,
) -> tuple[Path | None, Any]:
    from .kb.backends import default_graph_store
    from .kb.graphstore import graph_store_of

    spec = loaded.suite.knowledge_base
    if spec is None:
        return None, None
    kb_dir = suite_kb_dir(loaded, run_dir)
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    builder = registry.create("kb_builder", spec.builder, **spec.options)
    if console is not None:
        console.print(f"knowledge base: {kb_dir}", markup=False)
    with (
        status(console, "building or reusing the knowledge base"),
        default_graph_store(spec.graph_store),
        kb_embedding(loaded.suite.executor),
    ):  # the builder takes the KB lock
        kb = builder.build(questions, kb_dir, llm)
    if graph_store_of(kb_dir) != spec.graph_store:
        kb.close()
        raise UserError(
            f"{loaded.path}: knowledge base {kb_dir} lives in {graph_store_of(kb_dir)!r}, not the "
            f"suite's graph_store {spec.graph_store!r}; give another directory"
        )
    return kb_dir, kb


# -- execution ---------------------------------------------------------------------------------------


def _execute(
    ctx: RunContext,
    store: RunStore,
    done: dict[str, RunRecord],
    pm: Any,
    console: Any,
    draw_pictures: bool = False,
    budget: Budget | None = None,
) -> str | None:
    """Run every unit not yet recorded: interventions start as soon as their baselines exist. Once
    the ``budget`` is reached no more units start; returns why, if it stopped the run."""
    scheduler = _scheduled_units(ctx, store, done, pm, console, draw_pictures, budget)
    ctx.retry -= scheduler.planned_keys  # what is left was not planned this time
    _drop_superseded(ctx, done, scheduler.planned_pairs)
    if console is not None:
        _print_execution_notes(ctx, done, scheduler, console)
    return scheduler.stopped


def _scheduled_units(
    ctx: RunContext,
    store: RunStore,
    done: dict[str, RunRecord],
    pm: Any,
    console: Any,
    draw_pictures: bool,
    budget: Budget | None,
) -> Scheduler:
    """The scheduler, run: each unit, as it lands, is stored, counted against the budget, announced
    to plugins, shown as progress and handed to the pictures drawn ahead."""
    baselines = baseline_units(ctx.suite, list(ctx.questions))
    with unit_progress(console) as progress:
        task = progress.add_task("units", total=0)

        def planned(count: int, recorded_before: int) -> None:
            progress.update(task, total=(progress.tasks[0].total or 0) + count, advance=recorded_before)

        pictures = pictures_ahead(ctx, store) if draw_pictures else None

        def recorded(record: RunRecord) -> None:
            store.append(record)
            if budget is not None:
                budget.add(record)
            pm.hook.provbench_record_written(record=record, run_dir=store.run_dir)
            progress.advance(task)
            if pictures is not None:
                pictures.record_landed(record)

        plan = lambda qid, system: intervention_units(ctx, [qid], done, systems=[system])  # noqa: E731 - a one-line closure
        scheduler = Scheduler(ctx, done, plan, recorded, planned, stop=budget.reached if budget else None)
        try:
            scheduler.run(baselines, make_executor(ctx, run_unit))
        finally:
            if pictures is not None:
                pictures.close()
    return scheduler


def _print_execution_notes(ctx: RunContext, done: dict[str, RunRecord], scheduler: Scheduler, console: Any) -> None:
    """What the run left out by the exclusion step, and why it stopped early, if it did."""
    if ctx.suite.interventions and ctx.suite.exclusion.enabled:
        excluded = excluded_questions(ctx.suite, done) & set(ctx.questions)
        console.print(
            f"exclusion step: {len(excluded)} question(s) answered correctly by "
            f"{ctx.suite.exclusion.reference_system!r} left out of the interventions",
            markup=False,
        )
    if scheduler.stopped:
        console.print(
            f"[yellow]stopped:[/] {escape(scheduler.stopped)}; units not run: at least {scheduler.left}. Raise "
            "the suite's budget and run again to continue",
            highlight=False,
        )


# -- finishing ---------------------------------------------------------------------------------------


def _finish(ctx: RunContext, store: RunStore, manifest: RunManifest, done: dict[str, RunRecord], pm: Any) -> None:
    wanted = set(ctx.questions)
    records = [r for r in done.values() if r.key.question_id in wanted and r.key.system in ctx.suite.system_names]
    excluded = excluded_questions(ctx.suite, done) & wanted
    results = Results(
        records=records,
        questions=ctx.questions,
        excluded=excluded,
        loader=ctx.loader,
        include_leaked=ctx.suite.leak_guard.include_leaked,
    )
    values, errors = [], {}
    for name, metric in ctx.metrics:
        try:
            given = results if metric.reads_left_out else results.paired()  # the pairing rule, not the plugin's care
            values += list(metric.aggregate(given, metric_context(ctx)))
        except Exception as exc:  # noqa: BLE001 - one metric's failure goes to metrics.json's errors
            errors[name] = f"{type(exc).__name__}: {exc}"[:1000]
    values = with_left_out_notes(values, results)  # the one pairing rule's notes beside every number
    store.write_metrics(
        RunMetrics(values=values, errors=errors, excluded=sorted(excluded), exclusion=ctx.suite.exclusion.model_dump())
    )
    manifest.finished_at = utc_now()
    store.write_manifest(manifest)
    export_csv(store.run_dir, records=done.values())
    pm.hook.provbench_run_finished(manifest=manifest, run_dir=store.run_dir)
