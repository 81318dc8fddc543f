"""The control LLMs as an LLM backend: model ids ``control:<behaviour>`` (``control:oracle``, ...).

A control needs the run's questions (their gold evidence): the runner hands them over through
the backend's optional ``bind_questions(questions)`` before any unit runs. For each request the
control finds which question the prompt is about (the longest bound question whose text the
prompt contains; none for a prompt that names no question, such as a passage to extract from)
and replies as its behaviour says (:mod:`.behaviours`, :mod:`.replies`). Every control is also
the deterministic judge of ragas' faithfulness prompts (:mod:`.judge`), so a run whose model is a
control scores RAGAS faithfulness by rule; ``control:judge`` is that judge alone (a model id for a
suite's judge), and answers nothing else.

Replies depend on the messages, the schema and the bound gold only, so they are cached like any
model's: ``config()`` holds the behaviour, a version and a digest of the bound questions, so
other questions or a newer control never reuse an old reply.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

from ..errors import UserError
from ..gold import normalize_text
from ..llm.backends import reply
from ..model import Question
from .behaviours import BEHAVIOURS, Behaviour
from .agent import agent_action
from .judge import judge_reply
from .reading import PromptReading
from .replies import fill_object, is_action_schema, text_reply

PREFIX = "control"
JUDGE = "judge"  # control:judge: the judge alone
VERSION = 4  # bump when a behaviour changes what it replies (4: main's judge and paper 001's parse)


class ControlBackend:
    """A control LLM with a known behaviour (see :mod:`provbench.controls.behaviours`)."""

    def __init__(self, model_id: str, behaviour: Behaviour | None) -> None:
        self.model_id = model_id
        self.behaviour = behaviour  # None: the judge alone
        self.questions: list[tuple[str, Question]] = []
        self.digest = ""

    def bind_questions(self, questions: Iterable[Question]) -> None:
        """The run's questions: where the control reads gold evidence (longest text first, so a
        question whose text contains another's is found first)."""
        chosen = [q for q in questions if q.question.strip()]
        self.questions = sorted(((normalize_text(q.question), q) for q in chosen), key=lambda p: -len(p[0]))
        content = [
            [q.id, q.question, q.answer, q.gold.model_dump(mode="json") if q.gold else None]
            for q in sorted(chosen, key=lambda q: q.id)
        ]
        self.digest = hashlib.sha256(json.dumps(content, ensure_ascii=False).encode()).hexdigest()[:16]

    def config(self) -> dict[str, Any]:
        return {
            "behaviour": self.behaviour.name if self.behaviour else JUDGE,
            "version": VERSION,
            "questions": self.digest,
        }

    def question_in(self, messages: list[dict[str, Any]]) -> Question | None:
        text = normalize_text("\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "assistant"))
        return next((q for normalized, q in self.questions if normalized in text), None)

    def price(self, prompt_tokens: int, completion_tokens: int) -> tuple[float, str]:
        return 0.0, "local"  # rules on this machine: nothing to pay

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        judged = judge_reply(messages, request.get("schema"))
        if judged is not None:
            return self._reply(messages, json.dumps(judged))
        if self.behaviour is None:
            raise ValueError(
                f"{self.model_id} only judges (the ragas prompts of provbench.controls.judge.RULES); "
                "as a system's model use a control behaviour: " + ", ".join(BEHAVIOURS)
            )
        if self.behaviour.schema_following:
            from ..llm.offline import SchemaFollowingBackend

            return SchemaFollowingBackend().complete(request)
        return self._reply(
            messages, self.reply_text(PromptReading(messages, self.question_in(messages)), request.get("schema"))
        )

    @staticmethod
    def _reply(messages: list[dict[str, Any]], text: str) -> dict[str, Any]:
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in messages)
        return reply(text, prompt_tokens=prompt_words, completion_tokens=len(text.split()))

    def reply_text(self, reading: PromptReading, schema: dict | None) -> str:
        if schema is None:
            return text_reply(self.behaviour, reading)
        if is_action_schema(schema):
            return json.dumps(agent_action(self.behaviour, reading, schema))
        return json.dumps(fill_object(self.behaviour, reading, schema))


def make_control(model_id: str, /) -> ControlBackend:
    """Known-truth control LLMs: `control:<behaviour>` (oracle, uses-uncited, parametric, ...),
    and `control:judge`, the rule-based judge of the RAGAS scores (provbench.controls.judge).

    Behaviours: oracle, uses-uncited, parametric, cites-everything, ignores-context, noise-sensitive, random."""
    name = model_id.removeprefix(f"{PREFIX}:")
    if name == JUDGE:
        return ControlBackend(f"{PREFIX}:{JUDGE}", None)
    if name not in BEHAVIOURS:
        raise UserError(f"unknown control LLM {model_id!r}; known: " + ", ".join(f"{PREFIX}:{n}" for n in BEHAVIOURS))
    return ControlBackend(f"{PREFIX}:{name}", BEHAVIOURS[name])


def control_model_id(name: str) -> str:
    """A controls block's LLM as a model id: a behaviour's name means ``control:<name>``."""
    return name if ":" in name else f"{PREFIX}:{name}"
