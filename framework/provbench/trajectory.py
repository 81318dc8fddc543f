"""A trajectory scored against its question's gold evidence (docs/provenance.md, section 7).

Inputs: a :class:`~provbench.model.Trace` and the question's gold mapped onto the knowledge base
(:func:`provbench.kb.goldmap.map_gold`). Only mapped gold counts: an unmapped sentence or triple is
neither found nor missed.

* **Recall and precision per stage and kind.** Stages: ``retrieved`` (everything that reached the
  system: ``trace.retrieved``, every step's ``shown`` items, evidence paths), ``visited`` (entities
  visited, text units read), ``cited`` (the citations, cited paths included). Kinds: ``entity``,
  ``relationship``, ``text_unit``, and ``sentence`` (a gold sentence counts once one text unit
  holding it is in the stage). Recall = gold items in the stage / mapped gold items; precision =
  stage items that are gold / stage items. Sentences and their text units are scored against the
  sentence alternative (FEVER's evidence groups) the stage covers best; precision counts a text
  unit of any alternative as gold.
* **Gold-path coverage**: the share of mapped hops (gold triples) whose relation the trajectory
  retrieved, in order or not.
* **First complete step**: the index of the first step after which one gold alternative was
  complete (every mapped sentence of one group, or every mapped hop, shown by a step so far).
* **Wasted steps**: retrieval steps (steps that read: ``Step.shown`` recorded) that showed no gold
  item and led to no step that did. A step *leads to* a later one when that one's arguments name an
  id the step first showed (a search hit looked up, a frontier expanded).

A system that records no ``Step.shown`` is read as one step holding its whole trace (its first
retrieval step's index).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from .kb.goldmap import MappedGold
from .model import Step, Trace

# A leave-one-step-out record's variant data names the step it left out under this key (the
# ``leave-one-step-out`` intervention writes it; reports and metrics find such records by it).
LEFT_OUT_STEP = "left_out_step"
STAGES = ("retrieved", "visited", "cited")
KINDS = ("entity", "relationship", "text_unit", "sentence")
STAGE_KINDS = {"retrieved": KINDS, "visited": ("entity", "text_unit", "sentence"), "cited": KINDS}
READING_KINDS = ("tool_call", "retrieval", "error")


@dataclass(frozen=True)
class Ratio:
    hits: int = 0
    total: int = 0

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None


@dataclass
class StepGold:
    """One step against the gold: what it showed, what of it was new, what was gold."""

    index: int
    kind: str
    tool: str
    retrieval: bool
    shown: dict[str, set[str]]
    new: dict[str, set[str]]
    gold: dict[str, set[str]]  # shown items that are gold, by kind
    hops: list[int] = field(default_factory=list)  # gold hops whose relation it showed
    sentences: list[int] = field(default_factory=list)  # gold sentences a text unit it showed holds
    completes: bool = False  # the gold evidence was complete for the first time after this step
    wasted: bool = False

    @property
    def touches_gold(self) -> bool:
        return any(self.gold.values())


@dataclass
class TrajectoryScore:
    recall: dict[tuple[str, str], Ratio]
    precision: dict[tuple[str, str], Ratio]
    path: Ratio
    steps: list[StepGold]
    first_complete_step: int | None

    @property
    def wasted(self) -> Ratio:
        reading = [s for s in self.steps if s.retrieval]
        return Ratio(sum(s.wasted for s in reading), len(reading))

    def scores(self) -> dict[str, float | None]:
        """Per-record scores (``record.scores``): only those the question's mapped gold defines."""
        out: dict[str, float | None] = {}
        for (stage, kind), ratio in self.recall.items():
            out[f"gold.{stage}.{kind}.recall"] = ratio.value
            if (stage, kind) in self.precision:
                out[f"gold.{stage}.{kind}.precision"] = self.precision[stage, kind].value
        if self.path.total:
            out["gold.path_coverage"] = self.path.value
        if self.recall:
            out["gold.first_complete_step"] = (
                None if self.first_complete_step is None else float(self.first_complete_step)
            )
        if self.wasted.total:
            out["gold.wasted_steps"] = float(self.wasted.hits)
        return out


def score_trajectory(trace: Trace, gold: MappedGold) -> TrajectoryScore:
    stages = stage_items(trace)
    recall, precision = {}, {}
    for stage, kinds in STAGE_KINDS.items():
        for kind in kinds:
            found = _stage_score(gold, kind, stages[stage])
            if found is not None:
                recall[stage, kind] = found[0]
                if found[1] is not None:
                    precision[stage, kind] = found[1]
    mapped_hops = [h for h in gold.hops if h.mapped]
    seen = stages["retrieved"]["relationship"]
    path = Ratio(sum(any(r in seen for r in h.relations) for h in mapped_hops), len(mapped_hops))
    steps = step_gold(trace, gold)
    first = next((s.index for s in steps if s.completes), None)
    return TrajectoryScore(recall, precision, path, steps, first)


# -- stages -----------------------------------------------------------------------------------------


def stage_items(trace: Trace) -> dict[str, dict[str, set[str]]]:
    """The ids of each stage, by kind (module docstring)."""
    retrieved: dict[str, set[str]] = {k: set() for k in ("entity", "relationship", "text_unit")}
    for item in trace.retrieved:
        retrieved.get(item.kind, set()).add(item.id)
    for step in trace.steps:
        for kind, ids in (step.shown or {}).items():
            retrieved.get(kind, set()).update(ids)
    for path in trace.paths:
        retrieved["entity"].update(path.entities)
        retrieved["relationship"].update(path.relations)
    cited = {
        "entity": set(trace.citations.entities),
        "relationship": set(trace.citations.relationships),
        "text_unit": set(trace.citations.text_units),
    }
    for path_id in trace.citations.paths:
        path = trace.path(path_id)
        if path is not None:
            cited["entity"].update(path.entities)
            cited["relationship"].update(path.relations)
    visited = {"entity": set(trace.visited_entities), "text_unit": set(trace.read_text_units)}
    return {"retrieved": retrieved, "visited": visited, "cited": cited}


def _stage_score(gold: MappedGold, kind: str, items: dict[str, set[str]]) -> tuple[Ratio, Ratio | None] | None:
    """(recall, precision) of one kind in one stage; None when the gold has nothing of that kind mapped."""
    if kind in ("entity", "relationship"):
        wanted = gold.ids(kind)
        if not wanted:
            return None
        have = items.get(kind, set())
        return Ratio(len(have & wanted), len(wanted)), Ratio(len(have & wanted), len(have))
    groups = gold.group_units()
    if not groups:
        return None
    units = items.get("text_unit", set())
    covered = [[bool(set(s.text_units) & units) for s in group] for group in groups]
    best = max(range(len(groups)), key=lambda g: (sum(covered[g]) / len(covered[g]), -len(covered[g])))
    if kind == "sentence":
        return Ratio(sum(covered[best]), len(covered[best])), None
    group_units = {t for s in groups[best] for t in s.text_units}
    any_gold = gold.ids("text_unit")
    return Ratio(len(units & group_units), len(group_units)), Ratio(len(units & any_gold), len(units))


# -- steps ------------------------------------------------------------------------------------------


def step_gold(trace: Trace, gold: MappedGold) -> list[StepGold]:
    """Every step that shows or reads, against the gold, with completeness and waste decided."""
    steps, first_shown = [], {}
    gold_ids = {k: gold.ids(k) for k in ("entity", "relationship", "text_unit")}
    for index, kind, tool, retrieval, shown in _steps_shown(trace):
        new = {k: {i for i in ids if i not in first_shown} for k, ids in shown.items()}
        for ids in new.values():
            first_shown.update(dict.fromkeys(ids, index))
        touched = {k: ids & gold_ids.get(k, frozenset()) for k, ids in shown.items()}
        steps.append(
            StepGold(
                index,
                kind,
                tool,
                retrieval,
                shown,
                new,
                {k: v for k, v in touched.items() if v},
                hops=[n for n, h in enumerate(gold.hops) if set(h.relations) & shown.get("relationship", set())],
                sentences=[
                    n for n, s in enumerate(gold.sentences) if set(s.text_units) & shown.get("text_unit", set())
                ],
            )
        )
    _mark_complete(steps, gold)
    _mark_wasted(trace, steps, first_shown)
    return steps


def _steps_shown(trace: Trace) -> Iterator[tuple[int, str, str, bool, dict[str, set[str]]]]:
    recorded = [s for s in trace.steps if s.shown is not None]
    if recorded:
        for step in recorded:
            yield (
                step.index,
                step.kind,
                step.tool or "",
                step.kind in READING_KINDS,
                {k: set(v) for k, v in step.shown.items()},
            )
        return
    items = stage_items(trace)
    whole = {
        "entity": items["retrieved"]["entity"] | items["visited"]["entity"],
        "relationship": items["retrieved"]["relationship"],
        "text_unit": items["visited"]["text_unit"],
    }
    if not any(whole.values()):
        return
    first = next((s for s in trace.steps if s.kind in ("retrieval", "tool_call")), None)
    yield (first.index, "retrieval", first.tool or "", True, whole) if first else (0, "retrieval", "", True, whole)


def _mark_complete(steps: list[StepGold], gold: MappedGold) -> None:
    groups = gold.group_units()
    hops = [h for h in gold.hops if h.mapped]
    seen_units: set[str] = set()
    seen_relations: set[str] = set()
    for step in steps:
        seen_units |= step.shown.get("text_unit", set())
        seen_relations |= step.shown.get("relationship", set())
        sentences_done = any(all(set(s.text_units) & seen_units for s in group) for group in groups)
        hops_done = bool(hops) and all(set(h.relations) & seen_relations for h in hops)
        if sentences_done or hops_done:
            step.completes = True
            return


def _mark_wasted(trace: Trace, steps: list[StepGold], first_shown: dict[str, int]) -> None:
    """A retrieval step is wasted when neither it nor any step it led to touched gold."""
    arguments = {s.index: s.arguments for s in trace.steps}
    led_to: dict[int, set[int]] = {}
    for step in steps:
        for item in _strings(arguments.get(step.index, {})):
            source = first_shown.get(item)
            if source is not None and source < step.index:
                led_to.setdefault(source, set()).add(step.index)
    fruitful: set[int] = set()
    for step in reversed(steps):
        if step.touches_gold or led_to.get(step.index, set()) & fruitful:
            fruitful.add(step.index)
        step.wasted = step.retrieval and step.index not in fruitful


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def new_items(step: Step, trace: Trace) -> dict[str, list[str]]:
    """The ids ``step`` showed that no earlier step of ``trace`` had shown, by kind (order kept)."""
    earlier: set[tuple[str, str]] = set()
    for s in trace.steps:
        if s.index == step.index:
            break
        earlier |= {(k, i) for k, ids in (s.shown or {}).items() for i in ids}
    found = {k: [i for i in ids if (k, i) not in earlier] for k, ids in (step.shown or {}).items()}
    return {k: ids for k, ids in found.items() if ids}


__all__ = [
    "KINDS",
    "LEFT_OUT_STEP",
    "STAGES",
    "STAGE_KINDS",
    "Ratio",
    "StepGold",
    "TrajectoryScore",
    "left_out_step",
    "new_items",
    "score_trajectory",
    "stage_items",
    "step_gold",
]


def left_out_step(record: Any) -> int | None:
    """The step a leave-one-step-out record left out (its variant's ``LEFT_OUT_STEP``), else None."""
    data = record.variant.data if getattr(record, "variant", None) is not None else {}
    step = data.get(LEFT_OUT_STEP)
    return step if isinstance(step, int) and not isinstance(step, bool) else None
