"""Base classes a plugin implements. Each registered factory returns one of these.

- :class:`System` answers a question against a graph view and returns a Trace.
- :class:`Intervention` changes what a system sees: a graph view (graph level, the system
  re-runs from scratch) or the system's retrieved context (context level, only the later
  stages re-run through :meth:`System.resume`).
- :class:`Metric` scores records one by one and/or aggregates a whole result set.
- :class:`DatasetLoader` reads a benchmark into Questions and scores answers the dataset's way.
- :class:`KBBuilder` builds a persisted knowledge base from Questions.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from .errors import UserError
from .model import BASELINE, Question, RunRecord, Trace

if TYPE_CHECKING:  # heavy modules stay lazy
    from .kb.store import KnowledgeBase
    from .kb.view import GraphView
    from .llm import LLMClient


OptionsT = TypeVar("OptionsT", bound=BaseModel)


def parse_options(model: type[OptionsT], options: dict[str, Any], owner: str,
                  error: type[Exception] = UserError) -> OptionsT:
    """A plugin's options validated by its pydantic ``model``; ``owner`` names the plugin in the
    error, e.g. "system 'rag'", which lists every bad option and the known ones."""
    try:
        return model(**options)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'options'}={e.get('input')!r}: {e['msg']}" for e in err.errors())
        known = ", ".join(model.model_fields)
        raise error(f"{owner}: bad options: {problems} (known options: {known})") from None


class Plugin:
    """What every plugin kind shares: a ``name`` and, optionally, an ``Options`` pydantic model.

    A subclass that declares ``Options`` gets ``self.options`` (the validated model) from this
    ``__init__``; the registry validates a suite's options against the same model when it
    creates the plugin, so a bad option is reported once, naming kind, plugin and option.
    """

    name: str = ""
    kind: ClassVar[str] = "plugin"
    Options: ClassVar[type[BaseModel] | None] = None

    def __init__(self, **options: Any) -> None:
        owner = f"{self.kind} {self.name or type(self).__name__!r}"
        if self.Options is not None:
            self.options = parse_options(self.Options, options, owner)
        elif options:
            raise UserError(f"{owner}: bad options: takes no options, got {', '.join(sorted(options))}")


@dataclass
class Environment:
    """What a system may use for one run: the graph (only through its view) and the LLM."""

    view: "GraphView"
    llm: "LLMClient"
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)


class System(Plugin, ABC):
    kind = "system"
    supports_resume: bool = False  # True if context-level interventions can re-run later stages

    @abstractmethod
    def run(self, question: Question, env: Environment) -> Trace:
        """Answer ``question`` from scratch. Must not raise for model misbehaviour: record it."""

    def resume(self, question: Question, env: Environment, perturbed: Trace) -> Trace:
        """Re-run only the stages after retrieval, from a perturbed trace's ``artifacts``."""
        raise NotImplementedError(f"system {self.name!r} does not support context-level interventions")


class Intervention(Plugin, ABC):
    kind = "intervention"
    level: Literal["graph", "context"] = "graph"
    repeats: int = 1  # > 1 for randomised interventions; results are averaged over repeats

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random
    ) -> "GraphView":
        """Graph level: a question-specific view derived from the baseline trace."""
        raise NotImplementedError

    def perturb(self, question: Question, baseline: Trace, rng: random.Random) -> Trace:
        """Context level: a copy of ``baseline`` whose artifacts are perturbed."""
        raise NotImplementedError


class MetricValue(BaseModel):
    """One reported number with the counts behind it, so a reader can recompute it."""

    metric: str
    system: str
    condition: str = BASELINE
    value: float | None
    numerator: float | None = None
    denominator: float | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    note: str = ""


def answered_by_reference(records: "Iterable[RunRecord]", reference_system: str) -> set[str]:
    """Paper 000's exclusion step: ids of questions the reference system's baseline answered
    correctly (accuracy 1.0); a failed run never counts as correct."""
    return {r.key.question_id for r in records
            if r.key.system == reference_system and r.key.condition == BASELINE and r.status != "failed"
            and (r.scores.get("accuracy") or 0.0) >= 1.0}


@dataclass
class Results:
    """All records of a run, indexed for metrics."""

    records: list[RunRecord]
    questions: dict[str, Question]
    excluded: set[str] = field(default_factory=set)  # question ids left out of intervention analysis
    loader: "DatasetLoader | None" = None  # its normalize() compares answers ("output changed")

    def select(self, system: str, condition: str = BASELINE) -> list[RunRecord]:
        return [r for r in self.records if r.key.system == system and r.key.condition == condition]

    def baseline(self, system: str, question_id: str) -> RunRecord | None:
        for r in self.records:
            k = r.key
            if k.system == system and k.condition == BASELINE and k.question_id == question_id:
                return r
        return None

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(r.key.system for r in self.records))

    @property
    def conditions(self) -> list[str]:
        return list(dict.fromkeys(r.key.condition for r in self.records))


class Metric(Plugin, ABC):
    kind = "metric"

    def score(self, record: RunRecord, question: Question, context: "MetricContext") -> dict[str, float | None]:
        """Per-record scores, stored in ``record.scores``. Default: none."""
        return {}

    def aggregate(self, results: Results) -> list[MetricValue]:
        """Run-level values. Default: none."""
        return []


@dataclass
class MetricContext:
    """What per-record metrics may use: the LLM (for judges like RAGAS) and the KB view."""

    llm: "LLMClient | None" = None
    view: "GraphView | None" = None
    loader: "DatasetLoader | None" = None


class DatasetLoader(Plugin, ABC):
    """``Options`` here describes the options of :meth:`load` (a suite's ``dataset.options``);
    ``facets`` names the Question fields or metadata keys ``provbench data info`` counts by."""

    kind = "dataset_loader"
    facets: ClassVar[tuple[str, ...]] = ("type", "category")

    def __init__(self) -> None:  # a loader's options go to load(), not here
        pass

    def load_options(self, options: dict[str, Any]) -> Any:
        """``options`` validated against ``Options`` (the same check the suite makes)."""
        if self.Options is None:
            return options
        return parse_options(self.Options, options, f"dataset_loader {self.name!r}")

    @abstractmethod
    def load(self, source: str | Path, *, limit: int | None = None, seed: int = 0,
             sample: bool = False, **options: Any) -> list[Question]:
        """Read and validate questions. ``sample`` draws ``limit`` at random with ``seed``."""

    def claims(self, source: str | Path) -> bool:
        """True if ``source`` looks like this loader's format (lets ``provbench kb build`` and
        ``provbench data info`` pick the loader when only one claims a file). Default: never."""
        return False

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
        """Dataset-specific correctness scores; must include ``accuracy``."""
        ok = prediction is not None and self.normalize(prediction) == self.normalize(question.answer)
        return {"accuracy": float(ok)}


class KBBuilder(Plugin, ABC):
    kind = "kb_builder"

    @abstractmethod
    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        """Build (or reuse, if already complete) the knowledge base at ``kb_dir``."""
