"""The invented world: families, works and places, each with one fixed paragraph, and the
relations a question can follow between them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .names import (
    COUNTRY_ENDINGS,
    ELDER_JOBS,
    FEMALE_ENDINGS,
    FILM_GENRES,
    MALE_ENDINGS,
    MONTHS,
    NOVEL_GENRES,
    PARENT_JOBS,
    PLACE_SUFFIXES,
    SURNAME_ENDINGS,
    WORD_ENDINGS,
    Names,
)


MINI_SEED = 0
MINI_SIZE = 30
DEFAULT_PROPORTION = (12, 12, 6)  # local-path, distractor-path, summary-vs-local (paper 000)
PARAGRAPHS_PER_QUESTION = 10  # as in 2Wiki
FAMILIES_PER_QUESTION = 1.0  # world size: entities recur across questions, paragraph count stays moderate
INFERENCE_SHARE = 0.3  # of bridge questions; the rest compositional, roughly 2Wiki's dev split
MAX_TRAPS = 3

Date = tuple[int, int, int]  # year, month, day: compares chronologically


# --- the world ------------------------------------------------------------------------------


@dataclass(eq=False)
class Place:
    name: str
    country: str


@dataclass(eq=False)
class Paragraph:
    title: str
    sentences: list[str]
    facts: dict[str, int]  # relation -> index of the sentence stating it
    kind: str  # pool of similar paragraphs: film, novel, director, novelist, parent, elder


@dataclass(eq=False, kw_only=True)
class Person:
    name: str
    female: bool
    born: Date
    place: Place
    country: str
    occupation: str
    family: int
    generation: int  # 0 grandparents, 1 parents, 2 children
    notable: bool = True  # has a paragraph
    father: Person | None = None
    mother: Person | None = None
    spouse: Person | None = None
    children: list[Person] = field(default_factory=list)
    works: list[Work] = field(default_factory=list)
    paragraph: Paragraph | None = None


@dataclass(eq=False, kw_only=True)
class Work:
    name: str
    kind: str  # film | novel
    creator: Person
    released: Date
    genre: str
    based_on: Work | None = None
    adaptations: list[Work] = field(default_factory=list)
    filmed_in: Place | None = None
    namesake: Work | None = None
    paragraph: Paragraph | None = None


Entity = Person | Work


def fmt_date(date: Date) -> str:
    year, month, day = date
    return f"{day} {MONTHS[month - 1]} {year}"


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _listing(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class World:
    """People, works and places with one paragraph per notable entity."""

    def __init__(self, rng: random.Random, n_families: int):
        self.rng = rng
        self.names = Names(rng)
        self.countries = [
            self.names.unique(lambda: self.names.word("country", 2, COUNTRY_ENDINGS))
            for _ in range(4 + n_families // 40)
        ]
        self.places = [self._place() for _ in range(6 + n_families // 2)]
        pool = 30 + n_families // 3  # first names recur, as in a real population
        self.first_names = {
            female: [self.names.word("first", 2, FEMALE_ENDINGS if female else MALE_ENDINGS) for _ in range(pool)]
            for female in (False, True)
        }
        self.people: list[Person] = []
        self.works: list[Work] = []
        for family in range(n_families):
            self._family(family)
        self._marry_children()
        self._adapt_novels()
        self._add_namesakes()
        self.entities: list[Entity] = [e for e in [*self.people, *self.works] if _notable(e)]
        for entity in self.entities:
            entity.paragraph = _paragraph(entity)
        self.pools: dict[str, list[Entity]] = {}
        self.by_mother_job: dict[str, list[Person]] = {}
        for entity in self.entities:
            self.pools.setdefault(entity.paragraph.kind, []).append(entity)
            if isinstance(entity, Person) and entity.generation == 2:
                self.by_mother_job.setdefault(entity.mother.occupation, []).append(entity)

    # people

    def _place(self) -> Place:
        def make() -> str:
            return f"{self.names.word('place', 2, WORD_ENDINGS)} {self.rng.choice(PLACE_SUFFIXES)}"

        name = self.names.unique(make)
        return Place(name, self.rng.choice(self.countries))

    def _surname(self) -> str:
        return self.names.word("surname", self.rng.choice((1, 2)), SURNAME_ENDINGS)

    def _person(
        self,
        female: bool,
        surname: str,
        born_year: int,
        generation: int,
        family: int,
        job: str,
        father: Person | None = None,
        mother: Person | None = None,
    ) -> Person:
        name = self.names.unique(lambda: f"{self.rng.choice(self.first_names[female])} {surname}")
        place = self.rng.choice(self.places)
        # mostly a citizen of the birth country; sometimes not, so nationality is its own hop
        country = place.country if self.rng.random() < 0.85 else self.rng.choice(self.countries)
        born = (born_year, self.rng.randint(1, 12), self.rng.randint(1, 28))
        person = Person(
            name=name,
            female=female,
            born=born,
            place=place,
            country=country,
            occupation=job,
            family=family,
            generation=generation,
            father=father,
            mother=mother,
        )
        for parent in (father, mother):
            if parent is not None:
                parent.children.append(person)
        self.people.append(person)
        return person

    def _elders(self, surname: str, year: int, family: int) -> tuple[Person, Person]:
        """Grandparents: a married couple, the wife with her own surname; few get a paragraph."""
        rng = self.rng
        husband = self._person(False, surname, year, 0, family, rng.choice(ELDER_JOBS))
        wife = self._person(True, self._surname(), year + rng.randint(-5, 5), 0, family, rng.choice(ELDER_JOBS))
        husband.spouse, wife.spouse = wife, husband
        husband.notable, wife.notable = rng.random() < 0.3, rng.random() < 0.3
        return husband, wife

    def _family(self, family: int) -> None:
        rng = self.rng
        surname = self._surname()
        elder_year = rng.randint(1870, 1905)
        grandfather, grandmother = self._elders(surname, elder_year, family)
        mat_grandfather, mat_grandmother = self._elders(self._surname(), elder_year + rng.randint(-6, 6), family)
        father = self._person(
            False,
            surname,
            _after(rng, grandfather, grandmother),
            1,
            family,
            rng.choice(PARENT_JOBS),
            grandfather,
            grandmother,
        )
        mother = self._person(
            True,
            mat_grandfather.name.split()[-1],
            _after(rng, mat_grandfather, mat_grandmother),
            1,
            family,
            rng.choice(PARENT_JOBS),
            mat_grandfather,
            mat_grandmother,
        )
        father.spouse, mother.spouse = mother, father
        for index in range(1 + (rng.random() < 0.5)):
            # the first child alternates, so every world has directors and novelists
            director = family % 2 == 0 if index == 0 else rng.random() < 0.55
            child = self._person(
                rng.random() < 0.5,
                surname,
                _after(rng, father, mother),
                2,
                family,
                "film director" if director else "novelist",
                father,
                mother,
            )
            for _ in range(rng.randint(2, 3)):  # two or more: the director's other film is a trap
                self._work(child, "film" if director else "novel")

    def _work(self, creator: Person, kind: str, name: str | None = None) -> Work:
        rng = self.rng
        year = rng.randint(creator.born[0] + 22, min(creator.born[0] + 55, 2023))  # born 1990 at the latest
        work = Work(
            name=name or self.names.title(),
            kind=kind,
            creator=creator,
            released=(year, rng.randint(1, 12), rng.randint(1, 28)),
            genre=rng.choice(FILM_GENRES if kind == "film" else NOVEL_GENRES),
        )
        if kind == "film" and rng.random() < 0.4:
            work.filmed_in = rng.choice(self.places)
        creator.works.append(work)
        self.works.append(work)
        return work

    def _marry_children(self) -> None:
        children = [p for p in self.people if p.generation == 2]
        self.rng.shuffle(children)
        single: list[Person] = []
        for person in children:
            partner = next((s for s in single if s.female != person.female and s.family != person.family), None)
            if partner is not None and self.rng.random() < 0.7:
                single.remove(partner)
                person.spouse, partner.spouse = partner, person
            else:
                single.append(person)
                single = single[-8:]  # keeps matching linear in the world size

    def _adapt_novels(self) -> None:
        """Some films are based on an earlier novel from another family (a two-hop route)."""
        novels = [w for w in self.works if w.kind == "novel"]
        for film in [w for w in self.works if w.kind == "film"]:
            if not novels or self.rng.random() >= 0.3:
                continue
            novel = self.rng.choice(novels)
            if novel.released < film.released and not novel.adaptations and novel.creator.family != film.creator.family:
                film.based_on = novel
                novel.adaptations.append(film)

    def _add_namesakes(self) -> None:
        """Some films get an unrelated novel of the same title, by a novelist of another family."""
        films = [w for w in self.works if w.kind == "film"]
        novelists = [p for p in self.people if p.occupation == "novelist"]
        made = False
        for film in films:
            if made and self.rng.random() >= 0.2:  # until the first exists: every world has one
                continue
            others = [self.rng.choice(novelists) for _ in range(5)]
            author = next((p for p in others if p.family != film.creator.family), None)
            if author is not None:
                film.namesake = self._work(author, "novel", name=film.name)
                film.namesake.namesake = film
                made = True


def _after(rng: random.Random, *parents: Person) -> int:
    """A child's birth year: 22 to 38 years after the younger parent, and not after 1990."""
    return min(max(p.born[0] for p in parents) + rng.randint(22, 38), 1990)


def _notable(entity: Entity) -> bool:
    return entity.notable if isinstance(entity, Person) else True


# --- paragraphs -----------------------------------------------------------------------------


def _paragraph(entity: Entity) -> Paragraph:
    if isinstance(entity, Person):
        return _person_paragraph(entity)
    return _film_paragraph(entity) if entity.kind == "film" else _novel_paragraph(entity)


class _Sentences:
    def __init__(self) -> None:
        self.sentences: list[str] = []
        self.facts: dict[str, int] = {}

    def add(self, sentence: str, *relations: str) -> None:
        for relation in relations:
            self.facts[relation] = len(self.sentences)
        self.sentences.append(sentence)


def _person_paragraph(p: Person) -> Paragraph:
    pronoun, possessive = ("She", "Her") if p.female else ("He", "His")
    verb = "is" if p.born[0] >= 1930 else "was"
    text = _Sentences()
    text.add(
        f"{p.name} (born {fmt_date(p.born)}) {verb} {_article(p.occupation)} {p.occupation} from {p.country}.",
        "date of birth",
        "country of citizenship",
    )
    text.add(f"{pronoun} was born in {p.place.name}.", "place of birth")
    if p.father and p.mother:
        text.add(
            f"{pronoun} {verb} the {'daughter' if p.female else 'son'} of {p.father.name} and {p.mother.name}.",
            "father",
            "mother",
        )
    if p.spouse:
        text.add(f"{pronoun} married {p.spouse.name}.", "spouse")
    if p.works:
        noun = "films" if p.works[0].kind == "film" else "novels"
        text.add(f"{possessive} {noun} include {_listing([w.name for w in p.works])}.")
    return Paragraph(p.name, text.sentences, text.facts, _person_kind(p))


def _person_kind(p: Person) -> str:
    if p.generation < 2:
        return "elder" if p.generation == 0 else "parent"
    return "director" if p.occupation == "film director" else "novelist"


def _title(work: Work) -> str:
    return f"{work.name} ({work.kind})" if work.namesake else work.name


def _film_paragraph(film: Work) -> Paragraph:
    text = _Sentences()
    text.add(f"{film.name} is {_article(film.genre)} {film.genre} film directed by {film.creator.name}.", "director")
    text.add(f"It was released on {fmt_date(film.released)}.", "publication date")
    if film.based_on:
        text.add(f"It is based on the novel {film.based_on.name} by {film.based_on.creator.name}.", "based on")
    if film.filmed_in:
        text.add(f"It was filmed in {film.filmed_in.name}.", "filming location")
    return Paragraph(_title(film), text.sentences, text.facts, "film")


def _novel_paragraph(novel: Work) -> Paragraph:
    text = _Sentences()
    text.add(f"{novel.name} is {_article(novel.genre)} {novel.genre} novel by {novel.creator.name}.", "author")
    text.add(f"It was first published on {fmt_date(novel.released)}.", "publication date")
    for film in novel.adaptations:
        text.add(f"It was adapted into the film {film.name}, directed by {film.creator.name}.")
    return Paragraph(_title(novel), text.sentences, text.facts, "novel")


# --- following relations --------------------------------------------------------------------


def _follow(entity: Entity, relation: str) -> Any:
    """The object of ``entity -relation->``: an entity, a place, a country name or a date."""
    if relation in ("director", "author"):
        wanted = "film" if relation == "director" else "novel"
        return entity.creator if isinstance(entity, Work) and entity.kind == wanted else None
    attribute = {
        "mother": "mother",
        "father": "father",
        "spouse": "spouse",
        "date of birth": "born",
        "place of birth": "place",
        "country of citizenship": "country",
        "publication date": "released",
        "based on": "based_on",
    }[relation]
    return getattr(entity, attribute, None)


def label_of(value: Any) -> str:
    if isinstance(value, tuple):
        return fmt_date(value)
    return value if isinstance(value, str) else value.name


@dataclass
class Route:
    evidences: list[list[str]]
    facts: list[tuple[Entity, str]]  # (entity whose paragraph states it, relation)
    end: Any
    targets: list[Any] = field(default_factory=list)  # each fact's object (an entity, place, country or date)


def chain(start: Entity, relations: Sequence[str]) -> Route | None:
    """Follows ``relations`` from ``start``; None unless every hop is stated in a paragraph."""
    route, current = Route([], [], start), start
    for relation in relations:
        if (
            not isinstance(current, (Person, Work))
            or current.paragraph is None
            or relation not in current.paragraph.facts
        ):
            return None
        target = _follow(current, relation)
        if target is None:
            return None
        route.evidences.append([current.name, relation, label_of(target)])
        route.facts.append((current, relation))
        route.targets.append(target)
        current = target
    route.end = current
    return route


def neighbours(entity: Entity) -> list[Any]:
    if isinstance(entity, Person):
        siblings = entity.father.children if entity.father else []
        return [*entity.works, entity.spouse, entity.father, entity.mother, *entity.children, *siblings]
    return [entity.namesake, entity.creator, entity.based_on, *entity.adaptations, *entity.creator.works]
