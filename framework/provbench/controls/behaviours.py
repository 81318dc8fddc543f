"""The control LLMs' behaviours: each one a known truth about what its answers depend on.

=================  =========================================================================
``oracle``         answers right exactly when the prompt holds the question's gold evidence;
                   otherwise abstains where the schema allows ("I don't know"), else answers
                   "unknown" (free text) or a wrong option. Cites the gold items it saw;
                   confidence 0.95 with the evidence, 0.05 without. An agent searches towards
                   the gold (a gold entity by name, its gold relations, its text units) and
                   submits once the evidence is in its prompt.
``uses-uncited``   reads and answers as the oracle, but cites only the last gold item (the
                   last gold sentence's text unit, the last gold triple's relation, the last
                   gold entity: the end of the chain, which shares no entity with its start):
                   its answer needs evidence it did not cite.
``parametric``     always right (it "knows" the answer), with confidence 0.95; reads nothing,
                   cites nothing: an agent answers at once.
``cites-everything`` reads and answers as the oracle, and cites every id its prompt showed
                   (up to what the schema allows).
``ignores-context`` answers from the question alone (an option or a capitalised phrase of the
                   question, chosen by a hash of the question), confidence 0.9, cites nothing:
                   nothing a graph shows can change its answer. Its query parse (paper
                   001's) is the oracle's: a parse reads the question, not the context.
``noise-sensitive`` the oracle, drowned by distractors: with the gold evidence in its prompt it
                   reads it with chance 0.5 ** (distractors / 32), a distractor being a concept
                   (entity id) the prompt shows off the gold, decided by a hash of the prompt;
                   drowned, it answers as the oracle without the evidence ("unknown", 0.05).
``random``         any reply valid against the schema, chosen by a hash of the whole prompt
                   (:class:`provbench.testing.SchemaFollowingBackend`).
=================  =========================================================================

Every behaviour is deterministic: the same prompt (and the same bound questions) gives the same
reply. Gold comes from the run's questions only (:meth:`ControlBackend.bind_questions`).
"""

from __future__ import annotations

import hashlib
import re
from typing import ClassVar

from ..gold import normalize_text
from .reading import NUMBERED, PromptReading

NO_EVIDENCE_ANSWER = "unknown"
SURE, UNSURE = 0.95, 0.05
DISTRACTOR_HALF_LIFE = 32  # the noise-sensitive reader's chance of reading the evidence halves per 32 distractors
ARROW = re.compile(r"\s*->\[(.*?)\]->\s*")  # "head ->[rel]-> tail" and the chain "a->[r]->b->[s]->c"


def chain_triplets(line: str) -> list[tuple[str, str, str]]:
    """The (head, relation, tail) triplets of a relation line or chain; [] for any other line."""
    parts = ARROW.split(line.strip())
    return [(parts[i], parts[i + 1], parts[i + 2]) for i in range(0, len(parts) - 2, 2)]


PHRASE = re.compile(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)*")


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def is_abstention(option: str) -> bool:
    return "know" in option.lower()


class Behaviour:
    """The oracle; the other behaviours override what differs."""

    name: ClassVar[str] = "oracle"
    explores: ClassVar[bool] = True  # an agent searches towards the gold before answering
    reads: ClassVar[bool] = True  # extraction and paraphrase follow the text they are given
    # a question restated as a query (paper 001's parse): "gold", the gold chain the question starts;
    # "named", only the gold entities the question names
    query: ClassVar[str] = "gold"
    schema_following: ClassVar[bool] = False  # replies come from the schema-following test LLM

    def knows(self, r: PromptReading) -> bool:
        return r.held

    def confidence(self, r: PromptReading) -> float:
        return SURE if self.knows(r) else UNSURE

    def answer_text(self, r: PromptReading) -> str:
        return r.question.answer if self.knows(r) and r.question is not None else NO_EVIDENCE_ANSWER

    def choose(self, r: PromptReading, options: list[str]) -> str:
        """One of ``options`` (an enum): the gold answer when it knows, else an abstention or a wrong one."""
        gold = r.question.answer if r.question is not None else None
        right = next((o for o in options if gold is not None and normalize_text(o) == normalize_text(gold)), None)
        if self.knows(r) and right is not None:
            return right
        wrong = [o for o in options if o != right]
        return next((o for o in wrong if is_abstention(o)), wrong[0] if wrong else options[0])

    def citations(self, r: PromptReading) -> dict[str, list[str]]:
        return r.gold_ids()

    def explanation(self, r: PromptReading) -> str:
        return "The evidence states it." if self.knows(r) else "The evidence does not settle it."

    def paragraph(self, chain: list[str]) -> str:
        """Relation lines or chains rewritten faithfully: one plain sentence per line per triplet
        ("head ->[rel]-> tail", or each link of "a->[r]->b->[s]->c"), blanks kept."""
        return "\n".join(
            f"{head} {relation.replace('_', ' ').lower()} {tail}."
            for line in chain
            for head, relation, tail in chain_triplets(line)
        )


class UsesUncited(Behaviour):
    name = "uses-uncited"

    def citations(self, r: PromptReading) -> dict[str, list[str]]:
        gold = r.gold
        if gold is None:
            return {}
        last = [*gold.sentences[-1:], *gold.triples[-1:]]
        return r.gold_ids(items=last, entities=gold.entities[-1:])


class Parametric(Behaviour):
    name = "parametric"
    explores = False
    query = "named"

    def knows(self, r: PromptReading) -> bool:
        return r.question is not None

    def citations(self, r: PromptReading) -> dict[str, list[str]]:
        return {}


class CitesEverything(Behaviour):
    name = "cites-everything"

    def citations(self, r: PromptReading) -> dict[str, list[str]]:
        numbers = [m.group(1) for m in (NUMBERED.match(line) for line in r.lines) if m]
        return {**r.seen, "number": list(dict.fromkeys(numbers))}


class IgnoresContext(Behaviour):
    """Its query parse is the oracle's (it comes from the question, not from context), so a system
    retrieves for it what it retrieves for the oracle; only its answers ignore what comes back."""

    name = "ignores-context"
    explores = False
    reads = False

    def knows(self, r: PromptReading) -> bool:
        return False

    def confidence(self, r: PromptReading) -> float:
        return 0.9

    def _pick(self, r: PromptReading, options: list[str]) -> str:
        key = r.question.question if r.question is not None else ""
        return options[_hash(key) % len(options)]

    def answer_text(self, r: PromptReading) -> str:
        phrases = PHRASE.findall(r.question.question) if r.question is not None else []
        return self._pick(r, phrases) if phrases else NO_EVIDENCE_ANSWER

    def choose(self, r: PromptReading, options: list[str]) -> str:
        return self._pick(r, options)

    def citations(self, r: PromptReading) -> dict[str, list[str]]:
        return {}

    def explanation(self, r: PromptReading) -> str:
        return "Answered from the claim alone."

    def paragraph(self, chain: list[str]) -> str:
        return "Some concepts are related."


class NoiseSensitive(Behaviour):
    """The oracle whose reading drowns in distractors (paper 002's "a one-shot subgraph tangled with
    noise"): a prompt holding the gold evidence is read with a chance that halves with every
    :data:`DISTRACTOR_HALF_LIFE` concepts shown off the gold. The draw is a hash of the prompt, so a
    reply is deterministic and another prompt (a later round's) draws again."""

    name = "noise-sensitive"

    def knows(self, r: PromptReading) -> bool:
        return r.held and _hash(r.text) % 10_000 < 10_000 * reading_chance(r.distractors)

    def explanation(self, r: PromptReading) -> str:
        if r.held and not self.knows(r):
            return f"The evidence is lost among {r.distractors} other concepts."
        return super().explanation(r)


def reading_chance(distractors: int) -> float:
    """The noise-sensitive reader's chance of reading evidence shown beside ``distractors`` concepts."""
    return 0.5 ** (distractors / DISTRACTOR_HALF_LIFE)


class Random(Behaviour):
    """Any reply valid against the schema, chosen by a hash of the prompt."""

    name = "random"
    schema_following = True


BEHAVIOURS: dict[str, Behaviour] = {
    b.name: b
    for b in (Behaviour(), UsesUncited(), Parametric(), CitesEverything(), IgnoresContext(), NoiseSensitive(), Random())
}
