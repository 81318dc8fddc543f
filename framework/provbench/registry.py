"""The plugin manager and the typed registry of what plugins register.

Built-in plugin modules and installed ``provbench`` entry points are pluggy plugins. Each
registration hook returns ``{name: factory}``; the registry checks every factory against its
kind's base class, files it under ``namespace/name`` and records where it came from and its
version. A plugin module sets its namespace with ``PROVBENCH_NAMESPACE = "p000"``; an entry
point without one uses the entry point's name; general built-ins may have none. Lookups accept
the full name, or the short name when only one plugin of the kind has it.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import inspect
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import pluggy
from pydantic import BaseModel

from . import hookspecs
from .errors import PluginError, UserError, raised_where  # noqa: F401 (PluginError is re-exported)
from .results.claims import Claim
from .version import __version__
from .plugin_api import DatasetLoader, Intervention, KBBuilder, Metric, System
from .plugin_base import Plugin, parse_options

# Built-in plugins are ordinary plugin modules (datasette's DEFAULT_PLUGINS pattern).
BUILTIN_PLUGINS = (
    "provbench.llm.backends",
    "provbench.controls.plugin",
    "provbench.llm.offline",
    "provbench_plugins.datasets.twowiki.loader",
    "provbench_plugins.datasets.curriculum.loader",
    "provbench_plugins.kb_builders.twowiki.builder",
    "provbench_plugins.kb_builders.concepts.builder",
    "provbench_plugins.datasets.qa.loader",
    "provbench_plugins.kb_builders.documents.builder",
    "provbench_plugins.kb_builders.graph_import.builder",
    "provbench_plugins.metrics",
    "provbench_plugins.interventions",
    "provbench_plugins.trajectory",
    "provbench_plugins.systems",
    "provbench_plugins.papers.p000_neighborhoods",
    "provbench_plugins.datasets.medmcqa",
    "provbench_plugins.kb_builders.medical.builder",
    "provbench_plugins.papers.p001_kgrag_ex",
    "provbench_plugins.papers.p002_planning",
    "provbench_plugins.datasets.fever.loader",
    "provbench_plugins.kb_builders.fever.builder",
    "provbench_plugins.papers.p003_ga_rag",
)


@dataclass(frozen=True)
class Kind:
    hook: str
    base: type | None  # what a factory must build; None: checked by ``check`` instead
    check: Callable[[Any], bool] | None = None


def _is_llm_backend(obj: Any) -> bool:
    return isinstance(getattr(obj, "model_id", None), str) and callable(getattr(obj, "complete", None))


KINDS: dict[str, Kind] = {
    "system": Kind("provbench_register_systems", System),
    "intervention": Kind("provbench_register_interventions", Intervention),
    "metric": Kind("provbench_register_metrics", Metric),
    "dataset_loader": Kind("provbench_register_dataset_loaders", DatasetLoader),
    "kb_builder": Kind("provbench_register_kb_builders", KBBuilder),
    "llm_backend": Kind("provbench_register_llm_backends", None, _is_llm_backend),
    "claim": Kind("provbench_register_claims", Claim),
}


@dataclass(frozen=True)
class Registration:
    kind: str
    name: str  # full name: "namespace/short" or just "short"
    factory: Callable[..., Any]
    source: str  # "builtin (module)" or "package-name version (entry point name)"
    version: str = ""

    @property
    def short_name(self) -> str:
        return self.name.rpartition("/")[2]

    @property
    def namespace(self) -> str:
        return self.name.rpartition("/")[0]

    @property
    def description(self) -> str:
        doc = getattr(self.factory, "__doc__", None) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @property
    def options_model(self) -> type[BaseModel] | None:
        model = getattr(self.factory, "Options", None)
        return model if isinstance(model, type) and issubclass(model, BaseModel) else None

    def label(self) -> str:
        return f"{self.kind} {self.name!r} (from {self.source})"


@dataclass
class Registry:
    by_kind: dict[str, dict[str, Registration]] = field(default_factory=lambda: {k: {} for k in KINDS})

    def add(self, reg: Registration) -> None:
        check_factory(reg)
        existing = self.by_kind[reg.kind].get(reg.name)
        if existing is not None:
            raise PluginError(
                f"duplicate {reg.kind} name {reg.name!r}: registered by {existing.source} and by {reg.source}"
            )
        self.by_kind[reg.kind][reg.name] = reg

    def names(self, kind: str) -> list[str]:
        return sorted(self.by_kind[kind])

    def get(self, kind: str, name: str) -> Registration:
        """The plugin registered as ``name``, or the only one whose short name is ``name``."""
        regs = self.by_kind[kind]
        if name in regs:
            return regs[name]
        matches = [r for r in regs.values() if r.short_name == name]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise PluginError(
                f"{kind} name {name!r} is ambiguous: {', '.join(sorted(r.name for r in matches))} (use the full name)"
            )
        raise PluginError(unknown_name_message(kind, name, self.names(kind)))

    def check_options(self, kind: str, name: str, options: dict[str, Any]) -> BaseModel | None:
        """Validate ``options`` against the plugin's ``Options`` model (or its factory's signature);
        raises a PluginError naming kind, plugin, option and the known options."""
        reg = self.get(kind, name)
        owner = f"{kind} {reg.name!r}"
        if reg.options_model is not None:
            return parse_options(reg.options_model, options, owner, PluginError)
        if kind == "dataset_loader":  # a loader without Options takes its options in load()
            return None
        if (
            isinstance(reg.factory, type)
            and issubclass(reg.factory, Plugin)
            and reg.factory.__init__ is Plugin.__init__
        ):
            if options:  # Plugin.__init__ without Options takes none
                raise PluginError(
                    f"{owner}: bad options: {'; '.join(f'unknown option {o!r}' for o in sorted(options))}"
                    " (known options: none)"
                )
            return None
        _check_signature(reg.factory, options, owner)
        return None

    def create(self, kind: str, name: str, **options: Any) -> Any:
        """Instantiate a plugin after validating its options; its type is checked."""
        reg = self.get(kind, name)
        if kind == "dataset_loader":  # loaders take their options in load(), validated by the suite
            if options:
                raise PluginError(
                    f"dataset_loader {reg.name!r}: options go to load() (a suite's "
                    f"dataset.options), not to the loader: {', '.join(sorted(options))}"
                )
            obj = reg.factory()
        else:
            self.check_options(kind, name, options)
            obj = reg.factory(**options)
        check_instance(reg, obj)
        if not getattr(obj, "name", None):
            try:
                obj.name = reg.short_name  # instances learn the name they were registered under
            except AttributeError:
                pass
        return obj

    def all(self) -> list[Registration]:
        return [r for kind in KINDS for r in sorted(self.by_kind[kind].values(), key=lambda r: r.name)]

    def versions(self) -> dict[str, str]:
        """``kind:name -> version`` of every plugin, for the run manifest."""
        return {f"{r.kind}:{r.name}": r.version for r in self.all()}


def _check_signature(factory: Callable[..., Any], options: dict[str, Any], owner: str) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return
    params = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return
    known = [p.name for p in params]
    unknown = sorted(set(options) - set(known))
    missing = [p.name for p in params if p.default is p.empty and p.name not in options]
    if unknown or missing:
        problems = [f"unknown option {o!r}" for o in unknown] + [f"missing option {m!r}" for m in missing]
        raise PluginError(f"{owner}: bad options: {'; '.join(problems)} (known options: {', '.join(known) or 'none'})")


def check_factory(reg: Registration) -> None:
    kind = KINDS[reg.kind]
    factory = reg.factory
    if "/" in reg.short_name or not reg.short_name:
        raise PluginError(f"{reg.label()}: a registered name must be non-empty and contain no '/'")
    if not callable(factory):
        raise PluginError(f"{reg.label()}: registered {factory!r}, which is not a class or callable")
    if kind.base is not None and isinstance(factory, type) and not issubclass(factory, kind.base):
        raise PluginError(
            f"{reg.label()}: {factory.__module__}.{factory.__qualname__} is not a subclass of "
            f"{kind.base.__module__}.{kind.base.__name__}"
        )


def check_instance(reg: Registration, obj: Any) -> None:
    kind = KINDS[reg.kind]
    ok = isinstance(obj, kind.base) if kind.base is not None else kind.check(obj)
    if not ok:
        wanted = (
            f"a {kind.base.__module__}.{kind.base.__name__}" if kind.base else "an LLM backend (model_id, complete)"
        )
        raise PluginError(f"{reg.label()}: its factory returned {type(obj).__qualname__}, not {wanted}")


def unknown_name_message(kind: str, name: str, known: list[str]) -> str:
    message = f"unknown {kind} {name!r}"
    shorts = {k.rpartition("/")[2]: k for k in known}
    close = difflib.get_close_matches(name, [*known, *shorts], n=1, cutoff=0.5)
    if close:
        message += f"; did you mean {shorts.get(close[0], close[0])!r}?"
    if known:
        message += f" (known: {', '.join(known)})"
    return message


def make_plugin_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for module_name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    if load_entry_points:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    return pm


LOCAL_MARK = "__provbench_local__"  # a local plugin module's attribute: (its file or module, sha256 of its file)


@dataclass(frozen=True)
class Origin:
    source: str
    version: str
    namespace: str


def provbench_version() -> str:
    try:
        return importlib.metadata.version("provbench")
    except importlib.metadata.PackageNotFoundError:
        return __version__


def plugin_origin(pm: pluggy.PluginManager, plugin: object) -> Origin:
    """Where a plugin module came from, its version and its namespace."""
    name = pm.get_name(plugin) or getattr(plugin, "__name__", repr(plugin))
    declared = getattr(plugin, "PROVBENCH_NAMESPACE", None)
    if name in BUILTIN_PLUGINS:
        return Origin(f"builtin ({name})", provbench_version(), declared or "")
    local = getattr(plugin, LOCAL_MARK, None)
    if local is not None:
        return local_origin(local, declared)
    for dist_plugin, dist in pm.list_plugin_distinfo():
        if dist_plugin is plugin:
            return Origin(
                f"{dist.project_name} {dist.version} (entry point {name})",
                dist.version,
                name if declared is None else declared,
            )
    return Origin(name, "", declared or "")


def local_origin(mark: tuple[str, str], declared: str | None) -> Origin:
    """A plugin file or module a suite or ``--plugin`` named (:mod:`provbench.local_plugins`): its
    version is its file's digest, its default namespace its file's or module's own name."""
    source, digest = mark
    namespace = source.rpartition("/")[2].removesuffix(".py") if source.endswith(".py") else source.rpartition(".")[2]
    return Origin(
        f"local {source} (sha256 {digest})", f"sha256:{digest[:12]}", namespace if declared is None else declared
    )


def plugin_source(pm: pluggy.PluginManager, plugin: object) -> str:
    return plugin_origin(pm, plugin).source


def section_providers(pm: pluggy.PluginManager) -> list[Registration]:
    """Plugins that contribute report sections, as rows for ``provbench plugins`` (they register
    no named factory: the hook is called for every run)."""
    rows = []
    for impl in reversed(pm.hook.provbench_report_sections.get_hookimpls()):
        origin = plugin_origin(pm, impl.plugin)
        name = origin.namespace or (pm.get_name(impl.plugin) or "").rpartition(".")[2]
        described = impl.function if (impl.function.__doc__ or "").strip() else impl.plugin
        rows.append(Registration("report_sections", name, described, origin.source, origin.version))
    return rows


def build_registry(pm: pluggy.PluginManager) -> Registry:
    registry = Registry()
    for kind_name, kind in KINDS.items():
        caller = getattr(pm.hook, kind.hook)
        for impl in reversed(caller.get_hookimpls()):  # registration order
            origin = plugin_origin(pm, impl.plugin)
            registered = _registered(impl, kind.hook, origin)
            for name, factory in registered.items():
                full = f"{origin.namespace}/{name}" if origin.namespace else name
                reg = Registration(kind_name, full, factory, origin.source, origin.version)
                if "/" in name:
                    raise PluginError(
                        f"{reg.label()}: register {name.rpartition('/')[2]!r} and set "
                        "PROVBENCH_NAMESPACE in the plugin module instead of a '/' in the name"
                    )
                registry.add(reg)
    return registry


def _registered(impl: Any, hook: str, origin: Origin) -> dict[str, Any]:
    """What one plugin's registration hook returns; an error in it is one line naming the plugin,
    the hook, the file and line that raised, and the error (not the traceback of provbench's loop)."""
    try:
        return impl.function() or {}
    except Exception as exc:  # noqa: BLE001 - the plugin's own code: any error, located
        file = inspect.getsourcefile(impl.function)
        raise PluginError(f"plugin {origin.source}: {hook}() raised {raised_where(exc, file)}") from None


@lru_cache(maxsize=1)
def default_plugin_manager() -> pluggy.PluginManager:
    return make_plugin_manager()


@lru_cache(maxsize=4)
def _registry_of(pm: pluggy.PluginManager) -> Registry:
    return build_registry(pm)


def default_registry() -> Registry:
    """The registry of whichever plugin manager ``default_plugin_manager`` gives now (cached per manager;
    ``default_registry.cache_clear()`` rebuilds it after plugins join)."""
    return _registry_of(default_plugin_manager())


default_registry.cache_clear = _registry_of.cache_clear  # type: ignore[attr-defined]
