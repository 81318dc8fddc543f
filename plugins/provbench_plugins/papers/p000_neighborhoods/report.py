"""Paper 000's report sections: Table 1 (baseline accuracy, official EM and F1, evidence
footprint, forced and flagged answers) and Table 2 (the six graph ablations grouped into the
paper's three studies), with their charts. Paper 000's systems show under the paper's names and
in its Table 1 order; a column a system's design does not have (RAG visits no entity, LLM reads
nothing) shows "–", not 0.0.

Table 2's "output changed" and "stayed correct" are the ``output-changed`` / ``stayed-correct``
metric values (metrics.json) when the run computed them, else the same computation
(:func:`provbench_plugins.metrics.records.per_question_changes`, whose docstring gives the rule
for failed units); accuracy cells read the ``accuracy`` metric likewise. Intervals come from the
per-question values of that computation (:mod:`provbench.results.stats`: percentile bootstrap,
exact McNemar tests, their p-values Benjamini-Hochberg adjusted over the table's cells:
:mod:`provbench.results.significance`).
"""

from __future__ import annotations

from typing import Any

from provbench.model import BASELINE
from provbench.results.data import RunData
from provbench.report.sections import BarChart, Cell, Row, Section, Table, Text
from provbench.results.significance import BH_NOTE, adjust_bh, with_adjusted
from provbench.results.stats import (
    MCNEMAR_NOTE,
    Share,
    arrow,
    count_text,
    mcnemar,
    mean_footprint,
    per_question,
    share,
)
from provbench_plugins.metrics.records import (
    cell_not_measurable,
    per_question_changes,
    per_question_official,
    stayed_correct_tally,
)

from .tables import (
    CONDITION_TITLES,
    PAPER_DENOMINATORS,
    SYSTEM_NAMES,
    ablation_of,
    caption_of_text_rules,
    TABLE2_NAMES,
    display_name,
    footprint_applies,
    hidden_reports_note,
    is_agent,
    on_papers_dataset,
    paper_system,
    table1_order,
    title_of,
)

# The paper groups its ablations into studies (Table 2's row groups).
STUDIES = (
    ("Cited entities ablation", ("cited-removal", "random-removal")),
    ("Isolation", ("full-isolation", "text-only-isolation")),
    ("Visited-but-uncited entities ablation", ("entity-removal", "entity-text-mask")),
)


def sections(run: RunData) -> list[Section]:
    """Tables 1 and 2 when the run used any of paper 000's systems or ablations."""
    if not (run.uses("systems", SYSTEM_NAMES) or run.uses("interventions", CONDITION_TITLES)):
        return []
    found = [table1_section(run)]
    shortfall = selection_note(run)
    if shortfall is not None:
        found[0].blocks.insert(0, shortfall)
    t2 = table2_section(run)
    if t2 is not None:
        found.append(t2)
    return found


def share_cell(s: Share, note: str = "", arrow_text: str = "") -> Cell:
    return Cell(text=s.percent(), counts=s.counts(), arrow=arrow_text, note=note, interval=s.interval())


def selection_note(run: RunData) -> Text | None:
    """A warning when the dataset had fewer eligible questions than the selection's quotas
    (the 2wiki loader records ``metadata["selection_shortfall"]`` on the questions)."""
    short = next(
        (q.metadata["selection_shortfall"] for q in run.questions.values() if q.metadata.get("selection_shortfall")),
        None,
    )
    if not short:
        return None
    parts = "; ".join(f"{cat}: {v['selected']} of {v['quota']}" for cat, v in short.items())
    return Text(
        text=f"Selection shortfall: the dataset had fewer eligible questions than the paper's "
        f"quotas ({parts}), so this run is not the paper's 12/12/6 mix."
    )


# -- Table 1 ------------------------------------------------------------------------------------------


def table1_section(run: RunData) -> Section:
    """Accuracy (all questions, bootstrap CI), official EM and F1, mean footprint, forced and flagged
    answers per system at baseline, in the paper's order; the paper's own figures only beside a run
    on its dataset."""
    papers = on_papers_dataset(run)
    rows = [table1_row(run, system, papers) for system in table1_order(run)]
    columns = ["System", "Accuracy", "Accuracy (analysed)", *(["Paper's denominator"] if papers else [])]
    columns += ["EM", "F1", "Retrieved TUs", "Cited TUs", "Visited entities", "Cited entities"]
    columns += ["Forced answers", "Flagged answers", "Failed"]
    table = Table(columns=columns, rows=rows, css_class="table1", caption=table1_caption(run, papers))
    return Section(id="table1", title="Table 1: baseline accuracy and evidence footprint", blocks=[table], order=30)


def table1_caption(run: RunData, papers: bool) -> str:
    paper_note = (
        "The paper's Table 1 mixes the two: its agentic and GraphRAG rows fit only the 25 analysed questions "
        "(Table 2's baseline row), its LLM and RAG rows only all 30; “Paper's denominator” says which per row. "
        f"EM and F1 as the official 2WikiMultihopQA evaluation computes them ({aliases_note(run)})"
        if papers
        else "EM and F1 as the dataset loader scores each answer against its gold answer"
    )
    return (
        f"Accuracy over all {len(run.question_ids)} questions with a percentile-bootstrap confidence interval "
        "(questions resampled; provbench's answer rule, docs/datasets.md), and over the "
        f"{len(run.analysed)} analysed questions (after the exclusion step; all questions when it is off). "
        f"{paper_note}: means x 100 over all questions, a missing answer scoring 0. "
        "Footprint columns are means per answer; TUs stands for text units; “–” marks a column the system does "
        "not have. Forced answers were accepted on the agent's last step; flagged answers had citations dropped "
        "(rejected after the allowed retries, or failing at the budget's end). Failed runs count as wrong."
    )


def table1_row(run: RunData, system: str, papers: bool) -> Row:
    records = run.select(system)
    acc = share(per_question(records), run.question_ids, **run.stats_options())
    applies = footprint_applies(run, system)
    footprint = [
        ("–" if v is None or field not in applies else f"{v:.1f}") for field, v in mean_footprint(records).items()
    ]
    agent = is_agent(run, system)
    analysed = share(per_question(records), run.analysed, **run.stats_options())
    forced = sum(bool(r.trace and (r.trace.artifacts.get("forced_answer"))) for r in records)
    flagged = sum(
        bool(r.trace and (r.trace.artifacts.get("flagged_citations") or r.trace.artifacts.get("flagged_evidence")))
        for r in records
    )
    return Row(
        cells=[
            display_name(run, system),
            marked(run, share_cell(acc), system),  # a system answering from a store of its own: no bare 100 %
            marked(run, share_cell(analysed), system),
            *([paper_denominator(run, system)] if papers else []),
            official_cell(run, system, "em"),
            official_cell(run, system, "f1"),
            *footprint,
            str(forced) if agent else "–",
            str(flagged) if agent else "–",
            str(sum(r.status == "failed" for r in records)),
        ]
    )


def paper_denominator(run: RunData, system: str) -> str:
    """Which questions the paper's Table 1 figure for this system is a share of; "–" for a system
    the paper has no row for (another plugin's, or a suite's labelled variant)."""
    short = paper_system(run, system)
    return PAPER_DENOMINATORS[short] if short is not None and short == system else "–"


def aliases_note(run: RunData) -> str:
    """Whether the gold answers carried aliases (the official evaluation takes the best over them)."""
    with_aliases = sum(bool(q.aliases) for q in run.questions.values())
    if with_aliases:
        return f"best over the answer and its aliases; {with_aliases} of {len(run.questions)} questions have aliases"
    if any(q.metadata.get("answer_id") for q in run.questions.values()):
        return (
            "no aliases: the records carry answer_id but the suite read no id_aliases.json (the 2wiki "
            "loader's option id_aliases), so an answer the official evaluation accepts as an alias scores 0 here"
        )
    return (
        "no aliases: the dataset gave none, so an answer the official evaluation accepts as an alias "
        "scores 0 here; the data_ids release's id_aliases.json supplies them, docs/papers/p000.md"
    )


def official_cell(run: RunData, system: str, score: str) -> Cell:
    """The ``em`` / ``f1`` metric's baseline value when the run has it, else the same computation;
    "–" when the dataset gives no such score."""
    if not any(score in r.scores for r in run.select(system)):
        return Cell(note=f"the dataset loader gives no {score}")
    stored = [v for v in run.metric_values(score) if v.get("system") == system and v.get("condition") == BASELINE]
    if stored and stored[0].get("value") is not None:
        value, num, den = stored[0]["value"], stored[0]["numerator"], stored[0]["denominator"]
    else:
        _, tally = per_question_official(run, system, BASELINE, run.question_ids, score)
        value, num, den = (None if tally.value is None else 100 * tally.value), tally.numerator, tally.denominator
    return Cell(
        text="–" if value is None else f"{value:.1f}", counts=f"({count_text(num)}/{count_text(den)})" if den else ""
    )


# -- Table 2 ------------------------------------------------------------------------------------------


def intervention_systems(run: RunData) -> list[str]:
    """Systems with intervention records, in the suite's ``intervention_systems`` order (Table 2's columns)."""
    declared = run.suite.get("intervention_systems") or []
    ordered = [s for s in declared if s in run.systems] + [s for s in run.systems if s not in declared]
    return [s for s in ordered if any(r.key.system == s and r.key.condition != BASELINE for r in run.records)]


def table2_section(run: RunData) -> Section | None:
    """Conditions as row groups, systems as columns, over the analysed questions."""
    systems, analysed, opts = intervention_systems(run), run.analysed, run.stats_options()
    if not systems:
        return None
    baseline = {s: per_question(run.select(s)) for s in systems}
    tests = accuracy_tests(run, systems, baseline, analysed)
    rows = [
        Row(group="Baseline experiment"),
        Row(
            cells=[
                "Baseline",
                "Acc.",
                *(marked(run, share_cell(share(baseline[s], analysed, **opts)), s) for s in systems),
            ]
        ),
    ]
    for title, conditions in study_groups(run):
        rows.append(Row(group=title))
        for condition in conditions:
            rows += condition_rows(run, condition, systems, baseline, analysed, opts, tests)
    exclusion = run.metrics.get("exclusion") or run.suite.get("exclusion") or {}
    excluded = (
        (
            f", after excluding the {len(run.excluded)} answered correctly by the "
            f"{exclusion.get('reference_system')} baseline"
        )
        if exclusion.get("enabled")
        else ""
    )
    caption = (
        f"Over the {len(analysed)} analysed questions{excluded}. “Output changed” is the share of answers that "
        "differ from the baseline answer; beside it, “stayed correct” gives originally correct answers that "
        "stayed correct out of originally correct answers. “Acc.” is post-intervention accuracy with correct/total in "
        "parentheses; arrows give the direction of the change from baseline. Randomised interventions are "
        f"averaged over repeats, so counts may be fractional. {caption_of_text_rules(run)} "
        "Units the leak guard found leaked, without effect, not checkable or whose intervention hid nothing "
        "(no-op) are left out, counted in each cell's note; arrows compare a cell's measured questions with "
        "the baseline of the same questions; “not measurable”: no unit left (see the leak guard section). "
        f"Significance: {MCNEMAR_NOTE}; {BH_NOTE.format(n=sum(p is not None for p, _ in tests.values()))}."
        + "".join(f" {mark}." for mark in sorted(set(uncertified_cells(run).values())))
    )
    table = Table(
        columns=["Condition", "Outcome", *(display_name(run, s, TABLE2_NAMES) for s in systems)],
        rows=rows,
        numeric_from=2,
        css_class="table2",
        caption=caption,
    )
    notes = [note for note in (hidden_reports_note(run),) if note is not None]
    return Section(id="table2", title="Table 2: interventions", blocks=[table, *notes, *charts(run, systems)], order=31)


def study_groups(run: RunData) -> list[tuple[str, list[str]]]:
    """The run's conditions under the paper's studies, by the ablation each runs (a labelled one too)."""
    conditions, groups, placed = run.conditions, [], set()
    for title, members in STUDIES:
        present = [c for c in conditions if ablation_of(run, c) in members]
        if present:
            groups.append((title, present))
            placed.update(present)
    others = [c for c in conditions if c not in placed]
    if others:
        groups.append(("Other interventions", others))
    return groups


def accuracy_tests(
    run: RunData, systems: list[str], baseline: dict[str, dict[str, float]], analysed: list[str]
) -> dict[tuple[str, str], tuple[float | None, str]]:
    """McNemar's test of every condition x system cell against the system's baseline, each with its
    Benjamini-Hochberg adjustment over the whole table: (condition, system) -> (adjusted p, text)."""
    cells = [
        (c, s)
        for c in run.conditions
        for s in systems
        if run.select(s, c) and not cell_not_measurable(run, s, c, analysed)
    ]
    found = [mcnemar(baseline[s], per_question(run.select(s, c)), analysed) for c, s in cells]
    adjusted = adjust_bh([t.p_value for t in found])
    return {cell: (adj, with_adjusted(t.describe(), adj)) for cell, t, adj in zip(cells, found, adjusted)}


def condition_rows(
    run: RunData,
    condition: str,
    systems: list[str],
    baseline: dict[str, dict[str, float]],
    analysed: list[str],
    opts: dict[str, Any],
    tests: dict[tuple[str, str], tuple[float | None, str]],
) -> list[Row]:
    changed_cells, acc_cells = [], []
    for system in systems:
        records = run.select(system, condition)  # the units the pairing rule counts
        unmeasured = cell_not_measurable(run, system, condition, analysed)
        if unmeasured or not records:  # a leak or a no-op is never a finding: no 0 % where nothing was measured
            reason = (unmeasured or "").removeprefix("not measurable: ")
            cell = Cell(text="not measurable", note=f"{reason} (leak guard)") if unmeasured else Cell()
            changed_cells.append(cell)
            acc_cells.append(cell)
            continue
        outcomes, tally = per_question_changes(run, system, condition, analysed)
        changed = metric_share(
            run,
            "output-changed",
            system,
            condition,
            share({q: o.changed for q, o in outcomes.items()}, analysed, **opts),
        )
        kept = metric_share(run, "stayed-correct", system, condition, stayed_correct_tally(outcomes))
        left_out = f"; {tally.note()}" if tally.left_out else ""
        changed_cells.append(
            Cell(
                text=changed.percent(),
                counts=f"(stayed correct {kept.counts()[1:-1]})" if kept.counts() else "",
                interval=changed.interval(),
                note=f"changed {changed.counts()}; stayed correct "
                f"{kept.counts() or '(none originally correct)'}{left_out}",
            )
        )
        after = per_question(records)
        acc = metric_share(run, "accuracy", system, condition, share(after, analysed, **opts))
        before = share(baseline[system], [q for q in analysed if q in after])  # the baseline of the same questions
        acc_cells.append(share_cell(acc, tests[(condition, system)][1] + left_out, arrow(before.value, acc.value)))
    uncertified = uncertified_cells(run)
    for system, changed_cell, acc_cell in zip(systems, changed_cells, acc_cells):
        if mark := uncertified.get((system, condition)):  # a number no claim vouches for says so
            for cell in {id(changed_cell): changed_cell, id(acc_cell): acc_cell}.values():
                cell.marked(mark)
    return [
        Row(cells=[title_of(run, condition), "Output changed", *changed_cells]),
        Row(cells=["", "Acc.", *acc_cells]),
    ]


def marked(run: RunData, cell: Cell, system: str) -> Cell:
    """A baseline cell of ``system``, marked when it is not certified
    (:func:`provbench.results.validity.baseline_mark`), as in every table."""
    from provbench.results.validity import baseline_mark

    return cell.marked(baseline_mark(run, system))


def uncertified_cells(run: RunData) -> dict[tuple[str, str], str]:
    """(system, condition) cells whose numbers are not certified, with the mark's note: every cell
    of a run never validated, those no certified claim covers in a validated one."""
    from provbench.results.validity import cell_mark, read_validity

    validity = read_validity(run.run_dir)
    marks = {(s, c): cell_mark(validity, s, c) for s in run.systems for c in run.conditions}
    return {cell: mark for cell, mark in marks.items() if mark}


def metric_share(run: RunData, metric: str, system: str, condition: str, computed: Any) -> Share:
    """The metric's value from metrics.json when the run has it (counts from there, the interval
    from ``computed``), else ``computed`` (a Share or a records Tally)."""
    low, high = getattr(computed, "low", None), getattr(computed, "high", None)
    for v in run.metric_values(metric):
        if v.get("system") == system and v.get("condition") == condition and v.get("denominator") is not None:
            return Share(float(v.get("numerator") or 0.0), int(v["denominator"]), low, high)
    return Share(computed.numerator, computed.denominator, low, high)


def charts(run: RunData, systems: list[str]) -> list[Any]:
    """Table 2 as bars: each system's output-changed share and accuracy per condition, with their
    bootstrap intervals; a cell the leak guard left unmeasured is marked, not drawn as 0 %."""
    conditions = run.conditions
    if not conditions:
        return []
    changed = {display_name(run, s, TABLE2_NAMES): [_changed_share(run, s, c) for c in conditions] for s in systems}
    accuracy = {
        display_name(run, s, TABLE2_NAMES): [_accuracy_share(run, s, c) for c in [BASELINE, *conditions]]
        for s in systems
    }
    return [
        BarChart(
            title="Answers changed by each intervention (analysed questions)",
            ylabel="output changed (%)",
            categories=[title_of(run, c) for c in conditions],
            series=_values(changed),
            intervals=_intervals(changed),
            caption="Output changed per intervention",
        ),
        BarChart(
            title="Accuracy under each condition (analysed questions)",
            ylabel="accuracy (%)",
            categories=["Baseline", *(title_of(run, c) for c in conditions)],
            series=_values(accuracy),
            intervals=_intervals(accuracy),
            caption="Accuracy per condition",
        ),
        Text(
            text="Bars are Table 2's shares of the analysed questions (repeats of a randomised condition "
            "averaged), error bars their bootstrap intervals; n/m: not measurable (leak guard)."
        ),
    ]


def _accuracy_share(run: RunData, system: str, condition: str) -> Share | None:
    if condition != BASELINE and (
        not run.select(system, condition) or cell_not_measurable(run, system, condition, run.analysed)
    ):
        return None
    computed = share(per_question(run.select(system, condition)), run.analysed, **run.stats_options())
    return computed if condition == BASELINE else metric_share(run, "accuracy", system, condition, computed)


def _changed_share(run: RunData, system: str, condition: str) -> Share | None:
    if not run.select(system, condition) or cell_not_measurable(run, system, condition, run.analysed):
        return None
    outcomes, _ = per_question_changes(run, system, condition, run.analysed)
    computed = share({q: o.changed for q, o in outcomes.items()}, run.analysed, **run.stats_options())
    return metric_share(run, "output-changed", system, condition, computed)


def _values(shares: dict[str, list[Share | None]]) -> dict[str, list[float | None]]:
    return {name: [s.value if s is not None else None for s in row] for name, row in shares.items()}


def _intervals(shares: dict[str, list[Share | None]]) -> dict[str, list[tuple[float | None, float | None] | None]]:
    return {name: [(s.low, s.high) if s is not None else None for s in row] for name, row in shares.items()}
