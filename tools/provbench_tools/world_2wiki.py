"""A seeded generator of an invented world, written as 2WikiMultiHopQA questions (plain dev.json).

Why invented: paper 000 drops the questions a bare LLM answers from memory. Here every person,
film, novel, place and country is made up (names built from random syllables), so no model can
know a single fact, and the llm-only baseline plays that exclusion role by construction.

The world: families of three generations (grandparents, notable parents, children who are film
directors or novelists), the children's films and novels, marriages across families, films based
on novels, and namesakes (a novel with the title of an unrelated film: "Glass Harbor (film)" and
"Glass Harbor (novel)"). Every entity has one fixed paragraph, so the same paragraph recurs in
several questions and the knowledge graph built from them connects.

Questions follow 2Wiki's templates (compositional, inference, comparison, bridge_comparison);
the gold paragraphs are the ones stating each evidence triple. Distractors are other world
paragraphs, of two sorts, told apart with the very test ``twowiki_selection.category`` applies:

- traps, which overlap the gold route: a namesake work, a paragraph mentioning a hop entity (the
  director's other film, the spouse of the bridge person, the novel a film adapts) or the
  answer's own paragraph. Each offers a wrong but plausible next hop (the novel's author instead
  of the film's director, the maternal instead of the paternal grandfather);
- clean paragraphs of similar entities (other directors, other films, a director whose mother has
  the same occupation), which look alike but never touch the route.

A local-path question gets clean distractors only, a distractor-path question at least one trap,
and comparison questions are summary-vs-local whatever their distractors. Each record is checked
with ``category`` and ``ineligible_reason`` before it is kept, so the requested mix is met exactly
and every record is eligible.

Pure Python and linear in the number of questions: one family (some 9 paragraphs, 12 entities) per
question. ``python -m provbench_tools.world_2wiki OUT [--questions N] [--seed S]`` writes a
world; with no options it rewrites the bundled datasets/2wiki-mini/dev.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provbench_plugins.datasets.twowiki import selection

MINI_SEED = 0
MINI_SIZE = 30
DEFAULT_PROPORTION = (12, 12, 6)  # local-path, distractor-path, summary-vs-local (paper 000)
PARAGRAPHS_PER_QUESTION = 10  # as in 2Wiki
FAMILIES_PER_QUESTION = 1.0  # world size: entities recur across questions, paragraph count stays moderate
INFERENCE_SHARE = 0.3  # of bridge questions; the rest compositional, roughly 2Wiki's dev split
MAX_TRAPS = 3

Date = tuple[int, int, int]  # year, month, day: compares chronologically

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")

# --- invented names -------------------------------------------------------------------------

_ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s",
           "st", "t", "th", "tr", "v", "w")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ea")  # diphthongs rare: readable names
_MALE_ENDINGS = ("n", "r", "s", "l", "th", "d", "k", "m")
_FEMALE_ENDINGS = ("a", "ia", "elle", "ine", "is", "wen", "ra")
_SURNAME_ENDINGS = ("more", "well", "wick", "dane", "vale", "mont", "hart", "crest", "bury",
                    "low", "quist", "ren", "ford", "by")
_COUNTRY_ENDINGS = ("ria", "ora", "esh", "and", "ovia", "ene", "ur")
_WORD_ENDINGS = ("", "n", "r", "l", "s", "th", "nd", "x")
# English words of the title, place and text pools: no invented word may equal one of them
_PLACE_SUFFIXES = ("Bay", "Ford", "Falls", "Crossing", "Reach", "Point", "Wells", "Heights",
                   "Landing", "Mill")
_TITLE_ADJECTIVES = ("Glass", "Salt", "Ember", "Copper", "Velvet", "Quiet", "Pale", "Paper",
                     "Iron", "Amber", "Crimson", "Distant", "Borrowed", "Northern", "Brass",
                     "Silver", "Bitter", "Wandering", "Sleeping", "Burning", "Scarlet", "Gilded",
                     "Drowned", "Painted", "Restless", "Folded", "Hidden", "Cold")
_TITLE_NOUNS = ("Harbor", "Orchard", "Lantern", "Vigil", "Ledger", "Aviary", "Meridian", "Tide",
                "Furnace", "Compass", "Veil", "Garden", "Mirror", "Season", "Lighthouse",
                "Archive", "Carnival", "Parade", "Signal", "Cartographer", "Orchestra", "Tower",
                "Citadel", "Ferry", "Pilgrim", "Horizon", "Waltz", "Chorus", "Atlas", "Engine")
_FILM_GENRES = ("drama", "comedy", "thriller", "war", "musical", "crime", "romance", "mystery",
                "adventure", "horror", "western")
_NOVEL_GENRES = ("historical", "crime", "gothic", "comic", "epistolary", "science fiction",
                 "coming-of-age", "mystery", "picaresque")
_ELDER_JOBS = ("merchant", "schoolteacher", "shipbuilder", "clockmaker", "magistrate",
               "bookbinder", "farmer", "printer")
_PARENT_JOBS = ("painter", "composer", "architect", "sculptor", "photographer", "poet",
                "stage actor", "physician", "diplomat", "journalist", "violinist", "botanist")
_RESERVED = frozenset(w.lower() for w in (
    *_PLACE_SUFFIXES, *_TITLE_ADJECTIVES, *_TITLE_NOUNS, *_FILM_GENRES, *_ELDER_JOBS,
    *_PARENT_JOBS, "born", "from", "film", "films", "novel", "novels", "director", "married",
    "include", "released", "published", "adapted", "directed", "daughter", "son", "based",
    "filmed", "first", "the", "of", "and", "was", "is", "it", "he", "she", "his", "her"))


class _Names:
    """Unique invented names. Each invented word keeps one role (first name, surname, country,
    place, title word), so a name can never turn up inside another one as a whole-word phrase."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.roles: dict[str, str] = {}
        self.taken: set[str] = set()  # lower-cased full names; only tested, never iterated

    def word(self, role: str, syllables: int, endings: Sequence[str]) -> str:
        while True:
            stem = "".join(self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) for _ in range(syllables))
            if syllables > 1 and self.rng.random() < 0.2:  # vowel-initial now and then: "Orin", "Esra"
                stem = stem[len(stem) - len(stem.lstrip("bcdfghjklmnprstvw")):]
            ending = self.rng.choice(endings)
            if ending[:1] in ("a", "e", "i", "o", "u") and stem[-1] in "aeiou":
                stem = stem[:-1]  # "Mari" + "a" gives "Mara", not "Mariia"
            w = (stem + ending).capitalize()
            if w.lower() not in _RESERVED and self.roles.setdefault(w.lower(), role) == role:
                return w

    def unique(self, make: Callable[[], str]) -> str:
        while True:
            name = make()
            if name.lower() not in self.taken:
                self.taken.add(name.lower())
                return name

    def title(self) -> str:
        def make() -> str:
            roll = self.rng.random()
            if roll < 0.45:
                return f"{self.rng.choice(_TITLE_ADJECTIVES)} {self.rng.choice(_TITLE_NOUNS)}"
            invented = self.word("title", 2, _WORD_ENDINGS)
            if roll < 0.75:
                return f"The {self.rng.choice(_TITLE_NOUNS)} of {invented}"
            return f"{invented} {self.rng.choice(_TITLE_NOUNS)}"
        return self.unique(make)


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
        self.names = _Names(rng)
        self.countries = [self.names.unique(lambda: self.names.word("country", 2, _COUNTRY_ENDINGS))
                          for _ in range(4 + n_families // 40)]
        self.places = [self._place() for _ in range(6 + n_families // 2)]
        pool = 30 + n_families // 3  # first names recur, as in a real population
        self.first_names = {female: [self.names.word("first", 2, _FEMALE_ENDINGS if female else _MALE_ENDINGS)
                                     for _ in range(pool)] for female in (False, True)}
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
            return f"{self.names.word('place', 2, _WORD_ENDINGS)} {self.rng.choice(_PLACE_SUFFIXES)}"
        name = self.names.unique(make)
        return Place(name, self.rng.choice(self.countries))

    def _surname(self) -> str:
        return self.names.word("surname", self.rng.choice((1, 2)), _SURNAME_ENDINGS)

    def _person(self, female: bool, surname: str, born_year: int, generation: int, family: int,
                job: str, father: Person | None = None, mother: Person | None = None) -> Person:
        name = self.names.unique(lambda: f"{self.rng.choice(self.first_names[female])} {surname}")
        place = self.rng.choice(self.places)
        # mostly a citizen of the birth country; sometimes not, so nationality is its own hop
        country = place.country if self.rng.random() < 0.85 else self.rng.choice(self.countries)
        born = (born_year, self.rng.randint(1, 12), self.rng.randint(1, 28))
        person = Person(name=name, female=female, born=born, place=place, country=country,
                        occupation=job, family=family, generation=generation,
                        father=father, mother=mother)
        for parent in (father, mother):
            if parent is not None:
                parent.children.append(person)
        self.people.append(person)
        return person

    def _elders(self, surname: str, year: int, family: int) -> tuple[Person, Person]:
        """Grandparents: a married couple, the wife with her own surname; few get a paragraph."""
        rng = self.rng
        husband = self._person(False, surname, year, 0, family, rng.choice(_ELDER_JOBS))
        wife = self._person(True, self._surname(), year + rng.randint(-5, 5), 0, family,
                            rng.choice(_ELDER_JOBS))
        husband.spouse, wife.spouse = wife, husband
        husband.notable, wife.notable = rng.random() < 0.3, rng.random() < 0.3
        return husband, wife

    def _family(self, family: int) -> None:
        rng = self.rng
        surname = self._surname()
        elder_year = rng.randint(1870, 1905)
        grandfather, grandmother = self._elders(surname, elder_year, family)
        mat_grandfather, mat_grandmother = self._elders(self._surname(), elder_year + rng.randint(-6, 6), family)
        father = self._person(False, surname, _after(rng, grandfather, grandmother), 1, family,
                              rng.choice(_PARENT_JOBS), grandfather, grandmother)
        mother = self._person(True, mat_grandfather.name.split()[-1],
                              _after(rng, mat_grandfather, mat_grandmother), 1, family,
                              rng.choice(_PARENT_JOBS), mat_grandfather, mat_grandmother)
        father.spouse, mother.spouse = mother, father
        for index in range(1 + (rng.random() < 0.5)):
            # the first child alternates, so every world has directors and novelists
            director = family % 2 == 0 if index == 0 else rng.random() < 0.55
            child = self._person(rng.random() < 0.5, surname, _after(rng, father, mother), 2, family,
                                 "film director" if director else "novelist", father, mother)
            for _ in range(rng.randint(2, 3)):  # two or more: the director's other film is a trap
                self._work(child, "film" if director else "novel")

    def _work(self, creator: Person, kind: str, name: str | None = None) -> Work:
        rng = self.rng
        year = rng.randint(creator.born[0] + 22, min(creator.born[0] + 55, 2023))  # born 1990 at the latest
        work = Work(name=name or self.names.title(), kind=kind, creator=creator,
                    released=(year, rng.randint(1, 12), rng.randint(1, 28)),
                    genre=rng.choice(_FILM_GENRES if kind == "film" else _NOVEL_GENRES))
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
            if novel.released < film.released and not novel.adaptations \
                    and novel.creator.family != film.creator.family:
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
    text.add(f"{p.name} (born {fmt_date(p.born)}) {verb} {_article(p.occupation)} {p.occupation} "
             f"from {p.country}.", "date of birth", "country of citizenship")
    text.add(f"{pronoun} was born in {p.place.name}.", "place of birth")
    if p.father and p.mother:
        text.add(f"{pronoun} {verb} the {'daughter' if p.female else 'son'} of {p.father.name} "
                 f"and {p.mother.name}.", "father", "mother")
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
    text.add(f"{film.name} is {_article(film.genre)} {film.genre} film directed by {film.creator.name}.",
             "director")
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
    attribute = {"mother": "mother", "father": "father", "spouse": "spouse", "date of birth": "born",
                 "place of birth": "place", "country of citizenship": "country",
                 "publication date": "released", "based on": "based_on"}[relation]
    return getattr(entity, attribute, None)


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return fmt_date(value)
    return value if isinstance(value, str) else value.name


@dataclass
class Route:
    evidences: list[list[str]]
    facts: list[tuple[Entity, str]]  # (entity whose paragraph states it, relation)
    end: Any


def _chain(start: Entity, relations: Sequence[str]) -> Route | None:
    """Follows ``relations`` from ``start``; None unless every hop is stated in a paragraph."""
    route, current = Route([], [], start), start
    for relation in relations:
        if not isinstance(current, (Person, Work)) or current.paragraph is None \
                or relation not in current.paragraph.facts:
            return None
        target = _follow(current, relation)
        if target is None:
            return None
        route.evidences.append([current.name, relation, _label(target)])
        route.facts.append((current, relation))
        current = target
    route.end = current
    return route


def _neighbours(entity: Entity) -> list[Any]:
    if isinstance(entity, Person):
        siblings = entity.father.children if entity.father else []
        return [*entity.works, entity.spouse, entity.father, entity.mother, *entity.children, *siblings]
    return [entity.namesake, entity.creator, entity.based_on, *entity.adaptations, *entity.creator.works]


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
TEMPLATES = {"compositional": COMPOSITIONAL, "inference": INFERENCE, "comparison": COMPARISON,
             "bridge_comparison": BRIDGE_COMPARISON}


@dataclass
class Draft:
    type: str
    question: str
    answer: str
    route: Route  # evidences and facts of the whole question
    ends: list[Any]  # entities the route passes through or ends at


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

    def __init__(self, world: World, rng: random.Random):
        self.world, self.rng = world, rng
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
        route = _chain(subject, relations)
        if route is None or not self._fresh(text, subject.name):
            return None
        holders = [e for e, _ in route.facts]
        return Draft(qtype, text.format(subject.name), _label(route.end), route, [*holders, route.end])

    def _comparison_draft(self, qtype: str, template: tuple) -> Draft | None:
        text, subjects, relations, earlier_wins = template
        first, second = self.rng.sample(self.subjects[subjects], 2)
        routes = [_chain(first, relations), _chain(second, relations)]
        if None in routes or routes[0].end == routes[1].end \
                or routes[0].facts[-1][0] is routes[1].facts[-1][0]:  # distinct dates and people
            return None
        if not self._fresh(text, *sorted((first.name, second.name))):
            return None
        winner = first if (routes[0].end < routes[1].end) == earlier_wins else second
        # 2Wiki order: both first hops, then both second hops
        merged = Route([e for pair in zip(*(r.evidences for r in routes)) for e in pair],
                       [f for pair in zip(*(r.facts for r in routes)) for f in pair], None)
        ends = [e for e, _ in merged.facts]
        return Draft(qtype, text.format(first.name, second.name), winner.name, merged, ends)

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
                for other in [entity, *_neighbours(entity)]:
                    if isinstance(other, (Person, Work)) and other.paragraph and id(other) not in seen:
                        seen.add(id(other))
                        found.append(other)
        self.rng.shuffle(found)
        first = list(dict.fromkeys(x for e in draft.ends if isinstance(e, Work) and e.namesake
                                   for x in (e.namesake, e.namesake.creator) if id(x) not in golden))
        return first + [e for e in found if e not in first]

    def _fill(self, draft: Draft, gold: list[Entity], chosen: list[Entity], need: int,
              overlaps: _Overlap) -> list[Entity]:
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
            "supporting_facts": [[e.paragraph.title, e.paragraph.facts[relation]]
                                 for e, relation in draft.route.facts],
            "evidences": draft.route.evidences,
        }


# --- the public API -------------------------------------------------------------------------


def resolve_mix(n_questions: int, mix: Sequence[int] | None) -> tuple[int, int, int]:
    """Counts of (local-path, distractor-path, summary-vs-local); default 40% / 40% / 20%."""
    if n_questions < 0:
        raise ValueError(f"n_questions must be >= 0, got {n_questions}")
    if mix is None:
        local = distractor = round(n_questions * DEFAULT_PROPORTION[0] / sum(DEFAULT_PROPORTION))
        return local, distractor, n_questions - local - distractor
    counts = tuple(int(c) for c in mix)
    if len(counts) != 3 or min(counts) < 0 or sum(counts) != n_questions:
        raise ValueError(f"mix must be 3 non-negative counts summing to n_questions={n_questions}, got {mix!r}")
    return counts  # type: ignore[return-value]


def _slots(counts: tuple[int, int, int]) -> list[tuple[str, str]]:
    """(category, type) per question: bridge categories split compositional / inference."""
    local, distractor, summary = counts
    slots = []
    for category, n in (("local-path", local), ("distractor-path", distractor)):
        inference = round(n * INFERENCE_SHARE)
        slots += [(category, "compositional")] * (n - inference) + [(category, "inference")] * inference
    bridge = summary // 2
    slots += [("summary-vs-local", "comparison")] * (summary - bridge)
    slots += [("summary-vs-local", "bridge_comparison")] * bridge
    return slots


def generate_world(n_questions: int = MINI_SIZE, seed: int = MINI_SEED,
                   mix: tuple[int, int, int] | None = None) -> list[dict[str, Any]]:
    """``n_questions`` 2Wiki records in a world invented from ``seed``, in the requested mix."""
    counts = resolve_mix(n_questions, mix)
    rng = random.Random(seed)
    world = World(rng, max(6, math.ceil(n_questions * FAMILIES_PER_QUESTION)))
    writer = QuestionWriter(world, rng)
    records, namesake_shown = [], False
    for category, qtype in _slots(counts):
        # the first distractor-path compositional question is about a film with a namesake
        prefer = category == "distractor-path" and qtype == "compositional" and not namesake_shown
        records.append(writer.write(category, qtype, prefer))
        namesake_shown = namesake_shown or prefer
    rng.shuffle(records)  # categories interleave in file order, as in 2Wiki
    return records


def write_world(path: str | Path, n_questions: int = MINI_SIZE, seed: int = MINI_SEED,
                mix: tuple[int, int, int] | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = generate_world(n_questions, seed, mix)
    path.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m provbench_tools.world_2wiki",
        description="Write an invented world as 2WikiMultiHopQA questions (plain dev.json format). "
                    "Defaults reproduce datasets/2wiki-mini/dev.json.")
    parser.add_argument("out", type=Path, help="output .json file")
    parser.add_argument("--questions", type=int, default=MINI_SIZE, help=f"number of questions (default {MINI_SIZE})")
    parser.add_argument("--seed", type=int, default=MINI_SEED, help=f"world seed (default {MINI_SEED})")
    parser.add_argument("--mix", type=int, nargs=3, metavar=("LOCAL", "DISTRACTOR", "SUMMARY"),
                        help="questions per category (default 40%% / 40%% / 20%%)")
    args = parser.parse_args(argv)
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    try:
        path = write_world(args.out, args.questions, args.seed, tuple(args.mix) if args.mix else None)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote {args.questions} questions to {path}")


if __name__ == "__main__":
    main()
