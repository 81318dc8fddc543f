"""A GA-RAG fact is tied to the sentence that restates it, or to none: a triple is sourced only
when a sentence holds a content word of its relation or object beyond its subject (fever-mini's
"Dornu Zadorbra | Dornu Zadorbra | The Nubras" once earned graph completeness 1.0 from the gold
sentence "Dornu Zadorbra is a musician who plays the accordion"), and unsourced facts count for no
gold sentence or page in graph completeness, coverage, context precision and cited evidence."""

from __future__ import annotations

import json

import pytest

from p003_helpers import MINI, PaperBackend, run
from provbench.kb.types import Hit, TextUnit
from provbench.model import BASELINE, RunRecord, UnitKey
from provbench.plugin_api import MetricContext

PAGE = "Dornu_Zadorbra"
LINES = [
    "Dornu Zadorbra is a musician who plays the accordion .",
    "Dornu Zadorbra was born in Ostbra .",
    "Dornu founded The Nubras in 1987 .",
]
GOLD = f"s:{PAGE}:0"
NONSENSE = {"subject": "Dornu Zadorbra", "relation": "Dornu Zadorbra", "object": "The Nubras", "confidence": 0.0}


def dornu_page():
    from provbench_plugins.papers.p003_ga_rag.retrieval import Document

    units = [
        TextUnit(id=f"s:{PAGE}:{n}", text=f"Dornu Zadorbra: {line}", document_id=PAGE) for n, line in enumerate(LINES)
    ]
    return Document(
        id=PAGE,
        rank=1,
        similarity=0.9,
        title="Dornu Zadorbra",
        units=units,
        hits=[Hit(kind="text_unit", id=GOLD, name=PAGE, score=0.9)],
    )


@pytest.mark.parametrize(
    "subject, relation, obj, expected",
    [
        (
            "Dornu Zadorbra",
            "Dornu Zadorbra",
            "The Nubras",
            f"s:{PAGE}:2",
        ),  # the sentence naming The Nubras, not the gold
        ("Dornu Zadorbra", "plays", "the accordion", GOLD),
        ("He", "was born in", "Ostbra", f"s:{PAGE}:1"),  # no subject word: the object decides
        ("Ostbra", "is", "a town", None),  # no sentence says "town"
        ("Dornu Zadorbra", "is", "Dornu", None),  # nothing beyond the subject
        ("Anna Vell", "plays", "the accordion", None),  # a subject neither sentence nor title names
    ],
)
def test_a_triple_is_sourced_only_by_a_sentence_that_restates_it(subject, relation, obj, expected):
    from provbench_plugins.kb_builders.fever.triples import Triple
    from provbench_plugins.papers.p003_ga_rag.extraction import source_sentence

    triple = Triple(subject=subject, relation=relation, object=obj, confidence=0.9)
    assert source_sentence(triple, dornu_page()) == expected


def test_a_higher_minimum_overlap_asks_for_more_of_the_triple():
    from provbench_plugins.kb_builders.fever.triples import Triple
    from provbench_plugins.papers.p003_ga_rag.extraction import source_sentence

    plays = Triple(subject="Dornu Zadorbra", relation="plays", object="the accordion", confidence=0.9)
    assert source_sentence(plays, dornu_page(), min_overlap=2) == GOLD  # "plays", "accordion"
    assert source_sentence(plays, dornu_page(), min_overlap=3) is None


@pytest.fixture(scope="module")
def dornu_kb(tmp_path_factory):
    from provbench.testing import schema_following_llm
    from provbench_plugins.datasets.fever.loader import FeverLoader
    from provbench_plugins.kb_builders.fever.builder import FeverWikiBuilder

    questions = [q for q in FeverLoader().load(MINI) if q.id == "106"]
    kb = FeverWikiBuilder(link_hops=1).build(questions, tmp_path_factory.mktemp("dornu") / "kb", schema_following_llm())
    yield kb, questions[0]
    kb.close()


@pytest.mark.parametrize(
    "dornu_triple, source, coverage",
    [
        (NONSENSE, f"s:{PAGE}:2", 1.0),  # tied to the sentence naming The Nubras: the page only
        ({**NONSENSE, "relation": "is", "object": "a record"}, None, 0.0),  # restates no sentence: unsourced
    ],
)
def test_the_dornu_zadorbra_case_earns_no_completeness_and_unsourced_facts_no_page(
    dornu_kb, dornu_triple, source, coverage
):
    """Every page yields one triple; the gold page's is ``dornu_triple``, the others restate no
    sentence: no fact is tied to the gold sentence, and an unsourced fact credits no page."""
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne
    from provbench_plugins.papers.p003_ga_rag.systems import GARAG

    kb, question = dornu_kb
    other = {**NONSENSE, "relation": "is", "object": "a painter"}
    extraction = {
        "Dornu Zadorbra": json.dumps({"triplets": [dornu_triple]}),
        "The Nubras": json.dumps({"triplets": [other]}),
        "Ostbra": json.dumps({"triplets": [{**other, "subject": "Ostbra", "object": "a planet"}]}),
    }
    backend = PaperBackend(
        extraction_text=extraction,
        truncated=False,
        graph_reply={"label": "SUPPORTS", "explanation": "It says so.", "cited": [1, 2, 3]},
    )
    trace, _ = run(GARAG, kb, question, backend=backend, triple_confidence_threshold=None)
    dornu = [f for f in trace.facts if f.object == dornu_triple["object"] and f.subject == "Dornu Zadorbra"]
    assert dornu and all(f.source_ids == ([source] if source else []) for f in dornu)
    assert all(not f.source_ids for f in trace.facts if f not in dornu)
    assert GOLD not in trace.citations.text_units
    record = RunRecord(key=UnitKey(question_id=question.id, system="ga-rag", condition=BASELINE), trace=trace)
    scores = TableOne(judge=False, ragas=False).score(record, question, MetricContext(view=kb.view()))
    assert scores["graph_completeness"] == 0.0 and scores["graph_coverage"] == coverage
    assert scores["context_precision"] == (1 / len(trace.artifacts["shown"]) if source else 0.0)
