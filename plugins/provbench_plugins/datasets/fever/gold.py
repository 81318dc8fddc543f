"""FEVER claims' gold evidence (:mod:`provbench.gold`).

Each complete evidence set of a claim is one alternative (``sentence_groups``): any one set
verifies or refutes it. A sentence is its page (the document) and line (the index); its text is
read from the Wikipedia pages when the loader has them (the text a ``fever-wiki`` KB shows, PTB
escapes undone), else left empty (position only, never held in a prompt). The entities are the
evidence pages' readable titles. NOT ENOUGH INFO claims, and claims without labels, have no gold.

The pages a load needs are read in one streaming pass over the dump, keeping only the evidence
pages (:func:`~.pages.read_pages`).
"""

from __future__ import annotations

from typing import Iterable

from provbench.gold import GoldEvidence, GoldSentence

from .pages import Page, read_pages, title_of


def evidence_texts(pages_source: str | None, evidence: Iterable[list[list]]) -> dict[tuple[str, int], str]:
    """(page, line) -> sentence text for every evidence sentence found in ``pages_source``."""
    wanted = {page for group in evidence for page, _ in group}
    if not pages_source or not wanted:
        return {}
    pages: dict[str, Page] = read_pages(pages_source, wanted)
    return {(page.id, s.line): s.text for page in pages.values() for s in page.sentences}


def gold_evidence(evidence_sets: list[list[list]], texts: dict[tuple[str, int], str]) -> GoldEvidence | None:
    """The gold of one claim from its evidence sets (``[[page, line], ...]`` each); None without any."""
    if not evidence_sets:
        return None
    index: dict[tuple[str, int], int] = {}
    sentences: list[GoldSentence] = []
    groups: list[list[int]] = []
    for group in evidence_sets:
        members = []
        for page, line in group:
            key = (page, int(line))
            if key not in index:
                index[key] = len(sentences)
                sentences.append(GoldSentence(document=page, index=key[1], text=texts.get(key, "")))
            members.append(index[key])
        groups.append(list(dict.fromkeys(members)))
    entities = list(dict.fromkeys(title_of(s.document) for s in sentences))
    return GoldEvidence(sentences=sentences, sentence_groups=groups, entities=entities)
