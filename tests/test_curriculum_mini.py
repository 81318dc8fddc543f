"""curriculum-mini as paper 002's claims need it: written by a seeded generator (byte for byte), a gold
chain on every answerable question, hop counts derived from the graph, and deep, too-deep, stale-edge
and unanswerable questions that behave as their kinds say when a known-truth reader
(:mod:`p002_helpers`) answers for the planning loop and for one-shot GraphRAG."""

from __future__ import annotations

import random
import re
from collections import Counter

import networkx as nx
import pytest
from p002_helpers import MINI, oracle_llm

from provbench.plugin_api import Environment
from provbench_plugins.datasets.curriculum.loader import CurriculumLoader
from provbench_plugins.papers.p000_neighborhoods.systems import GraphRAG
from provbench_plugins.papers.p002_planning.loop import PlanningLoop
from provbench_plugins.papers.p002_planning.seeds import select_seeds
from provbench_tools.curriculum import write_curriculum
from provbench_tools.curriculum.tracks import REVISION_DAY, STEPS

BEFORE_REVISION = "2025-08-01"
PHRASES = {phrase: step for step, phrase in STEPS.items()}


def of_type(questions, *kinds):
    return [q for q in questions if q.type in kinds]


def named(view, question) -> list[str]:
    """The concepts the question names, as the loop seeds from them (names and aliases)."""
    return [m.entity.id for m in select_seeds(view, question.question, max_seeds=50)]


def test_regenerates_byte_for_byte(tmp_path):
    write_curriculum(tmp_path / "mini")
    for name in ("concepts.csv", "edges.csv", "questions.jsonl"):
        assert (tmp_path / "mini" / name).read_bytes() == (MINI / name).read_bytes(), name


def test_kinds_and_gold_chains(curriculum_mini):
    questions, _ = curriculum_mini
    assert CurriculumLoader.provides_gold
    kinds = Counter(q.type for q in questions)
    assert (kinds["deep"], kinds["too-deep"], kinds["stale"], kinds["unanswerable"]) == (8, 4, 4, 9)
    assert {f"cm-{i:02d}" for i in range(1, 22)} <= {q.id for q in questions}  # the hand-written ones are kept
    assert Counter(q.metadata["hops"] for q in of_type(questions, "deep")) == {3: 4, 4: 4}
    assert Counter(q.metadata["hops"] for q in of_type(questions, "too-deep")) == {5: 2, 6: 2}
    for q in questions:
        if q.metadata["answerable"]:
            gold = q.gold
            assert gold.ordered and len(gold.triples) == len(gold.entities) - 1 >= q.metadata["hops"], q.id
            assert q.answer in gold.entities, q.id
        else:
            assert q.gold is None and q.category == "unanswerable"
    assert [q.type for q in questions[:5]] == ["contrast", "deep", "unanswerable", "stale", "too-deep"]


def test_hop_counts_are_the_answers_distance_from_the_named_concepts(curriculum_mini):
    questions, kb = curriculum_mini
    view = kb.view()
    graph = nx.Graph(view.subgraph(list(view.entity_ids())))  # active edges only, either direction
    for q in questions:
        if not q.metadata["answerable"]:
            continue
        answer = f"ent:{q.metadata['answer_id']}"
        derived = min(nx.shortest_path_length(graph, start, answer) for start in named(view, q))
        assert derived == q.metadata["hops"], q.id
        if q.type in ("deep", "too-deep", "stale"):  # one named concept: the chain's start
            assert named(view, q) == [view.find_entity(q.gold.entities[0]).id], q.id


def walk(view, start_name: str, steps: list[tuple[str, bool]]) -> list[str]:
    """Concept names reached by following (relation, forward) steps, each step's only edge."""
    reached = [view.find_entity(start_name)]
    for relation, forward in steps:
        found = view.neighbors(reached[-1].id, direction="out" if forward else "in", relation_types=[relation])
        if len(found) != 1:
            return [e.name for e in reached]
        reached.append(found[0].entity)
    return [e.name for e in reached]


def steps_of(question: str) -> list[tuple[str, bool]]:
    walked = re.search(r"Go to (.*)\. Which unit", question).group(1)
    return [PHRASES[part] for part in walked.split(", then to ")]


def test_gold_chains_are_active_edges_of_the_kb(curriculum_mini):
    questions, kb = curriculum_mini
    view = kb.view()
    for q in questions:
        if q.gold is None:
            continue
        for triple in q.gold.triples:
            subject = view.find_entity(triple.subject)
            assert any(
                nb.entity.name == triple.object
                for nb in view.neighbors(subject.id, direction="out", relation_types=[triple.relation])
            ), (q.id, triple)


def test_stale_questions_have_another_answer_behind_an_invalidated_edge(curriculum_mini):
    questions, kb = curriculum_mini
    view, earlier = kb.view(), kb.view().as_of(BEFORE_REVISION)
    assert BEFORE_REVISION < REVISION_DAY.isoformat()
    for q in of_type(questions, "stale"):
        start, steps = q.gold.entities[0], steps_of(q.question)
        assert walk(view, start, steps)[-1] == q.answer
        assert walk(earlier, start, steps)[-1] == q.metadata["stale_answer"] != q.answer
        assert len(walk(earlier, start, steps)) == len(steps) + 1  # the whole walk exists then
    assert len(kb.store.invalidated_relations()) == 2 + 4  # the two hand-written ones and one per stale question


def test_generated_unanswerable_questions_ask_for_a_step_that_does_not_exist(curriculum_mini):
    questions, kb = curriculum_mini
    generated = [q for q in of_type(questions, "unanswerable") if q.question.startswith("Start at")]
    assert len(generated) == 4
    for q in generated:
        steps = steps_of(q.question)
        assert len(walk(kb.view(), _name(q), steps)) == len(steps)  # the last step finds nothing


def _name(q) -> str:
    return q.question.split("Start at ", 1)[1].split(". Go to", 1)[0]


def test_questions_name_no_relation_and_electives_use_the_structural_ones(curriculum_mini):
    """Issue 35 item 1b: the frontier ranker cannot keep a track by matching relation words, since
    the generated questions name none, nor by relation type, since the electives around every
    track's first unit use the structural relations too."""
    from provbench_plugins.papers.p002_planning.frontier import Focus

    questions, kb = curriculum_mini
    view = kb.view()
    labels = {r.label for r in view.relations(list(view.relation_ids()))}
    assert {"prerequisite", "builds_on", "part_of", "related", "contrasts_with"} <= labels
    generated = [q for q in questions if q.question.startswith("Start at")]
    assert len(generated) == 20
    for q in generated:
        assert not any(Focus(q.question, "").names_relation(label) for label in labels), q.id
    structural = {"prerequisite", "builds_on", "part_of"}
    for q in of_type(questions, "deep", "too-deep", "stale"):
        first = view.find_entity(q.gold.entities[0])
        off_chain = [nb for nb in view.neighbors(first.id) if nb.entity.name != q.gold.entities[1]]
        assert len(off_chain) == 14 and sum(nb.relation.label in structural for nb in off_chain) >= 5, q.id


@pytest.fixture(scope="module")
def loop_runs(curriculum_mini):
    """Each generated question answered by the loop with the known-truth reader, as configured."""
    questions, kb = curriculum_mini
    view, loader = kb.view(), CurriculumLoader()
    runs = {}
    for label, options in {"loop": {}, "one round": {"max_rounds": 1}, "never abstains": {"abstain": False}}.items():
        for q in of_type(questions, "deep", "too-deep", "stale", "unanswerable"):
            trace = PlanningLoop(**options).run(q, Environment(view=view, llm=oracle_llm(questions, 8)))
            prediction = trace.answer if trace.outcome == "answered" else None
            runs[label, q.id] = (trace, loader.score_answer(q, prediction)["accuracy"])
    return questions, runs


def test_the_loop_answers_deep_questions_one_round_over_the_same_seeds_does_not(loop_runs):
    """The loop answers the deep and stale questions within its rounds, except where round 1's cap cut
    the chain (round 1 has no focus yet and the question names no relation: the cap cuts blind);
    one round over the same seeds answers none."""
    questions, runs = loop_runs
    answered = []
    for q in of_type(questions, "deep", "stale"):
        trace, right = runs["loop", q.id]
        rounds = trace.artifacts["rounds"]
        assert rounds[0]["capped"], q.id  # the cap bites from round 1
        if trace.outcome == "abstained":  # lost: the chain's next unit was cut in round 1
            assert f"ent:{_id(q.gold.entities[1])}" not in rounds[0]["frontier"], q.id
        else:
            answered.append(q.id)
            assert right == 1.0 and len(rounds) >= q.metadata["hops"], q.id
            assert trace.citations.relationships and trace.artifacts["grounding"]["evidence"]["entities"]
        one_round, _ = runs["one round", q.id]
        assert one_round.outcome == "abstained" and len(one_round.artifacts["rounds"]) == 1, q.id
        assert one_round.visited_entities == trace.visited_entities[:12]  # the same seeds, the same first round
    assert len(answered) == 11  # cm-23's next unit was cut in round 1
    four_hops = [runs["loop", q.id][0] for q in of_type(questions, "deep") if q.metadata["hops"] == 4]
    assert four_hops and all(len(t.visited_entities) == 48 for t in four_hops)  # the bound, reached


def _id(name: str) -> str:
    return name.lower().replace(" ", "-")


def test_the_loop_abstains_on_too_deep_and_unanswerable_questions(loop_runs):
    questions, runs = loop_runs
    for q in of_type(questions, "too-deep", "unanswerable"):
        trace, _ = runs["loop", q.id]
        assert trace.outcome == "abstained", q.id
    assert all(len(runs["loop", q.id][0].visited_entities) == 48 for q in of_type(questions, "too-deep"))
    # without the final abstention it runs the same four rounds and answers them, wrongly: the abstention
    # (not the round limit) is what keeps the wrong answers out
    for q in of_type(questions, "too-deep"):
        ungated, right = runs["never abstains", q.id]
        assert ungated.outcome == "answered" and right == 0.0, q.id
        assert len(ungated.artifacts["rounds"]) == len(runs["loop", q.id][0].artifacts["rounds"]) == 4, q.id


def test_one_shot_graphrag_misses_the_deep_chains(curriculum_mini):
    questions, kb = curriculum_mini
    view = kb.view()
    for q in of_type(questions, "deep"):
        trace = GraphRAG(ask_confidence=True, confidence_bar=0.8).run(
            q, Environment(view=view, llm=oracle_llm(questions, 1))
        )
        assert trace.outcome == "abstained", q.id  # its one context never holds the whole chain


def test_an_invalidated_gold_edge_changes_the_answer_an_off_chain_one_does_not(curriculum_mini):
    from provbench_plugins.interventions.gold_edges import InvalidateGoldEdge, InvalidateOffChainEdge

    questions, kb = curriculum_mini
    view, on_chain, off_chain = kb.view(), InvalidateGoldEdge(), InvalidateOffChainEdge()
    checked = 0
    for q in of_type(questions, "deep")[:5]:

        def answer(under):
            trace = PlanningLoop().run(q, Environment(view=under, llm=oracle_llm(questions, 8)))  # noqa: B023
            return trace, (trace.answer if trace.outcome == "answered" else None)

        baseline, gold_answer = answer(view)
        if gold_answer is None:
            continue  # cm-23: the chain was cut in round 1, no answer to change
        checked += 1
        assert gold_answer == q.answer
        variants = on_chain.variants(q, baseline, random.Random(0))
        assert len(variants) == q.metadata["hops"]
        for variant in variants:
            hidden = on_chain.make_view(view, q, baseline, random.Random(0), variant=variant)
            assert len(hidden.hidden.invalidated) == 1 and answer(hidden)[1] != gold_answer, (q.id, variant.id)
        for seed in range(3):
            hidden = off_chain.make_view(view, q, baseline, random.Random(seed))
            assert len(hidden.hidden.invalidated) == 1 and answer(hidden)[1] == gold_answer, (q.id, seed)
    assert checked == 4


def test_as_of_before_the_revision_the_loop_sees_the_stale_edge(curriculum_mini):
    from provbench_plugins.interventions.gold_edges import AsOf

    questions, kb = curriculum_mini
    earlier = AsOf(time=BEFORE_REVISION).make_view(kb.view(), questions[0], None, random.Random(0))
    reached = []
    for q in of_type(questions, "stale"):
        trace = PlanningLoop().run(q, Environment(view=earlier, llm=oracle_llm(questions, 8)))
        stale = earlier.find_entity(q.metadata["stale_answer"]).id
        # the current chain is not there yet, so the reader never confirms it
        assert trace.outcome == "abstained", q.id
        assert trace.artifacts["grounding"]["source"]["as_of"] == "2025-08-01T00:00:00+00:00"
        reached += [q.id] if stale in trace.visited_entities else []
    # the old answer, through the invalidated edge, where the blind cut of round 1 (the reader's focus
    # points at the current chain) kept the old branch
    assert reached == ["cm-36", "cm-37"]
    with pytest.raises(Exception, match="not an ISO date"):
        AsOf(time="next spring")


def test_the_control_oracle_shows_the_claims_and_cites_the_chain(curriculum_mini):
    """provbench.controls' oracle (not this file's stand-in) on a deep, a too-deep and an unanswerable
    question: the loop answers the deep one citing gold edges, one round over the same seeds does not,
    and the loop abstains on the other two."""
    from provbench.llm import LLMClient
    from provbench.llm.backends import make_backend

    questions, kb = curriculum_mini
    backend = make_backend("control:oracle")
    backend.bind_questions(questions)
    view, llm = kb.view(), LLMClient(backend)
    deep, too_deep, unanswerable = (of_type(questions, kind)[0] for kind in ("deep", "too-deep", "unanswerable"))
    trace = PlanningLoop().run(deep, Environment(view=view, llm=llm))
    assert trace.outcome == "answered" and trace.answer == deep.answer
    gold_edges = {view.find_entity(t.subject).id for t in deep.gold.triples}
    cited = view.relations(trace.citations.relationships)
    assert cited and all(r.source in gold_edges for r in cited)  # the supporting subgraph is the chain
    assert PlanningLoop(max_rounds=1).run(deep, Environment(view=view, llm=llm)).outcome == "abstained"
    for q in (too_deep, unanswerable):
        assert PlanningLoop().run(q, Environment(view=view, llm=llm)).outcome == "abstained", q.id


def test_one_shot_over_the_4_hop_neighbourhood_holds_every_chain_the_loops_budget_none(curriculum_mini):
    """Issue 35 item 1a and c: one call over the same seeds. With the loop's 48 concepts (4 hops,
    ranked as the loop ranks) it fills its budget with the tracks' breadth before any chain; over the
    whole 4-hop neighbourhood its prompt holds every deep and stale chain, so the known-truth reader
    answers each there as in the loop: only a reader that drowns in distractors tells them apart."""
    questions, kb = curriculum_mini
    view = kb.view()
    graph = nx.Graph(view.subgraph(list(view.entity_ids())))
    budget = {"max_rounds": 1, "hops_per_round": 4, "frontier_cap": 48}
    neighbourhood = {**budget, "frontier_cap": 1000}
    for q in of_type(questions, "deep", "stale"):
        trace = PlanningLoop(**budget).run(q, Environment(view=view, llm=oracle_llm(questions, 1)))
        assert len(trace.llm_calls) == 1 and len(trace.visited_entities) == 48, q.id
        assert trace.outcome == "abstained", q.id
        trace = PlanningLoop(**neighbourhood).run(q, Environment(view=view, llm=oracle_llm(questions, 1)))
        ball = nx.single_source_shortest_path_length(graph, named(view, q)[0], cutoff=4)
        assert set(trace.visited_entities) == set(ball), q.id  # the whole 4-hop neighbourhood, in one prompt
        assert trace.outcome == "answered" and trace.answer == q.answer, q.id


def test_the_off_chain_control_runs_no_unit_without_used_edges_and_says_when_it_hides_nothing(curriculum_mini, caplog):
    from provbench.model import RetrievedItem, Trace
    from provbench_plugins.interventions.gold_edges import InvalidateOffChainEdge, gold_relations

    questions, kb = curriculum_mini
    view, control, q = kb.view(), InvalidateOffChainEdge(), of_type(questions, "deep")[0]
    assert control.variants(q, Trace(question_id=q.id, system="s"), random.Random(0)) == []  # nothing used
    on_chain = Trace(
        question_id=q.id,
        system="s",
        retrieved=[RetrievedItem(kind="relationship", id=rid) for rid, _ in gold_relations(view, q.gold)],
    )
    assert control.variants(q, on_chain, random.Random(0)) is None
    hidden = control.make_view(view, q, on_chain, random.Random(0))
    assert not hidden.hidden.invalidated and q.id in caplog.text  # hides nothing, and says so


def test_what_each_reader_shows_of_the_loop_against_one_shot_over_the_neighbourhood(curriculum_mini):
    """Issue 35 item 1, the open claim: on the deep questions the oracle reads the chain in both (one-shot
    over the 4-hop neighbourhood even where round 1's cap cut it for the loop); the noise-sensitive reader
    drowns in one-shot's 126 concepts more often than in the loop's 24-48."""
    from provbench.llm import LLMClient
    from provbench.llm.backends import make_backend

    questions, kb = curriculum_mini
    view, right = kb.view(), {}
    for reader in ("oracle", "noise-sensitive"):
        backend = make_backend(f"control:{reader}")
        backend.bind_questions(questions)
        llm = LLMClient(backend)
        for label, options in {
            "loop": {},
            "one-shot": {"max_rounds": 1, "hops_per_round": 4, "frontier_cap": 1000},
        }.items():
            traces = [
                PlanningLoop(**options).run(q, Environment(view=view, llm=llm)) for q in of_type(questions, "deep")
            ]
            right[reader, label] = sum(
                t.outcome == "answered" and t.answer == q.answer for t, q in zip(traces, of_type(questions, "deep"))
            )
    assert (right["oracle", "loop"], right["oracle", "one-shot"]) == (7, 8)
    assert (right["noise-sensitive", "loop"], right["noise-sensitive", "one-shot"]) == (4, 1)
