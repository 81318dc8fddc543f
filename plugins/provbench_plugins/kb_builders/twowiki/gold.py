"""2Wiki's gold graph: entities and relations from the evidence triples, typed by relation."""

from __future__ import annotations

from ..common.graph import Graph, RelationDraft
from ..common.matcher import MentionMatcher, mention_pattern
from ..common.names import UNKNOWN_TYPE, normalize_name, pick_type, strip_qualifier
from .questions import QuestionData, TwoWikiCorpus

_PERSON_SUBJECT = (
    "date of birth",
    "date of death",
    "place of birth",
    "place of death",
    "place of burial",
    "father",
    "mother",
    "spouse",
    "child",
    "sibling",
    "country of citizenship",
    "educated at",
    "occupation",
    "award received",
    "cause of death",
    "employer",
    "doctoral advisor",
    "student of",
)
_PERSON_OBJECT = (
    "director",
    "screenwriter",
    "cast member",
    "producer",
    "performer",
    "composer",
    "lyrics by",
    "editor",
    "creator",
    "presenter",
    "father",
    "mother",
    "spouse",
    "child",
    "sibling",
    "founded by",
    "doctoral advisor",
    "student of",
)
_PLACE_OBJECT = (
    "place of birth",
    "place of death",
    "place of burial",
    "country",
    "country of citizenship",
    "country of origin",
    "located in the administrative territorial entity",
    "headquarters location",
)

#: type of a relation's subject. Films: subjects of film-crew relations; other works: subjects
#: of publication date and music/publishing relations.
SUBJECT_TYPES: dict[str, str] = {
    **{r: "PERSON" for r in _PERSON_SUBJECT},
    **{r: "FILM" for r in ("director", "screenwriter", "cast member", "producer")},
    **{r: "WORK" for r in ("publication date", "performer", "composer", "lyrics by", "record label", "publisher")},
    **{r: "ORGANIZATION" for r in ("founded by", "inception", "headquarters location")},
}
#: type of a relation's object.
OBJECT_TYPES: dict[str, str] = {
    **{r: "PERSON" for r in _PERSON_OBJECT},
    **{r: "DATE" for r in ("date of birth", "date of death", "publication date", "inception")},
    **{r: "PLACE" for r in _PLACE_OBJECT},
    **{r: "ORGANIZATION" for r in ("educated at", "employer", "record label", "publisher", "manufacturer")},
    "occupation": "OCCUPATION",
    "award received": "AWARD",
    "cause of death": "CAUSE",
}
#: when an entity collects several types, the first in this order wins.
TYPE_PRIORITY = ("PERSON", "FILM", "WORK", "ORGANIZATION", "PLACE", "DATE", "OCCUPATION", "AWARD", "CAUSE")


def supporting_text_unit(corpus: TwoWikiCorpus, q: QuestionData, subject: str, obj: str) -> str | None:
    """The text unit that supports ``subject -relation-> obj`` in question ``q``.

    1. the supporting-fact sentence of the subject's paragraph (the one mentioning the object
       when the paragraph has several);
    2. else a text unit of that question mentioning both names;
    3. else the subject paragraph's text unit mentioning the object, or its first text unit.
    """
    doc = corpus.doc_of(q.id, subject)
    object_pattern = mention_pattern(obj)
    if doc is not None:
        facts = [
            corpus.sentence_unit.get((doc.id, sid))
            for title, sid in q.supporting_facts
            if corpus.doc_of(q.id, title) is doc
        ]
        facts = [tu for tu in facts if tu]
        mentioning = [tu for tu in facts if object_pattern.search(corpus.text_units[tu].text)]
        if mentioning or facts:
            return (mentioning or facts)[0]
    subject_pattern = mention_pattern(subject)
    for doc_id in dict.fromkeys(corpus.question_docs.get(q.id, {}).values()):
        for tu_id in corpus.documents[doc_id].text_unit_ids:
            text = corpus.text_units[tu_id].text
            if subject_pattern.search(text) and object_pattern.search(text):
                return tu_id
    if doc is not None and doc.text_unit_ids:
        return next(
            (tu for tu in doc.text_unit_ids if object_pattern.search(corpus.text_units[tu].text)), doc.text_unit_ids[0]
        )
    return None


def add_gold_graph(graph: Graph, corpus: TwoWikiCorpus, questions: list[QuestionData]) -> None:
    for q in questions:
        for subject, relation, obj in q.evidences:
            label = relation.strip()
            source = graph.entity(subject, "gold", SUBJECT_TYPES.get(label.lower()))
            target = graph.entity(obj, "gold", OBJECT_TYPES.get(label.lower()))
            tu_id = supporting_text_unit(corpus, q, subject, obj)
            if tu_id:  # the supporting text unit mentions both ends (the KB links it to both too)
                source.text_unit_ids.add(tu_id)
                target.text_unit_ids.add(tu_id)
            graph.relate(source, label, target, "gold", tu_id)


def own_documents(graph: Graph, corpus: TwoWikiCorpus) -> dict[str, list[str]]:
    """Each entity's own paragraphs (2Wiki's paragraphs are Wikipedia articles, titled by their
    subject): the documents titled exactly by its name, else those whose title without its
    "(...)" qualifier is its name (all of them: namesakes are one entity, as names merge)."""
    exact: dict[str, list[str]] = {}
    stripped: dict[str, list[str]] = {}
    for doc in corpus.documents.values():
        exact.setdefault(normalize_name(doc.title), []).append(doc.id)
        stripped.setdefault(normalize_name(strip_qualifier(doc.title)), []).append(doc.id)
    return {draft.id: exact.get(key) or stripped.get(key, []) for key, draft in graph.entities.items()}


def link_own_paragraphs(graph: Graph, corpus: TwoWikiCorpus) -> int:
    """Link every text unit of an entity's own paragraphs to it as its own text
    (``own_text_unit_ids``), also the chunks that do not repeat its name (a split paragraph goes
    on with "He ..." or "The film ..."), so removing or isolating the entity takes or keeps its
    whole paragraph, and only its own. Returns how many links this added."""
    added = 0
    documents = own_documents(graph, corpus)
    for draft in graph.entities.values():
        for doc_id in documents[draft.id]:
            units = set(corpus.documents[doc_id].text_unit_ids)
            added += len(units - draft.text_unit_ids)
            draft.text_unit_ids |= units
            draft.own_text_unit_ids |= units
    return added


MAX_DESCRIBED_RELATIONS = 8


NAMING_LABEL = "extracted relation"  # what a description shows for an extracted label that names an entity


def describe_entities(graph: Graph) -> None:
    """Descriptions from the entity's type and the labels of its relations, e.g. "A person; relations:
    mother (outgoing), director (incoming)." They quote no text unit and name no other entity, so an
    ablation that hides text or removes entities has nothing to hide in the descriptions it keeps
    (text-only isolation keeps every entity's metadata readable). 2Wiki's relation labels are
    property names; an extracted label is free text (up to 60 characters) and can name an entity
    ("daughter of Ada Quill"): it is shown as "extracted relation" when it names any entity but
    the one described."""
    names = MentionMatcher(draft.name for draft in graph.entities.values())
    own = {draft.id: draft.name for draft in graph.entities.values()}

    def shown(relation: RelationDraft, entity_id: str) -> str:
        if relation.origin == "gold" or not names.names_in(relation.label) - {own[entity_id]}:
            return relation.label
        return NAMING_LABEL

    labels: dict[str, list[str]] = {draft.id: [] for draft in graph.entities.values()}
    for relation in graph.relations.values():
        labels[relation.source].append(f"{shown(relation, relation.source)} (outgoing)")
        labels[relation.target].append(f"{shown(relation, relation.target)} (incoming)")
    for draft in graph.entities.values():
        kind = pick_type(draft.types, TYPE_PRIORITY)
        subject = "An entity" if kind == UNKNOWN_TYPE else f"A {kind.lower()}"
        parts = list(dict.fromkeys(labels[draft.id]))
        more = len(parts) - MAX_DESCRIBED_RELATIONS
        listed = ", ".join(parts[:MAX_DESCRIBED_RELATIONS]) + (f" and {more} more" if more > 0 else "")
        draft.description = f"{subject}; relations: {listed}." if parts else f"{subject} with no relations."
