"""Reading a user's LlamaIndex property graph, never writing to it.

A Kùzu or LadybugDB database written by LlamaIndex's ``KuzuPropertyGraphStore`` /
``LadybugPropertyGraphStore`` is copied to a temporary folder first and opened there with that
store (the store creates its tables when it opens a database, so it must never open the user's);
a persisted ``SimplePropertyGraphStore`` (a storage folder with ``property_graph_store.json``) is
only read. Either way the result is the store's own nodes (chunks with their stored vectors) and triplets.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from provbench.errors import UserError

SIMPLE_FILE = "property_graph_store.json"
STORES = ("kuzu", "ladybug", "simple")


def detect_store(source: Path) -> str:
    """``simple`` for a storage folder, else ``kuzu`` (a LadybugDB database must be named with ``store: ladybug``)."""
    if not source.exists():
        raise UserError(f"graph to import not found: {source}")
    if source.is_dir() and (source / SIMPLE_FILE).is_file():
        return "simple"
    return "kuzu"


@contextmanager
def read_graph(source: Path, store: str) -> Iterator[tuple[list[Any], list[tuple[Any, Any, Any]]]]:
    """(nodes, triplets) of the graph at ``source``, read through LlamaIndex's own store ``store``."""
    if store == "simple":
        yield _read_simple(source)
        return
    with tempfile.TemporaryDirectory(prefix="provbench-import-") as tmp:
        copy = Path(tmp) / source.name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, copy)
        graph_store = _open_database(copy, store, source)
        try:
            nodes = graph_store.get()
            _attach_vectors(graph_store, nodes)
            yield nodes, graph_store.get_triplets()
        finally:
            graph_store.close() if hasattr(graph_store, "close") else None


def _read_simple(source: Path) -> tuple[list[Any], list[tuple[Any, Any, Any]]]:
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    try:
        graph_store = SimplePropertyGraphStore.from_persist_dir(str(source))
    except Exception as exc:  # noqa: BLE001 - any unreadable store is the user's to see, named
        raise UserError(
            f"{source / SIMPLE_FILE}: not a LlamaIndex property graph: {type(exc).__name__}: {exc}"
        ) from None
    return list(graph_store.graph.nodes.values()), graph_store.graph.get_triplets()


def _open_database(copy: Path, store: str, source: Path) -> Any:
    try:
        if store == "ladybug":
            import ladybug
            from llama_index.graph_stores.ladybug import LadybugPropertyGraphStore as Store

            return Store(ladybug.Database(str(copy)), use_vector_index=False)
        import kuzu
        from llama_index.graph_stores.kuzu import KuzuPropertyGraphStore as Store

        return Store(kuzu.Database(str(copy)), use_vector_index=False)
    except Exception as exc:  # noqa: BLE001 - a foreign or corrupt database is named, not a traceback
        raise UserError(
            f"{source}: cannot open as a {store} database of LlamaIndex's property graph store: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _attach_vectors(graph_store: Any, nodes: list[Any]) -> None:
    """The chunks' stored vectors on their nodes: the store's ``get()`` drops them (LlamaIndex's
    ``value_sanitize`` leaves out lists longer than 128), so they are read with a query of their own."""
    try:
        found = graph_store.connection.execute(
            "MATCH (c:Chunk) WHERE c.embedding IS NOT NULL RETURN c.id, c.embedding"
        ).get_all()
    except Exception:  # noqa: BLE001 - a database without the column holds no vectors
        return
    vectors = dict(found)
    for node in nodes:
        if getattr(node, "text", None) is not None and node.id in vectors:
            node.embedding = list(vectors[node.id])
