"""The rules a run's records are read by: how right a record is, whether the leak guard found it
leaked, which records statistics select, paper 000's exclusion step, and the key a plugin
reference files its records under. Metrics, statistics, reports and claims all use these, so a
record means the same everywhere (plugins may import them from :mod:`provbench.plugin_api` too).
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..model import BASELINE, RunRecord, Trace

CORRECT = 1.0  # a graded accuracy at or above this counts as "answered correctly"


def correctness(record: RunRecord) -> float | None:
    """The one definition of how right a record is: its graded ``scores["accuracy"]`` in [0, 1]
    (a dataset may give partial credit, e.g. 0.3 for an honest "I don't know"); a failed run
    scores 0; None when the record carries no accuracy score."""
    if record.status == "failed":
        return 0.0
    value = record.scores.get("accuracy")
    return None if value is None else min(1.0, max(0.0, float(value)))


def is_correct(record: RunRecord) -> bool:
    """Answered correctly: full credit (:func:`correctness` >= 1)."""
    value = correctness(record)
    return value is not None and value >= CORRECT


def compared_output(trace: Trace | None, normalize: "Callable[[str], str]") -> tuple[str, str]:
    """What "output changed" compares: ``("abstained", "")`` for a deliberate abstention, else
    ``("answer", normalized answer)`` (``""`` when there is none). An abstention is therefore not
    an empty answer: abstaining where the baseline answered (or the reverse) is a change, two
    abstentions are not, and an empty or missing answer of a run that did not abstain (a failed
    or exhausted run) compares as the empty answer."""
    if trace is not None and trace.outcome == "abstained":
        return ("abstained", "")
    return ("answer", normalize(trace.answer) if trace is not None and trace.answer is not None else normalize(""))


def is_leaked(record: RunRecord) -> bool:
    """The leak guard found that this intervention unit saw what its view hides (provbench.leakguard)."""
    return record.leak_check is not None and record.leak_check.status == "leaked"


def answered_by_reference(records: "Iterable[RunRecord]", reference_system: str) -> set[str]:
    """Paper 000's exclusion step: ids of questions the reference system's baseline answered
    correctly (accuracy 1.0; its first repeat when it is repeated); a failed run never counts as correct."""
    return {r.key.question_id for r in records if r.key.system == reference_system
            and r.key.condition == BASELINE and r.key.repeat == 0 and is_correct(r)}


def select(records: Iterable[RunRecord], system: str, condition: str, keep_leaked: bool) -> list[RunRecord]:
    """The records of a system under a condition, for statistics: units the leak guard found
    leaked are left out unless ``keep_leaked``."""
    return [r for r in records if r.key.system == system and r.key.condition == condition
            and (keep_leaked or not is_leaked(r))]


def plugin_key(name: str, label: str | None = None) -> str:
    """The name results use for a plugin reference: the label, else the plugin's short name
    (``p000/rag`` -> ``rag``), so naming a plugin in full to pick it among namesakes does not
    rename its records."""
    return label or name.rsplit("/", 1)[-1]
