"""``provbench data info``: load a dataset file with its loader, count what its Questions carry,
and report the first problems found. Generic over loaders: a loader names the Question fields
or metadata keys worth counting in its ``facets`` tuple; records, choices and aliases are
counted for every dataset."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .jsonlines import input_errors
from .model import Question

if TYPE_CHECKING:
    from .plugin_api import DatasetLoader
    from .registry import Registry


class DataError(UserError):
    """A dataset file is invalid; the message lists the first problems found."""


@dataclass
class DataInfo:
    source: str
    loader: str
    records: int
    facets: dict[str, Counter] = field(default_factory=dict)
    choices: Counter = field(default_factory=Counter)  # number of choices -> questions
    with_aliases: int = 0


def resolve_loader(registry: "Registry", source: str | Path, name: str | None) -> "DatasetLoader":
    """The named loader, or the only registered loader that claims ``source``."""
    if name:
        return registry.create("dataset_loader", name)
    loaders = [registry.create("dataset_loader", n) for n in registry.names("dataset_loader")]
    claiming = [loader for loader in loaders if loader.claims(source)]
    # a loader of any plain file (``qa``) says so with ``claims_as_fallback``: a loader that
    # recognises the file's own format comes first
    specific = [loader for loader in claiming if not getattr(loader, "claims_as_fallback", False)]
    if len(specific) == 1 or len(claiming) == 1:
        return (specific or claiming)[0]
    claiming = specific or claiming
    known = ", ".join(registry.names("dataset_loader")) or "none"
    if claiming:
        names = ", ".join(loader.name for loader in claiming)
        raise UserError(f"{source}: several loaders read this file ({names}); choose one with --loader")
    why = [f"{loader.name}: {reason}" for loader in loaders if (reason := loader.unclaimed_because(source))]
    raise UserError(
        f"{source}: no loader recognises this file; name one with --loader (known loaders: {known})"
        + "".join(f"\n  {line}" for line in why)
    )


def facet_value(question: Question, facet: str) -> Any:
    if facet in Question.model_fields:
        return getattr(question, facet)
    return question.metadata.get(facet)


def describe(questions: list[Question], source: str, loader: "DatasetLoader") -> DataInfo:
    info = DataInfo(source=source, loader=loader.name, records=len(questions))
    for facet in loader.facets:
        counts = Counter(_label(facet_value(q, facet)) for q in questions)
        if set(counts) != {"(none)"}:  # a facet no question carries is left out
            info.facets[facet] = counts
    info.choices = Counter(len(q.choices) for q in questions if q.choices)
    info.with_aliases = sum(bool(q.aliases) for q in questions)
    return info


def _label(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "(none)"
    return str(value)


def data_info(
    registry: "Registry",
    source: str | Path,
    loader_name: str | None = None,
    options: dict[str, Any] | None = None,
    max_problems: int = 10,
) -> DataInfo:
    """Counts for a valid dataset; a :class:`DataError` listing the first problems otherwise."""
    path = Path(source)
    if not path.exists() and not loader_name:  # a named loader may read a hub id
        raise UserError(f"{source}: no such file or directory")
    loader = resolve_loader(registry, source, loader_name)
    options = dict(options or {})
    registry.check_options("dataset_loader", loader.name, options)
    try:
        with input_errors(path):
            questions = loader.load(str(source), **options)
    except UserError as err:
        with input_errors(path):
            problems = loader.problems(str(source), max_problems, **options) or [str(err)]
        raise DataError(
            f"{source} is not a valid {loader.name} dataset; first problem(s):\n  "
            + "\n  ".join(problems[:max_problems])
        ) from None
    duplicates = [qid for qid, n in Counter(q.id for q in questions).items() if n > 1]
    if duplicates:
        raise DataError(f"{source}: question id(s) used more than once: {', '.join(duplicates[:max_problems])}")
    if not questions:
        raise DataError(f"{source}: the {loader.name} loader found no questions")
    return describe(questions, str(source), loader)
