"""A read-only LlamaIndex ``PropertyGraphStore`` whose every read goes through a provbench view.

:class:`ViewPropertyGraphStore` answers LlamaIndex's reads (``get``, ``get_triplets``,
``get_rel_map``, ``get_llama_nodes``, ``vector_query``, ``get_schema``) with the public methods of
a :class:`~provbench.kb.GraphView` only, never with a query of its own. Whatever the view hides
(entities, relations, text units, blocked text, masked labels and descriptions, invalidated
relations, and any restriction a view adds later) is therefore hidden here too, by id, by name and
as text. Writes and raw Cypher (``structured_query``) are refused: Cypher would read the database
around the view.

How provbench's graph looks through it
    entity     ``EntityNode``: ``name`` is the entity's name (so LlamaIndex's node id is the name,
               as its own stores make it), ``label`` its type (``entity`` when masked); properties
               ``entity_id`` (the provbench id) and ``description`` (when the view shows one)
    relation   ``Relation`` with the relation's label; properties ``relation_id`` and, when the
               view lets its source text unit be read, ``triplet_source_id`` (that text unit)
    triplet    ``(source, relation, target)`` in the relation's own direction; the *source node of
               that triplet* carries ``triplet_source_id`` too, which is where LlamaIndex's
               retrievers look for the text to add with ``include_text=True``
    text unit  ``ChunkNode`` from ``get``; a ``TextNode`` (id = text-unit id, text = its text,
               ``document_id`` in metadata, kept out of prompts) from ``get_llama_nodes``
Lookups by id take provbench ids or names (names ignoring case: LlamaIndex's synonym retriever
capitalises its keywords). ``vector_query`` searches entities with the knowledge base's own
vectors (nothing is re-embedded) and returns their cosine scores. ``get_rel_map`` follows
relations in both directions from the given nodes only (none given: nothing returned).

The store remembers the triplets and text units it handed out, so :meth:`evidence_in` can map a
retrieved LlamaIndex node back to provbench ids (what the trace capture records).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from llama_index.core.graph_stores.types import (
    TRIPLET_SOURCE_KEY,
    ChunkNode,
    EntityNode,
    LabelledNode,
    PropertyGraphStore,
)
from llama_index.core.graph_stores.types import Relation as GraphRelation
from llama_index.core.schema import BaseNode, NodeRelationship, RelatedNodeInfo, TextNode

from ...errors import UserError
from .capture import Evidence, register_store

if TYPE_CHECKING:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from ...kb import Entity, GraphView, Relation, TextUnit

ENTITY_ID = "entity_id"
RELATION_ID = "relation_id"
DESCRIPTION = "description"
DOCUMENT_ID = "document_id"

Triplet = tuple[EntityNode, GraphRelation, EntityNode]


class ViewStoreRefused(UserError):
    """A write, or a read that would go around the view (raw Cypher), asked of a view store."""


READ_ONLY = (
    "a view store is read-only: it shows a provbench knowledge base through a GraphView. "
    "Build or change knowledge bases with a KB builder (docs/kb-builders.md)"
)
NO_CYPHER = (
    "structured_query (raw Cypher) is refused: it would read the graph around the view and see what "
    "the view hides. Use this store's get, get_triplets, get_rel_map, get_llama_nodes and vector_query, "
    "or the view's own methods (neighbors, shortest_paths, subgraph, ...)"
)


class ViewPropertyGraphStore(PropertyGraphStore):
    """A LlamaIndex property-graph store that reads only through ``view`` (see the module docstring)."""

    supports_structured_queries: bool = False
    supports_vector_queries: bool = True

    def __init__(self, view: "GraphView") -> None:
        self.view = view
        # a triplet as retrievers render it -> (relation, source, target) ids: two relations with one
        # label between entities of the same names render alike
        self._triplets: dict[str, set[tuple[str, str, str]]] = {}
        self._text_units: set[str] = set()  # text units handed out as nodes
        self._schema: dict[str, Any] | None = None
        register_store(self)  # with the trace capture of the running unit, if any

    @property
    def client(self) -> "GraphView":
        return self.view

    # -- nodes ---------------------------------------------------------------------------------------

    def get(self, properties: dict | None = None, ids: list[str] | None = None) -> list[LabelledNode]:
        """Entities and text units with these ids (provbench ids, or entity names ignoring case);
        every visible one when ``ids`` is None (a scan). ``properties``: only nodes whose properties
        have all these values."""
        if ids is None:
            entities = self.view.entities(self.view.entity_ids())
            units = self.view.text_units(self.view.text_unit_ids())
        else:
            keys = [i for i in ids if isinstance(i, str)]
            entities, units = self._resolve(keys), self.view.text_units(keys)
        nodes: list[LabelledNode] = [*map(self._entity_node, entities), *map(self._chunk_node, units)]
        if properties:
            nodes = [n for n in nodes if all(n.properties.get(k) == v for k, v in properties.items())]
        return nodes

    def get_llama_nodes(self, node_ids: list[str]) -> list[BaseNode]:
        """The readable text units among ``node_ids`` as LlamaIndex text nodes (entities have none)."""
        return [self._text_node(unit) for unit in self.view.text_units(i for i in node_ids if isinstance(i, str))]

    async def aget_llama_nodes(self, node_ids: list[str]) -> list[BaseNode]:
        return self.get_llama_nodes(node_ids)

    def vector_query(self, query: "VectorStoreQuery", **kwargs: Any) -> tuple[list[LabelledNode], list[float]]:
        """The ``similarity_top_k`` visible entities nearest ``query.query_embedding`` (or
        ``query.query_str``), with their cosine scores, from the knowledge base's own vectors."""
        if query.filters is not None or query.node_ids or query.doc_ids:
            raise ViewStoreRefused(
                "vector_query supports query_embedding (or query_str) and similarity_top_k; "
                "metadata filters, node_ids and doc_ids have nothing to apply to here"
            )
        k = query.similarity_top_k
        if query.query_embedding is not None:
            hits = self.view.search_entities_by_vector(query.query_embedding, k)
        elif query.query_str:
            hits = self.view.search_entities(query.query_str, k)
        else:
            raise ViewStoreRefused("vector_query needs query_embedding or query_str")
        found = {e.id: e for e in self.view.entities(h.id for h in hits)}
        pairs = [(self._entity_node(found[h.id]), h.score) for h in hits if h.id in found]
        return [node for node, _ in pairs], [score for _, score in pairs]

    # -- triplets ------------------------------------------------------------------------------------

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        """Triplets touching the named entities (either end), with one of ``relation_names``, and
        with one of ``properties`` on a part; nothing asked, nothing returned. Without entities
        the visible relations are scanned."""
        if not (entity_names or relation_names or properties or ids):
            return []
        if entity_names or ids:
            triplets = self._triplets_around(self._resolve([*(entity_names or ()), *(ids or ())]))
        else:
            triplets = self._all_triplets()
        if relation_names:
            triplets = [t for t in triplets if t[1].label in relation_names]
        if properties:
            triplets = [
                t for t in triplets if any(part.properties.get(k) == v for part in t for k, v in properties.items())
            ]
        return triplets

    def get_rel_map(
        self, graph_nodes: list[LabelledNode], depth: int = 2, limit: int = 30, ignore_rels: list[str] | None = None
    ) -> list[Triplet]:
        """Triplets up to ``depth`` relations away from ``graph_nodes``, in both directions, at
        most ``limit``, none labelled with one of ``ignore_rels``; nearer ones first."""
        ignored = set(ignore_rels or ())
        triplets: list[Triplet] = []
        seen_relations: set[str] = set()
        expanded: set[str] = set()
        frontier = self._entities_of(graph_nodes)
        for _ in range(max(depth, 0)):
            reached = []
            for entity in frontier:
                if entity.id in expanded:
                    continue
                expanded.add(entity.id)
                for nb in self.view.neighbors(entity.id):
                    if nb.relation.id in seen_relations or nb.relation.label in ignored:
                        continue
                    if len(triplets) >= limit:
                        return triplets
                    seen_relations.add(nb.relation.id)
                    ends = (entity, nb.entity) if nb.direction == "out" else (nb.entity, entity)
                    triplets.append(self._triplet(nb.relation, *ends))
                    reached.append(nb.entity)
            frontier = reached
        return triplets

    # -- refused -------------------------------------------------------------------------------------

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        raise ViewStoreRefused(NO_CYPHER)

    def upsert_nodes(self, nodes: Sequence[LabelledNode]) -> None:
        raise ViewStoreRefused(READ_ONLY)

    def upsert_relations(self, relations: list[GraphRelation]) -> None:
        raise ViewStoreRefused(READ_ONLY)

    def upsert_llama_nodes(self, llama_nodes: list[BaseNode]) -> None:
        raise ViewStoreRefused(READ_ONLY)

    def delete(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict | None = None,
        ids: list[str] | None = None,
    ) -> None:
        raise ViewStoreRefused(READ_ONLY)

    def delete_llama_nodes(self, node_ids: list[str] | None = None, ref_doc_ids: list[str] | None = None) -> None:
        raise ViewStoreRefused(READ_ONLY)

    def persist(self, persist_path: str, fs: Any = None) -> None:
        """Nothing to write: the knowledge base is already on disk, and a view is not data."""

    # -- schema --------------------------------------------------------------------------------------

    def get_schema(self, refresh: bool = False) -> dict[str, Any]:
        """Labels of the visible entities and relations, and the properties nodes carry (a scan, kept)."""
        if self._schema is None or refresh:
            relations = self.view.relations(self.view.relation_ids())
            self._schema = {
                "entity_labels": sorted({e.label for e in self.view.entities(self.view.entity_ids()) if e.label}),
                "relation_labels": sorted({r.label for r in relations if r.label}),
                "entity_properties": [ENTITY_ID, DESCRIPTION],
                "relation_properties": [RELATION_ID, TRIPLET_SOURCE_KEY],
                "text_chunk_properties": [DOCUMENT_ID],
            }
        return self._schema

    # -- provbench ids of retrieved nodes ---------------------------------------------------------------

    def evidence_in(self, node: Any) -> Evidence:
        """The provbench ids in a LlamaIndex node (or ``NodeWithScore``) this store's data made: the
        text unit it is, and the relations (with their entities) of the triplet lines it holds."""
        node = getattr(node, "node", node)
        found = Evidence()
        if getattr(node, "node_id", None) in self._text_units:
            found.text_units.append(node.node_id)
        content = node.get_content() if hasattr(node, "get_content") else str(node)
        for line in content.splitlines():
            for relation, source, target in sorted(self._triplets.get(line.strip(), ())):
                found.add(Evidence(relations=[relation], entities=[source, target]))
        return found

    # -- helpers -------------------------------------------------------------------------------------

    def _resolve(self, keys: Iterable[str]) -> list["Entity"]:
        """Visible entities whose id, or name ignoring case, is one of ``keys`` (order of ``keys``)."""
        keys = list(dict.fromkeys(k for k in keys if isinstance(k, str) and k.strip()))
        by_id = self.view.entities(keys)
        known = {e.id for e in by_id}
        names = [k for k in keys if k not in known]
        by_name = [e for e in self.view.entities_named(names) if e.id not in known] if names else []
        position = {key.strip().lower(): n for n, key in reversed(list(enumerate(keys)))}
        position.update({key: n for n, key in enumerate(keys) if key in known})
        return sorted(by_id + by_name, key=lambda e: position.get(e.id, position.get(e.name.lower(), len(keys))))

    def _entities_of(self, nodes: Iterable[Any]) -> list["Entity"]:
        """The visible entities behind LlamaIndex nodes: by their ``entity_id`` property, else by name."""
        by_property = [n.properties[ENTITY_ID] for n in nodes if ENTITY_ID in getattr(n, "properties", {})]
        by_name = [n.name for n in nodes if ENTITY_ID not in getattr(n, "properties", {}) and hasattr(n, "name")]
        found = self.view.entities(by_property)
        known = {e.id for e in found}
        return found + [e for e in self._resolve(by_name) if e.id not in known]

    def _triplets_around(self, anchors: list["Entity"]) -> list[Triplet]:
        triplets, seen = [], set()
        for anchor in anchors:
            for nb in self.view.neighbors(anchor.id):
                if nb.relation.id not in seen:
                    seen.add(nb.relation.id)
                    ends = (anchor, nb.entity) if nb.direction == "out" else (nb.entity, anchor)
                    triplets.append(self._triplet(nb.relation, *ends))
        return triplets

    def _all_triplets(self) -> list[Triplet]:
        relations = self.view.relations(self.view.relation_ids())
        ends = {e.id: e for e in self.view.entities({i for r in relations for i in (r.source, r.target)})}
        return [
            self._triplet(r, ends[r.source], ends[r.target]) for r in relations if r.source in ends and r.target in ends
        ]

    def _triplet(self, relation: "Relation", source: "Entity", target: "Entity") -> Triplet:
        unit = relation.text_unit_id
        readable = unit if unit and self.view.text_unit_readable(unit) else None
        head, tail = self._entity_node(source, readable), self._entity_node(target)
        properties = {RELATION_ID: relation.id, **({TRIPLET_SOURCE_KEY: readable} if readable else {})}
        edge = GraphRelation(label=relation.label, source_id=head.id, target_id=tail.id, properties=properties)
        ids = (relation.id, source.id, target.id)
        self._triplets.setdefault(f"{head.id} -> {edge.id} -> {tail.id}", set()).add(ids)  # as retrievers render it
        self._triplets.setdefault(f"{head!s} -> {edge!s} -> {tail!s}", set()).add(ids)  # ... with include_properties
        return head, edge, tail

    def _entity_node(self, entity: "Entity", source_unit: str | None = None) -> EntityNode:
        properties: dict[str, Any] = {ENTITY_ID: entity.id}
        if entity.description:
            properties[DESCRIPTION] = entity.description
        if source_unit:
            properties[TRIPLET_SOURCE_KEY] = source_unit
        return EntityNode(name=entity.name or entity.id, label=entity.label or "entity", properties=properties)

    def _chunk_node(self, unit: "TextUnit") -> ChunkNode:
        self._text_units.add(unit.id)
        return ChunkNode(text=unit.text, id_=unit.id, properties={DOCUMENT_ID: unit.document_id})

    def _text_node(self, unit: "TextUnit") -> TextNode:
        self._text_units.add(unit.id)
        return TextNode(
            id_=unit.id,
            text=unit.text,
            metadata={DOCUMENT_ID: unit.document_id},
            excluded_llm_metadata_keys=[DOCUMENT_ID],
            excluded_embed_metadata_keys=[DOCUMENT_ID],
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=unit.document_id)},
        )


def property_graph_store(view: "GraphView") -> ViewPropertyGraphStore:
    """A read-only LlamaIndex ``PropertyGraphStore`` that sees exactly what ``view`` shows."""
    return ViewPropertyGraphStore(view)
