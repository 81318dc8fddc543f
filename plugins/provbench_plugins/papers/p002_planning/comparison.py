"""Paper 002's comparison of systems on the same questions: accuracy per hop count, how focused
their context was, and a paired test of each system against the loop.

*Hop groups* count the edges of a question's gold chain ("1-hop" ... "4-hop": a question naming
two concepts may have its answer one edge from one of them and still need a 2-3 edge chain); the
question types that are not a plain walk are kept apart (``too-deep``: beyond the round budget,
abstaining is intended; ``stale``: the answer changed when an edge was invalidated), then the
categories of the rest ("unanswerable").
*Accuracy* is the dataset's graded correctness of the baseline record (a right abstention on an
unanswerable question counts; a failed run is 0), averaged per question over repeats
(:func:`provbench.results.stats.per_question`). The *paired test* is the exact McNemar test
(:func:`provbench.results.stats.mcnemar`) of the reference loop configuration against each other
system over the questions both ran, a question counting as right at correctness >= 0.5; "deep"
restricts it to answerable questions of a 3 or more edge chain, too-deep and stale ones left out. *Context precision* and *gold chain
shown* are the means of the ``context-precision`` metric's scores (:mod:`.metrics`), when a suite
enables it.
"""

from __future__ import annotations

import re
from statistics import fmean
from typing import Iterable

from provbench.results.data import RunData
from provbench.report.sections import Cell, Table
from provbench.results.stats import mcnemar, per_question

DEEP_HOPS = 3
APART = ("too-deep", "stale")  # question types shown in groups of their own, never as "N-hop"
_HOPS = re.compile(r"^(\d+)-hop$")


def group_of(question) -> str:
    """A question's group: its type when kept apart, else its gold chain's length, else its category."""
    if question is None:
        return "other"
    if question.type in APART:
        return question.type
    if question.gold is not None and question.gold.triples:
        return f"{len(question.gold.triples)}-hop"
    return question.category or "other"


def hop_groups(run: RunData) -> dict[str, list[str]]:
    """Question ids per group, hop groups first by chain length, then the others."""
    groups: dict[str, list[str]] = {}
    for qid in run.question_ids:
        groups.setdefault(group_of(run.questions.get(qid)), []).append(qid)
    order = sorted(groups, key=lambda g: (0, int(_HOPS.match(g).group(1))) if _HOPS.match(g) else (1, g))
    return {g: groups[g] for g in order}


def deep_questions(run: RunData) -> list[str]:
    """Answerable questions of a chain of DEEP_HOPS edges or more, too-deep and stale ones left out."""
    return [
        qid
        for qid, q in run.questions.items()
        if q.metadata.get("answerable", True) is not False
        and q.type not in APART
        and _HOPS.match(group_of(q))
        and int(group_of(q).split("-")[0]) >= DEEP_HOPS
    ]


def accuracy_table(run: RunData, systems: Iterable[str]) -> Table:
    groups = hop_groups(run)
    rows = []
    for system in systems:
        scores = per_question(run.select(system))
        cells: list[Cell | str] = [system]
        for ids in [*groups.values(), run.question_ids]:
            values = [scores[q] for q in ids if q in scores]
            cells.append(_share(values))
        cells += [_mean_score(run, system, "context_precision"), _mean_score(run, system, "gold_chain_shown")]
        rows.append(cells)
    return Table(
        columns=["System", *groups, "All", "Context precision", "Gold chain shown"],
        rows=rows,
        caption="Baseline accuracy per gold chain length, too-deep and stale questions apart (the dataset's graded correctness: a right abstention on "
        "an unanswerable question counts), with the questions behind it. Context precision: share "
        "of the concepts shown to the model that lie on the gold chain; gold chain shown: share of "
        "the chain's concepts shown (context-precision metric, when the suite enables it).",
    )


def paired_table(run: RunData, reference: str, others: Iterable[str]) -> Table:
    before = per_question(run.select(reference))
    deep = deep_questions(run)
    rows = []
    for system in others:
        after = per_question(run.select(system))
        every, deep_only = mcnemar(before, after), mcnemar(before, after, deep)
        rows.append(
            [
                system,
                str(every.pairs),
                str(every.baseline_only),
                str(every.condition_only),
                _p(every),
                str(deep_only.pairs),
                _p(deep_only),
            ]
        )
    return Table(
        columns=[
            "System",
            "Questions",
            f"Only {reference} right",
            "Only this system right",
            "McNemar p",
            f"Deep questions ({DEEP_HOPS}+ hops)",
            "McNemar p (deep)",
        ],
        rows=rows,
        caption=f"Each system against {reference} on the questions both ran: exact McNemar test (two-sided "
        "binomial test on the discordant questions; right = graded correctness >= 0.5).",
    )


def _share(values: list[float]) -> Cell:
    if not values:
        return Cell(text="–")
    return Cell(text=f"{fmean(values):.2f}", counts=f"(n={len(values)})")


def _mean_score(run: RunData, system: str, name: str) -> Cell:
    values = [r.scores[name] for r in run.select(system) if r.scores.get(name) is not None]
    return _share(values)


def _p(test) -> Cell:
    if test.p_value is None:
        return Cell(text="–", note=test.describe())
    return Cell(text=f"{test.p_value:.3g}", note=test.describe())
