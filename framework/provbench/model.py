"""The data model shared by every part of provbench.

A system run produces a :class:`Trace`; the runner wraps it in a :class:`RunRecord` (one per
question x system x condition x repeat); a run directory holds those records and a
:class:`RunManifest`. Interventions and metrics read traces and records, nothing else.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .gold import GoldEvidence


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Question(BaseModel):
    """One benchmark item, whatever the dataset."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    answer: str
    aliases: list[str] = Field(default_factory=list, description="other accepted answers")
    choices: list[str] | None = Field(default=None, description="options of a multiple-choice item")
    dataset: str = ""
    type: str = Field(default="", description="dataset's own question type, e.g. 'compositional'")
    category: str = Field(default="", description="provbench's category, e.g. 'local-path'")
    metadata: dict[str, Any] = Field(default_factory=dict)
    gold: GoldEvidence | None = Field(
        default=None,
        description="what answers it, in the dataset's terms (provbench.gold); None when the dataset gives none",
    )


class LLMCall(BaseModel):
    """Accounting for one chat completion as seen by a system."""

    model: str
    purpose: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    # a cache hit: the latency of the call that first produced the reply (None if the entry
    # predates this field); a fresh call: None (it is latency_s)
    original_latency_s: float | None = None
    attempts: int = 1
    error: str | None = None
    # sha256 of the request's messages and schema (provbench.capture.request_hash): what the model
    # was shown, stable across processes and resumed runs; the leak guard's "no effect" check
    # compares these. The request's text is in the record's ``requests`` log (redacted, compressed).
    request_hash: str | None = None
    # US dollars for its tokens (provbench.costs): None when unknown, never 0 for "no price";
    # a cache hit keeps the price of its tokens (``cached`` says this run did not pay it)
    cost_usd: float | None = None
    cost_source: Literal["litellm", "custom", "local", "unknown"] = "unknown"


EvidenceKind = Literal["entity", "relationship", "text_unit", "community", "path", "fact"]


class Fact(BaseModel):
    """A (subject, relation, object) statement a system derived or was shown, with its confidence.

    ``source_ids``: the text units, documents or relations it came from, so hiding those can hide it.
    """

    id: str
    subject: str
    relation: str
    object: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    source_ids: list[str] = Field(default_factory=list)


class EvidencePath(BaseModel):
    """An ordered path through the graph: entities[i] -relations[i]- entities[i+1].

    ``relations`` holds relation ids (or labels when the path was built outside the KB).
    """

    id: str
    entities: list[str]
    relations: list[str] = Field(default_factory=list)
    description: str = ""


class RetrievedItem(BaseModel):
    kind: EvidenceKind
    id: str
    score: float | None = None


class Citations(BaseModel):
    entities: list[str] = Field(default_factory=list)
    relationships: list[str] = Field(default_factory=list)
    text_units: list[str] = Field(default_factory=list)
    communities: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in type(self).model_fields)


class Step(BaseModel):
    """One step of a trajectory: a tool call, a retrieval, or a rejected model output.

    ``shown``: ids (by kind: ``entity``, ``relationship``, ``text_unit``, ``community``) whose
    content this step's result showed the model (a name, a relation line, a text, a report); ``{}``
    for a retrieval that found nothing, None when the step reads nothing (a submission) or the
    system does not record it. The gold-trajectory scores and the leave-one-step-out intervention
    read it. ``reply``: the model's reply text for this step, as received, so the run can be
    replayed up to a step (:meth:`provbench.plugin_api.System.resume_from_step`).
    """

    index: int
    kind: Literal["tool_call", "retrieval", "generation", "rejection", "error"]
    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    thought: str | None = None
    shown: dict[str, list[str]] | None = None
    reply: str | None = None


Outcome = Literal["answered", "abstained", "budget_exhausted", "failed"]


class Trace(BaseModel):
    """Everything a system did for one question.

    ``visited_entities``: entities whose details or neighbourhood reached the model.
    ``read_text_units``: text units whose text reached the model (Table 1's "retrieved TUs").
    ``paths`` / ``facts``: path and fact evidence the system built or was shown (citable by id).
    ``artifacts``: system-specific intermediate state (e.g. a retrieved path) that
    context-level interventions perturb before the later stages re-run.
    ``outcome == "abstained"`` is a deliberate abstention (``answer`` is None), which metrics see
    as such; it is never an empty answer.
    """

    question_id: str
    system: str
    steps: list[Step] = Field(default_factory=list)
    visited_entities: list[str] = Field(default_factory=list)
    read_text_units: list[str] = Field(default_factory=list)
    read_communities: list[str] = Field(default_factory=list)
    retrieved: list[RetrievedItem] = Field(default_factory=list)
    citations: Citations = Field(default_factory=Citations)
    paths: list[EvidencePath] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    answer: str | None = None
    confidence: float | None = None
    outcome: Outcome = "answered"
    error: str | None = None
    llm_calls: list[LLMCall] = Field(default_factory=list)
    wall_time_s: float | None = Field(default=None, description="the system's own run time, set by the runner")
    artifacts: dict[str, Any] = Field(default_factory=dict)

    # -- recording helpers: keep order, never duplicate -------------------------------------
    def add_step(self, kind: str, **fields: Any) -> Step:
        step = Step(index=len(self.steps), kind=kind, **fields)
        self.steps.append(step)
        return step

    def visit(self, *entity_ids: str) -> None:
        _extend_unique(self.visited_entities, entity_ids)

    def read_text_unit(self, *text_unit_ids: str) -> None:
        _extend_unique(self.read_text_units, text_unit_ids)

    def read_community(self, *community_ids: str) -> None:
        _extend_unique(self.read_communities, community_ids)

    def record_retrieved(self, kind: str, item_id: str, score: float | None = None) -> None:
        """Add to ``retrieved`` once per (kind, id)."""
        if not any(r.kind == kind and r.id == item_id for r in self.retrieved):
            self.retrieved.append(RetrievedItem(kind=kind, id=item_id, score=score))

    def footprint(self) -> dict[str, int]:
        """Table 1 of paper 000: retrieved/cited text units, visited/cited entities."""
        return {
            "retrieved_text_units": len(self.read_text_units),
            "cited_text_units": len(set(self.citations.text_units)),
            "visited_entities": len(self.visited_entities),
            "cited_entities": len(set(self.citations.entities)),
        }

    @property
    def tokens(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for c in self.llm_calls)

    @property
    def abstained(self) -> bool:
        return self.outcome == "abstained"

    def path(self, path_id: str) -> EvidencePath | None:
        return next((p for p in self.paths if p.id == path_id), None)

    def fact(self, fact_id: str) -> Fact | None:
        return next((f for f in self.facts if f.id == fact_id), None)


def _extend_unique(target: list[str], items: Any) -> None:
    seen = set(target)
    for item in items:
        if item not in seen:
            target.append(item)
            seen.add(item)


BASELINE = "baseline"


class UnitKey(BaseModel):
    """Identity of one unit of work; a run directory holds at most one record per key.

    ``variant`` names one variant of an enumerated intervention (e.g. "node:2"); "" otherwise.
    """

    model_config = ConfigDict(frozen=True)

    question_id: str
    system: str
    condition: str = BASELINE
    repeat: int = 0
    variant: str = ""

    def as_str(self) -> str:
        base = f"{self.system}|{self.condition}|{self.repeat}|{self.question_id}"
        return f"{base}|{self.variant}" if self.variant else base


class VariantInfo(BaseModel):
    """Which variant of an enumerated intervention a record ran, in words a reader can follow."""

    id: str
    description: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


# suspect: a cited id the view hides that no captured text showed (the model may have guessed it);
# no-op: the intervention hid nothing beyond what the run's own view hides
LeakStatus = Literal["clean", "leaked", "suspect", "no-effect", "no-op", "not-checkable"]


class LeakEvidence(BaseModel):
    """One thing the leak guard found: a hidden id in the trace or among the citations, hidden text
    in a request (or in an answer written without any request), or requests identical to the
    baseline's though hidden items reached its prompts. ``snippet`` is redacted and short."""

    check: Literal["trace_ids", "citations", "request_text", "no_effect"]
    kind: str = Field(
        description="what was hidden: entity, relationship, text_unit, community, name, "
        "text, description, community_text; or 'requests' for no effect"
    )
    item: str = Field(default="", description="the knowledge base's id of the hidden item")
    where: str = Field(default="", description="trace field, or the request's number and purpose")
    snippet: str = ""


class LeakCheck(BaseModel):
    """What the leak guard found for one unit under a graph-level intervention (provbench.leakguard).

    ``checks`` holds each check's own status: ``trace_ids`` (ids the view hides in the trace),
    ``citations`` (cited ids the view hides), ``request_text`` (text or ids the view hides in the
    unit's LLM requests) and ``no_effect`` (hidden items reached the baseline's prompts, yet every
    request equals the baseline's)."""

    status: LeakStatus
    checks: dict[str, LeakStatus] = Field(default_factory=dict)
    evidence: list[LeakEvidence] = Field(default_factory=list)
    requests: int = Field(default=0, description="LLM requests the unit made (captured)")
    notes: list[str] = Field(default_factory=list)
    trace_ids: Literal["kb", "own"] = Field(default="kb", description="whose ids the system's trace records")


class RequestLog(BaseModel):
    """A unit's LLM requests as the model saw them, kept so a finished run can be audited
    (``provbench audit``) and its question pages show what the model read: messages and replies,
    redacted, each distinct text once, zlib-compressed JSON in base64 (:mod:`provbench.audit`).
    Requests past the size cap keep only their hash (in the trace's ``llm_calls``) and are counted."""

    data: str = ""
    requests: int = 0
    chars: int = Field(default=0, description="characters of text kept (before compression)")
    dropped: int = Field(default=0, description="requests left out: over the size cap")


class HiddenSet(BaseModel):
    """Everything a unit's view hid (every id, not a sample), compressed as :class:`RequestLog`,
    with its size and digest, the view's time, and the intervention's notes on what it decided."""

    data: str = ""
    size: int = 0
    digest: str = ""
    as_of: str | None = None
    notes: list[str] = Field(default_factory=list)


class RunRecord(BaseModel):
    """One row of results: a question answered by a system under a condition."""

    key: UnitKey
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    gold: str = ""
    trace: Trace | None = None
    scores: dict[str, float | None] = Field(default_factory=dict)
    score_notes: dict[str, str] = Field(default_factory=dict, description="why a score is missing")
    judge_calls: list[LLMCall] = Field(default_factory=list, description="the metrics' LLM calls for this record")
    seed: int | None = None
    variant: VariantInfo | None = None
    leak_check: LeakCheck | None = Field(default=None, description="graph-level interventions only")
    requests: RequestLog | None = Field(default=None, description="what the unit's LLMs were shown and replied")
    hidden: HiddenSet | None = Field(default=None, description="graph-level interventions: the view, in full")
    started_at: str = Field(default_factory=utc_now)
    finished_at: str | None = None


class RunManifest(BaseModel):
    """What a run was: suite, models, seeds, versions. Never holds secrets."""

    run_id: str
    suite_name: str
    suite_path: str | None = None
    suite: dict[str, Any] = Field(default_factory=dict)
    suite_sha256: str = ""
    models: dict[str, str] = Field(default_factory=dict)
    seeds: list[int] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)
    git_revision: str | None = None
    plugins: dict[str, str] = Field(default_factory=dict)
    plugin_versions: dict[str, str] = Field(default_factory=dict, description="kind:name -> version")
    knowledge_base: dict[str, Any] = Field(
        default_factory=dict,
        description="the knowledge base's fingerprint and counts when the run started (empty without one)",
    )
    judged_scores: list[str] = Field(
        default_factory=list, description="score keys a judge LLM gives (the metrics' judged_scores)"
    )
    created_at: str = Field(default_factory=utc_now)
    finished_at: str | None = None
    stopped: str | None = Field(default=None, description="why units were left unrun (a budget), if any")
    redacted_questions: list[str] = Field(
        default_factory=list,
        description=(
            "questions whose dataset text looks like it holds a credential: stored as [REDACTED] in every "
            "artefact, sent to the model as written"
        ),
    )


class MetricValue(BaseModel):
    """One reported number with the counts behind it, so a reader can recompute it."""

    metric: str
    system: str
    condition: str = BASELINE
    value: float | None
    numerator: float | None = None
    denominator: float | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    note: str = ""
