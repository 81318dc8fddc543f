"""Declarative suites: a YAML file naming a dataset, a knowledge base, a model, systems,
interventions and metrics. :func:`load_suite` parses it with ruamel.yaml (keeping line
numbers), validates it with pydantic, and checks plugin names against the registry, so
every mistake is reported as ``file, line N, field 'a.b[2]': what is wrong``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import UserError
from .registry import unknown_name_message

if TYPE_CHECKING:
    from .registry import Registry


class SuiteError(UserError):
    """A suite file is malformed; the message names the file, line and field."""


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
        """The name results use: the label, else the plugin's short name (``p000/rag`` -> ``rag``),
        so naming a plugin in full to pick it among namesakes does not rename its records."""
        return self.label or self.name.rsplit("/", 1)[-1]


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
        default="kuzu", description="embedded graph database of a new KB: Kùzu, or LadybugDB (provbench[ladybug])")


class ModelSpec(_Strict):
    id: str = "embedded"
    params: dict[str, Any] = Field(default_factory=dict)


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
            raise ValueError("the exclusion step needs a reference_system: the system whose correct "
                             "baseline answers leave a question out (e.g. reference_system: llm-only)")
        return self


class ExecutorSpec(_Strict):
    """Where units run: ``threads`` in this process (default) or ``ray`` workers (``provbench[ray]``)."""

    kind: Literal["threads", "ray"] = "threads"
    address: str | None = Field(default=None, description="ray: cluster address ('auto' joins a running "
                                "cluster); default: start a local one")
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


class Suite(_Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    dataset: DatasetSpec
    knowledge_base: KnowledgeBaseSpec | None = None
    model: ModelSpec = Field(default_factory=ModelSpec)
    systems: list[PluginRef] = Field(min_length=1)
    interventions: list[PluginRef] = Field(default_factory=list)
    intervention_systems: list[str] | None = Field(
        default=None, description="systems the interventions apply to (default: every system)")
    metrics: list[PluginRef] = Field(default_factory=list)
    exclusion: ExclusionSpec = Field(default_factory=lambda: ExclusionSpec(enabled=False))
    seed: int = Field(default=0, description="base seed: every unit's seed derives from it and the unit key")
    repeats: int | None = Field(default=None, ge=1, description="override randomised interventions' repeats")
    concurrency: int = Field(default=2, ge=1, le=64)
    executor: ExecutorSpec = Field(default_factory=ExecutorSpec)
    report: ReportSpec = Field(default_factory=ReportSpec)
    leak_guard: LeakGuardSpec = Field(default_factory=LeakGuardSpec)

    @field_validator("systems", "interventions", "metrics")
    @classmethod
    def _unique_keys(cls, refs: list[PluginRef]) -> list[PluginRef]:
        keys = [r.key for r in refs]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"listed more than once: {', '.join(dupes)} (give one a distinct 'label')")
        return refs

    @model_validator(mode="after")
    def _system_references_by_key(self) -> "Suite":
        """``intervention_systems`` and the exclusion reference may name a system in full
        (``p003/ga-rag``): they mean its record key (``ga-rag``)."""
        by_name = {ref.name: ref.key for ref in self.systems if ref.label is None}
        if self.intervention_systems is not None:
            self.intervention_systems = [by_name.get(n, n) for n in self.intervention_systems]
        if self.exclusion.reference_system:
            self.exclusion.reference_system = by_name.get(self.exclusion.reference_system,
                                                          self.exclusion.reference_system)
        return self

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

    def dataset_source(self) -> str:
        """The dataset file resolved against the suite's folder, or the hub id unchanged."""
        candidate = (self.base_dir / self.suite.dataset.path).resolve()
        return str(candidate) if _looks_like_file(self.suite.dataset.path) or candidate.exists() else self.suite.dataset.path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw_text.encode()).hexdigest()


# -- loading --------------------------------------------------------------------------------

def load_suite(path: str | Path, registry: "Registry | None" = None) -> LoadedSuite:
    """Read, validate and check a suite file; raise :class:`SuiteError` naming file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read suite file: {exc.strerror or exc}") from None
    tree = _parse_yaml(path, text)
    if not isinstance(tree, dict):
        raise SuiteError(f"{path}, line 1: a suite must be a YAML mapping (name: ..., dataset: ..., systems: ...)")
    try:
        suite = Suite.model_validate(_plain(tree))
    except ValidationError as exc:
        raise SuiteError(_validation_message(path, tree, exc)) from None
    loaded = LoadedSuite(suite=suite, path=path.resolve(), raw_text=text)
    _check_dataset_file(path, tree, loaded)
    _check_references(path, tree, suite)
    if registry is None:
        from .registry import default_registry

        registry = default_registry()
    check_plugins(path, tree, suite, registry)
    return loaded


def _parse_yaml(path: Path, text: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = " ".join(filter(None, [exc.context, exc.problem])) or str(exc)
        context = exc.context_mark
        if context is not None and mark is not None and context.line != mark.line:
            # an unclosed bracket is found lines later: name where it was opened too
            what += f" (the construct opened at line {context.line + 1}, column {context.column + 1})"
        raise SuiteError(f"{path}{line}: invalid YAML: {what}") from None
    except YAMLError as exc:
        raise SuiteError(f"{path}: invalid YAML: {exc}") from None


def _plain(node: Any) -> Any:
    """ruamel's commented containers -> plain dicts and lists (pydantic wants those)."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    return node


def line_of(tree: Any, loc: tuple) -> int | None:
    """1-based line of the YAML node at ``loc`` (or of its deepest existing ancestor)."""
    node, line = tree, _own_line(tree)
    for part in loc:
        found = None
        if isinstance(node, dict) and part in node:
            found = _lc_line(node, "key", part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            found = _lc_line(node, "item", part)
        else:
            break
        line = found if found is not None else line
        node = node[part]
    return line


def _own_line(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else None


def _lc_line(node: Any, method: str, part: Any) -> int | None:
    """1-based line ruamel recorded for a mapping's key (``method`` "key") or a list's item ("item")."""
    try:
        return getattr(node.lc, method)(part)[0] + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return None


def field_name(loc: tuple) -> str:
    """('systems', 2, 'name') -> "systems[2].name"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _where(path: Path, tree: Any, loc: tuple) -> str:
    line = line_of(tree, loc)
    return f"{path}" + (f", line {line}" if line else "") + (f", field '{field_name(loc)}'" if loc else "")


def _validation_message(path: Path, tree: Any, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = error["msg"]
        if error["type"] == "extra_forbidden":
            known = _known_fields(loc[:-1])
            msg = unknown_name_message("field", str(loc[-1]), known)
        elif error["type"] == "missing":
            msg = "required field is missing"
        problems.append(f"{_where(path, tree, loc)}: {msg}")
    return "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")


def _known_fields(parent_loc: tuple) -> list[str]:
    """Field names valid at ``parent_loc`` (for "did you mean" on a misspelt key)."""
    model: Any = Suite
    for part in parent_loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part)
        model = _model_in(info.annotation) if info is not None else None
        if model is None:
            return []
    return sorted(model.model_fields)


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


FILE_SUFFIXES = {".json", ".jsonl", ".csv", ".tsv", ".parquet", ".txt", ".yaml", ".yml", ".gz", ".zip"}


def _looks_like_file(value: str) -> bool:
    """A hub id is ``owner/name``; anything with a file suffix or a relative/absolute prefix is a file."""
    p = Path(value)
    return p.suffix.lower() in FILE_SUFFIXES or value.startswith((".", "/", "~")) or len(p.parts) > 2


def _check_dataset_file(path: Path, tree: Any, loaded: LoadedSuite) -> None:
    spec = loaded.suite.dataset
    if not _looks_like_file(spec.path):
        return
    source = Path(loaded.dataset_source())
    if not source.exists():
        raise SuiteError(f"{_where(path, tree, ('dataset', 'path'))}: dataset file not found: {source} "
                         f"(paths are relative to the suite file's folder)")


def _check_references(path: Path, tree: Any, suite: Suite) -> None:
    names = suite.system_names
    for i, name in enumerate(suite.intervention_systems or []):
        if name not in names:
            raise SuiteError(f"{_where(path, tree, ('intervention_systems', i))}: "
                             + unknown_name_message("system", name, names) + " (must be one of the suite's systems)")
    ex = suite.exclusion
    if ex.enabled and ex.reference_system not in names:
        loc = ("exclusion", "reference_system") if isinstance(tree.get("exclusion"), dict) else ("exclusion",)
        raise SuiteError(f"{_where(path, tree, loc)}: exclusion reference system {ex.reference_system!r} "
                         f"is not one of the suite's systems ({', '.join(names)})")


def check_plugins(path: Path, tree: Any, suite: Suite, registry: "Registry") -> None:
    """Every named plugin exists, and its factory accepts the options given."""
    from .registry import PluginError

    def check(kind: str, name: str, options: dict, loc: tuple, options_loc: tuple | None = None) -> None:
        try:
            registry.get(kind, name)
        except PluginError as exc:
            raise SuiteError(f"{_where(path, tree, loc)}: {exc}") from None
        try:
            registry.check_options(kind, name, options)
            if kind != "dataset_loader":
                registry.create(kind, name, **options)  # a constructor may check more than Options
        except (PluginError, UserError) as exc:
            where = options_loc or (loc[:-1] + ("options",) if loc[-1] == "name" else loc)
            raise SuiteError(f"{_where(path, tree, where)}: {exc}") from None

    check("dataset_loader", suite.dataset.loader, suite.dataset.options, ("dataset", "loader"),
          ("dataset", "options") if suite.dataset.options else ("dataset", "loader"))
    if suite.knowledge_base is not None:
        check("kb_builder", suite.knowledge_base.builder, suite.knowledge_base.options, ("knowledge_base", "builder"))
    for section, kind in (("systems", "system"), ("interventions", "intervention"), ("metrics", "metric")):
        for i, ref in enumerate(getattr(suite, section)):
            item = tree[section][i]
            loc = (section, i, "name") if isinstance(item, dict) else (section, i)
            check(kind, ref.name, ref.options, loc)
