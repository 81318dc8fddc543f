"""A knowledge base from a concept graph in plain files (paper 002's curriculum graph and the like).

No LLM is called. The build:

* each concept becomes an entity ``ent:<id>`` (name, aliases, ``kind`` as its label, description)
  and one text unit ``tu:<id>`` in document ``doc:<id>`` holding "name: description" (and its
  aliases), so text-unit systems (RAG, one-shot GraphRAG) have something to read;
* each edge becomes a relation ``rel:<id>`` labelled with its relation type, carrying its
  bi-temporal stamps (``valid_from`` / ``recorded_at`` / ``invalidated_at``); an invalidated edge
  is stored, and views follow it only as of a time before its invalidation;
* Leiden communities get a deterministic title and summary listing their members.

Where the files are: the ``concepts`` / ``edges`` options (paths), else the
``metadata["concept_graph"]`` a dataset loader put on the questions (the curriculum loader
does). File formats: :mod:`.files`. Reuse, build info, the member-list summaries and the
finishing step are the shared ones of :mod:`provbench_plugins.kb_builders.common`: a finished
KB built from the same inputs is reused (read-only); one built from other inputs is an error
unless ``overwrite``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder

from ..common.buildinfo import file_digests, fingerprint, kb_counts, reuse_existing, standard_info
from ..common.communities import fallback_summary
from ..common.options import BaseBuildOptions
from ..common.writing import finish, write_kb
from .files import Concept, ConceptEdge, read_concepts, read_edges

BUILDER_NAME = "concept-graph"
VERSION = 3  # 2: shared fingerprint, build info and member-list summaries (kb_builders.common); 3: aliases, recorded_at


class ConceptGraphOptions(BaseBuildOptions):
    concepts: str | None = None
    edges: str | None = None
    communities: bool = True
    community_seed: int = 0


class ConceptGraphBuilder(KBBuilder):
    """Knowledge base from concept and edge files (CSV or JSON lines, optional edge validity)."""

    name = BUILDER_NAME
    Options = ConceptGraphOptions

    def build(self, questions: list[Question], kb_dir: Path, llm: Any = None, **options: Any):
        from provbench.kb import KnowledgeBase

        opts = self.build_options(options)
        concepts_path, edges_path = graph_files(questions, opts)
        inputs = fingerprint(
            f"{BUILDER_NAME}/v{VERSION}", "", opts.fingerprint_fields(), file_digests([concepts_path, edges_path])
        )
        kb_dir = Path(kb_dir)
        existing = reuse_existing(kb_dir, inputs, opts.overwrite, read_only=True)
        if existing is not None:
            return existing
        started = time.monotonic()
        concepts = read_concepts(concepts_path)
        edges = read_edges(edges_path, {c.id for c in concepts})
        kb = write_kb(kb_dir, *graph_records(concepts, edges))
        communities = summarise_communities(kb, concepts, opts.community_seed) if opts.communities else 0
        info = standard_info(
            builder=BUILDER_NAME,
            inputs={**inputs, "concepts": str(concepts_path), "edges": str(edges_path)},
            model="",
            options=opts.model_dump(),
            counts=kb_counts(concepts, concepts, edges, len(concepts), communities=communities),  # one each
            concepts=len(concepts),
            edges=len(edges),
            invalidated_edges=sum(e.invalidated_at is not None for e in edges),
        )
        finish(kb, info, started, opts.ann_min_vectors)
        kb.close()
        return KnowledgeBase.open(kb_dir, read_only=True)


def graph_files(questions: list[Question], opts: ConceptGraphOptions) -> tuple[Path, Path]:
    """The options' concept and edge files, else those a loader named in ``metadata["concept_graph"]``."""
    declared = next(
        (q.metadata.get("concept_graph") for q in questions if isinstance(q.metadata.get("concept_graph"), dict)), {}
    )
    concepts = opts.concepts or declared.get("concepts")
    edges = opts.edges or declared.get("edges")
    if not concepts or not edges:
        raise UserError(
            f"kb builder {BUILDER_NAME!r}: give the options 'concepts' and 'edges' (file paths), "
            "or use a dataset loader that names the concept graph of its questions"
        )
    for path in (concepts, edges):
        if not Path(path).is_file():
            raise UserError(f"kb builder {BUILDER_NAME!r}: {path}: no such file")
    return Path(concepts).resolve(), Path(edges).resolve()


def entity_id(concept_id: str) -> str:
    return f"ent:{concept_id}"


def graph_records(
    concepts: list[Concept], edges: list[ConceptEdge]
) -> tuple[list[TextUnit], list[Entity], list[Relation]]:
    units = [
        TextUnit(id=f"tu:{c.id}", document_id=f"doc:{c.id}", text=concept_text(c), entity_ids=(entity_id(c.id),))
        for c in concepts
    ]
    entities = [
        Entity(
            id=entity_id(c.id),
            name=c.name,
            label=c.kind,
            description=c.description,
            text_unit_ids=(f"tu:{c.id}",),
            aliases=c.aliases,
        )
        for c in concepts
    ]
    relations = [
        Relation(
            id=f"rel:{e.id}",
            source=entity_id(e.source),
            target=entity_id(e.target),
            label=e.relation,
            valid_from=e.valid_from,
            recorded_at=e.recorded_at,
            invalidated_at=e.invalidated_at,
        )
        for e in edges
    ]
    return units, entities, relations


def concept_text(concept: Concept) -> str:
    text = f"{concept.name}: {concept.description}" if concept.description else concept.name
    return text + (f" (also called {', '.join(concept.aliases)})" if concept.aliases else "")


def summarise_communities(kb: Any, concepts: list[Concept], seed: int) -> int:
    """Leiden communities, each titled and summarised by its members (no LLM); how many there are."""
    names = {entity_id(c.id): c.name for c in concepts}
    summaries = {
        community.id: fallback_summary([names[e] for e in community.entity_ids if e in names], [])
        for community in kb.detect_communities(seed=seed)
    }
    if summaries:
        kb.set_community_summaries(summaries)
    return len(summaries)


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: ConceptGraphBuilder}
