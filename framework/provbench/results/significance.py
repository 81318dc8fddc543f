"""Statistics beyond :mod:`provbench.results.stats`' intervals and McNemar tests: a paired test for
continuous scores, the correction of a table's p-values for multiple comparisons, and the spread
of a repeated system's accuracy.

* Continuous scores (F1, RAGAS faithfulness, any per-record score): the core's paired
  permutation test (:func:`provbench.results.stats.paired_permutation`, the one the known-truth
  controls use), two-sided, on the per-question values (each averaged over its repeats first).
* Multiple comparisons: a table of many tests (paper 000's Table 2, conditions x systems; the
  comparison of runs) reports each p-value beside its Benjamini-Hochberg adjustment over the
  table's tests (``scipy.stats.false_discovery_control``): rejecting where the adjusted value is
  below q keeps the expected share of false discoveries among the rejections at most q.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Iterable, Sequence

from ..model import RunRecord
from .rules import correctness
from .stats import paired_permutation, questions_needed, too_few

PAIRED_NOTE = (
    "two-sided paired permutation test of the per-question scores (the signs of their differences "
    "flipped at random, statistic the mean difference; exact up to 13 questions, else 9,999 resamples; "
    "scipy.stats.permutation_test)"
)
BH_NOTE = (
    "p-values are adjusted for the {n} tests of this table by the Benjamini-Hochberg procedure "
    "(scipy.stats.false_discovery_control): “adj.” below 0.05 keeps the expected share of false "
    "discoveries among such findings at 5 %"
)


@dataclass
class PairedScores:
    """A paired test of scores ``b`` against ``a`` over ``n`` shared questions."""

    mean_a: float | None
    mean_b: float | None
    n: int
    changed: int  # questions whose score differs
    p_value: float | None  # None: no question's score changed, or one question only (nothing to test)
    needed: int = 0  # the fewest questions whose two-sided test can reach p < 0.05

    def describe(self) -> str:
        if not self.n:
            return "no paired questions"
        if too_few(self.n, self.needed):
            return too_few(self.n, self.needed)
        if self.p_value is None:
            return f"no question's score changed (n={self.n})"
        return f"p = {self.p_value:.3g} (n={self.n}, {self.changed} changed)"


def paired_scores(a: dict[str, float], b: dict[str, float], questions: Iterable[str] | None = None) -> PairedScores:
    """Two-sided paired permutation test of per-question scores ``b`` vs ``a`` (questions in both,
    or those of ``questions``); p is None when no paired score differs."""
    shared = [q for q in (questions if questions is not None else a) if q in a and q in b]
    needed = questions_needed(sides=2)
    if not shared:
        return PairedScores(None, None, 0, 0, None, needed)
    changed = sum(abs(b[q] - a[q]) > 1e-12 for q in shared)
    if not changed or len(shared) < 2:  # nothing to test, or one question (the test needs two)
        return PairedScores(
            fmean(a[q] for q in shared), fmean(b[q] for q in shared), len(shared), changed, None, needed
        )
    test = paired_permutation(a, b, shared, alternative="two-sided")  # two-sided: the order does not matter
    return PairedScores(test.mean_a, test.mean_b, len(shared), changed, test.p_value, needed)


def adjust_bh(p_values: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values of the tests that have one (None stays None)."""
    from scipy.stats import false_discovery_control

    present = [(i, p) for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if present:
        for (i, _), value in zip(present, false_discovery_control([p for _, p in present], method="bh")):
            adjusted[i] = float(value)
    return adjusted


def with_adjusted(text: str, adjusted: float | None) -> str:
    """A test's description with its adjusted p-value beside it."""
    return text if adjusted is None else f"{text}; adj. {adjusted:.3g}"


def repeat_accuracies(records: Iterable[RunRecord]) -> list[float]:
    """Accuracy of each repeat (mean graded correctness of its records, failed ones 0), by repeat."""
    by_repeat: dict[int, list[float]] = defaultdict(list)
    for r in records:
        value = correctness(r)
        if value is not None:
            by_repeat[r.key.repeat].append(value)
    return [fmean(by_repeat[k]) for k in sorted(by_repeat)]


def repeat_spread(records: Iterable[RunRecord]) -> str:
    """How a repeated system's accuracy varied between repeats ("" for a single run)."""
    values = repeat_accuracies(records)
    if len(values) < 2:
        return ""
    return (
        f"{len(values)} repeats: {100 * min(values):.1f}–{100 * max(values):.1f}% (sd {100 * pstdev(values):.1f} pts)"
    )


NOT_CONTINUOUS = frozenset({"accuracy", "output_changed"})  # shares: McNemar tests and "changed" shares


def continuous_scores(records: Iterable[RunRecord]) -> list[str]:
    """Per-record scores (other than accuracy and output changed) that take a value besides 0 and 1."""
    values: dict[str, set[float]] = defaultdict(set)
    for r in records:
        for name, value in r.scores.items():
            if value is not None and name not in NOT_CONTINUOUS:
                values[name].add(float(value))
    return sorted(name for name, seen in values.items() if not seen <= {0.0, 1.0})
