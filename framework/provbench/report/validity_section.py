"""The "Suite validity" section: the verdicts ``provbench validate`` wrote for this suite
(``validity.json`` in the run directory), so a reader of a null result knows whether the suite
could have seen the effect at all."""

from __future__ import annotations

from ..results.validity import Validity, certify_command, read_validity
from ..results.data import RunData
from .sections import Cell, Row, Section, Table, Text

INTRO = (
    "Each claim of the suite was checked offline on its known-truth controls (provbench validate, "
    "docs/controls.md): control LLMs whose behaviour is known (an oracle that answers exactly when its "
    "prompt holds the gold evidence, planted behaviours) ran the suite's controls block. A positive control "
    "must show the claim's effect and a negative one must not; p is the uncorrected p-value of the claim's "
    "paired test. A failed claim means this suite could not detect that effect, so a null result on it "
    "says nothing about the method."
)


def validity_section(run: RunData) -> Section | None:
    validity = read_validity(run.run_dir)
    if validity is None:
        return _not_validated(run)
    rows = [
        Row(
            cells=[
                v.claim,
                v.control,
                v.expected,
                v.observed,
                "–" if v.p_value is None else f"{v.p_value:.3g}",
                Cell(text=v.status, note=v.expected_failure or v.open),
            ]
        )
        for v in validity.verdicts
    ]
    summary = headline(validity)
    blocks = [
        Text(text=summary),
        Text(text=_differences(validity.differences)),
        Table(
            columns=["Claim", "Control", "Expected", "Observed", "p", "Verdict"],
            rows=rows,
            numeric_from=4,
            css_class="validity",
        ),
    ]
    if validity.power:
        blocks += [
            Text(text=POWER),
            Table(
                columns=["Claim", "Sham", "Power", "Observed"],
                css_class="validity-power",
                numeric_from=4,
                rows=[Row(cells=[p.claim, p.sham, p.shown_status, p.observed]) for p in validity.power],
            ),
        ]
    if run.manifest.suite_sha256 and validity.suite_sha256 != run.manifest.suite_sha256:
        blocks.append(Text(text="The suite file changed since these controls ran: run provbench validate again."))
    if validity.failed_units:
        blocks.append(Text(text=f"{validity.failed_units} unit(s) of the control runs failed: see their reports."))
    return Section(id="suite-validity", title="Suite validity", intro=INTRO, blocks=blocks, order=12)


POWER = (
    "Power against shams: each claim checked again with what it is about faked (an intervention that hides "
    "nothing or a same-size random set, a positive control swapped for its negative, the compared settings "
    "made one, a blind explanation). 'power': the claim fails under the sham, as it should; 'no power': it "
    "still passes, so it cannot tell the real thing from the sham; 'indistinct': it still passes under a random set "
    "of the real one's size that is mostly the real one (the intervention hides most of what can be hidden, so "
    "no random set of that size could differ; the 'hides nothing' sham still tests it); 'untested': a condition "
    "the claim names with no control expected to show its effect; 'reference': a condition a tested one is "
    "compared with."
)


def _not_validated(run: RunData) -> Section:
    """Where a suite never validated would show its verdicts: say so, and how to validate it."""
    text = (
        f"Not validated: run {certify_command(run)}. No claim of "
        "this suite was checked on known-truth controls, so none of the numbers below is certified."
        if run.suite.get("controls") is not None
        else "Not validated: this suite declares no known-truth controls (a 'controls:' block, docs/controls.md), "
        "so none of the numbers below is certified."
    )
    return Section(id="suite-validity", title="Suite validity", blocks=[Text(text=text)], order=12)


def headline(validity: Validity) -> str:
    """Certified, Certified with exceptions (what was excused, what no certified claim covers) or UNCERTIFIED."""
    failed = validity.failed_claims
    counts = f"{len(validity.verdicts) - len(validity.failures)} of {len(validity.verdicts)} verdicts as the claims say"
    if validity.status == "failed":
        return f"UNCERTIFIED: {counts}; not detectable: {', '.join(failed)} (checked {validity.created_at})."
    exceptions = [f"excused: {e}" for e in validity.exceptions] + validity.warnings()
    if validity.uncovered:
        exceptions.append("no certified claim covers " + ", ".join(validity.uncovered))
    if validity.status == "certified":
        return f"Certified: {counts} (checked {validity.created_at})."
    return f"Certified with exceptions: {counts} (checked {validity.created_at}). " + "; ".join(exceptions) + "."


def _differences(differences: list[str]) -> str:
    if not differences:
        return "The controls ran this suite's own systems, interventions and options."
    return "The controls ran otherwise than this suite: " + "; ".join(differences) + "."
