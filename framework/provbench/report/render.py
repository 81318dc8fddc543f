"""Build the report's context from a run directory and render it with jinja2 (autoescape on)
(:mod:`provbench.report.compare` renders comparisons of runs).

Output: ``report.html`` (one self-contained file: inline CSS and SVG, no network; one inline script,
admitted by its hash, filters the Questions table: :mod:`provbench.report.explore`),
``pages/<question>.html`` (one page per question: every system's trace step by step and the
visited subgraph), and ``records.csv``. Every string from a dataset or a model reaches HTML
only through autoescaped template expressions (the subgraph pictures' too) or matplotlib's own SVG
escaping (the charts).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from ..costs import CostTotal, record_calls
from ..kb.sources import SOURCES_FILE, source_link, text_unit_sources
from ..model import BASELINE, RunRecord
from ..secrets import redact
from ..run_store import export_csv
from . import charts
from .pictures import record_picture
from ..results.data import RunData, load_run
from .explore import EXPLORE_SCRIPT, filter_choices, knowledge_base_blocks, record_row, script_hash
from .gold_view import gold_view
from .leaks import leak_section, leak_summary, leak_view
from .sections import BarChart, Cell, LineChart, Row, Section, Table, Text
from .title import report_title
from .paired import paired_scores_section
from ..results.significance import repeat_spread
from ..results.stats import Share, per_question, share
from .validity_section import validity_section
from ..results.validity import baseline_mark

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 1500
MAX_READ_CHARS = 4000  # per message on a question page (the record keeps it whole)


# -- what every run has: the systems overview and the knowledge base -----------------------------------


def share_cell(s: Share, note: str = "") -> Cell:
    return Cell(text=s.percent(), counts=s.counts(), note=note, interval=s.interval())


def overview_section(run: RunData) -> Section:
    """Per system at baseline: accuracy (the accuracy metric's value when the run has it), outcomes,
    and what the answers cost (LLM calls, tokens, dollars, the systems' own wall time) and what
    judging them cost."""
    table = Table(
        columns=[
            "System",
            "Accuracy",
            "Answered",
            "Abstained",
            "Failed",
            "LLM calls",
            "Tokens",
            "Cost",
            "Wall time (s)",
            "Judge cost",
            "Leak guard",
        ],
        rows=[_overview_row(run, system) for system in run.systems],
        css_class="overview",
        caption=(
            f"Baseline runs over all {len(run.question_ids)} questions. Accuracy is the mean graded correctness "
            "(failed runs score 0) with a percentile-bootstrap confidence interval (questions resampled). Abstained: "
            "the system declined to answer. Calls, tokens, cost and wall time are summed over the system's baseline "
            'runs; cost is priced from litellm\'s price table ("unknown": no price for the model, never counted as '
            '0; "local": a model run on this machine) and includes calls served from the cache at the price '
            "they had. Judge cost: the LLM-judged metrics' calls on those runs. "
            "A repeated system's accuracy is the mean over its repeats, with the range and standard deviation of the "
            "repeats' accuracies beneath. Leak guard: its intervention units that leaked or had no effect (see the leak "
            "guard section)."
        ),
    )
    return Section(id="systems", title="Systems", blocks=[table], order=10)


def _overview_row(run: RunData, system: str) -> Row:
    """A system's baseline: accuracy, outcomes, what its answers and their judging cost, its leaks."""
    records = run.select(system)
    traces = [r.trace for r in records if r.trace is not None]
    acc = share(per_question(records), run.question_ids, **run.stats_options())
    return Row(
        cells=[
            system,
            share_cell(acc, "; ".join(filter(None, (_accuracy_note(run, system), repeat_spread(records))))).marked(
                baseline_mark(run, system)
            ),
            str(sum(t.outcome == "answered" for t in traces)),
            str(sum(t.abstained for t in traces)),
            str(sum(r.status == "failed" for r in records)),
            str(sum(len(t.llm_calls) for t in traces)),
            f"{sum(t.tokens for t in traces):,}",
            CostTotal.of(c for t in traces for c in t.llm_calls).describe(),
            f"{sum(t.wall_time_s or 0.0 for t in traces):.1f}",
            CostTotal.of(c for r in records for c in r.judge_calls).describe(),
            leak_summary(run, system),
        ]
    )


def _accuracy_note(run: RunData, system: str) -> str:
    for v in run.metric_values("accuracy"):
        if v["system"] == system and v["condition"] == BASELINE:
            everything = (v.get("detail") or {}).get("all_questions") or v
            return f"accuracy metric: {everything.get('numerator')}/{everything.get('denominator')}"
    return ""


def knowledge_base_section(run: RunData) -> Section | None:
    """What the knowledge base's builder recorded (``build_info.json``), grouped: counts beside the
    paper's, problems, the build, its options (:mod:`provbench.report.explore`)."""
    directory = (run.suite.get("knowledge_base") or {}).get("directory")
    info_file = Path(directory) / "build_info.json" if directory else None
    if info_file is None or not info_file.is_file():
        return None
    try:
        info = json.loads(info_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Section(
            id="knowledge-base",
            title="Knowledge base",
            order=15,
            blocks=[Text(text=redact(f"build_info.json could not be read: {exc}"))],
        )
    return Section(
        id="knowledge-base",
        title="Knowledge base",
        order=15,
        blocks=knowledge_base_blocks(info, run.manifest.knowledge_base.get("not_measurable")),
        intro=f"From {info_file}: what the builder recorded while building this knowledge base.",
    )


def plugin_sections(run: RunData, pm: Any = None) -> list[Section]:
    """Sections every plugin contributes for this run; one that fails becomes a note, not a crash."""
    from ..registry import default_plugin_manager

    pm = pm or default_plugin_manager()
    found: list[Section] = []
    for impl in pm.hook.provbench_report_sections.get_hookimpls():
        name = pm.get_name(impl.plugin) or str(impl.plugin)
        try:
            contributed = impl.function(run=run) or []
            bad = [s for s in contributed if not isinstance(s, Section)]
            if bad:
                raise TypeError(f"expected provbench.report.sections.Section objects, got {type(bad[0]).__name__}")
            found += contributed
        except Exception as exc:  # noqa: BLE001 - one plugin's section must not sink the report
            log.warning("report section of %s failed: %s", name, exc)
            found.append(
                Section(
                    id=f"failed-{anchor(name)}",
                    title=f"Section from {name} failed",
                    order=990,
                    blocks=[Text(text=f"{type(exc).__name__}: {exc}")],
                )
            )
    return found


def section_view(section: Section) -> dict[str, Any]:
    """A section for the template: charts drawn to inline SVG, everything else as data."""
    blocks = []
    for block in section.blocks:
        view = block.model_dump()
        if isinstance(block, BarChart):
            view["svg"] = charts.grouped_chart(
                block.categories, block.series, block.ylabel, block.title, block.intervals, block.scale
            )
        elif isinstance(block, LineChart):
            view["svg"] = charts.line_chart(block.series, block.xlabel, block.ylabel, block.title, block.diagonal)
        blocks.append(view)
    return {"id": section.id, "title": section.title, "intro": section.intro, "blocks": blocks}


def accuracy_chart(run: RunData) -> dict[str, str] | None:
    if not run.systems:
        return None
    shares = [share(per_question(run.select(s)), run.question_ids, **run.stats_options()) for s in run.systems]
    return {
        "title": "Baseline accuracy per system (error bars: bootstrap CI)",
        "svg": charts.accuracy_chart(
            run.systems,
            [s.value for s in shares],
            [(s.low, s.high) for s in shares],
            "Baseline accuracy (all questions)",
        ),
    }


def metric_listing(run: RunData) -> dict[str, Any]:
    """Every value in metrics.json, formatted, and the metrics that failed. A value no certified
    claim vouches for is marked as Table 2 marks it (:func:`provbench.results.validity.cell_mark`):
    a plugin's scorer is read beside the claims like any built-in number."""
    from ..results.data import format_metric_value
    from ..results.validity import read_validity

    validity = read_validity(run.run_dir)
    return {
        "all": [_marked({**v, "shown": format_metric_value(v)}, validity, run) for v in run.metric_values()],
        "errors": run.metrics.get("errors", {}),
    }


def _marked(value: dict[str, Any], validity: Any, run: RunData) -> dict[str, Any]:
    """``value`` with the uncertified mark and its note when its number is not certified."""
    from ..results.validity import cell_mark

    system, condition = value.get("system"), value.get("condition") or BASELINE
    mark = cell_mark(validity, system, condition, run.records) if system else ""
    if not mark:
        return value
    return {**value, "shown": f"{value['shown']} †", "note": "; ".join(filter(None, (value.get("note"), mark)))}


# -- per-question pages -----------------------------------------------------------------------------


def page_name(question_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", question_id).strip("-")[:40] or "q"
    return f"{slug}-{hashlib.sha1(question_id.encode()).hexdigest()[:8]}.html"


def anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def question_rows(run: RunData) -> list[dict[str, Any]]:
    """The Questions table: one row per record, question by question, each system's baseline
    first; the flags and data the table's filters read (:mod:`provbench.report.explore`)."""
    order = {c: i for i, c in enumerate([BASELINE, *run.conditions])}
    by_question: dict[str, list[RunRecord]] = {}
    for record in run.records:
        by_question.setdefault(record.key.question_id, []).append(record)
    rows = []
    for qid in run.question_ids:
        q = run.questions.get(qid)
        records = sorted(
            by_question.get(qid, []),
            key=lambda r: (
                run.systems.index(r.key.system) if r.key.system in run.systems else 99,
                order.get(r.key.condition, 99),
                r.key.repeat,
                r.key.variant,
            ),
        )
        rows += [record_row(run, q, qid, r, page_name(qid), anchor(r.key.system)) for r in records]
    return rows


def _step_view(step: Any) -> dict[str, Any]:
    return {
        "index": step.index,
        "kind": step.kind,
        "tool": step.tool or "",
        "thought": step.thought or "",
        "arguments": _json(step.arguments) if step.arguments else "",
        "result": _json(step.result, MAX_RESULT_CHARS) if step.result is not None else "",
        "error": step.error or "",
    }


def _json(value: Any, limit: int | None = None) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return text if limit is None or len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def model_read(record: RunRecord) -> list[dict[str, Any]]:
    """What the unit's model was shown and replied, request by request; a message an earlier request
    already sent (an agent's history) is counted, not repeated."""
    from ..audit import logged_requests

    seen: set[str] = set()
    shown = []
    for number, request in enumerate(logged_requests(record.requests, record.key.as_str()), 1):
        new = [
            {"role": role, "text": _json(text, MAX_READ_CHARS)} for role, text in request.messages if text not in seen
        ]
        seen.update(text for _, text in request.messages)
        shown.append(
            {
                "number": number,
                "purpose": request.call.purpose,
                "messages": new,
                "repeated": len(request.messages) - len(new),
                "reply": None if request.reply is None else _json(request.reply, MAX_READ_CHARS),
            }
        )
    return shown


def record_view(
    record: RunRecord,
    view: Any = None,
    picture: bool = False,
    run_dir: Path | None = None,
    sources: dict[str, dict[str, Any]] | None = None,
    question: Any = None,
) -> dict[str, Any]:
    """A record for the template; ``sources``: text unit id -> the user's file it came from
    (:mod:`provbench.kb.sources`), so read text units link back to it."""
    trace = record.trace
    variant = record.variant.description or record.variant.id if record.variant else ""
    out: dict[str, Any] = {
        "key": record.key,
        "status": record.status,
        "error": record.error or "",
        "variant": variant,
        "scores": {k: ("–" if v is None else f"{v:.3g}") for k, v in record.scores.items()},
        "notes": record.score_notes,
        "trace": None,
        "svg": None,
        "leak": leak_view(record),
        "judge": _judge_note(record),
        "gold": None,
        "read": model_read(record),
        "read_dropped": record.requests.dropped if record.requests else 0,
        "hidden_notes": record.hidden.notes if record.hidden else [],
    }
    if trace is None:
        return out
    out["trace"] = _trace_view(trace, sources or {})
    if picture and view is not None:
        try:
            out["svg"] = record_picture(run_dir, view, record, question)
        except Exception as exc:  # noqa: BLE001 - a picture must not sink the report
            log.warning("subgraph picture failed for %s: %s", record.key.as_str(), exc)
    return out


def _trace_view(trace: Any, sources: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a question page shows of a trace; read text units link to the user's files they came from."""
    return {
        "answer": trace.answer if trace.answer is not None else "",
        "outcome": trace.outcome,
        "confidence": trace.confidence,
        "error": trace.error or "",
        "citations": trace.citations.model_dump(),
        "visited": trace.visited_entities,
        "read_text_units": trace.read_text_units,
        "footprint": trace.footprint(),
        "read_links": [
            (tu, *source_link(sources[tu])) if tu in sources else (tu, "", "") for tu in trace.read_text_units
        ],
        "llm_calls": len(trace.llm_calls),
        "tokens": trace.tokens,
        "wall_time_s": trace.wall_time_s,
        "cost": CostTotal.of(trace.llm_calls).describe(),
        "paths": [p.model_dump() for p in trace.paths],
        "facts": [f.model_dump() for f in trace.facts],
        "hidden": trace.artifacts.get("hidden_by_intervention") or {},
        "steps": [_step_view(s) for s in trace.steps],
    }


def _judge_note(record: RunRecord) -> str:
    calls = record.judge_calls
    if not calls:
        return ""
    return (
        f"{len(calls)} call(s), {sum(c.prompt_tokens + c.completion_tokens for c in calls)} tokens, "
        f"cost {CostTotal.of(calls).describe()}"
    )


def question_page(run: RunData, qid: str, view: Any) -> dict[str, Any]:
    q = run.questions.get(qid)
    pictures = bool(run.report_option("subgraph_pictures", True))
    kb_dir = (run.suite.get("knowledge_base") or {}).get("directory")
    sources_file = Path(kb_dir) / SOURCES_FILE if kb_dir else None
    sources = _kb_sources(str(kb_dir), sources_file.stat().st_mtime) if sources_file and sources_file.is_file() else {}
    sections = []
    for system in run.systems:
        records = [r for r in run.records if r.key.system == system and r.key.question_id == qid]
        base = [r for r in records if r.key.condition == BASELINE]
        others = [r for r in records if r.key.condition != BASELINE]
        if not records:
            continue
        sections.append(
            {
                "system": system,
                "anchor": anchor(system),
                "baseline": [
                    _with_gold(record_view(r, view, pictures, run.run_dir, sources, q), q, r, others, view)
                    for r in base
                ],
                "interventions": [
                    record_view(r, view, pictures, run.run_dir, sources, q)
                    for r in sorted(
                        others,
                        key=lambda r: (
                            run.conditions.index(r.key.condition) if r.key.condition in run.conditions else 99,
                            r.key.repeat,
                            r.key.variant,
                        ),
                    )
                ],
            }
        )
    return {"question": q, "qid": qid, "excluded": qid in run.excluded, "sections": sections}


@functools.lru_cache(maxsize=4)
def _kb_sources(kb_dir: str, modified: float) -> dict[str, dict[str, Any]]:
    """The KB's text-unit sources, read once per report (every question page uses them)."""
    return text_unit_sources(kb_dir)


def _with_gold(
    shown: dict[str, Any], question: Any, record: RunRecord, others: list[RunRecord], view: Any
) -> dict[str, Any]:
    """The record's view with its trajectory drawn against the gold chain, when there is one."""
    try:
        shown["gold"] = gold_view(question, record, others, view)
    except Exception as exc:  # a drawing must not sink the report
        log.warning("gold view failed for %s: %s", record.key.as_str(), exc, exc_info=True)
    return shown


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
        except Exception as exc:  # noqa: BLE001 - the report shows why, without the pictures
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

    env = Environment(
        loader=PackageLoader("provbench.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v: "–" if v is None else f"{100 * v:.1f}%"
    return env


def dry_run_model(model: str) -> str:
    """Why a run's answers mean nothing (its model answers without reading: an offline or control
    LLM), or "" for a real model."""
    if model == "schema-following" or model.startswith("scripted"):
        return f"a dry run: {model} answers every request with a placeholder of the right shape, so no answer, score or effect here says anything about a system; run with a real model (--model) for results"
    if model.startswith("control:"):
        return f"a control run: {model} is an LLM of known behaviour (docs/controls.md), so its scores check the metrics, not the systems"
    return ""


def header(run: RunData) -> dict[str, Any]:
    m = run.manifest
    statuses = [r.status for r in run.records]
    judge = m.models.get("judge") or m.models.get("suite_model", "")
    same = judge in (m.models.get("suite_model", m.models.get("llm")), m.models.get("llm"))
    shown = (m.models.get("llm") or judge) if same else judge  # one name for one model: the resolved one
    return {
        "judge": shown + (" (the same model as the systems)" if same else " (a separate model)"),
        "cost": CostTotal.of(c for r in run.records for c in record_calls(r)).describe(),
        "stopped": m.stopped or "",
        "redacted_questions": m.redacted_questions,
        "title": report_title(run),
        "suite_name": m.suite_name,
        "description": run.suite.get("description", ""),
        "run_id": m.run_id,
        "models": m.models,
        "dry_run": dry_run_model(m.models.get("llm", "")),
        "versions": m.versions,
        "git_revision": m.git_revision or "none (not a git checkout or no commit yet)",
        "created_at": m.created_at,
        "finished_at": m.finished_at or "unfinished",
        "seeds": m.seeds,
        "suite_path": m.suite_path or "",
        "dataset": run.suite.get("dataset", {}),
        "knowledge_base": run.suite.get("knowledge_base") or {},
        "questions": len(run.question_ids),
        "records": len(statuses),
        "failed": statuses.count("failed"),
        "exclusion": run.metrics.get("exclusion") or run.suite.get("exclusion", {}),
    }


def write_report(run_dir: str | Path, pm: Any = None) -> Path:
    """Render ``report.html`` (+ pages/ and records.csv) for a run directory; returns the report path.
    ``pm``: the plugin manager whose report sections to include (default: every installed plugin)."""
    run = load_run(run_dir)
    env = environment()
    env.globals["ci_label"] = f"{100 * float(run.report_option('confidence', 0.95)):g}% CI"
    sections = [
        overview_section(run),
        validity_section(run),
        leak_section(run),
        knowledge_base_section(run),
        paired_scores_section(run),
        *plugin_sections(run, pm),
    ]
    sections = sorted((s for s in sections if s is not None), key=lambda s: s.order)
    chart = accuracy_chart(run)
    context = {
        "h": header(run),
        "systems": run.systems,
        "sections": [section_view(s) for s in sections],
        "metrics": metric_listing(run),
        "charts": [chart] if chart else [],
        "questions": question_rows(run),
        "failures": [r for r in run.records if r.status == "failed"],
        "per_question": bool(run.report_option("per_question_pages", True)),
        "csv": "records.csv",
        "filters": filter_choices(run),
        "explore_script": EXPLORE_SCRIPT,
        "script_hash": script_hash(),
    }
    export_csv(run.run_dir, records=run.records)
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
            (pages / name).write_text(
                template.render(h=header(run), p=page, kb_note=kb.reason, prefix="", back="../report.html#questions"),
                encoding="utf-8",
            )
            embedded.append({"key": name.removesuffix(".html"), "page": page})
        return embedded, kb.reason
    finally:
        kb.close()
