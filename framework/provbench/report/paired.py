"""The report's "Scores under interventions" section: every continuous per-record score (F1, RAGAS
faithfulness, ...) of each system under each intervention against its own baseline, over the
analysed questions, with a paired permutation test and the Benjamini-Hochberg adjustment over
the section's tests (:mod:`provbench.results.significance`)."""

from __future__ import annotations

from ..results.data import RunData
from .sections import Row, Section, Table
from ..results.significance import BH_NOTE, PAIRED_NOTE, adjust_bh, continuous_scores, paired_scores, with_adjusted
from ..results.stats import per_question


def paired_scores_section(run: RunData) -> Section | None:
    """None when the run has no intervention or no continuous score."""
    if not run.conditions:
        return None
    rows, tests = [], []
    for score in continuous_scores(run.records):
        for condition in run.conditions:
            for system in run.systems:
                after = per_question(run.select(system, condition), score)
                if not after:
                    continue
                test = paired_scores(per_question(run.select(system), score), after, run.analysed)
                if not test.n:
                    continue
                rows.append([score, condition, system, f"{test.mean_a:.3f}", f"{test.mean_b:.3f}", test.describe()])
                tests.append(test.p_value)
    if not rows:
        return None
    adjusted = adjust_bh(tests)
    table = Table(
        columns=["Score", "Condition", "System", "Baseline", "Under the condition", "Paired test"],
        rows=[Row(cells=[*row[:5], with_adjusted(row[5], adj)]) for row, adj in zip(rows, adjusted)],
        numeric_from=3,
        css_class="paired-scores",
        caption=(
            "Means over the analysed questions scored both at baseline and under the condition (repeats "
            "averaged per question). "
            f"Test: {PAIRED_NOTE}; {BH_NOTE.format(n=sum(p is not None for p in tests))}."
        ),
    )
    return Section(id="paired-scores", title="Scores under interventions", blocks=[table], order=62)
