"""Build the report's context from a run directory and render it with jinja2 (autoescape on).

Output: ``report.html`` (one self-contained file: inline CSS and SVG, no script, no network),
``pages/<question>.html`` (one page per question: every system's trace step by step and the
visited subgraph), and ``records.csv``. Every string from a dataset or a model reaches HTML
only through autoescaped template expressions or matplotlib's own SVG escaping.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..model import BASELINE, Question, RunManifest, RunRecord
from ..store import RunStore, export_csv
from . import charts
from .stats import (MCNEMAR_NOTE, Share, arrow, mcnemar, mean_footprint, per_question, select, share)

log = logging.getLogger(__name__)

# Paper 000 groups its ablations into studies (Table 2's row groups).
STUDIES = (
    ("Cited entities ablation", ("cited-removal", "random-removal")),
    ("Isolation", ("full-isolation", "text-only-isolation")),
    ("Visited-but-uncited entities ablation", ("entity-removal", "entity-text-mask")),
)
CONDITION_TITLES = {
    "cited-removal": "Cited ablation", "random-removal": "Random ablation", "full-isolation": "Full isolation",
    "text-only-isolation": "Text-only isolation", "entity-removal": "Entity removal",
    "entity-text-mask": "Entity text mask",
}
MAX_RESULT_CHARS = 1500


# -- loading a run ----------------------------------------------------------------------------------

@dataclass
class RunData:
    run_dir: Path
    manifest: RunManifest
    questions: dict[str, Question]
    records: list[RunRecord]
    metrics: dict[str, Any]

    @property
    def suite(self) -> dict[str, Any]:
        return self.manifest.suite

    @property
    def systems(self) -> list[str]:
        declared = [_ref_key(s) for s in self.suite.get("systems", [])]
        seen = list(dict.fromkeys(r.key.system for r in self.records))
        return [s for s in declared if s in seen] + [s for s in seen if s not in declared]

    @property
    def conditions(self) -> list[str]:
        declared = [_ref_key(i) for i in self.suite.get("interventions", [])]
        seen = [c for c in dict.fromkeys(r.key.condition for r in self.records) if c != BASELINE]
        return [c for c in declared if c in seen] + [c for c in seen if c not in declared]

    @property
    def excluded(self) -> set[str]:
        return set(self.metrics.get("excluded", []))

    @property
    def analysed(self) -> list[str]:
        return [q for q in self.question_ids if q not in self.excluded]

    @property
    def question_ids(self) -> list[str]:
        return list(self.questions) or list(dict.fromkeys(r.key.question_id for r in self.records))

    def report_option(self, name: str, default: Any) -> Any:
        return (self.suite.get("report") or {}).get(name, default)


def _ref_key(ref: Any) -> str:
    if isinstance(ref, str):
        return ref
    return ref.get("label") or ref["name"]


def load_run(run_dir: str | Path) -> RunData:
    run_dir = Path(run_dir)
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    if manifest is None:
        raise UserError(f"{run_dir}: not a run directory (no manifest.json)")
    questions = {q.id: q for q in store.read_questions()}
    records = sorted(store.load_records().values(),
                     key=lambda r: (r.key.system, r.key.condition, r.key.question_id, r.key.repeat))
    return RunData(run_dir, manifest, questions, records, store.read_metrics())


# -- tables -----------------------------------------------------------------------------------------

@dataclass
class Cell:
    text: str = "–"
    counts: str = ""
    arrow: str = ""
    note: str = ""
    interval: str = ""


def _share_cell(s: Share, note: str = "", arrow_text: str = "") -> Cell:
    return Cell(s.percent(), s.counts(), arrow_text, note, s.interval())


def _stats_options(run: RunData) -> dict[str, Any]:
    return {"resamples": int(run.report_option("bootstrap_resamples", 2000)),
            "confidence": float(run.report_option("confidence", 0.95)), "seed": int(run.report_option("seed", 0))}


def table1(run: RunData) -> list[dict[str, Any]]:
    """Accuracy (all questions, bootstrap CI) and mean footprint per system at baseline."""
    rows = []
    for system in run.systems:
        records = select(run.records, system)
        acc = share(per_question(records), run.question_ids, **_stats_options(run))
        fp = mean_footprint(records)
        rows.append({"system": system, "accuracy": _share_cell(acc), "failed": sum(r.status == "failed" for r in records),
                     "footprint": {k: ("–" if v is None else f"{v:.1f}") for k, v in fp.items()},
                     "share": acc})
    return rows


def intervention_systems(run: RunData) -> list[str]:
    """Systems with intervention records, in the suite's ``intervention_systems`` order (Table 2's columns)."""
    declared = run.suite.get("intervention_systems") or []
    ordered = [s for s in declared if s in run.systems] + [s for s in run.systems if s not in declared]
    return [s for s in ordered if any(r.key.system == s and r.key.condition != BASELINE for r in run.records)]


def table2(run: RunData) -> dict[str, Any]:
    """Paper 000's Table 2: conditions as row groups, systems as columns, over the analysed questions."""
    systems, analysed, opts = intervention_systems(run), run.analysed, _stats_options(run)
    baseline = {s: per_question(select(run.records, s)) for s in systems}
    groups = [{"title": "Baseline experiment", "rows": [{
        "condition": "Baseline", "outcome": "Acc.",
        "cells": [_share_cell(share(baseline[s], analysed, **opts)) for s in systems]}]}]
    for title, conditions in _study_groups(run.conditions):
        rows = []
        for condition in conditions:
            rows += _condition_rows(run, condition, systems, baseline, analysed, opts)
        groups.append({"title": title, "rows": rows})
    return {"systems": systems, "groups": groups, "analysed": len(analysed), "excluded": sorted(run.excluded)}


def _study_groups(conditions: list[str]) -> list[tuple[str, list[str]]]:
    groups, placed = [], set()
    for title, members in STUDIES:
        present = [c for c in members if c in conditions]
        if present:
            groups.append((title, present))
            placed.update(present)
    others = [c for c in conditions if c not in placed]
    if others:
        groups.append(("Other interventions", others))
    return groups


def _condition_rows(run: RunData, condition: str, systems: list[str], baseline: dict[str, dict[str, float]],
                    analysed: list[str], opts: dict[str, Any]) -> list[dict[str, Any]]:
    changed_cells, acc_cells = [], []
    for system in systems:
        records = select(run.records, system, condition)
        if not records:
            changed_cells.append(Cell())
            acc_cells.append(Cell())
            continue
        after = per_question(records)
        changed = share(per_question(records, "output_changed"), analysed, **opts)
        originally = [q for q in analysed if baseline[system].get(q, 0) >= 1.0 and q in after]
        kept = Share(sum(after[q] for q in originally), len(originally))
        changed_cells.append(Cell(changed.percent(), kept.counts(), "",
                                  f"changed {changed.counts()}; stayed correct {kept.counts() or '(none originally correct)'}", changed.interval()))
        acc = share(after, analysed, **opts)
        before = share(baseline[system], analysed, **opts)
        test = mcnemar(baseline[system], after, analysed)
        acc_cells.append(_share_cell(acc, test.describe(), arrow(before.value, acc.value)))
    title = CONDITION_TITLES.get(condition, condition)
    return [{"condition": title, "outcome": "Output changed", "cells": changed_cells},
            {"condition": "", "outcome": "Acc.", "cells": acc_cells}]


def metric_tables(run: RunData) -> dict[str, Any]:
    """RAGAS faithfulness next to the provenance scores, and every metric value."""
    values = run.metrics.get("values", [])
    systems = run.systems
    wanted = [v for v in values if v["metric"].startswith(("ragas-faithfulness.", "provenance."))]
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for v in wanted:
        rows.setdefault((v["metric"], v["condition"]), {})[v["system"]] = {
            "text": _format_value(v, with_note=False), "note": v.get("note", "")}
    ordered = sorted(rows, key=lambda k: (not k[0].startswith("ragas"), k[0], k[1]))
    blank = {"text": "–", "note": "no value for this system"}
    faithfulness = [{"metric": m, "condition": c, "cells": [rows[(m, c)].get(s, blank) for s in systems]}
                    for m, c in ordered]
    shown = [row for row in faithfulness if any(cell["text"] != "–" for cell in row["cells"])]
    everything = [{**v, "shown": _format_value(v)} for v in values]
    return {"faithfulness": shown, "hidden": len(faithfulness) - len(shown), "all": everything, "errors": run.metrics.get("errors", {})}


def _format_value(v: dict[str, Any], with_note: bool = True) -> str:
    value = v.get("value")
    if value is None:
        return "–" + (f" ({v['note']})" if with_note and v.get("note") else "")
    text = f"{value:.3f}"
    if v.get("denominator"):
        num = v.get("numerator")
        num_text = f"{num:g}" if isinstance(num, (int, float)) else str(num)
        den = v["denominator"]
        text += f" ({num_text}/{den:g})" if isinstance(den, (int, float)) else f" ({num_text}/{den})"
    return text


# -- charts -----------------------------------------------------------------------------------------

def chart_svgs(run: RunData, t1: list[dict[str, Any]], t2: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    if t1:
        out.append({"title": "Baseline accuracy per system (error bars: bootstrap CI)", "svg": charts.accuracy_chart(
            [r["system"] for r in t1], [r["share"].value for r in t1],
            [(r["share"].low, r["share"].high) for r in t1], "Baseline accuracy (all questions)")})
    conditions, systems = run.conditions, t2["systems"]
    if conditions and systems:
        changed = {s: [per_question_share(run, s, c, "output_changed") for c in conditions] for s in systems}
        out.append({"title": "Output changed per intervention", "svg": charts.grouped_chart(
            [CONDITION_TITLES.get(c, c) for c in conditions], changed, "output changed (%)",
            "Answers changed by each intervention (analysed questions)")})
        accuracy = {s: [per_question_share(run, s, c, "accuracy") for c in [BASELINE] + conditions] for s in systems}
        out.append({"title": "Accuracy per condition", "svg": charts.grouped_chart(
            ["Baseline"] + [CONDITION_TITLES.get(c, c) for c in conditions], accuracy, "accuracy (%)",
            "Accuracy under each condition (analysed questions)")})
    return out


def per_question_share(run: RunData, system: str, condition: str, score: str) -> float | None:
    return share(per_question(select(run.records, system, condition), score), run.analysed, resamples=100).value


# -- per-question pages -----------------------------------------------------------------------------

def page_name(question_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", question_id).strip("-")[:40] or "q"
    return f"{slug}-{hashlib.sha1(question_id.encode()).hexdigest()[:8]}.html"


def anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def question_rows(run: RunData) -> list[dict[str, Any]]:
    rows = []
    for qid in run.question_ids:
        q = run.questions.get(qid)
        marks = []
        for system in run.systems:
            base = [r for r in select(run.records, system) if r.key.question_id == qid]
            value = per_question(base).get(qid)
            marks.append({"system": system, "anchor": anchor(system),
                          "mark": "–" if value is None else ("✓" if value >= 1 else "✗"),
                          "failed": any(r.status == "failed" for r in base)})
        rows.append({"id": qid, "question": q.question if q else "", "gold": q.answer if q else "",
                     "page": page_name(qid), "excluded": qid in run.excluded, "marks": marks})
    return rows


def _step_view(step: Any) -> dict[str, Any]:
    return {"index": step.index, "kind": step.kind, "tool": step.tool or "", "thought": step.thought or "",
            "arguments": _json(step.arguments) if step.arguments else "", "result": _json(step.result, MAX_RESULT_CHARS)
            if step.result is not None else "", "error": step.error or ""}


def _json(value: Any, limit: int | None = None) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return text if limit is None or len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def record_view(record: RunRecord, view: Any = None, picture: bool = False) -> dict[str, Any]:
    trace = record.trace
    out: dict[str, Any] = {"key": record.key, "status": record.status, "error": record.error or "",
                           "scores": {k: ("–" if v is None else f"{v:.3g}") for k, v in record.scores.items()},
                           "notes": record.score_notes, "trace": None, "svg": None}
    if trace is None:
        return out
    out["trace"] = {"answer": trace.answer if trace.answer is not None else "", "outcome": trace.outcome,
                    "confidence": trace.confidence, "error": trace.error or "",
                    "citations": trace.citations.model_dump(), "visited": trace.visited_entities,
                    "read_text_units": trace.read_text_units, "footprint": trace.footprint(),
                    "llm_calls": len(trace.llm_calls), "tokens": trace.tokens,
                    "hidden": trace.artifacts.get("hidden_by_intervention") or {},
                    "steps": [_step_view(s) for s in trace.steps]}
    if picture and view is not None and (trace.visited_entities or trace.citations.entities):
        try:
            out["svg"] = charts.subgraph_picture(view, trace.visited_entities, trace.citations.entities)
        except Exception as exc:  # noqa: BLE001 - a picture must not sink the report
            log.warning("subgraph picture failed for %s: %s", record.key.as_str(), exc)
    return out


def question_page(run: RunData, qid: str, view: Any) -> dict[str, Any]:
    q = run.questions.get(qid)
    pictures = bool(run.report_option("subgraph_pictures", True))
    sections = []
    for system in run.systems:
        records = [r for r in run.records if r.key.system == system and r.key.question_id == qid]
        base = [r for r in records if r.key.condition == BASELINE]
        others = [r for r in records if r.key.condition != BASELINE]
        if not records:
            continue
        sections.append({"system": system, "anchor": anchor(system),
                         "baseline": [record_view(r, view, pictures) for r in base],
                         "interventions": [record_view(r) for r in sorted(
                             others, key=lambda r: (run.conditions.index(r.key.condition)
                                                    if r.key.condition in run.conditions else 99, r.key.repeat))]})
    return {"question": q, "qid": qid, "excluded": qid in run.excluded, "sections": sections}


# -- the knowledge base for pictures ----------------------------------------------------------------

class _KBHandle:
    """Open the run's KB read-only for subgraph pictures; None (with a reason) when unavailable."""

    def __init__(self, run: RunData):
        self.kb, self.reason = None, ""
        directory = (run.suite.get("knowledge_base") or {}).get("directory")
        if not directory:
            self.reason = "the suite has no knowledge base"
            return
        try:
            from ..kb import KnowledgeBase

            if not KnowledgeBase.is_complete(directory):
                self.reason = f"knowledge base {directory} not found"
                return
            self.kb = KnowledgeBase.open(directory, read_only=True)
        except Exception as exc:  # noqa: BLE001
            self.reason = f"knowledge base could not be opened: {exc}"

    @property
    def view(self) -> Any:
        return self.kb.view() if self.kb is not None else None

    def close(self) -> None:
        if self.kb is not None:
            self.kb.close()


# -- rendering --------------------------------------------------------------------------------------

def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("provbench.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda v: "–" if v is None else f"{100 * v:.1f}%"
    return env


def header(run: RunData) -> dict[str, Any]:
    m = run.manifest
    statuses = [r.status for r in run.records]
    return {"title": run.report_option("title", None) or f"provbench report: {m.suite_name}",
            "suite_name": m.suite_name, "description": run.suite.get("description", ""), "run_id": m.run_id,
            "models": m.models, "versions": m.versions, "git_revision": m.git_revision or "none (not a git checkout or no commit yet)",
            "created_at": m.created_at, "finished_at": m.finished_at or "unfinished", "seeds": m.seeds,
            "suite_path": m.suite_path or "", "dataset": run.suite.get("dataset", {}),
            "knowledge_base": run.suite.get("knowledge_base") or {}, "questions": len(run.question_ids),
            "records": len(statuses), "failed": statuses.count("failed"),
            "exclusion": run.metrics.get("exclusion") or run.suite.get("exclusion", {})}


def write_report(run_dir: str | Path) -> Path:
    """Render ``report.html`` (+ pages/ and records.csv) for a run directory; returns the report path."""
    run = load_run(run_dir)
    env = environment()
    env.globals["ci_label"] = f"{100 * float(run.report_option('confidence', 0.95)):g}% CI"
    t1, t2 = table1(run), table2(run)
    context = {"h": header(run), "table1": t1, "table2": t2, "metrics": metric_tables(run),
               "charts": chart_svgs(run, t1, t2), "questions": question_rows(run), "mcnemar_note": MCNEMAR_NOTE,
               "failures": [r for r in run.records if r.status == "failed"],
               "per_question": bool(run.report_option("per_question_pages", True)), "csv": "records.csv"}
    export_csv(run.run_dir)
    context["question_pages"], context["kb_note"] = _write_pages(run, env) if context["per_question"] else ([], "")
    target = run.run_dir / "report.html"
    target.write_text(env.get_template("report.html.j2").render(**context), encoding="utf-8")
    return target


def _write_pages(run: RunData, env: Any) -> tuple[list[dict[str, Any]], str]:
    """Write pages/<question>.html and return the pages, which report.html also embeds (so the
    report stays one self-contained file), with the note on why pictures may be missing."""
    pages = run.run_dir / "pages"
    pages.mkdir(exist_ok=True)
    template = env.get_template("question.html.j2")
    kb = _KBHandle(run)
    embedded = []
    try:
        view = kb.view
        for qid in run.question_ids:
            page, name = question_page(run, qid, view), page_name(qid)
            (pages / name).write_text(template.render(h=header(run), p=page, kb_note=kb.reason, prefix="",
                                                      back="../report.html#questions"), encoding="utf-8")
            embedded.append({"key": name.removesuffix(".html"), "page": page})
        return embedded, kb.reason
    finally:
        kb.close()


# -- comparison -------------------------------------------------------------------------------------

def write_comparison(run_a: str | Path, run_b: str | Path, out: str | Path | None = None) -> Path:
    """Two runs side by side: accuracy with CIs, paired tests on shared questions, interventions."""
    a, b = load_run(run_a), load_run(run_b)
    systems = list(dict.fromkeys(a.systems + b.systems))
    rows = []
    for system in systems:
        pa, pb = per_question(select(a.records, system)), per_question(select(b.records, system))
        sa, sb = share(pa, **_stats_options(a)), share(pb, **_stats_options(b))
        shared = [q for q in pa if q in pb]
        rows.append({"system": system, "a": _share_cell(sa), "b": _share_cell(sb),
                     "delta": "–" if sa.value is None or sb.value is None else f"{100 * (sb.value - sa.value):+.1f} pts",
                     "test": mcnemar(pa, pb, shared).describe() if shared else "no shared questions"})
    conditions = list(dict.fromkeys(a.conditions + b.conditions))
    cond_rows = []
    for condition in conditions:
        for system in systems:
            ra, rb = select(a.records, system, condition), select(b.records, system, condition)
            if not (ra or rb):
                continue
            cond_rows.append({"condition": CONDITION_TITLES.get(condition, condition), "system": system,
                              "changed_a": _share_cell(share(per_question(ra, "output_changed"), a.analysed)),
                              "changed_b": _share_cell(share(per_question(rb, "output_changed"), b.analysed)),
                              "acc_a": _share_cell(share(per_question(ra), a.analysed)),
                              "acc_b": _share_cell(share(per_question(rb), b.analysed))})
    target = Path(out) if out else a.run_dir.parent / f"compare-{a.run_dir.name}-vs-{b.run_dir.name}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    env = environment()
    env.globals["ci_label"] = "95% CI"
    html = env.get_template("compare.html.j2").render(
        h=header(a), a=header(a), b=header(b), a_dir=str(a.run_dir), b_dir=str(b.run_dir), rows=rows, cond_rows=cond_rows,
        mcnemar_note=MCNEMAR_NOTE)
    target.write_text(html, encoding="utf-8")
    return target
