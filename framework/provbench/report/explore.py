"""What makes the report explorable and its knowledge base readable, still as one offline file.

* The Questions table has one row per record (question x system x condition x repeat or variant)
  with what its filters read: system, condition, category, and the flags correct / wrong /
  changed / failed / leaked / excluded, plus lower-case search text. A small inline script
  (``templates/explore.js``) filters, searches and sorts it; the page's content-security policy
  admits that script by its SHA-256 hash and nothing else (no other script, no network). With
  scripts off the whole table is there, and the filter form stays hidden.
* The Knowledge base section groups ``build_info.json``: counts beside the paper's, problems,
  the build (LLM calls, extraction, communities, inputs), its options.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import lru_cache
from importlib.resources import files
from typing import Any

from ..kb.health import PARTS, degenerate_reasons
from ..kb.info import count_table, detail_lines
from ..model import BASELINE, Question, RunRecord
from ..results.rules import correctness
from ..secrets import Redactor
from ..run_store import leak_status
from ..results.data import RunData
from .sections import Table, Text

EXPLORE_SCRIPT = files("provbench.report").joinpath("templates", "explore.js").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def script_hash() -> str:
    """The CSP hash source that admits the inline script (quoted in the policy): sha256-<base64 digest of its text>."""
    digest = hashlib.sha256(EXPLORE_SCRIPT.encode("utf-8")).digest()
    return f"sha256-{base64.b64encode(digest).decode()}"


def record_row(
    run: RunData, question: Question | None, qid: str, record: RunRecord, page: str, system_anchor: str
) -> dict[str, Any]:
    """One row of the Questions table, with the flags its filters use."""
    value = correctness(record)
    changed = record.scores.get("output_changed")
    leak = leak_status(record)
    flags = [
        flag
        for flag, on in (
            ("correct", value is not None and value >= 1),
            ("wrong", value is not None and value < 1),
            ("changed", changed == 1),
            ("failed", record.status == "failed"),
            ("leaked", leak == "leaked"),
            ("excluded", qid in run.excluded),
        )
        if on
    ]
    answer = record.trace.answer if record.trace and record.trace.answer is not None else ""
    text = question.question if question else ""
    return {
        "id": qid,
        "question": text,
        "category": _category(question),
        "page": page,
        "anchor": system_anchor,
        "excluded": qid in run.excluded,
        "system": record.key.system,
        "condition": record.key.condition,
        "run": record.key.variant or (str(record.key.repeat) if record.key.repeat else ""),
        "answer": answer,
        "gold": question.answer if question else record.gold,
        "mark": "–" if value is None else "✓" if value >= 1 else "✗" if value == 0 else f"{value:.2f}",
        "changed": "" if changed is None else ("yes" if changed == 1 else "no"),
        "status": record.status,
        "error": record.error or "",
        "leak": leak or "",
        "flags": " ".join(flags),
        "search": search_text(qid, text, answer, record.gold),
    }


def search_text(*parts: str) -> str:
    """What the search box matches: words (letters, digits, _) in lower case, one space apart;
    explore.js cuts a query the same way, so punctuation and markup never matter."""
    return " ".join(re.findall(r"\w+", " ".join(parts).lower()))


def _category(question: Question | None) -> str:
    return (question.category or question.type) if question else ""


def filter_choices(run: RunData) -> dict[str, list[str]]:
    """The values each filter offers (a filter with one value or none is left out)."""
    categories = sorted({_category(run.questions.get(q)) for q in run.question_ids} - {""})
    return {"system": run.systems, "condition": [BASELINE, *run.conditions], "category": categories}


# -- the knowledge base --------------------------------------------------------------------------


def knowledge_base_blocks(info: dict[str, Any], not_measurable: dict[str, str] | None = None) -> list[Any]:
    """Health first (degenerate, then lacking parts), counts (beside the paper's when the builder
    follows one), problems, build, options; redacted (a KB built before its builder redacted error
    texts may still quote a provider's key)."""
    info = Redactor.for_run().data(info)
    return [
        *_health_tables(info, not_measurable or {}),
        *_count_tables(info),
        *_problem_blocks(info.get("problems")),
        *_build_tables(info),
    ]


def _count_tables(info: dict[str, Any]) -> list[Table]:
    paper = info.get("paper") or {}
    paper_columns, rows = count_table(None, info, blank="–")
    if not rows:
        return []
    columns = ["Item", "This knowledge base", *(c[:1].upper() + c[1:] for c in paper_columns)]
    beside = f", beside those of {paper['title']}" if paper.get("title") else ""
    return [Table(columns=columns, rows=rows, css_class="kb kb-counts", caption=f"Counts{beside}.")]


def _health_tables(info: dict[str, Any], not_measurable: dict[str, str]) -> list[Table]:
    """What the KB lacks, and which interventions lose their meaning on it (the rest of the run
    stands: provbench.kb.health); first, when it is degenerate, that nothing measured on it counts."""
    degenerate = degenerate_reasons(info.get("counts") or {}, info, info.get("linked_entities"))
    lacking = [r for r in degenerate if r in PARTS.values()]
    tables = []
    if len(lacking) < len(degenerate):
        tables.append(
            Table(
                columns=["This knowledge base is degenerate: runs on it are refused"],
                rows=[[r] for r in degenerate],
                numeric_from=1,
                css_class="kb kb-degenerate",
            )
        )
    if lacking:
        rows = [
            [r, ", ".join(k for k, why in not_measurable.items() if r.removeprefix("it ") in why) or "none"]
            for r in lacking
        ]
        tables.append(
            Table(
                columns=["This knowledge base lacks", "Interventions not measurable on it (not run)"],
                rows=rows,
                numeric_from=2,
                css_class="kb kb-lacking",
            )
        )
    return tables


def _problem_blocks(problems: list[str] | None) -> list[Any]:
    """The problems the build met; nothing when the builder records none (an older KB)."""
    if problems is None:
        return []
    if not problems:
        return [Text(text="Problems: none.")]
    columns = ["Problems the build met (it went on)"]
    return [Table(columns=columns, rows=[[p] for p in problems], numeric_from=1, css_class="kb kb-problems")]


def _build_tables(info: dict[str, Any]) -> list[Table]:
    """What the builder recorded, then its options."""
    build = [(k, v) for k, v in detail_lines(info) if k not in ("problem", "problems", "options")]
    build += [("inputs", ", ".join(f"{k}={v}" for k, v in (info.get("inputs") or {}).items() if k != "options"))]
    tables = [
        Table(
            columns=["Build", "What the builder recorded"],
            rows=[[k, v] for k, v in build if v],
            numeric_from=2,
            css_class="kb kb-build",
        )
    ]
    options = info.get("options") or (info.get("inputs") or {}).get("options") or {}
    if options:
        tables.append(
            Table(
                columns=["Option", "Value"],
                rows=[[k, _plain(v)] for k, v in sorted(options.items())],
                numeric_from=2,
                css_class="kb kb-options",
                caption="The builder's options.",
            )
        )
    return tables


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
