"""Invented names: syllables, suffixes and word lists a generated world draws from."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

# --- invented names -------------------------------------------------------------------------

_ONSETS = (
    "b",
    "br",
    "c",
    "d",
    "dr",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "st",
    "t",
    "th",
    "tr",
    "v",
    "w",
)
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ea")  # diphthongs rare: readable names
MALE_ENDINGS = ("n", "r", "s", "l", "th", "d", "k", "m")
FEMALE_ENDINGS = ("a", "ia", "elle", "ine", "is", "wen", "ra")
SURNAME_ENDINGS = (
    "more",
    "well",
    "wick",
    "dane",
    "vale",
    "mont",
    "hart",
    "crest",
    "bury",
    "low",
    "quist",
    "ren",
    "ford",
    "by",
)
COUNTRY_ENDINGS = ("ria", "ora", "esh", "and", "ovia", "ene", "ur")
WORD_ENDINGS = ("", "n", "r", "l", "s", "th", "nd", "x")
# English words of the title, place and text pools: no invented word may equal one of them
PLACE_SUFFIXES = ("Bay", "Ford", "Falls", "Crossing", "Reach", "Point", "Wells", "Heights", "Landing", "Mill")
_TITLE_ADJECTIVES = (
    "Glass",
    "Salt",
    "Ember",
    "Copper",
    "Velvet",
    "Quiet",
    "Pale",
    "Paper",
    "Iron",
    "Amber",
    "Crimson",
    "Distant",
    "Borrowed",
    "Northern",
    "Brass",
    "Silver",
    "Bitter",
    "Wandering",
    "Sleeping",
    "Burning",
    "Scarlet",
    "Gilded",
    "Drowned",
    "Painted",
    "Restless",
    "Folded",
    "Hidden",
    "Cold",
)
_TITLE_NOUNS = (
    "Harbor",
    "Orchard",
    "Lantern",
    "Vigil",
    "Ledger",
    "Aviary",
    "Meridian",
    "Tide",
    "Furnace",
    "Compass",
    "Veil",
    "Garden",
    "Mirror",
    "Season",
    "Lighthouse",
    "Archive",
    "Carnival",
    "Parade",
    "Signal",
    "Cartographer",
    "Orchestra",
    "Tower",
    "Citadel",
    "Ferry",
    "Pilgrim",
    "Horizon",
    "Waltz",
    "Chorus",
    "Atlas",
    "Engine",
)
FILM_GENRES = (
    "drama",
    "comedy",
    "thriller",
    "war",
    "musical",
    "crime",
    "romance",
    "mystery",
    "adventure",
    "horror",
    "western",
)
NOVEL_GENRES = (
    "historical",
    "crime",
    "gothic",
    "comic",
    "epistolary",
    "science fiction",
    "coming-of-age",
    "mystery",
    "picaresque",
)
ELDER_JOBS = ("merchant", "schoolteacher", "shipbuilder", "clockmaker", "magistrate", "bookbinder", "farmer", "printer")
PARENT_JOBS = (
    "painter",
    "composer",
    "architect",
    "sculptor",
    "photographer",
    "poet",
    "stage actor",
    "physician",
    "diplomat",
    "journalist",
    "violinist",
    "botanist",
)
_RESERVED = frozenset(
    w.lower()
    for w in (
        *PLACE_SUFFIXES,
        *_TITLE_ADJECTIVES,
        *_TITLE_NOUNS,
        *FILM_GENRES,
        *ELDER_JOBS,
        *PARENT_JOBS,
        "born",
        "from",
        "film",
        "films",
        "novel",
        "novels",
        "director",
        "married",
        "include",
        "released",
        "published",
        "adapted",
        "directed",
        "daughter",
        "son",
        "based",
        "filmed",
        "first",
        "the",
        "of",
        "and",
        "was",
        "is",
        "it",
        "he",
        "she",
        "his",
        "her",
    )
)


class Names:
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
                stem = stem[len(stem) - len(stem.lstrip("bcdfghjklmnprstvw")) :]
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
            invented = self.word("title", 2, WORD_ENDINGS)
            if roll < 0.75:
                return f"The {self.rng.choice(_TITLE_NOUNS)} of {invented}"
            return f"{invented} {self.rng.choice(_TITLE_NOUNS)}"

        return self.unique(make)
