"""2Wiki scoring against hand-computed cases, normalisation edge cases included."""

import pytest

from provbench.model import Question

from provbench_plugins.datasets.twowiki import scoring as S


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("The Lord of the Rings", "lord of rings"),
        ("  Mira   Vale. ", "mira vale"),
        ("O'Neill, Jr.", "oneill jr"),
        ("An Apple a day", "apple day"),
        ("Theatre", "theatre"),  # "the" inside a word stays
        ("20 March 851", "20 march 851"),
        ("", ""),
    ],
)
def test_official_normalisation(raw, normal):
    assert S.normalize_answer(raw) == normal


def test_exact_match_ignores_case_articles_and_punctuation():
    assert S.exact_match("the Glass Harbor!", "Glass Harbor") == 1.0
    assert S.exact_match("Glass Harbour", "Glass Harbor") == 0.0


def test_f1_by_hand():
    # pred tokens: mira vale painter (3); gold: mira vale (2); overlap 2
    # precision 2/3, recall 1 -> F1 = 2 * (2/3) / (5/3) = 0.8
    assert S.f1_score("Mira Vale, painter", "Mira Vale") == pytest.approx(0.8)
    assert S.f1_score("Orin", "Mira Vale") == 0.0
    # repeated tokens count once per occurrence in both
    assert S.f1_score("vale vale", "vale") == pytest.approx(2 * 0.5 * 1 / 1.5)


@pytest.mark.parametrize(
    "pred, gold, f1",
    [
        ("yes", "yes", 1.0),
        ("yes", "no", 0.0),
        ("yes it is", "yes", 0.0),
        ("noanswer", "Mira Vale", 0.0),
        ("no", "no", 1.0),
    ],
)
def test_f1_closed_answers_must_match_exactly(pred, gold, f1):
    assert S.f1_score(pred, gold) == f1


def test_accuracy_is_containment_in_a_short_prediction():
    assert S.contains_answer("It was Mira Vale.", "Mira Vale") == 1.0
    assert S.contains_answer("Miravale", "Mira Vale") == 0.0  # whole tokens only
    assert S.contains_answer("Vale", "Mira Vale") == 0.0
    long = "one two three four five six seven eight nine Mira Vale"  # 11 tokens
    assert S.contains_answer(long, "Mira Vale") == 0.0
    assert S.contains_answer(" ".join(long.split()[2:]), "Mira Vale") == 1.0  # 9 tokens
    assert S.contains_answer("anything", "") == 0.0


def test_score_takes_best_over_aliases_and_handles_no_answer():
    assert S.score(None, ["Mira Vale"]) == {"accuracy": 0.0, "em": 0.0, "f1": 0.0}
    scores = S.score("M. Vale", ["Mira Vale", "M Vale"])
    assert scores == {"accuracy": 1.0, "em": 1.0, "f1": 1.0}


# -- accuracy: hedges, negations and the other candidate (issue 22, item 8) ----------------------

COMPARISON = Question(
    id="c1",
    question="Which film came out first, Cold Pilgrim or Salt Vigil?",
    answer="Cold Pilgrim",
    type="comparison",
    metadata={"evidences": [["Salt Vigil", "publication date", "1990"], ["Cold Pilgrim", "publication date", "1985"]]},
)


def test_the_other_candidate_comes_from_the_evidence_not_the_question_text():
    assert S.other_candidates(COMPARISON) == ["Salt Vigil"]
    # the question text is not read: a rewording that names no film changes nothing
    assert S.other_candidates(COMPARISON.model_copy(update={"question": "Which came first?"})) == ["Salt Vigil"]
    bridge = Question(
        id="b1",
        question="?",
        answer="Cold Pilgrim",
        type="bridge_comparison",
        metadata={
            "evidences": [
                ["Cold Pilgrim", "director", "Ann Roe"],
                ["Salt Vigil", "director", "Bo Pym"],
                ["Ann Roe", "date of birth", "1950"],
                ["Bo Pym", "date of birth", "1940"],
            ]
        },
    )
    assert S.other_candidates(bridge) == ["Salt Vigil"]  # the roots, not the directors
    assert S.other_candidates(COMPARISON.model_copy(update={"type": "compositional"})) == []
    assert S.other_candidates(COMPARISON.model_copy(update={"answer": "no"})) == []  # yes/no: both named
    assert S.other_candidates(COMPARISON.model_copy(update={"answer": "1985"})) == []  # no root is the answer


@pytest.mark.parametrize(
    "prediction",
    [
        "Salt Vigil, not Cold Pilgrim",
        "Cold Pilgrim or Salt Vigil",
        "Cold Pilgrim and Salt Vigil",
        "Not Cold Pilgrim",
        "probably Cold Pilgrim",
        "Cold Pilgrim, maybe",
        "not sure, Cold Pilgrim",
    ],
)
def test_hedges_negations_and_both_candidates_are_wrong(prediction):
    others = S.other_candidates(COMPARISON)
    assert S.contains_answer(prediction, "Cold Pilgrim") == 1.0  # the old rule credited every one
    assert S.score(prediction, ["Cold Pilgrim"], others)["accuracy"] == 0.0


@pytest.mark.parametrize("prediction", ["Cold Pilgrim", "It was Cold Pilgrim.", "Cold Pilgrim (1985)"])
def test_a_plain_answer_naming_one_candidate_stays_right(prediction):
    assert S.score(prediction, ["Cold Pilgrim"], S.other_candidates(COMPARISON))["accuracy"] == 1.0


def test_negation_and_hedges_without_candidates():
    assert S.accurate("Not Kedem Tramore", "Kedem Tramore") == 0.0
    assert S.accurate("Kedem Tramore or Lusk", "Kedem Tramore") == 0.0
    assert S.accurate("I don't know; Kedem Tramore?", "Kedem Tramore") == 0.0
    # words inside the gold are not hedges or negations
    assert S.accurate("War or Peace", "War or Peace") == 1.0
    assert S.accurate("No Country for Old Men", "No Country for Old Men") == 1.0


@pytest.mark.parametrize(
    "prediction, gold, right",
    [
        ("no", "no", 1.0),
        ("No, they are not.", "no", 1.0),
        ("No, neither was.", "no", 1.0),
        ("yes", "no", 0.0),
        ("No idea", "no", 0.0),
        ("no, yes", "no", 0.0),
        ("not sure", "no", 0.0),
        ("Yes", "yes", 1.0),
        ("Yes, both are.", "yes", 1.0),
        ("yes and no", "yes", 0.0),
        ("Yes, not really", "yes", 0.0),
    ],
)
def test_yes_no_answers(prediction, gold, right):
    assert S.accurate(prediction, gold) == right


def test_another_candidate_containing_the_gold_name_is_still_another():
    assert S.accurate("Cold Pilgrim II", "Cold Pilgrim", ["Cold Pilgrim II"]) == 0.0
    # a candidate that is part of the gold name is not "another" one
    assert S.accurate("Cold Pilgrim II", "Cold Pilgrim II", ["Cold Pilgrim"]) == 1.0


def test_the_loader_scores_comparisons_with_their_other_candidate():
    from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader

    loader = TwoWikiLoader()
    assert loader.score_answer(COMPARISON, "Cold Pilgrim")["accuracy"] == 1.0
    assert loader.score_answer(COMPARISON, "Salt Vigil, not Cold Pilgrim")["accuracy"] == 0.0
    assert loader.score_answer(COMPARISON, "Cold Pilgrim or Salt Vigil")["accuracy"] == 0.0


# -- issue 34 item 6: false credits and rejections of the accuracy rule -----------------------------

BRIDGE = Question(
    id="b2",
    question="Who is the mother of the director of film Glass Harbor?",
    answer="Mira Vale",
    type="compositional",
    metadata={"evidences": [["Glass Harbor", "director", "Orin Vale"], ["Orin Vale", "mother", "Mira Vale"]]},
)


@pytest.mark.parametrize("prediction", ["Orin Vale; Mira Vale", "Mira Vale and Orin Vale"])
def test_a_bridge_answer_naming_the_bridge_entity_too_is_wrong(prediction):
    assert S.other_candidates(BRIDGE) == ["Orin Vale"]
    assert S.score(prediction, ["Mira Vale"], S.other_candidates(BRIDGE))["accuracy"] == 0.0
    assert S.score("It was Mira Vale.", ["Mira Vale"], S.other_candidates(BRIDGE))["accuracy"] == 1.0


@pytest.mark.parametrize("prediction, gold", [("Paris, Texas", "Paris"), ("Kedem Tramore Jr.", "Kedem Tramore")])
def test_an_answer_extending_the_gold_into_a_longer_name_is_wrong(prediction, gold):
    assert S.accurate(prediction, gold) == 0.0
    assert S.accurate(f"It was {gold}.", gold) == 1.0 and S.accurate(f"{gold} (born 1950)", gold) == 1.0


def test_a_comparison_stated_with_the_gold_first_is_right():
    others = S.other_candidates(COMPARISON)
    assert S.score("Cold Pilgrim came out before Salt Vigil", ["Cold Pilgrim"], others)["accuracy"] == 1.0
    assert S.score("Salt Vigil came out after Cold Pilgrim", ["Cold Pilgrim"], others)["accuracy"] == 0.0
    assert S.score("Cold Pilgrim, not before Salt Vigil", ["Cold Pilgrim"], others)["accuracy"] == 0.0
