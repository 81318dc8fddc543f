"""The numbers a report shows, computed from run records.

* Correctness of a record: :func:`provbench.results.rules.correctness` (graded, in [0, 1]); a
  failed record scores 0.
  Repeats of a condition are averaged per question, so counts may be fractional (paper 000's
  16.3/20).
* Confidence intervals: percentile bootstrap over questions (scipy.stats.bootstrap, seeded).
* Paired tests: exact McNemar test on the discordant pairs of a condition against the baseline
  (two-sided binomial test with p = 1/2, scipy.stats.binomtest). For repeated conditions a
  question counts as correct when it is correct in at least half of its repeats.
* Paired permutation test (:func:`paired_permutation`) of two per-question scores, e.g. "output
  changed" under cited removal vs random removal, each averaged over its repeats first: the
  signs of the per-question differences are flipped at random (scipy.stats.permutation_test,
  exact when 2^n is within the resamples), statistic the mean difference.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean
from typing import Iterable

import numpy as np

from ..model import BASELINE, RunRecord
from .rules import correctness

MCNEMAR_NOTE = (
    "exact McNemar test (two-sided binomial test on the discordant question pairs, "
    "scipy.stats.binomtest) of each condition against the same system's baseline"
)


def per_question(records: Iterable[RunRecord], score: str = "accuracy") -> dict[str, float]:
    """Mean score per question over repeats (accuracy: :func:`provbench.results.rules.correctness`)."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for r in records:
        value = correctness(r) if score == "accuracy" else r.scores.get(score)
        if value is not None:
            grouped[r.key.question_id].append(float(value))
    return {q: fmean(v) for q, v in grouped.items()}


def count_text(count: float) -> str:
    """A count as a cell shows it: whole, or with one decimal when repeats or partial scores (a
    sum of F1s) made it fractional; never 1.66667."""
    return f"{count:.0f}" if abs(count - round(count)) < 1e-9 else f"{count:.1f}"


@dataclass
class Share:
    """A share with its counts and a bootstrap confidence interval."""

    numerator: float
    denominator: int
    low: float | None = None
    high: float | None = None

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    def percent(self) -> str:
        return "–" if self.value is None else f"{100 * self.value:.1f}%"

    def counts(self) -> str:
        if not self.denominator:
            return ""
        return f"({count_text(self.numerator)}/{count_text(self.denominator)})"

    def interval(self) -> str:
        if self.low is None or self.high is None:
            return ""
        return f"[{100 * self.low:.0f}, {100 * self.high:.0f}]"


def share(
    values: dict[str, float],
    questions: Iterable[str] | None = None,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Share:
    chosen = [values[q] for q in (questions if questions is not None else values) if q in values]
    low, high = bootstrap_ci(chosen, resamples=resamples, confidence=confidence, seed=seed)
    return Share(sum(chosen), len(chosen), low, high)


def bootstrap_ci(
    values: list[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean (scipy.stats.bootstrap; its default BCa would move every
    interval shown so far and gives NaN when every resample has the same mean); None for fewer than
    two values."""
    if len(values) < 2:
        return None, None
    from scipy.stats import bootstrap  # slow to import: only when an interval is drawn

    result = bootstrap(
        (np.asarray(values, dtype=float),),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def questions_needed(alpha: float = 0.05, sides: int = 1, chance: float = 0.5) -> int:
    """The fewest paired questions whose exact sign-flip (or McNemar) test can reach p < ``alpha``:
    its smallest p-value is ``sides`` x 0.5^n (5 questions one-sided at 0.05, 6 two-sided). An
    exact binomial test against a ``chance`` other than 1/2 reaches ``sides`` x chance^n at best
    (every question a hit); a chance of 1 never reaches it."""
    if not 0 < chance < 1:
        raise ValueError(f"a binomial test against chance {chance:g} can never be significant")
    n = 1
    while sides * chance**n >= alpha:
        n += 1
    return n


def too_few(n: int, needed: int) -> str:
    """What a test over ``n`` paired questions says when it cannot reach significance; "" when it can."""
    return f"not enough questions (n={n}; needs >= {needed})" if n < needed else ""


@dataclass
class PairedTest:
    baseline_only: int  # correct at baseline, wrong after
    condition_only: int  # wrong at baseline, correct after
    pairs: int
    p_value: float | None
    needed: int = 0  # the fewest discordant pairs that can give a significant result

    @property
    def too_few(self) -> str:
        """ "not enough questions (n=1; needs >= 6)" when even all pairs discordant cannot be significant."""
        return too_few(self.pairs, self.needed)

    def describe(self) -> str:
        if self.too_few:
            return self.too_few
        if self.p_value is None:
            return "no discordant pairs" if self.pairs else "no paired questions"
        return f"p = {self.p_value:.3g} (b={self.baseline_only}, c={self.condition_only}, n={self.pairs})"


def mcnemar(
    before: dict[str, float], after: dict[str, float], questions: Iterable[str] | None = None, *, alpha: float = 0.05
) -> PairedTest:
    """Exact McNemar on paired correctness (values >= 0.5 count as correct); its ``too_few`` says
    when the pairs are too few to reach p < ``alpha`` at all."""
    from scipy.stats import binomtest

    shared = [q for q in (questions if questions is not None else before) if q in before and q in after]
    b = sum(1 for q in shared if before[q] >= 0.5 and after[q] < 0.5)
    c = sum(1 for q in shared if before[q] < 0.5 and after[q] >= 0.5)
    needed = questions_needed(alpha, sides=2)
    if b + c == 0:
        return PairedTest(b, c, len(shared), None, needed)
    return PairedTest(b, c, len(shared), float(binomtest(b, b + c, 0.5).pvalue), needed)


def arrow(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return ""
    if abs(after - before) < 1e-9:
        return "→"
    return "↑" if after > before else "↓"


def select(records: Iterable[RunRecord], system: str, condition: str = BASELINE) -> list[RunRecord]:
    return [r for r in records if r.key.system == system and r.key.condition == condition]


def mean_footprint(records: Iterable[RunRecord]) -> dict[str, float | None]:
    prints = [r.trace.footprint() for r in records if r.status == "ok" and r.trace is not None]
    fields = ("retrieved_text_units", "cited_text_units", "visited_entities", "cited_entities")
    return {f: (fmean(p[f] for p in prints) if prints else None) for f in fields}


@dataclass
class PermutationTest:
    """A paired permutation test of ``a`` against ``b`` over ``n`` shared questions."""

    mean_a: float
    mean_b: float
    n: int
    p_value: float | None  # None: fewer than two shared questions (nothing to permute)
    alternative: str = "greater"
    needed: int = 0  # the fewest questions whose test can reach significance

    @property
    def difference(self) -> float:
        return self.mean_a - self.mean_b

    @property
    def too_few(self) -> str:
        """ "not enough questions (n=1; needs >= 5)" when no outcome of the test could be significant."""
        return too_few(self.n, self.needed) if self.n else ""

    def describe(self) -> str:
        if self.too_few:
            return self.too_few
        if self.p_value is None:
            return "no paired questions"
        return f"mean {self.mean_a:.3f} vs {self.mean_b:.3f} (n={self.n}), p = {self.p_value:.3g} ({self.alternative})"


def paired_permutation(
    a: dict[str, float],
    b: dict[str, float],
    questions: Iterable[str] | None = None,
    *,
    alternative: str = "greater",
    resamples: int = 9999,
    seed: int = 0,
    alpha: float = 0.05,
) -> PermutationTest:
    """Paired permutation test of per-question scores ``a`` vs ``b`` (questions in both, or those
    of ``questions``): is mean(a - b) greater than chance (``alternative``: greater, less,
    two-sided)? Exact when 2^n <= ``resamples``, else Monte Carlo with ``seed``. All differences
    zero gives p = 1. Fewer questions than can reach p < ``alpha`` are ``too_few`` (and one
    question gets no p-value: nothing to permute)."""
    from scipy.stats import permutation_test

    shared = [q for q in (questions if questions is not None else a) if q in a and q in b]
    needed = questions_needed(alpha, sides=2 if alternative == "two-sided" else 1)
    x = np.asarray([a[q] for q in shared], dtype=float)
    y = np.asarray([b[q] for q in shared], dtype=float)
    if len(shared) < 2:  # scipy needs two observations
        mean = (float(x.mean()), float(y.mean())) if shared else (0.0, 0.0)
        return PermutationTest(*mean, len(shared), None, alternative, needed)
    result = permutation_test(
        (x, y),
        lambda u, v, axis: np.mean(u - v, axis=axis),
        permutation_type="samples",
        alternative=alternative,
        n_resamples=resamples,
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    p_value = float(min(1.0, result.pvalue))
    return PermutationTest(float(x.mean()), float(y.mean()), len(shared), p_value, alternative, needed)
