"""What a suite's controls run: the suite's own systems, interventions and options, except what
the ``controls.differences`` block declares otherwise (docs/controls.md); and the block's checks
when the suite loads (:func:`check_controls`, called by :func:`provbench.suite.load_suite` with its
own reference check, so this module imports nothing of :mod:`provbench.suite`).

:func:`controls_configuration` resolves the block against the suite; :func:`describe_differences`
says in words every way the controls' configuration differs from the suite's (``provbench
validate`` prints it beside the verdicts, and the report beside the Suite validity table), so a
certificate never silently covers another configuration than the one that runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .model import BASELINE
from .suite_yaml import SuiteError, check_intervention_systems, where

if TYPE_CHECKING:
    from pathlib import Path

    from .registry import Registry
    from .results.claims import Claim

# A suite, its references and its exclusion step, as provbench.suite declares them (not imported:
# the suite's loader imports this module).
Suite = PluginRef = ExclusionSpec = Any


@dataclass(frozen=True)
class ControlsConfiguration:
    """The systems, interventions, targets, exclusion and metrics the controls run."""

    systems: list[PluginRef]  # as the suite lists them (a Suite makes them SystemPluginRefs)
    interventions: list[PluginRef]
    intervention_systems: list[str] | None
    exclusion: ExclusionSpec
    metrics: list[PluginRef]

    @property
    def system_names(self) -> list[str]:
        return [s.key for s in self.systems]

    @property
    def condition_names(self) -> list[str]:
        return [BASELINE] + [i.key for i in self.interventions]


def controls_configuration(suite: Suite) -> ControlsConfiguration:
    """The suite's configuration with the controls' declared differences applied."""
    d = suite.controls.differences
    systems = _resolve(d.systems, suite.systems)
    keys = {s.key for s in systems}
    targets = d.intervention_systems  # declared: as written (checked); else the suite's, among those run
    if targets is None and suite.intervention_systems is not None:
        targets = [t for t in suite.intervention_systems if t in keys]
    return ControlsConfiguration(
        systems=systems,
        interventions=_resolve(d.interventions, suite.interventions),
        intervention_systems=targets,
        exclusion=d.exclusion if d.exclusion is not None else suite.exclusion,
        metrics=_resolve(d.metrics, suite.metrics),
    )


def _resolve(declared: list[PluginRef] | None, own: list[PluginRef]) -> list[PluginRef]:
    """The suite's list, or the declared one (``systems``, ``interventions``, ``metrics``): an entry
    named by a key of the suite's list (and no label) is that entry, its ``options`` overriding the
    suite's option by option; any other entry is a plugin reference of its own, added or replacing
    the suite's entry of the same key."""
    if declared is None:
        return list(own)
    by_key = {ref.key: ref for ref in own}
    resolved = []
    for ref in declared:
        base = by_key.get(ref.name) if ref.label is None else None
        resolved.append(ref if base is None else base.model_copy(update={"options": {**base.options, **ref.options}}))
    return resolved


def describe_differences(suite: Suite) -> list[str]:
    """Every way the controls' configuration differs from the suite's, one sentence each (empty:
    the controls certify exactly the suite's systems, interventions and options)."""
    c = controls_configuration(suite)
    lines = _list_differences("system", suite.systems, c.systems)
    lines += _list_differences("intervention", suite.interventions, c.interventions)
    lines += _list_differences("metric", suite.metrics, c.metrics)
    own_targets = [t for t in suite.targets_of_interventions() if t in c.system_names]
    targets = c.intervention_systems if c.intervention_systems is not None else c.system_names
    if c.interventions and targets != own_targets:
        lines.append(
            f"interventions applied to {_names(targets) or 'no system'} "
            f"(suite: {_names(suite.targets_of_interventions())})"
        )
    if c.exclusion != suite.exclusion:
        lines.append(f"exclusion {_exclusion(c.exclusion)} (suite: {_exclusion(suite.exclusion)})")
    return lines


def _list_differences(kind: str, own: list[PluginRef], run: list[PluginRef]) -> list[str]:
    own_by_key, run_by_key = {r.key: r for r in own}, {r.key: r for r in run}
    lines = []
    left_out = [k for k in own_by_key if k not in run_by_key]
    if left_out:
        lines.append(f"{kind}s not run by the controls: {_names(left_out)}")
    for key, ref in run_by_key.items():
        theirs = own_by_key.get(key)
        if theirs is None:
            lines.append(f"{kind} {key} ({ref.name}{_options(ref.options)}) added; the suite does not run it")
        elif theirs.name != ref.name:
            lines.append(f"{kind} {key}: plugin {ref.name} (suite: {theirs.name})")
        else:
            lines += [
                f"{kind} {key}: {name} {_value(ref.options, name)} (suite: {_value(theirs.options, name)})"
                for name in sorted(set(ref.options) | set(theirs.options))
                if ref.options.get(name, _UNSET) != theirs.options.get(name, _UNSET)
            ]
    return lines


_UNSET = object()


def _names(keys: list[str]) -> str:
    """Keys in a list, quoted where one holds a comma ("graphrag, abstains below 0.80")."""
    return ", ".join(f'"{k}"' if "," in k else k for k in keys)


def _value(options: dict[str, Any], name: str) -> str:
    return repr(options[name]) if name in options else "the plugin's default"


def _options(options: dict[str, Any]) -> str:
    return f", options {options}" if options else ""


def _exclusion(spec: ExclusionSpec) -> str:
    return f"by {spec.reference_system}" if spec.enabled else "off"


# -- checks when the suite is loaded -----------------------------------------------------------------


def check_controls(path: "Path", tree: Any, suite: Suite, registry: "Registry", check_refs: Callable) -> None:
    """The controls' differences and claims (the suite checked the block's own plugins): each
    declared difference names a plugin that takes its options (``check_refs``, the suite's check
    of a list of references), the dataset has gold, the LLMs are offline, and every claim finds
    what it reads in the configuration the controls run."""
    d, diff = suite.controls.differences, ("controls", "differences")
    for section, kind in (("systems", "system"), ("interventions", "intervention"), ("metrics", "metric")):
        declared = getattr(d, section)
        if declared is not None:  # each entry as the controls run it: the suite's own with its overrides
            check_refs(path, tree, registry, kind, _resolve(declared, getattr(suite, section)), (*diff, section))
    config = controls_configuration(suite)
    _check_targets(path, tree, config, diff)
    _check_gold_llms_claims(path, tree, suite, config, registry)


def _check_targets(path: "Path", tree: Any, config: ControlsConfiguration, diff: tuple) -> None:
    names = config.system_names
    check_intervention_systems(path, tree, config.intervention_systems, names, diff, "one the controls run")
    ex = config.exclusion
    if ex.enabled and ex.reference_system not in names:
        raise SuiteError(
            f"{where(path, tree, (*diff, 'systems'))}: the exclusion's reference system "
            f"{ex.reference_system!r} is not among the systems the controls run ({', '.join(names)}); "
            "run it too, or declare an exclusion under controls.differences"
        )


def _check_gold_llms_claims(
    path: "Path", tree: Any, suite: Suite, config: ControlsConfiguration, registry: "Registry"
) -> None:
    controls = suite.controls
    loader = registry.get("dataset_loader", controls.dataset.loader).factory
    if not getattr(loader, "provides_gold", False):
        raise SuiteError(
            f"{where(path, tree, ('controls', 'dataset', 'loader'))}: dataset loader "
            f"{controls.dataset.loader!r} gives no gold evidence (DatasetLoader.provides_gold), so no "
            "control could know when an answer is right; the controls need a dataset with gold"
        )
    for i, name in enumerate(controls.llms):
        problem = control_model_problem(name, registry)
        if problem:
            raise SuiteError(f"{where(path, tree, ('controls', 'llms', i))}: {problem}")
    for i, ref in enumerate(controls.claims):
        claim = registry.create("claim", ref.name, **ref.options)
        problems = claim_problems(claim, controls.llms, config)
        if problems:
            loc = ("controls", "claims", i) + (("name",) if isinstance(tree["controls"]["claims"][i], dict) else ())
            raise SuiteError(f"{where(path, tree, loc)}: claim {ref.key!r}: {'; '.join(problems)}")
        _check_excused_controls(path, tree, i, ref, claim)


def _check_excused_controls(path: "Path", tree: Any, index: int, ref: Any, claim: "Claim") -> None:
    """``expect_not_measurable`` excuses controls the claim reads, by name: another key excuses nothing."""
    own = claim.needs().controls
    for control in ref.expect_not_measurable or {}:
        if control not in own:
            loc = ("controls", "claims", index, "expect_not_measurable", control)
            raise SuiteError(
                f"{where(path, tree, loc)}: claim {ref.key!r} reads no control {control!r} "
                f"(it reads: {', '.join(own) or 'none'}), so there is no verdict of it to excuse"
            )


def claim_problems(claim: "Claim", llms: list[str], config: ControlsConfiguration) -> list[str]:
    """What a claim needs that the controls lack (empty when they have everything)."""
    needs = claim.needs()
    have = {"control LLM": set(llms), "system": set(config.system_names), "condition": set(config.condition_names)}
    wanted = {"control LLM": needs.controls, "system": needs.systems, "condition": needs.conditions}
    return [
        f"needs {kind} {name!r}, which the controls do not run (they run: {', '.join(sorted(have[kind])) or 'none'})"
        for kind, names in wanted.items()
        for name in names
        if name not in have[kind]
    ]


def control_model_problem(name: str, registry: Any) -> str | None:
    """Why ``name`` cannot be a control LLM (None when it can): a behaviour of :mod:`provbench.controls`, or a
    model id of a registered backend other than litellm (a control never calls an API model)."""
    from .controls.backend import PREFIX, control_model_id
    from .controls.behaviours import BEHAVIOURS
    from .llm.backends import DEFAULT_BACKEND, backend_prefix

    model_id = control_model_id(name)
    prefix = backend_prefix(model_id, registry.names("llm_backend"))
    if prefix == PREFIX and model_id.partition(":")[2] in BEHAVIOURS:
        return None
    if prefix in (PREFIX, DEFAULT_BACKEND):
        return (
            f"unknown control LLM {name!r}: name one of {', '.join(BEHAVIOURS)}, or give the model id of a "
            "registered offline backend (prefix:name, not litellm: controls never call an API model)"
        )
    return None
