"""The plugin manager: loads built-in plugins and installed ``provbench`` entry points,
and collects what they register into one registry per kind."""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import pluggy

from . import hookspecs
from .errors import UserError

# Built-in plugins are ordinary plugin modules (datasette's DEFAULT_PLUGINS pattern).
BUILTIN_PLUGINS = (
    "provbench_plugins.datasets.twowiki.loader",
    "provbench_plugins.kb_builders.twowiki.builder",
    "provbench_plugins.metrics",
    "provbench_plugins.papers.p000_neighborhoods",
    "provbench_plugins.datasets.medmcqa.loader",
    "provbench_plugins.kb_builders.medical.builder",
    "provbench_plugins.papers.p001_kgrag_ex",
)

KINDS = {
    "system": "provbench_register_systems",
    "intervention": "provbench_register_interventions",
    "metric": "provbench_register_metrics",
    "dataset_loader": "provbench_register_dataset_loaders",
    "kb_builder": "provbench_register_kb_builders",
}


class PluginError(UserError):
    """A plugin could not be registered or looked up."""


@dataclass(frozen=True)
class Registration:
    kind: str
    name: str
    factory: Callable[..., Any]
    source: str  # "builtin (module)" or "package-name (entry point)"

    @property
    def description(self) -> str:
        doc = getattr(self.factory, "__doc__", None) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""


@dataclass
class Registry:
    by_kind: dict[str, dict[str, Registration]] = field(default_factory=lambda: {k: {} for k in KINDS})

    def add(self, reg: Registration) -> None:
        existing = self.by_kind[reg.kind].get(reg.name)
        if existing is not None:
            raise PluginError(
                f"duplicate {reg.kind} name {reg.name!r}: registered by {existing.source} "
                f"and by {reg.source}"
            )
        self.by_kind[reg.kind][reg.name] = reg

    def names(self, kind: str) -> list[str]:
        return sorted(self.by_kind[kind])

    def get(self, kind: str, name: str) -> Registration:
        try:
            return self.by_kind[kind][name]
        except KeyError:
            raise PluginError(unknown_name_message(kind, name, self.names(kind))) from None

    def create(self, kind: str, name: str, **options: Any) -> Any:
        """Instantiate a plugin; a bad option becomes an error naming the plugin."""
        factory = self.get(kind, name).factory
        try:
            obj = factory(**options)
        except TypeError as exc:
            raise PluginError(f"{kind} {name!r}: bad options {sorted(options)}: {exc}") from exc
        if not getattr(obj, "name", None):
            try:
                obj.name = name  # instances learn the name they were registered under
            except AttributeError:
                pass
        return obj

    def all(self) -> list[Registration]:
        return [r for kind in KINDS for r in sorted(self.by_kind[kind].values(), key=lambda r: r.name)]


def unknown_name_message(kind: str, name: str, known: list[str]) -> str:
    message = f"unknown {kind} {name!r}"
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    if close:
        message += f"; did you mean {close[0]!r}?"
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


def plugin_source(pm: pluggy.PluginManager, plugin: object) -> str:
    name = pm.get_name(plugin) or getattr(plugin, "__name__", repr(plugin))
    if name in BUILTIN_PLUGINS:
        return f"builtin ({name})"
    for dist_plugin, dist in pm.list_plugin_distinfo():
        if dist_plugin is plugin:
            return f"{dist.project_name} {dist.version} (entry point {name})"
    return name


def build_registry(pm: pluggy.PluginManager) -> Registry:
    registry = Registry()
    for kind, hook_name in KINDS.items():
        caller = getattr(pm.hook, hook_name)
        for impl in reversed(caller.get_hookimpls()):  # registration order
            registered = impl.function() or {}
            source = plugin_source(pm, impl.plugin)
            for name, factory in registered.items():
                registry.add(Registration(kind, name, factory, source))
    return registry


@lru_cache(maxsize=1)
def default_plugin_manager() -> pluggy.PluginManager:
    return make_plugin_manager()


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    return build_registry(default_plugin_manager())
