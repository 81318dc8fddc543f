"""Benchmark: the ``documents`` builder's extraction choices on ``datasets/own-docs-mini``.

Runs each extractor of the builder's ``extractor`` option over the corpus's text units with the
same model and the same validation of what it returns (names must occur in their text unit):

* ``provbench``: the project's extraction block (:mod:`provbench_plugins.kb_builders.common.extraction`);
* ``llamaindex-schema``: LlamaIndex's ``SchemaLLMPathExtractor`` (``structured_predict``, which the
  project's LLM adapter now sends with the pydantic schema);
* ``llamaindex-dynamic``: LlamaIndex's ``DynamicLLMPathExtractor`` (free-text ``predict``, parsed).

and prints, per extractor, entities and relations kept, items dropped as not in the text, failed
or invalid replies it could count, LLM calls and wall time. The model is ``schema-following`` by
default (every reply an instance of the requested schema, none without one: what a grammar-
constrained local model guarantees at best), or any model id with ``--model``.
Run: ``python benchmarks/bench_documents_extraction.py [--model ID] [--docs DIR]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from provbench.llm_setup import make_llm
from provbench_plugins.kb_builders.common.extraction import extract_into
from provbench_plugins.kb_builders.common.graph import Graph
from provbench_plugins.kb_builders.common.llm_calls import LLMTally
from provbench_plugins.kb_builders.documents.builder import DocumentsOptions
from provbench_plugins.kb_builders.documents.corpus import chunk_corpus
from provbench_plugins.kb_builders.documents.llamaindex_extraction import extract_with_llamaindex
from provbench_plugins.kb_builders.documents.readers import read_documents

EXTRACTORS = ("provbench", "llamaindex-schema", "llamaindex-dynamic")


def measure(extractor: str, corpus, model: str, cache: Path) -> dict:
    options = DocumentsOptions(extractor=extractor)
    settings = options.extraction_settings(tuple(options.entity_types))
    llm = make_llm(model, cache_dir=cache / extractor, max_concurrency=2)
    graph, tally, units = Graph(), LLMTally(), list(corpus.text_units.values())
    started = time.monotonic()
    if extractor == "provbench":
        counts = extract_into(graph, units, lambda tu: corpus.documents[tu.document_id].title, llm, settings, tally, 2)
    else:
        counts = extract_with_llamaindex(extractor, graph, units, llm, settings, tally, 2)
    return {
        "extractor": extractor,
        "entities": len(graph.entities),
        "relations": len(graph.relations),
        "not in text": counts.hallucinated_items,
        "invalid items": counts.invalid_items,
        "failed or invalid replies": counts.failed_calls + counts.invalid_outputs,
        "calls": llm.stats.calls,
        "seconds": round(time.monotonic() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="schema-following")
    parser.add_argument(
        "--docs", type=Path, default=Path(__file__).resolve().parents[1] / "datasets/own-docs-mini/docs"
    )
    args = parser.parse_args()
    corpus, _ = chunk_corpus(read_documents(args.docs), DocumentsOptions().chunk_size, 0)
    print(f"{len(corpus.documents)} documents, {len(corpus.text_units)} text units, model {args.model}")
    with tempfile.TemporaryDirectory() as cache:
        rows = [measure(e, corpus, args.model, Path(cache)) for e in EXTRACTORS]
    columns = list(rows[0])
    print("\t".join(columns))
    for row in rows:
        print("\t".join(str(row[c]) for c in columns))


if __name__ == "__main__":
    main()
