"""The planning loop's state (:mod:`.loop`): what a round gave, what the loop holds between rounds,
and what one expansion found."""

from __future__ import annotations

from dataclasses import dataclass, field

from provbench.kb.types import Entity, Neighbor, Relation


@dataclass
class Candidate:
    """An answer a round gave, with what it rests on."""

    answer: str
    confidence: float
    round: int
    reason: str = ""
    support: dict[str, list[str]] = field(default_factory=dict)  # Citations field -> ids shown


@dataclass
class LoopState:
    question: str
    visited: dict[str, Entity] = field(default_factory=dict)  # also the evidence concepts, in order
    edges: dict[str, Relation] = field(default_factory=dict)  # evidence edges, in order
    texts: dict[str, str] = field(default_factory=dict)  # text units shown
    relation_vocab: list[str] = field(default_factory=list)  # types on the next frontier's edges
    neighbours: dict[str, list[Neighbor]] = field(default_factory=dict)  # per concept, fetched once
    frontier: list[str] = field(default_factory=list)  # the concepts the next expansion starts from
    frontier_before: list[str] = field(default_factory=list)  # what the current round expanded
    focus: str = ""
    relation_types: list[str] = field(default_factory=list)
    confidence: float | None = None  # the last stated one
    best: Candidate | None = None  # the most confident answer so far
    current: Candidate | None = None  # the last round's answer (None: it gave none)
    latest: Candidate | None = None  # the last answer any round gave
    shown: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids the current step brought in
    replies: list[str] = field(default_factory=list)  # recorded synthesize replies still to replay, in order
    read_at: str = ""  # when the graph was read: the view's time, else the moment the loop began


@dataclass
class Expansion:
    added: list[str]
    edges: list[str]
    followed: list[str] | None  # relation types followed (None: all)
    widened: bool = False  # the chosen types led nowhere new, so every type was followed
    capped: bool = False
