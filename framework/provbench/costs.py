"""What LLM calls cost in money: prices from litellm's table, totals, and a run's budget.

A call's price comes from its backend's ``price(prompt_tokens, completion_tokens)``: litellm's
price table (the copy litellm ships: provbench sets ``LITELLM_LOCAL_MODEL_COST_MAP``, so nothing
is fetched), prices given in the model's parameters (``input_cost_per_token``,
``output_cost_per_token``), or 0 for a backend that runs locally. A model nobody priced stays
*unknown*: its cost is None, never 0, and every total says how many of its calls had no price.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import UserError

if TYPE_CHECKING:
    from .model import LLMCall, RunRecord

CostSource = Literal["litellm", "custom", "local", "unknown"]


def dollars(usd: float) -> str:
    """An amount with its significant digits: "$0.0123", "$0.00000135" for one cheap call (never
    "$0.0000" for a priced one), "$1,234.50"."""
    if usd >= 100:
        return f"${usd:,.2f}"
    if usd >= 0.01 or usd <= 0:
        return f"${usd:.4f}"
    decimals = 2 - math.floor(math.log10(usd))  # three significant digits
    return f"${usd:.{decimals}f}"


def price_of(backend: Any, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, CostSource]:
    """(US dollars or None, where the price came from) for one call on ``backend``; a backend
    without a ``price`` method (a plugin's) is priced "unknown"."""
    price = getattr(backend, "price", None)
    if price is None:
        return None, "unknown"
    return price(prompt_tokens, completion_tokens)


def litellm_price(
    litellm: Any, model_id: str, params: dict[str, Any], prompt_tokens: int, completion_tokens: int
) -> tuple[float | None, CostSource]:
    """A litellm model's price: the model's own per-token prices when its parameters give them,
    else litellm's price table; None ("unknown") for a model the table does not list."""
    custom = {k: float(params[k]) for k in CUSTOM_PRICE_PARAMS if params.get(k) is not None}
    try:
        prompt, completion = litellm.cost_per_token(
            model=model_id,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            custom_cost_per_token=custom or None,
        )
    except Exception:  # noqa: BLE001 - litellm raises its own "not mapped" error for unlisted models
        return None, "unknown"
    return float(prompt) + float(completion), "custom" if custom else "litellm"


CUSTOM_PRICE_PARAMS = ("input_cost_per_token", "output_cost_per_token")


@dataclass
class CostTotal:
    """The cost of many calls: the known dollars, and how many calls were unpriced or local."""

    usd: float = 0.0
    calls: int = 0
    unknown: int = 0
    local: int = 0

    def add(self, call: "LLMCall") -> None:
        self.count(call.cost_usd, call.cost_source)

    def count(self, usd: float | None, source: str, calls: int = 1) -> None:
        """``calls`` more calls that cost ``usd`` (None: unpriced) in all, priced from ``source``."""
        self.calls += calls
        if usd is None:
            self.unknown += calls
        else:
            self.usd += usd
            self.local += calls * (source == "local")

    @classmethod
    def of(cls, calls: Iterable["LLMCall"]) -> "CostTotal":
        total = cls()
        for call in calls:
            total.add(call)
        return total

    def known(self) -> str:
        """What the priced calls cost: "0 (local)" when every one of them ran on this machine."""
        return "0 (local)" if self.local and self.local == self.calls - self.unknown else dollars(self.usd)

    def describe(self) -> str:
        """ "$0.0123", "0 (local)", "unknown", or "$0.0123 + 4 unpriced calls"."""
        if not self.calls:
            return "–"
        if self.unknown == self.calls:
            return "unknown"
        return self.known() + (f" + {self.unknown} unpriced call{'s' * (self.unknown > 1)}" if self.unknown else "")


def cost_text(usd: float | None, source: str) -> str:
    """One amount (a call's, a plan's line) as a run's summary shows its calls: "unknown",
    "0 (local)" for a model run on this machine, else its dollars."""
    total = CostTotal()
    total.count(usd, source)
    return total.describe()


def record_calls(record: "RunRecord") -> list["LLMCall"]:
    """Every call behind a record: its system's (the trace) and its judge's (the metrics')."""
    return [*(record.trace.llm_calls if record.trace else []), *record.judge_calls]


# -- budget -------------------------------------------------------------------------------------


class BudgetSpec(BaseModel):
    """A suite's ``budget``: the run stops starting units once either limit is reached (units
    already started finish), and resumes where it stopped when run again with a larger budget."""

    model_config = ConfigDict(extra="forbid")

    max_cost_usd: float | None = Field(default=None, gt=0, description="US dollars spent on LLM calls")
    max_calls: int | None = Field(default=None, ge=1, description="LLM requests sent")
    accept_unknown_costs: bool = Field(
        default=False, description="allow max_cost_usd with a model that has no price (its calls then count as 0)"
    )


class Budget:
    """A run's spending, against its :class:`BudgetSpec`: what its recorded units' calls cost, the
    systems' and the judge's (calls served from the cache cost nothing; every attempt of a call is
    a request sent). Counted from the records as they land, so it holds whichever executor ran them."""

    def __init__(self, spec: BudgetSpec, recorded: Iterable["RunRecord"] = ()) -> None:
        self.spec = spec
        self.usd, self.calls = 0.0, 0
        self._lock = threading.Lock()
        for record in recorded:
            self.add(record)

    def add(self, record: "RunRecord") -> None:
        fresh = [c for c in record_calls(record) if not c.cached]
        with self._lock:
            self.usd += sum(c.cost_usd or 0.0 for c in fresh)
            self.calls += sum(c.attempts for c in fresh)

    def add_spent(self, usd: float, calls: int) -> None:
        """Spending outside the units: the run's own knowledge-base build."""
        with self._lock:
            self.usd += usd
            self.calls += calls

    def reached(self) -> str | None:
        """Why the run must start no more units, or None."""
        with self._lock:
            usd, calls = self.usd, self.calls
        if self.spec.max_cost_usd is not None and usd >= self.spec.max_cost_usd:
            return f"budget.max_cost_usd {self.spec.max_cost_usd:g} reached ({dollars(usd)} spent)"
        if self.spec.max_calls is not None and calls >= self.spec.max_calls:
            return f"budget.max_calls {self.spec.max_calls} reached ({calls} LLM requests sent)"
        return None


def budget_overrun(spec: BudgetSpec | None, calls: float, usd: float, kb_calls: float) -> list[str]:
    """A note for ``provbench plan`` when its estimate (the knowledge base's build included: the
    run counts it) passes the suite's ``budget:``, where the run will stop."""
    spend = f"about {calls:,.0f} LLM call(s) ({kb_calls:,.0f} of them the knowledge base build)"
    if spec and spec.max_calls is not None and calls > spec.max_calls:
        return [f"{spend} pass the suite's budget max_calls: {spec.max_calls}; the run stops there"]
    if spec and spec.max_cost_usd is not None and usd > spec.max_cost_usd:
        return [f"{spend} cost over the suite's budget max_cost_usd: {spec.max_cost_usd:g}; the run stops there"]
    return []


def check_priced(spec: BudgetSpec | None, backends: dict[str, Any], where: str) -> None:
    """A cost budget needs prices: refuse a model without one unless the suite accepts unknown costs."""
    if spec is None or spec.max_cost_usd is None or spec.accept_unknown_costs:
        return
    for role, backend in backends.items():
        if backend is None:
            continue
        usd, _ = price_of(backend, 1000, 1000)
        if usd is None:
            raise UserError(
                f"{where}: budget.max_cost_usd needs prices, but the {role} model {backend.model_id!r} has none "
                "in litellm's price table: give its prices (model params input_cost_per_token, "
                "output_cost_per_token), set budget.accept_unknown_costs: true (its calls then count as 0), "
                "or limit budget.max_calls instead"
            )


def spending_lines(records: Iterable["RunRecord"]) -> list[str]:
    """The end-of-run summary of what the run's LLM calls cost, the systems' and the judge's apart."""
    records = list(records)
    lines = []
    for role, calls in (
        ("systems", [c for r in records if r.trace for c in r.trace.llm_calls]),
        ("judge", [c for r in records for c in r.judge_calls]),
    ):
        if not calls:
            continue
        models = ", ".join(sorted({c.model for c in calls}))
        tokens = sum(c.prompt_tokens + c.completion_tokens for c in calls)
        cached = sum(c.cached for c in calls)
        total = CostTotal.of(calls)
        line = (
            f"{role} ({models}): {len(calls):,} LLM calls ({cached:,} from the cache), {tokens:,} tokens, "
            f"cost {total.describe()}"
        )
        if cached and total.unknown < total.calls:
            line += f" ({CostTotal.of(c for c in calls if not c.cached).describe()} of it not from the cache)"
        lines.append(line)
    return lines
