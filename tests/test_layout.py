"""The code's shape: every module of provbench in one layer of LAYERS (docs/architecture.md), no
import up a layer, no import circle but three type-only pairs, and no module over the size limit
unless its docstring gives the reason ("Longer than ... because ...").

Every import counts: deferred ones inside functions, those under ``if TYPE_CHECKING:`` and those of
a module's own ancestor package (``from .. import x``), since each is a dependency a reader meets.
"""

from __future__ import annotations

import ast
import importlib
import re
import tokenize
import warnings
from functools import lru_cache
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = {
    "provbench": REPO / "framework" / "provbench",
    "provbench_plugins": REPO / "plugins" / "provbench_plugins",
    "provbench_tools": REPO / "tools" / "provbench_tools",
}
MAX_STATEMENT_LINES = 300  # logical lines (tokenize's NEWLINE): the formatter's layout does not move them

# provbench's layers, lowest first: a module imports only its own layer and those below it. A name
# stands for the module and everything under it; the longest name that matches places a module.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "ground",
        (
            "errors",
            "model",
            "gold",
            "secrets",
            "locks",
            "hookspecs",
            "progress",
            "listing",
            "jsonlines",
            "bundled",
            "capture",
            "costs",
            "deprecated",
            "plugin_base",
            "version",
        ),
    ),
    (
        "engines",
        (
            "kb",
            "llm",
            "controls.backend",
            "controls.behaviours",
            "controls.reading",
            "controls.replies",
            "controls.agent",
            "controls.judge",
        ),
    ),
    ("results", ("results", "run_store", "store", "leakguard", "trajectory", "audit")),
    ("contracts", ("plugin_api",)),
    (
        "plugin machinery and declarations",
        (
            "registry",
            "local_plugins",
            "suite",
            "suite_yaml",
            "suite_controls",
            "assertions",
            "llm_setup",
            "manifest",
            "datainfo",
            "scaffold",
            "question_gen",
        ),
    ),
    (
        "kit for plugin authors",
        ("agents", "integrations", "testing", "controls", "controls.contrasts", "controls.plugin"),
    ),
    ("report", ("report",)),
    (
        "orchestration",
        (
            "runner",
            "execution",
            "workers",
            "units",
            "ray_executor",
            "plan",
            "plan_output",
            "gates",
            "export",
            "tracing",
            "phoenix",
        ),
    ),
    ("controls' validation", ("controls.validate",)),
    (
        "cli",
        ("cli", "cli_options", "cli_results", "cli_init", "cli_generate", ""),
    ),  # "": the package's face, provbench/__init__.py
]
# the only circles: each pair's second module names the first for type hints only
TYPE_ONLY_PAIRS = {
    ("provbench.kb.view", "provbench.kb.hidden"),
    ("provbench.agents.loop", "provbench.agents.tools"),
    ("provbench.integrations.llamaindex.graph_store", "provbench.integrations.llamaindex.capture"),
}
# deprecated paths that reach a higher layer by name (provbench.deprecated), module -> the module reached
DEPRECATED_REACHES = {
    ("provbench.kb.knowledge_base", "provbench.integrations.llamaindex"),
    ("provbench.llm", "provbench.llm_setup"),
    ("provbench.llm.backends", "provbench.llm_setup"),
    ("provbench.llm.client", "provbench.llm_setup"),
}


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    found = {}
    for package, root in ROOTS.items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found[name] = path
    return found


def owner(target: str, known: set[str]) -> str | None:
    """The project module ``target`` (a module or a name in one) belongs to."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def imports(name: str, path: Path, known: set[str]) -> dict[str, bool]:
    """Project modules ``name`` imports, anywhere in the file -> whether only for type hints."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in filter(None, (owner(t, known) for t in targets)):
            if target != name:
                found[target] = found.get(target, True) and id(node) in typing_only
    return found


@lru_cache(maxsize=1)
def graph() -> nx.DiGraph:
    found = modules()
    g = nx.DiGraph()
    g.add_nodes_from(found)
    for name, path in found.items():
        for target, typing_only in imports(name, path, set(found)).items():
            g.add_edge(name, target, typing_only=typing_only)
    return g


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a provbench module (None for the plugins, above every layer)."""
    if not module.startswith("provbench."):
        return None if module.split(".")[0] != "provbench" else len(LAYERS) - 1
    rest = module.removeprefix("provbench.")
    matches = [
        (len(n), i)
        for i, (_, names) in enumerate(LAYERS)
        for n in names
        if n and (rest == n or rest.startswith(n + "."))
    ]
    return max(matches)[1] if matches else None


def upward(g: nx.DiGraph) -> list[str]:
    wrong = []
    for a, b in g.edges:
        if a.split(".")[0] != "provbench":
            continue
        la, lb = layer_of(a), layer_of(b)
        if lb is None or la < lb:
            where = LAYERS[lb][0] if lb is not None else "the plugins"
            wrong.append(f"{a} ({LAYERS[la][0]}) imports {b} ({where})")
    return sorted(wrong)


def test_every_module_has_a_layer():
    framework = [m for m in modules() if m.split(".")[0] == "provbench"]
    assert [m for m in framework if m != "provbench" and layer_of(m) is None] == []
    names = [f"provbench.{n}" if n else "provbench" for _, layer in LAYERS for n in layer]
    assert [n for n in names if n not in modules()] == [], "LAYERS names a module that does not exist"


def test_no_import_runs_up_a_layer():
    assert upward(graph()) == []


def test_the_only_circles_are_the_type_only_pairs():
    g = graph()
    circles = sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)
    assert circles == sorted(sorted(pair) for pair in TYPE_ONLY_PAIRS)
    assert all(g.edges[back, first]["typing_only"] for first, back in TYPE_ONLY_PAIRS)


def test_deprecated_paths_are_the_only_reaches_by_name():
    """provbench.deprecated imports a higher layer by module name, which no import statement shows;
    only the listed old paths may use it, and each reaches up (otherwise a plain import would do)."""
    known = set(modules())
    reaches = set()
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("moved", "module_getattr"):
                reaches |= {
                    (name, owner(c.value, known))
                    for c in ast.walk(node)
                    if isinstance(c, ast.Constant)
                    and isinstance(c.value, str)
                    and owner(c.value, known) not in (None, name)
                }
    assert reaches == DEPRECATED_REACHES
    assert all(layer_of(a) < layer_of(b) for a, b in reaches)


@pytest.mark.parametrize(
    "planted", ["provbench.kb.view -> provbench.registry", "provbench.results.data -> provbench.suite"]
)
def test_a_planted_upward_import_is_found(planted):
    g = graph().copy()
    g.add_edge(*planted.split(" -> "), typing_only=True)
    found = set(upward(g)) - set(upward(graph()))
    assert len(found) == 1 and next(iter(found)).startswith(planted.split(" -> ")[0] + " (")


def resolve(path: str):
    """The object a dotted path names: its longest importable module, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            found = getattr(found, attr)
        return found


OLD_PATHS = re.findall(
    r"^\| `([\w.]+)` \| `([\w.]+)` \| (.+?) \|$", (REPO / "docs" / "architecture.md").read_text(encoding="utf-8"), re.M
)


@pytest.mark.parametrize("old, new, now", OLD_PATHS, ids=[old for old, _, _ in OLD_PATHS])
def test_old_paths_import_as_the_table_says(old, new, now):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        moved = resolve(new)
        if now.startswith("gone"):
            with pytest.raises(AttributeError):
                resolve(old)
        elif now.startswith("the same module"):  # ``import old`` and ``from old import x`` work
            assert importlib.import_module(old) is moved
        elif now.startswith("the same"):
            assert resolve(old) is moved
        else:
            assert resolve(old) is not None


def logical_lines(path: Path) -> int:
    """Statements and other logical lines, however the formatter wraps them onto physical ones."""
    with path.open("rb") as source:
        return sum(1 for token in tokenize.tokenize(source.readline) if token.type == tokenize.NEWLINE)


def test_logical_lines_ignore_wrapping(tmp_path):
    one = tmp_path / "one.py"
    one.write_text("x = f(a, b)\ny = 2\n")
    wrapped = tmp_path / "wrapped.py"
    wrapped.write_text("x = f(\n    a,\n    b,\n)\ny = 2\n")
    assert logical_lines(one) == logical_lines(wrapped) == 2


def test_modules_stay_small_or_say_why():
    oversized = []
    for name, path in modules().items():
        lines = logical_lines(path)
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if lines > MAX_STATEMENT_LINES and "Longer than" not in doc:
            oversized.append(f"{name} ({lines} logical lines)")
    assert not oversized, "modules over the limit with no reason in their docstring: " + ", ".join(oversized)


def test_every_noqa_names_its_rule_and_says_why():
    """``ruff check`` (pyproject.toml) finds a pragma that silences nothing; this finds one without a reason."""
    bare = [
        f"{path.relative_to(REPO)}:{n}"
        for package, root in ROOTS.items()
        for path in root.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "# noqa" in line and not re.search(r"# noqa: [A-Z0-9, ]+ (- |\()", line)
    ]
    assert bare == []
