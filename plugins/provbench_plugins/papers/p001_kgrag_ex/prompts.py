"""Prompts of paper 001's systems (KGRAG-Ex and its RAG-Ex target).

The paper gives no prompt text. The query parse follows the paper's section 3 (triplets) or, in
the ``authors`` preset, the authors' entity-pair request. The pseudo-paragraph and answer prompts
ask what the authors' prompts ask (their experiments notebook and ``config.py``), instruction by
instruction and in the same order, in provbench's own words: a teaching persona turning the chain
into one paragraph with nothing else, then an answer from that paragraph alone as one option
letter. Like theirs, neither says what a blanked "__" means, since that sets how a removal
propagates; ``UNKNOWN_INSTRUCTION`` is provbench's optional addition (KGRAG-Ex option
``unknown_instruction``), which tells the model not to guess a "__".
Answers are constrained by a JSON schema to an option letter (the authors read the reply's first
character instead).
"""

from __future__ import annotations

from provbench.agents import lettered_choices
from provbench.agents.base import OPTION_LETTERS

LETTERS = tuple(OPTION_LETTERS)

# Section 3: the query becomes (Entity, Relationship, Entity) triplets, in the form the KG holds.
TRIPLET_SYSTEM = (
    "You read a medical question and restate what it says as knowledge-graph triplets: "
    "(subject, relation, object), where subject and object are medical entities it mentions "
    "(diseases, symptoms, treatments, body parts, tests, risk factors, drugs), each a short noun "
    "phrase in the question's own words, and the relation a short verb phrase. Reply with JSON only."
)
TRIPLET_USER = "Question: {question}"

# The authors' code: the model lists entity pairs from the question (the options are not shown).
PAIRS_SYSTEM = (
    "You read a question in a medical context and list the medically relevant pairs of entities it "
    "mentions, each pair once, never an entity paired with itself. Reply with JSON only."
)
PAIRS_USER = "Question: {question}"

# The pseudo-paragraph prompt (one user message): the authors' instructions, provbench's wording.
PARAGRAPH_PROMPT = (
    "You write teaching material for medical students.\n\n"
    "The chain below links medical concepts through relationships. Explain those links in one short "
    "paragraph that is medically correct and easy for a student to follow.\n\n"
    "Chain:\n{chain}\n\n"
    "Reply with that one paragraph and nothing else: no heading, no comment."
)
UNKNOWN_INSTRUCTION = "A concept or relation written as __ is unknown: do not guess it."
# Without an LLM (option paragraphs: template), each triplet line becomes one plain sentence.
TEMPLATE_SENTENCE = "{head} {relation} {tail}."

# The answer prompt (one user message, shared by KGRAG-Ex and its RAG-Ex target): the authors'
# instructions, provbench's wording.
ANSWER_PROMPT = (
    "You are a medical assistant.\n\n"
    "Answer the multiple-choice question below from the medical paragraph given with it, and from "
    "nothing else.\n\n"
    "Paragraph:\n{paragraph}\n\n"
    "Question:\n{question}\n\n"
    "Options:\n{options}\n\n"
    "Reply with the letter of the best option only (A, B, C or D), without explanation or comment."
)
PASSAGE = "[{id}] {text}"
RAGEX_CHUNK = "Chunk {index}: {text}"  # how the authors' RAG-Ex context writes its retrieved chunk
NOTHING = "(none)"


def paragraph_messages(chain: str, unknown_instruction: bool) -> list[dict]:
    text = PARAGRAPH_PROMPT.format(chain=chain)
    if unknown_instruction:
        text = text.replace("\n\nChain:", f" {UNKNOWN_INSTRUCTION}\n\nChain:")
    return [{"role": "user", "content": text}]


def answer_messages(paragraph: str, question: str, choices: list[str]) -> list[dict]:
    return [
        {
            "role": "user",
            "content": ANSWER_PROMPT.format(
                paragraph=paragraph or NOTHING, question=question, options=options_text(choices)
            ),
        }
    ]


def options_text(choices: list[str]) -> str:
    return lettered_choices(choices, sep="\n")


def _array(items: dict, most: int | None) -> dict:
    """A JSON-schema array of ``items``, at most ``most`` (None: no cap, the authors' pairs)."""
    return {"type": "array", "items": items, **({"maxItems": most} if most else {})}


def triplet_schema(max_triplets: int | None) -> dict:
    phrase = {"type": "string", "maxLength": 60}
    triplet = {
        "type": "object",
        "properties": {"subject": phrase, "relation": phrase, "object": phrase},
        "required": ["subject", "relation", "object"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"triplets": _array(triplet, max_triplets)},
        "required": ["triplets"],
        "additionalProperties": False,
    }


def pairs_schema(max_pairs: int | None) -> dict:
    phrase = {"type": "string", "maxLength": 60}
    pair = {
        "type": "object",
        "properties": {"entity1": phrase, "entity2": phrase},
        "required": ["entity1", "entity2"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"pairs": _array(pair, max_pairs)},
        "required": ["pairs"],
        "additionalProperties": False,
    }


def answer_schema(n_choices: int) -> dict:
    return {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": list(LETTERS[:n_choices])}},
        "required": ["answer"],
        "additionalProperties": False,
    }
