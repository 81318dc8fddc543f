"""The "Suite validity" section: the verdicts ``provbench validate`` wrote for this suite
(``validity.json`` in the run directory), so a reader of a null result knows whether the suite
could have seen the effect at all."""

from __future__ import annotations

from ..results.validity import read_validity
from ..results.data import RunData
from .sections import Cell, Row, Section, Table, Text

INTRO = ("Each claim of the suite was checked offline on its known-truth controls (provbench validate, "
         "docs/controls.md): control LLMs whose behaviour is known (an oracle that answers exactly when its "
         "prompt holds the gold evidence, planted behaviours) ran the suite's controls block. A positive control "
         "must show the claim's effect and a negative one must not; p is the uncorrected p-value of the claim's "
         "paired test. A failed claim means this suite could not detect that effect, so a null result on it "
         "says nothing about the method.")


def validity_section(run: RunData) -> Section | None:
    validity = read_validity(run.run_dir)
    if validity is None:
        return None
    rows = [Row(cells=[v.claim, v.control, v.expected, v.observed,
                       "–" if v.p_value is None else f"{v.p_value:.3g}",
                       Cell(text=v.status, note=v.expected_failure)]) for v in validity.verdicts]
    failures = validity.failures
    summary = (f"{len(validity.verdicts) - len(failures)} of {len(validity.verdicts)} verdicts as the claims say"
               + (f"; not detectable: {', '.join(sorted({v.claim for v in failures}))}" if failures else "")
               + f" (checked {validity.created_at}).")
    blocks = [Text(text=summary), Table(columns=["Claim", "Control", "Expected", "Observed", "p", "Verdict"],
                                        rows=rows, numeric_from=4, css_class="validity")]
    if run.manifest.suite_sha256 and validity.suite_sha256 != run.manifest.suite_sha256:
        blocks.append(Text(text="The suite file changed since these controls ran: run provbench validate again."))
    if validity.failed_units:
        blocks.append(Text(text=f"{validity.failed_units} unit(s) of the control runs failed: see their reports."))
    return Section(id="suite-validity", title="Suite validity", intro=INTRO, blocks=blocks, order=12)
