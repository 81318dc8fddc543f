"""``provbench plan SUITE``: what a run will do and cost, before anything runs.

Units come from the suite (baselines; interventions with their repeats, or, for an enumerated
intervention, the variants it lists on a sample of dry-run baselines). LLM calls per unit are the
systems' declared ``expected_llm_calls`` and the metrics' ``expected_llm_calls(condition)`` (the
judge). Tokens per call are measured on a sample: the first questions run through each system
against the suite's knowledge base with an offline schema-following LLM (no request leaves the
machine), their prompts counted with litellm's tokenizer for the model; a reply's tokens are taken
as its ``max_tokens`` (an upper bound) unless the run directory already holds real replies, whose
sizes are used instead. Prices come from litellm's table (:mod:`provbench.costs`). Before the
knowledge base exists, a row counts its build's own calls as its builder bounds them
(``KBBuilder.expected_llm_calls``): the run makes them first, and its ``budget:`` counts them.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .costs import CostTotal, budget_overrun, price_of
from .errors import PluginFailure, UserError, call_plugin
from .model import BASELINE, RunRecord
from .plugin_api import Environment, MetricContext
from .units import expected_system_calls

if TYPE_CHECKING:
    from .suite import LoadedSuite


@dataclass
class Row:
    """One line of the plan: a system at baseline, a system under an intervention, or the judge."""

    what: str
    units: int
    calls: float
    prompt_tokens: float | None = None  # per call
    completion_tokens: float | None = None
    model: str = ""
    cost_usd: float | None = None
    cost_source: str = "unknown"  # where the price came from (provbench.costs.CostSource)
    notes: list[str] = field(default_factory=list)


@dataclass
class Plan:
    suite: str
    questions: int
    rows: list[Row]
    recorded: int
    to_rerun: int
    cached_replies: int
    kb: str
    kb_built: bool | None  # None: the suite has no knowledge base
    concurrency: int
    latency_s: float
    notes: list[str] = field(default_factory=list)

    @property
    def units(self) -> int:
        return sum(r.units for r in self.rows if r.what != "judge")

    @property
    def calls(self) -> float:
        return sum(r.calls for r in self.rows)

    def cost_total(self) -> CostTotal:
        """The known dollars, and how many rows making calls are unpriced (or local)."""
        total = CostTotal()
        for row in (r for r in self.rows if r.calls):
            total.count(row.cost_usd, row.cost_source)
        return total

    def unknown_cost_causes(self) -> list[str]:
        """Why rows have no cost: no token sizes (an unbuilt knowledge base, a dry run that failed)
        or no price for a model whose token sizes are known."""
        unsized = [r for r in self.rows if r.calls and (r.prompt_tokens is None or r.completion_tokens is None)]
        unpriced = sorted({r.model for r in self.rows if r.calls and r.cost_usd is None and r not in unsized})
        causes = []
        if unsized and self.kb_built is False:
            causes.append("the knowledge base is not built yet, so prompt sizes are unknown (see the note)")
        elif unsized:
            causes.append(f"no token sizes for {', '.join(r.what for r in unsized)} (see the notes)")
        if unpriced:
            causes.append(
                f"no price for {', '.join(unpriced)}: give model params input_cost_per_token / output_cost_per_token"
            )
        return causes

    def hours(self, longest_chain_calls: float) -> float:
        """Wall time: the calls spread over the concurrency, but never under the longest chain."""
        return max(self.calls * self.latency_s / self.concurrency, longest_chain_calls * self.latency_s) / 3600


def make_plan(
    loaded: "LoadedSuite",
    registry: Any,
    run_dir: Path,
    kb_dir: Path | None,
    *,
    sample: int = 2,
    concurrency: int | None = None,
    latency_s: float = 1.0,
) -> tuple[Plan, float]:
    """The plan of ``loaded`` and the longest chain of calls (for the time estimate)."""
    from .llm_setup import make_backend

    suite = loaded.suite
    loader = registry.create("dataset_loader", suite.dataset.loader)
    questions = loader.load(
        loaded.dataset_source(),
        limit=suite.dataset.limit,
        seed=suite.dataset.seed,
        sample=suite.dataset.sample,
        **suite.dataset.options,
    )
    refusal = _refusal(run_dir, suite)
    records = {} if refusal else _recorded(run_dir)  # another model's records say nothing of this run
    system_backend = make_backend(suite.model.id, **suite.model.params)
    judge_spec = suite.judge or suite.model
    judge_backend = make_backend(judge_spec.id, **judge_spec.params) if suite.judge else system_backend
    dry = _DryRun(loaded, registry, kb_dir, questions[:sample], system_backend.model_id)
    try:
        plan, chain = _plan(
            loaded, registry, run_dir, questions, records, system_backend, judge_backend, dry, concurrency, latency_s
        )
        plan.notes[:0] = [refusal] if refusal else []
        return plan, chain
    finally:
        dry.close()


def _refusal(run_dir: Path, suite: Any) -> str | None:
    """Why ``run`` would refuse ``run_dir`` (it holds another model's or judge's run), or None."""
    from .llm_setup import check_same_models
    from .run_store import RunStore

    try:
        check_same_models(RunStore(run_dir), suite)
    except UserError as exc:
        return f"{exc} (run refuses this directory, so this plan counts none of its records)"
    return None


def _plan(
    loaded: "LoadedSuite",
    registry: Any,
    run_dir: Path,
    questions: list[Any],
    records: dict[str, RunRecord],
    system_backend: Any,
    judge_backend: Any,
    dry: "_DryRun",
    concurrency: int | None,
    latency_s: float,
) -> tuple[Plan, float]:
    suite = loaded.suite
    notes = (
        []
        if dry.view is not None
        else [
            f"knowledge base {dry.kb_dir} is not built yet, so no question can be "
            f"dry-run: token sizes and cost not seen in recorded calls are unknown ({kb_build_command(loaded, run_dir)} "
            "builds it where this run will look; then plan again)"
        ]
    )
    metrics = [registry.create("metric", ref.name, **ref.options) for ref in suite.metrics]
    rows, chain = _system_rows(suite, registry, questions, records, system_backend.model_id, dry)
    rows.append(_judge_row(metrics, rows, judge_backend, dry, records))
    if dry.kb_dir is not None and dry.view is None:  # the run builds the KB first, with the systems' model
        rows.insert(0, _kb_build_row(suite, registry, questions, system_backend.model_id))
    _price(rows, system_backend, judge_backend)
    done = {k: r for k, r in records.items() if r.key.question_id in {q.id for q in questions}}
    plan = Plan(
        suite.name,
        len(questions),
        rows,
        recorded=sum(r.status == "ok" for r in done.values()),
        to_rerun=sum(r.status == "failed" for r in done.values()),
        cached_replies=_cache_entries(run_dir),
        kb=dry.kb_state,
        kb_built=None if dry.kb_dir is None else dry.view is not None,
        concurrency=concurrency or suite.concurrency,
        latency_s=latency_s,
        notes=notes,
    )
    kb_calls = sum(r.calls for r in rows if r.what == KB_BUILD)
    plan.notes += budget_overrun(suite.budget, plan.calls, plan.cost_total().usd, kb_calls)
    if suite.exclusion.enabled and suite.interventions:
        plan.notes.append(
            "the exclusion step will leave out the questions the reference system answers "
            "correctly: intervention units are an upper bound"
        )
    return plan, chain


def _system_rows(
    suite: Any, registry: Any, questions: list[Any], records: dict[str, RunRecord], model_id: str, dry: "_DryRun"
) -> tuple[list[Row], float]:
    """Each system's baseline row, then its intervention rows; and the longest chain of calls one
    question makes (a baseline, then an intervention on it)."""
    rows, chain = [], 0.0
    for ref in suite.systems:
        system = registry.create("system", ref.name, **ref.options)
        calls, problem = expected_system_calls(system, ref.key)
        units = ref.repeats * len(questions)  # a repeated system runs each question ``repeats`` times
        notes = [problem] if problem else _undeclared_calls(system)
        baseline = Row(ref.key, units, calls * units, model=model_id, notes=notes)
        dry.measure(ref, system, baseline, records)
        rows.append(baseline)
        chain = max(chain, calls * (2 if ref.key in suite.targets_of_interventions() and suite.interventions else 1))
        if ref.key in suite.targets_of_interventions():
            rows += [
                _intervention_row(suite, registry, iref, ref, len(questions), calls, baseline, dry)
                for iref in suite.interventions
            ]
    return rows, chain


def _undeclared_calls(system: Any) -> list[str]:
    from .plugin_api import System

    if type(system).expected_llm_calls is not System.expected_llm_calls:
        return []
    return ["the system does not declare expected_llm_calls: one call a question assumed (0 for a system without LLM)"]


def _price(rows: list[Row], system_backend: Any, judge_backend: Any) -> None:
    """Each row's cost, where its token sizes are known (the judge's rows at the judge's price)."""
    for row in rows:
        backend = judge_backend if row.what == "judge" else system_backend
        if row.prompt_tokens is not None and row.completion_tokens is not None:
            row.cost_usd, row.cost_source = price_of(
                backend, round(row.calls * row.prompt_tokens), round(row.calls * row.completion_tokens)
            )


def _intervention_row(
    suite: Any, registry: Any, iref: Any, sref: Any, questions: int, calls: float, baseline: Row, dry: "_DryRun"
) -> Row:
    probe = registry.create("intervention", iref.name, **iref.options)
    per_question = float(suite.repeats if suite.repeats and probe.repeats > 1 else probe.repeats)
    note = []
    try:
        variants = dry.variants(probe, sref.key)
    except PluginFailure as exc:  # counted as a plain intervention, with the reason
        variants = None
        note.append(str(exc))
    if variants is not None:
        per_question = variants
        note.append("enumerated: variants per question from the dry-run sample")
    units = math.ceil(per_question * questions)
    return Row(
        f"{sref.key} x {iref.key}",
        units,
        calls * units,
        baseline.prompt_tokens,
        baseline.completion_tokens,
        baseline.model,
        notes=note,
    )


KB_BUILD = "knowledge base build"


def _kb_build_row(suite: Any, registry: Any, questions: list[Any], model: str) -> Row:
    """The knowledge base's own LLM calls, as its builder bounds them (its calls count against the budget)."""
    builder = registry.create("kb_builder", suite.knowledge_base.builder, **suite.knowledge_base.options)
    try:
        calls = call_plugin(
            f"kb builder {suite.knowledge_base.builder!r}: expected_llm_calls", builder.expected_llm_calls, questions
        )
        note = (
            "the builder does not say how many calls its build makes"
            if calls is None
            else "at most, by the builder's caps; they count against the suite's budget"
        )
    except PluginFailure as exc:
        calls, note = None, f"{exc}: calls unknown"
    return Row(KB_BUILD, 0, float(calls or 0.0), model=model, notes=[note])


def _judge_row(metrics: list[Any], rows: list[Row], backend: Any, dry: "_DryRun", records: dict[str, RunRecord]) -> Row:
    judge = Row("judge", 0, 0.0, model=backend.model_id)
    for metric in metrics:
        for row in rows:
            condition = row.what.split(" x ", 1)[1] if " x " in row.what else BASELINE
            try:
                judge.calls += row.units * float(
                    call_plugin(
                        f"metric {metric.name!r}: expected_llm_calls({condition!r})",
                        metric.expected_llm_calls,
                        condition,
                    )
                )
            except PluginFailure as exc:  # its calls are not counted: say so
                judge.notes.append(f"{exc}: not counted")
    seen = [c for r in records.values() for c in r.judge_calls if not c.cached]
    if seen:
        judge.prompt_tokens, judge.completion_tokens = _means(seen)
        judge.notes.append(f"token sizes from {len(seen)} recorded judge call(s)")
    elif dry.judge_prompts:
        judge.prompt_tokens = sum(p for p, _ in dry.judge_prompts) / len(dry.judge_prompts)
        judge.completion_tokens = sum(m for _, m in dry.judge_prompts) / len(dry.judge_prompts)
        judge.notes.append(f"prompt sizes from {len(dry.judge_prompts)} dry-run judge call(s); replies at max_tokens")
    return judge


def _means(calls: list[Any]) -> tuple[float, float]:
    return (sum(c.prompt_tokens for c in calls) / len(calls), sum(c.completion_tokens for c in calls) / len(calls))


class _DryRun:
    """The sample questions through each system with an offline LLM that answers every request with
    an instance of its schema, recording each prompt's size (tokens) and ``max_tokens``."""

    def __init__(self, loaded: Any, registry: Any, kb_dir: Path | None, questions: list[Any], model_id: str) -> None:
        from .kb import KnowledgeBase

        self.loaded, self.registry, self.questions, self.model_id = loaded, registry, questions, model_id
        self.kb_dir = kb_dir
        self.view, self.kb, self.kb_state, self.baselines = None, None, "none (the suite has no knowledge base)", {}
        self.judge_prompts: list[tuple[int, int]] = []
        if kb_dir is not None:
            complete = KnowledgeBase.is_complete(kb_dir)
            self.kb_state = f"{kb_dir} ({'built: reused as is' if complete else 'not built: the run builds it first'})"
            if complete:
                self.kb = KnowledgeBase.open(kb_dir, read_only=True)
                self.view = self.kb.view()
        elif loaded.suite.knowledge_base is None:
            self.view = _NO_VIEW

    def close(self) -> None:
        if self.kb is not None:
            self.kb.close()

    def measure(self, ref: Any, system: Any, row: Row, records: dict[str, RunRecord]) -> None:
        seen = [
            c
            for r in records.values()
            if r.key.system == ref.key and r.trace
            for c in r.trace.llm_calls
            if not c.cached and c.error is None
        ]
        if seen:
            row.prompt_tokens, row.completion_tokens = _means(seen)
            row.notes.append(f"token sizes from {len(seen)} recorded call(s)")
            return
        if self.view is None or not self.questions:
            return
        sizes = []
        for question in self.questions:
            llm = _SizingLLM(self.model_id)
            env = Environment(
                view=None if self.view is _NO_VIEW else self.view, llm=llm.client, options=dict(ref.options)
            )
            try:  # a plan must not die on a dry run, not even on a plugin's sys.exit
                trace = call_plugin("dry run", system.run, question, env)
            except PluginFailure as exc:
                row.notes.append(str(exc)[:200])
                continue
            self.baselines[(ref.key, question.id)] = (question, trace)
            sizes += llm.sizes
            self._judge(ref, question, trace)
        if sizes:
            row.prompt_tokens = sum(p for p, _ in sizes) / len(sizes)
            row.completion_tokens = sum(m for _, m in sizes) / len(sizes)
            row.notes.append(f"prompt sizes from {len(sizes)} dry-run call(s); replies counted at max_tokens")

    def _judge(self, ref: Any, question: Any, trace: Any) -> None:
        """The metrics' prompts on the dry-run record (what the judge will be asked)."""
        from .model import UnitKey

        record = RunRecord(key=UnitKey(question_id=question.id, system=ref.key), trace=trace, gold=question.answer)
        llm = _SizingLLM(self.model_id)
        view = None if self.view is _NO_VIEW else self.view
        for mref in self.loaded.suite.metrics:
            metric = self.registry.create("metric", mref.name, **mref.options)
            try:  # a metric that cannot score a dry record adds no judge prompt
                call_plugin("dry scoring", metric.score, record, question, MetricContext(llm=llm.client, view=view))
            except PluginFailure:
                continue
        self.judge_prompts += llm.sizes

    def variants(self, intervention: Any, system: str) -> float | None:
        import random

        counts = []
        for (key, _), (question, trace) in self.baselines.items():
            if key == system:
                listed = call_plugin(
                    f"intervention {intervention.name!r}: variants() on the dry run",
                    intervention.variants,
                    question,
                    trace.model_copy(deep=True),
                    random.Random(0),
                )
                if listed is None:
                    return None
                counts.append(len(listed))
        return sum(counts) / len(counts) if counts else None


_NO_VIEW = object()


class _SizingLLM:
    """A schema-following LLM client that notes (prompt tokens, max_tokens) of every request."""

    def __init__(self, model_id: str) -> None:
        from .llm import LLMClient
        from .llm.offline import SchemaFollowingBackend

        sizes = self.sizes = []

        class Sizing(SchemaFollowingBackend):
            def complete(self, request: dict[str, Any]) -> dict[str, Any]:
                sizes.append((prompt_tokens(model_id, request["messages"]), int(request.get("max_tokens") or 0)))
                return super().complete(request)

        self.client = LLMClient(Sizing(), max_attempts=1, json_retries=0)


def prompt_tokens(model_id: str, messages: list[dict[str, Any]]) -> int:
    """The prompt's tokens by litellm's tokenizer for ``model_id`` (its default one for other models)."""
    from .llm.backends import _import_litellm

    try:
        return int(_import_litellm().token_counter(model=model_id, messages=messages))
    except Exception:  # noqa: BLE001 - an unknown tokenizer: about four characters a token
        return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1


def _recorded(run_dir: Path) -> dict[str, RunRecord]:
    """The run directory's records, read without touching the file (a run may be writing it)."""
    path = run_dir / "records.jsonl"
    found: dict[str, RunRecord] = {}
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = RunRecord.model_validate_json(line)
        except ValueError:
            continue
        found[record.key.as_str()] = record
    return found


def kb_build_command(loaded: "LoadedSuite", run_dir: Path) -> str:
    """The command that builds the suite's knowledge base where a run into ``run_dir`` looks: it
    carries every input of that directory (:func:`provbench.runner.default_kb_dir`) a command line
    can change, as this run has them: the model, the question limit and the run directory, and
    the ``--plugin`` files the suite's builder or loader may come from."""
    from .local_plugins import COMMAND_LINE_PLUGINS
    from .runner import default_run_dir

    plugins = [arg for spec in COMMAND_LINE_PLUGINS for arg in ("--plugin", spec)]
    args = ["provbench", "kb", "build", str(loaded.path), *plugins, "--model", loaded.suite.model.id]
    if loaded.suite.dataset.limit is not None:
        args += ["--limit", str(loaded.suite.dataset.limit)]
    if Path(run_dir) != default_run_dir(loaded):
        args += ["--out", str(run_dir)]
    return f"`{shlex.join(args)}`"


def _cache_entries(run_dir: Path) -> int:
    if not (run_dir / "cache" / "cache.db").is_file():
        return 0
    from .llm.cache import ResponseCache

    cache = ResponseCache(run_dir / "cache")
    try:
        return len(cache)
    finally:
        cache.close()
