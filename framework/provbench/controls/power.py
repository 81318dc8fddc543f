"""The claim x sham matrix: does each claim fail when what it is about is faked?

For one claim, :func:`power_rows` checks it again under every sham its declaration gives
(:mod:`provbench.controls.shams`) and says, per sham, ``power`` (the claim fails under it) or
``no power`` (it still passes: it could not tell the real thing from the sham), and per condition
it names with no positive expectation, ``untested`` (``reference`` for the conditions it declares
as the references of tested ones). A claim that fails on its own controls has
nothing to measure (``not measured``).

A random stand-in of an intervention that hides most of what can be hidden (full isolation hides
all but a question's neighbourhood) is mostly the real set again: a claim still passing under it is
``indistinct`` there, not powerless, when on average at least :data:`INDISTINCT` of the random
set is what the real intervention hid (its "hides nothing" sham still tests it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .shams import Sham, sham_records_present, shams_of, under_sham
from ..results.validity import PowerRow

if TYPE_CHECKING:
    from ..suite import ClaimRef
    from ..results.about import ClaimAbout
    from ..results.claims import ControlRuns, Verdict

Check = Callable[["ControlRuns"], "list[Verdict]"]
INDISTINCT = 0.5  # mean share of a random stand-in's hidden ids that the real intervention hid too


def power_rows(
    ref: "ClaimRef", about: "ClaimAbout", runs: "ControlRuns", verdicts: list["Verdict"], check: Check
) -> list[PowerRow]:
    """The claim's row of the matrix; ``check`` checks it on given runs (its verdicts)."""
    claim = ref.label or ref.name
    excuse = ref.open or ref.expect_failure or ref.expect_no_power or ""
    declared = _declared_unmeasurable(verdicts)
    holds = bool(verdicts) and all(v.passed for v in _counted(verdicts, declared))
    rows = _unshammed_rows(claim, about)
    for sham in shams_of(about, runs.controls):
        if not holds:
            rows.append(
                PowerRow(
                    claim=claim,
                    sham=sham.label,
                    status="not measured",
                    observed="the claim does not hold on its own controls",
                )
            )
        else:
            rows.append(_sham_row(claim, sham, runs, check, declared, excuse))
    return rows


def _unshammed_rows(claim: str, about: "ClaimAbout") -> list[PowerRow]:
    """The conditions no sham tests: those no control must show an effect of, and the references."""
    rows = [
        PowerRow(
            claim=claim,
            sham=condition,
            status="untested",
            observed="no control must show an effect of this condition, so no sham of it could fail the claim",
        )
        for condition in about.untested
    ]
    return rows + [
        PowerRow(
            claim=claim,
            sham=condition,
            status="reference",
            observed="the reference a tested condition is compared with: by design no control must show "
            "an effect of it (its sham: hiding nothing, which must fail the claim)",
        )
        for condition in about.reference_conditions
    ]


def _sham_row(
    claim: str, sham: Sham, runs: "ControlRuns", check: Check, declared: set[tuple[str, str]], excuse: str
) -> PowerRow:
    """The claim checked again under one sham (a condition's stand-in that never ran: "not run")."""
    if sham.kind == "condition" and not sham_records_present(runs, sham):
        return PowerRow(
            claim=claim,
            sham=sham.label,
            status="not run",
            observed="no stand-in unit ran (a context-level intervention without variants has no same-size random set)",
        )
    found = _counted(check(under_sham(runs, sham)), declared)
    return _indistinct(_row(claim, sham, found, excuse), sham, runs)


def _indistinct(row: PowerRow, sham: Sham, runs: "ControlRuns") -> PowerRow:
    """``row``, or "indistinct" where a random stand-in that did not fail the claim is mostly the real set."""
    if row.status != "no power" or (sham.kind, sham.mode) != ("condition", "random"):
        return row
    share = random_overlap(runs, sham)
    if share is None or share < INDISTINCT:
        return row
    return row.model_copy(
        update={
            "status": "indistinct",
            "observed": (
                f"{row.observed}; but {share:.0%} of each random set, on average, is what {sham.target} hid itself: "
                "it hides most of what can be hidden, so no same-size set could differ"
            ),
        }
    )


def random_overlap(runs: "ControlRuns", sham: Sham) -> float | None:
    """The mean share of a random stand-in unit's hidden ids that the real intervention's unit of the
    same question, system, repeat and variant hid too (None: no pair keeps its hidden sets)."""
    from ..audit import hidden_ids

    shares = []
    for run in runs.runs.values():
        real = {_pair_key(r): r for r in run.records if r.key.condition == sham.target}
        for record in (r for r in run.records if r.key.condition == sham.condition_key):
            twin = real.get(_pair_key(record))
            faked, hid = hidden_ids(record.hidden), hidden_ids(twin.hidden) if twin is not None else None
            if faked and hid is not None:
                shares.append(len(faked & hid) / len(faked))
    return sum(shares) / len(shares) if shares else None


def _declared_unmeasurable(verdicts: list["Verdict"]) -> set[tuple[str, str]]:
    """The verdicts the suite declares not measurable on its own controls (``expect_not_measurable``)."""
    return {(v.control, v.expected) for v in verdicts if v.unmeasured and v.unmeasured_expected}


def _counted(verdicts: list["Verdict"], declared: set[tuple[str, str]]) -> list["Verdict"]:
    """The verdicts power reads: those declared not measurable measure nothing, real or sham."""
    return [v for v in verdicts if (v.control, v.expected) not in declared]


def _pair_key(record) -> tuple:
    k = record.key
    return k.question_id, k.system, k.repeat, k.variant


def _row(claim: str, sham: Sham, verdicts: list["Verdict"], excuse: str) -> PowerRow:
    failed = [v for v in verdicts if not v.passed]
    if verdicts and not failed:
        return PowerRow(
            claim=claim,
            sham=sham.label,
            status="no power",
            excused=excuse,
            observed=f"still passes: {len(verdicts)} of {len(verdicts)} verdicts",
        )
    first = failed[0] if failed else None
    observed = f"fails on {first.control}: {first.observed}" if first else "the check gave no verdict"
    return PowerRow(claim=claim, sham=sham.label, status="power", observed=observed[:300])
