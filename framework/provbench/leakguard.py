"""The leak guard: did a unit under a graph-level intervention see what its view hides? It never
says "clean" without evidence.

An intervention binds a system only where the system reads through its view (``env.view``, or a
store built over it). The guard checks every such unit, whatever the system, after it ran (and
``provbench audit`` re-runs it later from the records, :mod:`provbench.audit`):

(a) ``trace_ids``: ids the view hides in the trace (visited entities, read text units and
    communities, retrieved items, evidence paths, facts' sources). ``not-checkable`` when the trace
    holds no id the knowledge base knows, or for a system whose trace records the ids of a store of
    its own (``System.trace_ids == "own"``).
(b) ``citations``: cited ids the view hides. ``leaked`` when the unit made no LLM request (the
    system itself wrote them) or the id appears in a request beyond the model's own words (as (c)
    reads them: a tool's "text unit 'tu:3' cannot be read" echoing the model's own call shows
    nothing); ``suspect`` otherwise (a model can guess ``tu:3``). An id no knowledge-base item has is
    never hidden.
(c) ``request_text``: text the view hides in the unit's LLM requests (:mod:`provbench.capture`): a
    removed entity's name, a sentence of a hidden or blocked text unit, of a hidden or masked
    description, of a hidden community report (:mod:`provbench.kb.hidden`), and any id the view
    hides ("[ent:x] Name" shows a removed entity even where its name is visible elsewhere); except
    text the view shows elsewhere, text in the question, and text the model itself wrote in an
    earlier reply of the same unit (a model that guesses a removed name has not leaked). A unit
    that made no request is judged by its answer instead (the system wrote it), and is
    ``not-checkable`` when that shows nothing hidden. For a ``trace_ids = "own"`` system under an
    ablation that removes no entity (a text ablation), finding nothing is no evidence (its store may
    paraphrase the hidden text): ``not-checkable``.
(d) ``no_effect``: items the view hides reached the baseline's prompts (by id, name, sentence, or
    for a relation one line with both ends' names and its label; the question's words aside), yet every request of the unit equals the
    baseline's (by request hash). Items a retriever returned but the pipeline dropped before the
    prompt do not count. Needs the baseline's stored requests (``RunRecord.requests``).

(b) to (d) read each request without the system's fixed instructions (:meth:`System.instructions
<provbench.plugin_api.System.instructions>`: text it sends whatever its view shows): a word of them
("Rules" in an agent's prompt, where a knowledge base names a text unit "Rules") shows nothing the
view hides; an id or text that reached a prompt through retrieval still does.

The record's ``leak_check.status``: ``no-op`` when the view hides no id of the knowledge base beyond the run's own view
(nothing is checked); else ``leaked`` when any check found something; else ``no-effect`` when (d)
fired; else ``suspect`` when (b) did; else ``clean`` when (a) or (c) could check; else
``not-checkable``. A unit that read nodes mapping to no id of the knowledge base (an index of the
system's own: :func:`~provbench.results.rules.own_index_reads`) is ``not-checkable`` unless it leaked,
with the reason in its notes: no view binds those nodes. Which units then count in statistics is the results' one pairing rule
(:func:`provbench.results.rules.left_out_as`): leaked, no-effect, no-op and not-checkable units are
left out, and a cell with nothing measurable says so (:func:`not_measurable`), never a 0.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol, Sequence

from .model import LeakCheck, LeakEvidence, LeakStatus, Question, RunRecord, Trace
from .results.rules import LEFT_OUT, not_measurable, own_index_reads  # noqa: F401 - not_measurable: its old home

if TYPE_CHECKING:
    from .capture import CapturedRequest
    from .kb.hidden import HiddenContent
    from .kb.view import GraphView

MAX_EVIDENCE = 20
SNIPPET_CHARS = 200
CHECKS = ("trace_ids", "citations", "request_text", "no_effect")
STATUSES = ("clean", "suspect", "leaked", "no-effect", "no-op", "not-checkable")
_ID_TOKEN = re.compile(r"\w[\w:./#-]*\w|\w")  # an id as a whole word ("tu:3", not "tu:33")


class Requests(Protocol):
    """A unit's captured requests: a :class:`~provbench.capture.UnitCapture`, or a stored log replayed."""

    @property
    def requests(self) -> Sequence["CapturedRequest"]: ...

    @property
    def instructions(self) -> Sequence[str]: ...  # the system's fixed prompt text


def check_unit(
    view: "GraphView",
    question: Question,
    trace: Trace,
    capture: Requests,
    baseline: Trace | None,
    trace_ids: str = "kb",
    *,
    base: "GraphView | None" = None,
    baseline_requests: Sequence["CapturedRequest"] | None = None,
) -> LeakCheck:
    """The checks for one unit: ``view`` is the intervention's, ``base`` the run's own view (None: a
    view hiding nothing), ``capture`` the unit's requests, ``baseline_requests`` the baseline's."""
    requests = without_instructions(capture.requests, capture.instructions)
    baseline_requests = without_instructions(baseline_requests, capture.instructions)
    before = base.hidden if base is not None else type(view.hidden)()
    content = view.hidden_content() if view.hidden != before else None
    own = own_index_note(trace)
    if content is None or not content.index.hides_any(view.hidden, before):
        return _own_index(_nothing_hidden(len(requests), trace_ids), own)
    checks: dict[str, LeakStatus] = {}
    evidence: list[LeakEvidence] = []
    for name, (status, found) in (
        ("trace_ids", trace_check(view, content, trace, trace_ids)),
        ("citations", citation_check(view, content, question, trace, requests)),
        ("request_text", text_check(view, content, question, trace, requests, trace_ids)),
        ("no_effect", no_effect(view, content, question, requests, baseline, baseline_requests)),
    ):
        checks[name] = status
        evidence += found
    return _own_index(_checked(checks, evidence, len(requests), trace_ids), own)


def _nothing_hidden(requests: int, trace_ids: str) -> LeakCheck:
    """A unit whose intervention hid nothing: every check is no-op (the pairing rule leaves it out)."""
    return LeakCheck(
        status="no-op",
        checks={c: "no-op" for c in CHECKS},
        requests=requests,
        notes=["the intervention hid nothing of the knowledge base"],
        trace_ids=trace_ids,
    )


def _own_index(check: LeakCheck, own: str) -> LeakCheck:
    """Not checkable, with ``own`` (the reason) first in its notes, unless it leaked: a unit that read
    nodes of an index of its own is never no-op or clean."""
    if not own or check.status == "leaked":
        return check
    return check.model_copy(update={"status": "not-checkable", "notes": [own, *check.notes]})


def _checked(checks: dict[str, LeakStatus], evidence: list[LeakEvidence], requests: int, trace_ids: str) -> LeakCheck:
    """The checks' overall status, with the first ``MAX_EVIDENCE`` findings (a note counts the rest)."""
    more = len(evidence) - MAX_EVIDENCE
    return LeakCheck(
        status=overall(checks),
        checks=checks,
        evidence=evidence[:MAX_EVIDENCE],
        requests=requests,
        notes=[f"{more} more finding(s) not listed"] if more > 0 else [],
        trace_ids=trace_ids,
    )


def own_index_note(trace: Trace | None) -> str:
    """The reason a unit that read nodes of its own is not checkable ("" when it read none)."""
    nodes = own_index_reads(trace)
    return f"read {nodes} node(s) from an index of its own, which no intervention's view binds" if nodes else ""


def own_index_lines(records: Iterable[RunRecord]) -> list[str]:
    """A warning per system whose units read nodes of an index of their own (any condition)."""
    units: dict[str, list[int]] = {}
    for record in records:
        if nodes := own_index_reads(record.trace):
            units.setdefault(record.key.system, []).append(nodes)
    return [
        f"warning: {system} read {sum(found)} node(s) from an index of its own in {len(found)} unit(s): the "
        "knowledge base's ids are not in its trace, so its interventions are not checkable and its retrieval "
        "scores not measurable (docs/own-data.md)"
        for system, found in units.items()
    ]


def without_instructions(
    requests: Sequence["CapturedRequest"] | None, instructions: Sequence[str]
) -> list["CapturedRequest"]:
    """``requests`` as evidence: every message without the system's fixed instructions, which it
    sends whatever the view shows, so their words show nothing the view hides (the hashes stay)."""
    fixed = sorted({t for t in instructions if t.strip()}, key=len, reverse=True)
    if not fixed or not requests:
        return list(requests or [])

    def strip(text: str) -> str:
        for part in fixed:
            text = text.replace(part, "\n")
        return text

    return [replace(r, messages=tuple((role, strip(text)) for role, text in r.messages)) for r in requests]


def overall(checks: dict[str, LeakStatus]) -> LeakStatus:
    if "leaked" in checks.values():
        return "leaked"
    if checks.get("no_effect") == "no-effect":
        return "no-effect"
    if checks.get("citations") == "suspect":
        return "suspect"
    if "clean" in (checks.get("trace_ids"), checks.get("request_text")):
        return "clean"
    return "not-checkable"


# -- (a) trace ids ---------------------------------------------------------------------------------


def trace_check(
    view: "GraphView", content: "HiddenContent", trace: Trace, trace_ids: str
) -> tuple[LeakStatus, list[LeakEvidence]]:
    """Hidden ids in the trace; nothing to say about a trace of no known id, or of a store's own ids."""
    if trace_ids != "kb":
        return "not-checkable", []
    found = [
        LeakEvidence(check="trace_ids", kind=kind, item=item, where=where)
        for kind, item, where in hidden_ids(view, content, trace)
    ]
    if found:
        return "leaked", found
    known = any(_known(content, kind, item) for kind, item, _ in _trace_ids(trace))
    return ("clean" if known else "not-checkable"), []


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


def _cited_ids(trace: Trace) -> Iterator[tuple[str, str, str]]:
    cited = trace.citations
    for kind, ids in (
        ("entity", cited.entities),
        ("relationship", cited.relationships),
        ("text_unit", cited.text_units),
        ("community", cited.communities),
    ):
        yield from ((kind, item, "citations") for item in ids)


def _is_hidden(view: "GraphView", content: "HiddenContent", kind: str, item: str) -> bool:
    """``kind`` "source" (a fact's source) may be any kind of id; unknown ids are never hidden
    (an intervention may hide a cited id that names nothing, e.g. a model's "Rules")."""
    if not _known(content, kind, item):
        return False
    if kind in ("entity", "source") and item in view.hidden.entities:
        return True
    if kind in ("text_unit", "source") and not view.text_unit_readable(item):
        return True
    if kind in ("community", "source") and not view.community_visible(item):
        return True
    return kind in ("relationship", "source") and content.relation_hidden(item)


def _known(content: "HiddenContent", kind: str, item: str) -> bool:
    """An id of the knowledge base (of any kind for a fact's "source")."""
    index = content.index
    return (
        (kind in ("entity", "source") and item in index.names)
        or (kind in ("text_unit", "source") and item in index.unit_texts)
        or (kind in ("community", "source") and item in index.communities)
        or (kind in ("relationship", "source") and item in index.relation_ends)
    )


class HiddenIds:
    """Membership in every id the view hides (removed entities, unreadable text units, hidden
    relations and reports), decided per id from the index: no pass over the whole knowledge base."""

    def __init__(self, view: "GraphView", content: "HiddenContent") -> None:
        self.view, self.content = view, content

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        view, content, index = self.view, self.content, self.content.index
        return (
            (item in index.names and item in view.hidden.entities)
            or (item in index.unit_texts and not view.text_unit_readable(item))
            or (item in index.relation_ends and content.relation_hidden(item))
            or (item in index.communities and not view.community_visible(item))
        )

    def __bool__(self) -> bool:
        return True


def shows_hidden(view: "GraphView", question: Question, text: str) -> bool:
    """Whether ``text`` shows something ``view`` hides: a hidden name or sentence (the question's
    words aside) or a hidden id. A system that puts text of its own making into a prompt (a replayed
    action) asks this first."""
    from .kb.hidden import joined, tokens

    content = view.hidden_content()
    asked = joined(tokens(" ".join([question.question, *(question.choices or [])])))
    return bool(content.find(text, asked) or ids_in(text, HiddenIds(view, content)))


def ids_in(text: str, ids: "frozenset[str] | HiddenIds") -> list[str]:
    """The ids of ``ids`` that ``text`` shows as whole words, in order, each once."""
    return list(dict.fromkeys(word for word in _ID_TOKEN.findall(text) if word in ids)) if ids else []


# -- (b) citations ----------------------------------------------------------------------------------


def citation_check(
    view: "GraphView",
    content: "HiddenContent",
    question: Question,
    trace: Trace,
    requests: Sequence["CapturedRequest"],
) -> tuple[LeakStatus, list[LeakEvidence]]:
    """Cited hidden ids: leaked when no model wrote them, or a request showed them; else suspect. A
    request shows an id as (c) reads it: the model's own words, and a tool's echo of an id the model
    named ("text unit 'tu:3' cannot be read"), show nothing."""
    from .kb.hidden import joined, tokens

    cited = [(kind, item) for kind, item, _ in _cited_ids(trace) if _is_hidden(view, content, kind, item)]
    if not cited:
        return "clean", []
    wanted = frozenset(i for _, i in cited)
    shown = {
        item
        for _, _, text, excuse in evidence_texts(question, requests)
        for item in ids_in(text, wanted)
        if joined(tokens(item)) not in excuse
    }
    found = []
    for kind, item in dict.fromkeys(cited):
        seen = not requests or item in shown
        why = (
            "no LLM request: the system wrote it"
            if not requests
            else ("a request showed it" if seen else "in no request: the model may have guessed it")
        )
        found.append(LeakEvidence(check="citations", kind=kind, item=item, where="citations", snippet=why))
    leaked = not requests or any(item in shown for _, item in cited)
    return ("leaked" if leaked else "suspect"), found


# -- (c) request text -------------------------------------------------------------------------------


def text_check(
    view: "GraphView",
    content: "HiddenContent",
    question: Question,
    trace: Trace,
    requests: Sequence["CapturedRequest"],
    trace_ids: str,
) -> tuple[LeakStatus, list[LeakEvidence]]:
    """Hidden text or ids in the requests (in the answer when the unit asked no model)."""
    if not requests:
        found = list(answer_leaks(content, question, trace))
        return ("leaked" if found else "not-checkable"), found
    found = list(request_text_leaks(content, question, requests))
    if found:
        return "leaked", found
    if trace_ids == "own" and not view.hidden.entities:  # a paraphrase of hidden text is not found
        return "not-checkable", []
    return "clean", []


def answer_leaks(content: "HiddenContent", question: Question, trace: Trace) -> Iterator[LeakEvidence]:
    """Hidden names, sentences and ids in an answer the system wrote without asking a model."""
    from .kb.hidden import joined, tokens

    answer = trace.answer or ""
    excuse = joined(tokens(" ".join([question.question, *(question.choices or [])])))
    for match in content.find(answer, excuse):
        yield LeakEvidence(
            check="request_text",
            kind=match.kind,
            item=match.item,
            where="answer (no LLM request)",
            snippet=snippet(match.text),
        )
    for item in ids_in(answer, HiddenIds(content.view, content)):
        yield LeakEvidence(check="request_text", kind="id", item=item, where="answer (no LLM request)")


def request_text_leaks(
    content: "HiddenContent", question: Question, requests: Sequence["CapturedRequest"]
) -> Iterator[LeakEvidence]:
    """Hidden text and ids in the unit's requests, each finding once, with the first request it
    appeared in. Each distinct message is scanned once, in the first request that sends it (agents
    resend their history), against the question, the model's replies received before that request
    and the assistant messages before it (the model's own words, also where a resumed trajectory
    replays its recorded replies without asking the model)."""
    from .kb.hidden import joined, tokens

    hidden = HiddenIds(content.view, content)
    reported: set[tuple[str, str]] = set()
    for number, request, text, excuse in evidence_texts(question, requests):
        where = f"request {number}" + (f" ({request.call.purpose})" if request.call.purpose else "")
        found = [(m.kind, m.item, m.text) for m in content.find(text, excuse)]
        found += [("id", item, item) for item in ids_in(text, hidden) if joined(tokens(item)) not in excuse]
        for kind, item, shown in found:
            if (kind, item) not in reported:
                reported.add((kind, item))
                yield LeakEvidence(check="request_text", kind=kind, item=item, where=where, snippet=snippet(shown))


def evidence_texts(question: Question, requests: Sequence["CapturedRequest"]) -> Iterator[tuple[int, Any, str, str]]:
    """(request number, request, message, excuse) for each distinct message a unit sent that is not
    the model's own (each once, in the first request that sends it), with the words it is excused
    by: the question's, the model's replies received before that request and the assistant
    messages before it (joined tokens)."""
    from .kb.hidden import joined, tokens

    replies = sorted((r for r in requests if r.reply), key=lambda r: r.replied)
    excuse_words = tokens(" ".join([question.question, *(question.choices or [])]))
    scanned: set[str] = set()
    used = 0
    for number, request in enumerate(requests, 1):
        while used < len(replies) and replies[used].replied < request.sent:
            excuse_words += tokens(replies[used].reply)
            used += 1
        for role, text in request.messages:
            if role == "assistant":
                excuse_words += tokens(text)
            elif text not in scanned:
                scanned.add(text)
                yield number, request, text, joined(excuse_words)


@lru_cache(maxsize=1)
def _redactor() -> Any:
    from .secrets import Redactor

    return Redactor.for_run()


def snippet(text: str) -> str:
    """Evidence as stored: redacted and short."""
    clipped = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "…"
    return _redactor().text(clipped)


# -- (d) no effect -----------------------------------------------------------------------------------


def no_effect(
    view: "GraphView",
    content: "HiddenContent",
    question: Question,
    requests: Sequence["CapturedRequest"],
    baseline: Trace | None,
    baseline_requests: Sequence["CapturedRequest"] | None,
) -> tuple[LeakStatus, list[LeakEvidence]]:
    """``no-effect`` when hidden items reached the baseline's prompts and every request equals the baseline's."""
    if baseline is None or not baseline_requests:
        return "not-checkable", []
    before = [r.call.request_hash for r in baseline_requests]
    if None in before:  # a baseline recorded before requests were hashed
        return "not-checkable", []
    after = [request.call.request_hash for request in requests]
    if Counter(after) != Counter(before):  # the requests changed: the intervention took effect
        return "clean", []
    read = [item for _, item, _ in hidden_ids(view, content, baseline)]
    reached = reached_prompts(content, question, read, baseline_requests)
    if not reached:
        return "clean", []
    hid = ", ".join(reached[:5]) + (", …" if len(reached) > 5 else "")
    return "no-effect", [
        LeakEvidence(
            check="no_effect",
            kind="requests",
            where=f"{len(after)} request(s)",
            snippet=f"identical to the baseline's, though the view hides {hid}, which reached the baseline's prompts",
        )
    ]


def reached_prompts(
    content: "HiddenContent", question: Question, items: Iterable[str], prompts: Sequence["CapturedRequest"]
) -> list[str]:
    """The ``items`` whose content the prompts showed beyond the question: the id, a hidden name or
    sentence of it, or (a relation) one line with both ends' names and its label, not all from the question."""
    from .kb.hidden import joined, tokens

    wanted = list(dict.fromkeys(items))
    asked = joined(tokens(" ".join([question.question, *(question.choices or [])])))
    texts = list(dict.fromkeys(text for request in prompts for _, text in request.messages))
    shown = {word for text in texts for word in ids_in(text, frozenset(wanted)) if joined(tokens(word)) not in asked}
    shown |= {m.item for text in texts for m in content.find(text, asked)}
    lines = [joined(tokens(line)) for text in texts for line in text.splitlines()]
    index = content.index
    for item in wanted:
        if item in shown or item not in index.relation_ends:
            continue
        parts = [joined(tokens(index.names.get(end))) for end in index.relation_ends[item]]
        parts.append(joined(tokens((index.relation_labels.get(item) or "").replace("_", " "))))  # born_in: "born in"
        if (
            all(p.strip() for p in parts)
            and not all(p in asked for p in parts)
            and any(all(p in line for p in parts) for line in lines)
        ):
            shown.add(item)
    return [item for item in wanted if item in shown]


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
    records = list(records)
    counts = leak_counts(records)
    if not counts:
        return own_index_lines(records)
    total = sum(counts.values(), Counter())
    lines = [
        f"leak guard: {sum(total.values())} intervention unit(s) checked: "
        + ", ".join(f"{total[s]} {s}" for s in STATUSES if total[s] or s in ("clean", "leaked"))
    ]
    for status in ("leaked", "suspect", "no-effect", "no-op", "not-checkable"):
        lines += [
            f"  {status}: {system} x {condition}: {c[status]} unit(s)"
            for (system, condition), c in counts.items()
            if c[status]
        ]
    if any(total[s] for s in LEFT_OUT):
        lines.append(
            "  leaked, no-effect, no-op and not-checkable units are left out of the intervention statistics "
            "(leak_guard.include_leaked: true keeps leaked ones); see the report's leak guard section"
        )
    return lines + own_index_lines(records)
