"""Gold mapped onto the tiny KB and hand-built trajectories scored against it: every score pinned,
partial mapping included (unmapped gold is neither found nor missed)."""

from __future__ import annotations

import pytest
from systems_helpers import systems_kb, view  # noqa: F401

from provbench.gold import GoldEvidence, GoldSentence, GoldTriple
from provbench.kb.goldmap import map_gold
from provbench.model import Citations, Question, RetrievedItem, RunRecord, Trace, UnitKey, VariantInfo
from provbench.plugin_api import MetricContext, Results
from provbench.trajectory import score_trajectory
from provbench_plugins.trajectory.metric import GoldTrajectory

E = "ent:"


def chain_question(qid: str = "q-chain") -> Question:
    """In which country was the director of Glass Harbor born? One sentence, one triple and one
    entity of its gold are not in the tiny KB; one triple's relation is labelled otherwise there."""
    sentences = [
        GoldSentence(document="Glass Harbor", index=0, text="Glass Harbor is a 1987 drama film directed by Orin Vale."),
        GoldSentence(document="Glass Harbor", index=1, text="Orin  Vale was born in DUNMERE."),
        GoldSentence(document="Dunmere", index=0, text="Dunmere is a coastal town in Norland."),
        GoldSentence(document="Nowhere", index=0, text="This sentence is in no text unit at all."),
    ]
    triples = [
        GoldTriple(subject="Orin Vale", relation="directed", object="Glass Harbor"),
        GoldTriple(subject="Orin Vale", relation="born in", object="Dunmere"),
        GoldTriple(subject="Dunmere", relation="country", object="Norland"),
        GoldTriple(subject="Norland", relation="capital", object="Vosk City"),
    ]
    gold = GoldEvidence(
        sentences=sentences,
        triples=triples,
        ordered=True,
        entities=["Orin Vale", "Glass Harbor", "Dunmere", "Norland", "Vosk City"],
    )
    return Question(
        id=qid, question="In which country was the director of Glass Harbor born?", answer="Norland", gold=gold
    )


def step(trace: Trace, tool: str, shown: dict | None, **arguments) -> None:
    trace.add_step("tool_call", tool=tool, arguments=arguments, shown=shown)


def chain_trace() -> Trace:
    """Eight steps: a gold search, a dead end (wasted), the director's neighbours (two hops), a search
    that leads to a gold step, that step, the gold text unit, Dunmere's neighbours (the third hop:
    evidence complete), the answer."""
    t = Trace(question_id="q-chain", system="hand")
    step(t, "search_entities", {"entity": [E + "orin-vale", E + "tessa-quill", E + "glass-harbor"]}, query="Orin Vale")
    step(t, "search_entities", {"entity": [E + "aster-river", E + "kestrel-bridge"]}, query="Aster River")
    step(
        t,
        "get_neighbors",
        {"relationship": ["rel:0", "rel:6", "rel:4"], "entity": [E + "glass-harbor", E + "dunmere", E + "tessa-quill"]},
        entity_id=E + "orin-vale",
    )
    step(t, "search_entities", {"entity": [E + "mara-holt"]}, query="Mara")
    step(t, "get_neighbors", {"relationship": ["rel:9"], "entity": [E + "dunmere"]}, entity_id=E + "mara-holt")
    step(t, "read_textunit", {"text_unit": ["tu:0"]}, textunit_id="tu:0")
    step(
        t,
        "get_neighbors",
        {
            "relationship": ["rel:7", "rel:6", "rel:8", "rel:9", "rel:11"],
            "entity": [E + "norland", E + "orin-vale", E + "aster-river", E + "mara-holt", E + "kestrel-bridge"],
        },
        entity_id=E + "dunmere",
    )
    step(t, "submit_answer", None, answer="Norland")
    t.retrieved.append(RetrievedItem(kind="text_unit", id="tu:5"))  # a hit no step recorded as shown
    t.visited_entities = [E + "orin-vale", E + "glass-harbor", E + "tessa-quill", E + "dunmere", E + "mara-holt"]
    t.read_text_units = ["tu:0"]
    t.citations = Citations(
        entities=[E + "orin-vale", E + "norland", E + "lumen-studios"],
        relationships=["rel:6", "rel:7"],
        text_units=["tu:0"],
    )
    t.answer = "Norland"
    return t


def test_gold_maps_onto_the_kb_partly_and_says_how_much(view):
    gold = map_gold(view, chain_question())
    assert [s.text_units for s in gold.sentences] == [("tu:0",), ("tu:0",), ("tu:3",), ()]  # case, spacing ignored
    hops = {h.triple.relation: h for h in gold.hops}
    assert hops["directed"].relations == ("rel:0",) and hops["directed"].by_label
    assert hops["born in"].relations == ("rel:6",) and hops["born in"].by_label  # born_in reads as "born in"
    assert hops["country"].relations == ("rel:7",) and not hops["country"].by_label  # the KB says located_in
    assert hops["capital"].relations == () and not hops["capital"].mapped  # Vosk City is not in the KB
    assert gold.coverage() == {"sentences": (3, 4), "triples": (3, 4), "entities": (4, 5)}
    assert gold.ids("entity") == {E + "orin-vale", E + "glass-harbor", E + "dunmere", E + "norland"}
    assert gold.ids("relationship") == {"rel:0", "rel:6", "rel:7"}
    assert gold.ids("text_unit") == {"tu:0", "tu:3"}


def test_mapping_is_done_once_per_store_and_question(view):
    question = chain_question()
    assert map_gold(view, question) is map_gold(view, question)
    assert map_gold(view.hide(entities=[E + "norland"]), question) is map_gold(
        view, question
    )  # the KB's, not the view's
    assert map_gold(view, Question(id="none", question="?", answer="x")) is None
    empty_text = Question(
        id="q-blank", question="?", answer="x", gold=GoldEvidence(sentences=[GoldSentence(document="Dunmere", index=3)])
    )
    assert map_gold(view, empty_text).sentences[0].text_units == () and not map_gold(view, empty_text).any_mapped


def test_every_score_of_a_hand_built_trajectory(view):
    score = score_trajectory(chain_trace(), map_gold(view, chain_question()))
    recall = {key: (r.hits, r.total) for key, r in score.recall.items()}
    precision = {key: (r.hits, r.total) for key, r in score.precision.items()}
    assert recall == {
        ("retrieved", "entity"): (4, 4),
        ("retrieved", "relationship"): (3, 3),
        ("retrieved", "text_unit"): (1, 2),
        ("retrieved", "sentence"): (2, 3),
        ("visited", "entity"): (3, 4),
        ("visited", "text_unit"): (1, 2),
        ("visited", "sentence"): (2, 3),
        ("cited", "entity"): (2, 4),
        ("cited", "relationship"): (2, 3),
        ("cited", "text_unit"): (1, 2),
        ("cited", "sentence"): (2, 3),
    }
    assert precision == {
        ("retrieved", "entity"): (4, 8),
        ("retrieved", "relationship"): (3, 7),
        ("retrieved", "text_unit"): (1, 2),
        ("visited", "entity"): (3, 5),
        ("visited", "text_unit"): (1, 1),
        ("cited", "entity"): (2, 3),
        ("cited", "relationship"): (2, 2),
        ("cited", "text_unit"): (1, 1),
    }
    assert (score.path.hits, score.path.total) == (3, 3)  # the unmapped hop is not a miss
    assert score.first_complete_step == 6  # every mapped hop shown; the sentences never were (tu:3)
    assert [s.index for s in score.steps if s.wasted] == [1]  # step 3 led to step 4, which showed Dunmere
    assert (score.wasted.hits, score.wasted.total) == (1, 7)  # the answer is no retrieval step
    assert [(s.index, s.hops, s.sentences) for s in score.steps if s.hops or s.sentences] == [
        (2, [0, 1], []),
        (5, [], [0, 1]),
        (6, [1, 2], []),
    ]
    flat = score.scores()
    assert flat["gold.path_coverage"] == 1.0 and flat["gold.first_complete_step"] == 6.0
    assert flat["gold.wasted_steps"] == 1.0 and flat["gold.cited.entity.precision"] == pytest.approx(2 / 3)
    assert "gold.cited.sentence.precision" not in flat


def test_evidence_complete_by_one_sentence_group_and_the_best_group_is_scored(view):
    """FEVER's shape: alternative evidence groups; the trajectory completes the second."""
    texts = [
        "Dunmere is a coastal town in Norland.",
        "The Aster River flows through Dunmere, whose mayor is Mara Holt.",
        "Kestrel Bridge crosses the Aster River in the middle of Dunmere.",
    ]
    gold = GoldEvidence(
        sentences=[GoldSentence(document="Dunmere", index=i, text=t) for i, t in enumerate(texts)],
        sentence_groups=[[0], [1, 2]],
    )
    mapped = map_gold(view, Question(id="q-groups", question="?", answer="x", gold=gold))
    t = Trace(question_id="q-groups", system="hand")
    for unit in ("tu:1", "tu:4", "tu:5"):
        step(t, "read_textunit", {"text_unit": [unit]}, textunit_id=unit)
    t.read_text_units = ["tu:1", "tu:4", "tu:5"]
    score = score_trajectory(t, mapped)
    assert (score.recall["visited", "sentence"].hits, score.recall["visited", "sentence"].total) == (2, 2)
    assert (score.recall["visited", "text_unit"].hits, score.recall["visited", "text_unit"].total) == (2, 2)
    assert (score.precision["visited", "text_unit"].hits, score.precision["visited", "text_unit"].total) == (2, 3)
    assert score.first_complete_step == 2 and score.path.total == 0
    assert [s.index for s in score.steps if s.wasted] == [0]


def test_a_system_that_records_no_shown_items_is_read_as_one_step(view):
    t = Trace(question_id="q-chain", system="one-shot")
    t.add_step("generation", tool="llm")
    t.add_step("retrieval", tool="graph_context")
    t.retrieved = [RetrievedItem(kind="relationship", id=r) for r in ("rel:0", "rel:6", "rel:7")]
    t.visited_entities = [E + "orin-vale"]
    score = score_trajectory(t, map_gold(view, chain_question()))
    assert [(s.index, s.retrieval) for s in score.steps] == [(1, True)]
    assert score.first_complete_step == 1 and (score.path.hits, score.path.total) == (3, 3)
    assert score.wasted.hits == 0


def test_the_metric_scores_records_and_micro_averages_them(view):
    question, other = chain_question(), chain_question("q-two")
    first = RunRecord(key=UnitKey(question_id=question.id, system="hand"), trace=chain_trace())
    second_trace = chain_trace().model_copy(update={"question_id": other.id})
    second_trace.steps = second_trace.steps[:3]  # two of the three mapped hops; never complete
    second = RunRecord(key=UnitKey(question_id=other.id, system="hand"), trace=second_trace)
    metric, ctx = GoldTrajectory(), MetricContext(view=view)
    assert metric.score(first, question, ctx)["gold.path_coverage"] == 1.0
    assert metric.score(second, other, ctx)["gold.first_complete_step"] is None
    values = {
        (v.metric, v.system): v
        for v in metric.aggregate(Results(records=[first, second], questions={q.id: q for q in (question, other)}), ctx)
    }
    path = values["gold-trajectory.path_coverage", "hand"]
    assert (path.numerator, path.denominator, path.value) == (5, 6, round(5 / 6, 6))
    complete = values["gold-trajectory.complete", "hand"]
    assert (complete.numerator, complete.denominator) == (1, 2)
    assert values["gold-trajectory.first_complete_step", "hand"].value == 6.0
    mapping = values["gold-trajectory.mapping", "all"]
    assert (mapping.numerator, mapping.denominator) == (20, 26)
    assert mapping.detail["triples"] == {"mapped": 6, "total": 8} and mapping.detail["triples_mapped_by_endpoints"] == 2


def test_step_dependence_counts_critical_steps_per_question(view):
    def variant(qid: str, step_index: int, changed: float, gold: float, status: str = "ok") -> RunRecord:
        return RunRecord(
            key=UnitKey(question_id=qid, system="a", condition="loso", variant=f"step:{step_index}"),
            status=status,
            variant=VariantInfo(id=f"step:{step_index}", data={"left_out_step": step_index}),
            scores={"output_changed": changed, "gold.left_out.gold_items": gold},
        )

    from provbench_plugins.trajectory.metric import dependence_values

    records = [
        variant("q1", 0, 1.0, 2),
        variant("q1", 2, 1.0, 1),
        variant("q1", 3, 0.0, 0),
        variant("q2", 2, 1.0, 0),
        variant("q2", 0, 0.0, 1),
        variant("q3", 1, 0.0, 1),
        variant("q3", 2, 0.0, 1, status="failed"),
    ]
    single, critical = dependence_values(records, "a", "loso")
    assert (single.numerator, single.denominator) == (2, 3)  # q1 and q2 depend on a single step, q3 on none
    assert critical.value == 2.0 and critical.detail["critical_positions"] == {0: 1, 2: 2}
    assert single.detail["failed"] == 1 and single.detail["left_out_with_gold"] == {
        "gold, changed": 2,
        "gold, unchanged": 2,
        "no gold, changed": 1,
        "no gold, unchanged": 1,
    }
