"""Graph views: every read through one is filtered, so an ablation cannot leak through it (reads
around it, e.g. from a store of a system's own, are what the leak guard, :mod:`provbench.leakguard`, catches).

A view is a shared store plus a :class:`ViewFilter` (frozensets of ids). Creating or narrowing a
view costs only the size of those sets; nothing is copied or scanned. Each query asks Kùzu for
its answer and drops what the filter hides as the rows come back, so its cost follows the size
of the result.

What the filter hides
    ``entities``          the entity everywhere: search, lookups, neighbours (both directions),
                          text-unit and community member lists, paths, subgraphs; and every
                          relation that touches it
    ``relations``         those relations (neighbours, paths, ``relation()``, subgraphs)
    ``text_units``        those text units (search, ``text_unit()``, ``text_units_of()``)
    ``block_text_of``     the text units linked to these entities cannot be read ("text-only
                          isolation"); the entities themselves stay visible with their metadata
    ``hide_metadata_of``  these entities show a blank label and description; entity search
                          scores them by their name alone, so the hidden description cannot
                          steer the ranking
    ``invalidated``       relations treated as invalidated (``GraphView.invalidate``): like the
                          relations stored with ``invalidated_at`` set, they are inactive, and no
                          query returns them (neighbours, paths, ``relation()``, subgraphs)
    ``communities``       those community reports (lookup, search, an entity's community list)
    ``keep_communities``  these community reports stay readable although a member is removed or
                          masked (an ablation keeping the reports a baseline cited; it hides
                          nothing itself, and ``communities`` still hides them by id)
    ``out_of_time``       relations not active at the view's ``as_of`` time (set by
                          ``GraphView.as_of``): not yet valid, not yet recorded, or invalidated by
                          then; inactive like ``invalidated`` ones

Time (bi-temporal stamps, :mod:`provbench.kb.temporal`)
    Every query returns only relations active at the view's time, with their stamps
    (``valid_from``, ``recorded_at``, ``invalidated_at``): ``view.as_of(T)`` reads the graph as it
    stood at ``T`` (true and recorded by then, not yet invalidated), so an edge invalidated after
    ``T`` is active again and one recorded after ``T`` is not; the relations it leaves out are its
    ``hidden.out_of_time``. A view without ``as_of`` reads the graph at the current time (fixed
    once per open knowledge base): an invalidation dated in the future does not apply yet. Every
    query honours it: neighbours, ``relation()`` / ``relations()``, ``relation_ids()``, shortest
    paths and subgraphs, so code built on these methods (a LlamaIndex store) is bound by it too.

Hiding an entity does not hide its text units: say so with ``text_units`` or ``block_text_of``.
A community report whose members include an entity of ``entities`` or ``hide_metadata_of`` is
hidden (lookup, search, an entity's community list): its summary was written from those entities,
unless it is one of ``keep_communities``.

Longer than 300 logical lines because every graph read of every system goes through this one class:
keeping it whole keeps the one place to audit for leaks in one file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal

from .graphstore import (
    INDEX_COMMUNITIES,
    INDEX_ENTITIES,
    INDEX_ENTITY_NAMES,
    INDEX_TEXT_UNITS,
    OWN_TEXT_LABEL,
    KBError,
    natural_key,
)
from .types import Community, Entity, Hit, KBStats, Neighbor, Path, Relation, TextUnit

if TYPE_CHECKING:
    from datetime import date, datetime

    import networkx

    from .graphstore import GraphStore
    from .hidden import HiddenContent

MAX_PATH_HOPS = 10
MAX_TIED_PATHS = 1000  # shortest paths fetched per query before sorting (hubs can multiply ties without bound)
_SIDE_PATTERNS = {
    "out": "(a:Entity {id: $id})-[r:LINKS]->(b:Entity)",
    "in": "(a:Entity {id: $id})<-[r:LINKS]-(b:Entity)",
}
_SIDES = ("out", "in")
# Both sides at once (no LIMIT: Kùzu's start_node() is unreliable in an undirected match, so the
# side comes from the returned relation's own source). {other}: the entity fields of ``b``.
_BOTH_SIDES = "MATCH (a:Entity {{id: $id}})-[r:LINKS]-(b:Entity) RETURN id(a) AS anchor, r, {other}"
# Lookups anchored on ``{id: $id}``; :meth:`GraphView._anchored` runs a batch of ids as one UNWIND.
_ENTITY_ROWS = "MATCH (e:Entity {{id: $id}}) RETURN {fields}"
_ENTITY_MENTIONS = "MATCH (e:Entity {id: $id})<-[m:MENTIONS]-(c:Chunk) RETURN e.id, c.id, m.label"
_ENTITY_NAMES = "MATCH (e:Entity {id: $id}) RETURN e.id, e.name"
_UNIT_ROWS = "MATCH (c:Chunk {id: $id}) RETURN c.id, c.text, c.ref_doc_id"
_UNIT_DOCUMENTS = "MATCH (c:Chunk {id: $id}) RETURN c.id, c.ref_doc_id"
_UNIT_MENTIONS = "MATCH (c:Chunk {id: $id})-[:MENTIONS]->(e:Entity) RETURN c.id, e.id"
# {relation}: the relation fields of ``r`` (GraphView._relation_fields)
_OUT_EDGES = "MATCH (a:Entity {{id: $id}})-[r:LINKS]->(b:Entity) RETURN a.id, b.id, {relation} ORDER BY r.id"
_RELATION_ROWS = "MATCH (a:Entity)-[r:LINKS]->(b:Entity) WHERE r.id IN $ids RETURN a.id, b.id, {relation}"
_ENTITY_FIELDS = ("id", "name", "label", "description", "community_ids", "aliases")
_STAMPS = ("valid_from", "recorded_at", "invalidated_at")
_RELATION_FIELDS = ("id", "label", "triplet_source_id", *_STAMPS)  # a relation row's values, in order
# in a neighbour row (the relation's fields, then the other end's): where the label and the other end's id are
_LABEL, _OTHER = _RELATION_FIELDS.index("label"), len(_RELATION_FIELDS)


@dataclass(frozen=True)
class ViewFilter:
    """The ids a view hides (see the module docstring for what each set means)."""

    entities: frozenset[str] = frozenset()
    relations: frozenset[str] = frozenset()
    text_units: frozenset[str] = frozenset()
    block_text_of: frozenset[str] = frozenset()
    hide_metadata_of: frozenset[str] = frozenset()
    invalidated: frozenset[str] = frozenset()
    communities: frozenset[str] = frozenset()
    keep_communities: frozenset[str] = frozenset()
    out_of_time: frozenset[str] = frozenset()

    def union(self, other: "ViewFilter") -> "ViewFilter":
        return ViewFilter(**{f.name: getattr(self, f.name) | getattr(other, f.name) for f in fields(self)})

    @property
    def empty(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self))

    def as_dict(self) -> dict[str, list[str]]:
        return {f.name: sorted(getattr(self, f.name), key=natural_key) for f in fields(self)}

    def summary(self, max_ids: int = 100) -> dict[str, Any]:
        """Counts and (up to ``max_ids``) ids per non-empty set: what an intervention hid, for a trace."""
        return {name: {"count": len(ids), "ids": ids[:max_ids]} for name, ids in self.as_dict().items() if ids}


def _id_set(ids: Iterable[str], argument: str) -> frozenset[str]:
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"hide({argument}=...) takes a collection of ids, not one string: {ids!r}")
    result = frozenset(ids)
    bad = [i for i in result if not isinstance(i, str)]
    if bad:
        raise TypeError(f"hide({argument}=...) ids must be strings, got {bad[:3]!r}")
    return result


class GraphView:
    """Read access to a knowledge base through a filter. Safe to share between threads."""

    def __init__(self, store: "GraphStore", hidden: ViewFilter | None = None, as_of: "datetime | None" = None):
        self._store = store
        self._hidden = hidden or ViewFilter()
        self._as_of = as_of  # None: the current time (module docstring)
        self._unreadable: frozenset[str] | None = None  # computed on first need, then kept
        self._hidden_communities: frozenset[str] | None = None  # likewise
        self._content: "HiddenContent | None" = None  # hidden_content(), on first need
        self.notes: tuple[str, ...] = ()  # an intervention's notes on what it decided (kept with the unit)

    # -- filter

    @property
    def hidden(self) -> ViewFilter:
        return self._hidden

    def hidden_content(self) -> "HiddenContent":
        """What this view hides resolved to ids, names and texts, with a matcher for hidden text
        (:mod:`provbench.kb.hidden`): for systems that keep their own store, and the leak guard."""
        if self._content is None:
            from .hidden import hidden_content

            self._content = hidden_content(self)
        return self._content

    def hide(
        self,
        entities: Iterable[str] = (),
        relations: Iterable[str] = (),
        text_units: Iterable[str] = (),
        block_text_of: Iterable[str] = (),
        hide_metadata_of: Iterable[str] = (),
        communities: Iterable[str] = (),
        keep_communities: Iterable[str] = (),
    ) -> "GraphView":
        """A new view over the same store hiding these ids as well as what this one hides
        (``keep_communities``: reports spared the hiding by a removed or masked member)."""
        extra = ViewFilter(
            entities=_id_set(entities, "entities"),
            relations=_id_set(relations, "relations"),
            text_units=_id_set(text_units, "text_units"),
            block_text_of=_id_set(block_text_of, "block_text_of"),
            hide_metadata_of=_id_set(hide_metadata_of, "hide_metadata_of"),
            communities=_id_set(communities, "communities"),
            keep_communities=_id_set(keep_communities, "keep_communities"),
        )
        return GraphView(self._store, self._hidden.union(extra), self._as_of)

    def noted(self, notes: Iterable[str]) -> "GraphView":
        """This view with an intervention's notes on what it decided (the run keeps them with the
        unit's record, ``RunRecord.hidden.notes``, and the question page shows them)."""
        view = GraphView(self._store, self._hidden, self._as_of)
        view.notes = tuple(notes)
        return view

    def restored(self, sets: dict[str, Iterable[str]], as_of: str | None = None) -> "GraphView":
        """A view over the same store hiding exactly ``sets`` (as :meth:`ViewFilter.as_dict` gives
        them) at ``as_of`` (ISO text; None: the current time): how ``provbench audit`` rebuilds a
        unit's view from its record."""
        from .temporal import parse_instant

        hidden = ViewFilter(**{name: _id_set(ids, name) for name, ids in sets.items()})
        return GraphView(self._store, hidden, parse_instant(as_of) if as_of else None)

    def invalidate(self, relation_ids: Iterable[str]) -> "GraphView":
        """A new view in which these relations are invalidated (inactive) as well."""
        extra = ViewFilter(invalidated=_id_set(relation_ids, "relations"))
        return GraphView(self._store, self._hidden.union(extra), self._as_of)

    def as_of(self, when: "str | date | datetime") -> "GraphView":
        """A new view of the graph as it stood at ``when`` (an ISO date or timestamp; see the
        module docstring), hiding what this one hides. Costs one pass over the stamped relations."""
        from .temporal import parse_instant

        moment = parse_instant(when)
        return GraphView(self._store, replace(self._hidden, out_of_time=self._store.inactive_relations(moment)), moment)

    @property
    def as_of_time(self) -> str | None:
        """The view's time as ISO text (UTC); None when it reads the graph at the current time."""
        from .temporal import instant_text

        return None if self._as_of is None else instant_text(self._as_of)

    @property
    def knowledge_base_fingerprint(self) -> str | None:
        """What identifies the knowledge base's build (its builder's input fingerprint), e.g. for
        a grounding record's source; None for an unfinished knowledge base."""
        return self._store.build_fingerprint()

    def relation_active(self, relation_id: str) -> bool:
        """False when the relation is invalidated (in the store or by this view) or otherwise not
        active at the view's time."""
        return relation_id not in self._hidden.invalidated and relation_id not in self._time_inactive()

    def _time_inactive(self) -> frozenset[str]:
        """Relations not active at the view's time, by their stamps."""
        return self._hidden.out_of_time if self._as_of is not None else self._store.inactive_relations()

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={len(v)}" for k, v in self._hidden.as_dict().items() if v)
        return f"GraphView({self._store.path}{', hiding ' + counts if counts else ''})"

    def entity_visible(self, entity_id: str) -> bool:
        return entity_id not in self._hidden.entities

    def text_unit_readable(self, text_unit_id: str) -> bool:
        return text_unit_id not in self._unreadable_text_units()

    def _relation_visible(self, relation_id: str, source: str, target: str) -> bool:
        h = self._hidden
        return (
            relation_id not in h.relations
            and source not in h.entities
            and target not in h.entities
            and self.relation_active(relation_id)
        )

    def _unreadable_text_units(self) -> frozenset[str]:
        """Hidden text units plus those of ``block_text_of`` entities (cost: those entities' links)."""
        if self._unreadable is None:
            linked = {t for units in self._mentions(self._hidden.block_text_of).values() for t, _ in units}
            self._unreadable = self._hidden.text_units | linked
        return self._unreadable

    def community_visible(self, community_id: str) -> bool:
        return community_id not in self._communities_hidden()

    def hidden_summary(self, max_ids: int = 100) -> dict[str, Any]:
        """What this view hides, for a record: :meth:`ViewFilter.summary`, with ``communities`` every
        community report it hides, by id or because a member is removed or masked."""
        summary = self._hidden.summary(max_ids)
        communities = sorted(self._communities_hidden(), key=natural_key)
        if communities:
            summary["communities"] = {"count": len(communities), "ids": communities[:max_ids]}
        return summary

    def _communities_hidden(self) -> frozenset[str]:
        """Communities hidden by id or with a removed or masked member and not kept (one scan of
        the few community rows)."""
        if self._hidden_communities is None:
            gone, kept = self._hidden.entities | self._hidden.hide_metadata_of, self._hidden.keep_communities
            rows = self._store.rows("MATCH (m:Community) RETURN m.id, m.entity_ids") if gone else []
            self._hidden_communities = self._hidden.communities | frozenset(
                c for c, members in rows if c not in kept and gone.intersection(members or ())
            )
        return self._hidden_communities

    # Anchored queries: primary-key lookups and their adjacency, whatever the graph's size. A
    # batch of ids costs one query, not one per id.

    def _anchored(self, query: str, ids: Iterable[str]) -> list[list[Any]]:
        """Rows of a ``{id: $id}``-anchored query for every id, in one query (an UNWIND for several)."""
        wanted = sorted(set(ids))
        if len(wanted) == 1:  # the plain lookup is the cheaper plan
            return self._store.rows(query, {"id": wanted[0]})
        batch = "UNWIND $ids AS i " + query.replace("{id: $id}", "{id: i}", 1)
        return self._store.rows(batch, {"ids": wanted}) if wanted else []

    def _mentions(self, entity_ids: Iterable[str]) -> dict[str, list[tuple[str, bool]]]:
        """All text units linked to each entity (unfiltered), each with whether it is the entity's own."""
        grouped: dict[str, list[tuple[str, bool]]] = {}
        for entity_id, unit, label in self._anchored(_ENTITY_MENTIONS, entity_ids):
            grouped.setdefault(entity_id, []).append((unit, label == OWN_TEXT_LABEL))
        return grouped

    def _names(self, query: str, ids: Iterable[str]) -> dict[str, str]:
        """``{id: value}`` from a batched two-column query (rows with a null value left out)."""
        return {i: value for i, value in self._anchored(query, ids) if value is not None}

    def _value(self, query: str, item_id: str) -> Any:
        rows = self._store.rows(query, {"id": item_id})
        return rows[0][0] if rows else None

    # -- similarity search

    def search_entities(self, query: str, k: int = 5) -> list[Hit]:
        """Entities most similar to ``query`` (cosine over name, label and description)."""
        from .embeddings import embed_query

        _check_k(k)
        return self._search_entities(embed_query(query), k) if k else []

    def search_entities_by_vector(self, vector: Any, k: int = 5) -> list[Hit]:
        """Entities most similar to a query vector of the knowledge base's embedding model (what
        :func:`provbench.kb.embeddings.embed_query` gives; normalised here), e.g. one a LlamaIndex
        retriever computed. The same search as :meth:`search_entities`."""
        import numpy as np

        _check_k(k)
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        dim = self._store.vectors(INDEX_ENTITIES).vectors.shape[1]
        if q.shape[0] != dim:
            raise ValueError(
                f"a query vector of {q.shape[0]} dimensions cannot search entity vectors of {dim}: "
                "embed the query with the knowledge base's model (provbench.kb.embeddings)"
            )
        norm = float(np.linalg.norm(q))
        if norm and abs(norm - 1.0) > 1e-6:  # an already normalised vector scores exactly as search_entities
            q = q / norm
        return self._search_entities(q, k) if k else []

    def _search_entities(self, q: Any, k: int) -> list[Hit]:
        """The search behind both public ones: ``q`` is a normalised float32 vector."""
        index = self._store.vectors(INDEX_ENTITIES)
        masked = sorted(self._hidden.hide_metadata_of - self._hidden.entities)
        by_name: dict[str, float] = {}
        if masked:  # their descriptions are hidden: score them by name only
            names = self._store.vectors(INDEX_ENTITY_NAMES)
            for eid in masked:
                row, name_row = index.position.get(eid), names.position.get(eid)
                if row is not None and name_row is not None:
                    by_name[eid] = float(names.vectors[name_row] @ q)
        hits = index.search(q, k, self.entity_visible, hidden_hint=len(self._hidden.entities), overrides=by_name)
        names_by_id = self._entity_names([eid for eid, _ in hits])
        return [Hit(kind="entity", id=eid, name=names_by_id.get(eid, eid), score=score) for eid, score in hits]

    def search_text_units(self, query: str, k: int = 5) -> list[Hit]:
        """Readable text units most similar to ``query``; ``name`` is the document id."""
        from .embeddings import embed_query

        _check_k(k)
        if k == 0:
            return []
        index = self._store.vectors(INDEX_TEXT_UNITS)
        unreadable = self._unreadable_text_units()
        hits = index.search(embed_query(query), k, lambda t: t not in unreadable, hidden_hint=len(unreadable))
        documents = self._names(_UNIT_DOCUMENTS, [t for t, _ in hits])
        return [Hit(kind="text_unit", id=t, score=score, name=documents.get(t) or t) for t, score in hits]

    def search_communities(self, query: str, k: int = 3) -> list[Hit]:
        """Communities whose title and summary are most similar to ``query``; ``name`` is the title."""
        from .embeddings import embed_query

        _check_k(k)
        if k == 0:
            return []
        index = self._store.vectors(INDEX_COMMUNITIES)
        hidden = self._communities_hidden()
        hits = index.search(embed_query(query), k, lambda c: c not in hidden, hidden_hint=len(hidden))
        return [
            Hit(
                kind="community",
                id=c,
                score=score,
                name=self._value("MATCH (m:Community {id: $id}) RETURN m.title", c) or c,
            )
            for c, score in hits
        ]

    # -- entities

    def entity(self, entity_id: str) -> Entity | None:
        """The entity with its readable text units and its communities; None if hidden or unknown."""
        found = self._entities([entity_id])
        return found[0] if found else None

    def find_entity(self, name: str, case_sensitive: bool = False) -> Entity | None:
        """A visible entity named exactly ``name``, else (unless ``case_sensitive``) one whose name
        matches ignoring case."""
        if not isinstance(name, str) or not name.strip():
            return None
        queries = (
            "MATCH (e:Entity) WHERE e.name = $name RETURN e.id ORDER BY e.id",
            "MATCH (e:Entity) WHERE lower(e.name) = lower($name) RETURN e.id ORDER BY e.id",
        )
        for query in queries[:1] if case_sensitive else queries:
            ids = [row[0] for row in self._store.rows(query, {"name": name.strip()})]
            visible = [i for i in ids if self.entity_visible(i)]
            if visible:
                return self.entity(visible[0])
        return None

    def entities_named(self, names: Iterable[str]) -> list[Entity]:
        """Visible entities whose name or one of whose aliases equals one of ``names`` ignoring case
        (one query for all names), ordered by id."""
        wanted = sorted({n.strip().lower() for n in names if isinstance(n, str) and n.strip()})
        if not wanted:
            return []
        rows = self._store.rows(
            "MATCH (e:Entity) WHERE lower(e.name) IN $names RETURN e.id ORDER BY e.id", {"names": wanted}
        )
        by_alias = self._store.entities_by_alias()
        ids = {row[0] for row in rows} | {eid for name in wanted for eid in by_alias.get(name, ())}
        return self._entities(sorted(ids))

    def entity_ids(self) -> Iterator[str]:
        """Every visible entity id (a full scan: for tests, statistics and sampling)."""
        for (eid,) in self._store.rows("MATCH (e:Entity) RETURN e.id ORDER BY e.id"):
            if self.entity_visible(eid):
                yield eid

    def text_unit_ids(self) -> Iterator[str]:
        """Every readable text unit id (a full scan: for tests, statistics and sampling)."""
        for (tid,) in self._store.rows("MATCH (c:Chunk) RETURN c.id ORDER BY c.id"):
            if self.text_unit_readable(tid):
                yield tid

    def relation_ids(self) -> Iterator[str]:
        """Every visible, active relation id (a full scan: for sampling and statistics)."""
        for rid, source, target in self._store.rows(
            "MATCH (a:Entity)-[r:LINKS]->(b:Entity) RETURN r.id, a.id, b.id ORDER BY r.id"
        ):
            if self._relation_visible(rid, source, target):
                yield rid

    def _entity_names(self, ids: list[str]) -> dict[str, str]:
        return self._names(_ENTITY_NAMES, ids)

    def entities(self, ids: Iterable[str]) -> list[Entity]:
        """``entity(i)`` for each of ``ids`` in one batch: visible ones, order kept, unknown or hidden left out."""
        return self._entities(ids)

    def _entities(self, ids: Iterable[str]) -> list[Entity]:
        """Visible entities among ``ids`` (order kept, unknown ids dropped), with the view applied."""
        wanted = list(dict.fromkeys(i for i in ids if isinstance(i, str) and self.entity_visible(i)))
        query = _ENTITY_ROWS.format(fields=self._entity_fields("e"))
        rows = {row[0]: row[1:] for row in self._anchored(query, wanted)}
        mentions = self._mentions(rows)
        return [self._entity(eid, *rows[eid], mentions.get(eid, ())) for eid in wanted if eid in rows]

    def _entity_fields(self, var: str) -> str:
        """What a query returns of entity ``var`` (``_ENTITY_FIELDS``, in order; NULL for a column a
        knowledge base made before it existed lacks)."""
        return self._fields("Entity", var, _ENTITY_FIELDS)

    def _relation_fields(self, var: str) -> str:
        """What a query returns of relation ``var`` (``_RELATION_FIELDS``, in order; NULL likewise)."""
        return self._fields("LINKS", var, _RELATION_FIELDS)

    def _fields(self, table: str, var: str, names: tuple[str, ...]) -> str:
        present = self._store.columns(table)
        return ", ".join(f"{var}.{f}" if f in present else "NULL" for f in names)

    def _entity(
        self,
        eid: str,
        name: str | None,
        label: str | None,
        description: str | None,
        communities: list[str] | None,
        aliases: list[str] | None,
        linked: Iterable[tuple[str, bool]],
    ) -> Entity:
        masked = eid in self._hidden.hide_metadata_of
        readable = (
            [] if eid in self._hidden.block_text_of else [(t, own) for t, own in linked if self.text_unit_readable(t)]
        )
        return Entity(
            id=eid,
            name=name or "",
            label="" if masked else (label or ""),
            description="" if masked else (description or ""),
            text_unit_ids=tuple(sorted({t for t, _ in readable}, key=natural_key)),
            own_text_unit_ids=tuple(sorted({t for t, own in readable if own}, key=natural_key)),
            aliases=tuple(aliases or ()),
            community_ids=tuple(c for c in communities or () if self.community_visible(c)),
        )

    # -- relations and neighbours

    def relation(self, relation_id: str) -> Relation | None:
        """The relation, or None if it, or one of its entities, is hidden (or it does not exist)."""
        found = self.relations([relation_id])
        return found[0] if found else None

    def relations(self, relation_ids: Iterable[str]) -> list[Relation]:
        """``relation(i)`` for each of ``relation_ids`` in one query (a scan of the relations):
        visible ones, order kept, unknown or hidden left out."""
        wanted = [i for i in dict.fromkeys(relation_ids) if isinstance(i, str) and i not in self._hidden.relations]
        visible: dict[str, Relation] = {}
        query = _RELATION_ROWS.format(relation=self._relation_fields("r"))
        for source, target, *values in self._store.rows(query, {"ids": wanted}) if wanted else ():
            relation = _relation(values, source, target)
            if relation.id not in visible and self._relation_visible(relation.id, relation.source, relation.target):
                visible[relation.id] = relation
        return [visible[i] for i in wanted if i in visible]

    def neighbors(
        self,
        entity_id: str,
        direction: Literal["both", "out", "in"] = "both",
        limit: int | None = None,
        relation_types: Iterable[str] | None = None,
    ) -> list[Neighbor]:
        """Visible, active relations of a visible entity and the entity at their other end (outgoing
        first); ``relation_types``: only relations with one of these labels."""
        _check_neighbors_call(direction, limit)
        if not self.entity_visible(entity_id) or limit == 0:
            return []
        types = None if relation_types is None else frozenset(_id_set(relation_types, "relation_types"))
        sides = _SIDES if direction == "both" else (direction,)
        found = self._as_neighbors(entity_id, self._visible_edges(entity_id, sides, types, limit))
        return found if limit is None else found[:limit]

    def _visible_edges(
        self, entity_id: str, sides: tuple[str, ...], types: frozenset[str] | None, limit: int | None
    ) -> list[tuple[str, list]]:
        """``_edge_rows`` the view shows (of ``types``, if given): enough rows fetched that ``limit``
        visible ones survive the filter, widened if they did not."""
        fetch = -1 if limit is None or types is not None else limit + self._hidden_count()
        while True:
            rows, truncated = self._edge_rows(entity_id, sides, fetch)
            visible = [
                (side, row)
                for side, row in rows
                if (types is None or row[_LABEL] in types)
                and self._relation_visible(
                    row[0], *((entity_id, row[_OTHER]) if side == "out" else (row[_OTHER], entity_id))
                )
            ]
            if limit is None or len(visible) >= limit or not truncated:
                return visible
            fetch *= 4

    def _hidden_count(self) -> int:
        """How many rows the view may drop at most: its hidden entities and relations, invalidated ones,
        and those not active at its time."""
        hidden = self._hidden
        return len(hidden.entities) + len(hidden.relations) + len(hidden.invalidated) + len(self._time_inactive())

    def _as_neighbors(self, entity_id: str, edges: list[tuple[str, list]]) -> list[Neighbor]:
        """Each ``(side, row)`` edge as a Neighbor: the relation, its direction and the entity at its other end."""
        units = self._mentions(row[_OTHER] for _, row in edges)
        found = []
        for side, row in edges:
            other, entity_row = row[_OTHER], row[_OTHER + 1 :]
            source, target = (entity_id, other) if side == "out" else (other, entity_id)
            found.append(
                Neighbor(
                    relation=_relation(row[:_OTHER], source, target),
                    direction=side,
                    entity=self._entity(other, *entity_row, units.get(other, ())),
                )
            )
        return found

    def _edge_rows(self, entity_id: str, sides: tuple[str, ...], fetch: int) -> tuple[list[tuple[str, list]], bool]:
        """Edges on the given sides with the entity at the other end, ``[(side, [*relation fields,
        *entity fields])]`` outgoing first then by relation id, and whether a side hit the ``fetch``
        limit (-1: no limit)."""
        if fetch < 0 and len(sides) == 2:
            return self._both_sides(entity_id), False
        rows: list[tuple[str, list]] = []
        truncated = False
        for side in sides:
            query = (
                f"MATCH {_SIDE_PATTERNS[side]} RETURN {self._relation_fields('r')}, {self._entity_fields('b')} "
                "ORDER BY r.id" + (" LIMIT $fetch" if fetch >= 0 else "")
            )
            found = self._store.rows(query, {"id": entity_id, **({"fetch": fetch} if fetch >= 0 else {})})
            rows += [(side, row) for row in found]
            truncated |= 0 <= fetch <= len(found)
        return rows, truncated

    def _both_sides(self, entity_id: str) -> list[tuple[str, list]]:
        """Every edge of the entity in one undirected query; a self-loop counts on both sides, as it would per side."""
        found: dict[tuple[str, str], list] = {}
        for anchor, rel, *other in self._store.rows(
            _BOTH_SIDES.format(other=self._entity_fields("b")), {"id": entity_id}
        ):
            row = [*(rel.get(f) for f in _RELATION_FIELDS), *other]
            for side, end in (("out", "_src"), ("in", "_dst")):
                if _internal(rel, end) == anchor:
                    found.setdefault((side, rel["id"]), row)
        return [(side, found[side, rid]) for side, rid in sorted(found, key=lambda k: (_SIDES.index(k[0]), k[1]))]

    def shortest_paths(
        self, source_id: str, target_id: str, max_hops: int = 4, limit: int = 5, directed: bool = False
    ) -> list[Path]:
        """Shortest paths between two visible entities through visible ones: edges in either
        direction, or only source -> target with ``directed``. Up to ``max(limit, MAX_TIED_PATHS)``
        shortest paths are fetched and sorted by their relation ids before ``limit`` cuts, so which
        ones come back does not depend on the order the database found them in, unless more paths
        than that tie: hubs multiply shortest paths (a source and a target three layers of 40 hubs
        apart are joined by 64,000), and ties beyond the cap are cut in the database's order
        (``benchmarks/bench_shortest_paths.py`` measures the cap against the old ``LIMIT 1``)."""
        if not isinstance(max_hops, int) or isinstance(max_hops, bool) or not 1 <= max_hops <= MAX_PATH_HOPS:
            raise ValueError(f"shortest_paths(max_hops=...) must be an int in 1..{MAX_PATH_HOPS}, got {max_hops!r}")
        if not isinstance(limit, int) or limit < 1:
            raise ValueError(f"shortest_paths(limit=...) must be a positive int, got {limit!r}")
        if not (self.entity_visible(source_id) and self.entity_visible(target_id)):
            return []
        if source_id == target_id:
            return [Path(entities=(source_id,))] if self._entity_names([source_id]) else []
        # Kùzu's grammar takes the hop bound only as a literal: it and the limit are validated ints here.
        query = (
            f"MATCH p = (a:Entity {{id: $source}})-[r:LINKS* ALL SHORTEST 1..{max_hops} "
            "(r, n | WHERE NOT n.id IN $hidden_entities AND NOT r.id IN $hidden_relations)]-"
            + (">" if directed else "")
            + f"(b:Entity {{id: $target}}) RETURN nodes(p), rels(p) "
            f"LIMIT {max(limit, MAX_TIED_PATHS)}"
        )
        rows = self._store.rows(
            query,
            {
                "source": source_id,
                "target": target_id,
                "hidden_entities": sorted(self._hidden.entities),
                "hidden_relations": sorted(self._hidden.relations | self._hidden.invalidated | self._time_inactive()),
            },
        )
        paths = sorted(
            (_path(nodes, rels) for nodes, rels in rows), key=lambda p: [natural_key(r.id) for r in p.relations]
        )
        return paths[:limit]

    # -- text units and communities

    def text_units_of(self, entity_id: str) -> list[str]:
        """Ids of the entity's text units that this view lets a system read."""
        found = self._entities([entity_id])
        return list(found[0].text_unit_ids) if found else []

    def text_unit(self, text_unit_id: str) -> TextUnit | None:
        """The text unit with its visible entities; None if hidden, blocked or unknown."""
        found = self.text_units([text_unit_id])
        return found[0] if found else None

    def text_units(self, text_unit_ids: Iterable[str]) -> list[TextUnit]:
        """``text_unit(i)`` for each of ``text_unit_ids`` in one batch: readable ones, order kept,
        unknown, hidden or blocked ones left out."""
        wanted = list(dict.fromkeys(i for i in text_unit_ids if isinstance(i, str) and self.text_unit_readable(i)))
        rows = {unit: (text, document) for unit, text, document in self._anchored(_UNIT_ROWS, wanted)}
        linked: dict[str, set[str]] = {}
        for unit, entity_id in self._anchored(_UNIT_MENTIONS, rows):
            if self.entity_visible(entity_id):
                linked.setdefault(unit, set()).add(entity_id)
        return [
            TextUnit(
                id=unit,
                text=rows[unit][0] or "",
                document_id=rows[unit][1] or "",
                entity_ids=tuple(sorted(linked.get(unit, ()), key=natural_key)),
            )
            for unit in wanted
            if unit in rows
        ]

    def community(self, community_id: str) -> Community | None:
        """The community report with its visible member entities; None if hidden or unknown."""
        if not self.community_visible(community_id):
            return None
        rows = self._store.rows(
            "MATCH (m:Community {id: $id}) RETURN m.title, m.summary, m.level, m.entity_ids", {"id": community_id}
        )
        if not rows:
            return None
        title, summary, level, members = rows[0]
        return Community(
            id=community_id,
            title=title or "",
            summary=summary or "",
            level=level or 0,
            entity_ids=tuple(e for e in members or () if self.entity_visible(e)),
        )

    def communities_of(self, entity_id: str) -> list[str]:
        found = self._entities([entity_id])
        return list(found[0].community_ids) if found else []

    # -- graphs and statistics

    def subgraph(self, entity_ids: Iterable[str]) -> "networkx.MultiDiGraph":
        """The visible entities among ``entity_ids`` and the visible relations between them.

        Node attributes ``name`` and ``label``; edges keyed by relation id with ``id`` and ``label``
        (and the relation's stamps, when it has any).
        """
        import networkx as nx

        graph = nx.MultiDiGraph()
        entities = self._entities(list(entity_ids))
        for e in entities:
            graph.add_node(e.id, name=e.name, label=e.label)
        edges: dict[str, list[list[Any]]] = {}
        query = _OUT_EDGES.format(relation=self._relation_fields("r"))
        for source, target, *values in self._anchored(query, graph.nodes):  # cost follows the entities' degrees
            edges.setdefault(source, []).append(_relation(values, source, target))
        for e in entities:
            for r in edges.get(e.id, ()):
                if r.target in graph and self._relation_visible(r.id, e.id, r.target):
                    stamps = {k: getattr(r, k) for k in _STAMPS if getattr(r, k)}
                    graph.add_edge(e.id, r.target, key=r.id, id=r.id, label=r.label, **stamps)
        return graph

    def stats(self) -> KBStats:
        """Counts of what this view shows (a scan of the store: not for hot paths)."""
        s, h = self._store, self._hidden
        hidden_entities = sorted(h.entities)
        unreadable = sorted(self._unreadable_text_units())
        return KBStats(
            documents=s.scalar(
                "MATCH (c:Chunk) WHERE NOT c.id IN $ids RETURN count(DISTINCT c.ref_doc_id)", {"ids": unreadable}
            ),
            text_units=s.scalar("MATCH (c:Chunk) WHERE NOT c.id IN $ids RETURN count(c)", {"ids": unreadable}),
            entities=s.scalar("MATCH (e:Entity) WHERE NOT e.id IN $ids RETURN count(e)", {"ids": hidden_entities}),
            relations=s.scalar(
                "MATCH (a:Entity)-[r:LINKS]->(b:Entity) WHERE NOT a.id IN $e AND NOT b.id IN $e "
                "AND NOT r.id IN $r RETURN count(r)",
                {"e": hidden_entities, "r": sorted(h.relations)},
            ),
            communities=s.scalar("MATCH (m:Community) RETURN count(m)") - len(self._communities_hidden()),
        )


def _check_neighbors_call(direction: str, limit: int | None) -> None:
    if direction not in ("both", "out", "in"):
        raise ValueError(f"neighbors(direction=...) must be 'both', 'out' or 'in', got {direction!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValueError(f"neighbors(limit=...) must be None or a non-negative int, got {limit!r}")


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise ValueError(f"search k must be a non-negative int, got {k!r}")


def _relation(values: Any, source: str, target: str) -> Relation:
    """A relation from its returned fields (``_RELATION_FIELDS``, in order), with its stamps."""
    rid, label, text_unit_id, *stamps = values
    return Relation(
        id=rid,
        source=source,
        target=target,
        label=label or "",
        text_unit_id=text_unit_id or None,
        **{k: v or None for k, v in zip(_STAMPS, stamps)},
    )


def _internal(value: dict, key: str) -> Any:
    """An internal field of a returned node or relation: Kùzu names it ``_src``, LadybugDB ``_SRC``."""
    return value[key] if key in value else value[key.upper()]


def _path(nodes: list[dict], rels: list[dict]) -> Path:
    """Turn Kùzu path nodes/rels (with internal ids) into a Path keeping each relation's direction."""
    by_internal = {(_internal(n, "_id")["table"], _internal(n, "_id")["offset"]): n["id"] for n in nodes}

    def entity_of(ref: dict) -> str:
        return by_internal[(ref["table"], ref["offset"])]

    relations = tuple(
        _relation(
            [r.get(f) for f in _RELATION_FIELDS], entity_of(_internal(r, "_src")), entity_of(_internal(r, "_dst"))
        )
        for r in rels
    )
    return Path(entities=tuple(n["id"] for n in nodes), relations=relations)


__all__ = ["GraphView", "ViewFilter", "KBError"]
