"""The leak guard: did a unit under a graph-level intervention see what its view hides?

An intervention binds a system only where the system reads through its view (``env.view``, or a
store built over it). The guard checks every such unit, whatever the system, after it ran:

(a) ``trace_ids``: ids the view hides in the trace (visited entities, read text units and
    communities, retrieved items, evidence paths, facts' sources). Citations are not checked: a
    model may write an id it never saw. ``not-checkable`` for a system whose trace records the ids
    of a store of its own (``System.trace_ids == "own"``).
(b) ``request_text``: text the view hides in the unit's LLM requests (:mod:`provbench.capture`): a
    removed entity's name, a sentence of a hidden or blocked text unit, of a hidden or masked
    description, of a hidden community report (:mod:`provbench.kb.hidden`), except text the view
    shows elsewhere, text in the question, and text the model itself wrote in an earlier reply of
    the same unit (a model that guesses a removed name has not leaked). ``not-checkable`` when the
    unit made no request through provbench's LLM client.
(c) ``no_effect``: the intervention hid items the baseline read, yet the unit's requests are exactly
    the baseline's (compared by request hash, so it holds across a resumed run).

The record's ``leak_check.status`` is ``leaked`` when (a) or (b) found something, else
``no-effect`` when (c) fired, else ``clean`` when (a) or (b) could check, else ``not-checkable``.
Leaked units are left out of intervention statistics unless the suite's ``leak_guard.include_leaked``
says otherwise (:meth:`provbench.plugin_api.Results.select`); a cell whose every unit leaked or had no
effect is "not measurable" (:func:`not_measurable`), never a 0.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from .model import LeakCheck, LeakEvidence, LeakStatus, Question, RunRecord, Trace

if TYPE_CHECKING:
    from .capture import UnitCapture
    from .kb.hidden import HiddenContent
    from .kb.view import GraphView

MAX_EVIDENCE = 20
SNIPPET_CHARS = 200
CHECKS = ("trace_ids", "request_text", "no_effect")


def check_unit(view: "GraphView", question: Question, trace: Trace, capture: "UnitCapture",
               baseline: Trace | None, trace_ids: str = "kb") -> LeakCheck:
    """The three checks for one unit: ``view`` is the intervention's, ``capture`` the unit's requests."""
    content = view.hidden_content()
    evidence: list[LeakEvidence] = []
    checks: dict[str, LeakStatus] = {}
    if trace_ids == "kb":
        found = [LeakEvidence(check="trace_ids", kind=kind, item=item, where=where)
                 for kind, item, where in hidden_ids(view, content, trace)]
        checks["trace_ids"] = "leaked" if found else "clean"
        evidence += found
    else:
        checks["trace_ids"] = "not-checkable"
    requests = capture.requests
    if requests:
        found = list(request_text_leaks(content, question, capture))
        checks["request_text"] = "leaked" if found else "clean"
        evidence += found
    else:
        checks["request_text"] = "not-checkable"
    checks["no_effect"], effect = no_effect(view, content, capture, baseline, trace_ids)
    evidence += effect
    notes = ["the intervention hid nothing"] if view.hidden.empty else []
    if len(evidence) > MAX_EVIDENCE:
        notes.append(f"{len(evidence) - MAX_EVIDENCE} more finding(s) not listed")
    return LeakCheck(status=overall(checks), checks=checks, evidence=evidence[:MAX_EVIDENCE],
                     requests=len(requests), notes=notes)


def overall(checks: dict[str, LeakStatus]) -> LeakStatus:
    if "leaked" in checks.values():
        return "leaked"
    if checks.get("no_effect") == "no-effect":
        return "no-effect"
    if "clean" in (checks.get("trace_ids"), checks.get("request_text")):
        return "clean"
    return "not-checkable"


# -- (a) ids ---------------------------------------------------------------------------------------

def hidden_ids(view: "GraphView", content: "HiddenContent", trace: Trace) -> Iterator[tuple[str, str, str]]:
    """(kind, id, trace field) for every id in the trace that the view hides, each once."""
    seen = set()
    for kind, item, where in _trace_ids(trace):
        if (kind, item) not in seen and _is_hidden(view, content, kind, item):
            seen.add((kind, item))
            yield kind, item, where


def _trace_ids(trace: Trace) -> Iterator[tuple[str, str, str]]:
    yield from (("entity", e, "visited_entities") for e in trace.visited_entities)
    yield from (("text_unit", t, "read_text_units") for t in trace.read_text_units)
    yield from (("community", c, "read_communities") for c in trace.read_communities)
    yield from ((r.kind, r.id, "retrieved") for r in trace.retrieved if r.kind not in ("path", "fact"))
    for path in trace.paths:
        yield from (("entity", e, f"paths[{path.id}]") for e in path.entities)
        yield from (("relationship", r, f"paths[{path.id}]") for r in path.relations)
    for fact in trace.facts:
        yield from (("source", s, f"facts[{fact.id}]") for s in fact.source_ids)


def _is_hidden(view: "GraphView", content: "HiddenContent", kind: str, item: str) -> bool:
    """``kind`` "source" (a fact's source) may be any kind of id; unknown ids are never hidden."""
    if kind in ("entity", "source") and item in view.hidden.entities:
        return True
    if kind in ("text_unit", "source") and not view.text_unit_readable(item):
        return True
    if kind in ("community", "source") and not view.community_visible(item):
        return True
    return kind in ("relationship", "source") and content.relation_hidden(item)


# -- (b) request text --------------------------------------------------------------------------------

def request_text_leaks(content: "HiddenContent", question: Question, capture: "UnitCapture") -> Iterator[LeakEvidence]:
    """Hidden text in the unit's requests, each finding once, with the first request it appeared in.
    Each distinct message is scanned once, in the first request that sends it (agents resend their
    history), against the question and the model's replies received before that request."""
    from .kb.hidden import joined, tokens

    requests = capture.requests
    replies = sorted((r for r in requests if r.reply), key=lambda r: r.replied)
    excuse_words = tokens(" ".join([question.question, *(question.choices or [])]))
    scanned: set[str] = set()
    reported: set[tuple[str, str]] = set()
    used = 0
    for number, request in enumerate(requests, 1):
        while used < len(replies) and replies[used].replied < request.sent:
            excuse_words += tokens(replies[used].reply)
            used += 1
        excuse = joined(excuse_words)
        for _, text in request.messages:
            if text in scanned:
                continue
            scanned.add(text)
            for match in content.find(text, excuse):
                if (match.kind, match.item) not in reported:
                    reported.add((match.kind, match.item))
                    where = f"request {number}" + (f" ({request.call.purpose})" if request.call.purpose else "")
                    yield LeakEvidence(check="request_text", kind=match.kind, item=match.item, where=where,
                                       snippet=snippet(match.text))


@lru_cache(maxsize=1)
def _redactor() -> Any:
    from .secrets import Redactor

    return Redactor.for_run()


def snippet(text: str) -> str:
    """Evidence as stored: redacted and short (requests themselves are never stored)."""
    clipped = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "…"
    return _redactor().text(clipped)


# -- (c) no effect -----------------------------------------------------------------------------------

def no_effect(view: "GraphView", content: "HiddenContent", capture: "UnitCapture", baseline: Trace | None,
              trace_ids: str) -> tuple[LeakStatus, list[LeakEvidence]]:
    """``no-effect`` when the view hides something the baseline read and every request equals the baseline's."""
    if baseline is None or trace_ids != "kb":
        return "not-checkable", []
    before = [call.request_hash for call in baseline.llm_calls]
    if not before or None in before:  # a baseline recorded before requests were hashed, or with no request
        return "not-checkable", []
    read = list(hidden_ids(view, content, baseline))
    after = [request.call.request_hash for request in capture.requests]
    if not read or Counter(after) != Counter(before):
        return "clean", []
    hid = ", ".join(item for _, item, _ in read[:5]) + (", …" if len(read) > 5 else "")
    return "no-effect", [LeakEvidence(check="no_effect", kind="requests", where=f"{len(after)} request(s)",
                                      snippet=f"identical to the baseline's, though the view hides {hid}")]


# -- reporting ---------------------------------------------------------------------------------------

def leak_counts(records: Iterable[RunRecord]) -> dict[tuple[str, str], Counter]:
    """Per (system, condition): how many checked units had each status."""
    counts: dict[tuple[str, str], Counter] = {}
    for record in records:
        if record.leak_check is not None:
            counts.setdefault((record.key.system, record.key.condition), Counter())[record.leak_check.status] += 1
    return counts


def leak_lines(records: Iterable[RunRecord]) -> list[str]:
    """What the console prints at the end of a run: totals, then each system x condition with leaks."""
    counts = leak_counts(records)
    if not counts:
        return []
    total = sum(counts.values(), Counter())
    lines = [f"leak guard: {sum(total.values())} intervention unit(s) checked: " + ", ".join(
        f"{total[s]} {s}" for s in ("clean", "leaked", "no-effect", "not-checkable"))]
    for status in ("leaked", "no-effect"):
        lines += [f"  {status}: {system} x {condition}: {c[status]} unit(s)"
                  for (system, condition), c in counts.items() if c[status]]
    if total["leaked"]:
        lines.append("  leaked units are left out of the intervention statistics (leak_guard.include_leaked: true "
                     "keeps them); see the report's leak guard section")
    return lines


def not_measurable(records: Iterable[RunRecord]) -> str | None:
    """Why a system x condition's intervention statistics mean nothing: every unit leaked or had no
    effect (the reason, e.g. "not measurable: 3 leaked, 2 no-effect"); None when they can be read."""
    statuses = [r.leak_check.status if r.leak_check is not None else None for r in records]
    if not statuses or not all(s in ("leaked", "no-effect") for s in statuses):
        return None
    counts = Counter(statuses)
    return "not measurable: " + ", ".join(f"{counts[s]} {s}" for s in ("leaked", "no-effect") if counts[s])
