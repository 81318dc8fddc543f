"""Prompts of paper 001's systems (KGRAG-Ex and its RAG-Ex target).

The paper gives no prompt text. The query parse follows the paper's section 3 (triplets) or, in
the ``authors`` preset, the authors' entity-pair request. The pseudo-paragraph and answer prompts
are the authors' own wording (their experiments notebook and ``config.py``), quoted as the
protocol they ran: they set how a blanked "__" propagates and what the model is asked, so a
paraphrase would be a different experiment. ``UNKNOWN_INSTRUCTION`` is provbench's optional
addition (KGRAG-Ex option ``unknown_instruction``), which tells the model not to guess a "__".
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

# The authors' pseudo-paragraph prompt (one user message), verbatim.
PARAGRAPH_AUTHORS = (
    "You are a medical instructor helping to generate educational materials.\n\n"
    "Given a relationship chain connecting medical concepts, write a short, clear and medically accurate "
    "paragraph that explains the connections in a way understandable to students.\n\n"
    "Input chain:\n{chain}\n\n"
    "Output:\n"
    "A single, coherent paragraph explaining the relationships. Do not include any further comments, only "
    "your generated answer."
)
UNKNOWN_INSTRUCTION = "A concept or relation written as __ is unknown: do not guess it."
# Without an LLM (option paragraphs: template), each triplet line becomes one plain sentence.
TEMPLATE_SENTENCE = "{head} {relation} {tail}."

# The authors' answer prompt (one user message, shared by KGRAG-Ex and their RAG-Ex target), verbatim.
ANSWER_AUTHORS = (
    "You are a knowledgeable medical assistant.\n\n"
    "Use the following medical paragraph to answer the multiple-choice question below.\n"
    "Choose the best answer from the provided options based solely on the paragraph.\n\n"
    "Medical Paragraph:\n{paragraph}\n\n"
    "Question:\n{question}\n\n"
    "Options:\n{options}\n\n"
    "Answer:\n"
    "Provide only the letter (A, B, C or D) corresponding to the corrected choice.\n"
    "Do not provide any additional explanation or commentary."
)
PASSAGE = "[{id}] {text}"
RAGEX_CHUNK = "Chunk {index}: {text}"  # how the authors' RAG-Ex context writes its retrieved chunk
NOTHING = "(none)"


def paragraph_messages(chain: str, unknown_instruction: bool) -> list[dict]:
    text = PARAGRAPH_AUTHORS.format(chain=chain)
    if unknown_instruction:
        text = text.replace("\n\nInput chain:", f" {UNKNOWN_INSTRUCTION}\n\nInput chain:")
    return [{"role": "user", "content": text}]


def answer_messages(paragraph: str, question: str, choices: list[str]) -> list[dict]:
    return [{"role": "user", "content": ANSWER_AUTHORS.format(paragraph=paragraph or NOTHING, question=question,
                                                              options=options_text(choices))}]


def options_text(choices: list[str]) -> str:
    return lettered_choices(choices, sep="\n")


def triplet_schema(max_triplets: int) -> dict:
    phrase = {"type": "string", "maxLength": 60}
    triplet = {"type": "object", "properties": {"subject": phrase, "relation": phrase, "object": phrase},
               "required": ["subject", "relation", "object"], "additionalProperties": False}
    return {"type": "object", "properties": {"triplets": {"type": "array", "maxItems": max_triplets, "items": triplet}},
            "required": ["triplets"], "additionalProperties": False}


def pairs_schema(max_pairs: int) -> dict:
    phrase = {"type": "string", "maxLength": 60}
    pair = {"type": "object", "properties": {"entity1": phrase, "entity2": phrase},
            "required": ["entity1", "entity2"], "additionalProperties": False}
    return {"type": "object", "properties": {"pairs": {"type": "array", "maxItems": max_pairs, "items": pair}},
            "required": ["pairs"], "additionalProperties": False}


def answer_schema(n_choices: int) -> dict:
    return {"type": "object", "properties": {"answer": {"type": "string", "enum": list(LETTERS[:n_choices])}},
            "required": ["answer"], "additionalProperties": False}
