"""Questions in 2Wiki's four templates, with gold and distractor paragraphs chosen so that each
record lands in its requested category (see the package docstring)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from provbench_plugins.datasets.twowiki import selection

from .identities import Identities, record_ids
from .world import (
    MAX_TRAPS,
    PARAGRAPHS_PER_QUESTION,
    Entity,
    Paragraph,
    Person,
    Route,
    Work,
    World,
    chain,
    label_of,
    neighbours,
)


# --- questions ------------------------------------------------------------------------------

COMPOSITIONAL = (
    ("Who is the mother of the director of film {}?", "film", ("director", "mother")),
    ("Who is the father of the director of film {}?", "film", ("director", "father")),
    ("Where was the director of film {} born?", "film", ("director", "place of birth")),
    ("What is the date of birth of the director of film {}?", "film", ("director", "date of birth")),
    ("Which country is the director of film {} from?", "film", ("director", "country of citizenship")),
    ("Who is the spouse of the director of film {}?", "film", ("director", "spouse")),
    ("Who is the author of the novel that film {} is based on?", "film", ("based on", "author")),
    ("Who is the mother of the author of the novel {}?", "novel", ("author", "mother")),
    ("Where was the author of the novel {} born?", "novel", ("author", "place of birth")),
)
INFERENCE = (
    ("Who is the paternal grandfather of {}?", "child", ("father", "father")),
    ("Who is the paternal grandmother of {}?", "child", ("father", "mother")),
    ("Who is the maternal grandfather of {}?", "child", ("mother", "father")),
    ("Who is the maternal grandmother of {}?", "child", ("mother", "mother")),
    ("Who is the father-in-law of {}?", "child", ("spouse", "father")),
    ("Who is the mother-in-law of {}?", "child", ("spouse", "mother")),
)
# (question, subjects, relations to the compared date, True: the earlier date wins)
COMPARISON = (
    ("Which film came out first, {} or {}?", "film", ("publication date",), True),
    ("Which film came out later, {} or {}?", "film", ("publication date",), False),
    ("Which novel was published first, {} or {}?", "novel", ("publication date",), True),
    ("Who was born first, {} or {}?", "person", ("date of birth",), True),
)
BRIDGE_COMPARISON = (
    ("Which film has the director born first, {} or {}?", "film", ("director", "date of birth"), True),
    ("Which film has the director born later, {} or {}?", "film", ("director", "date of birth"), False),
    ("Which novel has the author born first, {} or {}?", "novel", ("author", "date of birth"), True),
)
TEMPLATES = {
    "compositional": COMPOSITIONAL,
    "inference": INFERENCE,
    "comparison": COMPARISON,
    "bridge_comparison": BRIDGE_COMPARISON,
}


@dataclass
class Draft:
    type: str
    question: str
    answer: str
    route: Route  # evidences and facts of the whole question
    ends: list[Any]  # entities the route passes through or ends at
    answer_value: Any  # what the answer names: an entity, place, country or date


class _Overlap:
    """Whether a distractor paragraph overlaps a draft's gold route, by twowiki_selection's rule."""

    def __init__(self, draft: Draft):
        gold_titles = {selection.base_title(e.paragraph.title) for e, _ in draft.route.facts}
        names = [n for s, _, o in draft.route.evidences for n in (s, o)]
        self.gold_names = gold_titles | {selection.base_title(n) for n in names}
        answer = selection.base_title(draft.answer)
        self.hops = list(dict.fromkeys(n for n in names if selection.base_title(n) != answer))

    def __call__(self, paragraph: Paragraph) -> bool:
        if selection.base_title(paragraph.title) in self.gold_names:
            return True
        text = " ".join(paragraph.sentences)
        return any(selection.mentions(text, hop) for hop in self.hops)


class QuestionWriter:
    """Writes one record at a time for a requested category and type; never repeats a question."""

    def __init__(self, world: World, rng: random.Random, identities: Identities):
        self.world, self.rng, self.identities = world, rng, identities
        self.asked: set[tuple[str, ...]] = set()  # only tested, never iterated
        self.subjects = {
            "film": [w for w in world.works if w.kind == "film"],
            "novel": [w for w in world.works if w.kind == "novel"],
            "child": [p for p in world.people if p.generation == 2],
            "person": [p for p in world.people if p.generation > 0],
            "namesake film": [w for w in world.works if w.kind == "film" and w.namesake],
        }

    def write(self, category: str, qtype: str, prefer_namesake: bool = False) -> dict[str, Any]:
        for _ in range(500):
            draft = self._draft(qtype, prefer_namesake)
            record = draft and self._record(draft, category)
            if record is not None:
                return record
        raise RuntimeError(f"world too small for another {category} {qtype} question")

    # drafting

    def _draft(self, qtype: str, prefer_namesake: bool) -> Draft | None:
        templates = TEMPLATES[qtype]
        if prefer_namesake:
            templates = [t for t in templates if t[1] == "film"] or templates
        template = self.rng.choice(templates)
        if qtype in ("compositional", "inference"):
            return self._bridge_draft(qtype, template, prefer_namesake)
        return self._comparison_draft(qtype, template)

    def _bridge_draft(self, qtype: str, template: tuple, prefer_namesake: bool) -> Draft | None:
        text, subjects, relations = template
        if prefer_namesake and subjects == "film":
            subjects = "namesake film"
        subject = self.rng.choice(self.subjects[subjects])
        route = chain(subject, relations)
        if route is None or not self._fresh(text, subject.name):
            return None
        holders = [e for e, _ in route.facts]
        return Draft(qtype, text.format(subject.name), label_of(route.end), route, [*holders, route.end], route.end)

    def _comparison_draft(self, qtype: str, template: tuple) -> Draft | None:
        text, subjects, relations, earlier_wins = template
        first, second = self.rng.sample(self.subjects[subjects], 2)
        routes = [chain(first, relations), chain(second, relations)]
        if (
            None in routes or routes[0].end == routes[1].end or routes[0].facts[-1][0] is routes[1].facts[-1][0]
        ):  # distinct dates and people
            return None
        if not self._fresh(text, *sorted((first.name, second.name))):
            return None
        winner = first if (routes[0].end < routes[1].end) == earlier_wins else second
        # 2Wiki order: both first hops, then both second hops
        merged = Route(
            [e for pair in zip(*(r.evidences for r in routes)) for e in pair],
            [f for pair in zip(*(r.facts for r in routes)) for f in pair],
            None,
            [t for pair in zip(*(r.targets for r in routes)) for t in pair],
        )
        ends = [e for e, _ in merged.facts]
        return Draft(qtype, text.format(first.name, second.name), winner.name, merged, ends, winner)

    def _fresh(self, *key: str) -> bool:
        if key in self.asked:
            return False
        self.asked.add(key)
        return True

    # distractors

    def _record(self, draft: Draft, category: str) -> dict[str, Any] | None:
        gold = list(dict.fromkeys(e for e, _ in draft.route.facts))
        overlaps = _Overlap(draft)
        related = self._related(draft, gold)
        traps = [e for e in related if overlaps(e.paragraph)]
        clean = [e for e in related if not overlaps(e.paragraph)]
        if category == "distractor-path":
            if not traps:
                return None
            count = self.rng.randint(1, min(MAX_TRAPS, len(traps)))
            if isinstance(traps[0], Work) and traps[0].namesake:
                count = max(count, 2)  # the namesake with its creator: a complete wrong route
            chosen = traps[:count]
        elif category == "local-path":
            chosen = []
        else:  # summary-vs-local: any related paragraphs, as 2Wiki's retrieval would bring
            chosen = self.rng.sample(related, min(len(related), self.rng.randint(0, 2)))
        chosen += clean[:2]  # e.g. a sibling: looks relevant, does not touch the route
        need = PARAGRAPHS_PER_QUESTION - len(gold)
        chosen = self._fill(draft, gold, list(dict.fromkeys(chosen))[:need], need, overlaps)
        if len(chosen) < selection.MIN_DISTRACTORS:
            return None
        record = self._assemble(draft, gold, chosen)
        # the rule itself has the last word (_Overlap is its fast twin for picking paragraphs)
        if selection.ineligible_reason(record) or selection.category(record) != category:
            return None
        return record

    def _related(self, draft: Draft, gold: list[Entity]) -> list[Entity]:
        """Notable neighbours of the route, shuffled; first a namesake and its creator: the whole
        wrong route (the novel "Glass Harbor", then its author instead of the film's director)."""
        golden = {id(e) for e in gold}
        seen = set(golden)
        found: list[Entity] = []
        for entity in draft.ends:
            if isinstance(entity, (Person, Work)):
                for other in [entity, *neighbours(entity)]:
                    if isinstance(other, (Person, Work)) and other.paragraph and id(other) not in seen:
                        seen.add(id(other))
                        found.append(other)
        self.rng.shuffle(found)
        first = list(
            dict.fromkeys(
                x
                for e in draft.ends
                if isinstance(e, Work) and e.namesake
                for x in (e.namesake, e.namesake.creator)
                if id(x) not in golden
            )
        )
        return first + [e for e in found if e not in first]

    def _fill(
        self, draft: Draft, gold: list[Entity], chosen: list[Entity], need: int, overlaps: _Overlap
    ) -> list[Entity]:
        """Tops up with clean paragraphs of similar entities (same kinds as the gold ones)."""
        titles = {e.paragraph.title for e in [*gold, *chosen]}
        pools = [self.world.pools[e.paragraph.kind] for e in gold]
        last = draft.route.facts[-1]
        if last[1] in ("mother", "father") and last[0].generation == 2:
            # another child whose mother has the same occupation: a near-identical route
            pools.insert(0, self.world.by_mother_job[last[0].mother.occupation])
        for attempt in range(need * 20):
            if len(chosen) >= need:
                break
            candidate = self.rng.choice(pools[attempt % len(pools)])
            if candidate.paragraph.title not in titles and not overlaps(candidate.paragraph):
                titles.add(candidate.paragraph.title)
                chosen.append(candidate)
        return chosen

    def _assemble(self, draft: Draft, gold: list[Entity], distractors: list[Entity]) -> dict[str, Any]:
        paragraphs = [e.paragraph for e in [*gold, *distractors]]
        self.rng.shuffle(paragraphs)
        return {
            "_id": f"{self.rng.getrandbits(128):032x}",
            "type": draft.type,
            "question": draft.question,
            "answer": draft.answer,
            "context": [[p.title, list(p.sentences)] for p in paragraphs],
            "supporting_facts": [[e.paragraph.title, e.paragraph.facts[relation]] for e, relation in draft.route.facts],
            "evidences": draft.route.evidences,
            **record_ids(
                self.identities,
                gold,
                [(e, relation, target) for (e, relation), target in zip(draft.route.facts, draft.route.targets)],
                draft.answer_value,
            ),
        }
