"""Finding entity names in text: one Aho-Corasick automaton for all names, linear in the text.

The test is the one :func:`mention_pattern` states: a name occurs in a text when it appears as
a whole word or phrase, case-insensitively, with any white space between its words. Searching
each of E names in each of T texts with a regular expression costs E x T searches (millions on
a few thousand passages); :class:`MentionMatcher` reads each text once, whatever E is. The
regular expression stays for single questions (is this one name in this one text?).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Mapping

_WORD = re.compile(r"\w")


@lru_cache(maxsize=65536)
def mention_pattern(name: str) -> re.Pattern[str]:
    """``name`` as a whole word or phrase, case-insensitive, any white space between words."""
    return re.compile(r"(?<!\w)" + re.escape(" ".join(name.split())).replace(r"\ ", r"\s+") + r"(?!\w)", re.I)


def mentions(text: str, name: str) -> bool:
    return mention_pattern(name).search(text) is not None


def _fold(ch: str) -> str:
    low = ch.lower()
    return low if len(low) == 1 else ch  # keep offsets: a character never becomes two


_SPACES = re.compile(r"\s+")


def fold_text(text: str) -> str:
    """Lower-cased (character for character) with every run of white space as one space."""
    spaced = _SPACES.sub(" ", text)
    if spaced.isascii():  # the common case: str.lower keeps every offset
        return spaced.lower()
    return "".join(_fold(ch) for ch in spaced)


def name_key(name: str) -> str:
    return fold_text(" ".join(name.split()))


class MentionMatcher:
    """All of ``names`` at once: which of them a text mentions (the :func:`mention_pattern` test)."""

    def __init__(self, names: Iterable[str]):
        import ahocorasick

        self._names: dict[str, list[str]] = {}
        for name in names:
            key = name_key(name)
            if key:
                self._names.setdefault(key, [])
                if name not in self._names[key]:
                    self._names[key].append(name)
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
        for key in self._names:
            self._automaton.add_word(key, key)
        if self._names:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._names)

    def names_in(self, text: str) -> set[str]:
        """The names (as given) that ``text`` mentions as whole words."""
        if not self._names:
            return set()
        folded = fold_text(text)
        found: set[str] = set()
        for end, key in self._automaton.iter(folded):
            if key in found:
                continue
            start = end - len(key) + 1
            if (start > 0 and _WORD.match(folded[start - 1])) or (
                end + 1 < len(folded) and _WORD.match(folded[end + 1])
            ):
                continue  # part of a longer word
            found.add(key)
        return {name for key in found for name in self._names[key]}

    def link(self, texts: Mapping[str, str]) -> dict[str, set[str]]:
        """For each name, the ids of the texts mentioning it (names mentioned nowhere are left out)."""
        linked: dict[str, set[str]] = {}
        for text_id, text in texts.items():
            for name in self.names_in(text):
                linked.setdefault(name, set()).add(text_id)
        return linked
