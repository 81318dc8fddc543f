"""Base classes a plugin implements. Each registered factory returns one of these.

- :class:`System` answers a question against a graph view and returns a Trace.
- :class:`Intervention` changes what a system sees: a graph view (graph level, the system
  re-runs from scratch) or the system's retrieved context (context level, only the later
  stages re-run through :meth:`System.resume`).
- :class:`Metric` scores records one by one and/or aggregates a whole result set.
- :class:`DatasetLoader` reads a benchmark into Questions and scores answers the dataset's way.
- :class:`KBBuilder` builds a persisted knowledge base from Questions.

All derive from :class:`Plugin` (:mod:`provbench.plugin_base`): a class may declare ``Options`` (a pydantic model) and gets
``self.options``; the registry validates a suite's options against it (:func:`parse_options` is
the one path, so every bad option is reported the same way). docs/plugins.md has an example
of each kind.
"""

from __future__ import annotations

import functools
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Literal, Sequence

from pydantic import BaseModel, Field

from .errors import UserError
from .locks import kb_build_lock
from .model import BASELINE, MetricValue, Question, RunRecord, Trace, VariantInfo
from .plugin_base import Plugin, parse_options

# the record rules metrics use, kept importable from here (they live with the results)
from .results.rules import (
    CORRECT,
    answered_by_reference,
    compared_output,
    correctness,
    is_correct,
    is_leaked,
    left_out_as,
    left_out_counts,
    left_out_note,
    left_out_text,
    not_measurable,
    own_index_reads,
    select,
    with_left_out_notes,
)

__all__ = [
    "Plugin",
    "parse_options",
    "Environment",
    "System",
    "ResumePoint",
    "Variant",
    "Intervention",
    "MetricValue",
    "Results",
    "Metric",
    "MetricContext",
    "DatasetLoader",
    "KBBuilder",
    "CORRECT",
    "correctness",
    "is_correct",
    "compared_output",
    "is_leaked",
    "answered_by_reference",
    "left_out_as",
    "left_out_counts",
    "left_out_note",
    "left_out_text",
    "not_measurable",
    "own_index_reads",
    "with_left_out_notes",
]

if TYPE_CHECKING:  # heavy modules stay lazy
    from .kb.knowledge_base import KnowledgeBase
    from .kb.hidden import HiddenContent
    from .kb.view import GraphView
    from .llm import LLMClient


@dataclass
class Environment:
    """What a system may use for one run: the graph (only through its view) and the LLM."""

    view: "GraphView"
    llm: "LLMClient"
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def hidden(self) -> "HiddenContent | None":
        """What the intervention hides, resolved to ids, names and texts, for a system that
        retrieves from a store of its own (:mod:`provbench.kb.hidden`); None without a graph."""
        return self.view.hidden_content() if self.view is not None else None


class System(Plugin, ABC):
    kind = "system"
    supports_resume: bool = False  # True if context-level interventions can re-run later stages
    # whose ids the trace records: the knowledge base's (the leak guard checks them against the
    # view), or "own" for a system that retrieves from a store of its own and records its ids
    trace_ids: ClassVar[Literal["kb", "own"]] = "kb"
    # False for a system that replays answers produced earlier (``recorded``): no intervention can
    # change what it saw, so a suite whose interventions apply to it is refused at load time
    live: ClassVar[bool] = True

    @abstractmethod
    def run(self, question: Question, env: Environment) -> Trace:
        """Answer ``question`` from scratch. Must not raise for model misbehaviour: record it."""

    def resume(self, question: Question, env: Environment, perturbed: Trace) -> Trace:
        """Re-run only the stages after retrieval, from a perturbed trace's ``artifacts``."""
        raise NotImplementedError(f"system {self.name!r} does not support context-level interventions")

    # True if the system can replay a recorded trajectory up to a step (resume_from_step)
    supports_step_resume: bool = False

    def resume_from_step(self, question: Question, env: Environment, recorded: Trace, point: "ResumePoint") -> Trace:
        """Replay ``recorded`` (a trace of this system for ``question``) up to ``point.step`` and go on
        from there against ``env.view``: the steps before it replay their recorded replies (no LLM
        call), step ``point.step`` replays its recorded action and sees what ``env.view`` now returns,
        and after it the system decides again, or, with ``point.replay_rest``, replays its recorded
        actions too and decides only its answer. Needs ``Step.reply`` in the recorded steps."""
        raise NotImplementedError(f"system {self.name!r} cannot resume from a step")

    @property
    def expected_llm_calls(self) -> float:
        """About how many LLM calls one run makes: only a hint, so the runner can start the longest
        chains of work (a costly baseline, then its interventions) first instead of last."""
        return 1.0

    def instructions(self) -> Sequence[str]:
        """Text this system sends in its LLM requests whatever its view shows (a system prompt, tool
        descriptions), for the leak guard, which reads each request without it: a word of it shows
        nothing the view hides, though a knowledge base may name a text unit "Rules". Never put
        retrieved text here (the guard would not see it leak); () keeps every word as evidence."""
        return ()


class ResumePoint(BaseModel):
    """Where a re-run picks up a recorded trajectory (:meth:`System.resume_from_step`): ``step`` is
    the index (``Step.index``) of the first step whose result comes from the intervention's view."""

    step: int = Field(ge=0)
    replay_rest: bool = Field(
        False, description="replay the recorded actions after the step too; only the answer is decided again"
    )


class Variant(VariantInfo):
    """One variant of an enumerated intervention: ``id`` is stable for a given baseline trace
    (e.g. "node:2"), ``description`` says in words what it changes, ``data`` is for the plugin."""


class Intervention(Plugin, ABC):
    """Changes what a system sees, at graph or context level.

    Three shapes: a single intervention (``repeats == 1``), a randomised one re-drawn ``repeats``
    times (results are averaged over repeats), and an *enumerated* one whose :meth:`variants`
    lists, from the baseline trace, every variant to run (e.g. "remove node k of the path"): each
    variant is its own unit and record, and the chosen one is passed as ``variant=``.
    """

    kind = "intervention"
    level: Literal["graph", "context"] = "graph"
    repeats: int = 1
    # a graph-level intervention whose units resume the baseline's trajectory (resume_point) under
    # its view instead of running the system afresh; only systems with supports_step_resume take it
    resumes: ClassVar[bool] = False
    # the parts of a knowledge base it acts on ("relations"): on a KB without one it is not
    # measurable, and a run marks it so instead of running it (provbench.kb.health)
    needs: ClassVar[tuple[str, ...]] = ()

    def variants(self, question: Question, baseline: Trace, rng: random.Random) -> list[Variant] | None:
        """The variants to run for this question, or None when the intervention is not enumerated.
        An empty list means there is nothing to perturb for this question (no unit runs)."""
        return None

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random, **kwargs: Any
    ) -> "GraphView":
        """Graph level: a question-specific view derived from the baseline trace
        (``kwargs`` holds ``variant`` for an enumerated intervention)."""
        raise NotImplementedError

    def perturb(self, question: Question, baseline: Trace, rng: random.Random, **kwargs: Any) -> Trace:
        """Context level: a copy of ``baseline`` whose artifacts are perturbed
        (``kwargs`` holds ``variant`` for an enumerated intervention)."""
        raise NotImplementedError

    def resume_point(self, question: Question, baseline: Trace, rng: random.Random, **kwargs: Any) -> ResumePoint:
        """For ``resumes``: where the unit's system picks up the baseline's trajectory
        (``kwargs`` holds ``variant`` for an enumerated intervention)."""
        raise NotImplementedError


@dataclass
class Results:
    """A run's records, indexed for metrics. :meth:`Metric.aggregate` gets :meth:`paired`: ``records``
    holds only the units the pairing rule keeps, unless the metric sets ``reads_left_out``."""

    records: list[RunRecord]
    questions: dict[str, Question]
    excluded: set[str] = field(default_factory=set)  # question ids left out of intervention analysis
    loader: "DatasetLoader | None" = None  # its normalize() compares answers ("output changed")
    include_leaked: bool = False  # the suite's leak_guard.include_leaked
    all_records: list[RunRecord] | None = None  # every unit, when ``records`` holds those the rule keeps

    def paired(self) -> "Results":
        """These results with ``records`` thinned by the pairing rule, so that a metric that
        iterates ``records`` counts what ``select`` would; ``select(leaked=True)`` still gives all."""
        kept = [r for r in self.records if not left_out_as(r, self.include_leaked)]
        return replace(self, records=kept, all_records=self.every_record())

    def every_record(self) -> list[RunRecord]:
        """Every unit of the run, also those the pairing rule leaves out."""
        return self.records if self.all_records is None else self.all_records

    def select(self, system: str, condition: str = BASELINE, *, leaked: bool | None = None) -> list[RunRecord]:
        """The records of a system under a condition, for statistics: units the pairing rule leaves
        out (:func:`provbench.results.rules.left_out_as`) are left out; ``leaked=True`` gives every record."""
        return select(self.every_record(), system, condition, self.include_leaked, leaked)

    def baseline(self, system: str, question_id: str) -> RunRecord | None:
        for r in self.records:
            k = r.key
            if k.system == system and k.condition == BASELINE and k.question_id == question_id:
                return r
        return None

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(r.key.system for r in self.every_record()))

    @property
    def conditions(self) -> list[str]:  # with a condition the pairing rule emptied ("not measurable")
        return list(dict.fromkeys(r.key.condition for r in self.every_record()))


class Metric(Plugin, ABC):
    kind = "metric"
    # the per-record score keys whose values a judge LLM gives (Phoenix shows them as LLM
    # evaluations, the others as CODE); a third-party metric names its judged scores here too
    judged_scores: ClassVar[tuple[str, ...]] = ()
    # aggregate's ``results.records`` holds only the units the pairing rule keeps (so a value never
    # counts what its "left out" note says it left out); a metric that must see every unit sets this
    reads_left_out: ClassVar[bool] = False

    def score(self, record: RunRecord, question: Question, context: "MetricContext") -> dict[str, float | None]:
        """Per-record scores, stored in ``record.scores``. Default: none."""
        return {}

    def aggregate(self, results: Results, context: "MetricContext") -> list[MetricValue]:
        """Run-level values, with the same context :meth:`score` gets. Default: none."""
        return []

    def expected_llm_calls(self, condition: str) -> float:
        """About how many judge calls scoring one record of ``condition`` makes (``provbench plan``
        counts them). Default: none."""
        return 0.0

    def warm_up(self) -> None:
        """Load what scoring will need (a slow import, a model) ahead of the first record: a run
        calls it on a thread while it starts and its first units wait on the LLM. Default: nothing."""


@dataclass
class MetricContext:
    """What per-record metrics may use: the judge LLM (RAGAS and every LLM-judged score) and the KB view.

    ``llm`` is the suite's ``judge`` model (``--judge``), by default the systems' own model; a run
    notes each call it makes while scoring a record on that record (``RunRecord.judge_calls``)."""

    llm: "LLMClient | None" = None
    view: "GraphView | None" = None
    loader: "DatasetLoader | None" = None


class DatasetLoader(Plugin, ABC):
    """``Options`` here describes the options of :meth:`load` (a suite's ``dataset.options``);
    ``facets`` names the Question fields or metadata keys ``provbench data info`` counts by."""

    kind = "dataset_loader"
    facets: ClassVar[tuple[str, ...]] = ("type", "category")
    # True when load() fills Question.gold (provbench.gold): controls and gold-trajectory scores need it
    provides_gold: ClassVar[bool] = False

    def __init__(self) -> None:  # a loader's options go to load(), not here
        pass

    def load_options(self, options: dict[str, Any]) -> Any:
        """``options`` validated against ``Options`` (the same check the suite makes)."""
        if self.Options is None:
            return options
        return parse_options(self.Options, options, f"dataset_loader {self.name!r}")

    @abstractmethod
    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        """Read and validate questions. ``sample`` draws ``limit`` at random with ``seed``."""

    def claims(self, source: str | Path) -> bool:
        """True if ``source`` looks like this loader's format (lets ``provbench kb build`` and
        ``provbench data info`` pick the loader when only one claims a file). Default: never."""
        return False

    def unclaimed_because(self, source: str | Path) -> str | None:
        """Why ``claims(source)`` is False, for a file of a kind this loader reads (e.g. which
        columns it looked for and which the file has); None: nothing to say."""
        return None

    def problems(self, source: str | Path, limit: int = 10, **options: Any) -> list[str]:
        """Up to ``limit`` problems of ``source``, each naming file, record and field. Default:
        the first error :meth:`load` raises; a loader can override it to report more."""
        try:
            self.load(source, **options)
        except UserError as err:
            return [str(err)]
        return []

    def normalize(self, text: str) -> str:
        return " ".join(text.lower().split())

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        """Dataset-specific correctness scores; must include ``accuracy``. ``prediction`` is None
        when the system abstained, and "" when a run ended without an answer (failed, exhausted)."""
        ok = prediction is not None and self.normalize(prediction) == self.normalize(question.answer)
        return {"accuracy": float(ok)}


class KBBuilder(Plugin, ABC):
    """Builds (or reuses) a knowledge base. Every subclass's ``build`` runs under the KB build
    lock of its ``kb_dir`` (:func:`provbench.locks.kb_build_lock`), whoever calls it: a second
    process building the same directory waits for the first, then finds the KB complete and
    reuses it. A builder needs no lock of its own."""

    kind = "kb_builder"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "holds_kb_lock", False):
            cls.build = _under_kb_lock(build)  # type: ignore[method-assign]

    @abstractmethod
    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        """Build (or reuse, if already complete) the knowledge base at ``kb_dir``."""

    def expected_llm_calls(self, questions: list[Question]) -> float | None:
        """At most how many LLM calls building a knowledge base for ``questions`` makes, for
        ``provbench plan`` (a build's calls count against the run's ``budget:``); None: unknown."""
        return None

    def build_options(self, overrides: dict[str, Any]) -> Any:
        """``self.options`` with a ``build`` call's own options on top, validated by ``Options``."""
        owner = f"kb builder {self.name or type(self).__name__!r}"
        if self.Options is None:
            if overrides:
                raise UserError(f"{owner}: bad options: takes no options, got {', '.join(sorted(overrides))}")
            return None
        return parse_options(self.Options, {**self.options.model_dump(exclude_unset=True), **overrides}, owner)


def _under_kb_lock(build: Callable[..., "KnowledgeBase"]) -> Callable[..., "KnowledgeBase"]:
    """``build`` holding the KB build lock of its ``kb_dir`` (re-entrant: a nested build is free)."""

    @functools.wraps(build)
    def locked_build(self: KBBuilder, questions: list[Question], kb_dir: Path, *args: Any, **kwargs: Any):
        with kb_build_lock(kb_dir):
            return build(self, questions, kb_dir, *args, **kwargs)

    locked_build.holds_kb_lock = True  # type: ignore[attr-defined]
    return locked_build
