"""The ``documents`` builder's parts: reading .txt/.md/.html/.pdf (titles, sentences and their
offsets, errors naming the file), own text of titled and untitled documents, and LlamaIndex's
structured calls getting the pydantic schema through provbench's LLM adapter (issue 31 item 2).
The whole build, with embeddings, runs in tests/test_own_data.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from provbench.errors import UserError
from provbench.integrations.llamaindex import llamaindex_llm
from provbench.testing import schema_following_llm
from provbench_plugins.kb_builders.common.graph import Graph
from provbench_plugins.kb_builders.documents.corpus import add_title_entities, chunk_corpus, declare_own_text
from provbench_plugins.kb_builders.documents.readers import (
    DocumentError,
    document_files,
    read_documents,
    sentence_spans,
)
from provbench_tools.own_docs import write as write_own_docs


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    return write_own_docs(tmp_path_factory.mktemp("own-docs")) / "docs"


def test_every_kind_is_read_with_its_title_and_sentence_offsets(docs):
    found = {d.relative: d for d in read_documents(docs)}
    assert {Path(name).suffix for name in found} == {".md", ".html", ".pdf", ".txt"}
    assert found["mira-castell.md"].title == "Mira Castell"
    assert found["brennmoor.html"].title == "Brennmoor"
    assert "margin" not in found["brennmoor.html"].text  # the style sheet is not text
    assert found["orlen-optical-works.pdf"].title == "Orlen Optical Works"  # the PDF's title metadata
    assert "Orlen Optical Works is headquartered in Tamsk." in found["orlen-optical-works.pdf"].sentences
    assert found["field-notes.txt"].title == ""  # plain text has no title
    for doc in found.values():
        assert all(doc.text[a:b] == s for (a, b), s in zip(doc.spans, doc.sentences))


def test_sentences_split_at_ends_blank_lines_headings_and_list_items():
    text = "# Title\nFirst one. Second one!\n\nThird\nstill third.\n- item one\n- item two"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "# Title\nFirst one.",
        "Second one!",
        "Third\nstill third.",
        "- item one",
        "- item two",
    ]


def test_unreadable_documents_and_empty_sources_name_the_file(tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(DocumentError, match=r"bad\.pdf: not a readable PDF"):
        read_documents(tmp_path)
    (tmp_path / "bad.pdf").unlink()
    (tmp_path / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DocumentError, match=r"latin\.txt: not UTF-8 text"):
        read_documents(tmp_path)
    with pytest.raises(DocumentError, match="no documents"):
        document_files(tmp_path / "*.md")
    with pytest.raises(DocumentError, match="no such folder"):
        document_files(tmp_path / "missing")


def test_a_glob_selects_documents(docs):
    _, files = document_files(str(docs) + "/*.html")
    assert [f.name for f in files] == ["brennmoor.html", "castell-telescope.html", "vell-harbor.html"]


def test_text_units_carry_file_and_offsets(docs):
    documents = read_documents(docs)
    corpus, sources = chunk_corpus(documents, 256, 0)
    by_path = {d.path: d for d in documents}
    assert set(sources) == set(corpus.text_units)
    for tu, source in sources.items():
        doc = by_path[source["path"]]
        held = " ".join(doc.text[source["start"] : source["end"]].split())
        assert held == " ".join(corpus.text_units[tu].text.split())


def test_own_text_is_the_titled_documents_subject_or_what_was_extracted(docs):
    corpus, _ = chunk_corpus(read_documents(docs), 256, 0)
    graph = Graph()
    add_title_entities(graph, corpus)
    notes = next(d for d in corpus.documents.values() if not d.title).text_unit_ids[0]
    ada = graph.find("Ada Lindqvist")
    ada.text_unit_ids.add(notes)  # as extraction would link it: named in the untitled notes
    declare_own_text(graph, corpus)
    own_doc = next(d for d in corpus.documents.values() if d.title == "Ada Lindqvist")
    assert ada.own_text_unit_ids == {*own_doc.text_unit_ids, notes}
    assert graph.find("Brennmoor").own_text_unit_ids == set(
        next(d for d in corpus.documents.values() if d.title == "Brennmoor").text_unit_ids
    )


class Triple(BaseModel):
    subject: str
    relation: str
    object: str


class Triples(BaseModel):
    triples: list[Triple]


def test_structured_calls_send_the_pydantic_schema():
    from llama_index.core import PromptTemplate

    client = schema_following_llm()
    llm = llamaindex_llm(client)
    prompt = PromptTemplate("Extract triples from: {text}")
    result = llm.structured_predict(Triples, prompt, text="Mira Castell founded Halden Observatory.")
    assert isinstance(result, Triples) and result.triples
    sent = client.backend.calls[-1]["schema"]
    assert sent["properties"]["triples"]["items"]["required"] == ["subject", "relation", "object"]  # $defs inlined


def test_llamaindex_schema_extractor_gets_triples_from_schema_following(docs):
    from llama_index.core.graph_stores.types import KG_RELATIONS_KEY
    from llama_index.core.indices.property_graph import SchemaLLMPathExtractor
    from llama_index.core.schema import TextNode

    llm = llamaindex_llm(schema_following_llm())
    extractor = SchemaLLMPathExtractor(llm=llm, strict=False, num_workers=1)
    [node] = extractor([TextNode(text="Mira Castell founded Halden Observatory in Vell Harbor.")])
    assert node.metadata[KG_RELATIONS_KEY]  # a plain-text reply gives LlamaIndex nothing to parse


def test_the_builder_needs_a_source():
    from provbench_plugins.kb_builders.documents.builder import DocumentsOptions, documents_source

    with pytest.raises(UserError, match="give the option 'source'"):
        documents_source([], DocumentsOptions())
