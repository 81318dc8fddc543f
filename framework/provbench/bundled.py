"""The built-in suites and mini datasets: inside an installed wheel (``provbench/bundled``, put
there by setup.py's build step) or, in a checkout, the top-level ``suites/`` and ``datasets/``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import UserError

SUITE_SUFFIXES = (".yaml", ".yml")


def bundled_root() -> Path | None:
    """The folder holding ``suites/`` and ``datasets/``, or None when neither layout is present."""
    here = Path(__file__).resolve().parent
    for root in (here / "bundled", here.parents[1]):  # installed wheel, then checkout
        if (root / "suites").is_dir():
            return root
    return None


@dataclass(frozen=True)
class BuiltinSuite:
    name: str
    path: Path
    description: str


def builtin_suites() -> list[BuiltinSuite]:
    root = bundled_root()
    if root is None:
        return []
    return [
        BuiltinSuite(path.stem, path, _description(path))
        for path in sorted((root / "suites").iterdir())
        if path.suffix in SUITE_SUFFIXES
    ]


def _description(path: Path) -> str:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        tree = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError):
        return "(unreadable suite file)"
    description = tree.get("description", "") if isinstance(tree, dict) else ""
    return " ".join(str(description).split())


def resolve_suite(name_or_path: str | Path) -> Path:
    """A suite file path as given, or the built-in suite of that name."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    by_name = {s.name: s.path for s in builtin_suites()}
    if str(name_or_path) in by_name:
        return by_name[str(name_or_path)]
    known = ", ".join(by_name) or "none found"
    raise UserError(
        f"suite {str(name_or_path)!r}: no such file, and no built-in suite of that name (built-in suites: {known})"
    )
