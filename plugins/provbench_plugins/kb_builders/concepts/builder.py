"""A knowledge base from a concept graph in plain files (paper 002's curriculum graph and the like).

No LLM is called. The build:

* each concept becomes an entity ``ent:<id>`` (name, ``kind`` as its label, description) and
  one text unit ``tu:<id>`` in document ``doc:<id>`` holding "name: description" (and its
  aliases), so text-unit systems (RAG, one-shot GraphRAG) have something to read;
* each edge becomes a relation ``rel:<id>`` labelled with its relation type, carrying its
  validity (``valid_from`` / ``invalidated_at``); an invalidated edge is stored, never followed;
* Leiden communities get a deterministic title and summary listing their members.

Where the files are: the ``concepts`` / ``edges`` options (paths), else the
``metadata["concept_graph"]`` a dataset loader put on the questions (the curriculum loader
does). File formats: :mod:`.files`. A finished KB built from the same inputs is reused; one
built from other inputs is an error unless ``overwrite``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder

from .files import Concept, ConceptEdge, read_concepts, read_edges

BUILDER_NAME = "concept-graph"
VERSION = 1


class ConceptGraphOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    concepts: str | None = None
    edges: str | None = None
    communities: bool = True
    community_seed: int = 0
    overwrite: bool = False


class ConceptGraphBuilder(KBBuilder):
    """Knowledge base from concept and edge files (CSV or JSON lines, optional edge validity)."""

    name = BUILDER_NAME
    Options = ConceptGraphOptions

    def build(self, questions: list[Question], kb_dir: Path, llm: Any = None, **options: Any):
        from provbench.kb import KnowledgeBase

        concepts_path, edges_path = self.graph_files(questions)
        concepts = read_concepts(concepts_path)
        edges = read_edges(edges_path, {c.id for c in concepts})
        fingerprint = _fingerprint(concepts_path, edges_path, self.options)
        kb_dir = Path(kb_dir)
        if KnowledgeBase.is_complete(kb_dir):
            kb = KnowledgeBase.open(kb_dir, read_only=True)
            if kb.build_info.get("fingerprint") == fingerprint:
                return kb
            kb.close()
            if not self.options.overwrite:
                raise UserError(f"{kb_dir} holds a knowledge base built from other inputs; "
                                "use another directory or the option overwrite: true")
        if kb_dir.exists():
            shutil.rmtree(kb_dir)  # an interrupted build, or one being replaced
        kb = KnowledgeBase.create(kb_dir)
        write_graph(kb, concepts, edges)
        if self.options.communities:
            summarise_communities(kb, concepts, self.options.community_seed)
        kb.finalize({"builder": BUILDER_NAME, "version": VERSION, "fingerprint": fingerprint,
                     "inputs": {"concepts": str(concepts_path), "edges": str(edges_path)},
                     "concepts": len(concepts), "edges": len(edges),
                     "invalidated_edges": sum(e.invalidated_at is not None for e in edges)})
        kb.close()
        return KnowledgeBase.open(kb_dir, read_only=True)

    def graph_files(self, questions: list[Question]) -> tuple[Path, Path]:
        declared = next((q.metadata.get("concept_graph") for q in questions
                         if isinstance(q.metadata.get("concept_graph"), dict)), {})
        concepts = self.options.concepts or declared.get("concepts")
        edges = self.options.edges or declared.get("edges")
        if not concepts or not edges:
            raise UserError(f"kb builder {BUILDER_NAME!r}: give the options 'concepts' and 'edges' (file paths), "
                            "or use a dataset loader that names the concept graph of its questions")
        return Path(concepts).resolve(), Path(edges).resolve()


def entity_id(concept_id: str) -> str:
    return f"ent:{concept_id}"


def write_graph(kb: Any, concepts: list[Concept], edges: list[ConceptEdge]) -> None:
    units = [TextUnit(id=f"tu:{c.id}", document_id=f"doc:{c.id}", text=concept_text(c),
                      entity_ids=(entity_id(c.id),)) for c in concepts]
    kb.add_text_units(units)
    kb.add_entities([Entity(id=entity_id(c.id), name=c.name, label=c.kind, description=c.description,
                            text_unit_ids=(f"tu:{c.id}",)) for c in concepts])
    kb.add_relations([Relation(id=f"rel:{e.id}", source=entity_id(e.source), target=entity_id(e.target),
                               label=e.relation, valid_from=e.valid_from, invalidated_at=e.invalidated_at)
                      for e in edges])


def concept_text(concept: Concept) -> str:
    text = f"{concept.name}: {concept.description}" if concept.description else concept.name
    return text + (f" (also called {', '.join(concept.aliases)})" if concept.aliases else "")


def summarise_communities(kb: Any, concepts: list[Concept], seed: int) -> None:
    names = {entity_id(c.id): c.name for c in concepts}
    summaries = {}
    for community in kb.detect_communities(seed=seed):
        members = [names[e] for e in community.entity_ids if e in names]
        summaries[community.id] = (", ".join(members[:3]), "Concepts: " + ", ".join(members) + ".")
    if summaries:
        kb.set_community_summaries(summaries)


def _fingerprint(concepts: Path, edges: Path, options: ConceptGraphOptions) -> str:
    digest = hashlib.sha256()
    for path in (concepts, edges):
        digest.update(path.read_bytes())
    digest.update(json.dumps({"version": VERSION, "communities": options.communities,
                              "seed": options.community_seed}, sort_keys=True).encode())
    return digest.hexdigest()


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: ConceptGraphBuilder}
