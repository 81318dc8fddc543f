"""The rules a run's records are read by: how right a record is, whether the leak guard found it
leaked, which records statistics select, paper 000's exclusion step, and the key a plugin
reference files its records under. Metrics, statistics, reports and claims all use these, so a
record means the same everywhere (plugins may import them from :mod:`provbench.plugin_api` too).

The pairing rule, which intervention units every statistic counts:

A unit under a graph-level intervention counts only when the leak guard (:mod:`provbench.leakguard`)
has evidence that it measured the intervention: ``clean``, or ``suspect`` (a cited hidden id no
request showed: the model may have guessed it). Units that ``leaked`` (saw what the view hides),
had ``no-effect`` (requests unchanged though hidden items reached the baseline's prompts), were a
``no-op`` (the intervention hid nothing) or are ``not-checkable`` (no evidence either way) are left
out of every statistic the same way: :meth:`provbench.plugin_api.Results.select` and the report's
``RunData.select`` leave them out, every metric value of an intervention condition carries the
count of what was left out beside it (:func:`with_left_out_notes`, applied by the runner to every
metric's values), and a cell with no unit left is "not measurable", never a 0. A condition's
counted units are compared with the baseline of the same questions (the metrics' per-question
pairing, :mod:`provbench_plugins.metrics.records`). The suite's ``leak_guard.include_leaked``
counts leaked units. Records without a leak check (baselines, context-level interventions) count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..model import BASELINE, RunRecord, Trace

if TYPE_CHECKING:
    from ..model import MetricValue

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
    return {
        r.key.question_id
        for r in records
        if r.key.system == reference_system and r.key.condition == BASELINE and r.key.repeat == 0 and is_correct(r)
    }


def plugin_key(name: str, label: str | None = None) -> str:
    """The name results use for a plugin reference: the label, else the plugin's short name
    (``p000/rag`` -> ``rag``), so naming a plugin in full to pick it among namesakes does not
    rename its records."""
    return label or name.rsplit("/", 1)[-1]


# -- the one pairing rule --------------------------------------------------------------------------

# leak-guard statuses of units that measure nothing
LEFT_OUT = ("leaked", "no-effect", "no-op", "not-checkable")


def left_out_as(record: RunRecord, include_leaked: bool = False) -> str | None:
    """Why every statistic leaves this unit out (its leak-guard status: saw what its view hides,
    requests unchanged though hidden items reached the baseline's prompts, an intervention that hid
    nothing, or no evidence either way); None when it counts. ``include_leaked`` (the suite's
    ``leak_guard.include_leaked``) counts leaked units. A condition's units that count are compared
    with the baseline of the same questions (the metrics' and tables' per-question pairing)."""
    status = record.leak_check.status if record.leak_check is not None else None
    if status not in LEFT_OUT or (include_leaked and status == "leaked"):
        return None
    return status


def left_out_counts(records: "Iterable[RunRecord]", include_leaked: bool = False) -> dict[str, int]:
    """How many of ``records`` the pairing rule leaves out, by reason (reasons in LEFT_OUT order)."""
    found = [left_out_as(r, include_leaked) for r in records]
    return {reason: found.count(reason) for reason in LEFT_OUT if reason in found}


def left_out_note(records: "Iterable[RunRecord]", include_leaked: bool = False) -> str:
    """The units of ``records`` left out, "3 leaked, 2 no-op"; "" when none is."""
    return ", ".join(f"{n} {reason}" for reason, n in left_out_counts(records, include_leaked).items())


def left_out_text(counts: "dict[str, int]") -> str:
    """The note beside a number whose units the pairing rule thinned: "left out (leak guard): 3 no-op"."""
    return ("left out (leak guard): " + ", ".join(f"{n} {why}" for why, n in counts.items())) if counts else ""


def select(
    records: "Iterable[RunRecord]", system: str, condition: str, include_leaked: bool, every: bool | None = None
) -> list[RunRecord]:
    """The records of a system under a condition, for statistics (``Results.select``,
    ``RunData.select``): without the units :func:`left_out_as` leaves out (all of them when ``every``)."""
    return [
        r
        for r in records
        if r.key.system == system and r.key.condition == condition and (every or not left_out_as(r, include_leaked))
    ]


def not_measurable(records: "Iterable[RunRecord]", include_leaked: bool = False) -> str | None:
    """Why a system x condition's statistics mean nothing: every unit is left out by the pairing
    rule, e.g. "not measurable: 3 leaked, 2 no-op"; None when some unit can be read."""
    records = list(records)
    if not records or not all(left_out_as(r, include_leaked) for r in records):
        return None
    return "not measurable: " + left_out_note(records, include_leaked)


def with_left_out_notes(values: list[MetricValue], results: Any) -> list[MetricValue]:
    """Every metric's values under the pairing rule, in one place: a value of an intervention
    condition (or of "a vs b") whose units the rule thinned carries the counts
    (``detail["left_out"]``) and the note beside the number; one over a condition with nothing
    measurable becomes "not measurable" (value None), never a number computed from nothing.
    ``results``: a :class:`provbench.plugin_api.Results` (records, excluded, include_leaked)."""
    cells: dict[tuple[str, str], list[RunRecord]] = {}
    for record in results.records:
        if record.key.condition != BASELINE and record.key.question_id not in results.excluded:
            cells.setdefault((record.key.system, record.key.condition), []).append(record)
    for value in values:
        records = {c: cells.get((value.system, c), []) for c in value.condition.split(" vs ")}
        counts = left_out_counts((r for rs in records.values() for r in rs), results.include_leaked)
        if not counts:
            continue
        value.detail.setdefault("left_out", counts)
        unmeasured = next(filter(None, (not_measurable(rs, results.include_leaked) for rs in records.values())), None)
        if unmeasured:
            value.value = None
        text = unmeasured or left_out_text(counts)
        if text not in value.note:
            value.note = "; ".join(filter(None, (value.note, text)))
    return values


def own_index_reads(trace: Trace | None) -> int:
    """How many nodes a unit read that map to no knowledge-base id (an index of the system's own, as
    the LlamaIndex adapter counts them): no view binds them, so its retrieval scores are not
    measurable and the leak guard cannot show an intervention applied to them."""
    found = (trace.artifacts.get("llamaindex") or {}) if trace is not None else {}
    return int(found.get("unmapped_nodes") or 0)
