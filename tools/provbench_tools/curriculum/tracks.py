"""Invented tracks of course units beside the hand-written curriculum: the questions that need the
planning loop's later rounds, its frontier cap and its abstention.

A *track* is a chain of units joined by structural edges (``prerequisite``, ``builds_on``,
``part_of``), one (relation, direction) step per edge; a question names only the track's first
unit and walks the steps in words that name no relation type ("Start at X. Go to the unit that
requires it, then to the unit it extends, ... Which unit do you reach?"), so a frontier ranker
cannot keep the track by matching relation words: reading "extends" as ``builds_on`` is the
reader's work. Every step is the only edge of its relation and direction at its unit, so the walk
has one answer. Names are invented (random syllables), so no model knows a track.

*Electives* surround the tracks: units joined to each other and to the tracks by edges of every
relation type (the structural ones too, so a relation type does not single out a track; an
elective's edge at a track unit never repeats the step the walk takes there), never named by a
question. Each unit has a *level*: a track's first unit is at 0 and its i-th step at i; an
elective sits at a level and touches only units one level away at most. Every edge therefore
changes the level by at most 1, so no path from a first unit to its answer is shorter than the
track: the answer lies exactly ``depth`` edges from the only concept the question names. A first
unit has more electives than one round's frontier holds (the cap bites from round 1) and the
electives reach far enough that every round fills its frontier (the loop examines its full
4 x 12 = 48 concepts). A track's edges are stored in a random order, so the store's order (the
frontier ranker's last tie-break) favours neither the track nor its electives.

Question kinds: ``deep`` (3 or 4 steps: reachable within the loop's 4 rounds, out of reach of
one round), ``too-deep`` (5 or 6: beyond the round budget, abstention expected), ``stale`` (one
step's edge was replaced in a curriculum revision: the old edge is stored with ``invalidated_at``,
the new one is valid from that moment; following the old edge reaches another unit,
``stale_answer``) and ``unanswerable`` (the last step's edge does not exist).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

SYLLABLES = (
    "tor",
    "va",
    "nel",
    "mir",
    "ka",
    "sel",
    "dor",
    "qua",
    "ren",
    "ost",
    "lu",
    "bra",
    "fen",
    "zi",
    "hal",
    "mon",
    "tri",
    "vek",
    "ul",
    "sar",
    "po",
    "ith",
    "gar",
    "wen",
)
UNIT_NOUNS = (
    "Foundations",
    "Workshop",
    "Lab",
    "Studio",
    "Seminar",
    "Clinic",
    "Practicum",
    "Capstone",
    "Primer",
    "Tutorial",
    "Colloquium",
    "Intensive",
)
# (relation, forward?) -> how the question words the step (forward: the unit is the edge's source), in
# words that name no relation type: "X prerequisite Y" reads "Y requires X", "X builds_on Y" "X extends
# Y", "X part_of Y" "Y contains X"
STEPS = {
    ("prerequisite", True): "the unit that requires it",
    ("prerequisite", False): "the unit it requires",
    ("builds_on", True): "the unit it extends",
    ("builds_on", False): "the unit that extends it",
    ("part_of", True): "the unit that contains it",
    ("part_of", False): "the unit it contains",
}
ELECTIVE_KINDS = (*STEPS, ("related", True), ("contrasts_with", True))  # every relation type, both directions
LEVELS = 7  # electives at levels 0..6, as deep as the deepest track (6 steps)
ELECTIVES_PER_LEVEL = 8
ELECTIVE_LINKS = 3  # elective-elective edges drawn per elective
FIRST_UNIT_ELECTIVES = 14  # more than one round's frontier (12, the seed counted) can take
UNIT_ELECTIVES = 3
FIRST_DAY, LAST_DAY = date(2025, 1, 1), date(2025, 6, 30)  # when track and elective edges took effect
REVISION_DAY = date(2025, 9, 1)  # stale edges are invalidated on this day (plus a week per question)
RECORDING_LAG_DAYS = 5  # an edge is recorded 0..5 days after it took effect


@dataclass
class Unit:
    id: str
    name: str
    kind: str
    description: str
    level: int


@dataclass
class Edge:
    id: str
    source: str
    relation: str
    target: str
    valid_from: str
    recorded_at: str
    invalidated_at: str | None = None


@dataclass
class Tracks:
    """What the generator adds: units, edges, questions (in generation order)."""

    rng: random.Random
    next_edge: int
    taken: set[str]  # lower-cased names in use (the core's included)
    units: dict[str, Unit] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)
    electives: list[list[str]] = field(default_factory=list)  # ids per level

    # -- units and edges ------------------------------------------------------------------------
    def name(self) -> str:
        """A new invented name that no other name contains and that contains no other (so a name
        found in a text is never part of another's)."""
        while True:
            word = "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.choice((2, 3)))).capitalize()
            name = f"{word} {self.rng.choice(UNIT_NOUNS)}"
            low = name.lower()
            if not any(low in other or other in low for other in self.taken):
                self.taken.add(low)
                return name

    def unit(self, kind: str, level: int, description: str) -> str:
        name = self.name()
        uid = name.lower().replace(" ", "-")
        self.units[uid] = Unit(uid, name, kind, description.format(name=name), level)
        return uid

    def edge(
        self, source: str, relation: str, target: str, valid: date | None = None, invalidated: date | None = None
    ) -> Edge:
        valid = valid or FIRST_DAY + timedelta(days=self.rng.randrange((LAST_DAY - FIRST_DAY).days + 1))
        recorded = valid + timedelta(days=self.rng.randint(0, RECORDING_LAG_DAYS))
        made = Edge(
            str(self.next_edge),
            source,
            relation,
            target,
            valid.isoformat(),
            recorded.isoformat(),
            invalidated.isoformat() if invalidated else None,
        )
        self.next_edge += 1
        self.edges.append(made)
        return made

    def step_edge(self, current: str, step: tuple[str, bool], other: str, **stamps: date | None) -> Edge:
        relation, forward = step
        return (
            self.edge(current, relation, other, **stamps) if forward else self.edge(other, relation, current, **stamps)
        )

    # -- electives ------------------------------------------------------------------------------
    def make_electives(self) -> None:
        for level in range(LEVELS):
            self.electives.append(
                [
                    self.unit("elective", level, "An elective unit beside the tracks.")
                    for _ in range(ELECTIVES_PER_LEVEL)
                ]
            )
        linked: set[frozenset[str]] = set()
        for level, ids in enumerate(self.electives):
            for uid in ids:
                for other in self.near(uid, level, ELECTIVE_LINKS):
                    if frozenset((uid, other)) not in linked:
                        linked.add(frozenset((uid, other)))
                        self.step_edge(uid, self.rng.choice(ELECTIVE_KINDS), other)

    def near(self, uid: str, level: int, count: int) -> list[str]:
        """``count`` distinct electives at most one level from ``level``."""
        pool = [e for lv in range(max(0, level - 1), min(LEVELS, level + 2)) for e in self.electives[lv] if e != uid]
        return self.rng.sample(pool, count)

    def surround(self, uid: str, level: int, count: int, walked: set[tuple[str, bool]]) -> None:
        """Edges of any relation type from a track unit to ``count`` electives near its level, never of
        a step the walk takes there (``walked``), so the walk stays unique."""
        kinds = [k for k in ELECTIVE_KINDS if k not in walked]
        for other in self.near(uid, level, count):
            self.step_edge(uid, self.rng.choice(kinds), other)

    def shuffle_ids(self, since: int) -> None:
        """The edges made since index ``since`` trade ids at random: the store lists a concept's edges
        by id, so the order of making them (the track's step before or after its electives) must not
        decide which of them a frontier cut by the store's order keeps."""
        made = self.edges[since:]
        ids = [e.id for e in made]
        self.rng.shuffle(ids)
        for made_edge, new_id in zip(made, ids):
            made_edge.id = new_id
        self.edges[since:] = sorted(made, key=lambda e: int(e.id))

    # -- tracks and questions -------------------------------------------------------------------
    def steps(self, depth: int) -> list[tuple[str, bool]]:
        """``depth`` steps, none undoing the one before (so each is unique at its unit)."""
        chosen: list[tuple[str, bool]] = []
        for _ in range(depth):
            options = [s for s in STEPS if not chosen or s != (chosen[-1][0], not chosen[-1][1])]
            chosen.append(self.rng.choice(options))
        return chosen

    def track(
        self,
        steps: list[tuple[str, bool]],
        not_at_end: tuple[str, bool] | None = None,
    ) -> tuple[list[str], list[Edge]]:
        """A new track walking ``steps`` from a new first unit (level 0): its units and edges. No
        elective edge of the last unit is a ``not_at_end`` step (an unanswerable question asks for it)."""
        # descriptions never name the track: similarity search must not find a track's units together
        units, edges = [self.unit("unit", 0, "The first unit of a track.")], []
        for level, step in enumerate(steps, start=1):
            nxt = self.unit("unit", level, "A unit of a track.")
            edges.append(self.step_edge(units[-1], step, nxt))
            units.append(nxt)
        for level, uid in enumerate(units):
            walked = {steps[level]} if level < len(steps) else {not_at_end} - {None}
            self.surround(uid, level, FIRST_UNIT_ELECTIVES if level == 0 else UNIT_ELECTIVES, walked)
        return units, edges

    def ask(
        self,
        kind: str,
        steps: list[tuple[str, bool]],
        units: list[str],
        edges: list[Edge],
        answerable: bool = True,
        **extra: object,
    ) -> dict:
        walk = ", then to ".join(STEPS[s] for s in steps)
        question = f"Start at {self.units[units[0]].name}. Go to {walk}. Which unit do you reach?"
        record = {"id": "", "question": question, "answer": None, "answerable": False, "hops": 0, "type": kind}
        if answerable:
            record = {
                "id": "",
                "question": question,
                "answer": self.units[units[-1]].name,
                "hops": len(edges),
                "type": kind,
                "chain_from": units[0],
                "chain": [e.id for e in edges],
            }
        record.update(extra)
        self.questions.append(record)
        return record

    def deep(self, depth: int, kind: str) -> None:
        since, steps = len(self.edges), self.steps(depth)
        units, edges = self.track(steps)
        self.shuffle_ids(since)
        self.ask(kind, steps, units, edges)

    def stale(self, depth: int, revised: date) -> None:
        """A track whose last-but-one step was revised: the old edge (to a unit that goes on with the
        last step to the stale answer) is invalidated when the new one takes effect."""
        since, steps = len(self.edges), self.steps(depth)
        units, edges = self.track(steps)
        old_level = depth - 1
        replaced = self.unit("unit", old_level, "A unit the curriculum revision moved out of its track.")
        self.surround(replaced, old_level, UNIT_ELECTIVES, {steps[-1]})
        stale_end = self.unit("unit", depth, "A unit reached through a revised-away edge.")
        self.surround(stale_end, depth, UNIT_ELECTIVES, set())
        before = units[-3]  # where the revised step starts (depth >= 2)
        old_valid = FIRST_DAY + timedelta(days=self.rng.randrange(60))
        self.step_edge(before, steps[-2], replaced, valid=old_valid, invalidated=revised)
        self.step_edge(replaced, steps[-1], stale_end)
        edges[-2] = self.replace_edge(edges[-2], revised)
        self.shuffle_ids(since)
        self.ask("stale", steps, units, edges, stale_answer=self.units[stale_end].name)

    def replace_edge(self, edge: Edge, revised: date) -> Edge:
        """The revision's new edge takes effect the day the old one is invalidated."""
        edge.valid_from = revised.isoformat()
        edge.recorded_at = (revised + timedelta(days=1)).isoformat()
        return edge

    def unanswerable(self) -> None:
        """A one-step track asked for two steps: the second step's edge does not exist."""
        since, first_step = len(self.edges), self.rng.choice(list(STEPS))
        missing = self.rng.choice([s for s in STEPS if s[0] != first_step[0]])
        units, edges = self.track([first_step], not_at_end=missing)
        self.shuffle_ids(since)
        self.ask("unanswerable", [first_step, missing], units, edges, answerable=False)


def generate_tracks(
    rng: random.Random,
    first_edge_id: int,
    core_names: set[str],
    deep: int,
    too_deep: int,
    stale: int,
    unanswerable: int,
) -> Tracks:
    tracks = Tracks(rng, first_edge_id, set(core_names))
    tracks.make_electives()
    for i in range(deep):
        tracks.deep(3 + i % 2, "deep")
    for i in range(too_deep):
        tracks.deep(5 + i % 2, "too-deep")
    for i in range(stale):
        tracks.stale(2 + i % 2, REVISION_DAY + timedelta(weeks=i))
    for _ in range(unanswerable):
        tracks.unanswerable()
    return tracks
