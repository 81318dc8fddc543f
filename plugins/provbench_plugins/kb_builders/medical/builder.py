"""The "medical-kg" builder: paper 001's labelled medical knowledge graph.

Input: a corpus (option ``corpus``: chunk jsonl as MedRAG ships StatPearls, a text file or a
folder of text files; see :mod:`.corpus`). For each chunk the LLM extracts (entity, relation,
entity) triples and labels every entity with one of the paper's labels (:data:`.prompts.LABELS`).
Alternatively ``triples`` names a ready-made triple list (the CSV form the paper's authors
publish their graph in), and no LLM is called. A relative path is read from the working
directory, else from provbench's bundled files (so a built-in suite's ``datasets/...`` works
from anywhere, installed or in a checkout).

The KB: chunks are text units (document = source file); entities (id ``ent:<name>``) carry the
most frequent label they were given; every triple is a relation whose label is the relation text
and whose text unit is the chunk it came from, so each edge leads back to its chunk and file.
Degree and edge betweenness are computed at build time (:mod:`.graph_metrics`, option
``betweenness_k`` for sampled betweenness) and ``build_info`` holds paper 001's Table 3
statistics next to the paper's own, which ``provbench kb info`` prints.

A finished KB built from the same inputs is reused; other inputs are refused unless ``overwrite``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder, parse_options

from . import graph_metrics
from . import prompts as P
from .corpus import Chunk, Triple, match_chunk_ids, read_chunks, read_triples, relation_sources

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "medical-kg"


class MedicalKGOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    corpus: str = Field(min_length=1, description="chunk jsonl, text file or folder of text files")
    triples: str | None = Field(None, description="ready-made triples (CSV/jsonl); no LLM extraction")
    chunk_chars: int = Field(1200, ge=100)
    max_chunks: int | None = Field(None, ge=1, description="extract from the first N chunks only")
    betweenness_k: int | None = Field(None, ge=1, description="sampled edge betweenness (None: exact)")
    seed: int = 0
    max_tokens: int = Field(512, ge=64)
    overwrite: bool = False


def resolve(path: str) -> Path:
    """``path`` as given when it exists, else under the bundled suites/datasets root."""
    from provbench.bundled import bundled_root

    given = Path(path)
    root = bundled_root()
    if given.exists() or given.is_absolute() or root is None or not (root / given).exists():
        return given
    return root / given


def entity_id(name: str) -> str:
    return "ent:" + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x")


def unit_id(chunk_id: str) -> str:
    return "tu:" + chunk_id


def extract_triples(chunks: list[Chunk], llm: "LLMClient", opts: MedicalKGOptions) -> tuple[list[Triple], dict]:
    """One LLM call per chunk; a failed call or bad reply is counted and skipped, never fatal."""
    from provbench.llm import LLMError

    triples, tally = [], Counter()
    for chunk in chunks[: opts.max_chunks]:
        tally["calls"] += 1
        try:
            resp = llm.chat(P.extraction_messages(chunk.title, chunk.text), schema=P.EXTRACTION_SCHEMA,
                            max_tokens=opts.max_tokens, temperature=0.0, seed=opts.seed, purpose="kg-extraction")
        except LLMError:
            tally["failed"] += 1
            continue
        items = resp.data.get("triples") if isinstance(resp.data, dict) else None
        if not isinstance(items, list):
            tally["bad_replies"] += 1
            continue
        for item in items:
            try:
                triples.append(Triple(head=item["head"].strip(), head_label=item["head_label"],
                                      relation=item["relation"].strip(), tail=item["tail"].strip(),
                                      tail_label=item["tail_label"], source=chunk.source, chunk_id=chunk.id))
            except (KeyError, AttributeError, TypeError, ValueError):
                tally["bad_triples"] += 1
    if tally["calls"] and tally["failed"] == tally["calls"]:
        raise UserError(f"kb builder {BUILDER_NAME!r}: every extraction call to {llm.model_id!r} failed")
    return triples, dict(tally)


def to_records(chunks: list[Chunk], triples: list[Triple]):
    """Text units, labelled entities and relations; a triple naming an unknown chunk is an error."""
    triples = match_chunk_ids(triples, chunks)  # the authors' ids: sha256 of the chunk text
    by_chunk = {c.id: c for c in chunks}
    names: dict[str, str] = {}
    votes: dict[str, Counter] = defaultdict(Counter)
    units_of: dict[str, list[str]] = defaultdict(list)
    relations = []
    for n, t in enumerate(triples):
        if t.chunk_id and t.chunk_id not in by_chunk:
            raise UserError(f"triple #{n + 1} ({t.head} -{t.relation}-> {t.tail}): field ChunkID: "
                            f"{t.chunk_id!r} is not a chunk of the corpus (neither an id nor a chunk text's sha256)")
        ends = []
        for name, label in ((t.head, t.head_label), (t.tail, t.tail_label)):
            eid = entity_id(name)
            names.setdefault(eid, name)
            votes[eid][label if label in P.LABELS else "Unknown"] += 1
            if t.chunk_id and unit_id(t.chunk_id) not in units_of[eid]:
                units_of[eid].append(unit_id(t.chunk_id))
            ends.append(eid)
        relations.append(Relation(id=f"rel:{n}", source=ends[0], target=ends[1], label=t.relation,
                                  text_unit_id=unit_id(t.chunk_id) if t.chunk_id else None))
    entities = [Entity(id=eid, name=name, label=_label(votes[eid]), text_unit_ids=tuple(units_of[eid]))
                for eid, name in names.items()]
    units = [TextUnit(id=unit_id(c.id), text=c.text, document_id=c.source) for c in chunks]
    return units, entities, relations


def _label(votes: Counter) -> str:
    known = [(n, label) for label, n in votes.items() if label != "Unknown"]
    return max(known, key=lambda x: (x[0], -P.LABELS.index(x[1])))[1] if known else "Unknown"


def _fingerprint(opts: MedicalKGOptions, model: str) -> str:
    parts = [opts.model_dump_json(), model]
    for path in filter(None, (opts.corpus, opts.triples)):
        p = Path(path)
        files = sorted(p.rglob("*")) if p.is_dir() else [p]
        parts += [hashlib.sha256(f.read_bytes()).hexdigest() for f in files if f.is_file()]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _reuse(kb_dir: Path, fingerprint: str, overwrite: bool) -> "KnowledgeBase | None":
    from provbench.kb import KnowledgeBase

    if not kb_dir.exists() or not any(kb_dir.iterdir()):
        return None
    if KnowledgeBase.is_complete(kb_dir):
        kb = KnowledgeBase.open(kb_dir)
        if (kb.build_info or {}).get("fingerprint") == fingerprint:
            return kb
        kb.close()
        if not overwrite:
            raise UserError(f"knowledge base at {kb_dir} was built from other inputs; use another directory "
                            "or the builder option overwrite=true")
    elif not (kb_dir / "kb.json").exists():
        raise UserError(f"{kb_dir} is not empty and holds no knowledge base; choose an empty directory")
    shutil.rmtree(kb_dir)
    return None


def build(kb_dir: Path, llm: "LLMClient", opts: MedicalKGOptions) -> "KnowledgeBase":
    from provbench.kb import KnowledgeBase

    opts = opts.model_copy(update={"corpus": str(resolve(opts.corpus)),
                                   "triples": str(resolve(opts.triples)) if opts.triples else None})
    fingerprint = _fingerprint(opts, llm.model_id if not opts.triples else "-")
    existing = _reuse(kb_dir, fingerprint, opts.overwrite)
    if existing is not None:
        return existing
    started = time.monotonic()
    chunks = read_chunks(Path(opts.corpus), opts.chunk_chars)
    if opts.triples:
        triples, extraction = read_triples(Path(opts.triples)), {"source": opts.triples}
    else:
        triples, extraction = extract_triples(chunks, llm, opts)
    units, entities, relations = to_records(chunks, triples)
    kb = KnowledgeBase.create(kb_dir)
    kb.add_text_units(units)
    kb.add_entities(entities)
    kb.add_relations(relations)
    metrics = graph_metrics.compute({e.id: e.label for e in entities},
                                    [(r.id, r.source, r.target) for r in relations],
                                    k=opts.betweenness_k, seed=opts.seed)
    metrics["relation_sources"] = relation_sources(triples)  # the triples file's SourceFilename per edge
    graph_metrics.save(kb_dir, metrics)
    sources = [c.source for c in chunks]  # Table 3's corpus half
    info = {"builder": BUILDER_NAME, "fingerprint": fingerprint, "options": opts.model_dump(),
            "chunks": len(chunks), "source_files": len({c.source for c in chunks}),
            "extraction": extraction, "graph": graph_metrics.summary(metrics, len(relations), sources),
            "paper_001_graph": {**P.PAPER_GRAPH, "label_shares_percent": P.PAPER_LABEL_SHARES},
            "table3 (this KB / paper 001)": graph_metrics.side_by_side(
                graph_metrics.summary(metrics, len(relations), sources), P.PAPER_GRAPH, P.PAPER_LABEL_SHARES),
            "duration_s": round(time.monotonic() - started, 2)}
    kb.finalize(json.loads(json.dumps(info)))
    return kb


class MedicalKGBuilder(KBBuilder):
    """Paper 001's labelled medical KG: LLM triples with node labels, edges keep chunk and file."""

    name = BUILDER_NAME
    Options = MedicalKGOptions

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        opts = parse_options(MedicalKGOptions, {**self.options.model_dump(exclude_unset=True), **options},
                             f"kb_builder {BUILDER_NAME!r}")
        return build(Path(kb_dir), llm, opts)


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: MedicalKGBuilder}
