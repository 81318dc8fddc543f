"""The code's shape: no import cycle between provbench's modules, and no module over the size
limit unless its docstring gives the reason ("Longer than ... because ...")."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"provbench": REPO / "framework" / "provbench", "provbench_plugins": REPO / "plugins" / "provbench_plugins",
         "provbench_tools": REPO / "tools" / "provbench_tools"}
MAX_LINES = 400


def modules() -> dict[str, Path]:
    found = {}
    for package, root in ROOTS.items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found[name] = path
    return found


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of this project that ``name`` imports, at any depth of the file (lazy imports too),
    except under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets |= {base} | {f"{base}.{a.name}" for a in node.names}
    return {t for t in targets if t in known and t != name}


def test_no_import_cycles():
    found = modules()
    graph = nx.DiGraph()
    for name, path in found.items():
        graph.add_node(name)
        for target in imported(name, path, set(found)):
            if not name.startswith(target + "."):  # a module importing its own package's __init__
                graph.add_edge(name, target)
    cycles = [c for c in nx.simple_cycles(graph) if len(c) > 1]
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:5])


def test_modules_stay_small_or_say_why():
    oversized = []
    for name, path in modules().items():
        lines = path.read_text(encoding="utf-8").count("\n")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if lines > MAX_LINES and "Longer than" not in doc:
            oversized.append(f"{name} ({lines} lines)")
    assert not oversized, "modules over the limit with no reason in their docstring: " + ", ".join(oversized)
