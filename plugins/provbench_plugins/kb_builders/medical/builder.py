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

The authors' pipeline as a preset (``preset: authors``, or each part alone): ``chunking:
authors`` re-cuts the corpus as their ``Chunker.py`` (600/100 overlapping recursive splits, sha256
ids) and ``extraction: authors`` asks for every valid triple under their 7 labels and 19 relation
types, and ``entity_names: exact`` keeps names differing only in case or punctuation apart (by
default they are one entity, as ``ent:<name>`` lower-cases). ``unmatched_chunks: keep`` keeps a
triple whose ChunkID is no chunk of the corpus (as in the authors' ``arch_kg.csv`` read against
another cut of StatPearls) with file-level provenance only: no text unit, its SourceFilename in
``relation_sources``; by default such a triple is an error.

Built on :mod:`provbench_plugins.kb_builders.common` like every builder: the LLM calls run
``max_workers`` at once and are tallied; reuse, build info (``counts`` beside paper 001's) and
the finishing step are the shared ones. A finished KB built from the same inputs is reused;
other inputs are refused unless ``overwrite``.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder

from ..common.buildinfo import file_digests, fingerprint, kb_counts, reuse_existing, standard_info
from ..common.extraction import ExtractionCounts
from ..common.llm_calls import LLMTally, effective_workers, run_calls
from ..common.options import BaseBuildOptions, with_preset
from ..common.writing import finish, write_kb
from . import graph_metrics
from . import prompts as P
from .corpus import Chunk, Triple, match_chunk_ids, read_chunks, read_triples, relation_sources

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "medical-kg"
BUILDER_VERSION = 2  # 2: inputs fingerprinted like every builder's (common.buildinfo)
AUTHORS = {"chunking": "authors", "extraction": "authors", "entity_names": "exact"}
PURPOSE = "kg-extraction"

#: the graph paper 001 reports (Table 3), printed beside ours by ``kb info``
PAPER = {
    "id": "001",
    "title": "KGRAG-Ex (paper 001), Table 3",
    "counts": {"entities": P.PAPER_GRAPH["nodes"], "relations": P.PAPER_GRAPH["edges"]},
}


class MedicalKGOptions(BaseBuildOptions):
    corpus: str = Field(min_length=1, description="chunk jsonl, text file or folder of text files")
    triples: str | None = Field(None, description="ready-made triples (CSV/jsonl); no LLM extraction")
    chunk_chars: int = Field(1200, ge=100)
    max_chunks: int | None = Field(None, ge=1, description="extract from the first N chunks only")
    betweenness_k: int | None = Field(None, ge=1, description="sampled edge betweenness (None: exact)")
    seed: int = 0
    max_tokens: int = Field(512, ge=64)
    preset: Literal["provbench", "authors"] = Field("provbench", description="'authors': their chunking and extraction")
    chunking: Literal["paragraphs", "authors"] = Field(
        "paragraphs", description="'authors': 600/100 recursive, sha256 ids"
    )
    extraction: Literal["provbench", "authors"] = Field(
        "provbench", description="'authors': every valid triple, their 7 labels and 19 relation types"
    )
    entity_names: Literal["merged", "exact"] = Field(
        "merged",
        description="names differing only in case or punctuation are one entity ('merged'), or each "
        "exact name its own (the authors' nx.DiGraph nodes)",
    )
    unmatched_chunks: Literal["error", "keep"] = Field(
        "error", description="a triple whose ChunkID is no corpus chunk: an error, or kept with its file only"
    )

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        return with_preset(data, {"authors": AUTHORS})


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


def extract_triples(
    chunks: list[Chunk], llm: "LLMClient", opts: MedicalKGOptions, tally: LLMTally, workers: int
) -> tuple[list[Triple], ExtractionCounts]:
    """One LLM call per chunk (``workers`` at once, applied in chunk order); a failed call or bad
    reply is counted and skipped, never fatal."""
    chosen = chunks[: opts.max_chunks]
    counts = ExtractionCounts(text_units=len(chosen))
    authors = opts.extraction == "authors"
    messages, schema = (
        (P.authors_messages, P.AUTHORS_SCHEMA) if authors else (P.extraction_messages, P.EXTRACTION_SCHEMA)
    )
    replies = run_calls(
        lambda chunk: tally.chat(
            llm,
            messages(chunk.title, chunk.text),
            PURPOSE,
            schema=schema,
            max_tokens=opts.max_tokens,
            temperature=0.0,
            seed=opts.seed,
        ),
        chosen,
        workers,
        "extracting triples",
    )
    triples: list[Triple] = []
    for chunk, resp in zip(chosen, replies):
        items = resp.data.get("triples") if resp is not None and isinstance(resp.data, dict) else None
        if resp is None or not isinstance(items, list):
            counts.failed_calls += resp is None
            counts.invalid_outputs += resp is not None
            continue
        for item in items:
            try:
                triples.append(
                    Triple(
                        head=item["head"].strip(),
                        head_label=item["head_label"],
                        relation=item["relation"].strip(),
                        tail=item["tail"].strip(),
                        tail_label=item["tail_label"],
                        source=chunk.source,
                        chunk_id=chunk.id,
                    )
                )
            except (KeyError, AttributeError, TypeError, ValueError):
                counts.invalid_items += 1
    counts.relations_added = len(triples)
    return triples, counts


class EntityIds:
    """Entity ids for names: ``merged`` gives names differing only in case or punctuation one id
    (their first spelling names the entity); ``exact`` gives every exact name its own, the plain id
    to the first and "-2", "-3"... to later spellings, in the triples' order."""

    def __init__(self, names: str = "merged") -> None:
        self.exact, self.ids, self.taken = names == "exact", {}, set()

    def __call__(self, name: str) -> str:
        if not self.exact:
            return entity_id(name)
        if name not in self.ids:
            base, n = entity_id(name), 1
            while (eid := base if n == 1 else f"{base}-{n}") in self.taken:
                n += 1
            self.ids[name] = eid
            self.taken.add(eid)
        return self.ids[name]


def to_records(chunks: list[Chunk], triples: list[Triple], unmatched: str = "error", names_rule: str = "merged"):
    """Text units, labelled entities and relations; a triple naming an unknown chunk is an error,
    or with ``unmatched="keep"`` a relation with no text unit (its file stays in relation_sources).
    ``names_rule``: see :class:`EntityIds`."""
    triples = match_chunk_ids(triples, chunks)  # the authors' ids: sha256 of the chunk text
    by_chunk = {c.id: c for c in chunks}
    id_of = EntityIds(names_rule)
    names: dict[str, str] = {}
    votes: dict[str, Counter] = defaultdict(Counter)
    units_of: dict[str, list[str]] = defaultdict(list)
    relations = []
    for n, t in enumerate(triples):
        if t.chunk_id and t.chunk_id not in by_chunk and unmatched == "keep":
            t = t.model_copy(update={"chunk_id": ""})
        elif t.chunk_id and t.chunk_id not in by_chunk:
            raise UserError(
                f"triple #{n + 1} ({t.head} -{t.relation}-> {t.tail}): field ChunkID: "
                f"{t.chunk_id!r} is not a chunk of the corpus (neither an id nor a chunk text's sha256; "
                "option unmatched_chunks: keep keeps such triples with their file only)"
            )
        ends = []
        for name, label in ((t.head, t.head_label), (t.tail, t.tail_label)):
            eid = id_of(name)
            names.setdefault(eid, name)
            votes[eid][label if label in P.LABELS else "Unknown"] += 1
            if t.chunk_id and unit_id(t.chunk_id) not in units_of[eid]:
                units_of[eid].append(unit_id(t.chunk_id))
            ends.append(eid)
        relations.append(
            Relation(
                id=f"rel:{n}",
                source=ends[0],
                target=ends[1],
                label=t.relation,
                text_unit_id=unit_id(t.chunk_id) if t.chunk_id else None,
            )
        )
    entities = [
        Entity(id=eid, name=name, label=_label(votes[eid]), text_unit_ids=tuple(units_of[eid]))
        for eid, name in names.items()
    ]
    units = [TextUnit(id=unit_id(c.id), text=c.text, document_id=c.source) for c in chunks]
    return units, entities, relations


def _label(votes: Counter) -> str:
    known = [(n, label) for label, n in votes.items() if label != "Unknown"]
    return max(known, key=lambda x: (x[0], -P.LABELS.index(x[1])))[1] if known else "Unknown"


def input_fingerprint(opts: MedicalKGOptions, model: str) -> dict[str, Any]:
    files = [
        f
        for path in filter(None, (opts.corpus, opts.triples))
        for f in (sorted(Path(path).rglob("*")) if Path(path).is_dir() else [Path(path)])
        if f.is_file()
    ]
    return fingerprint(f"{BUILDER_NAME}/v{BUILDER_VERSION}", model, opts.fingerprint_fields(), file_digests(files))


def build(kb_dir: Path, llm: "LLMClient", opts: MedicalKGOptions) -> "KnowledgeBase":
    opts = opts.model_copy(
        update={"corpus": str(resolve(opts.corpus)), "triples": str(resolve(opts.triples)) if opts.triples else None}
    )
    model = llm.model_id if not opts.triples else "-"
    inputs = input_fingerprint(opts, model)
    existing = reuse_existing(kb_dir, inputs, opts.overwrite)
    if existing is not None:
        return existing
    started = time.monotonic()
    chunks = read_chunks(Path(opts.corpus), opts.chunk_chars, opts.chunking)
    tally, extraction = LLMTally(), None
    if opts.triples:
        triples = read_triples(Path(opts.triples))
    else:
        triples, extraction = extract_triples(chunks, llm, opts, tally, effective_workers(opts.max_workers, llm))
        tally.raise_if_all_failed(BUILDER_NAME, llm.model_id)
    units, entities, relations = to_records(chunks, triples, opts.unmatched_chunks, opts.entity_names)
    kb = write_kb(kb_dir, units, entities, relations)
    metrics = graph_metrics.compute(
        {e.id: e.label for e in entities},
        [(r.id, r.source, r.target) for r in relations],
        k=opts.betweenness_k,
        seed=opts.seed,
    )
    metrics["relation_sources"] = relation_sources(triples)  # the triples file's SourceFilename per edge
    graph_metrics.save(kb_dir, metrics)
    graph = graph_metrics.summary(metrics, len(relations), [c.source for c in chunks])  # with Table 3's corpus half
    sources = len({c.source for c in chunks})
    info = standard_info(
        builder=BUILDER_NAME,
        inputs=inputs,
        model=model,
        options=opts.model_dump(),
        paper=PAPER,
        counts=kb_counts(units, entities, relations, sources),
        extraction=extraction,
        llm=tally if extraction is not None else None,
        chunks=len(chunks),
        source_files=sources,
        triples_file=opts.triples,
        graph=graph,
        paper_001_graph={**P.PAPER_GRAPH, "label_shares_percent": P.PAPER_LABEL_SHARES},
        **{"table3 (this KB / paper 001)": graph_metrics.side_by_side(graph, P.PAPER_GRAPH, P.PAPER_LABEL_SHARES)},
    )
    finish(kb, info, started, opts.ann_min_vectors)
    return kb


class MedicalKGBuilder(KBBuilder):
    """Paper 001's labelled medical KG: LLM triples with node labels, edges keep chunk and file."""

    name = BUILDER_NAME
    Options = MedicalKGOptions

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        return build(Path(kb_dir), llm, self.build_options(options))


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: MedicalKGBuilder}
