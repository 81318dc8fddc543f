"""Entity names: the merge key, ids, and choosing one type among several."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Iterable

UNKNOWN_TYPE = "OTHER"

#: a determiner and a lower-case word ("the film", "his wife"): small models return these as entities
GENERIC_NAME = re.compile(r"(?i:the|a|an|this|that|these|his|her|its|their)\s+[a-z][\w-]*$")


def normalize_name(name: str) -> str:
    """The merge key of an entity: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def strip_qualifier(title: str) -> str:
    """'Polish-Russian War (film)' -> 'Polish-Russian War': titles carry qualifiers names lack."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()


def slug(text: str) -> str:
    words = re.sub(r"[^\w]+", "-", normalize_name(text)).strip("-_")
    return words or hashlib.sha1(text.encode()).hexdigest()[:10]


def entity_id(name: str) -> str:
    return f"ent:{slug(name)}"


def pick_type(types: Iterable[str], priority: tuple[str, ...] = ()) -> str:
    """The first of ``priority`` among ``types``; else the alphabetically first specific type."""
    found = set(types)
    for candidate in priority:
        if candidate in found:
            return candidate
    specific = sorted(found - {UNKNOWN_TYPE})
    return specific[0] if specific else UNKNOWN_TYPE
