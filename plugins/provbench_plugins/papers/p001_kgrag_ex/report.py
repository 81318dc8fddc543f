"""Paper 001's report sections: accuracy by choice type, Table 3 (the run's knowledge base beside
the paper's), Table 4 (under each sub-path rule the run used), critical changes by position (the
paper's and the authors' normalisation), node label and centrality rank (with eq. (1)), the cost
comparison of Table 5 (medians and means, both cost definitions, over the same questions), and
the per-question explanations of Table 2 with every variant's perturbed path.

Degree and betweenness come from the ``graph_metrics.json`` the medical-kg builder wrote into the
knowledge base the run used (its directory is in the run manifest).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from provbench.kb.graphstore import BUILD_INFO
from provbench.model import RunRecord
from provbench.plugin_api import correctness, left_out_counts, left_out_text, not_measurable
from provbench.results.data import RunData
from provbench.report.sections import BarChart, Cell, Row, Section, Table, Text
from provbench_plugins.kb_builders.medical import graph_metrics

from . import analysis as A
from . import cost as C
from .explain import explain
from .paths import KINDS
from .ragex import RagExOptions

KIND_TITLES = {"node": "Node", "edge": "Edge", "subpath": "Sub-path"}
PAPER_TABLE4 = "Paper: MedMCQA 128 examples: node 41, edge 30, sub-path 57; MMLU 37: 6, 8, 23."
PAPER_TABLE5 = (
    "Paper (medians per explained question, the authors' definition; RAG-Ex with 5-word windows, "
    "stride 1): MMLU RAG-Ex 65 calls / 4,032 tokens vs KGRAG-Ex 20 / 2,112 (difference 45 / 1,920); "
    "MedMCQA 61 / 3,661 vs 19 / 2,180.5 (42 / 1,480.5)."
)
RULE_TITLES = {"paper": "paper (line dropped)", "authors": "authors (blanked in place)"}
MAX_EXPLAINED = 25


def sections(run: RunData) -> list[Section]:
    kg_systems = run.uses("systems", ["kgrag-ex"])
    if not kg_systems:
        return []
    kb_dir = (run.suite.get("knowledge_base") or {}).get("directory")
    found = [accuracy_section(run), table3_section(kb_dir)]
    metrics = graph_metrics.load(kb_dir)
    datasets = {qid: dataset_label(q.dataset, run.suite) for qid, q in run.questions.items()}
    for system in kg_systems:
        rules = A.subpath_rules(run.records, system)
        by_rule = {rule: A.group(run.records, system, rule, run.include_leaked) for rule in rules}
        every = {rule: A.perturbations(run.records, system, rule) for rule in rules}
        rule = rules[0]  # one explanation's sub-paths: the paper's rule when the run used both
        groups = by_rule[rule]
        found.append(table4_section(by_rule, system, datasets, every, run.include_leaked))
        found += left_out_noted(
            [
                path_lengths_section(groups, system),
                positions_section(groups, system, rule),
                labels_section(groups, system),
                centrality_section(groups, system, metrics),
                explanations_section(groups, system, metrics, rule),
            ],
            system,
            every[rule],
            run.include_leaked,
        )
        found.append(cost_section(run, system, rule, rules))
    return found


def left_out_noted(found: list[Section], system: str, units: list[RunRecord], include_leaked: bool) -> list[Section]:
    """The sections read from ``system``'s perturbation ``units`` under the one pairing rule
    (:mod:`provbench.results.rules`): the units it left out counted in a note beside each table,
    and a section with nothing measurable says so instead of showing zeros."""
    unmeasured = not_measurable(units, include_leaked)
    note = unmeasured or left_out_text(left_out_counts(units, include_leaked))
    for section in found if note else []:
        text = Text(text=f"{system}: {note} (of {len(units)} perturbation units).")
        section.blocks = [text] if unmeasured else [*section.blocks, text]
    return found


def rule_note(rule: str) -> str:
    return f"sub-path removals under the {RULE_TITLES[rule]} rule"


def accuracy_section(run: RunData) -> Section:
    """Baseline accuracy per system, all questions and by MedMCQA choice type."""
    types = sorted({q.type or "(none)" for q in run.questions.values()})
    rows = []
    for system in run.systems:
        by_type: dict[str, list[float]] = defaultdict(list)
        for r in run.select(system):
            value = correctness(r)
            if value is not None and r.key.question_id in run.questions:
                by_type[run.questions[r.key.question_id].type or "(none)"].append(value)
        every = [v for vs in by_type.values() for v in vs]
        rows.append(Row(cells=[system, _mean(every), *[_mean(by_type.get(t, [])) for t in types]]))
    table = Table(
        columns=["System", "All", *[f"choice type: {t}" for t in types]],
        rows=rows,
        caption="Share of questions answered with the correct option letter; n in brackets.",
    )
    return Section(id="p001-accuracy", title="Paper 001: accuracy by choice type", blocks=[table], order=110)


def table3_section(kb_dir: str | None) -> Section:
    """Table 3 of the run's knowledge base next to the paper's, from the medical-kg build info."""
    title = "Paper 001, Table 3: knowledge graph and corpus"
    info_file = Path(kb_dir) / BUILD_INFO if kb_dir else None
    info = json.loads(info_file.read_text(encoding="utf-8")) if info_file and info_file.is_file() else {}
    ours, paper = info.get("graph"), info.get("paper_001_graph")
    if not (isinstance(ours, dict) and isinstance(paper, dict)):
        return Section(
            id="p001-table3",
            title=title,
            order=110,
            blocks=[
                Text(
                    text="The run's knowledge base holds no Table 3 statistics (build it with the medical-kg builder)."
                )
            ],
        )
    rows = graph_metrics.table3_rows(ours, paper, paper.get("label_shares_percent", {}))
    table = Table(
        columns=["Statistic", "This KB", "Paper 001"],
        rows=[list(r) for r in rows],
        caption="Documents are distinct source files; chunks per document: mean, standard deviation "
        "(population), min and max. Degrees count every relation; label shares in %.",
    )
    return Section(id="p001-table3", title=title, blocks=[table], order=110)


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f} (n={len(values)})" if values else "–"


DATASET_TITLES = {"medmcqa": "MedMCQA", "mmlu": "MMLU"}


def dataset_label(dataset: str, suite: dict) -> str:
    """A Table 4 row's dataset as the data says: the form (MedMCQA, MMLU) and the source it came
    from, so the invented medical-mini set is never labelled plain "MedMCQA"."""
    source = str((suite.get("dataset") or {}).get("path") or "")
    tail = "/".join(Path(source).parts[-2:]) if source else "source not recorded"
    return f"{DATASET_TITLES.get(dataset, dataset)} form: {tail}"


def table4_section(
    by_rule: dict[str, dict[str, A.QuestionPerturbations]],
    system: str,
    datasets: dict[str, str],
    every: dict[str, list[RunRecord]] | None = None,
    include_leaked: bool = False,
) -> Section:
    """Table 4 as the paper lays it out, a row per dataset (``datasets``: question id -> dataset),
    under each sub-path rule the run used (``by_rule``: rule -> groups of the units counted;
    ``every``: rule -> all its perturbation units, whose left-out ones each row notes)."""
    rows, variants = [], []
    for rule, groups in by_rule.items():
        rows += _table4_rows(rule, groups, datasets, (every or {}).get(rule, []), include_leaked)
        variants += [
            [
                KIND_TITLES[k] + (f", {RULE_TITLES[rule]}" if k == "subpath" else ""),
                sum(g.variants(k) for g in groups.values()),
                sum(g.changes(k) for g in groups.values()),
            ]
            for k in KINDS
            if k == "subpath" or rule == next(iter(by_rule))  # node and edge rows once: no rule changes them
        ]
    order = " > ".join(KIND_TITLES[k].lower() for k in A.TIE_BREAK)
    table = Table(
        columns=[
            "Dataset",
            "Sub-path rule",
            "Examples",
            "Node impact",
            "Edge impact",
            "Sub-path impact",
            "Of which tied",
        ],
        rows=rows,
        caption=f"{system}: per question whose answer some removal changed, the perturbation type with the "
        "highest share of answer-changing variants (the authors' rule); a tie goes to the first "
        f"type in the order {order} (the authors' order), so node + edge + sub-path = examples; "
        "the last column counts the ties so settled. Sub-path rule: the paper's Table 2 drops the "
        "triplet's line; the authors' code blanks node k, edge k and node k+1 in place. Units the "
        "pairing rule leaves out (leaked, no-effect, no-op, not checkable) are not counted; a row's "
        "note counts them. " + PAPER_TABLE4,
    )
    counts = Table(columns=["Type", "Variants run", "Answer changed"], rows=variants)
    return Section(
        id=f"p001-table4-{_slug(system)}",
        title="Paper 001, Table 4: impact of perturbation methods",
        blocks=[table, counts],
        order=111,
    )


def _table4_rows(
    rule: str,
    groups: dict[str, A.QuestionPerturbations],
    datasets: dict[str, str],
    every: list[RunRecord],
    include_leaked: bool,
) -> list[list[Any]]:
    """One sub-path rule's rows of Table 4, a row per dataset; each notes the units left out of it."""
    by_dataset: dict[str, dict[str, A.QuestionPerturbations]] = defaultdict(dict)
    units: dict[str, list[RunRecord]] = defaultdict(list)
    for qid, g in groups.items():
        by_dataset[datasets.get(qid) or "(none)"][qid] = g
    for r in every:
        units[datasets.get(r.key.question_id) or "(none)"].append(r)
    rows = []
    for name in sorted({*by_dataset, *units}):
        unmeasured = not_measurable(units[name], include_leaked)
        note = unmeasured or left_out_text(left_out_counts(units[name], include_leaked))
        t = A.table4(by_dataset.get(name, {}))
        numbers = [t[k] for k in ("examples", "node", "edge", "subpath", "tied")]
        cells = [Cell(text="not measurable" if unmeasured else str(n), note=note) if note else n for n in numbers]
        rows.append([name, RULE_TITLES[rule], *cells])
    return rows


def positions_section(groups: dict[str, A.QuestionPerturbations], system: str, rule: str = "paper") -> Section:
    histograms = {KIND_TITLES[k]: A.position_histogram(groups, k) for k in KINDS}
    rows = [[title, *counts] for title, counts in histograms.items()]
    table = Table(
        columns=["Perturbation", *A.bin_labels()],
        rows=rows,
        caption="Critical changes (answer changed) by relative position of the removed element on its "
        "path: 0 = start, 1 = end (element k of m at k/(m-1), as the paper's text); "
        f"{rule_note(rule)}. Paper: early positions matter most.",
    )
    authors = Table(
        columns=["Perturbation", *A.bin_labels(A.AUTHORS_BINS)],
        rows=[[KIND_TITLES[k], *A.position_histogram(groups, k, "authors")] for k in KINDS],
        caption="The same changes as the authors' code places them (k/m, so the last element sits "
        "below 1) in the 20 bins of the paper's Fig. 3.",
    )
    chart = BarChart(
        title="Critical changes by position on the path (Fig. 3)",
        ylabel="critical changes",
        categories=A.bin_labels(),
        series={t: [float(c) for c in h] for t, h in histograms.items()},
        scale="count",
        caption="The first table as a histogram: 0 = the path's start, 1 = its end.",
    )
    return Section(
        id=f"p001-positions-{_slug(system)}",
        title="Paper 001: critical changes by position on the path",
        blocks=[table, chart, authors],
        order=112,
    )


def labels_section(groups: dict[str, A.QuestionPerturbations], system: str) -> Section:
    rows = [
        [label, critical, total, f"{critical / total:.2f}" if total else "–"]
        for label, (critical, total) in A.label_counts(groups).items()
    ]
    table = Table(
        columns=["Node label", "Critical removals", "Node removals", "Share critical"],
        rows=rows,
        caption="Node removals that changed the answer, by the node's label. Paper: Disease, Symptom "
        "and Body Part matter most.",
    )
    return Section(
        id=f"p001-labels-{_slug(system)}", title="Paper 001: critical changes by node label", blocks=[table], order=113
    )


def centrality_section(groups: dict[str, A.QuestionPerturbations], system: str, metrics: dict | None) -> Section:
    title = "Paper 001: degree, edge betweenness and sub-path score (eq. 1) of critical elements"
    sid = f"p001-centrality-{_slug(system)}"
    if metrics is None:
        return Section(
            id=sid,
            title=title,
            order=114,
            blocks=[
                Text(text="The run's knowledge base has no graph_metrics.json (build it with the medical-kg builder).")
            ],
        )
    names = {"degree": "Node degree rank", "betweenness": "Edge betweenness rank", "eq1": "Sub-path score rank (eq. 1)"}
    rows = [[names[m], *A.rank_histogram(groups, metrics, m)] for m in names]
    table = Table(
        columns=["Measure", *A.bin_labels()],
        rows=rows,
        caption="Relative rank within the path of elements whose removal changed the answer (0 = highest "
        "value, 1 = lowest; ties as the authors' notebook settles them: sub-paths share their "
        "average rank, nodes and edges keep path order, the earlier first). A path with fewer "
        "than two ranked elements is left out. Eq. (1): betweenness(edge) / (degree(node1) + "
        "degree(node2)). Paper: both extremes matter most.",
    )
    authors = [[names[m], *(A.authors_rank_histogram(groups, metrics, m) or ["–"] * A.AUTHORS_BINS)] for m in names]
    authors_table = Table(
        columns=["Measure", *A.bin_labels(A.AUTHORS_BINS)],
        rows=authors,
        caption="The same as the authors' notebook ranks them, in their 20 bins: per question over "
        "all its paths; each node once, by its degree in the directed simple graph "
        "(nx.DiGraph: distinct neighbours per direction; '–' when the KB predates it); "
        "each node pair's edge once; every sub-path variant; nodes and edges skip a question "
        "with one element, a lone sub-path ranks 0.",
    )
    note = f"Betweenness: {'sampled from ' + str(metrics['betweenness_samples']) + ' nodes' if metrics.get('betweenness_samples') else 'exact'}."
    return Section(id=sid, title=title, blocks=[table, authors_table, Text(text=note)], order=114)


def path_lengths_section(groups: dict[str, A.QuestionPerturbations], system: str) -> Section:
    """How long the kept paths are: one-edge paths put every element at position 0 or 1, so the
    position and rank sections say little about them."""
    lengths = A.path_lengths(groups)
    table = Table(
        columns=["Edges on the path", "Paths"],
        rows=[[n, count] for n, count in lengths.items()],
        caption=f"{system}: the baseline paths of the perturbed questions by their number of edges. On a "
        "one-edge path every element sits at position 0 or 1 and ranks are ties or absent. "
        "The authors' MMLU paths have 2 to 12 edges.",
    )
    return Section(
        id=f"p001-path-lengths-{_slug(system)}", title="Paper 001: lengths of the kept paths", blocks=[table], order=112
    )


def ragex_conditions(run: RunData) -> list[tuple[str, RagExOptions]]:
    """The suite's ragex-window conditions (record key) with the options they ran with."""
    from provbench.suite import PluginRef

    refs = {ref.key: ref for ref in (PluginRef.model_validate(r) for r in run.suite.get("interventions", []))}
    return [(key, RagExOptions(**refs[key].options)) for key in run.uses("interventions", ["ragex-window"])]


def context_words(run: RunData, systems: set[str]) -> dict[str, int]:
    """Question id -> the words of a baseline's context (the authors' "tokens" per call)."""
    return {
        r.key.question_id: int(r.trace.artifacts.get("context_words", 0))
        for r in run.records
        if r.key.system in systems and r.key.condition == "baseline" and r.trace
    }


COST_COLUMNS = ["Method", "Questions", "Calls: median", "Calls: mean", "Tokens: median", "Tokens: mean"]


def cost_table(definition: str, ragex_label: str, costs: dict[str, Any]) -> Table:
    rows = []
    for method in ("RAG-Ex", "KGRAG-Ex"):
        calls, tokens = (costs.get(f"{definition} {m}", {}).get(method) for m in C.MEASURES)
        label = ragex_label if method == "RAG-Ex" else method
        rows.append(
            [
                label,
                costs["questions"],
                *[_num(getattr(v, a, None)) for v in (calls, tokens) for a in ("median", "mean")],
            ]
        )
    diff = [costs.get(f"{definition} {m}", {}).get("Difference") for m in C.MEASURES]
    rows.append(["Difference (RAG-Ex - KGRAG-Ex, medians)", costs["questions"], _num(diff[0]), "", _num(diff[1]), ""])
    what = (
        "every LLM call of the perturbation runs (cache hits included: they are the method's cost) and the "
        "model's prompt + completion tokens"
        if definition == "provbench"
        else "1 call per perturbation, and perturbations x the words of the baseline's context as tokens (RAG-Ex: "
        "the chunk shown; KGRAG-Ex: the pseudo-paragraphs and the chunks retrieved with them, all the model "
        "reads), as the authors' notebooks count"
    )
    return Table(columns=COST_COLUMNS, rows=rows, caption=f"{definition} definition: {what}.")


def cost_section(run: RunData, system: str, rule: str = "paper", rules: list[str] | None = None) -> Section:
    """Table 5 over the questions both methods explained; a KGRAG-Ex explanation is its node, edge
    and sub-path removals (the authors' count), its sub-paths under ``rule`` (one of ``rules``, the
    rules the run used)."""
    kg = [
        r
        for r in run.records
        if r.key.system == system
        and A.variant_kind(r) in KINDS
        and (A.variant_kind(r) != "subpath" or A.subpath_rule(r) == rule)
    ]
    kg_costs = C.per_question(kg, context_words(run, {system}))
    blocks, notes = [], []
    for condition, opts in ragex_conditions(run) or [("ragex-window", RagExOptions())]:
        ragex = [r for r in run.records if r.key.condition == condition and A.variant_kind(r) == "window"]
        costs = C.table5(C.per_question(ragex, context_words(run, {r.key.system for r in ragex})), kg_costs)
        labels = ", over the 'Chunk 0' labels too" if opts.words == "context" else ""
        label = f"RAG-Ex ({_systems(ragex)}, {opts.window}-word windows, stride {opts.stride}{labels})"
        blocks += [cost_table(d, label, costs) for d in C.DEFINITIONS]
        if opts.stride > 1:
            notes.append(
                f"{condition} slides its window by {opts.stride} words (the authors: 1), so it runs about "
                f"{opts.stride}x fewer perturbations and its figures are not comparable to the paper's."
            )
    others = [r for r in rules or [rule] if r != rule]
    left_out = (
        (
            f" (the run's {', '.join(RULE_TITLES[r] for r in others)} sub-paths are left out: one explanation "
            "removes each sub-path once)"
        )
        if others
        else ""
    )
    notes.append(
        f"Over the questions both methods explained; KGRAG-Ex counts node, edge and {rule_note(rule)}"
        f"{left_out}. " + PAPER_TABLE5
    )
    return Section(
        id=f"p001-cost-{_slug(system)}",
        title="Paper 001, Table 5: cost of an explanation",
        blocks=[*blocks, Text(text=" ".join(notes))],
        order=115,
    )


def explanations_section(
    groups: dict[str, A.QuestionPerturbations], system: str, metrics: dict | None, rule: str = "paper"
) -> Section:
    shown = list(sorted(groups.items()))[:MAX_EXPLAINED]
    rows = [_explanation_row(qid, g, (metrics or {}).get("relation_sources")) for qid, g in shown]
    detail = [row for qid, g in shown for row in _variant_rows(qid, g)]
    table = Table(
        columns=[
            "Question",
            "Answer",
            "Changed by (new answer)",
            "Most influential",
            "Explanation (user)",
            "System insight (technical)",
            "Relations (answer-changing removals)",
            "Article sources",
        ],
        rows=rows,
        numeric_from=99,
        caption=f"As paper 001's Table 2; first {MAX_EXPLAINED} questions with KG perturbations. An entity "
        "counts every answer-changing removal of itself, of an edge it ends or of a sub-path it "
        f"belongs to (Table 2's PPHN 2 times); {rule_note(rule)}.",
    )
    variants = Table(
        columns=["Question", "Type", "Removed", "Path after the removal", "Answer", "Changed"],
        rows=detail,
        numeric_from=99,
        caption="Every variant of those questions, changed or not, with the path as the model then read it "
        f"({rule_note(rule)}).",
    )
    return Section(
        id=f"p001-explanations-{_slug(system)}",
        title="Paper 001, Table 2: explanations per question",
        blocks=[table, variants],
        order=116,
    )


def _explanation_row(qid: str, g: A.QuestionPerturbations, relation_sources: Any) -> list[str]:
    """A question's explanation: what changed its answer, the most influential element, the texts."""
    e = explain(g, relation_sources)
    changes = "; ".join(f"{KIND_TITLES[k]}: {el} -> {ans or '–'}" for k, el, ans in e.changed_elements) or "none"
    relations = ", ".join(f"{e.names[r]} {n}" for r, n in e.relation_influence.items()) or "–"
    return [
        qid,
        g.baseline_answer or "–",
        changes,
        e.most_influential or "–",
        e.for_user,
        e.technical or "–",
        relations,
        ", ".join(e.sources) or "–",
    ]


def _variant_rows(qid: str, g: A.QuestionPerturbations) -> list[list[str]]:
    """Every perturbation variant of a question: what it removed, the path left, the answer."""
    rows = []
    for kind in KINDS:
        for r in g.records.get(kind, []):
            data = r.variant.data
            rows.append(
                [
                    qid,
                    KIND_TITLES[kind],
                    data.get("element", ""),
                    " | ".join(data.get("path_after", [])),
                    (r.trace.answer if r.trace else None) or "–",
                    "yes" if A.changed(r) else "no",
                ]
            )
    return rows


def _systems(records: list[RunRecord]) -> str:
    return ", ".join(sorted({r.key.system for r in records})) or "not run"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)
