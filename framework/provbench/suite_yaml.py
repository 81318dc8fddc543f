"""Where things are in a suite file: YAML parsed with line numbers (ruamel.yaml), and errors that
name file, line and field (``file, line N, field 'a.b[2]': what is wrong``). Used by
:mod:`provbench.suite` for the suite and its blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import UserError
from .registry import unknown_name_message


class SuiteError(UserError):
    """A suite file is malformed; the message names the file, line and field."""


def parse_yaml(path: Path, text: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    try:
        tree = yaml.load(text)
    except RecursionError:
        raise SuiteError(f"{path}: invalid YAML: nested too deeply") from None
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
    check_expansion(path, tree)
    return tree


MAX_VALUES = 100_000  # a suite has hundreds; aliases that expand beyond this are a YAML alias bomb


def check_expansion(path: Path | str, tree: Any) -> None:
    """Refuse a tree whose aliases expand (as :func:`plain` would copy them) beyond MAX_VALUES
    values. Each shared node is sized once, so this costs one pass over the file's own nodes.
    (ruamel reads an alias to an enclosing node as null, so there are no cycles.)"""
    sizes: dict[int, int] = {}

    def size(node: Any) -> int:
        if not isinstance(node, (dict, list)):
            return 1
        if id(node) not in sizes:
            sizes[id(node)] = 1 + sum(size(child) for child in (node.values() if isinstance(node, dict) else node))
        if sizes[id(node)] > MAX_VALUES:
            raise SuiteError(
                f"{path}: invalid YAML: its aliases expand to more than {MAX_VALUES:,} values "
                "(an alias bomb?); write the values out or use fewer aliases"
            )
        return sizes[id(node)]

    try:
        size(tree)
    except RecursionError:
        raise SuiteError(f"{path}: invalid YAML: nested too deeply") from None


def plain(node: Any) -> Any:
    """ruamel's commented containers -> plain dicts and lists (pydantic wants those)."""
    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
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


def where(path: Path, tree: Any, loc: tuple) -> str:
    line = line_of(tree, loc)
    return f"{path}" + (f", line {line}" if line else "") + (f", field '{field_name(loc)}'" if loc else "")


def check_intervention_systems(
    path: Path, tree: Any, declared: list[str] | None, names: list[str], loc: tuple, must_be: str
) -> None:
    """Each system of an ``intervention_systems`` list (at ``loc``) is one of ``names`` (``must_be``
    says which, in the error: "one of the suite's systems", "one the controls run")."""
    for i, name in enumerate(declared or []):
        if name not in names:
            raise SuiteError(
                f"{where(path, tree, (*loc, 'intervention_systems', i))}: "
                + unknown_name_message("system", name, names)
                + f" (must be {must_be})"
            )


def validation_message(path: Path, tree: Any, exc: ValidationError, root: type[BaseModel]) -> str:
    """Every problem pydantic found (up to 5), each located; ``root`` is the file's model."""
    problems = []
    for error in exc.errors():
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = error["msg"]
        if error["type"] == "extra_forbidden":
            known = _known_fields(root, loc[:-1])
            msg = unknown_name_message("field", str(loc[-1]), known)
        elif error["type"] == "missing":
            msg = "required field is missing"
        problems.append(f"{where(path, tree, loc)}: {msg}")
    return "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")


def _known_fields(root: type[BaseModel], parent_loc: tuple) -> list[str]:
    """Field names valid at ``parent_loc`` (for "did you mean" on a misspelt key)."""
    model: Any = root
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


def parse_option_pairs(pairs: tuple[str, ...]) -> dict:
    """``--option`` KEY=VALUE pairs, values read as YAML scalars (8 -> int, true -> bool); a bad
    pair, invalid YAML or an alias bomb is an error naming the option."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key] = YAML(typ="safe").load(value)
        except YAMLError as exc:
            raise UserError(f"--option {key}: invalid YAML value: {getattr(exc, 'problem', None) or exc}") from None
        check_expansion(f"--option {key}", options[key])  # a one-line alias bomb too
    return options
