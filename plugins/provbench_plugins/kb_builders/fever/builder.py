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
  first sentence, linked to its own sentences only. **Relations**: one per linked page pair
  (id ``l:<page>-><target>``, label "links to") when a sentence's hyperlink targets another
  indexed page; ``links`` in build_info counts them.
- **Triples** (``triples: true`` with an LLM): paper 003's per-document extraction, one call
  per page (subject, relation, object, confidence, source = the page's sentences), written to
  ``facts.jsonl`` next to the database with the build cost per page in build_info: a measure of
  extraction cost, for inspection. No system reads it (a file beside the database is not
  filtered by the graph view; GA-RAG extracts at question time, as the paper times it).
- **Reuse.** A complete KB built from the same inputs (fingerprint of claims, pages file,
  options, model) is reopened with no work; an interrupted one is removed and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder, parse_options

from provbench_plugins.datasets.fever.pages import Page, page_id_of, read_pages, sentence_id, title_matcher

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "fever-wiki"
BUILDER_VERSION = 1
FACTS_FILE = "facts.jsonl"


class FeverWikiOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pages: str | None = Field(None, description="pages dump (default: the loader's metadata['pages'])")
    scope: Literal["suite", "all"] = "suite"
    candidates: bool = Field(True, description="add pages whose title occurs in a claim")
    include_gold_pages: bool = Field(False, description="also add every gold evidence page (not FEVER's setting)")
    link_hops: int = Field(0, ge=0, le=1, description="also add pages the chosen pages link to")
    triples: bool = Field(False, description="LLM triples per page, kept as facts with confidence")
    max_triples: int = Field(8, ge=1, le=50)
    overwrite: bool = False


def entity_id(page_id: str) -> str:
    return f"p:{page_id}"


def page_of_entity(entity: str) -> str | None:
    return entity[2:] if entity.startswith("p:") else None


def choose_pages(questions: list[Question], source: str, opts: FeverWikiOptions) -> dict[str, Page]:
    if opts.scope == "all":
        return read_pages(source)
    if not (opts.candidates or opts.include_gold_pages):
        raise UserError(f"kb_builder {BUILDER_NAME!r}: scope 'suite' with candidates and include_gold_pages "
                        "both off selects no page")
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
        units += [TextUnit(id=i, text=f"{page.title}: {s.text}", document_id=page.id, entity_ids=(entity_id(page.id),))
                  for i, s in zip(ids, page.sentences)]
        first = page.sentences[0].text if page.sentences else ""
        entities.append(Entity(id=entity_id(page.id), name=page.title, label="page", description=first,
                               text_unit_ids=tuple(ids)))
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
                    relations.append(Relation(id=rid, source=entity_id(page.id), target=entity_id(target_id),
                                              label="links to"))
    return units, entities, relations


def extract_page_facts(llm: "LLMClient", pages: dict[str, Page], limit: int) -> tuple[list[dict], list[dict]]:
    """Triples per page as fact records, and the cost of each page (calls, tokens, seconds)."""
    from provbench.llm import LLMError
    from provbench.model import Trace

    from .triples import extract_triples

    facts, costs = [], []
    for page in pages.values():
        if not page.sentences:
            continue
        trace, started = Trace(question_id=page.id, system=BUILDER_NAME), time.perf_counter()
        try:
            triples, dropped = extract_triples(llm, f"{page.title}. {page.text}", limit=limit,
                                               purpose="kb-triples", trace=trace)
            error = None
        except LLMError as err:
            triples, dropped, error = [], 0, str(err)
        sources = [sentence_id(page.id, s.line) for s in page.sentences]
        facts += [{"id": f"kf:{page.id}:{n}", **t.model_dump(), "source_ids": sources} for n, t in enumerate(triples)]
        costs.append({"page": page.id, "calls": len(trace.llm_calls), "tokens": trace.tokens, "dropped": dropped,
                      "seconds": round(time.perf_counter() - started, 4), "error": error})
    return facts, costs


def fingerprint(questions: list[Question], source: str, opts: FeverWikiOptions, model: str) -> str:
    path = Path(source)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    stamp = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    payload = json.dumps({"claims": sorted((q.id, q.question, q.metadata.get("evidence_pages", [])) for q in questions),
                          "pages": stamp, "options": opts.model_dump(exclude={"overwrite"}), "model": model,
                          "version": BUILDER_VERSION}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


class FeverWikiBuilder(KBBuilder):
    """FEVER Wikipedia pages: sentences as text units, a page entity each, hyperlinks, optional LLM triples."""

    name = BUILDER_NAME

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(FeverWikiOptions, options, f"kb_builder {BUILDER_NAME!r}")

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        from provbench.kb import KnowledgeBase

        opts = parse_options(FeverWikiOptions, {**self.options.model_dump(exclude_unset=True), **options},
                             f"kb_builder {BUILDER_NAME!r}")
        source = opts.pages or next((q.metadata["pages"] for q in questions if q.metadata.get("pages")), None)
        if not source:
            raise UserError(f"kb_builder {BUILDER_NAME!r}: no pages: give option 'pages' or the loader's 'pages'")
        kb_dir, digest = Path(kb_dir), fingerprint(questions, source, opts, llm.model_id if opts.triples else "")
        if KnowledgeBase.is_complete(kb_dir):
            kb = KnowledgeBase.open(kb_dir)
            if kb.build_info.get("inputs", {}).get("fingerprint") == digest:
                return kb
            kb.close()
            if not opts.overwrite:
                raise UserError(f"{kb_dir}: a knowledge base built from other inputs is there (option overwrite: true replaces it)")
        if kb_dir.exists():
            shutil.rmtree(kb_dir)
        return self._build(questions, kb_dir, llm, source, opts, digest)

    def _build(self, questions, kb_dir, llm, source, opts, digest) -> "KnowledgeBase":
        from provbench.kb import KnowledgeBase

        started = time.perf_counter()
        pages = choose_pages(questions, source, opts)
        missing = sorted({p for q in questions for p in q.metadata.get("evidence_pages", [])} - set(pages))
        units, entities, relations = graph_records(pages)
        kb = KnowledgeBase.create(kb_dir)
        kb.add_text_units(units)
        kb.add_entities(entities)
        kb.add_relations(relations)
        facts, costs = extract_page_facts(llm, pages, opts.max_triples) if opts.triples else ([], [])
        with (kb_dir / FACTS_FILE).open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(f, ensure_ascii=False) + "\n" for f in facts)
        kb.finalize({"builder": BUILDER_NAME, "version": BUILDER_VERSION,
                     "inputs": {"fingerprint": digest, "pages": str(source), "claims": len(questions),
                                "options": opts.model_dump()},
                     "pages": len(pages), "sentences": len(units), "links": len(relations), "facts": len(facts),
                     "missing_evidence_pages": missing[:50], "missing_evidence_page_count": len(missing),
                     "cost": _cost_summary(costs, len(pages), time.perf_counter() - started), "cost_per_page": costs})
        return kb


def _cost_summary(costs: list[dict], pages: int, seconds: float) -> dict:
    calls = sum(c["calls"] for c in costs)
    tokens = sum(c["tokens"] for c in costs)
    return {"seconds": round(seconds, 3), "seconds_per_page": round(seconds / pages, 5) if pages else None,
            "llm_calls": calls, "llm_tokens": tokens, "tokens_per_page": round(tokens / pages, 2) if pages else None,
            "failed_pages": sum(1 for c in costs if c["error"])}


def read_facts(kb_dir: str | Path) -> list[dict]:
    path = Path(kb_dir) / FACTS_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: FeverWikiBuilder}
