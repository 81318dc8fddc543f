"""The claim x sham matrix: does each claim fail when what it is about is faked?

For one claim, :func:`power_rows` checks it again under every sham its declaration gives
(:mod:`provbench.controls.shams`) and says, per sham, ``power`` (the claim fails under it) or
``no power`` (it still passes: it could not tell the real thing from the sham), and per condition
it names with no positive expectation, ``untested`` (``reference`` for the conditions it declares
as the references of tested ones). A claim that fails on its own controls has
nothing to measure (``not measured``).
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


def power_rows(ref: "ClaimRef", about: "ClaimAbout", runs: "ControlRuns", verdicts: list["Verdict"],
               check: Check) -> list[PowerRow]:
    """The claim's row of the matrix; ``check`` checks it on given runs (its verdicts)."""
    claim = ref.label or ref.name
    excuse = ref.open or ref.expect_failure or ref.expect_no_power or ""
    rows = [PowerRow(claim=claim, sham=condition, status="untested",
                     observed="no control must show an effect of this condition, so no sham of it could fail "
                              "the claim") for condition in about.untested]
    rows += [PowerRow(claim=claim, sham=condition, status="reference",
                      observed="the reference a tested condition is compared with: by design no control must show "
                               "an effect of it") for condition in about.reference_conditions]
    holds = bool(verdicts) and all(v.passed for v in verdicts)
    for sham in shams_of(about, runs.controls):
        if not holds:
            rows.append(PowerRow(claim=claim, sham=sham.label, status="not measured",
                                 observed="the claim does not hold on its own controls"))
        elif sham.kind == "condition" and not sham_records_present(runs, sham):
            rows.append(PowerRow(claim=claim, sham=sham.label, status="not run",
                                 observed="no stand-in unit ran (a context-level intervention without variants "
                                          "has no same-size random set)"))
        else:
            rows.append(_row(claim, sham, check(under_sham(runs, sham)), excuse))
    return rows


def _row(claim: str, sham: Sham, verdicts: list["Verdict"], excuse: str) -> PowerRow:
    failed = [v for v in verdicts if not v.passed]
    if verdicts and not failed:
        return PowerRow(claim=claim, sham=sham.label, status="no power", excused=excuse,
                        observed=f"still passes: {len(verdicts)} of {len(verdicts)} verdicts")
    first = failed[0] if failed else None
    observed = f"fails on {first.control}: {first.observed}" if first else "the check gave no verdict"
    return PowerRow(claim=claim, sham=sham.label, status="power", observed=observed[:300])
