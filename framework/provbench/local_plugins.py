"""A user's own plugins without packaging: modules or files a suite names (``plugins:``) or the
command line gives (``--plugin``).

Each becomes a pluggy plugin of the same plugin manager as the entry points, so it goes through
the same hooks, namespaces and checks (:func:`provbench.registry.build_registry`). A file is
imported under a private module name; its namespace is its ``PROVBENCH_NAMESPACE``, else the
file's (or module's last) name, as an entry point's is its name. Its origin names the file and
the SHA-256 of its bytes, which the run manifest records (``plugins`` and ``plugin_versions``).
Files are loaded in this process only: the Ray executor's workers do not see them.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .errors import UserError, raised_where
from .registry import LOCAL_MARK
from .suite_yaml import SuiteError, parse_yaml, where

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import pluggy

    from .registry import Registry


def is_file_spec(spec: str) -> bool:
    """``./x.py``, ``x.py`` or a path: a file; ``pkg.module``: a module to import."""
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def register_local_plugins(
    pm: "pluggy.PluginManager", specs: Iterable[str], base_dir: Path, located: Any = None
) -> list[object]:
    """Import each spec (a file, relative to ``base_dir``, or a dotted module) and register it with
    ``pm``; one already registered is not registered twice. ``located(i)`` names where spec ``i``
    was written (a suite's file, line and field) for errors; default: the spec itself."""
    modules = []
    for i, spec in enumerate(specs):
        at = located(i) if located else f"plugin {spec!r}"
        module = _import_file(Path(spec), base_dir, at) if is_file_spec(spec) else _import_module(spec, base_dir, at)
        name = f"local:{getattr(module, LOCAL_MARK)[0]}"
        if pm.get_plugin(name) is None:
            try:
                pm.register(module, name=name)
            except Exception as exc:  # noqa: BLE001 - pluggy's validation of the hook implementations
                raise UserError(
                    f"{at}: {getattr(module, LOCAL_MARK)[0]} is not a valid provbench plugin: {exc}"
                ) from None
        modules.append(module)
    return modules


def plugin_setup(
    suite_file: "str | Path | None" = None, pm: "pluggy.PluginManager | None" = None
) -> tuple["pluggy.PluginManager", "Registry"]:
    """The plugin manager (default: the process's) with a suite file's own plugins registered, and
    its registry."""
    from .registry import build_registry, default_plugin_manager, default_registry

    target = pm if pm is not None else default_plugin_manager()
    specs, located = suite_plugin_specs(Path(suite_file)) if suite_file is not None else ([], None)
    before = len(target.get_plugins())
    register_local_plugins(target, specs, Path(suite_file).resolve().parent if specs else Path.cwd(), located)
    if pm is not None:
        return target, build_registry(target)
    if len(target.get_plugins()) != before:
        default_registry.cache_clear()
    return target, default_registry()


COMMAND_LINE_PLUGINS: list[str] = []  # the process's --plugin specs, as given: a printed command repeats them


def add_command_line_plugins(specs: Iterable[str]) -> None:
    """``--plugin`` files (relative to the working directory) or modules, into the process's plugins."""
    from .registry import default_plugin_manager, default_registry

    if specs:
        register_local_plugins(default_plugin_manager(), specs, Path.cwd())
        default_registry.cache_clear()
        COMMAND_LINE_PLUGINS.extend(spec for spec in specs if spec not in COMMAND_LINE_PLUGINS)


def suite_plugin_specs(suite_file: Path) -> tuple[list[str], Any]:
    """The ``plugins:`` list of a suite file, read before the suite is validated (its plugins must
    be registered first), and a function naming where entry ``i`` is written."""
    try:
        tree = parse_yaml(suite_file, suite_file.read_text(encoding="utf-8"))
    except OSError:
        return [], None  # load_suite reports an unreadable file
    specs = tree.get("plugins") if isinstance(tree, dict) else None
    if specs is None:
        return [], None
    if not isinstance(specs, list) or not all(isinstance(s, str) and s.strip() for s in specs):
        raise SuiteError(
            f"{where(suite_file, tree, ('plugins',))}: a list of plugin files (./my_system.py) "
            "or module names (my_pkg.module)"
        )
    return list(specs), lambda i: where(suite_file, tree, ("plugins", i))


def _import_file(spec: Path, base_dir: Path, at: str) -> Any:
    path = (base_dir / spec.expanduser()).resolve()
    if not path.is_file():
        raise UserError(f"{at}: no plugin file {path} (a suite's paths are relative to its folder)")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    module_name = f"provbench_local_{path.stem}_{digest[:12]}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look a class's module up by name
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code: any error, located
        del sys.modules[module_name]
        raise UserError(f"{at}: {raised_where(exc, path)}") from None
    setattr(module, LOCAL_MARK, (str(path), digest))
    _warn_of_shadowed_hooks(path, data)
    return module


def _import_module(name: str, base_dir: Path, at: str) -> Any:
    """A dotted module, from the installed packages or the suite's folder."""
    added = str(base_dir) not in sys.path
    if added:
        sys.path.insert(0, str(base_dir))
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise UserError(f"{at}: no module {name!r} (not installed, nor in {base_dir})") from None
        raise UserError(f"{at}: importing {name}: {raised_where(exc, None)}") from None
    except Exception as exc:  # noqa: BLE001 - the user's code: any error, located
        raise UserError(f"{at}: importing {name}: {raised_where(exc, None)}") from None
    finally:
        if added:
            sys.path.remove(str(base_dir))
    file = getattr(module, "__file__", None)
    digest = hashlib.sha256(Path(file).read_bytes()).hexdigest() if file and Path(file).is_file() else ""
    if not hasattr(module, LOCAL_MARK):
        setattr(module, LOCAL_MARK, (name, digest))
    return module


def _warn_of_shadowed_hooks(path: Path, data: bytes) -> None:
    """Warn of a hook function defined twice in one file: Python keeps the last definition, so
    pluggy never sees the first and whatever it registered is silently missing."""
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError:
        return  # the import reported it
    defined = [
        (node.name, node.lineno)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("provbench_")
    ]
    for name, count in Counter(n for n, _ in defined).items():
        if count > 1:
            lines = ", ".join(str(line) for n, line in defined if n == name)
            log.warning(
                "%s: %s is defined %d times (lines %s): only the last counts, the others register nothing; "
                "return everything from one function",
                path,
                name,
                count,
                lines,
            )
