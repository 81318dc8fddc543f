"""Wikidata-like ids and aliases for the invented world, in the form of 2WikiMultihopQA's data_ids
release: each record's ``entity_ids``, ``evidences_id`` and ``answer_id``, and the release's
``id_aliases.json`` (one line per id: ``Q_id``, ``aliases``, ``demonyms``), from which the
official evaluation also accepts an answer's other names.

Where a real corpus would have another name, the invented one gets it: a person's full name with
a middle name, and with the middle initial ("Orin Tavel Vale", "Orin T. Vale"); a country's long
form ("Republic of Velmoria") and demonym ("Velmorian"); a title without its leading article
("Harbor of Wobrith" for "The Harbor of Wobrith"). Places keep one name; dates have no id
("date_information" in ``evidences_id``, as in the release).

Each choice is drawn from a generator seeded by the entity's kind and name, never from the
world's own, so a world (its questions, answers and paragraphs) is the same with or without
aliases, and the aliases are the same for the same seed.
"""

from __future__ import annotations

import random
from typing import Any

from .world import Person, Place, Work, World

FIRST_ID = 900001  # far above the ids the tests' hand-made fixtures use
DATE_ID = "date_information"  # the release's stand-in for a date object
MIDDLE_NAME_SHARE = 0.6  # of people: the rest have no other name
LONG_FORMS = ("Republic of {}", "Kingdom of {}", "Federation of {}", "Commonwealth of {}")
DEMONYM_ENDINGS = {"ria": "rian", "ora": "oran", "esh": "eshi", "and": "ander", "ovia": "ovian", "ene": "enian"}


class Identities:
    """A Q id for every country, place, person and work of ``world``, and each one's other names."""

    def __init__(self, world: World):
        self.world = world
        values: list[Any] = [*world.countries, *world.places, *world.people, *world.works]
        self.ids = {self._key(v): f"Q{FIRST_ID + i}" for i, v in enumerate(values)}
        self.names = {self.ids[self._key(v)]: v for v in values}

    @staticmethod
    def _key(value: Any) -> Any:
        return value if isinstance(value, str) else id(value)  # a country is its name

    def of(self, value: Any) -> str:
        """The id of a country, place, person or work; ``date_information`` for a date."""
        return DATE_ID if isinstance(value, tuple) else self.ids[self._key(value)]

    def answer_id(self, value: Any) -> str | None:
        return None if isinstance(value, tuple) else self.of(value)

    def alias_line(self, q_id: str) -> dict[str, Any]:
        """One line of ``id_aliases.json``."""
        value = self.names[q_id]
        aliases, demonyms = other_names(value, self.world)
        return {"Q_id": q_id, "aliases": aliases, "demonyms": demonyms}


def other_names(value: Any, world: World) -> tuple[list[str], list[str]]:
    """(aliases, demonyms) of one entity of ``world``."""
    if isinstance(value, Person):
        return _person_aliases(value, world), []
    if isinstance(value, Work):
        return ([value.name[len("The ") :]] if value.name.startswith("The ") else []), []
    if isinstance(value, Place):
        return [], []
    rng = random.Random(f"country:{value}")
    return [rng.choice(LONG_FORMS).format(value)], [_demonym(value)]


def _person_aliases(person: Person, world: World) -> list[str]:
    rng = random.Random(f"person:{person.name}")
    if rng.random() >= MIDDLE_NAME_SHARE:
        return []
    first, surname = person.name.split(" ", 1)
    pool = [n for n in world.first_names[rng.random() < 0.5] if n != first]
    middle = rng.choice(pool)
    return [f"{first} {middle} {surname}", f"{first} {middle[0]}. {surname}"]


def _demonym(country: str) -> str:
    for ending, demonym in DEMONYM_ENDINGS.items():
        if country.endswith(ending):
            return country[: -len(ending)] + demonym
    return country + "i"  # "-ur": Kadur, Kaduri


def record_ids(identities: Identities, holders: list[Any], facts: list[tuple[Any, str, Any]], answer: Any) -> dict:
    """The data_ids release's three fields of one record: the ids of the entities its evidence is
    about, its evidence triples as ids, and its answer's id (None for a date)."""
    return {
        "entity_ids": "_".join(identities.of(h) for h in holders),
        "evidences_id": [[identities.of(s), relation, identities.of(o)] for s, relation, o in facts],
        "answer_id": identities.answer_id(answer),
    }


def alias_lines(identities: Identities, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``id_aliases.json``'s lines for every id the records name, in id order (the release lists
    every entity, those without another name with empty lists)."""
    named = {i for r in records for i in r["entity_ids"].split("_")}
    named |= {i for r in records for s, _, o in r["evidences_id"] for i in (s, o) if i != DATE_ID}
    named |= {r["answer_id"] for r in records if r["answer_id"]}
    return [identities.alias_line(q_id) for q_id in sorted(named, key=lambda q: int(q[1:]))]
