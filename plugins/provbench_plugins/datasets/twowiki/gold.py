"""A 2WikiMultiHopQA record's gold evidence (:mod:`provbench.gold`).

* the supporting facts ``[title, sentence index]`` become :class:`~provbench.gold.GoldSentence`\\ s
  whose text is read from the record's own context (the paragraph with that title, the sentence at
  that index); one group: every supporting fact is needed;
* the evidence triples ``[subject, relation, object]`` become :class:`~provbench.gold.GoldTriple`\\ s
  (the other alternative: every triple as a relation line);
* the evidence entities are the triples' subjects and objects, in order, once each.

A supporting fact whose index lies past its paragraph's last sentence (the release's sentence
splitting is imperfect) keeps its position with an empty text: it can never be held in a prompt,
so such a question's sentence alternative is never complete (its triples still can be).
"""

from __future__ import annotations

from typing import Iterable

from provbench.gold import GoldEvidence, GoldSentence, GoldTriple


def gold_evidence(
    context: Iterable[tuple[str, list[str]]],
    supporting_facts: Iterable[tuple[str, int]],
    evidences: Iterable[tuple[str, str, str]],
) -> GoldEvidence | None:
    """The gold evidence of one record, or None when it names neither facts nor triples."""
    paragraphs = {}
    for title, sentences in context:
        paragraphs.setdefault(title, list(sentences))  # a repeated title: the first paragraph, as the builder
    sentences = [
        GoldSentence(document=title, index=index, text=_sentence(paragraphs.get(title, []), index))
        for title, index in supporting_facts
    ]
    triples = [GoldTriple(subject=s, relation=r, object=o) for s, r, o in evidences]
    entities = list(dict.fromkeys(name for t in triples for name in (t.subject, t.object) if name.strip()))
    if not sentences and not triples:
        return None
    return GoldEvidence(sentences=sentences, triples=triples, entities=entities)


def _sentence(sentences: list[str], index: int) -> str:
    return sentences[index].strip() if 0 <= index < len(sentences) else ""
