"""Paper 003's report sections: Table I (baseline, GA-RAG, delta, with bootstrap intervals, each
row's means paired over the claims every column scored; the paper's numbers only where its
definition matches, each row defined), the aggregate comparison
chart (Fig. 2) and per-metric charts (Fig. 3), FEVER's own measures, a confusion matrix per
system and LLM cost per claim, and the sweep's prompt check (:mod:`.diversity`)."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean
from typing import Any

from provbench.model import BASELINE, RunRecord
from provbench.results.data import RunData, format_metric_value
from provbench.report.sections import BarChart, Cell, Row, Section, Table, Text
from provbench.results.stats import bootstrap_ci, per_question

from .metrics import empty_graph_warning
from .rows import PAPER_GA_RAG, RowDef, table_rows

BASELINE_SYSTEM, GA_RAG = "p003/vanilla-rag", "p003/ga-rag"
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "(none)")
# The paper signs the hallucination delta as an improvement (+13.3 %: (0.16961 - 0.14700) / 0.16961 on
# the authors' unrounded means) and every other delta as the plain relative change (1.769 s -> 12.442 s:
# +603.3 %).
IMPROVEMENT_SIGNED = {"hallucination_rate", "hallucination_rate_authors"}
FEW_CLAIMS = 30  # below it, say that the means carry no statistical meaning


def sections(run: RunData) -> list[Section]:
    base, graphs = run.uses("systems", [BASELINE_SYSTEM]), run.uses("systems", [GA_RAG])
    if not base and not graphs:
        return []
    found = [
        table1_section(run, base[:1], graphs),
        figures_section(run, base[:1] + graphs),
        fever_section(run, base + graphs),
    ]
    checked = diversity_section(run)
    return found + ([checked] if checked else [])


def table1_options(run: RunData) -> dict[str, Any]:
    """The options the suite gave ``p003/table1`` (first reference found)."""
    for ref in run.suite.get("metrics", []):
        if isinstance(ref, dict) and ref.get("name") == "p003/table1":
            return ref.get("options") or {}
    return {}


def rows_of(run: RunData) -> tuple[RowDef, ...]:
    """Table I's rows, the hallucination row by the metric's ``hallucination_row`` option."""
    return table_rows(table1_options(run).get("hallucination_row", "provbench"))


def paired_scores(run: RunData, systems: list[str], key: str) -> tuple[dict[str, list[float]], int]:
    """Each system's per-claim values of ``key`` over the claims every system that scored it
    scored (so a row's means and deltas compare the same claims), and how many claims some
    system scored that were left out for it."""
    per = {s: per_question(run.select(s), key) for s in systems}
    scored = [set(v) for v in per.values() if v]
    common = set.intersection(*scored) if scored else set()
    left_out = len(set().union(*scored) - common) if scored else 0
    return {s: [v[q] for q in sorted(common)] if v else [] for s, v in per.items()}, left_out


def mean_cell(run: RunData, values: list[float], unit: str, left_out: int = 0) -> tuple[Cell, float | None]:
    if not values:
        return Cell(text="–", note="not scored"), None
    value = fmean(values)
    low, high = bootstrap_ci(values, **run.stats_options())
    fmt = (lambda v: f"{v:.3f}") if unit == "share" else (lambda v: f"{v:.2f}")
    interval = f"[{fmt(low)}, {fmt(high)}]" if low is not None else ""
    note = f"paired: the claims every column scored ({left_out} scored by only some left out)" if left_out else ""
    return Cell(text=fmt(value), counts=f"(n={len(values)})", interval=interval, note=note), value


def delta(before: float | None, after: float | None, key: str = "") -> Cell:
    """Relative change from the baseline, in the paper's sign convention (IMPROVEMENT_SIGNED)."""
    if before is None or after is None:
        return Cell()
    if abs(before) < 1e-12:
        return Cell(text="–", note="baseline is 0")
    change = (before - after) if key in IMPROVEMENT_SIGNED else (after - before)
    return Cell(text=f"{100 * change / abs(before):+.1f}%")


def graph_traces(run: RunData, system: str) -> list[Any]:
    """The baseline traces of a GA-RAG system that got as far as a local graph."""
    return [r.trace for r in run.select(system) if r.trace is not None and "shown" in r.trace.artifacts]


def params_of(run: RunData, system: str) -> dict[str, Any]:
    """The scoring parameters a GA-RAG system's baseline traces recorded (first found)."""
    for r in run.select(system):
        params = (r.trace.artifacts.get("graph") or {}).get("params") if r.trace is not None else None
        if params:
            return params
    return {}


def ranking_note(params: dict[str, Any]) -> str:
    if params.get("ranking") == "authors":
        return "the authors' released ranking (confidence x mentions x retrieval score x claim overlap; no eqs. 2-4)"
    central = f"{params.get('centrality', 'degree')} centrality" + (
        "" if params.get("weighted_centrality", True) else ", unweighted"
    )
    if not params.get("gamma") or not params.get("iterations"):
        return f"eqs. (2) and (4) without propagation (gamma = 0 or T = 0), {central}"
    return (
        f"eqs. (2)-(4), propagation with gamma = {params['gamma']}, T = {params['iterations']}, {central}, "
        f"{isolated_rule(params)}"
    )


def isolated_rule(params: dict[str, Any]) -> str:
    """What eq. (3) did to a fact sharing no page or entity with another (option ``isolated``)."""
    if params.get("isolated", "decay") == "keep":
        return "a fact without an edge keeping s(0) (isolated: keep)"
    kept = (1 - params["gamma"]) ** params["iterations"]
    return (
        f"eq. (3) as printed, so a fact without an edge (no shared page or entity) decays to "
        f"(1 - gamma)^T = {kept:.3g} of s(0) and can drop out of the prompt (isolated: keep keeps s(0))"
    )


def answer_note(run: RunData, system: str, params: dict[str, Any]) -> str:
    traces = [t for t in graph_traces(run, system) if t.artifacts.get("answer_source")]
    if not params.get("fallback_to_baseline"):
        return "GA-RAG's own answer always (fallback to the baseline's answer off)"
    from_graph = sum(t.artifacts["answer_source"] == "graph" for t in traces)
    return (
        f"the authors' gate (consistency >= {params.get('consistency_threshold')}, at least "
        f"{params.get('low_coverage_facts')} facts, "
        f"grounding >= {params.get('grounding_threshold')}): answered from the graph for {from_graph} of "
        f"{len(traces)} claims, with the baseline's answer otherwise"
    )


def graph_note(run: RunData, system: str) -> str:
    traces = graph_traces(run, system)
    empty = sum(not t.facts for t in traces)
    failed = [len(t.artifacts.get("extraction_failures") or []) for t in traces]
    isolated = sum(1 for t in traces if (t.artifacts.get("graph") or {}).get("isolated"))
    return (
        f"graphs empty for {empty} of {len(traces)} claims; facts without an edge in {isolated} graphs; extraction "
        f"replies without a triple list: {sum(failed)} documents in {sum(1 for f in failed if f)} claims"
    )


def scoring_note(run: RunData, system: str) -> str:
    """Which scoring ran for one GA-RAG system: ranking, triple filter, answer source, graph health."""
    params = params_of(run, system)
    if not params:
        return f"{system}: no graph was built"
    threshold = params.get("triple_confidence_threshold")
    triple_filter = "off (every triple kept)" if threshold is None else f"confidence >= {threshold}"
    return (
        f"{system}: {ranking_note(params)}; triple filter {triple_filter}; {answer_note(run, system, params)}; "
        f"{graph_note(run, system)}"
    )


def empty_graph_warnings(run: RunData, graphs: list[str]) -> list[Text]:
    warnings = []
    for system in graphs:
        traces = graph_traces(run, system)
        if traces:
            text = empty_graph_warning(system, sum(not t.facts for t in traces) / len(traces), len(traces))
            warnings += [Text(text=f"Warning: {text}.")] if text else []
    return warnings


def table1_section(run: RunData, base: list[str], graphs: list[str]) -> Section:
    columns = ["Metric", *(f"Baseline ({s})" for s in base)]
    for g in graphs:
        columns += [f"GA-RAG ({g})"] + (["Delta (%)"] if base else [])
    columns += ["Paper (baseline → GA-RAG)"]
    rows = [table1_row(run, base, graphs, row) for row in rows_of(run)]
    intro = (
        "Paper 003's Table I on this run's claims (baseline condition). Each value is a mean over "
        "claims with a percentile-bootstrap interval, every column of a row over the same claims (those "
        "all its systems scored); the table below it defines every row. Which "
        "scoring ran: " + "; ".join(scoring_note(run, g) for g in graphs) + "."
    )
    blocks: list[Any] = [
        *empty_graph_warnings(run, graphs),
        Table(columns=columns, rows=rows, caption=table1_caption(run)),
        definitions_table(run),
    ]
    return Section(
        id="p003-table1", title="Paper 003, Table I: baseline RAG vs GA-RAG", intro=intro, order=40, blocks=blocks
    )


def paper_cell(row: RowDef) -> Cell:
    numbers = f"{row.paper[0]:.3f} → {row.paper[1]:.3f}"
    if row.comparable == "no":
        return Cell(text="not comparable", note=f"paper: {numbers}, another quantity: {row.authors}")
    note = (
        "same definition; model and data differ" if row.comparable == "yes" else f"close definition: {row.difference}"
    )
    return Cell(text=numbers, note=f"{note}; {PAPER_GA_RAG}")


def table1_row(run: RunData, base: list[str], graphs: list[str], row: RowDef) -> Row:
    cells: list[Any] = [row.title]
    before = None
    values, left_out = paired_scores(run, graphs if row.graph_only else [*base, *graphs], row.key)
    for s in base:
        cell, before = (None, None) if row.graph_only else mean_cell(run, values[s], row.unit, left_out)
        cells.append(Cell(text="–", note="no local graph (paper: 0.000)") if row.graph_only else cell)
    for g in graphs:
        cell, after = mean_cell(run, values[g], row.unit, left_out)
        if base:
            cells += [cell, Cell(text="–", note="graph-only row") if row.graph_only else delta(before, after, row.key)]
        else:
            cells.append(cell)
    cells.append(paper_cell(row))
    return Row(cells=cells)


def definitions_table(run: RunData) -> Table:
    return Table(
        columns=["Row", "Here", "In the paper (the authors' released evaluation)", "Comparable"],
        rows=[Row(cells=[r.title, r.here, r.authors, r.comparable]) for r in rows_of(run)],
        numeric_from=4,
        caption="The paper defines none of its rows; its numbers come from the authors' code. "
        "'not comparable' in Table I marks another quantity under the same name.",
    )


def kb_pages(run: RunData) -> int | None:
    directory = (run.suite.get("knowledge_base") or {}).get("directory")
    try:
        return int(json.loads((Path(directory) / "build_info.json").read_text())["pages"]) if directory else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def table1_caption(run: RunData) -> str:
    notes = [
        "Table I layout; lower is better for hallucination rate and response time.",
        "Delta: relative change (GA-RAG − baseline) / baseline, except hallucination rate, signed as "
        "an improvement, (baseline − GA-RAG) / baseline on the unrounded means, as the paper does "
        "(its +13.3% is this formula on the authors' means 0.16961 → 0.14700).",
        "Graph completeness, factual grounding, graph coverage and context precision are graph-only: "
        "the baseline has no local graph (the paper gives it 0.000 and no delta).",
        hallucination_caption(run),
        "Avg response time: the time without the LLM cache (cache hits counted at the latency their "
        "reply first took); metrics.json's table1.wall_time is the time as run. The paper's GA-RAG time "
        "is not the same quantity: it includes a full baseline query per claim.",
        f"{PAPER_GA_RAG[0].upper()}{PAPER_GA_RAG[1:]}: it is no measure of a GA-RAG that answers from its "
        "graph, as this run's may (the intro says from how many claims' graphs it did).",
        *gated_caption(run),
    ]
    kb = run.suite.get("knowledge_base") or {}
    kb_options = kb.get("options") or {}
    if kb.get("builder", "fever-wiki").endswith("fever-wiki"):
        pages = kb_pages(run)
        notes.append(
            f"Corpus: {pages if pages is not None else 'the'} pages whose titles occur in the claims"
            + (" and the pages they link to" if kb_options.get("link_hops") else "")
            + ", not all of Wikipedia as FEVER's systems search."
        )
    if kb_options.get("include_gold_pages"):
        notes.append(
            "Deviation: the KB was built with include_gold_pages, so every claim's gold evidence "
            "pages were indexed whatever their retrieval candidates (FEVER indexes all of Wikipedia)."
        )
    claims = len(run.question_ids)
    if claims < FEW_CLAIMS:
        notes.append(
            f"With {claims} claims these means have no statistical meaning: read the intervals, "
            "and run more claims before drawing a conclusion."
        )
    return " ".join(notes)


def gated_caption(run: RunData) -> list[str]:
    """Names the GA-RAG columns run with the authors' gate on: those are built as the paper's column was."""
    gated = [g for g in run.uses("systems", [GA_RAG]) if params_of(run, g).get("fallback_to_baseline")]
    if not gated:
        return []
    return [
        f"{', '.join(f'GA-RAG ({g})' for g in gated)}: built as the paper's column was, the authors' gate on "
        "(the intro says on how many claims it answered from the graph); the paper's column compares with it where the definitions match."
    ]


def hallucination_caption(run: RunData) -> str:
    if table1_options(run).get("hallucination_row", "provbench") == "authors":
        return (
            "Hallucination rate (authors' definition, option hallucination_row: authors): their "
            "evaluate_hallucination_rate of each answer against the retrieved pages' sentences (0.0 for a "
            "hedged answer); it reproduces the paper's 0.170 and 0.147 on the authors' stored answers."
        )
    return (
        "Hallucination rate (provbench's tokens): share of the explanation's content tokens, meta-prefixes "
        "stripped, found nowhere in the retrieved pages or the claim (the same context for both systems); "
        "another quantity than the paper's (option hallucination_row: authors shows theirs)."
    )


def figures_section(run: RunData, systems: list[str]) -> Section:
    """Fig. 2 (the share rows of Table I per system) and Fig. 3 (one chart per metric), paired as Table I."""
    rows = rows_of(run)
    shares = [(r.title, r.key) for r in rows if r.unit == "share"]
    means: dict[str, dict[str, float | None]] = {s: {} for s in systems}
    for _, key in shares:
        values, _ = paired_scores(run, systems, key)
        for s in systems:
            means[s][key] = fmean(values[s]) if values[s] else None
    blocks: list[Any] = [
        BarChart(
            title="Aggregate comparison (Fig. 2)",
            ylabel="mean (%)",
            categories=[t for t, _ in shares],
            series={s: [means[s][k] for _, k in shares] for s in systems},
            caption="Table I's 0-1 rows per system; a missing bar is a row not scored "
            "(graph-only rows for the baseline).",
        )
    ]
    figure_rows = [r for r in rows if r.key == "accuracy" or r.key.startswith("hallucination_rate")]
    for letter, (title, key) in zip("ab", ((r.title, r.key) for r in figure_rows)):
        blocks.append(
            BarChart(
                title=f"({letter}) {title} (Fig. 3)",
                ylabel=f"{title.lower()} (%)",
                categories=systems,
                series={title: [means[s][key] for s in systems]},
                caption=f"{title} per system (baseline condition).",
            )
        )
    return Section(id="p003-figures", title="Paper 003, Figures 2 and 3: metric comparisons", order=41, blocks=blocks)


def fever_section(run: RunData, systems: list[str]) -> Section:
    blocks: list[Any] = [fever_table(run, systems)]
    blocks += [t for t in [cited_table(run, systems)] if t is not None]
    blocks += [t for t in (confusion_table(run, s) for s in systems) if t is not None]
    if len(blocks) == 1 and not any(run.metric_values(prefix="fever.")):
        blocks.insert(0, Text(text="Add the 'fever' metric to the suite for FEVER's own measures."))
    return Section(
        id="p003-fever", title="Paper 003: FEVER measures, confusion matrices and LLM cost", order=42, blocks=blocks
    )


def fever_values(run: RunData, system: str) -> dict[str, dict[str, Any]]:
    """The ``fever`` metric's values of ``system`` at baseline, by measure (``fever_score``, ...)."""
    return {
        v["metric"].split(".", 1)[1]: v
        for v in run.metric_values(prefix="fever.")
        if v["system"] == system and v["condition"] == BASELINE
    }


def fever_table(run: RunData, systems: list[str]) -> Table:
    """FEVER's measures at baseline, a row per system, with its LLM cost per claim."""
    names = ("label_accuracy", "macro_f1", "fever_score", "evidence_precision", "evidence_recall", "evidence_f1")
    rows = []
    for s in systems:
        found = fever_values(run, s)
        rows.append(
            Row(cells=[s, *(format_metric_value(found[n]) if n in found else "–" for n in names), *cost(run.select(s))])
        )
    return Table(
        columns=[
            "System",
            "Label accuracy",
            "Macro-F1",
            "FEVER score",
            "Evidence P",
            "Evidence R",
            "Evidence F1",
            "LLM calls / claim",
            "from cache",
            "Tokens / claim",
        ],
        rows=rows,
        caption="FEVER's measures as the official scorer defines them (first 5 predicted sentences). "
        "A record's predicted evidence is the sentences behind its citations, padded with "
        "the other sentences it read (best-matching first), so differences between "
        "systems here reflect their labels and the order of their citations more than "
        "evidence retrieval; the fever metric's option predicted_evidence: cited (or both) scores the "
        "cited sentences alone.",
    )


EVIDENCE_TITLES = {
    "fever_score": "FEVER score",
    "evidence_precision": "Evidence P",
    "evidence_recall": "Evidence R",
    "evidence_f1": "Evidence F1",
}


def cited_table(run: RunData, systems: list[str]) -> Table | None:
    """FEVER's evidence measures on the cited sentences alone beside the padded ones, when the
    suite asked the ``fever`` metric for them (``predicted_evidence: cited`` or ``both``)."""
    found = {s: fever_values(run, s) for s in systems}
    if not any(f"{name}_cited" in values for values in found.values() for name in EVIDENCE_TITLES):
        return None
    columns = ["System"] + [
        f"{title} ({reading})" for title in EVIDENCE_TITLES.values() for reading in ("padded", "cited")
    ]
    keys = [key for name in EVIDENCE_TITLES for key in (name, f"{name}_cited")]
    rows = [
        Row(cells=[s, *(format_metric_value(found[s][k]) if k in found[s] else "–" for k in keys)]) for s in systems
    ]
    return Table(
        columns=columns,
        rows=rows,
        caption="FEVER's evidence measures on two readings of what a record submits (first 5 sentences): "
        "padded, its cited sentences and then the others it read (the table above); cited, the sentences it "
        "cited alone, as the official scorer scores a system's submitted evidence (a record citing nothing "
        "has precision 1 and recall 0 there).",
    )


def confusion_table(run: RunData, system: str) -> Table | None:
    """The system's confusion matrix at baseline; None without one."""
    matrix = next(
        (
            v["detail"]["matrix"]
            for v in run.metric_values("fever.confusion")
            if v["system"] == system and v["condition"] == BASELINE
        ),
        None,
    )
    if not matrix:
        return None
    return Table(
        columns=["gold \\ predicted", *LABELS],
        rows=[Row(cells=[g, *(str(matrix[g].get(p, 0)) for p in LABELS)]) for g in matrix],
        caption=f"Confusion matrix of {system} ((none) = abstained or failed).",
    )


def cost(records: list[RunRecord]) -> list[str]:
    traces = [r.trace for r in records if r.trace is not None]
    if not traces:
        return ["–", "–", "–"]
    return [
        f"{fmean(len(t.llm_calls) for t in traces):.1f}",
        f"{fmean(sum(c.cached for c in t.llm_calls) for t in traces):.1f}",
        f"{fmean(t.tokens for t in traces):.0f}",
    ]


def diversity_section(run: RunData) -> Section | None:
    """The sweep's prompt check (metric ``p003/prompt-diversity``), when the suite ran it."""
    values = run.metric_values(prefix="prompts.")
    if not values:
        return None
    check = next((v for v in values if v["metric"] == "prompts.check"), None)
    pairs = [
        Row(cells=[v["system"], format_metric_value(v, with_note=False)])
        for v in values
        if v["metric"] == "prompts.distinct_share"
    ]
    identical = next((v for v in values if v["metric"] == "prompts.identical_claims"), None)
    blocks: list[Any] = [Text(text=f"Check {check['note']}." if check else "Check not run.")]
    if identical is not None:
        blocks.append(
            Text(
                text=f"Claims for which every setting showed one identical set of facts: "
                f"{format_metric_value(identical)}."
            )
        )
    if pairs:
        blocks.append(
            Table(
                columns=["Settings", "Claims with different facts shown"],
                rows=pairs,
                caption="Per pair of settings: the share of the claims both answered whose sets of "
                "facts shown differ (the order they are shown in is ignored).",
            )
        )
    return Section(
        id="p003-prompts",
        title="Paper 003: do the sweep's settings change the facts shown?",
        order=43,
        intro="A setting that shows the facts another setting showed cannot change what the answer "
        "rests on; a sweep whose settings mostly coincide measures nothing.",
        blocks=blocks,
    )
