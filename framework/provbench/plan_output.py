"""How ``provbench plan`` shows a plan: its table's rows, the summary lines and the JSON form."""

from __future__ import annotations

from typing import Any

from .costs import cost_text, dollars
from .plan import KB_BUILD, Plan


COLUMNS = (
    "what",
    "model",
    "units",
    "LLM calls",
    "prompt tokens / call",
    "reply tokens / call",
    "tokens",
    "cost",
    "notes",
)


def plan_rows(plan: Plan) -> list[list[str]]:
    def number(value: float | None) -> str:
        return "?" if value is None else f"{value:,.0f}"

    rows = []
    for row in plan.rows:
        tokens = (
            None
            if row.prompt_tokens is None or row.completion_tokens is None
            else row.calls * (row.prompt_tokens + row.completion_tokens)
        )
        cost = cost_text(row.cost_usd, row.cost_source)
        rows.append(
            [
                row.what,
                row.model,
                "" if row.what in ("judge", KB_BUILD) else str(row.units),
                number(row.calls),
                number(row.prompt_tokens),
                number(row.completion_tokens),
                number(tokens),
                cost if row.calls else "–",
                "; ".join(row.notes),
            ]
        )
    return rows


def plan_summary(plan: Plan, chain: float) -> list[str]:
    total = plan.cost_total()
    why = "; ".join(plan.unknown_cost_causes())
    if total.unknown == total.calls:
        cost = f"unknown: {why}" if total.calls else dollars(0.0)
    else:
        cost = total.known() + (f" + {total.unknown} line(s) of unknown cost: {why}" if total.unknown else "")
    minutes = plan.hours(chain) * 60
    return [
        f"total: {plan.units:,} unit(s), about {plan.calls:,.0f} LLM call(s), estimated cost {cost}",
        f"time: about {minutes:.1f} min at concurrency {plan.concurrency} and {plan.latency_s:g} s a call "
        "(--concurrency, --latency), never under the longest chain of calls",
        f"already there: {plan.recorded} unit(s) recorded (not run again), {plan.to_rerun} failed (run again), "
        f"{plan.cached_replies} cached LLM repl{'y' if plan.cached_replies == 1 else 'ies'}; knowledge base {plan.kb}",
        *(f"note: {n}" for n in plan.notes),
    ]


def plan_json(plan: Plan, chain: float) -> dict[str, Any]:
    total = plan.cost_total()
    return {
        "suite": plan.suite,
        "questions": plan.questions,
        "units": plan.units,
        "llm_calls": plan.calls,
        "cost_usd": total.usd,
        "unpriced_rows": total.unknown,
        "unknown_cost_causes": plan.unknown_cost_causes(),
        "minutes": plan.hours(chain) * 60,
        "concurrency": plan.concurrency,
        "latency_s": plan.latency_s,
        "recorded_units": plan.recorded,
        "failed_units": plan.to_rerun,
        "cached_replies": plan.cached_replies,
        "knowledge_base": plan.kb,
        "rows": [
            dict(zip(COLUMNS, row)) | {"units": r.units, "calls": r.calls, "cost_usd": r.cost_usd}
            for row, r in zip(plan_rows(plan), plan.rows)
        ],
        "notes": plan.notes,
    }
