"""The triple-extraction prompts of the medical KG builder: provbench's (the paper's labels, at
most 8 triples, free relation text) and the authors' rules (``extraction: authors``: their 7
labels, their 19 relation types, every valid forward triple the text states)."""

from __future__ import annotations

LABELS = (
    "Diseases",
    "Symptoms",
    "Treatments",
    "Body Parts",
    "Diagnostic Tests",
    "Risk Factors",
    "Medications",
    "Unknown",
)

# Table 3 of paper 001: label shares (%) of its 53,411-node graph, and its size.
PAPER_LABEL_SHARES = {
    "Diseases": 30.73,
    "Symptoms": 17.71,
    "Treatments": 14.97,
    "Body Parts": 11.81,
    "Diagnostic Tests": 9.29,
    "Risk Factors": 8.50,
    "Medications": 6.83,
    "Unknown": 0.16,
}
PAPER_GRAPH = {
    "nodes": 53411,
    "edges": 133287,
    "mean_in_degree": 2.495,
    "mean_out_degree": 2.495,
    "mean_total_degree": 4.990,
    # Table 3's corpus half (445,454 / 9,552 = 46.63 chunks per document)
    "corpus": {
        "documents": 9552,
        "chunks": 445454,
        "mean_chunks_per_document": 46.63,
        "std_chunks_per_document": 28.58,
        "min_chunks_per_document": 5,
        "max_chunks_per_document": 556,
    },
}

MAX_TRIPLES = 8

EXTRACTION_SYSTEM = (
    "You build a medical knowledge graph. From the passage, list factual "
    "(entity, relationship, entity) triples. Give each entity one label from: "
    + ", ".join(LABELS)
    + ". Relationships are short upper-case phrases such as "
    "IS RISK FACTOR FOR, CAUSES, AFFECTS, IS TREATED WITH, IS DETECTED BY. Use the passage's "
    "own wording for entity names. Reply with JSON only."
)
EXTRACTION_USER = "Passage ({title}):\n{text}"

_ENTITY = {"type": "string", "maxLength": 80}
_LABEL = {"type": "string", "enum": list(LABELS)}
EXTRACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "maxItems": MAX_TRIPLES,
            "items": {
                "type": "object",
                "properties": {
                    "head": _ENTITY,
                    "head_label": _LABEL,
                    "relation": {"type": "string", "maxLength": 60},
                    "tail": _ENTITY,
                    "tail_label": _LABEL,
                },
                "required": ["head", "head_label", "relation", "tail", "tail_label"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["triples"],
    "additionalProperties": False,
}


def extraction_messages(title: str, text: str) -> list[dict]:
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        {"role": "user", "content": EXTRACTION_USER.format(title=title or "untitled", text=text)},
    ]


# The authors' extraction rules (KGConstruction/templates.py): 7 labels (no Unknown), 19 relation
# types, both entities in the text, forward relations only, nothing inferred, no duplicates, and
# every valid triple (no cap but the reply's length).
AUTHORS_LABELS = ("Diseases", "Medications", "Symptoms", "Treatments", "Diagnostic Tests", "Risk Factors", "Body Parts")
AUTHORS_RELATIONS = (
    "HAS_SYMPTOM",
    "AFFECTS",
    "DIAGNOSED_BY",
    "TREATED_WITH",
    "MANAGED_BY",
    "HAS_RISK_FACTOR",
    "COMORBID_WITH",
    "CAUSED_BY",
    "INDICATES",
    "OCCURS_IN",
    "USED_FOR",
    "INVOLVES_MEDICATION",
    "HAS_SIDE_EFFECT",
    "CONTRAINDICATED_FOR",
    "DETECTS",
    "MEASURES",
    "INCREASES_RISK_OF",
    "PART_OF",
    "CAN_BE_AFFECTED_BY",
)
AUTHORS_SYSTEM = (
    "You extract a biomedical knowledge graph from a passage. List every valid (entity, relationship, "
    "entity) triple the passage states, following these rules: both entities are mentioned in the "
    "passage; each entity has one label from: " + ", ".join(AUTHORS_LABELS) + "; the relationship is one "
    "of: " + ", ".join(AUTHORS_RELATIONS) + " (COMORBID_WITH is symmetric) and fits the two entities; "
    "give each relation in its forward direction only, never also its reverse; state nothing the passage "
    "does not say; list no triple twice. An empty list is right when no triple qualifies. Reply with JSON only."
)
_AUTHORS_LABEL = {"type": "string", "enum": list(AUTHORS_LABELS)}
AUTHORS_SCHEMA = {
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "head": _ENTITY,
                    "head_label": _AUTHORS_LABEL,
                    "relation": {"type": "string", "enum": list(AUTHORS_RELATIONS)},
                    "tail": _ENTITY,
                    "tail_label": _AUTHORS_LABEL,
                },
                "required": ["head", "head_label", "relation", "tail", "tail_label"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["triples"],
    "additionalProperties": False,
}


def authors_messages(title: str, text: str) -> list[dict]:
    return [
        {"role": "system", "content": AUTHORS_SYSTEM},
        {"role": "user", "content": EXTRACTION_USER.format(title=title or "untitled", text=text)},
    ]
