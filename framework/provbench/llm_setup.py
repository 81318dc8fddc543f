"""The run's LLM clients: the systems' model and the judge of LLM-judged metrics, checked against
the run directory they resume (the same models, or a clear refusal) and the suite's budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .costs import check_priced
from .errors import UserError
from .store import RunStore
from .suite import LoadedSuite, ModelSpec, Suite


def check_same_models(store: RunStore, suite: Suite) -> None:
    """Resuming with another model or judge would mix two models' answers or grades in one run: refuse."""
    previous = store.read_manifest()
    used = previous.models.get("suite_model") if previous else None
    if used and used != suite.model.id:
        raise UserError(f"{store.run_dir} holds a run with model {used!r}, not {suite.model.id!r}; "
                        "pass --out with a new directory to run another model")
    judged = previous.models.get("judge", used) if previous else None  # older runs: the judge was the model
    judge = suite.judge.id if suite.judge else suite.model.id
    if judged and judged != judge:
        raise UserError(f"{store.run_dir} holds a run judged by {judged!r}, not {judge!r}; "
                        "pass --out with a new directory to use another judge")


def check_budget_prices(loaded: LoadedSuite, llm: Any) -> None:
    """A cost budget over a model without prices is refused before the run directory exists."""
    suite = loaded.suite
    if suite.budget is None or suite.budget.max_cost_usd is None:
        return
    system = llm if llm is not None else make_run_llm(suite.model, None, 1)
    judge = system if suite.judge is None else make_run_llm(suite.judge, None, 1)
    check_priced(suite.budget, {"systems'": getattr(system, "backend", None),
                                "judge": getattr(judge, "backend", None)}, str(loaded.path))


def make_run_llm(spec: ModelSpec, cache_dir: Path | None, concurrency: int) -> Any:
    """A client for ``spec`` (its parameters and rate limits) with ``concurrency`` calls at once."""
    from .llm import make_llm

    return make_llm(spec.id, cache_dir=cache_dir, max_concurrency=concurrency, rate_limit=spec.rate_limit,
                    **spec.params)


def make_judge(suite: Suite, llm: Any, cache_dir: Path) -> Any:
    """The metrics' LLM: the systems' client unless the suite names another judge model."""
    if suite.judge is None or (suite.judge.id == getattr(llm, "model_id", None) and not suite.judge.params
                               and suite.judge.rate_limit is None):
        return llm
    return make_run_llm(suite.judge, cache_dir, suite.concurrency)
