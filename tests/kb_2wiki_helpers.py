"""A tiny 2Wiki world and a scripted model, so any test can build a small real knowledge base.

    from kb_2wiki_helpers import write_tiny_2wiki, tiny_questions, scripted_kb_reply, scripted_kb_llm
    path = write_tiny_2wiki(tmp_path / "tiny.json")      # plain 2Wiki dev.json format, 3 questions
    questions = tiny_questions()                          # the same records as provbench Questions
    llm, backend = scripted_kb_llm()                      # LLMClient answering every builder prompt
    kb = TwoWikiKBBuilder().build(questions, tmp_path / "kb", llm)
    len(backend.calls)                                    # how many prompts the builder sent

The world is invented (no model can answer from memory). Unique paragraphs: 9 of the 13 the
questions list ("Glass Harbor (film)", "Glass Harbor (novel)", "Red Meadow" and "Lark Denholm"
recur; "Calder Bay" recurs with other text, so it stays two documents).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from provbench.model import Question
from provbench_plugins.kb_builders.common import prompts as P

GLASS_HARBOR_FILM = [
    "Glass Harbor (film)",
    [
        "Glass Harbor is a 1987 drama film set in the port town of Dunmere.",
        "The film was directed by Orin Vale.",
        "It stars Tessa Quill as a lighthouse keeper.",
    ],
]
GLASS_HARBOR_NOVEL = [
    "Glass Harbor (novel)",
    [
        "Glass Harbor is a 1979 novel by Petra Lune.",
        "The novel follows a ferry captain in Dunmere.",
    ],
]
ORIN_VALE = [
    "Orin Vale",
    [
        "Orin Vale (born 1941) is a film director from Calder Bay.",
        "He is the son of the painter Mira Vale.",
        "Vale later taught at the Dunmere Film School.",
    ],
]
TESSA_QUILL = ["Tessa Quill", ["Tessa Quill is an actress from Dunmere.", "Her mother is the singer Ada Quill."]]
CALDER_BAY = [
    "Calder Bay",
    [
        "Calder Bay is a fishing village on the Sorrel Coast.",
        "The painter Mira Vale lived there until 1960.",
    ],
]
CALDER_BAY_OTHER = ["Calder Bay", ["Calder Bay is a village on the Sorrel Coast.", "Its harbour was rebuilt in 1955."]]
RED_MEADOW = [
    "Red Meadow",
    ["Red Meadow is a 1992 western film directed by Lark Denholm.", "It was filmed near Calder Bay."],
]
LARK_DENHOLM = [
    "Lark Denholm",
    [
        "Lark Denholm was a director and screenwriter born in Sorrel.",
        "Denholm married the actress Tessa Quill in 1990.",
    ],
]
DUNMERE = ["Dunmere", ["Dunmere is a port town on the Sorrel Coast.", "The Dunmere Film School opened in 1970."]]

TINY_RECORDS: list[dict[str, Any]] = [
    {
        "_id": "tiny-q1",
        "type": "compositional",
        "answer": "Mira Vale",
        "question": "Who is the mother of the director of film Glass Harbor?",
        "context": [GLASS_HARBOR_FILM, ORIN_VALE, GLASS_HARBOR_NOVEL, TESSA_QUILL, CALDER_BAY],
        "supporting_facts": [["Glass Harbor (film)", 1], ["Orin Vale", 1]],
        "evidences": [["Glass Harbor", "director", "Orin Vale"], ["Orin Vale", "mother", "Mira Vale"]],
    },
    {
        "_id": "tiny-q2",
        "type": "comparison",
        "answer": "Glass Harbor",
        "question": "Which film came out first, Glass Harbor or Red Meadow?",
        "context": [GLASS_HARBOR_FILM, RED_MEADOW, GLASS_HARBOR_NOVEL, LARK_DENHOLM],
        "supporting_facts": [["Glass Harbor (film)", 0], ["Red Meadow", 0]],
        "evidences": [["Glass Harbor", "publication date", "1987"], ["Red Meadow", "publication date", "1992"]],
    },
    {
        "_id": "tiny-q3",
        "type": "compositional",
        "answer": "Sorrel",
        "question": "Where was the director of film Red Meadow born?",
        "context": [RED_MEADOW, LARK_DENHOLM, CALDER_BAY_OTHER, DUNMERE],
        "supporting_facts": [["Red Meadow", 0], ["Lark Denholm", 0]],
        "evidences": [["Red Meadow", "director", "Lark Denholm"], ["Lark Denholm", "place of birth", "Sorrel"]],
    },
]

TINY_UNIQUE_PARAGRAPHS = 9
TINY_GOLD_ENTITIES = {"Glass Harbor", "Orin Vale", "Mira Vale", "1987", "Red Meadow", "1992", "Lark Denholm", "Sorrel"}


def write_tiny_2wiki(path: Path) -> Path:
    """Write the tiny world as a plain 2Wiki dev.json file and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(TINY_RECORDS, indent=1), encoding="utf-8")
    return path


def question_from_record(record: dict[str, Any]) -> Question:
    """A 2Wiki record as the "2wiki" loader shapes it: context as {title, sentences} dicts."""
    return Question(
        id=record["_id"],
        question=record["question"],
        answer=record["answer"],
        dataset="2wiki",
        type=record["type"],
        metadata={
            "context": [{"title": t, "sentences": list(s)} for t, s in record["context"]],
            "supporting_facts": [list(f) for f in record["supporting_facts"]],
            "evidences": [list(e) for e in record["evidences"]],
        },
    )


def tiny_questions() -> list[Question]:
    return [question_from_record(r) for r in TINY_RECORDS]


_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_NOT_NAMES = {"The", "It", "He", "Her", "His", "She", "Its", "Vale", "Denholm"}


def _extraction_reply(text: str) -> dict[str, Any]:
    """Capitalised phrases of the text as entities; the first one related to the others."""
    names = list(dict.fromkeys(n for n in _NAME.findall(text) if n not in _NOT_NAMES))[:4]
    entities = [{"name": n, "type": "OTHER"} for n in names]
    relations = [{"source": names[0], "relation": "mentions", "target": n} for n in names[1:]]
    return {"entities": entities, "relations": relations}


def _summary_reply(prompt: str) -> dict[str, str]:
    names = re.findall(r"^- (.+?) \(", prompt, flags=re.M)
    return {"title": f"About {names[0] if names else 'nothing'}", "summary": "Members: " + ", ".join(names) + "."}


def scripted_kb_reply(overrides: dict[str, Any] | None = None) -> Callable[[list[dict[str, str]]], Any]:
    """A reply function for ScriptedBackend answering the builder's two prompts.

    ``overrides`` maps a paragraph title (extraction prompts) or "summary" (every summary prompt)
    to the reply to give instead: a str (raw text, e.g. invalid JSON), a dict, or an Exception.
    """
    overrides = overrides or {}

    def reply(messages: list[dict[str, str]]) -> Any:
        system, user = messages[0]["content"], messages[-1]["content"]
        if system == P.extraction_system():
            title = user.split("\n", 1)[0].removeprefix("Title: ")
            chosen = overrides.get(title, _extraction_reply(user.split("Text: ", 1)[1]))
        elif system == P.SUMMARY_SYSTEM:
            chosen = overrides.get("summary", _summary_reply(user))
        else:
            raise AssertionError(f"unexpected prompt: {system[:60]!r}")
        if isinstance(chosen, Exception):
            raise chosen
        return chosen

    return reply


def scripted_kb_llm(overrides: dict[str, Any] | None = None, max_calls: int = 200):
    """(LLMClient, ScriptedBackend): the backend's ``calls`` lists every prompt the builder sent."""
    from provbench.llm import LLMClient, ScriptedBackend

    backend = ScriptedBackend(replies=[scripted_kb_reply(overrides)] * max_calls)
    return LLMClient(backend), backend
