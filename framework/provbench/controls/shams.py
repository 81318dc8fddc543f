"""Shams: what a claim is about, replaced by something that cannot show its effect.

A claim that passes on its controls might pass whatever the intervention, explanation or control
did. ``provbench validate`` therefore checks every claim again under shams derived from
:meth:`Claim.about <provbench.controls.Claim.about>` (docs/controls.md, "Power against shams"):

* each condition with a positive expectation run by a stand-in intervention (:class:`ShamIntervention`,
  registered for the controls' runs as ``control-sham``) that **hides nothing**, and one that hides
  a **same-size random set** (as many entities, relations, text units ... as the real one hid, drawn
  from the whole knowledge base; for a context-level intervention, another of its variants drawn at
  random). They run in the control's own run directory, so they reuse its baselines;
* each reference condition (a contrast's reference) run by one that hides nothing: a contrast with a
  reference that did nothing controls for nothing, so the claim must fail (a same-size random set
  is no sham of a reference, which is commonly that random set already);
* each positive control swapped for the claim's negative one (no run: the negative's records);
* the compared settings made one (every system of ``about().settings`` answered by the first's records);
* each explanation or ranking the claim reads through :meth:`ControlRuns.credit` made blind: all credit
  to the first candidate, to a random one, or the credit shuffled;
* each suite option it tests switched off (``exclusion``: no question left out).

A claim that still passes under a sham has no power against it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..plugin_api import Intervention

if TYPE_CHECKING:
    import pluggy

    from ..kb import GraphView
    from ..model import Question, Trace
    from ..registry import Registry
    from ..results.data import RunData
    from ..suite import PluginRef
    from ..results.about import ClaimAbout
    from ..results.claims import ControlRuns

SHAM_PLUGIN = "control-sham"
HIDES = ("nothing", "random")
BLIND = ("first", "random", "shuffled")
SEPARATOR = "~sham-"
OPTION_SHAMS = {"exclusion": "the exclusion step off (no question left out)"}


@dataclass(frozen=True)
class Sham:
    """One sham of what a claim is about: ``kind`` condition, control, settings or explanation;
    ``target`` the condition, control, reference setting or explanation; ``mode`` how it is faked."""

    kind: str
    target: str
    mode: str
    others: tuple[str, ...] = ()  # settings: the systems answered by the target's records

    @property
    def label(self) -> str:
        if self.kind == "condition":
            return f"{self.target} hides {'nothing' if self.mode == 'nothing' else 'a same-size random set'}"
        if self.kind == "control":
            return f"{self.target} swapped for {self.mode}"
        if self.kind == "settings":
            return f"every setting answered as {self.target}"
        if self.kind == "option":
            return OPTION_SHAMS[self.target]
        return {
            "first": f"{self.target}: the first element",
            "random": f"{self.target}: a random element",
            "shuffled": f"{self.target}: shuffled credit",
        }[self.mode]

    @property
    def condition_key(self) -> str:
        return f"{self.target}{SEPARATOR}{self.mode}"


def shams_of(about: "ClaimAbout", llms: list[str]) -> list[Sham]:
    """Every sham a claim's declaration gives, among the controls that run."""
    shams = [Sham("condition", c, mode) for c in about.positive_conditions for mode in HIDES]
    shams += [Sham("condition", c, "nothing") for c in about.reference_conditions]  # a random set: the reference again
    for positive in about.positive_controls:
        negative = next((n for n in about.negative_controls if n in llms), None)
        if negative is not None:
            shams.append(Sham("control", positive, negative))
    if len(about.settings) > 1:
        shams.append(Sham("settings", about.settings[0], "same", about.settings[1:]))
    shams += [Sham("explanation", e, mode) for e in about.explanations for mode in BLIND]
    shams += [Sham("option", option, "off") for option in about.options if option in OPTION_SHAMS]
    return shams


def sham_interventions(shams: list[Sham], interventions: list["PluginRef"], registry: "Registry") -> list["PluginRef"]:
    """The stand-in interventions the condition shams need, one per (condition, mode); none for a
    random stand-in of a context-level intervention without variants (it has no same-size set)."""
    from ..suite import PluginRef

    by_key = {ref.key: ref for ref in interventions}
    refs = []
    for s in dict.fromkeys(s for s in shams if s.kind == "condition" and s.target in by_key):
        of = by_key[s.target]
        if s.mode == "random" and not random_stand_in_exists(registry.create("intervention", of.name, **of.options)):
            continue
        refs.append(
            PluginRef(
                name=SHAM_PLUGIN, label=s.condition_key, options={"of": of.model_dump(mode="json"), "hides": s.mode}
            )
        )
    return refs


def random_stand_in_exists(intervention: Intervention) -> bool:
    return intervention.level != "context" or type(intervention).variants is not Intervention.variants


# -- the runs a claim sees under a sham ---------------------------------------------------------------


def under_sham(runs: "ControlRuns", sham: Sham) -> "ControlRuns":
    """The control runs (with every stand-in's records) as the claim sees them with ``sham`` in
    place of what it is about."""
    from ..results.claims import ControlRuns

    if sham.kind == "condition":
        return ControlRuns({c: _sham_condition(run, sham) for c, run in runs.runs.items()})
    real = without_shams(runs)
    if sham.kind == "control":
        return ControlRuns({**real.runs, sham.target: real.run(sham.mode)})
    if sham.kind == "explanation":
        return ControlRuns(real.runs, blind=sham.mode)
    if sham.kind == "option":
        return ControlRuns({c: _without_exclusion(run) for c, run in real.runs.items()})
    return ControlRuns({c: _same_settings(run, sham.target, sham.others) for c, run in real.runs.items()})


def without_shams(runs: "ControlRuns") -> "ControlRuns":
    """The runs as the suite made them: no stand-in's record."""
    from ..results.claims import ControlRuns

    return ControlRuns(
        {
            c: replace(run, records=[r for r in run.records if SEPARATOR not in r.key.condition])
            for c, run in runs.runs.items()
        }
    )


def _sham_condition(run: "RunData", sham: Sham) -> "RunData":
    """The sham's records in place of the condition's, under the condition's key."""
    kept = [r for r in run.records if r.key.condition != sham.target and SEPARATOR not in r.key.condition]
    faked = [
        r.model_copy(update={"key": r.key.model_copy(update={"condition": sham.target})})
        for r in run.records
        if r.key.condition == sham.condition_key
    ]
    return replace(run, records=kept + faked)


def _same_settings(run: "RunData", reference: str, others: tuple[str, ...]) -> "RunData":
    """Each of ``others`` answered by ``reference``'s records (under its own key)."""
    own = [r for r in run.records if r.key.system == reference]
    kept = [r for r in run.records if r.key.system not in others]
    return replace(
        run,
        records=kept
        + [r.model_copy(update={"key": r.key.model_copy(update={"system": s})}) for s in others for r in own],
    )


def _without_exclusion(run: "RunData") -> "RunData":
    """The run as if its exclusion step were off: no question left out (the records stay as they
    are: a question the step left out has no intervention records)."""
    suite = {**run.manifest.suite, "exclusion": {"enabled": False, "reference_system": None}}
    return replace(
        run, manifest=run.manifest.model_copy(update={"suite": suite}), metrics={**run.metrics, "excluded": []}
    )


def sham_records_present(runs: "ControlRuns", sham: Sham) -> bool:
    """Whether a condition sham ran for some control (a random sham of a context-level
    intervention without variants cannot)."""
    return any(r.key.condition == sham.condition_key for run in runs.runs.values() for r in run.records)


# -- the stand-in intervention ------------------------------------------------------------------------

ENTITY_FIELDS, RELATION_FIELDS = ("entities", "block_text_of", "hide_metadata_of"), ("relations",)
INVALIDATING_FIELDS = ("invalidated", "out_of_time")


class ShamIntervention(Intervention):
    """Stands in for ``inner``: the same variants, repeats and resume points, but its view hides
    nothing, or as many random items of each kind as the real view hid."""

    def __init__(self, inner: Intervention, hides: str) -> None:
        super().__init__()
        self.inner, self.hides = inner, hides
        self.level, self.repeats, self.resumes = inner.level, inner.repeats, inner.resumes

    def variants(self, question: "Question", baseline: "Trace", rng: random.Random):
        return self.inner.variants(question, baseline, rng)

    def resume_point(self, question, baseline, rng, **kwargs: Any):
        return self.inner.resume_point(question, baseline, rng, **kwargs)

    def make_view(self, view: "GraphView", question, baseline, rng, **kwargs: Any) -> "GraphView":
        if self.hides == "nothing":
            return view
        real = self.inner.make_view(view, question, baseline, random.Random(rng.random()), **kwargs).hidden
        return random_view(view, {f: len(getattr(real, f) - getattr(view.hidden, f)) for f in _FIELDS}, rng)

    def perturb(self, question, baseline, rng, **kwargs: Any):
        if self.hides == "nothing":
            return baseline
        variants = self.inner.variants(question, baseline.model_copy(deep=True), random.Random(rng.random())) or []
        if not variants:
            raise RuntimeError(
                f"no random stand-in for {self.inner.name!r}: a context-level intervention "
                "without variants has no same-size random set"
            )
        return self.inner.perturb(question, baseline, rng, variant=rng.choice(variants))


_FIELDS = (*ENTITY_FIELDS, *RELATION_FIELDS, "text_units", *INVALIDATING_FIELDS)


def random_view(view: "GraphView", sizes: dict[str, int], rng: random.Random) -> "GraphView":
    """A view hiding ``sizes[field]`` random ids of each field's kind, drawn from what ``view`` shows."""
    pools = {
        "entity": sorted(view.entity_ids()),
        "relation": sorted(view.relation_ids()),
        "text_unit": sorted(view.text_unit_ids()),
    }

    def draw(field: str) -> list[str]:
        kind = "entity" if field in ENTITY_FIELDS else "text_unit" if field == "text_units" else "relation"
        return rng.sample(pools[kind], min(sizes.get(field, 0), len(pools[kind])))

    hidden = view.hide(**{f: draw(f) for f in (*ENTITY_FIELDS, *RELATION_FIELDS, "text_units")})
    invalid = [r for f in INVALIDATING_FIELDS for r in draw(f)]
    return hidden.invalidate(invalid) if invalid else hidden


def sham_plugin(pm: "pluggy.PluginManager") -> Any:
    """A plugin registering ``control-sham`` for the controls' runs: its inner intervention is
    created by the registry of ``pm`` (so a suite's own interventions have stand-ins too)."""
    from ..hookspecs import hookimpl

    class ShamPlugin:
        registry = None

        def make(self, of: dict, hides: str) -> ShamIntervention:
            from ..registry import build_registry

            if hides not in HIDES:
                raise ValueError(f"hides must be one of {', '.join(HIDES)}, not {hides!r}")
            if self.registry is None:
                self.registry = build_registry(pm)
            inner = self.registry.create("intervention", of["name"], **of.get("options", {}))
            return ShamIntervention(inner, hides)

        @hookimpl
        def provbench_register_interventions(self):
            return {SHAM_PLUGIN: self.make}

    return ShamPlugin()
