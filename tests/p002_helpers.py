"""A test stand-in for a known-truth reader over curriculum-mini: it answers a question right, and
confidently, exactly when its prompt holds every edge of the question's gold chain
(``GoldEvidence.held_in``), citing the gold lines it saw; otherwise it names another concept of the
prompt with low confidence. Like the control oracle it focuses the next round on the first gold
concept its prompt does not show yet (the questions name no relation, so the loop's frontier ranker
follows the reader's focus, not the question's words). It reads the gold from the loader's questions
only, as the known-truth controls do, and fills the planning loop's and the one-shot systems'
replies alike."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from provbench.model import Question
from provbench.testing import scripted_llm

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "datasets" / "curriculum-mini"
LINE_ID = re.compile(r"^\[([^\]]+)\] (.*)$")
CONCEPT_NAME = re.compile(r"^(.*?) \(")


class ChainOracle:
    def __init__(self, questions: list[Question]):
        self.by_text = {q.question: q for q in questions}

    def question_of(self, prompt: str) -> Question | None:
        for line in prompt.splitlines():
            if line.startswith("Question: ") and line[len("Question: ") :] in self.by_text:
                return self.by_text[line[len("Question: ") :]]
        return None

    def __call__(self, messages: list[dict]) -> dict[str, Any]:
        prompt = "\n".join(m["content"] for m in messages)
        question = self.question_of(prompt)
        lines = [LINE_ID.match(line) for line in prompt.splitlines()]
        shown = [(m.group(1), m.group(2)) for m in lines if m]
        held = question is not None and question.gold is not None and question.gold.held_in(prompt)
        if held:
            gold_lines = [i for i, text in shown if any(t.held_in_line(text.casefold()) for t in question.gold.triples)]
            gold_names = {n.casefold() for n in question.gold.entities}
            concepts = [
                i
                for i, text in shown
                if i.startswith("ent:") and (CONCEPT_NAME.match(text) or LINE_ID).group(1).casefold() in gold_names
            ]
            return reply(question.answer, 0.95, concepts, [i for i in gold_lines if i.startswith("rel:")])
        names = [m.group(1) for i, text in shown if i.startswith("ent:") and (m := CONCEPT_NAME.match(text))]
        wrong = next((n for n in names if question is None or n != question.answer), "nothing")
        return reply(wrong, 0.2, [], [], focus=self.next_focus(question, prompt))

    @staticmethod
    def next_focus(question: Question | None, prompt: str) -> str:
        """The first gold concept the prompt does not name yet (where to look next)."""
        shown = prompt.casefold()
        gold = question.gold.entities if question is not None and question.gold is not None else []
        return next((name for name in gold if name.casefold() not in shown), "")


def reply(answer: str, confidence: float, concepts: list[str], relations: list[str], focus: str = "") -> dict[str, Any]:
    return {
        "answer": answer,
        "confidence": confidence,
        "reason": "from the gold chain" if relations else "a guess",
        "supporting_concepts": concepts,
        "supporting_relations": relations,
        "focus": focus,
        "relation_types": [],
        "cited_entities": concepts[:5],
        "cited_relationships": relations[:5],
    }


def oracle_llm(questions: list[Question], calls: int = 400):
    """A scripted LLM whose every reply comes from the oracle."""
    oracle = ChainOracle(questions)
    return scripted_llm([oracle] * calls)
