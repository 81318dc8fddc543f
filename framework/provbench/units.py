"""Units of work: what the runner plans (baselines; interventions with their repeats or enumerated
variants) and how one unit runs and is scored. A unit depends only on its inputs and the LLM cache, so
any executor can run :func:`run_unit` (see :mod:`provbench.execution`)."""

from __future__ import annotations

import hashlib
import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from .audit import hidden_set, logged_requests, request_log
from .capture import UnitCapture
from .errors import PluginFailure, UserError, call_plugin, reraise_a_real_interrupt
from .leakguard import check_unit
from .model import HiddenSet, LeakCheck, Question, RunRecord, Trace, UnitKey, utc_now
from .plugin_api import Environment, Intervention, MetricContext, Variant
from .results.rules import answered_by_reference, compared_output
from .suite import LoadedSuite, PluginRef, Suite

if TYPE_CHECKING:
    from .registry import Registry

log = logging.getLogger(__name__)
NO_BASELINE = "no usable baseline trace for this question and system; the intervention cannot apply"

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
    judge: Any = None  # the metrics' LLM (the suite's judge); None: the systems' LLM
    metrics_ready: Any = None  # a threading.Event set once the metrics' warm-up is done (scoring waits)
    executor: Any = None  # the executor running the units (provbench.execution.after_units)

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
    unplannable: str | None = None  # why a plugin's code failed while this unit was planned: it runs as failed


def unit_seed(base: int, key: UnitKey) -> int:
    """A stable seed per unit: the same key always gets the same seed, whatever the order."""
    digest = hashlib.sha256(f"{base}|{key.as_str()}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


# -- planning ---------------------------------------------------------------------------------------


def baseline_units(suite: Suite, questions: Iterable[str]) -> list[Unit]:
    """Every system x question, ``repeats`` times for a repeated system (each repeat its own seed)."""
    units, questions = [], list(questions)
    for ref in suite.systems:
        for repeat in range(ref.repeats):
            for qid in questions:
                key = UnitKey(question_id=qid, system=ref.key, repeat=repeat)
                units.append(Unit(key, ref, seed=unit_seed(suite.seed, key)))
    return units


def excluded_questions(suite: Suite, records: dict[str, RunRecord]) -> set[str]:
    """The suite's exclusion step over the baseline records so far."""
    if not suite.exclusion.enabled:
        return set()
    return answered_by_reference(records.values(), suite.exclusion.reference_system)


def intervention_units(
    ctx: RunContext,
    questions: Iterable[str],
    done: dict[str, RunRecord] | None = None,
    systems: Iterable[str] | None = None,
) -> list[Unit]:
    """Units of every intervention x target system (among ``systems``, default all) x question:
    ``repeats`` of each, or, for an enumerated intervention, one per variant it lists from the
    baseline trace in ``done``."""
    suite, units, done = ctx.suite, [], done or {}
    only = set(systems) if systems is not None else None
    targets = [
        ref
        for ref in suite.systems
        if ref.key in suite.targets_of_interventions() and (only is None or ref.key in only)
    ]
    for iref in suite.interventions:
        probe = ctx.registry.create("intervention", iref.name, **iref.options)
        repeats = suite.repeats if suite.repeats and probe.repeats > 1 else probe.repeats
        for sref in targets:
            if not _can_take(ctx, probe, sref, iref):
                continue
            for qid in questions:
                try:
                    variants = _variants(ctx, probe, qid, sref.key, iref.key, done)
                except PluginFailure as exc:  # one failed unit says why; the run and its other units go on
                    units.append(_unplannable_unit(suite, qid, sref, iref, str(exc)))
                    continue
                if variants is not None:
                    units += [_variant_unit(suite, qid, sref, iref, v) for v in variants]
                    continue
                for repeat in range(repeats):
                    key = UnitKey(question_id=qid, system=sref.key, condition=iref.key, repeat=repeat)
                    units.append(Unit(key, sref, iref, seed=unit_seed(suite.seed, key)))
    return units


def _can_take(ctx: RunContext, intervention: Intervention, sref: PluginRef, iref: PluginRef) -> bool:
    """Whether the system can take the intervention: a context-level one needs ``resume``, one that
    resumes a trajectory needs ``resume_from_step``; a system that cannot is skipped, with a warning."""
    if intervention.level != "context" and not intervention.resumes:
        return True
    system = ctx.registry.create("system", sref.name, **sref.options)
    if intervention.level == "context" and not getattr(system, "supports_resume", False):
        log.warning("skipping %s x %s: the system cannot resume from a perturbed context", iref.key, sref.key)
        return False
    if intervention.resumes and not getattr(system, "supports_step_resume", False):
        log.warning("skipping %s x %s: the system cannot resume its trajectory from a step", iref.key, sref.key)
        return False
    return True


def _variants(
    ctx: RunContext, intervention: Intervention, qid: str, system: str, condition: str, done: dict[str, RunRecord]
) -> list[Variant] | None:
    """The variants an enumerated intervention lists for one baseline trace (None: not enumerated,
    or no usable baseline, in which case one unit is planned and records why it could not run)."""
    baseline = done.get(UnitKey(question_id=qid, system=system).as_str())
    if baseline is None or baseline.status != "ok" or baseline.trace is None:
        return None
    rng = random.Random(unit_seed(ctx.suite.seed, UnitKey(question_id=qid, system=system, condition=condition)))
    variants = call_plugin(
        f"intervention {condition!r}: variants() for question {qid!r} and system {system!r}",
        intervention.variants,
        ctx.questions[qid],
        baseline.trace.model_copy(deep=True),
        rng,
    )
    if variants is None:
        return None
    ids = [v.id for v in variants]
    if len(set(ids)) != len(ids) or not all(ids):
        raise UserError(
            f"intervention {condition!r} listed variant ids that are empty or repeated for question {qid!r}: {ids}"
        )
    return variants


def _variant_unit(suite: Suite, qid: str, sref: PluginRef, iref: PluginRef, variant: Variant) -> Unit:
    key = UnitKey(question_id=qid, system=sref.key, condition=iref.key, variant=variant.id)
    return Unit(key, sref, iref, seed=unit_seed(suite.seed, key), variant=variant)


def _unplannable_unit(suite: Suite, qid: str, sref: PluginRef, iref: PluginRef, why: str) -> Unit:
    """The one unit that stands for a question x system x intervention whose planning failed."""
    key = UnitKey(question_id=qid, system=sref.key, condition=iref.key)
    return Unit(key, sref, iref, seed=unit_seed(suite.seed, key), unplannable=f"{why} (while the run was planned)")


def expected_system_calls(system: Any, key: str) -> tuple[float, str | None]:
    """A system's ``expected_llm_calls`` (at least 0), and what went wrong asking it: then the
    default of one call, since the figure only orders work and sizes estimates."""
    try:
        return max(
            0.0, call_plugin(f"system {key!r}: expected_llm_calls", lambda: float(system.expected_llm_calls))
        ), None
    except PluginFailure as exc:
        log.warning("%s; counted as one call", exc)
        return 1.0, f"{exc}; counted as one call"


# -- running one unit ---------------------------------------------------------------------------------


def run_unit(ctx: RunContext, unit: Unit, baseline: RunRecord | None = None) -> RunRecord:
    """One unit, scored. A system or LLM failure, or a trace that cannot be stored, becomes a
    ``failed`` record, never an exception (a plugin's ``sys.exit`` included)."""
    question = ctx.questions[unit.key.question_id]
    record = RunRecord(key=unit.key, gold=question.answer, seed=unit.seed, variant=unit.variant)
    started = time.perf_counter()
    capture = UnitCapture(unit.key.as_str())  # every LLM request the unit makes, from any thread
    try:
        if unit.unplannable:
            raise PluginFailure(unit.unplannable)
        produced, guard = _produce_trace(ctx, unit, question, baseline, capture)
        trace = storable_trace(produced)
        trace.wall_time_s = round(time.perf_counter() - started, 4)
    except BaseException as exc:  # a unit's failure is data, not a crash (a plugin's sys.exit too)
        reraise_a_real_interrupt(exc)
        log.debug("unit %s failed", unit.key.as_str(), exc_info=True)
        record.status, record.error = "failed", f"{type(exc).__name__}: {exc}"[:2000]
    else:
        record.trace = trace
        if trace.outcome == "failed":
            record.status, record.error = "failed", trace.error or "the system reported a failure"
        if guard is not None:
            record.leak_check, record.hidden = guard()
    record.requests = request_log(
        capture.requests, capture.instructions
    )  # kept for `provbench audit` and the question pages
    _score(ctx, record, question, baseline)
    record.finished_at = utc_now()
    return storable_record(record)


def failed_record(ctx: RunContext, unit: Unit, reason: str) -> RunRecord:
    """The scored failed record of a unit that produced none itself (it hung, or its worker died)."""
    question = ctx.questions[unit.key.question_id]
    record = RunRecord(
        key=unit.key, gold=question.answer, seed=unit.seed, variant=unit.variant, status="failed", error=reason[:2000]
    )
    _score(ctx, record, question, None)
    record.finished_at = utc_now()
    return storable_record(record)


class UnstorableTrace(TypeError):
    """A system returned something records.jsonl cannot hold (the message says what and where)."""


def storable_trace(trace: Trace) -> Trace:
    """``trace`` as it will read back from records.jsonl (a copy: the plugin keeps no handle on it),
    or :class:`UnstorableTrace` naming the field that cannot be stored (a non-JSON artifact, a
    non-str answer, ...). Checked before scoring, so a bad trace fails its unit, not the run."""
    try:
        return Trace.model_validate_json(trace.model_dump_json(warnings=False))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"]))
        raise UnstorableTrace(
            f"the trace cannot be stored: field {where}: {error['msg']} (got {type(error.get('input')).__name__})"
        ) from None
    except PydanticSerializationError as exc:
        raise UnstorableTrace(f"the trace cannot be stored: {_unserialisable_field(trace)}: {exc}") from None


def _unserialisable_field(trace: Trace) -> str:
    """The first top-level field (an artifact by name) that does not serialise to JSON."""
    for name in type(trace).model_fields:
        value = getattr(trace, name)
        items = value.items() if name == "artifacts" and isinstance(value, dict) else [(None, value)]
        for key, item in items:
            try:
                to_json(item)
            except (PydanticSerializationError, ValueError, TypeError):
                return f"field artifacts[{key!r}]" if key is not None else f"field {name}"
    return "a field"


def storable_record(record: RunRecord) -> RunRecord:
    """``record`` if it reads back from its JSON line, else the unit's failed record saying why
    (records.jsonl must never hold, nor a run crash on, a line that does not read back)."""
    try:
        return RunRecord.model_validate_json(record.model_dump_json(warnings=False))
    except (ValidationError, PydanticSerializationError, ValueError, TypeError) as exc:
        reason = f"the record cannot be stored: {type(exc).__name__}: {exc}"[:2000]
        return RunRecord(
            key=record.key,
            gold=record.gold,
            seed=record.seed,
            variant=record.variant,
            status="failed",
            error=reason,
            started_at=record.started_at,
            finished_at=utc_now(),
        )


def _produce_trace(
    ctx: RunContext, unit: Unit, question: Question, baseline: RunRecord | None, capture: UnitCapture
) -> tuple[Trace, Callable[[], tuple[LeakCheck, HiddenSet]] | None]:
    """The unit's trace, and for a graph-level intervention its leak check and hidden set (run after the timing)."""
    system = ctx.registry.create("system", unit.system.name, **unit.system.options)
    capture.instructions = tuple(system.instructions())  # the leak guard reads requests without them
    bind = getattr(ctx.llm, "bound_to", None)  # an LLMClient; a test's stand-in may not bind
    llm = _unit_llm(bind(capture) if bind is not None else ctx.llm, unit)
    env = Environment(view=own_view(ctx.view), llm=llm, seed=unit.seed, options=dict(unit.system.options))
    if unit.intervention is None:
        return _captured(capture, system.run, question, env), None
    if baseline is None or baseline.status != "ok" or baseline.trace is None:
        raise RuntimeError(NO_BASELINE)
    intervention: Intervention = ctx.registry.create(
        "intervention", unit.intervention.name, **unit.intervention.options
    )
    rng = random.Random(unit.seed)
    chosen = {"variant": unit.variant} if unit.variant is not None else {}
    if intervention.level == "context":
        perturbed = intervention.perturb(question, baseline.trace.model_copy(deep=True), rng, **chosen)
        return _captured(capture, system.resume, question, env, perturbed), None
    env.view = intervention.make_view(env.view, question, baseline.trace, rng, **chosen)
    if intervention.resumes:  # the baseline's trajectory replayed up to a step, then on under the view
        point = intervention.resume_point(question, baseline.trace, rng, **chosen)
        trace = _captured(capture, system.resume_from_step, question, env, baseline.trace.model_copy(deep=True), point)
    else:
        trace = _captured(capture, system.run, question, env)
    if env.view is None:
        return trace, None
    trace.artifacts["hidden_by_intervention"] = env.view.hidden_summary()  # what this run could not see
    view, base, trace_ids = env.view, ctx.view, system.trace_ids
    return trace, lambda: (_leak_check(view, question, trace, capture, baseline, trace_ids, base), hidden_set(view))


def own_view(view: Any) -> Any:
    """A view object of the unit's own over the run's (same store, same filter; costs nothing):
    a plugin that mutates its view, even its private state, changes no other unit's retrieval."""
    fresh = getattr(view, "hide", None)  # a GraphView's; a test's stand-in view may have none
    return fresh() if fresh is not None else view


def _captured(capture: UnitCapture, run: Callable[..., Trace], *args: Any) -> Trace:
    """``run(*args)`` as the capture's unit; the calls and observations it did not record join its trace."""
    with capture.active():
        trace = run(*args)
    if not isinstance(trace, Trace):
        raise UnstorableTrace(f"the system returned {type(trace).__name__}, not a Trace")
    return capture.complete(trace)


def _leak_check(
    view: Any, question: Question, trace: Trace, capture: UnitCapture, baseline: RunRecord, trace_ids: str, base: Any
) -> LeakCheck:
    try:
        return check_unit(
            view,
            question,
            trace,
            capture,
            baseline.trace,
            trace_ids,
            base=base,
            baseline_requests=logged_requests(baseline.requests),
        )
    except Exception as exc:  # a guard failure is reported, never a unit's failure
        log.warning("leak guard failed for %s: %s", capture.key, exc, exc_info=True)
        return LeakCheck(status="not-checkable", notes=[f"the leak guard failed: {type(exc).__name__}: {exc}"[:500]])


def _unit_llm(llm: Any, unit: Unit) -> Any:
    """A repeated system's units pin their own seed in every LLM request: the seed enters the
    cache key, so each repeat samples (and is cached) on its own; other units use ``llm`` as it is."""
    return llm.pinning(seed=unit.seed) if getattr(unit.system, "repeats", 1) > 1 else llm


def _score(ctx: RunContext, record: RunRecord, question: Question, baseline: RunRecord | None) -> None:
    """Dataset correctness, "output changed" against the baseline, then per-record metrics."""
    answer = record.trace.answer if record.status == "ok" and record.trace else None
    # the loader sees None only for a deliberate abstention (which may be the right reply to an
    # unanswerable question); a run that ended with no answer otherwise is scored as an empty one
    abstained = record.status == "ok" and record.trace is not None and record.trace.outcome == "abstained"
    prediction = answer if answer is not None or abstained else ""
    try:
        record.scores.update(ctx.loader.score_answer(question, prediction))
    except BaseException as exc:  # noqa: BLE001 - a plugin's sys.exit included
        reraise_a_real_interrupt(exc)
        record.score_notes["accuracy"] = f"scoring failed: {type(exc).__name__}: {exc}"[:500]
    if baseline is not None and baseline.trace is not None and record.status == "ok":
        # an abstention is its own output, never an empty answer (plugin_api.compared_output)
        record.scores["output_changed"] = float(
            compared_output(baseline.trace, ctx.loader.normalize) != compared_output(record.trace, ctx.loader.normalize)
        )
    ready = getattr(ctx, "metrics_ready", None)
    if ready is not None:  # the warm-up imports what scoring needs: importing it from two threads can fail
        ready.wait()
    metric_ctx = metric_context(ctx, record.judge_calls)
    for name, metric in ctx.metrics:
        try:
            record.scores.update(metric.score(record, question, metric_ctx) or {})
        except BaseException as exc:  # noqa: BLE001 - a judge failure leaves a note, never a crash
            reraise_a_real_interrupt(exc)
            record.score_notes[name] = f"{type(exc).__name__}: {exc}"[:500]


def metric_context(ctx: RunContext, judge_calls: list | None = None) -> MetricContext:
    """What metrics get: the judge as their LLM (noting its calls on ``judge_calls``), the view, the loader."""
    judge = getattr(ctx, "judge", None)
    judge = ctx.llm if judge is None else judge
    if judge_calls is not None and hasattr(judge, "recording"):
        judge = judge.recording(judge_calls)
    return MetricContext(llm=judge, view=own_view(ctx.view), loader=ctx.loader)
