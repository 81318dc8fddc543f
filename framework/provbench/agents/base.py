"""The base of LLM-backed systems: validated options, one guarded LLM call, reply parsing,
answer finishing and citation splitting; and :class:`OneShotSystem` (prompt once, answer once).

A system built on these never raises for model misbehaviour: a failing LLM call (after the
client's retries) marks the trace ``failed`` with an ``error`` step; an empty answer is recorded
as ``outcome="abstained"`` with ``answer=None``.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..model import Citations, Question, Trace
from ..plugin_api import Environment, System


class SystemOptions(BaseModel):
    """Options every LLM system accepts. Subclasses add their own fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # 512 fits the longest reply answer_schema allows (~450 tokens), so the cap never cuts its JSON.
    max_tokens: int = Field(512, ge=16, le=8192, description="cap on each generated reply")
    temperature: float = Field(0.0, ge=0.0, le=2.0)


class LLMSystem(System):
    """Validated options (``Options``, checked by the Plugin base), a guarded LLM call and
    answer finishing.

    ``question_template`` / ``choices_template`` word the question for the model; a paper's
    systems set their own.
    """

    Options: ClassVar[type[SystemOptions]] = SystemOptions
    question_template: ClassVar[str] = "Question: {question}"
    choices_template: ClassVar[str] = "Options: {choices}"

    def new_trace(self, question: Question) -> Trace:
        return Trace(question_id=question.id, system=self.name)

    def instructions(self) -> list[str]:
        """The fixed words of the question's wording; a system adds its own prompts."""
        return fixed_parts(self.question_template, self.choices_template)

    def question_text(self, question: Question) -> str:
        text = self.question_template.format(question=question.question)
        if question.choices:
            text += "\n" + self.choices_template.format(choices=choices_text(question))
        return text

    def chat(
        self,
        env: Environment,
        trace: Trace,
        messages: list[dict],
        *,
        schema: dict | None,
        purpose: str,
        max_tokens: int | None = None,
    ) -> Any | None:
        """One LLM call; on a persistent LLM failure the trace is marked failed and None returned."""
        from ..llm import LLMError

        try:
            return env.llm.chat(
                messages,
                schema=schema,
                max_tokens=max_tokens or self.options.max_tokens,
                temperature=self.options.temperature,
                seed=env.seed,
                purpose=purpose,
                trace=trace,
            )
        except LLMError as err:
            trace.add_step("error", tool="llm", error=str(err))
            trace.outcome, trace.error = "failed", f"LLM call failed: {err}"
            return None

    def finish_answer(self, trace: Trace, answer: Any) -> None:
        """Set the answer: numbers become text, an empty answer is an abstention."""
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = str(answer)  # a year or a count given as a JSON number
        text = answer.strip() if isinstance(answer, str) else ""
        trace.answer = text or None
        trace.outcome = "answered" if text else "abstained"


OPTION_LETTERS = string.ascii_uppercase


def lettered_choices(choices: list[str], sep: str = "; ") -> str:
    """Options as "A. text; B. text": lettered, so a reply can name one by letter or by its text
    and neither reading is mistaken for the other (an unlettered "a sequence" is not option A)."""
    if len(choices) > len(OPTION_LETTERS):
        raise ValueError(f"{len(choices)} choices: at most {len(OPTION_LETTERS)} can be lettered")
    return sep.join(f"{letter}. {text}" for letter, text in zip(OPTION_LETTERS, choices))


def fixed_parts(*templates: str) -> list[str]:
    """The literal text of ``str.format`` templates: what a prompt built from them sends whatever
    fills it (for :meth:`System.instructions <provbench.plugin_api.System.instructions>`). Parts
    of one word ("Question: ", " of ") are left out: the leak guard removes declared text from
    every request, and a lone common word would go from retrieved text too."""
    parts = [literal for template in templates for literal, *_ in string.Formatter().parse(template)]
    return [part for part in parts if len(re.findall(r"\w+", part)) >= 2]


def choices_text(question: Question) -> str:
    """A question's options as a system shows them: lettered ("A. ...; B. ...") where the dataset
    names its answers by option letter (MedMCQA, MMLU: the gold answer is a letter), so a reply
    can give the letter or the text; as plain texts where it scores the text itself (FEVER's
    labels, yes/no), so a reply gives that text. Only the answer's form is read, never its value."""
    choices = question.choices or []
    if question.answer in OPTION_LETTERS[: len(choices)] and question.answer not in choices:
        return lettered_choices(choices)
    return "; ".join(choices)


def reply_object(resp: Any) -> dict | None:
    """The reply as a JSON object: the LLM layer's parse, else the first {...} in the text."""
    from ..llm.client import parse_json

    if isinstance(getattr(resp, "data", None), dict):
        return resp.data
    text = getattr(resp, "text", "") or ""
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if not match:
        return None
    value = parse_json(match.group(0))
    return value if isinstance(value, dict) else None


@dataclass
class ReplayedReply:
    """A recorded reply standing in for the LLM's response when a run is replayed (``Step.reply``)."""

    text: str
    data: Any = None


def replayed_reply(text: str) -> ReplayedReply:
    """A recorded reply parsed as the LLM client parses a schema-constrained one: what
    :func:`reply_object` and a system's parsing read, without an LLM call."""
    from ..llm.client import parse_json

    return ReplayedReply(text=text, data=parse_json(text))


def record_retrieved(trace: Trace, kind: str, item_id: str, score: float | None = None) -> None:
    """Deprecated: :meth:`provbench.model.Trace.record_retrieved`."""
    trace.record_retrieved(kind, item_id, score)


# Names of the citation lists in model replies and tool arguments, and the Citations field each fills.
CITATION_FIELDS = {
    "cited_entities": "entities",
    "cited_relationships": "relationships",
    "cited_textunits": "text_units",
    "cited_communities": "communities",
}


def string_list(value: Any) -> list[str]:
    """A reply's citation list as unique non-empty strings; anything else becomes empty."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(v.strip() for v in value if isinstance(v, str) and v.strip()))


def split_citations(reply: dict, shown: dict[str, set[str]]) -> tuple[Citations, dict[str, list[str]]]:
    """Citations whose ids were shown to the model, and the ones that were not (by field)."""
    kept: dict[str, list[str]] = {}
    dropped: dict[str, list[str]] = {}
    for reply_key, field in CITATION_FIELDS.items():
        ids = string_list(reply.get(reply_key))
        kept[field] = [i for i in ids if i in shown.get(field, set())]
        bad = [i for i in ids if i not in shown.get(field, set())]
        if bad:
            dropped[field] = bad
    return Citations(**kept), dropped


def clip(text: str, limit: int) -> str:
    """Whitespace collapsed, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def snippet(text: str | None, limit: int = 120) -> str:
    text = (text or "").strip().replace("\n", " ")
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


MAX_ANSWER_CHARS = 200
MAX_CITATIONS = 5
MAX_CITATION_CHARS = 64


def answer_schema(*citation_keys: str, confidence: bool = False) -> dict:
    """Bounded lengths, so a grammar-constrained reply closes its JSON before max_tokens cuts it;
    ``confidence`` adds a stated confidence in [0, 1] (paper 002's calibration comparison)."""
    properties: dict[str, Any] = {"answer": {"type": "string", "maxLength": MAX_ANSWER_CHARS}}
    if confidence:
        properties["confidence"] = {"type": "number", "minimum": 0, "maximum": 1}
    for key in citation_keys:
        properties[key] = {
            "type": "array",
            "maxItems": MAX_CITATIONS,
            "items": {"type": "string", "maxLength": MAX_CITATION_CHARS},
        }
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def stated_confidence(value: Any) -> float | None:
    """A confidence in [0, 1] as the model stated it; None when it gave none or an invalid one."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0
    return float(value) if ok else None


class OneShotOptions(SystemOptions):
    ask_confidence: bool = Field(False, description="also ask for a confidence in [0, 1] (off: prompts unchanged)")
    confidence_bar: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="abstain when the stated confidence is below this (needs ask_confidence; off: every answer stands)",
    )

    @model_validator(mode="after")
    def _bar_needs_a_confidence(self) -> "OneShotOptions":
        if self.confidence_bar is not None and not self.ask_confidence:
            raise ValueError("confidence_bar needs ask_confidence: true (the bar applies to the stated confidence)")
        return self


class OneShotSystem(LLMSystem):
    """Build a prompt once, generate once, parse the answer and the citations shown in the prompt.

    A subclass builds ``messages`` and the ``shown`` ids (Citations field -> ids) and calls
    :meth:`generate`; ``citation_keys`` are the reply's citation lists (keys of CITATION_FIELDS).
    With ``ask_confidence`` the last message asks for a confidence (``confidence_request``) and
    ``trace.confidence`` records the stated value; with ``confidence_bar`` as well, an answer whose
    stated confidence is below the bar (or missing) becomes an abstention, the answer held back in
    ``artifacts["candidate_answer"]`` (paper 002's gate, applied to a one-shot system).
    """

    Options: ClassVar[type[SystemOptions]] = OneShotOptions
    citation_keys: ClassVar[tuple[str, ...]] = ()
    confidence_request: ClassVar[str] = (
        'Also give "confidence": the probability, from 0 to 1, that your answer is right.'
    )

    def instructions(self) -> list[str]:
        return [*super().instructions(), self.confidence_request]

    def generate(self, env: Environment, trace: Trace, messages: list[dict], shown: dict[str, set[str]]) -> Trace:
        ask = getattr(self.options, "ask_confidence", False)
        if ask:
            messages = [
                *messages[:-1],
                {**messages[-1], "content": messages[-1]["content"] + "\n" + self.confidence_request},
            ]
        resp = self.chat(
            env, trace, messages, schema=answer_schema(*self.citation_keys, confidence=ask), purpose="answer"
        )
        if resp is None:
            return trace
        reply = reply_object(resp)
        if reply is None:
            trace.add_step("error", tool="generate", error=f"reply is not a JSON object: {snippet(resp.text)}")
            trace.outcome, trace.error = "failed", "the model's reply was not valid JSON"
            return trace
        citations, dropped = split_citations(reply, shown)
        trace.citations = citations
        trace.add_step(
            "generation", tool="generate", result={"answer": reply.get("answer"), "citations": citations.model_dump()}
        )
        if dropped:
            trace.add_step(
                "rejection",
                tool="generate",
                arguments={"dropped_citations": dropped},
                error="cited ids that were not in the prompt were dropped",
            )
        self.finish_answer(trace, reply.get("answer"))
        if ask:
            trace.confidence = stated_confidence(reply.get("confidence"))
            self.gate(trace)
        return trace

    def gate(self, trace: Trace) -> None:
        """Abstain below ``confidence_bar``: no answer, nothing cited, the answer held back."""
        bar = getattr(self.options, "confidence_bar", None)
        if bar is None or trace.outcome != "answered" or (trace.confidence is not None and trace.confidence >= bar):
            return
        trace.artifacts["candidate_answer"] = trace.answer
        trace.artifacts["abstention_reason"] = f"stated confidence {trace.confidence} below {bar}"
        trace.answer, trace.outcome, trace.citations = None, "abstained", Citations()
