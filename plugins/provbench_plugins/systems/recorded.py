"""The ``recorded`` system: answers a system already produced, replayed from a file and scored like a live run.

The file (option ``path``; JSON lines, or a ``.json`` list) holds one object per question::

    {"id": "q1", "answer": "Paris", "confidence": 0.9,
     "contexts": ["tu-12", "the Eiffel Tower stands in Paris"],
     "citations": ["tu-12"],
     "trajectory": [{"tool": "search", "arguments": {"query": "tower"}, "shown": ["tu-12", "e-3"]}]}

Only ``id`` is required; ``answer`` null or missing is an abstention. Every item of ``contexts``,
``citations`` and a step's ``shown`` is an id of the knowledge base (text unit, entity, relation or
community) or a text, mapped to the text units that contain it (or that it contains); a text that
maps to none is kept on the trace (``artifacts["unmapped"]``) and counts as no evidence. So accuracy,
EM/F1, RAGAS faithfulness and the gold-evidence scores run on what the file says the system read and cited.

Nothing is re-run, so no intervention can change what this system saw: a suite whose interventions
apply to it is refused when it is loaded (:attr:`provbench.plugin_api.System.live`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from provbench.errors import UserError
from provbench.jsonlines import located, read_json_lines
from provbench.model import Question, Trace
from provbench.plugin_api import Environment, System

KINDS = ("text_unit", "entity", "relationship", "community")
CITED = {"text_unit": "text_units", "entity": "entities", "relationship": "relationships", "community": "communities"}


class RecordedStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought: str | None = None
    shown: list[str] = Field(default_factory=list, description="ids or texts this step showed the system")


class RecordedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    answer: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    contexts: list[str] = Field(default_factory=list, description="ids or texts the system read")
    citations: list[str] = Field(default_factory=list, description="ids or texts the answer cites")
    trajectory: list[RecordedStep] = Field(default_factory=list)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _records(path: Path) -> list[tuple[int, Any]]:
    """(line or position, object) pairs of a JSON-lines file or a JSON list."""
    if path.suffix.lower() != ".json":
        return list(read_json_lines(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read recorded answers: {exc}") from None
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON list of answer objects, got {type(data).__name__}")
    return list(enumerate(data, 1))


def read_answers(path: Path) -> dict[str, RecordedAnswer]:
    """The file's answers by question id; a UserError naming file, line (or item) and field on any problem."""
    if not path.is_file():
        raise UserError(f"recorded answers file not found: {path} (relative paths are from the working directory)")
    answers: dict[str, RecordedAnswer] = {}
    for line, obj in _records(path):
        where = located(path, line) if path.suffix.lower() != ".json" else f"{path}: item {line}"
        try:
            answer = RecordedAnswer.model_validate(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(record)"
            raise UserError(f"{where}: field {field!r}: {err['msg']}") from None
        if answer.id in answers:
            raise UserError(f"{where}: field 'id': question {answer.id!r} is answered twice in this file")
        answers[answer.id] = answer
    return answers


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


class EvidenceResolver:
    """Maps a recorded item (an id or a text) to the knowledge base's (kind, id) pairs."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self._texts: list[tuple[str, str]] | None = None

    def kind_of(self, item: str) -> str | None:
        lookups = (self.view.text_unit, self.view.entity, self.view.relation, self.view.community)
        return next((kind for kind, lookup in zip(KINDS, lookups) if lookup(item) is not None), None)

    def text_units_holding(self, text: str) -> list[str]:
        if self._texts is None:  # read once per unit: a user's KB is small enough to scan
            ids = list(self.view.text_unit_ids())
            self._texts = [(tu.id, _normal(tu.text)) for tu in self.view.text_units(ids)]
        wanted = _normal(text)
        return [tid for tid, body in self._texts if wanted and (wanted in body or body in wanted)]

    def resolve(self, item: str) -> list[tuple[str, str]]:
        kind = self.kind_of(item)
        if kind is not None:
            return [(kind, item)]
        return [("text_unit", tid) for tid in self.text_units_holding(item)]


class RecordedSystem(System):
    """Replays a file of answers (with optional contexts, citations and trajectories)."""

    name = "recorded"
    live: ClassVar[bool] = False

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        path: str = Field(description="the answers file: JSON lines, or a .json list of answer objects")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.answers = read_answers(Path(self.options.path).expanduser())  # at suite load: errors come early

    @property
    def expected_llm_calls(self) -> float:
        return 0.0

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        recorded = self.answers.get(question.id)
        if recorded is None:
            trace.outcome, trace.error = (
                "failed",
                f"no recorded answer for question {question.id!r} in {self.options.path}",
            )
            return trace
        resolver, unmapped = EvidenceResolver(env.view), []

        def items(values: list[str]) -> list[tuple[str, str]]:
            found = []
            for value in values:
                pairs = resolver.resolve(value)
                found += pairs
                if not pairs:
                    unmapped.append(value)
            return found

        for step in recorded.trajectory:
            shown = items(step.shown)
            grouped = {kind: [i for k, i in shown if k == kind] for kind in KINDS}
            trace.add_step(
                "tool_call" if step.tool else "retrieval",
                tool=step.tool,
                arguments=step.arguments,
                thought=step.thought,
                shown={k: v for k, v in grouped.items() if v},
            )
            self._read(trace, shown)
        self._read(trace, items(recorded.contexts))
        for kind, item_id in items(recorded.citations):
            ids = getattr(trace.citations, CITED[kind])
            if item_id not in ids:
                ids.append(item_id)
        if unmapped:
            trace.artifacts["unmapped"] = list(dict.fromkeys(unmapped))
        answered = bool((recorded.answer or "").strip())
        trace.answer, trace.confidence = (recorded.answer if answered else None), recorded.confidence
        trace.outcome = "answered" if answered else "abstained"
        return trace

    @staticmethod
    def _read(trace: Trace, pairs: list[tuple[str, str]]) -> None:
        """What a trace records as read: text units, visited entities, and every item as retrieved."""
        for kind, item_id in pairs:
            if kind == "text_unit":
                trace.read_text_unit(item_id)
            elif kind == "entity":
                trace.visit(item_id)
            elif kind == "community":
                trace.read_community(item_id)
            trace.record_retrieved(kind, item_id)
