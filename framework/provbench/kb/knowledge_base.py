"""The knowledge base: a LlamaIndex property graph on embedded Kùzu, plus embedding indices.

Longer than 300 logical lines because :class:`KnowledgeBase` keeps its writers (nodes, staged edge copies,
communities, vectors, bulk load) beside the schema they write; the open database that views read
lives in :mod:`provbench.kb.graphstore`.

Layout of a knowledge-base directory::

    graph.kuzu          the Kùzu database (schema of KuzuPropertyGraphStore, extended below)
    vectors/            normalised float32 embeddings (numpy) and their ids, one pair per index
    build_info.json     what the builder says about the build
    COMPLETE            written last by ``finalize``: a finished knowledge base is reusable
    .provbench-files.json  written first: the entries provbench wrote, the only ones it deletes
                        (:mod:`provbench.kb.owned`)

How each kind is stored (in the tables of LlamaIndex's Kùzu store, extended; LlamaIndex itself reads
them through a view, :mod:`provbench.integrations.llamaindex`):

* entity      ``Entity`` node: ``id`` (the KB's entity id), ``name``, ``label`` (semantic type),
              ``description`` and ``aliases`` (columns this module adds)
* text unit   ``Chunk`` node: ``id``, ``text``, ``ref_doc_id`` (document id), label ``text_chunk``
* relation    ``LINKS`` edge Entity->Entity: ``label``, ``triplet_source_id`` (the source text
              unit, as the store names it), ``id``, and the optional bi-temporal stamps
              ``valid_from`` / ``recorded_at`` / ``invalidated_at`` (columns this module adds;
              knowledge bases built before a stamp column existed read as "no such stamp")
* mention     ``MENTIONS`` edge Chunk->Entity (label ``MENTIONS``, or ``OWN_TEXT`` for a text unit of
              the entity's own document: ``Entity.own_text_unit_ids``): the text unit <-> entity
              link. A relation's source text unit mentions both of its entities, as in LlamaIndex.
* community   ``Community`` node (``id``, ``title``, ``summary``, ``level``, ``entity_ids``), a table
              this module adds; each entity lists its communities in a ``community_ids``
              column. Membership is not an edge, so LlamaIndex's triplet and relation-map
              queries see only the entity relations, and both directions are key lookups.

Writes do not use the store's ``upsert_relations``: it merges edges by label (two relations with
one label between the same entities would collapse into one, and there is no relation id) and
sends one query per row. Nodes and community memberships are staged as Parquet files in the
knowledge-base directory and upserted with ``LOAD FROM ... MERGE`` / ``MATCH`` (a primary-key
lookup per row; Kùzu matches ``UNWIND $rows AS row MATCH (n {id: row.id})`` against every node,
quadratic in the graph); edges are staged the same way and loaded with ``COPY FROM`` (Kùzu plans
a two-node ``UNWIND ... MATCH`` as a cross product, minutes for a few thousand edges). No path
puts a value into query text.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from ..deprecated import moved
from .graphstore import (
    ALL_INDICES,
    BATCH,
    BUILD_INFO,
    COMPLETE_MARKER,
    DB_NAME,
    FORMAT_VERSION,
    INDEX_COMMUNITIES,
    INDEX_ENTITIES,
    INDEX_ENTITY_NAMES,
    INDEX_TEXT_UNITS,
    KB_JSON,
    MENTION_LABEL,
    OWN_TEXT_LABEL,
    SCHEMA_EXTENSIONS,
    STAGING_DIR,
    VECTORS_DIR,
    GraphStore,
    KBError,
    entity_text,
    natural_key,
    open_store,
)
from . import owned
from .types import Community, Entity, KBStats, Relation, TextUnit

if TYPE_CHECKING:
    from .embeddings import BuildEmbedder

    from .view import GraphView


class KnowledgeBase:
    """A knowledge base on disk. Build it with ``create`` + ``add_*`` + ``finalize``; read it via ``view()``."""

    def __init__(self, path: Path, store: GraphStore):
        self.path = path
        self._store = store
        self._pending_mentions: set[tuple[str, str]] = set()  # (text unit, entity not yet added)
        self._relation_ids: set[str] | None = None
        self._index = None

    # -- opening

    @classmethod
    def create(cls, path: str | Path, graph_store: str | None = None) -> "KnowledgeBase":
        """A new, empty knowledge base in ``path`` (which must not exist or be empty).

        ``graph_store``: ``kuzu`` or ``ladybug`` (default: see :func:`provbench.kb.backends.default_graph_store`).
        """
        from .backends import backend

        chosen = backend(graph_store).name
        path = Path(path)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise KBError(f"cannot create a knowledge base at {path}: it exists and is not an empty directory")
        path.mkdir(parents=True, exist_ok=True)
        owned.start(path)  # first: whatever is deleted later is only what provbench wrote
        store = GraphStore(path, read_only=False, backend=chosen)
        store.pg_store  # noqa: B018 - LlamaIndex's store creates the tables the extensions alter
        for statement in SCHEMA_EXTENSIONS:
            store.rows(statement)
        (path / KB_JSON).write_text(
            json.dumps({"format": FORMAT_VERSION, "created": time.time(), "graph_store": chosen})
        )
        return cls(path, store)

    @classmethod
    def open(cls, path: str | Path, read_only: bool = False, allow_incomplete: bool = False) -> "KnowledgeBase":
        """Reopen a knowledge base without rebuilding it (the embedding model is not loaded).

        ``read_only=True`` lets several processes open it at once; Kùzu allows only one
        read-write opener per database. An unfinished build is refused unless ``allow_incomplete``.
        """
        path = Path(path)
        if not (path / DB_NAME).exists():
            raise KBError(f"no knowledge base at {path} (no {DB_NAME} there)")
        if not allow_incomplete and not cls.is_complete(path):
            raise KBError(f"knowledge base at {path} is not finished (no {COMPLETE_MARKER} marker): build it again")
        kb = cls(path, open_store(path, read_only))
        if not allow_incomplete:
            kb._check_integrity()
        return kb

    def _check_integrity(self) -> None:
        """The database has provbench's schema and the counts ``finalize`` recorded: a foreign or
        damaged database beside a ``COMPLETE`` marker is refused here, not met by every unit."""
        try:
            found = self.stats().model_dump()
        except RuntimeError as exc:  # Kùzu's binder error: tables or columns missing
            self.close()
            raise KBError(
                f"{self.path / DB_NAME} is not a provbench knowledge base, or is damaged ({exc}); "
                "build it again into an empty directory"
            ) from None
        try:
            recorded = json.loads((self.path / COMPLETE_MARKER).read_text(encoding="utf-8")).get("counts") or {}
        except (OSError, ValueError, AttributeError):
            recorded = {}
        differing = [f"{k} {found[k]:,} (built with {v:,})" for k, v in recorded.items() if found.get(k) != v]
        if differing:
            self.close()
            raise KBError(
                f"knowledge base at {self.path} has changed since it was built: {', '.join(differing)}; build it again"
            )

    @staticmethod
    def is_complete(path: str | Path) -> bool:
        """True when a finished build (marker, database and every vector index) is at ``path``."""
        from .embeddings import VectorIndex

        path = Path(path)
        return (
            (path / COMPLETE_MARKER).is_file()
            and (path / DB_NAME).exists()
            and (path / BUILD_INFO).is_file()
            and all(VectorIndex.exists(path / VECTORS_DIR, name) for name in ALL_INDICES)
        )

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "KnowledgeBase":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading

    @property
    def store(self) -> GraphStore:
        return self._store

    @property
    def property_graph_store(self):
        """Deprecated: ``provbench.integrations.llamaindex.property_graph_store(kb.view())``, a read-only
        LlamaIndex ``PropertyGraphStore`` over :meth:`view` (everything visible)."""
        return moved(
            f"{__name__}.KnowledgeBase.property_graph_store", "provbench.integrations.llamaindex.property_graph_store"
        )(self.view())

    @property
    def index(self):
        """Deprecated: ``provbench.integrations.llamaindex.property_graph_index(kb.view(), llm=...)``, a
        LlamaIndex ``PropertyGraphIndex`` over :meth:`view` (made on first use; its LLM is LlamaIndex's
        ``Settings.llm``)."""
        if self._index is None:
            self._index = moved(
                f"{__name__}.KnowledgeBase.index", "provbench.integrations.llamaindex.property_graph_index"
            )(self.view())
        return self._index

    @property
    def build_info(self) -> dict:
        """The dict handed to ``finalize`` ({} before that)."""
        path = self.path / BUILD_INFO
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    @property
    def complete(self) -> bool:
        return self.is_complete(self.path)

    def stats(self) -> KBStats:
        s = self._store
        return KBStats(
            documents=s.scalar("MATCH (c:Chunk) RETURN count(DISTINCT c.ref_doc_id)"),
            text_units=s.scalar("MATCH (c:Chunk) RETURN count(c)"),
            entities=s.scalar("MATCH (e:Entity) RETURN count(e)"),
            relations=s.scalar("MATCH (:Entity)-[r:LINKS]->(:Entity) RETURN count(r)"),
            communities=s.scalar("MATCH (m:Community) RETURN count(m)"),
        )

    def view(self) -> "GraphView":
        """A view that hides nothing; narrow it with ``view.hide(...)``."""
        from .view import GraphView

        if self.complete:  # finished: nothing writes to it any more, so its reads can be remembered
            self._store.remember_reads()
        return GraphView(self._store)

    # -- writing

    def _writable(self, action: str) -> GraphStore:
        if self._store.read_only:
            raise KBError(f"cannot {action}: knowledge base at {self.path} is open read-only")
        if (self.path / COMPLETE_MARKER).exists():
            raise KBError(f"cannot {action}: knowledge base at {self.path} is finalized; build a new one")
        return self._store

    def add_text_units(self, units: Sequence[TextUnit]) -> None:
        """Insert or update text units; their ``entity_ids`` are linked now or when those entities arrive."""
        self._writable("add text units")
        units = _checked(units, TextUnit, "text unit")
        latest = list({u.id: u for u in units}.values())  # a repeated id: its last values, as a MERGE per row gave
        self._load(
            "Chunk",
            {
                "row_id": [u.id for u in latest],
                "row_text": [u.text for u in latest],
                "row_doc": [u.document_id for u in latest],
            },
            "MERGE (c:Chunk {id: row_id}) SET c.text = row_text, c.ref_doc_id = row_doc, c.label = 'text_chunk'",
        )
        wanted = {(u.id, e) for u in units for e in u.entity_ids}
        known = self._existing("Entity", {e for _, e in wanted})
        self._link_mentions([pair for pair in wanted if pair[1] in known])
        self._pending_mentions |= {pair for pair in wanted if pair[1] not in known}

    def add_entities(self, entities: Sequence[Entity]) -> None:
        """Insert or update entities; each ``text_unit_ids`` entry must name a text unit already added."""
        self._writable("add entities")
        entities = _checked(entities, Entity, "entity")
        links = [(t, e.id) for e in entities for t in dict.fromkeys([*e.text_unit_ids, *e.own_text_unit_ids])]
        missing = {t for t, _ in links} - self._existing("Chunk", {t for t, _ in links})
        if missing:
            bad = sorted({f"{e_id} -> {t}" for t, e_id in links if t in missing})
            raise KBError(f"entities link to text units that were never added: {', '.join(bad[:5])}")
        latest = list({e.id: e for e in entities}.values())  # a repeated id: its last values
        self._load(
            "Entity",
            {f"row_{column}": values for column, values in _entity_columns(latest).items()},
            "MERGE (e:Entity {id: row_id}) SET e.name = row_name, e.label = row_label, "
            "e.description = row_description, e.aliases = row_aliases",
        )
        added = {e.id for e in entities}
        ready = {pair for pair in self._pending_mentions if pair[1] in added}
        self._pending_mentions -= ready
        self._link_mentions(links + sorted(ready), {(t, e.id) for e in entities for t in e.own_text_unit_ids})

    def add_relations(self, relations: Sequence[Relation]) -> None:
        """Add relations (ids must be new); both entities and the source text unit must exist."""
        self._writable("add relations")
        relations = _checked(relations, Relation, "relation")
        self._check_new_relation_ids(relations)
        endpoints = {r.source for r in relations} | {r.target for r in relations}
        missing = endpoints - self._existing("Entity", endpoints)
        if missing:
            bad = [f"{r.id} ({r.source} -> {r.target})" for r in relations if {r.source, r.target} & missing]
            raise KBError(
                f"relations name entities that were never added ({', '.join(sorted(missing)[:5])}): "
                f"{', '.join(bad[:5])}"
            )
        sources = {r.text_unit_id for r in relations if r.text_unit_id}
        missing_units = sources - self._existing("Chunk", sources)
        if missing_units:
            bad = [r.id for r in relations if r.text_unit_id in missing_units]
            raise KBError(
                f"relations {', '.join(bad[:5])} cite text units that were never added: "
                f"{', '.join(sorted(missing_units)[:5])}"
            )
        self._copy_relations(relations)
        self._relation_ids |= {r.id for r in relations}
        self._link_mentions(
            [(r.text_unit_id, end) for r in relations if r.text_unit_id for end in (r.source, r.target)]
        )

    def _check_new_relation_ids(self, relations: list[Relation]) -> None:
        if self._relation_ids is None:  # loaded once per writer; views never need it
            self._relation_ids = {row[0] for row in self._store.rows("MATCH ()-[r:LINKS]->() RETURN r.id")}
        seen: set[str] = set()
        for r in relations:
            if r.id in self._relation_ids or r.id in seen:
                raise KBError(f"relation id {r.id!r} is used twice; relation ids must be unique")
            seen.add(r.id)

    def _existing(self, table: str, ids: set[str]) -> set[str]:
        """Which of ``ids`` exist as nodes of ``table`` (a primary-key lookup per id)."""
        found: set[str] = set()
        for batch in _batches(sorted(ids)):
            found |= {
                row[0]
                for row in self._store.rows(f"UNWIND $ids AS i MATCH (n:{table} {{id: i}}) RETURN n.id", {"ids": batch})
            }
        return found

    def _link_mentions(self, pairs: Iterable[tuple[str, str]], own: set[tuple[str, str]] = frozenset()) -> None:
        """Add text unit -> entity mentions that are not there yet (both ends must exist); those in
        ``own`` are labelled as the entity's own text, also when the link was there already."""
        wanted = set(pairs)
        units = sorted({t for t, _ in wanted})
        existing: set[tuple[str, str]] = set()
        for batch in _batches(units):
            existing |= {
                (t, e)
                for t, e in self._store.rows(
                    "UNWIND $ids AS i MATCH (c:Chunk {id: i})-[:MENTIONS]->(e:Entity) RETURN c.id, e.id", {"ids": batch}
                )
            }
        for batch in _batches(sorted(existing & own)):
            self._store.rows(
                "UNWIND $pairs AS p MATCH (c:Chunk {id: p.unit})-[m:MENTIONS]->(e:Entity {id: p.entity}) "
                "SET m.label = $label",
                {"pairs": [{"unit": t, "entity": e} for t, e in batch], "label": OWN_TEXT_LABEL},
            )
        self._copy_mentions(sorted(wanted - existing), own)

    def _copy_relations(self, relations: Sequence[Relation]) -> None:
        columns = {
            "from": [r.source for r in relations],
            "to": [r.target for r in relations],
            "label": [r.label for r in relations],
            "triplet_source_id": [r.text_unit_id for r in relations],
            "id": [r.id for r in relations],
            "valid_from": [r.valid_from for r in relations],
            "invalidated_at": [r.invalidated_at for r in relations],
            "recorded_at": [r.recorded_at for r in relations],
        }
        self._copy("LINKS", "LINKS(label, triplet_source_id, id, valid_from, invalidated_at, recorded_at)", columns, "")

    def _copy_mentions(self, pairs: Sequence[tuple[str, str]], own: set[tuple[str, str]] = frozenset()) -> None:
        columns = {
            "from": [t for t, _ in pairs],
            "to": [e for _, e in pairs],
            "label": [OWN_TEXT_LABEL if pair in own else MENTION_LABEL for pair in pairs],
        }
        # MENTIONS has several FROM/TO pairs in the store's schema: name the one meant
        self._copy("MENTIONS", "MENTIONS(label)", columns, " (from='Chunk', to='Entity')")

    def _copy(self, name: str, target: str, columns: dict[str, list], options: str) -> None:
        """Stage ``columns`` as a Parquet file and COPY it into ``target`` (new rows only)."""
        self._staged(name, columns, lambda path: f"COPY {target} FROM '{path}'{options}")

    def _load(self, name: str, columns: dict[str, list], clause: str) -> None:
        """Stage ``columns`` as a Parquet file and run ``LOAD FROM`` it followed by ``clause``, which
        reads each row's columns by name. Kùzu looks each row's node up by primary key here, where
        ``UNWIND $rows AS row MATCH (n {id: row.id})`` compares every row with every node: an
        upsert of 60k entities took 11 s of CPU that way, 0.2 s this way."""
        self._staged(name, columns, lambda path: f"LOAD FROM '{path}' {clause}")

    def _staged(self, name: str, columns: dict[str, list], statement: Callable[[str], str]) -> None:
        """Stage ``columns`` as a Parquet file and run ``statement(its path)``.

        Only the staging file's path enters the statement (Kùzu takes no parameter there); it
        is built from this knowledge base's directory and a fixed name, never from record values.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not next(iter(columns.values())):
            return
        staging = self.path / STAGING_DIR
        staging.mkdir(exist_ok=True)
        file = staging / f"{name}.parquet"
        types = {
            k: pa.list_(pa.string()) if any(isinstance(x, list) for x in v) else pa.string() for k, v in columns.items()
        }  # list columns (aliases) are STRING[] in the graph
        pq.write_table(pa.table({k: pa.array(v, type=types[k]) for k, v in columns.items()}), file)
        try:
            self._store.rows(statement(_cypher_path(file)))
        except RuntimeError as exc:
            raise KBError(f"loading {len(next(iter(columns.values())))} rows into {name} failed: {exc}") from exc
        finally:
            file.unlink(missing_ok=True)

    # -- communities

    def detect_communities(
        self,
        seed: int = 0,
        resolution: float = 1.0,
        *,
        hierarchical: bool = False,
        max_cluster_size: int = 10,
        levels: int = 1,
        scope: str = "all",
    ) -> list[Community]:
        """Leiden over the entity graph; replaces earlier communities. Summaries start empty.

        The options are those of :func:`provbench.kb.communities.detect_clusters`; an entity
        lists every community it is in (one per stored level).
        """
        from .communities import detect_clusters

        store = self._writable("detect communities")
        edges = store.rows("MATCH (a:Entity)-[:LINKS]->(b:Entity) RETURN a.id, b.id")
        clusters = detect_clusters(
            ((a, b) for a, b in edges),
            seed=seed,
            resolution=resolution,
            hierarchical=hierarchical,
            max_cluster_size=max_cluster_size,
            levels=levels,
            scope=scope,
        )  # type: ignore[arg-type]
        communities = [Community(id=f"com:{i}", entity_ids=c.members, level=c.level) for i, c in enumerate(clusters)]
        store.rows("MATCH (m:Community) DELETE m")
        store.rows("MATCH (e:Entity) WHERE e.community_ids IS NOT NULL SET e.community_ids = NULL")
        for batch in _batches(communities):
            store.rows(
                "UNWIND $rows AS row CREATE (:Community {id: row.id, title: '', summary: '', level: row.level, "
                "entity_ids: row.members})",
                {"rows": [{"id": c.id, "members": list(c.entity_ids), "level": c.level} for c in batch]},
            )
        of_entity: dict[str, list[str]] = {}
        for c in communities:
            for e in c.entity_ids:
                of_entity.setdefault(e, []).append(c.id)
        self._load(
            "Entity-communities",
            {"row_id": list(of_entity), "row_communities": list(of_entity.values())},
            "MATCH (e:Entity {id: row_id}) SET e.community_ids = row_communities",
        )
        return communities

    def set_community_summaries(self, summaries: dict[str, tuple[str, str]]) -> None:
        """Give communities their title and summary: ``{community_id: (title, summary)}``."""
        self._writable("set community summaries")
        missing = set(summaries) - self._existing("Community", set(summaries))
        if missing:
            raise KBError(f"summaries for unknown communities: {', '.join(sorted(missing, key=natural_key)[:5])}")
        rows = []
        for cid, pair in summaries.items():
            if not (isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
                raise KBError(f"summary of community {cid!r} must be a (title, summary) pair of strings, got {pair!r}")
            rows.append({"id": cid, "title": pair[0], "summary": pair[1]})
        self._load(
            "Community",
            {
                "row_id": [r["id"] for r in rows],
                "row_title": [r["title"] for r in rows],
                "row_summary": [r["summary"] for r in rows],
            },
            "MATCH (m:Community {id: row_id}) SET m.title = row_title, m.summary = row_summary",
        )

    # -- finishing

    def finalize(
        self,
        build_info: dict,
        embed: bool = True,
        *,
        ann_min_vectors: int | None = None,
        progress: "Callable[[str, int, int], None] | None" = None,
        embedder: "BuildEmbedder | None" = None,
        known_vectors: "dict[str, dict[str, Any]] | None" = None,
    ) -> None:
        """Build the embedding indices, save ``build_info`` and write the completion marker (last).

        ``embed=False`` stores random unit vectors instead of model embeddings: only for
        benchmarks that measure graph access, never for a knowledge base a system reads.
        An index with ``ann_min_vectors`` rows or more also gets an HNSW index (default
        ``embeddings.ANN_MIN_VECTORS``). ``progress(index name, done, total)`` follows embedding.
        ``embedder`` computes the vectors (default: the one set with
        :func:`provbench.kb.embeddings.build_embedder`, else in this process); the marker names it.
        ``known_vectors`` (index name -> id -> vector of the same embedding model, e.g. an imported
        store's own) are used as they are; only the other rows are embedded.
        """
        from .embeddings import current_build_embedder

        store = self._writable("finalize")
        if self._pending_mentions:
            sample = ", ".join(f"{t} -> {e}" for t, e in sorted(self._pending_mentions)[:5])
            raise KBError(f"text units link to entities that were never added: {sample}")
        try:
            info_text = json.dumps(build_info, indent=2, sort_keys=True, default=str)
        except (TypeError, ValueError) as exc:
            raise KBError(f"build_info must be JSON-serialisable: {exc}") from exc
        embedder = (embedder or current_build_embedder()) if embed else None
        self._write_vectors(embedder, ann_min_vectors, progress, known_vectors or {})
        store.rows("CHECKPOINT")
        if (self.path / STAGING_DIR).is_dir() and not any((self.path / STAGING_DIR).iterdir()):
            (self.path / STAGING_DIR).rmdir()  # bulk loads leave it empty; a finished KB has no use for it
        _atomic_write(self.path / BUILD_INFO, info_text)
        _atomic_write(
            self.path / COMPLETE_MARKER,
            json.dumps(
                {
                    "format": FORMAT_VERSION,
                    "finished": time.time(),
                    "embedded": embed,
                    "embedder": embedder.name if embedder is not None else None,
                    "counts": self.stats().model_dump(),
                }
            ),
        )  # checked on every open (_check_integrity)

    def _write_vectors(
        self,
        embedder: "BuildEmbedder | None",
        ann_min_vectors: int | None,
        progress: "Callable[[str, int, int], None] | None",
        known: dict[str, dict[str, Any]],
    ) -> None:
        """Every index's vectors: ``known`` ones as given, the rest from one call of ``embedder``
        (None: random unit vectors)."""
        from .embeddings import ANN_MIN_VECTORS, VectorIndex, normalise, random_unit_vectors

        s = self._store
        units = s.rows("MATCH (c:Chunk) RETURN c.id, c.text ORDER BY c.id")
        entities = s.rows("MATCH (e:Entity) RETURN e.id, e.name, e.label, e.description ORDER BY e.id")
        communities = s.rows("MATCH (m:Community) RETURN m.id, m.title, m.summary ORDER BY m.id")
        texts = {
            INDEX_TEXT_UNITS: [(i, text or "") for i, text in units],
            INDEX_ENTITIES: [(i, entity_text(n or "", lab or "", d or "")) for i, n, lab, d in entities],
            INDEX_ENTITY_NAMES: [(i, n or "") for i, n, _, _ in entities],
            INDEX_COMMUNITIES: [(i, f"{t}: {summ}" if t else (summ or "")) for i, t, summ in communities],
        }
        names = list(texts)
        groups = [[text for i, text in texts[name] if i not in known.get(name, {})] for name in names]
        done = [0] * len(names)

        def step(group: int, n: int) -> None:
            done[group] += n
            if progress is not None:
                progress(names[group], done[group], len(groups[group]))

        for group in range(len(names)):  # every index's size up front: shown while the model loads
            step(group, 0)
        if embedder is None:
            vectors = [random_unit_vectors(len(group)) for group in groups]
        else:
            vectors = _embedded(embedder, groups, step)
        for n, name in enumerate(names):
            if known.get(name):
                vectors[n] = _merged([i for i, _ in texts[name]], known[name], vectors[n], normalise)
        threshold = ANN_MIN_VECTORS if ann_min_vectors is None else ann_min_vectors
        directory = self.path / VECTORS_DIR
        for name, rows in zip(names, vectors):
            # names are only looked up by row (masked entities): no HNSW index for them
            VectorIndex(ids=tuple(i for i, _ in texts[name]), vectors=rows).save(
                directory, name, ann_min_vectors=None if name == INDEX_ENTITY_NAMES else threshold
            )
        s.forget_vectors()

    # -- bulk loading (benchmarks, very large graphs)

    def bulk_load(
        self, text_units: Sequence[TextUnit] = (), entities: Sequence[Entity] = (), relations: Sequence[Relation] = ()
    ) -> None:
        """Insert many new records fast with ``COPY FROM`` (benchmarks, very large graphs).

        Unlike the ``add_*`` methods there is no upsert and no reference check: ids must be new
        and every reference valid (Kùzu rejects an edge to a missing node and aborts the COPY).
        Mentions come from ``Entity.text_unit_ids`` (``own_text_unit_ids`` labelled as such),
        ``TextUnit.entity_ids`` and relation source text units, as with the ``add_*`` methods.
        """
        self._writable("bulk load")
        units, entities, relations = (
            _checked(text_units, TextUnit, "text unit"),
            _checked(entities, Entity, "entity"),
            _checked(relations, Relation, "relation"),
        )
        self._copy(
            "Chunk",
            "Chunk(id, text, ref_doc_id, label)",
            {
                "id": [u.id for u in units],
                "text": [u.text for u in units],
                "ref_doc_id": [u.document_id for u in units],
                "label": ["text_chunk"] * len(units),
            },
            "",
        )
        self._copy(
            "Entity",
            "Entity(id, name, label, description, aliases)",
            _entity_columns(entities),
            "",
        )
        self._copy_relations(relations)
        own = {(t, e.id) for e in entities for t in e.own_text_unit_ids}
        mentions = (
            {(t, e.id) for e in entities for t in e.text_unit_ids}
            | own
            | {(u.id, e) for u in units for e in u.entity_ids}
            | {(r.text_unit_id, end) for r in relations if r.text_unit_id for end in (r.source, r.target)}
        )
        self._copy_mentions(sorted(mentions), own)
        self._relation_ids = None


# -----------------------------------------------------------------------------------------------
# helpers


def _checked(records: Sequence[Any], kind: type, what: str) -> list:
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise KBError(f"expected a list of {kind.__name__} records, got {type(records).__name__}")
    records = list(records)
    for position, record in enumerate(records):
        if not isinstance(record, kind):
            raise KBError(f"{what} #{position} is a {type(record).__name__}, not a {kind.__name__}")
        if not record.id:
            raise KBError(f"{what} #{position} has an empty id")
    return records


def _entity_columns(entities: Sequence[Entity]) -> dict[str, list]:
    """The Entity node's properties as columns, one value per entity (aliases are STRING[])."""
    return {
        "id": [e.id for e in entities],
        "name": [e.name for e in entities],
        "label": [e.label for e in entities],
        "description": [e.description for e in entities],
        "aliases": [list(e.aliases) for e in entities],
    }


def _batches(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _embedded(embedder: "BuildEmbedder", groups: list[list[str]], progress: Callable[[int, int], None]) -> list:
    """``embedder``'s float32 arrays for ``groups``, checked to hold one row per text."""
    import numpy as np

    from .embeddings import EMBEDDING_DIM

    vectors = [np.asarray(v, dtype=np.float32) for v in embedder.embed_groups(groups, progress)]
    expected = [(len(group), EMBEDDING_DIM) for group in groups]
    if [v.shape for v in vectors] != expected:
        raise KBError(
            f"build embedder {embedder.name!r} returned arrays of shapes "
            f"{[v.shape for v in vectors]}, expected {expected} (one row per text of each index)"
        )
    return vectors


def _merged(ids: list[str], known: dict[str, Any], embedded: Any, normalise: Callable) -> Any:
    """One index's rows in ``ids`` order: the known vectors (normalised), the embedded ones between."""
    import numpy as np

    rows, fresh = [], iter(embedded)
    for item in ids:
        rows.append(np.asarray(known[item], dtype=np.float32) if item in known else next(fresh))
    return normalise(np.vstack(rows)) if rows else embedded


def _cypher_path(path: Path) -> str:
    text = str(path.resolve())
    if "'" in text or "\\" in text:
        raise KBError(f"knowledge-base path {path} contains a quote or backslash; Kùzu's COPY cannot load from it")
    return text


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
