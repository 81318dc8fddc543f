"""What a control LLM reads in a request: which question it is about, whether the prompt holds
that question's gold evidence, which ids the prompt shows (and which of them are gold), and, in
an agent's conversation, which tool calls it already made.

Only what the system showed counts: system and user messages. The model's own earlier replies
(assistant messages) tell it what it did, never what it knows.

Ids are tokens ``prefix:rest`` whose prefix names a kind (:data:`KIND_OF_PREFIX`, the prefixes
provbench's KB builders use). A gold item is *seen* when a line of the prompt shows it:

* a relationship: the id on a line that holds a gold triple as a relation line;
* a text unit: the id on a line that holds a gold sentence;
* an entity: an id written next to a gold entity's name (``id | Name``, ``[id] Name (``,
  ``Name [id]``, ``id (Name)``: the shapes of provbench's prompts and tool results);
* a numbered line (``[3] ...``, paper 003's evidence lines): its number, when the line holds a
  gold sentence or triple. A fact line ``[n] S | r | O (0.95)`` is read as the sentence "S r O".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..gold import GoldEvidence, GoldSentence, GoldTriple, normalize_text
from ..model import Question

KIND_OF_PREFIX = {
    "ent": "entity",
    "p": "entity",
    "rel": "relationship",
    "tu": "text_unit",
    "s": "text_unit",
    "com": "community",
}
ID_TOKEN = re.compile(r"(?<![\w:])(?:ent|p|rel|tu|s|com):[^\s\[\]|]+")
NUMBERED = re.compile(r"^\s*\[(\d+)\]\s*(.*)$")
FACT = re.compile(r"^(.*?) \| (.*?) \| (.*?) \(\d(?:\.\d+)?\)\s*$")
DETAILS_HEAD = re.compile(r"^(\S+) \| ")
TRAILING = ".,;:)'\""


def ids_in(line: str) -> list[str]:
    """The id tokens of a line, in order, trailing punctuation removed."""
    found = []
    for token in ID_TOKEN.findall(line):
        token = token.rstrip(TRAILING)  # "'tu:...'" in an instruction leaves "tu": no id
        if token.partition(":")[2].strip(".") and token not in found:
            found.append(token)
    return found


def kind_of(item_id: str) -> str:
    return KIND_OF_PREFIX.get(item_id.split(":", 1)[0], "")


def _name_patterns(name: str) -> list[re.Pattern]:
    n = r"\s+".join(map(re.escape, name.split()))
    item = r"((?:ent|p):[^\s\[\]|]+?)"
    return [
        re.compile(rf"{item}\s*\|\s*{n}\s*(?:\(|\||$)", re.I | re.M),
        re.compile(rf"\[{item}\]\s*{n}\s*\(", re.I),
        re.compile(rf"(?<![\w]){n}\s*\[{item}\]", re.I),
        re.compile(rf"{item}\s*\({n}\)", re.I),
    ]


@dataclass(frozen=True)
class Action:
    tool: str
    arguments: dict[str, Any]

    @property
    def key(self) -> str:
        return self.tool + json.dumps(self.arguments, sort_keys=True)


@dataclass
class PromptReading:
    """One request as a control reads it (see the module docstring)."""

    messages: list[dict[str, Any]]
    question: Question | None = None
    text: str = field(init=False)  # what the system showed: system and user messages
    lines: list[str] = field(init=False)  # its non-blank lines

    def __post_init__(self) -> None:
        self.text = "\n".join(str(m.get("content", "")) for m in self.messages if m.get("role") != "assistant")
        self.lines = [line for line in self.text.splitlines() if line.strip()]

    @property
    def gold(self) -> GoldEvidence | None:
        return self.question.gold if self.question is not None else None

    @cached_property
    def held(self) -> bool:
        """The prompt holds the question's gold evidence (fact lines read as sentences too)."""
        if self.gold is None or self.gold.empty:
            return False
        facts = [" ".join(m.groups()) for m in (FACT.match(NUMBERED.sub(r"\2", line)) for line in self.lines) if m]
        return self.gold.held_in("\n".join([self.text, *facts]))

    # -- ids ------------------------------------------------------------------------------------
    @cached_property
    def seen(self) -> dict[str, list[str]]:
        """Every id the prompt shows, by kind, in order of first appearance."""
        by_kind: dict[str, list[str]] = {}
        for line in self.lines:
            for item in ids_in(line):
                kind = kind_of(item)
                if kind and item not in by_kind.setdefault(kind, []):
                    by_kind[kind].append(item)
        return by_kind

    @cached_property
    def distractors(self) -> int:
        """Concepts (entity ids) the prompt shows that are not the gold's entities."""
        gold = set(self.gold_ids(items=[]).get("entity", []))
        return len(set(self.seen.get("entity", [])) - gold)

    def entity_ids(self, name: str) -> list[str]:
        """Ids the prompt writes next to an entity's name."""
        found: list[str] = []
        for pattern in _name_patterns(name):
            for match in pattern.finditer(self.text):
                item = match.group(1).rstrip(TRAILING)
                if item not in found:
                    found.append(item)
        return found

    def lines_holding(self, item: GoldSentence | GoldTriple) -> list[str]:
        if isinstance(item, GoldTriple):
            return [line for line in self.lines if item.held_in_line(normalize_text(line))]
        return [line for line in self.lines if item.held_in(normalize_text(self._as_sentence(line)))]

    @staticmethod
    def _as_sentence(line: str) -> str:
        fact = FACT.match(NUMBERED.sub(r"\2", line))
        return " ".join(fact.groups()) if fact else line

    def gold_ids(
        self, items: list[GoldSentence | GoldTriple] | None = None, entities: list[str] | None = None
    ) -> dict[str, list[str]]:
        """Ids of the gold items seen (all of them by default), by kind; ``number`` holds the
        numbers of numbered lines that hold one."""
        gold = self.gold
        if gold is None:
            return {}
        items = items if items is not None else [*gold.triples, *gold.sentences]
        wanted = {"relationship": GoldTriple, "text_unit": GoldSentence}
        found: dict[str, list[str]] = {}
        for item in items:
            for line in self.lines_holding(item):
                number = NUMBERED.match(line)
                if number:
                    _add(found, "number", number.group(1))
                for item_id in ids_in(line):
                    if isinstance(item, wanted.get(kind_of(item_id), ())):
                        _add(found, kind_of(item_id), item_id)
                        break
        for name in entities if entities is not None else gold.entities:
            for item_id in self.entity_ids(name):
                _add(found, "entity", item_id)
        return found

    def listed_text_units(self, entity_id: str) -> list[str]:
        """Text units an entity's details listed (``text units: tu:1, tu:2`` under ``id | Name``)."""
        current, found = None, []
        for line in self.lines:
            head = DETAILS_HEAD.match(line)
            if head:
                current = head.group(1)
            elif current == entity_id and line.startswith("text units:"):
                found += [i for i in ids_in(line) if kind_of(i) == "text_unit" and i not in found]
        return found

    # -- an agent's own history -----------------------------------------------------------------
    @cached_property
    def actions(self) -> list[Action]:
        """The tool calls of the model's earlier replies (assistant messages), in order."""
        done = []
        for message in self.messages:
            if message.get("role") != "assistant":
                continue
            try:
                reply = json.loads(message.get("content") or "")
            except ValueError:
                continue
            if isinstance(reply, dict) and isinstance(reply.get("tool"), str):
                arguments = reply.get("arguments")
                done.append(Action(reply["tool"], arguments if isinstance(arguments, dict) else {}))
        return done

    def rejected_ids(self) -> set[str]:
        """Ids a rejection message named (a citation that failed a check)."""
        return {i for line in self.lines if line.startswith("Rejected:") for i in ids_in(line)}

    def said(self, phrase: str) -> bool:
        return any(phrase in line for line in self.lines)


def _add(found: dict[str, list[str]], kind: str, item: str) -> None:
    if item not in found.setdefault(kind, []):
        found[kind].append(item)
