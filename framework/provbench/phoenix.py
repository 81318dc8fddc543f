"""A run's scores in Arize Phoenix as span annotations (``provbench traces RUN --phoenix URL``).

Phoenix shows span attributes as attributes; its evaluations (the "Annotations" column, filters
and averages per project) are annotations, sent apart through its REST API
(``POST /v1/span_annotations``). Each score of a unit becomes one annotation on the unit's root
span: name = the score, ``result.score`` = the value, annotator ``LLM`` for a score a judge LLM gave
(the run's metrics declare them: ``Metric.judged_scores``, recorded as the manifest's
``judged_scores``), else ``CODE``; metadata = run id and unit key. A missing score (None) is not
sent. Annotations are upserted on (name, span, identifier ``provbench``): exporting a run again
replaces them, as its spans keep their ids.

Spans reach Phoenix by OTLP and are written to its database a moment later, and an annotation on
a span Phoenix does not hold yet is refused (404 with ``sync=true``; queued and silently dropped
after a few retries without it). So each batch is sent with ``sync=true`` and, while Phoenix
answers 404, sent again until ``wait_s`` runs out: an annotation is either stored or reported.

Plain HTTP through httpx (a dependency already): ``arize-phoenix-client`` would do the same
through the same endpoint and pull in grpcio.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

from .errors import UserError
from .results.data import RunData
from .tracing import UnitIds

BATCH = 500  # annotations per request
IDENTIFIER = "provbench"


def score_annotations(run: RunData) -> list[dict[str, Any]]:
    """One annotation per (unit, score) with a value, on the unit's root span."""
    ids = UnitIds(run.manifest.run_id)
    judged = set(run.manifest.judged_scores)
    annotations = []
    for record in run.records:
        key = record.key.as_str()
        span_id = format(ids.root_span_id(key), "016x")
        for name, value in record.scores.items():
            if value is None:
                continue
            annotations.append(
                {
                    "span_id": span_id,
                    "name": name,
                    "annotator_kind": "LLM" if name in judged else "CODE",
                    "result": {"score": float(value)},
                    "identifier": IDENTIFIER,
                    "metadata": {"run_id": run.manifest.run_id, "unit": key},
                }
            )
    return annotations


def annotate_scores(run: RunData, base_url: str, *, headers: dict[str, str] | None = None, wait_s: float = 60.0) -> int:
    """Send the run's scores to the Phoenix at ``base_url`` (e.g. http://127.0.0.1:6006) as span
    annotations, after its spans; returns how many were stored."""
    import httpx

    url = base_url.rstrip("/") + "/v1/span_annotations"
    annotations = score_annotations(run)
    with httpx.Client(headers=headers or {}, timeout=30.0) as client:
        for batch in _batches(annotations):
            _send(client, url, batch, deadline=time.monotonic() + wait_s)
    return len(annotations)


def _send(client: Any, url: str, batch: list[dict[str, Any]], deadline: float) -> None:
    import httpx

    delay = 0.25
    while True:
        try:
            response = client.post(url, params={"sync": "true"}, json={"data": batch})
        except httpx.HTTPError as exc:
            raise UserError(f"traces: scores not annotated: {url}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 404 or time.monotonic() + delay > deadline:
            break
        time.sleep(delay)  # Phoenix has not written the spans yet
        delay = min(2 * delay, 2.0)
    if response.status_code >= 400:
        raise UserError(f"traces: scores not annotated: {url} answered {response.status_code}: {response.text[:500]}")


def _batches(items: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]
