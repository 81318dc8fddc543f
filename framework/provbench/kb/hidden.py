"""What a view hides, resolved to ids, names and texts, and a matcher that finds hidden text anywhere.

:meth:`GraphView.hidden_content` (and ``Environment.hidden``) returns a :class:`HiddenContent`: the
intervention's hidden sets as a system that keeps **its own store** needs them to filter its own
retrieval (ids of removed entities and their names, unreadable text units and their texts, masked
entities, hidden relations and community reports), with :meth:`HiddenContent.find` /
:meth:`~HiddenContent.allows` / :meth:`~HiddenContent.keep` to test any text against them. The leak
guard (:mod:`provbench.leakguard`) uses the same matcher on every request a unit sends its LLM.

What counts as hidden text (a *secret*): a removed entity's name; a sentence of a hidden or blocked
text unit; a sentence of a hidden or masked description; a sentence of a hidden community report.
A secret is hidden only when the view shows it **nowhere**: a removed name that a readable text unit
also contains, or a masked description that is a sentence of a visible text unit, is readable through
the view and never reported.

Matching is on lower-cased word tokens, so case, punctuation and spacing do not matter
("Orin Vale", "orin-vale", "ent:orin-vale" all show the name). Too short to tell apart from ordinary
words, and therefore never reported: names of fewer than :data:`MIN_NAME_CHARS` letters or digits,
sentences of fewer than :data:`MIN_SENTENCE_TOKENS` words. A paraphrase is not found.

The index of a knowledge base's text is built once per open store, on first use, by one scan of its
entities, text units and community reports (the knowledge base must be finished).
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypeVar

if TYPE_CHECKING:
    from .view import GraphView, ViewFilter

T = TypeVar("T")
MIN_NAME_CHARS = 4
MIN_SENTENCE_TOKENS = 4
_TOKEN = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
Place = tuple[str, str]  # (entity | description | text_unit | document | community, id)


def tokens(text: str | None) -> list[str]:
    """Lower-cased word tokens, the unit of every comparison here."""
    return _TOKEN.findall(text.lower()) if text else []


def sentences(text: str | None) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


@dataclass(eq=False)  # hashed by identity: one object per distinct token sequence
class Secret:
    """A name or sentence of the knowledge base: where it comes from, and every field that shows it."""

    tokens: tuple[str, ...]
    surface: str
    origins: list[Place] = field(default_factory=list)  # (name | text | description | community_text, id)
    places: set[Place] = field(default_factory=set)


@dataclass(frozen=True)
class HiddenMatch:
    """Hidden text found: what it is (``name``, ``text``, ``description``, ``community_text``), the
    id of the item it belongs to, and the text itself."""

    kind: str
    item: str
    text: str


# where the index keeps the ids of each set a view hides by (keep_communities spares: hides nothing)
_KNOWN_IN = {
    "entities": "names",
    "block_text_of": "names",
    "hide_metadata_of": "names",
    "text_units": "unit_texts",
    "relations": "relation_ends",
    "invalidated": "relation_ends",
    "out_of_time": "relation_ends",
    "communities": "communities",
}


class TextIndex:
    """Every secret of one knowledge base, keyed by its first token (one-word secrets) or its first
    two (longer ones) for a one-pass scan; also each relation's ends (whether a view hides it)."""

    def __init__(self) -> None:
        self.secrets: dict[tuple[str, ...], Secret] = {}
        self._single: dict[str, Secret] = {}
        self._pairs: dict[str, dict[str, list[Secret]]] = {}
        self._found: dict[str, list[Secret]] = {}  # text -> its secrets: prompts repeat across units
        self.names: dict[str, str] = {}
        self.unit_texts: dict[str, str] = {}
        self.documents: dict[str, list[str]] = {}
        self.communities: list[str] = []
        self.relation_ends: dict[str, tuple[str, str]] = {}
        self.relation_labels: dict[str, str] = {}

    def hides_any(self, hidden: "ViewFilter", before: "ViewFilter") -> bool:
        """Whether ``hidden`` hides an id of this knowledge base beyond ``before``: an intervention
        may hide a cited id that names nothing (a model's "Rules"), which hides nothing."""
        return any(
            item in getattr(self, where)
            for field, where in _KNOWN_IN.items()
            for item in getattr(hidden, field) - getattr(before, field)
        )

    def add_secret(self, surface: str, kind: str, item: str) -> None:
        found = tuple(tokens(surface))
        short = (sum(map(len, found)) < MIN_NAME_CHARS) if kind == "name" else len(found) < MIN_SENTENCE_TOKENS
        if not found or short:
            return
        secret = self.secrets.get(found)
        if secret is None:
            secret = self.secrets[found] = Secret(found, surface)
            if len(found) == 1:
                self._single[found[0]] = secret
            else:
                self._pairs.setdefault(found[0], {}).setdefault(found[1], []).append(secret)
        secret.origins.append((kind, item))

    def find(self, words: list[str]) -> Iterator[Secret]:
        """Every secret occurring in ``words`` (a token list), each once."""
        seen: set[Secret] = set()
        single, pairs, last = self._single, self._pairs, len(words) - 1
        for i, word in enumerate(words):
            secret = single.get(word)
            if secret is not None and secret not in seen:
                seen.add(secret)
                yield secret
            following = pairs.get(word) if i < last else None
            for secret in following.get(words[i + 1], ()) if following else ():
                if secret not in seen and tuple(words[i : i + len(secret.tokens)]) == secret.tokens:
                    seen.add(secret)
                    yield secret

    def find_in(self, text: str) -> list[Secret]:
        """The secrets in ``text``, remembered (a bounded memo: system prompts and agent histories
        repeat from unit to unit, and what a text contains does not depend on the view)."""
        found = self._found.get(text)
        if found is None:
            if len(self._found) > 20_000:
                self._found.clear()
            found = self._found[text] = list(self.find(tokens(text)))
        return found

    def add_place(self, place: Place, text: str) -> None:
        for secret in self.find(tokens(text)):
            secret.places.add(place)


def build_index(store: Any) -> TextIndex:
    """One scan of the store's entities, text units and community reports."""
    index = TextIndex()
    entities = store.rows("MATCH (e:Entity) RETURN e.id, e.name, e.description")
    units = store.rows("MATCH (c:Chunk) RETURN c.id, c.text, c.ref_doc_id")
    communities = store.rows("MATCH (m:Community) RETURN m.id, m.title, m.summary")
    relations = store.rows("MATCH (a:Entity)-[r:LINKS]->(b:Entity) RETURN r.id, a.id, b.id, r.label")
    index.relation_ends = {rid: (a, b) for rid, a, b, _ in relations}
    index.relation_labels = {rid: label or "" for rid, _, _, label in relations}
    for eid, name, description in entities:
        index.names[eid] = name or ""
        index.add_secret(name or "", "name", eid)
        for sentence in sentences(description):
            index.add_secret(sentence, "description", eid)
    for tid, text, document in units:
        index.unit_texts[tid] = text or ""
        index.documents.setdefault(document or "", []).append(tid)
        for sentence in sentences(text):
            index.add_secret(sentence, "text", tid)
    for cid, _, summary in communities:
        index.communities.append(cid)
        for sentence in sentences(summary):
            index.add_secret(sentence, "community_text", cid)
    # every field a view can show, scanned once: a secret is readable wherever one of its places is
    for eid, name, description in entities:
        index.add_place(("entity", eid), f"{eid} {name or ''}")
        index.add_place(("description", eid), description or "")
    for tid, text, _ in units:
        index.add_place(("text_unit", tid), f"{tid} {text or ''}")
    for document in index.documents:
        index.add_place(("document", document), document)
    for cid, title, summary in communities:
        index.add_place(("community", cid), f"{cid} {title or ''}\n{summary or ''}")
    return index


_INDEXES: "weakref.WeakKeyDictionary[Any, TextIndex]" = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def text_index(view: "GraphView") -> TextIndex:
    """The index of the view's knowledge base (built once per open store)."""
    store = view._store  # this package's own view internals
    with _INDEXES_LOCK:
        if store not in _INDEXES:
            _INDEXES[store] = build_index(store)
        return _INDEXES[store]


class HiddenContent:
    """What one view hides, resolved (sets are computed on first use and kept)."""

    def __init__(self, view: "GraphView", index: TextIndex) -> None:
        self.view, self.index = view, index
        self.empty = view.hidden.empty  # the view hides nothing
        self._readable: dict[Secret, bool] = {}

    @property
    def entity_ids(self) -> frozenset[str]:
        """Removed entities (gone everywhere, with every relation that touches them)."""
        return self.view.hidden.entities

    @cached_property
    def entity_names(self) -> dict[str, str]:
        """Removed entity id -> its name."""
        return {e: self.index.names[e] for e in self.entity_ids if e in self.index.names}

    @property
    def masked_entity_ids(self) -> frozenset[str]:
        """Entities whose label and description are hidden (their name stays visible)."""
        return self.view.hidden.hide_metadata_of - self.view.hidden.entities

    @cached_property
    def text_unit_ids(self) -> frozenset[str]:
        """Text units that cannot be read: hidden, or blocked as the text of an entity."""
        return frozenset(t for t in self.index.unit_texts if not self.view.text_unit_readable(t))

    @cached_property
    def text_unit_texts(self) -> dict[str, str]:
        return {t: self.index.unit_texts[t] for t in self.text_unit_ids}

    @cached_property
    def relation_ids(self) -> frozenset[str]:
        """Relations the view does not return: hidden, invalidated, or touching a removed entity."""
        return frozenset(r for r in self.index.relation_ends if self.relation_hidden(r))

    def relation_hidden(self, relation_id: str) -> bool:
        """True for a relation of the knowledge base that this view does not return (unknown ids: False)."""
        ends = self.index.relation_ends.get(relation_id)
        hidden = self.view.hidden
        return ends is not None and (
            relation_id in hidden.relations
            or not self.view.relation_active(relation_id)
            or ends[0] in hidden.entities
            or ends[1] in hidden.entities
        )

    @cached_property
    def community_ids(self) -> frozenset[str]:
        """Community reports the view hides (a member removed or masked)."""
        return frozenset(c for c in self.index.communities if not self.view.community_visible(c))

    # -- text --------------------------------------------------------------------------------------
    def find(self, text: str | list[str], excuse: str = "") -> list[HiddenMatch]:
        """Hidden text in ``text`` (a string or its :func:`tokens`), except what the view shows
        elsewhere and what ``excuse`` (e.g. the question, as :func:`joined` tokens) contains."""
        if self.empty:
            return []
        found = []
        for secret in self.index.find_in(text) if isinstance(text, str) else self.index.find(text):
            if self._hidden(secret) and f" {' '.join(secret.tokens)} " not in excuse:
                kind, item = secret.origins[0]
                found.append(HiddenMatch(kind, item, secret.surface))
        return found

    def allows(self, text: str) -> bool:
        """True when ``text`` shows nothing this view hides."""
        return not self.find(text)

    def keep(
        self,
        items: Iterable[T],
        *,
        text: Callable[[T], str] | None = None,
        kb_id: Callable[[T], str | None] | None = None,
    ) -> list[T]:
        """The items a system that keeps its own store may use under this view: those whose
        ``text(item)`` shows nothing hidden and whose ``kb_id(item)`` (the knowledge base's id of
        the item, when the system maps it back; None when unknown) is not hidden."""
        hidden_ids = (self.entity_ids | self.text_unit_ids | self.community_ids | self.relation_ids) if kb_id else ()
        return [
            item
            for item in items
            if (text is None or self.allows(text(item))) and (kb_id is None or kb_id(item) not in hidden_ids)
        ]

    def _hidden(self, secret: Secret) -> bool:
        known = self._readable.get(secret)
        if known is None:
            known = self._readable[secret] = any(self._visible(p) for p in secret.places)
        return not known

    def _visible(self, place: Place) -> bool:
        kind, item = place
        view = self.view
        if kind == "entity":
            return view.entity_visible(item)
        if kind == "description":
            return view.entity_visible(item) and item not in view.hidden.hide_metadata_of
        if kind == "text_unit":
            return view.text_unit_readable(item)
        if kind == "document":
            return any(view.text_unit_readable(t) for t in self.index.documents.get(item, ()))
        return view.community_visible(item)


def joined(words: Iterable[str]) -> str:
    """Tokens as the string :meth:`HiddenContent.find` searches its ``excuse`` in."""
    return f" {' '.join(words)} "


def hidden_content(view: "GraphView") -> HiddenContent:
    return HiddenContent(view, text_index(view))
