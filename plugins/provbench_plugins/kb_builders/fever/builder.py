"""The ``fever-wiki`` KB builder: FEVER's Wikipedia pages as a knowledge base any system can use.

- **Which pages.** ``scope: suite`` (default) indexes the claims' retrieval candidates, i.e.
  pages whose title (without its parenthesised disambiguation) occurs word for word in a claim,
  plus (``link_hops: 1``) the pages those link to. The gold evidence pages are *not* added
  (their presence would depend on the label: NOT ENOUGH INFO claims have none);
  ``include_gold_pages: true`` adds them, a deviation the p003 report names. ``scope: all``
  indexes the whole dump. The dump is streamed: only the chosen pages are parsed and held.
- **Text units** are sentences, id ``s:<page id>:<sentence number>`` (``pages.sentence_id`` and
  ``pages.evidence_of``), so a cited unit is a FEVER evidence pair ``[page, line]``.
- **Entities**: one per page, id ``p:<page id>``, named by its readable title, described by its
  first sentence, linked to its own sentences only (declared as its own text,
  ``own_text_unit_ids``). **Relations**: one per linked page pair
  (id ``l:<page>-><target>``, label "links to") when a sentence's hyperlink targets another
  indexed page; ``links`` in build_info counts them.
- **Triples** (``triples: true`` with an LLM): paper 003's per-document extraction, one call
  per page (subject, relation, object, confidence, source = the page's sentences), written to
  ``facts.jsonl`` next to the database with the build cost per page in build_info: a measure of
  extraction cost, for inspection. No system reads it (a file beside the database is not
  filtered by the graph view; GA-RAG extracts at question time, as the paper times it).
- **Reuse.** A complete KB built from the same inputs (fingerprint of claims, pages files' names,
  sizes and times, options, model) is reopened with no work; an interrupted one is removed and
  rebuilt. Reuse, LLM calls (``max_workers`` at once, tallied), build info and the finishing
  step are the shared ones of :mod:`provbench_plugins.kb_builders.common`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from provbench import hookimpl
from provbench.errors import UserError
from provbench.jsonlines import read_json_lines
from provbench.kb.owned import claim
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder

from provbench_plugins.datasets.fever.pages import Page, page_files, page_id_of, read_pages, sentence_id, title_matcher

from ..common.buildinfo import fingerprint, kb_counts, reuse_existing, standard_info
from ..common.extraction import ExtractionCounts
from ..common.llm_calls import LLMTally, effective_workers, run_calls
from ..common.options import BaseBuildOptions
from ..common.writing import finish, write_kb
from .triples import parse_triples, reply_data, reply_problem, triple_messages, triple_schema

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "fever-wiki"
BUILDER_VERSION = 3  # 2: inputs fingerprinted like every builder's (common.buildinfo); 3: own text declared
FACTS_FILE = "facts.jsonl"
PURPOSE = "kb-triples"


class FeverWikiOptions(BaseBuildOptions):
    pages: str | None = Field(None, description="pages dump (default: the loader's metadata['pages'])")
    scope: Literal["suite", "all"] = "suite"
    candidates: bool = Field(True, description="add pages whose title occurs in a claim")
    include_gold_pages: bool = Field(False, description="also add every gold evidence page (not FEVER's setting)")
    link_hops: int = Field(0, ge=0, le=1, description="also add pages the chosen pages link to")
    triples: bool = Field(False, description="LLM triples per page, kept as facts with confidence")
    max_triples: int = Field(8, ge=1, le=50)
    triples_max_tokens: int = Field(400, ge=32, le=4096, description="reply budget of one page's triples")
    seed: int = 0


def entity_id(page_id: str) -> str:
    return f"p:{page_id}"


def choose_pages(questions: list[Question], source: str, opts: FeverWikiOptions) -> dict[str, Page]:
    if opts.scope == "all":
        return read_pages(source)
    if not (opts.candidates or opts.include_gold_pages):
        raise UserError(
            f"kb_builder {BUILDER_NAME!r}: scope 'suite' with candidates and include_gold_pages "
            "both off selects no page"
        )
    needed = gold_pages(questions) if opts.include_gold_pages else set()
    also = title_matcher(q.question for q in questions) if opts.candidates else None
    pages = read_pages(source, needed, also)
    if opts.link_hops:
        targets = {page_id_of(t) for p in pages.values() for s in p.sentences for _, t in s.links} - set(pages)
        pages.update(read_pages(source, targets))
    return pages


def gold_pages(questions: list[Question]) -> set[str]:
    return {page for q in questions for page in q.metadata.get("evidence_pages", [])}


def graph_records(pages: dict[str, Page]) -> tuple[list[TextUnit], list[Entity], list[Relation]]:
    units, entities, relations = [], [], []
    for page in pages.values():
        ids = [sentence_id(page.id, s.line) for s in page.sentences]
        units += [
            TextUnit(id=i, text=f"{page.title}: {s.text}", document_id=page.id, entity_ids=(entity_id(page.id),))
            for i, s in zip(ids, page.sentences)
        ]
        first = page.sentences[0].text if page.sentences else ""
        entities.append(
            Entity(
                id=entity_id(page.id),
                name=page.title,
                label="page",
                description=first,
                text_unit_ids=tuple(ids),
                own_text_unit_ids=tuple(ids),
            )
        )
    for page in pages.values():
        seen: set[str] = set()
        for s in page.sentences:
            for _, target in s.links:
                target_id = page_id_of(target)
                rid = f"l:{page.id}->{target_id}"
                if target_id in pages and target_id != page.id and rid not in seen:
                    seen.add(rid)
                    # no source text unit: it would link the sentence to the target page too, and then
                    # removing a page (paper 000's ablations) would not hide its own sentences
                    relations.append(
                        Relation(id=rid, source=entity_id(page.id), target=entity_id(target_id), label="links to")
                    )
    return units, entities, relations


def extract_page_facts(
    llm: "LLMClient", pages: dict[str, Page], opts: FeverWikiOptions, tally: LLMTally, workers: int
) -> tuple[list[dict], list[dict], ExtractionCounts]:
    """Triples per page as fact records (``workers`` calls at once, kept in page order), the cost
    of each page (calls, tokens, seconds) and the extraction counts."""
    chosen = [page for page in pages.values() if page.sentences]

    def ask(page: Page) -> tuple[Any, float]:
        started = time.perf_counter()
        resp = tally.chat(
            llm,
            triple_messages(f"{page.title}. {page.text}", opts.max_triples),
            PURPOSE,
            schema=triple_schema(opts.max_triples),
            max_tokens=opts.triples_max_tokens,
            temperature=0.0,
            seed=opts.seed,
        )
        return resp, time.perf_counter() - started

    counts, facts, costs = ExtractionCounts(text_units=len(chosen)), [], []
    for page, (resp, seconds) in zip(chosen, run_calls(ask, chosen, workers, "extracting triples")):
        data = reply_data(resp) if resp is not None else None
        triples, dropped = parse_triples(data, opts.max_triples)
        problem = reply_problem(resp, data, opts.triples_max_tokens) if resp is not None else None
        counts.failed_calls += resp is None
        counts.invalid_outputs += problem is not None
        counts.invalid_items += dropped
        sources = [sentence_id(page.id, s.line) for s in page.sentences]
        facts += [{"id": f"kf:{page.id}:{n}", **t.model_dump(), "source_ids": sources} for n, t in enumerate(triples)]
        tokens = (resp.prompt_tokens + resp.completion_tokens) if resp is not None else 0
        costs.append(
            {
                "page": page.id,
                "calls": 1,
                "tokens": tokens,
                "dropped": dropped,
                "problem": problem,
                "seconds": round(seconds, 4),
                "failed": resp is None,
            }
        )
    counts.relations_added = len(facts)
    return facts, costs, counts


def input_fingerprint(questions: list[Question], source: str, opts: FeverWikiOptions, model: str) -> dict[str, Any]:
    """Claims, options, model and the pages files' names, sizes and times (a multi-GB dump is not hashed)."""
    stamps = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in page_files(source)]
    claims = sorted((q.id, q.question, q.metadata.get("evidence_pages", [])) for q in questions)
    return fingerprint(
        f"{BUILDER_NAME}/v{BUILDER_VERSION}", model, opts.fingerprint_fields(), {"claims": claims, "pages": stamps}
    )


class FeverWikiBuilder(KBBuilder):
    """FEVER Wikipedia pages: sentences as text units, a page entity each, hyperlinks, optional LLM triples."""

    name = BUILDER_NAME
    Options = FeverWikiOptions

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        opts = self.build_options(options)
        source = opts.pages or next((q.metadata["pages"] for q in questions if q.metadata.get("pages")), None)
        if not source:
            raise UserError(f"kb builder {BUILDER_NAME!r}: no pages: give option 'pages' or the loader's 'pages'")
        model = llm.model_id if opts.triples else ""
        inputs = input_fingerprint(questions, source, opts, model)
        existing = reuse_existing(Path(kb_dir), inputs, opts.overwrite)
        return existing if existing is not None else build(questions, Path(kb_dir), llm, source, opts, inputs)


def build(
    questions: list[Question],
    kb_dir: Path,
    llm: "LLMClient",
    source: str,
    opts: FeverWikiOptions,
    inputs: dict[str, Any],
) -> "KnowledgeBase":
    started = time.monotonic()
    pages = choose_pages(questions, source, opts)
    missing = sorted({p for q in questions for p in q.metadata.get("evidence_pages", [])} - set(pages))
    units, entities, relations = graph_records(pages)
    tally, facts, costs, extraction = LLMTally(), [], [], None
    if opts.triples:
        facts, costs, extraction = extract_page_facts(llm, pages, opts, tally, effective_workers(opts.max_workers, llm))
        tally.raise_if_all_failed(BUILDER_NAME, llm.model_id)
    kb = write_kb(kb_dir, units, entities, relations)
    claim(kb_dir, FACTS_FILE)  # provbench's own file: removed with the KB when it is rebuilt
    with (kb_dir / FACTS_FILE).open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(f, ensure_ascii=False) + "\n" for f in facts)
    info = standard_info(
        builder=BUILDER_NAME,
        inputs={**inputs, "pages_source": str(source), "claims": len(questions)},
        model=inputs["model"],
        options=opts.model_dump(),
        counts=kb_counts(units, entities, relations, len(pages), questions=len(questions)),
        extraction=extraction,
        llm=tally if opts.triples else None,
        pages=len(pages),
        sentences=len(units),
        links=len(relations),
        facts=len(facts),
        missing_evidence_pages=missing[:50],
        missing_evidence_page_count=len(missing),
        cost=_cost_summary(costs, len(pages), time.monotonic() - started),
        cost_per_page=costs,
    )
    finish(kb, info, started, opts.ann_min_vectors)
    return kb


def _cost_summary(costs: list[dict], pages: int, seconds: float) -> dict:
    calls = sum(c["calls"] for c in costs)
    tokens = sum(c["tokens"] for c in costs)
    return {
        "seconds": round(seconds, 3),
        "seconds_per_page": round(seconds / pages, 5) if pages else None,
        "llm_calls": calls,
        "llm_tokens": tokens,
        "tokens_per_page": round(tokens / pages, 2) if pages else None,
        "failed_pages": sum(1 for c in costs if c["failed"]),
    }


def read_facts(kb_dir: str | Path) -> list[dict]:
    path = Path(kb_dir) / FACTS_FILE
    return [fact for _, fact in read_json_lines(path)] if path.is_file() else []


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: FeverWikiBuilder}
