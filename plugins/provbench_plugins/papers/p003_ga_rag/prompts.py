"""Paper 003's generator prompt (section VII), in two shapes: graph facts (GA-RAG) and
retrieved passages (the vanilla RAG baseline); the reply is schema-constrained."""

from __future__ import annotations

LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
IDK = "I don't know"

SYSTEM = (
    "You verify claims against evidence. Use only the evidence given. Reply with JSON: a label, "
    "a short explanation, and the numbers of the evidence lines you used."
)

FACT_LINE = "[{n}] {subject} | {relation} | {object} ({confidence:.2f})"
PASSAGE_LINE = "[{n}] {text}"

USER = (
    "{heading}:\n{lines}\n\n"
    'Claim: "{claim}"\n'
    "Return: LABEL (SUPPORTS/REFUTES/NOT ENOUGH INFO) and an explanation, citing evidence numbers.\n"
    "{idk}"
)
PASSAGES, FACTS = "Retrieved passages", "Graph facts"  # the headings of USER's lines (baseline, GA-RAG)
IDK_LINE = 'If evidence insufficient, reply: "I don\'t know."'
EMPTY = "(none)"


def answer_schema(shown: int, allow_idk: bool) -> dict:
    labels = [*LABELS, IDK] if allow_idk else list(LABELS)
    cited: dict = {"type": "array", "maxItems": 5, "items": {"type": "integer", "minimum": 1, "maximum": max(1, shown)}}
    return {
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": labels},
            "explanation": {"type": "string", "maxLength": 300},
            "cited": cited,
        },
        "required": ["label", "explanation", "cited"],
        "additionalProperties": False,
    }
