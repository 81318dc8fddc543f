"""The report's title: the suite's, with its "embedded model" note made true for the run."""

from __future__ import annotations

import re

from ..results.data import RunData

_EMBEDDED_NOTE = re.compile(r"\(embedded model[^)]*\)|embedded model")


def report_title(run: RunData) -> str:
    """The suite's title, whose "embedded model" (a pipeline-check note) names the model the run
    used instead when that was not the embedded one (``--model``)."""
    m = run.manifest
    title = run.report_option("title", None) or f"provbench report: {m.suite_name}"
    model = m.models.get("suite_model") or m.models.get("llm") or ""
    if not model or model == "embedded" or model.startswith("llama-cpp:"):
        return title
    return _EMBEDDED_NOTE.sub(
        lambda hit: f"(model {model})" if hit.group().startswith("(") else f"model {model}", title
    )
