"""Embedded graph databases a knowledge base can live in: Kùzu, or LadybugDB (its maintained fork).

Both speak the same Cypher dialect and Python API (``Database``, ``Connection``,
``PreparedStatement``) and both have a LlamaIndex property-graph store, so the knowledge base and
its views run unchanged on either. A knowledge base records its backend in ``kb.json``; a new one
takes the backend given to ``KnowledgeBase.create`` or, when none is given, the one set with
:func:`default_graph_store` (how a suite's ``knowledge_base.graph_store`` reaches any builder).

Each thread keeps one connection and the statements it has prepared on it, so a query planned
once is only bound and executed afterwards (planning is about 40 % of a small query's time).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import UserError

MAX_PREPARED = 512  # statements kept per connection; queries are a fixed set, so this is a safety cap


@dataclass(frozen=True)
class GraphBackend:
    name: str
    module: str  # the database's Python package
    pg_module: str  # the LlamaIndex property-graph store's package
    pg_class: str
    install: str  # what to pip install when it is missing

    def database_module(self) -> Any:
        try:
            return importlib.import_module(self.module)
        except ImportError:
            raise UserError(f"graph store {self.name!r} needs `pip install {self.install}`") from None

    def property_graph_store(self, db: Any, read_only: bool) -> Any:
        """LlamaIndex's store over ``db``; read-only opens skip its schema DDL (the database refuses writes)."""
        try:
            base = getattr(importlib.import_module(self.pg_module), self.pg_class)
        except ImportError:
            raise UserError(f"graph store {self.name!r} needs `pip install {self.install}`") from None

        class _Store(base):
            def init_schema(self) -> None:
                if not read_only:
                    super().init_schema()

        return _Store(db, use_vector_index=False)


BACKENDS = {
    "kuzu": GraphBackend(
        "kuzu", "kuzu", "llama_index.graph_stores.kuzu", "KuzuPropertyGraphStore", "llama-index-graph-stores-kuzu kuzu"
    ),
    "ladybug": GraphBackend(
        "ladybug", "ladybug", "llama_index.graph_stores.ladybug", "LadybugPropertyGraphStore", "'provbench[ladybug]'"
    ),
}
DEFAULT_BACKEND = "kuzu"

_default: contextvars.ContextVar[str] = contextvars.ContextVar("provbench_graph_store", default=DEFAULT_BACKEND)


def backend(name: str | None = None) -> GraphBackend:
    """The backend called ``name`` (default: the current default, see :func:`default_graph_store`)."""
    name = name or _default.get()
    if name not in BACKENDS:
        raise UserError(f"unknown graph store {name!r}; choose one of {', '.join(sorted(BACKENDS))}")
    return BACKENDS[name]


@contextlib.contextmanager
def default_graph_store(name: str | None) -> Iterator[None]:
    """Knowledge bases created inside this block use backend ``name`` (None: leave the default)."""
    if name is None:
        yield
        return
    token = _default.set(backend(name).name)
    try:
        yield
    finally:
        _default.reset(token)


class PreparedConnection:
    """One connection and the statements prepared on it (one per thread: not shared)."""

    def __init__(self, module: Any, db: Any) -> None:
        self.conn = module.Connection(db)
        # Queries here are small lookups and units already run in parallel: one thread per query
        # saves the engine's task scheduling (measured: about a quarter of a lookup's CPU).
        if hasattr(self.conn, "set_max_threads_for_exec"):
            self.conn.set_max_threads_for_exec(1)
        self._statement_class = module.PreparedStatement
        self._prepared: dict[str, Any] = {}

    def rows(self, query: str, params: dict[str, Any] | None) -> list[list[Any]]:
        if not params:  # DDL, COPY and constant queries: nothing to bind, nothing to keep
            return self.conn.execute(query).get_all()
        statement = self._prepared.get(query)
        if statement is None:
            statement = self._statement_class(self.conn, query, params)  # values help the binder type them
            if not statement.is_success():
                raise RuntimeError(statement.get_error_message())
            if len(self._prepared) >= MAX_PREPARED:
                self._prepared.clear()
            self._prepared[query] = statement
        return self.conn.execute(statement, params).get_all()

    def close(self) -> None:
        self._prepared.clear()
        self.conn.close()
