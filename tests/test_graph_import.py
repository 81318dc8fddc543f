"""Importing a graph the user already has (issue 31 item 3): a Kùzu database written by LlamaIndex's
own ``KuzuPropertyGraphStore`` and a persisted ``SimplePropertyGraphStore``, built here by
``PropertyGraphIndex.from_documents`` from the own-docs corpus, become provbench KBs (the source
left byte-identical), with what did not map listed; the Kùzu one then runs and validates."""

from __future__ import annotations

import hashlib
import json
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


def build_with_llamaindex(docs: Path, graph_store=None, persist_dir: Path | None = None, implicit: bool = False) -> None:
    """The user's side: LlamaIndex's own index and extractor over the documents, into ``graph_store``."""
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.indices.property_graph import ImplicitPathExtractor, SchemaLLMPathExtractor

    from provbench.integrations.llamaindex import llamaindex_embedding, llamaindex_llm
    from provbench.llm_setup import make_llm

    llm, embed = llamaindex_llm(make_llm("schema-following")), llamaindex_embedding()
    from provbench_plugins.kb_builders.documents.readers import read_documents  # .md .txt .html .pdf, as a user's reader would

    documents = [Document(text=d.text, metadata={"file_name": d.relative, "title": d.title})
                 for d in read_documents(str(docs))]
    index = PropertyGraphIndex.from_documents(documents, property_graph_store=graph_store, llm=llm, embed_model=embed,
                                              kg_extractors=[SchemaLLMPathExtractor(llm=llm, strict=False)]
                                              + ([ImplicitPathExtractor()] if implicit else []))
    if persist_dir is not None:
        index.storage_context.persist(persist_dir=str(persist_dir))


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
    assert "unmapped" in build and "re-embedded" in build["vectors"]
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


@pytest.mark.parametrize("name, content, problem", [
    ("missing.kuzu", None, "graph to import not found"),
    ("broken.kuzu", b"not a database", "cannot open as a kuzu database"),
])
def test_a_graph_that_cannot_be_read_is_named(tmp_path, monkeypatch, name, content, problem):
    from provbench.errors import UserError
    from provbench_plugins.kb_builders.graph_import.builder import ImportOptions, import_graph
    from provbench.llm_setup import make_llm

    if content is not None:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(UserError) as caught:
        import_graph([], tmp_path / "kb", make_llm("schema-following"), ImportOptions(source=str(tmp_path / name)))
    assert str(tmp_path / name) in str(caught.value) and problem in str(caught.value)
