"""Declarative suites: a YAML file naming a dataset, a knowledge base, a model, systems,
interventions and metrics. :func:`load_suite` parses it with ruamel.yaml (keeping line
numbers), validates it with pydantic, and checks plugin names against the registry, so
every mistake is reported as ``file, line N, field 'a.b[2]': what is wrong`` (a controls block's
own checks: :mod:`provbench.suite_controls`, handed this module's reference check).

Longer than 300 logical lines because the checks :func:`load_suite` runs against the registry (plugin
names and options, live intervention targets) stand beside the declarations they check: in a
module of their own they would need these models and be needed by the loader, a circle.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .assertions import AssertionSpec, SystemRef, check_declarations
from .costs import BudgetSpec
from .errors import UserError
from .jsonlines import input_errors
from .llm.spec import ModelSpec, check_model_params
from .results.rules import plugin_key
from .suite_yaml import (
    SuiteError,
    check_intervention_systems,
    field_name,
    line_of,
    parse_yaml as _parse_yaml,
    plain as _plain,
    validation_message,
)
from .suite_yaml import where as _where

__all__ = ["Suite", "LoadedSuite", "PluginRef", "SuiteError", "load_suite", "line_of", "field_name"]

if TYPE_CHECKING:
    from .registry import Registry


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PluginRef(_Strict):
    """A plugin by registry name, with the options its factory takes.

    ``label`` names the condition in results (default: the plugin name), so one intervention
    can appear twice with different options.
    """

    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @property
    def key(self) -> str:
        """The name results use (:func:`provbench.results.rules.plugin_key`)."""
        return plugin_key(self.name, self.label)


class SystemPluginRef(PluginRef, SystemRef):
    """A system of the suite: a plugin reference, run ``repeats`` times per question at baseline."""

    @model_validator(mode="before")
    @classmethod
    def _from_plugin_ref(cls, value: Any) -> Any:  # a controls block's systems (plain references)
        return value.model_dump() if isinstance(value, PluginRef) else value


class DatasetSpec(_Strict):
    loader: str
    path: str = Field(description="file path relative to the suite file, or a hub id")
    options: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    sample: bool = False


class KnowledgeBaseSpec(_Strict):
    builder: str
    options: dict[str, Any] = Field(default_factory=dict)
    directory: str | None = Field(default=None, description="default: a cache dir keyed by the inputs")
    graph_store: Literal["kuzu", "ladybug"] = Field(
        default="kuzu", description="embedded graph database of a new KB: Kùzu, or LadybugDB (provbench[ladybug])"
    )


class ExclusionSpec(_Strict):
    """Paper 000's exclusion step: questions the reference system answers correctly at
    baseline are left out of the intervention runs and analysis."""

    enabled: bool = True
    reference_system: str | None = Field(default=None, description="a system key of the suite; required when enabled")

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return {"enabled": value}
        if isinstance(value, str):
            return {"reference_system": value}
        return value

    @model_validator(mode="after")
    def _reference_named(self) -> "ExclusionSpec":
        if self.enabled and not self.reference_system:
            raise ValueError(
                "the exclusion step needs a reference_system: the system whose correct "
                "baseline answers leave a question out (e.g. reference_system: llm-only)"
            )
        return self


class ExecutorSpec(_Strict):
    """Where units run: ``threads`` in this process (default) or ``ray`` workers (``provbench[ray]``)."""

    kind: Literal["threads", "ray"] = "threads"
    address: str | None = Field(
        default=None, description="ray: cluster address ('auto' joins a running cluster); default: start a local one"
    )
    workers: int | None = Field(default=None, ge=1, description="ray: worker processes (default: the cluster's CPUs)")

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        return {"kind": value} if isinstance(value, str) else value


class LeakGuardSpec(_Strict):
    """The leak guard (provbench.leakguard): it checks every graph-level intervention unit."""

    include_leaked: bool = Field(default=False, description="count leaked units in intervention statistics")


class ReportSpec(_Strict):
    title: str | None = None
    per_question_pages: bool = True
    subgraph_pictures: bool = True
    bootstrap_resamples: int = Field(default=2000, ge=100)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    seed: int = 0


def unique_keys(refs: list[PluginRef]) -> list[PluginRef]:
    keys = [r.key for r in refs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"listed more than once: {', '.join(dupes)} (give one a distinct 'label')")
    return refs


def systems_by_key(block: Any) -> Any:
    """``intervention_systems`` and the exclusion reference may name a system in full
    (``p003/ga-rag``): they mean its record key (``ga-rag``)."""
    by_name = {ref.name: ref.key for ref in block.systems if ref.label is None}
    if block.intervention_systems is not None:
        block.intervention_systems = [by_name.get(n, n) for n in block.intervention_systems]
    if block.exclusion.reference_system:
        block.exclusion.reference_system = by_name.get(
            block.exclusion.reference_system, block.exclusion.reference_system
        )
    return block


Reason = Annotated[str, Field(min_length=1)]


class ClaimRef(PluginRef):
    """A claim (``provbench_register_claims``) the controls must confirm."""

    expect_failure: str | None = Field(
        default=None,
        description="why the claim is known not to hold yet: its "
        "verdict is shown, but `provbench validate` does not fail on it",
    )
    open: str | None = Field(default=None, description="why its outcome is open on this suite (shown, never failing)")
    expect_no_power: str | None = Field(default=None, description="why it passes under a sham yet (shown, not failing)")
    expect_not_measurable: dict[str, Reason] | None = Field(
        default=None,
        description="control -> why its verdicts over no measured unit (or too few questions) are expected "
        "here (shown, not failing); another control's unmeasured verdict still fails",
    )

    @field_validator("expect_not_measurable", mode="before")
    @classmethod
    def _per_control(cls, value: Any) -> Any:
        """A plain reason would excuse every control of the claim, the oracle's defect too: refused."""
        if isinstance(value, str):
            raise ValueError(
                "name the control it excuses and why, as a mapping: "
                f"expect_not_measurable: {{ignores-context: {json.dumps(value)}}}"
            )
        return value


class ControlDifferences(_Strict):
    """What the controls run otherwise than the suite (unset: its own); see :mod:`provbench.suite_controls`."""

    systems: list[PluginRef] | None = Field(default=None, min_length=1)
    interventions: list[PluginRef] | None = None
    intervention_systems: list[str] | None = None
    exclusion: ExclusionSpec | None = None
    metrics: list[PluginRef] | None = None

    @field_validator("systems", "interventions", "metrics")
    @classmethod
    def _unique_keys(cls, refs: list[PluginRef] | None) -> list[PluginRef] | None:
        return refs if refs is None else unique_keys(refs)


class ControlsSpec(_Strict):
    """Known-truth controls (``provbench validate``, docs/controls.md): data with gold, the control LLMs that
    run the suite's own systems in turn, the claims, and any ``differences`` from the suite's configuration."""

    dataset: DatasetSpec
    knowledge_base: KnowledgeBaseSpec | None = None
    llms: list[str] = Field(
        min_length=1,
        description="control LLMs: names in provbench.controls (oracle, "
        "random, ...) or model ids of a registered offline backend",
    )
    claims: list[ClaimRef] = Field(min_length=1)
    differences: ControlDifferences = Field(default_factory=ControlDifferences)

    @field_validator("claims")
    @classmethod
    def _unique_keys(cls, refs: list[PluginRef]) -> list[PluginRef]:
        return unique_keys(refs)

    @field_validator("llms")
    @classmethod
    def _distinct(cls, llms: list[str]) -> list[str]:
        if len(set(llms)) != len(llms):
            raise ValueError(f"a control LLM is listed more than once: {llms}")
        return llms


class Suite(_Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    plugins: list[str] = Field(
        default_factory=list,
        description="the user's own plugin files (./my_system.py, "
        "relative to the suite's folder) or modules (my_pkg.module), loaded before the rest",
    )
    dataset: DatasetSpec
    knowledge_base: KnowledgeBaseSpec | None = None
    model: ModelSpec = Field(default_factory=ModelSpec)
    judge: ModelSpec | None = Field(
        default=None, description="the model of every LLM-judged metric (default: the systems' model)"
    )
    budget: BudgetSpec | None = None
    systems: list[SystemPluginRef] = Field(min_length=1)
    interventions: list[PluginRef] = Field(default_factory=list)
    intervention_systems: list[str] | None = Field(
        default=None, description="systems the interventions apply to (default: every system)"
    )
    metrics: list[PluginRef] = Field(default_factory=list)
    exclusion: ExclusionSpec = Field(default_factory=lambda: ExclusionSpec(enabled=False))
    seed: int = Field(default=0, description="base seed: every unit's seed derives from it and the unit key")
    repeats: int | None = Field(default=None, ge=1, description="override randomised interventions' repeats")
    concurrency: int = Field(default=2, ge=1, le=64)
    unit_timeout_s: float = Field(
        default=3600.0,
        gt=0,
        description="a unit still running after this long is "
        "abandoned and recorded failed (far above an honest unit's time; docs/reliability.md)",
    )
    executor: ExecutorSpec = Field(default_factory=ExecutorSpec)
    report: ReportSpec = Field(default_factory=ReportSpec)
    leak_guard: LeakGuardSpec = Field(default_factory=LeakGuardSpec)
    controls: ControlsSpec | None = Field(default=None, description="known-truth controls (`provbench validate`)")
    assertions: list[AssertionSpec] = Field(default_factory=list, validation_alias=AliasChoices("assert", "assertions"))

    @field_validator("systems", "interventions", "metrics")
    @classmethod
    def _unique_keys(cls, refs: list[PluginRef]) -> list[PluginRef]:
        return unique_keys(refs)

    @model_validator(mode="after")
    def _system_references_by_key(self) -> "Suite":
        return systems_by_key(self)

    # -- derived ---------------------------------------------------------------------------
    @property
    def system_names(self) -> list[str]:
        return [s.key for s in self.systems]

    def targets_of_interventions(self) -> list[str]:
        return list(self.intervention_systems) if self.intervention_systems is not None else self.system_names

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


class LoadedSuite(BaseModel):
    """A validated suite plus where it came from (to resolve relative paths)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    suite: Suite
    path: Path
    raw_text: str

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def dataset_source(self, spec: DatasetSpec | None = None) -> str:
        """The dataset file (``spec``, default the suite's) resolved against the suite's folder,
        or the hub id unchanged."""
        path = (spec or self.suite.dataset).path
        candidate = (self.base_dir / path).resolve()
        return str(candidate) if _looks_like_file(path) or candidate.exists() else path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw_text.encode()).hexdigest()


# -- loading --------------------------------------------------------------------------------


def load_suite(path: str | Path, registry: "Registry | None" = None) -> LoadedSuite:
    """Read, validate and check a suite file; raise :class:`SuiteError` naming file and line."""
    path = Path(path)
    try:
        with input_errors(path):  # not UTF-8: the line and column
            text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read suite file: {exc.strerror or exc}") from None
    tree = _parse_yaml(path, text)
    if not isinstance(tree, dict):
        raise SuiteError(f"{path}, line 1: a suite must be a YAML mapping (name: ..., dataset: ..., systems: ...)")
    try:
        suite = Suite.model_validate(_plain(tree))
    except ValidationError as exc:
        raise SuiteError(validation_message(path, tree, exc, Suite)) from None
    loaded = LoadedSuite(suite=suite, path=path.resolve(), raw_text=text)
    _check_dataset_file(path, tree, loaded, suite.dataset)
    _check_references(path, tree, suite)
    check_declarations(suite, lambda loc: _where(path, tree, loc), SuiteError)  # assertions, repeats
    check_model_params({"model": suite.model, "judge": suite.judge}, lambda loc: _where(path, tree, loc), SuiteError)
    if registry is None:
        from .registry import default_registry

        registry = default_registry()
    check_plugins(path, tree, suite, registry)
    check_live_targets(path, tree, suite, registry)
    if suite.controls is not None:
        from .suite_controls import check_controls

        _check_dataset_file(path, tree, loaded, suite.controls.dataset, ("controls",))
        check_plugins(path, tree, suite.controls, registry, ("controls",))
        check_controls(path, tree, suite, registry, check_refs)
    return loaded


FILE_SUFFIXES = {".json", ".jsonl", ".csv", ".tsv", ".parquet", ".txt", ".yaml", ".yml", ".gz", ".zip"}


def _looks_like_file(value: str) -> bool:
    """A hub id is ``owner/name``; anything with a file suffix or a relative/absolute prefix is a file."""
    p = Path(value)
    return p.suffix.lower() in FILE_SUFFIXES or value.startswith((".", "/", "~")) or len(p.parts) > 2


def _check_dataset_file(path: Path, tree: Any, loaded: LoadedSuite, spec: DatasetSpec, prefix: tuple = ()) -> None:
    if not _looks_like_file(spec.path):
        return
    source = Path(loaded.dataset_source(spec))
    if not source.exists():
        raise SuiteError(
            f"{_where(path, tree, (*prefix, 'dataset', 'path'))}: dataset file not found: {source} "
            f"(paths are relative to the suite file's folder)"
        )


def _check_references(path: Path, tree: Any, block: "Suite | ControlsSpec", prefix: tuple = ()) -> None:
    names = block.system_names
    check_intervention_systems(path, tree, block.intervention_systems, names, prefix, "one of the suite's systems")
    ex = block.exclusion
    if ex.enabled and ex.reference_system not in names:
        nested = isinstance(_node(tree, (*prefix, "exclusion")), dict)
        loc = (*prefix, "exclusion", "reference_system") if nested else (*prefix, "exclusion")
        raise SuiteError(
            f"{_where(path, tree, loc)}: exclusion reference system {ex.reference_system!r} "
            f"is not one of the suite's systems ({', '.join(names)})"
        )


def _node(tree: Any, loc: tuple) -> Any:
    for part in loc:
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def check_plugins(
    path: Path, tree: Any, block: "Suite | ControlsSpec", registry: "Registry", prefix: tuple = ()
) -> None:
    """Every named plugin of a block (the suite, or its ``controls`` at ``prefix``) exists, and its
    factory accepts the options given."""
    from .registry import PluginError

    def check(kind: str, name: str, options: dict, loc: tuple, options_loc: tuple) -> None:
        try:
            registry.get(kind, name)
        except PluginError as exc:
            raise SuiteError(f"{_where(path, tree, (*prefix, *loc))}: {exc}") from None
        try:
            registry.check_options(kind, name, options)
            if kind != "dataset_loader":
                registry.create(kind, name, **options)  # a constructor may check more than Options
        except (PluginError, UserError) as exc:
            raise SuiteError(f"{_where(path, tree, (*prefix, *options_loc))}: {exc}") from None

    check(
        "dataset_loader",
        block.dataset.loader,
        block.dataset.options,
        ("dataset", "loader"),
        ("dataset", "options") if block.dataset.options else ("dataset", "loader"),
    )
    if block.knowledge_base is not None:
        kb = block.knowledge_base
        check(
            "kb_builder",
            kb.builder,
            kb.options,
            ("knowledge_base", "builder"),
            ("knowledge_base", "options" if kb.options else "builder"),
        )
    sections = (
        [("claims", "claim")]
        if isinstance(block, ControlsSpec)
        else [("systems", "system"), ("interventions", "intervention"), ("metrics", "metric")]
    )
    for section, kind in sections:
        check_refs(path, tree, registry, kind, getattr(block, section), (*prefix, section))


def check_live_targets(
    path: Path, tree: Any, block: "Suite | ControlsSpec", registry: "Registry", prefix: tuple = ()
) -> None:
    """Interventions apply only to live systems: one that replays recorded answers cannot be intervened on."""
    if not block.interventions:
        return
    names = {ref.key: ref.name for ref in block.systems}
    targets = block.intervention_systems if block.intervention_systems is not None else list(names)
    for i, key in enumerate(targets):
        if getattr(registry.get("system", names[key]).factory, "live", True):
            continue
        loc = (
            (*prefix, "intervention_systems", i)
            if block.intervention_systems is not None
            else (*prefix, "interventions")
        )
        raise SuiteError(
            f"{_where(path, tree, loc)}: system {key!r} replays answers recorded earlier, so no "
            "intervention can change what it saw: interventions need a live system (list only live "
            "systems under intervention_systems, or remove the interventions)"
        )


def check_refs(path: Path, tree: Any, registry: "Registry", kind: str, refs: list[PluginRef], loc: tuple) -> None:
    """Each reference of a list at ``loc`` names a plugin of ``kind`` that accepts its options."""
    from .registry import PluginError

    for i, ref in enumerate(refs):
        item = _node(tree, loc)[i]
        where = (*loc, i, "name") if isinstance(item, dict) else (*loc, i)
        try:
            registry.get(kind, ref.name)
        except PluginError as exc:
            raise SuiteError(f"{_where(path, tree, where)}: {exc}") from None
        try:
            registry.check_options(kind, ref.name, ref.options)
            registry.create(kind, ref.name, **ref.options)  # a constructor may check more than Options
        except (PluginError, UserError) as exc:
            where = (*loc, i, "options") if isinstance(item, dict) else where
            raise SuiteError(f"{_where(path, tree, where)}: {exc}") from None
