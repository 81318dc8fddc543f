"""Reading a user's LlamaIndex property graph, never writing to it.

A Kùzu or LadybugDB database written by LlamaIndex's ``KuzuPropertyGraphStore`` /
``LadybugPropertyGraphStore`` is copied to a temporary folder first and opened there with that
store (the store creates its tables when it opens a database, so it must never open the user's);
a persisted ``SimplePropertyGraphStore`` (a storage folder with ``property_graph_store.json``) is
only read. Either way the result is the store's own nodes (chunks with their stored vectors) and triplets.

A database is read with queries of our own, table by table, turned into the nodes and triplets the
store's ``get()`` and ``get_triplets()`` would give: those two cannot read a whole graph. ``get()``
passes its result through LlamaIndex's ``value_sanitize``, which drops any list longer than 128,
the list of result rows included (a graph of more than 128 nodes reads as none), and
``get_triplets()`` stops at 100 triplets and leaves out each relation's ``triplet_source_id``.
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
            nodes, triplets = _read_database(graph_store.connection)
            _attach_vectors(graph_store, nodes)
            yield nodes, triplets
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


def _read_database(connection: Any) -> tuple[list[Any], list[tuple[Any, Any, Any]]]:
    """Every node (vectors left out: :func:`_attach_vectors`) and every triplet not starting at a
    chunk, as the store's ``get()`` / ``get_triplets()`` would build them without their limits."""
    tables = connection.execute("CALL show_tables() RETURN name, type").get_all()
    nodes = [node for name, kind in tables if kind == "NODE" for node in _nodes_of(connection, name)]
    triplets = [triplet for name, kind in tables if kind == "REL" for triplet in _triplets_of(connection, name)]
    return nodes, triplets


def _nodes_of(connection: Any, table: str) -> list[Any]:
    from llama_index.core.graph_stores.types import ChunkNode, EntityNode

    info = connection.execute(f"CALL table_info('{table}') RETURN name").get_all()
    columns = [name for (name,) in info if name != "embedding"]
    result = connection.execute(f"MATCH (e:`{table}`) RETURN " + ", ".join(f"e.`{c}`" for c in columns))
    nodes = []
    for values in result.get_all():
        record = dict(zip(columns, values))
        if record.get("label") == "text_chunk":  # the store's own test for a chunk
            props = {k: v for k, v in record.items() if v and k not in ("id", "text")}
            nodes.append(ChunkNode(id_=record["id"], text=record.get("text"), properties=props))
        else:
            props = {k: v for k, v in record.items() if v and k not in ("id", "name")}
            name, label = record.get("name") or record["id"], record.get("label") or "Chunk"
            nodes.append(EntityNode(name=name, label=label, properties=props))
    return nodes


def _triplets_of(connection: Any, table: str) -> list[tuple[Any, Any, Any]]:
    from llama_index.core.graph_stores.types import EntityNode, Relation

    result = connection.execute(
        f"MATCH (e)-[r:`{table}`]->(t) WHERE label(e) <> 'Chunk' "
        "RETURN e.id, label(e), r.label, r.triplet_source_id, t.id, label(t)"
    )
    triplets = []
    for head, head_label, label, source, tail, tail_label in result.get_all():
        relation = Relation(
            source_id=head,
            target_id=tail,
            label=label or table,
            properties={"triplet_source_id": source} if source else {},
        )
        triplets.append((EntityNode(name=head, label=head_label), relation, EntityNode(name=tail, label=tail_label)))
    return triplets


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
