"""Gold evidence: when a text holds a question's gold evidence (provbench.gold)."""

import pytest
from pydantic import ValidationError

from provbench.gold import GoldEvidence, GoldSentence, GoldTriple
from provbench.model import Question

TWO_WIKI = GoldEvidence(
    sentences=[
        GoldSentence(document="Cold Pilgrim", index=0, text="Cold Pilgrim is a 1931 film directed by Orin Vale."),
        GoldSentence(document="Orin Vale", index=1, text="Orin Vale was born in Kedem."),
    ],
    triples=[
        GoldTriple(subject="Cold Pilgrim", relation="director", object="Orin Vale"),
        GoldTriple(subject="Orin Vale", relation="place_of_birth", object="Kedem"),
    ],
    entities=["Cold Pilgrim", "Orin Vale", "Kedem"],
)


def test_every_sentence_of_a_group_is_needed_whitespace_and_case_ignored():
    both = "[tu:1] Cold  Pilgrim is a 1931 film\n directed by Orin Vale.\n[tu:2] ORIN VALE was born in Kedem."
    assert TWO_WIKI.held_in(both)
    assert not TWO_WIKI.held_in("[tu:1] Cold Pilgrim is a 1931 film directed by Orin Vale.")
    assert TWO_WIKI.missing_from("Cold Pilgrim is a 1931 film directed by Orin Vale.") == [TWO_WIKI.sentences[1]]


def test_triples_must_each_sit_on_one_relation_line():
    lines = "- rel:1: Cold Pilgrim -[director]-> Orin Vale [ent:orin]\n- rel:2: Orin Vale -[place of birth]-> Kedem"
    assert TWO_WIKI.held_in(lines)
    split = "- rel:1: Cold Pilgrim -[director]->\nOrin Vale\n- rel:2: Orin Vale -[place of birth]-> Kedem"
    assert not TWO_WIKI.held_in(split)
    blanked = "- Cold Pilgrim -[director]-> __\n- Orin Vale -[place_of_birth]-> Kedem"
    assert not TWO_WIKI.held_in(blanked)


def test_fever_groups_are_alternatives():
    gold = GoldEvidence(
        sentences=[
            GoldSentence(document="A", index=0, text="A is a city."),
            GoldSentence(document="B", index=2, text="B lies in A."),
            GoldSentence(document="C", index=1, text="C is a river."),
        ],
        sentence_groups=[[0, 1], [2]],
    )
    assert gold.held_in("C is a river.")
    assert gold.held_in("B lies in A. A is a city.")
    assert not gold.held_in("A is a city.")


def test_a_sentence_known_only_by_position_is_never_held():
    gold = GoldEvidence(sentences=[GoldSentence(document="A", index=3)])
    assert not gold.held_in("anything at all")


def test_bad_groups_are_refused_and_questions_carry_gold():
    with pytest.raises(ValidationError, match=r"sentence_groups\[0\]"):
        GoldEvidence(sentences=[GoldSentence(document="A", text="x")], sentence_groups=[[1]])
    q = Question(id="q", question="Who directed Cold Pilgrim?", answer="Orin Vale", gold=TWO_WIKI)
    assert Question.model_validate_json(q.model_dump_json()).gold == TWO_WIKI
    assert Question(id="q", question="?", answer="x").gold is None
