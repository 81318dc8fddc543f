"""One open graph database shared by a knowledge base and all its views: the LlamaIndex
property-graph store, per-thread connections with prepared statements, and the vector indices.

The layout of a knowledge-base directory and how each kind is stored are described in
:mod:`provbench.kb.knowledge_base`; this module holds what both the store and the views read.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError

if TYPE_CHECKING:
    import kuzu

DB_NAME = "graph.kuzu"
VECTORS_DIR = "vectors"
STAGING_DIR = ".staging"
BUILD_INFO = "build_info.json"
KB_JSON = "kb.json"
COMPLETE_MARKER = "COMPLETE"
FORMAT_VERSION = 1
MENTION_LABEL = "MENTIONS"  # a text unit <-> entity link: the text unit names the entity
OWN_TEXT_LABEL = "OWN_TEXT"  # the link's label when the text unit is of the entity's own document
BATCH = 2000
READ_CACHE_ENTRIES = 20_000  # query results kept per open finished knowledge base (see GraphStore.remember_reads)

# Vector indices saved by finalize (entities twice: full text, and name only for hidden metadata).
INDEX_TEXT_UNITS = "text_units"
INDEX_ENTITIES = "entities"
INDEX_ENTITY_NAMES = "entity_names"
INDEX_COMMUNITIES = "communities"
ALL_INDICES = (INDEX_TEXT_UNITS, INDEX_ENTITIES, INDEX_ENTITY_NAMES, INDEX_COMMUNITIES)

SCHEMA_EXTENSIONS = (
    "ALTER TABLE Entity ADD IF NOT EXISTS description STRING DEFAULT ''",
    "ALTER TABLE LINKS ADD IF NOT EXISTS id STRING",
    "ALTER TABLE LINKS ADD IF NOT EXISTS valid_from STRING",
    "ALTER TABLE LINKS ADD IF NOT EXISTS invalidated_at STRING",
    "ALTER TABLE LINKS ADD IF NOT EXISTS recorded_at STRING",
    "ALTER TABLE Entity ADD IF NOT EXISTS community_ids STRING[]",
    "ALTER TABLE Entity ADD IF NOT EXISTS aliases STRING[]",
    "CREATE NODE TABLE IF NOT EXISTS Community("
    "id STRING, title STRING, summary STRING, level INT64, entity_ids STRING[], PRIMARY KEY(id))",
)


class KBError(UserError):
    """A knowledge-base problem the user can act on (bad path, bad records, wrong mode)."""


def natural_key(text: str) -> tuple:
    """Sort key that puts "tu:2" before "tu:10"."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text))


def graph_store_of(path: Path) -> str:
    """The graph database a knowledge base was created in (``kuzu`` for those made before the choice)."""
    try:
        return json.loads((path / KB_JSON).read_text(encoding="utf-8")).get("graph_store") or "kuzu"
    except (OSError, ValueError):
        return "kuzu"


def entity_text(name: str, label: str, description: str) -> str:
    """What an entity's full embedding is computed from."""
    head = f"{name} ({label})" if label else name
    return f"{head}: {description}" if description else head


# -----------------------------------------------------------------------------------------------
# Kùzu access shared by a knowledge base and all its views


class GraphStore:
    """One open graph database: the LlamaIndex store, per-thread connections, and the vectors."""

    def __init__(self, path: Path, read_only: bool, backend: str | None = None):
        from .backends import backend as graph_backend

        self.path = path
        self.read_only = read_only
        self.backend = graph_backend(backend)
        self._module = self.backend.database_module()
        self.db = self._module.Database(str(path / DB_NAME), read_only=read_only)
        self._pg_store: Any = None
        self._local = threading.local()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._vectors: dict[str, Any] = {}
        self._invalidated: frozenset[str] | None = None
        self._columns: dict[str, frozenset[str]] = {}
        self._stamps: list[tuple[str, Any, Any, Any]] | None = None
        self._aliases: dict[str, tuple[str, ...]] | None = None
        self._inactive: dict[Any, frozenset[str]] = {}  # instant (None: now) -> relations inactive then
        self._reads: Any = None  # the result cache, once remember_reads() is called
        self.closed = False

    @property
    def pg_store(self) -> Any:
        """LlamaIndex's property-graph store over the database, made on first use: a run's reads
        go through this class's own connections, and importing LlamaIndex costs seconds."""
        with self._lock:
            if self._pg_store is None:
                self._pg_store = self.backend.property_graph_store(self.db, self.read_only)
            return self._pg_store

    # -- queries

    def _prepared_connection(self):
        """This thread's connection and its prepared statements (connections are not shared between threads)."""
        if self.closed:
            raise KBError(f"knowledge base at {self.path} is closed")
        state = getattr(self._local, "state", None)
        if state is None:
            from .backends import PreparedConnection

            state = PreparedConnection(self._module, self.db)
            self._local.state = state
            with self._lock:
                self._connections.append(state)
        return state

    def connection(self) -> "kuzu.Connection":
        """This thread's connection."""
        return self._prepared_connection().conn

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Run one parameterised Cypher query and return its rows (planned once per thread).

        Once :meth:`remember_reads` is on, a repeated query is answered from memory: callers get
        a new outer list but share the rows, which they must not change."""
        if self._reads is not None:
            key = _hashable(params)
            if key is not None:
                return list(self._reads(query, key))
        return self._prepared_connection().rows(query, params)

    def remember_reads(self) -> None:
        """Keep query results (the last ``READ_CACHE_ENTRIES``): only for a finished knowledge base,
        which nothing writes to any more. Systems, their ablations and every variant of an
        intervention read the same neighbourhoods again; views filter rows in Python, so one
        result serves every view."""
        if self._reads is None:
            self._reads = functools.lru_cache(maxsize=READ_CACHE_ENTRIES)(self._read_uncached)

    def read_cache_info(self) -> Any:
        """Hits, misses and size of the result cache (None when it is off)."""
        return self._reads.cache_info() if self._reads is not None else None

    def _read_uncached(self, query: str, key: tuple) -> list[list[Any]]:
        params = {name: list(value) if isinstance(value, tuple) else value for name, value in key}
        return self._prepared_connection().rows(query, params or None)

    def scalar(self, query: str, params: dict[str, Any] | None = None) -> Any:
        rows = self.rows(query, params)
        return rows[0][0] if rows else None

    def columns(self, table: str) -> frozenset[str]:
        """Column names of a node or relation table (read once: knowledge bases made before a
        column existed lack it, and queries must not name it)."""
        if table not in self._columns:
            self._columns[table] = frozenset(row[0] for row in self.rows(f"CALL table_info('{table}') RETURN name"))
        return self._columns[table]

    def invalidated_relations(self) -> frozenset[str]:
        """Ids of relations stored with ``invalidated_at`` set, whatever its time (read once)."""
        if self._invalidated is None:
            self._invalidated = frozenset(
                rid for rid, _, _, invalidated in self._relation_stamps() if invalidated is not None
            )
        return self._invalidated

    def inactive_relations(self, when: Any = None) -> frozenset[str]:
        """Ids of the relations *not* active at ``when`` (an aware datetime; None: now, fixed at the
        first call, so one open store reads one state), by their stamps (:mod:`.temporal`). Cost:
        the stamped relations, once per distinct time."""
        from .temporal import active_at, now

        found = self._inactive.get(when)
        if found is None:
            at = now() if when is None else when
            found = frozenset(rid for rid, *stamps in self._relation_stamps() if not active_at(at, *stamps))
            with self._lock:
                found = self._inactive.setdefault(when, found)
        return found

    def _relation_stamps(self) -> list[tuple[str, Any, Any, Any]]:
        """(id, valid_from, recorded_at, invalidated_at) of every relation with a stamp, parsed
        (read once: a finished KB is immutable)."""
        from .temporal import InstantError, parse_instant

        if self._stamps is None:
            names = [c for c in ("valid_from", "recorded_at", "invalidated_at") if c in self.columns("LINKS")]
            rows = (
                self.rows(
                    "MATCH ()-[r:LINKS]->() WHERE "
                    + " OR ".join(f"r.{c} IS NOT NULL" for c in names)
                    + " RETURN r.id, "
                    + ", ".join(f"r.{c}" for c in names)
                )
                if names
                else []
            )
            stamps = []
            for rid, *values in rows:
                given = dict(zip(names, values))
                try:
                    stamps.append(
                        (
                            rid,
                            *(
                                parse_instant(given[c]) if given.get(c) else None
                                for c in ("valid_from", "recorded_at", "invalidated_at")
                            ),
                        )
                    )
                except InstantError as err:
                    raise KBError(f"knowledge base at {self.path}: relation {rid!r}: {err}") from None
            self._stamps = stamps
        return self._stamps

    def entities_by_alias(self) -> dict[str, tuple[str, ...]]:
        """Lower-cased alias -> ids of the entities that have it (read once: few entities have aliases)."""
        if self._aliases is None:
            found: dict[str, set[str]] = {}
            if "aliases" in self.columns("Entity"):
                for eid, aliases in self.rows("MATCH (e:Entity) WHERE size(e.aliases) > 0 RETURN e.id, e.aliases"):
                    for alias in aliases or ():
                        found.setdefault(alias.strip().lower(), set()).add(eid)
            self._aliases = {alias: tuple(sorted(ids)) for alias, ids in found.items()}
        return self._aliases

    def build_fingerprint(self) -> str | None:
        """What identifies this knowledge base's build: its builder's input fingerprint, else a hash
        of its build info; None before it is finished."""
        import hashlib

        path = self.path / BUILD_INFO
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        inputs = json.loads(text).get("inputs")
        found = inputs.get("fingerprint") if isinstance(inputs, dict) else None
        return found if isinstance(found, str) and found else hashlib.sha256(text.encode()).hexdigest()

    # -- vectors

    def vectors(self, name: str):
        """A saved vector index, loaded on first use and kept for the process."""
        from .embeddings import VectorIndex

        index = self._vectors.get(name)
        if index is None:
            directory = self.path / VECTORS_DIR
            if not VectorIndex.exists(directory, name):
                raise KBError(f"knowledge base at {self.path} has no {name!r} embeddings: was it finalized?")
            # the name-only entity index is read by row (masked entities): map it, do not load it
            loaded = VectorIndex.load(directory, name, mmap=name == INDEX_ENTITY_NAMES)
            with self._lock:
                index = self._vectors.setdefault(name, loaded)
        return index

    def forget_vectors(self) -> None:
        self._vectors.clear()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._reads = None
        with self._lock:
            for state in self._connections:
                state.close()
            self._connections.clear()
        if self._pg_store is not None:
            self._pg_store.connection.close()
        self.db.close()


def _hashable(params: dict[str, Any] | None) -> tuple | None:
    """``params`` as a cache key (lists become tuples); None if a value cannot be one."""
    items = []
    for name, value in sorted((params or {}).items()):
        if isinstance(value, list):
            value = tuple(value)
        try:
            hash(value)
        except TypeError:
            return None
        items.append((name, value))
    return tuple(items)


# -----------------------------------------------------------------------------------------------
# the knowledge base


OPEN_WAIT_S = 30.0  # a process that just finished building this KB may still hold Kùzu's file lock


def open_store(path: Path, read_only: bool, wait_s: float = OPEN_WAIT_S) -> GraphStore:
    """Open the database, waiting a little while another process holds Kùzu's lock on it. A
    database this process cannot write (read-only media, a folder without write permission) is
    opened read-only: reusing a finished knowledge base writes nothing, and a write then fails
    with the database's read-only error instead of the open failing."""
    if not read_only and not _writable(path / DB_NAME):
        logging.getLogger(__name__).info("%s is not writable here: opening the knowledge base read-only", path)
        read_only = True
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return GraphStore(path, read_only=read_only, backend=graph_store_of(path))
        except RuntimeError as exc:
            locked = "lock" in str(exc).lower()
            if not locked or time.monotonic() >= deadline:
                hint = (
                    (
                        " (another process has it open; Kùzu allows one read-write opener at a time: "
                        "wait for that process, or give this run its own knowledge_base directory)"
                    )
                    if locked
                    else ""
                )
                raise KBError(f"cannot open the knowledge base at {path}: {exc}{hint}") from exc
            time.sleep(0.2)


def _writable(target: Path) -> bool:
    """Whether this process may write ``target`` and its folder (``os.access`` also says no on a
    read-only file system, even to root)."""
    return all(os.access(p, os.W_OK) for p in (target, target.parent) if p.exists())
