"""Paper 002's planning loop on the scripted LLM, over a small concept graph built from files.

The graph (concept id: name), written by :func:`write_graph`:

    hub -related-> n01 .. n20, hub -builds_on-> target   (21 leaves; the relevant one stored last)
    alpha -prerequisite-> beta -builds_on-> gamma
    alpha -related-> delta -builds_on-> zeta
    beta -contrasts_with-> epsilon
    beta -related-> alpha                          (a cycle: alpha must not be revisited)
    alpha -part_of-> secret                        (invalidated: never followed)
    c1 -next-> c2 -next-> c3 -next-> c4 -next-> c5 -next-> c6   (a chain longer than 4 rounds)
    rho -prerequisite-> sigma -prerequisite-> tau -builds_on-> phi
                        sigma -builds_on-> upsilon -contrasts_with-> chi   (when the focus narrows)
    graph, graph-search: "Graph" and "Graph Search" (seed specificity); alpha has the alias "Alphy"
    g00 .. g59: a ring, each node joined to the 7 next ones (enough concepts for every round to fill
                its frontier: 4 x 12 = 48 are examined)

Edges are valid from 2024-01-01 and recorded on 2024-01-03.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from provbench.kb.temporal import instant_text, now
from provbench.model import Question
from provbench.plugin_api import Environment
from provbench.testing import scripted_llm
from provbench_plugins.kb_builders.concepts.builder import ConceptGraphBuilder
from provbench_plugins.papers.p002_planning.loop import PlanningLoop
from provbench_plugins.papers.p002_planning.seeds import select_seeds

NAMES = {
    "hub": "Hub Concept",
    "alpha": "Alpha Topic",
    "beta": "Beta Topic",
    "gamma": "Gamma Topic",
    "delta": "Delta Topic",
    "zeta": "Zeta Topic",
    "epsilon": "Epsilon Topic",
    "secret": "Secret Topic",
    "graph": "Graph",
    "graph-search": "Graph Search",
    "rho": "Rho Topic",
    "sigma": "Sigma Topic",
    "tau": "Tau Topic",
    "upsilon": "Upsilon Topic",
    "phi": "Phi Topic",
    "chi": "Chi Topic",
    "target": "Target Leaf",
    **{f"n{i:02d}": f"Leaf {i:02d}" for i in range(1, 21)},
    **{f"c{i}": f"Chain Step {i}" for i in range(1, 7)},
    **{f"g{i:02d}": f"Grid Node {i:02d}" for i in range(60)},
}
ALIASES = {"alpha": "Alphy"}
EDGES = (
    [("hub", "related", f"n{i:02d}", "") for i in range(1, 21)]
    + [
        ("alpha", "prerequisite", "beta", ""),
        ("beta", "builds_on", "gamma", ""),
        ("alpha", "related", "delta", ""),
        ("delta", "builds_on", "zeta", ""),
        ("beta", "contrasts_with", "epsilon", ""),
        ("beta", "related", "alpha", ""),
        ("alpha", "part_of", "secret", "2025-01-01"),
        ("graph-search", "part_of", "graph", ""),
        ("rho", "prerequisite", "sigma", ""),
        ("sigma", "prerequisite", "tau", ""),
        ("tau", "builds_on", "phi", ""),
        ("sigma", "builds_on", "upsilon", ""),
        ("upsilon", "contrasts_with", "chi", ""),
    ]
    + [(f"c{i}", "next", f"c{i + 1}", "") for i in range(1, 6)]
    + [(f"g{i:02d}", "near", f"g{(i + k) % 60:02d}", "") for i in range(60) for k in range(1, 8)]
    + [("hub", "builds_on", "target", "")]
)


def write_graph(directory: Path) -> tuple[Path, Path]:
    concepts, edges = directory / "concepts.csv", directory / "edges.csv"
    with concepts.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "name", "kind", "description", "aliases"])
        writer.writerows(
            [cid, name, "concept", f"{name} is a test concept.", ALIASES.get(cid, "")] for cid, name in NAMES.items()
        )
    with edges.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "source", "relation", "target", "valid_from", "recorded_at", "invalidated_at"])
        writer.writerows([n, s, r, t, "2024-01-01", "2024-01-03", inv] for n, (s, r, t, inv) in enumerate(EDGES))
    return concepts, edges


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    directory = tmp_path_factory.mktemp("concepts")
    concepts, edges = write_graph(directory)
    kb = ConceptGraphBuilder(concepts=str(concepts), edges=str(edges)).build([], directory / "kb")
    yield kb.view()
    kb.close()


def reply(answer="x", confidence=0.1, focus="", relation_types=(), reason="", concepts=(), relations=()):
    return {
        "answer": answer,
        "confidence": confidence,
        "reason": reason,
        "supporting_concepts": list(concepts),
        "supporting_relations": list(relations),
        "focus": focus,
        "relation_types": list(relation_types),
    }


def run(view, text, replies, **options):
    llm = scripted_llm(replies)
    trace = PlanningLoop(**options).run(Question(id="q", question=text, answer="?"), Environment(view=view, llm=llm))
    return trace, llm.backend.calls if hasattr(llm, "backend") else None


def rounds(trace):
    return trace.artifacts.get("rounds", [])


def test_frontier_cap_is_respected_and_round_one_counts_the_seeds(view):
    # the ring offers more new concepts than the cap every round, so the cap decides every size
    trace, _ = run(view, "What is near Grid Node 00?", [reply()] * 4, frontier_cap=5)
    first = rounds(trace)[0]
    assert first["expanded"] == ["ent:g00"]
    assert len(first["frontier"]) == 4 and first["capped"]  # seed + 4 new = the cap of 5
    assert [len(r["frontier"]) for r in rounds(trace)] == [4, 5, 5, 5] and all(r["capped"] for r in rounds(trace))
    assert len(trace.visited_entities) == 4 * 5 == len(set(trace.visited_entities))


def test_default_cap_is_twelve_and_exactly_48_concepts_are_examined(view):
    trace, _ = run(view, "What is near Grid Node 00?", [reply()] * 4)
    assert [len(r["frontier"]) for r in rounds(trace)] == [11, 12, 12, 12]
    assert all(r["capped"] for r in rounds(trace)[:3])
    assert len(trace.visited_entities) == 48 == len(set(trace.visited_entities)) and len(trace.llm_calls) == 4
    assert len(list(view.entity_ids())) > 48 + 30  # the graph holds far more than the loop may examine


def test_when_the_cap_cuts_the_relevant_concept_is_kept(view):
    # 20 "related" leaves come first in the store; the one reached by the relation the question names is kept
    trace, _ = run(view, "What does Hub Concept build on?", [reply()] * 4, frontier_cap=5)
    first = rounds(trace)[0]
    assert first["capped"] and first["frontier"][0] == "ent:target" and len(first["frontier"]) == 4


def test_relevance_order_of_candidates():
    from provbench.kb.types import Entity, Neighbor, Relation
    from provbench_plugins.papers.p002_planning.frontier import Focus, rank_candidates

    def nb(eid, label, name):
        return Neighbor(
            relation=Relation(id=f"r-{eid}", source="s", target=eid, label=label),
            direction="out",
            entity=Entity(id=eid, name=name),
        )

    candidates = [
        nb("a", "related", "Plain"),
        nb("b", "part_of", "Plain Two"),
        nb("c", "related", "Vector Index"),
        nb("d", "contrasts_with", "Other"),
        nb("b", "related", "Plain Two"),
        nb("e", "related", "Plain"),
    ]
    focus = Focus("Which unit is part of it?", "the vector index", chosen_types=["contrasts_with"])
    # chosen type, then a relation the text names, then words of the focus in the name, then the store's order
    assert [n.entity.id for n in rank_candidates(candidates, focus)] == ["d", "b", "c", "a", "e"]
    assert Focus("What does X build on?", "").names_relation("builds_on")
    assert not Focus("What does X rebuild?", "").names_relation("builds_on")


def test_max_seeds_must_fit_the_frontier():
    from provbench.errors import PluginError

    with pytest.raises(PluginError, match="max_seeds .4. must not exceed frontier_cap .3."):
        PlanningLoop(max_seeds=4, frontier_cap=3)


def test_no_concept_is_revisited(view):
    trace, _ = run(view, "What comes after Alpha Topic?", [reply()] * 4)
    assert len(trace.visited_entities) == len(set(trace.visited_entities))
    seen = {"ent:alpha"}
    for r in rounds(trace):
        assert not seen & set(r["frontier"]), r
        seen |= set(r["frontier"])
    assert "ent:alpha" not in sum((r["frontier"] for r in rounds(trace)), [])  # the beta -> alpha cycle


def test_early_exit_at_the_bar_cites_the_supporting_subgraph(view):
    support = reply("Beta Topic", 0.8, concepts=["ent:alpha", "ent:beta", "ent:nowhere"], relations=["rel:20"])
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("Gamma Topic", 0.5), support])
    assert trace.outcome == "answered" and trace.answer == "Beta Topic" and trace.confidence == 0.8
    assert len(trace.llm_calls) == 2 and len(rounds(trace)) == 2
    # the citations are the subgraph the reply chose among the ids shown (an unknown id is dropped), not everything
    assert trace.citations.entities == ["ent:alpha", "ent:beta"] and trace.citations.relationships == ["rel:20"]
    assert len(trace.artifacts["evidence"]["entities"]) > 2  # everything examined stays in the artifacts
    assert any(s.kind == "rejection" and "dropped_support" in s.arguments for s in trace.steps)


def test_round_one_does_not_exit_and_the_current_rounds_answer_is_verified(view):
    # the paper: round 2 "can exit early at >= 0.80" and verifies the answer it gives on more evidence
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("Beta Topic", 0.95), reply("Gamma Topic", 0.85)])
    assert len(trace.llm_calls) == 2 and trace.answer == "Gamma Topic" and trace.confidence == 0.85
    assert trace.artifacts["grounding"]["round"] == 2
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("Beta Topic", 0.95)], exit_from_round=1)
    assert len(trace.llm_calls) == 1 and trace.answer == "Beta Topic"


def test_keep_best_verifies_the_most_confident_answer_so_far(view):
    replies = [reply("Beta Topic", 0.95), reply("Gamma Topic", 0.85)]
    trace, _ = run(view, "What comes after Alpha Topic?", replies, keep_best=True)
    assert len(trace.llm_calls) == 2 and trace.answer == "Beta Topic" and trace.confidence == 0.95


def test_a_retraction_in_round_two_is_not_overruled_by_round_one(view):
    # round 2 gives no answer: round 1's confident one is not verified in its place
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("Beta Topic", 0.95), reply("", 0.0)], max_rounds=2)
    assert trace.outcome == "abstained" and trace.artifacts["candidate_answer"] == "Beta Topic"
    trace, _ = run(
        view, "What comes after Alpha Topic?", [reply("Beta Topic", 0.95), reply("", 0.0)], max_rounds=2, keep_best=True
    )
    assert trace.outcome == "answered" and trace.answer == "Beta Topic"


def test_without_abstention_every_round_runs_and_the_last_answer_is_given(view):
    replies = [reply(f"Chain Step {i}", 0.3 + i / 100) for i in range(2, 6)]
    trace, _ = run(view, "Where does Chain Step 1 lead?", replies, abstain=False)
    assert trace.outcome == "answered" and trace.answer == "Chain Step 5" and len(trace.llm_calls) == 4
    assert "after 4 rounds" in trace.artifacts["abstention_skipped"]
    # the bar still exits early: only the final abstention is gone
    trace, _ = run(
        view, "Where does Chain Step 1 lead?", [reply("Chain Step 2", 0.1), reply("Chain Step 3", 0.9)], abstain=False
    )
    assert trace.answer == "Chain Step 3" and len(trace.llm_calls) == 2


def test_a_later_invalid_reply_keeps_the_earlier_candidate(view):
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("Beta Topic", 0.5), "not json"], max_rounds=2)
    assert trace.outcome == "abstained" and trace.artifacts["candidate_answer"] == "Beta Topic"
    assert trace.confidence == 0.5 and rounds(trace)[1]["confidence"] == 0.0


def test_grounding_record_of_an_answer(view):
    trace, _ = run(
        view,
        "What comes after Alpha Topic?",
        [
            reply(),
            reply(
                "Beta Topic", 0.9, reason="alpha is a prerequisite of beta", concepts=["ent:beta"], relations=["rel:20"]
            ),
        ],
    )
    grounding = trace.artifacts["grounding"]
    assert grounding["confidence"] == 0.9 and grounding["reason"] == "alpha is a prerequisite of beta"
    source = grounding["source"]
    assert source["knowledge_base"] == view.knowledge_base_fingerprint and source["model"] == "scripted"
    assert source["as_of"] and source["as_of"] <= instant_text(now())  # when the current graph was read
    assert view.knowledge_base_fingerprint and grounding["evidence"]["relationships"] == ["rel:20"]
    assert grounding["round"] == 2 and grounding["held_back"] is False


def test_a_single_round_loop_may_answer_in_its_only_round(view):
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("Beta Topic", 0.9)], max_rounds=1)
    assert trace.outcome == "answered" and len(trace.llm_calls) == 1
    assert PlanningLoop(max_rounds=1).expected_llm_calls == 1 and PlanningLoop().expected_llm_calls == 4


def test_confident_round_one_stands_when_round_two_finds_nothing_new(view):
    trace, _ = run(view, "What is part of Graph Search?", [reply("Graph", 0.9)])
    assert trace.outcome == "answered" and trace.answer == "Graph" and len(trace.llm_calls) == 1


def test_a_higher_bar_keeps_looping(view):
    trace, _ = run(view, "What comes after Alpha Topic?", [reply("B", 0.85), reply("C", 0.95)], confidence_bar=0.9)
    assert trace.answer == "C" and len(trace.llm_calls) == 2


def test_abstains_after_four_rounds(view):
    replies = [reply(f"Chain Step {i}", 0.3 + i / 100) for i in range(2, 6)]
    trace, _ = run(view, "Where does Chain Step 1 lead?", replies)
    assert trace.outcome == "abstained" and trace.answer is None
    assert len(trace.llm_calls) == 4 and [r["round"] for r in rounds(trace)] == [1, 2, 3, 4]
    assert trace.confidence == pytest.approx(0.35) and trace.artifacts["candidate_answer"] == "Chain Step 5"
    assert trace.citations.is_empty() and trace.artifacts["grounding"]["held_back"] is True
    assert "ent:c6" not in trace.visited_entities  # four rounds reach c5 only


def test_abstains_early_when_nothing_is_left_to_examine(view):
    trace, _ = run(view, "What is part of Graph Search?", [reply()] * 4)
    assert trace.outcome == "abstained" and len(trace.llm_calls) == 1
    assert "nothing new" in trace.artifacts["abstention_reason"]


def test_invalidated_edges_are_followed_only_as_of_an_earlier_time(view):
    assert "ent:secret" not in {nb.entity.id for nb in view.neighbors("ent:alpha")}
    trace, _ = run(view, "What is Alpha Topic part of?", [reply()] * 4)
    assert "ent:secret" not in trace.visited_entities
    earlier, _ = run(view.as_of("2024-06-01"), "What is Alpha Topic part of?", [reply()] * 4)
    assert "ent:secret" in earlier.visited_entities
    not_yet_recorded, _ = run(view.as_of("2024-01-02"), "What is Alpha Topic part of?", [reply()] * 4)
    assert not_yet_recorded.visited_entities == ["ent:alpha"]  # true from 01-01, recorded 01-03
    used = trace.artifacts["evidence"]["relations"]
    hidden = view.invalidate([used[0]])
    assert used[0] not in {nb.relation.id for e in ("ent:alpha", "ent:beta") for nb in hidden.neighbors(e)}
    assert hidden.relation(used[0]) is None and view.relation(used[0]) is not None


def test_relation_types_narrow_from_round_three(view):
    # the paper: rounds 3-4 narrow the relation types followed; round 2 expands the whole new frontier
    trace, _ = run(
        view,
        "What does Rho Topic lead to?",
        [reply(relation_types=["prerequisite"]), reply(relation_types=["builds_on"]), reply(), reply()],
    )
    second, third = rounds(trace)[1], rounds(trace)[2]
    assert second["relation_types_followed"] is None
    assert set(second["frontier"]) == {"ent:tau", "ent:upsilon"}  # upsilon via builds_on, despite round 1's choice
    assert third["relation_types_followed"] == ["builds_on"] and not third["widened"]
    assert third["frontier"] == ["ent:phi"]  # not chi (contrasts_with)


def test_relation_type_focus_is_applied(view):
    trace, _ = run(
        view,
        "What does Alpha Topic lead to?",
        [reply(relation_types=["builds_on"]), reply(), reply(), reply()],
        narrow_from_round=2,
    )
    second = rounds(trace)[1]
    assert rounds(trace)[0]["relation_types_chosen"] == ["builds_on"]
    assert second["relation_types_followed"] == ["builds_on"] and not second["widened"]
    assert set(second["frontier"]) == {"ent:gamma", "ent:zeta"}  # not epsilon (contrasts_with)


def test_focus_widens_when_the_chosen_types_lead_nowhere(view):
    trace, _ = run(
        view,
        "What does Alpha Topic lead to?",
        [reply(relation_types=["prerequisite"]), reply(), reply(), reply()],
        narrow_from_round=2,
    )
    assert rounds(trace)[1]["widened"] and "ent:epsilon" in rounds(trace)[1]["frontier"]


def test_relation_types_outside_the_seen_vocabulary_are_dropped(view):
    trace, _ = run(
        view, "What does Alpha Topic lead to?", [reply(relation_types=["invented"]), reply(), reply(), reply()]
    )
    assert rounds(trace)[0]["relation_types_chosen"] == []


def test_edge_stamps_are_shown_to_the_model(view):
    _, calls = run(view, "What does Alpha Topic lead to?", [reply()] * 4)
    prompt = calls[0]["messages"][1]["content"]
    assert "Alpha Topic -[prerequisite]-> Beta Topic (valid from 2024-01-01, recorded 2024-01-03)" in prompt


def test_round_records_hold_what_the_paper_lists(view):
    trace, _ = run(view, "What does Alpha Topic lead to?", [reply(focus="what beta builds on"), reply(confidence=0.9)])
    first, second = rounds(trace)
    assert {"frontier", "edges_used", "focused_query", "relation_types_chosen", "confidence"} <= set(first)
    assert first["focused_query"] == "What does Alpha Topic lead to?"
    assert second["focused_query"] == "what beta builds on"
    assert first["edges_used"] and set(first["edges_used"]) <= set(trace.artifacts["evidence"]["relations"])


def test_bad_reply_counts_as_zero_confidence_and_llm_failure_fails(view):
    trace, _ = run(view, "What does Alpha Topic lead to?", ["not json", reply(confidence=0.9)])
    assert rounds(trace)[0]["confidence"] == 0.0 and trace.outcome == "answered"
    trace, _ = run(view, "What does Alpha Topic lead to?", [])
    assert trace.outcome == "failed" and "LLM call failed" in trace.error


def test_seeds_are_named_in_the_question_most_specific_first(view):
    seeds = select_seeds(view, "Is Graph Search part of Graph, and what about Alpha Topic?", max_seeds=3)
    assert [s.entity.id for s in seeds] == ["ent:graph-search", "ent:alpha", "ent:graph"]
    nested = select_seeds(view, "How does Graph Search work?", max_seeds=3)
    assert [s.entity.id for s in nested] == ["ent:graph-search"]  # "Graph" inside it is dropped
    assert len(select_seeds(view, "Alpha Topic, Beta Topic, Gamma Topic and Delta Topic", max_seeds=3)) == 3
    assert [s.entity.id for s in select_seeds(view, "What comes after Alphy?", max_seeds=3)] == ["ent:alpha"]  # alias


def test_no_named_concept_abstains_without_a_call_by_default(view):
    # the paper seeds only from concepts named in the question: no similarity fallback unless asked
    trace, _ = run(view, "Something unrelated entirely?", [])
    assert (
        trace.outcome == "abstained"
        and not trace.llm_calls
        and trace.artifacts["abstention_reason"] == "no seed concept"
    )
    assert PlanningLoop().options.fallback_search_k == 0
    trace, _ = run(view, "Something unrelated entirely?", [reply()] * 4, fallback_search_k=2)
    assert trace.steps[0].result and all(s["how"] == "search" for s in trace.steps[0].result)


def test_choices_of_a_multiple_choice_question_reach_the_prompt(view):
    llm = scripted_llm([reply(confidence=0.9)])
    question = Question(id="q", question="Is Alpha Topic a prerequisite?", answer="yes", choices=["yes", "no"])
    PlanningLoop().run(question, Environment(view=view, llm=llm))
    assert "Options (answer with one of them): yes; no" in llm.backend.calls[0]["messages"][1]["content"]


def test_bad_options_name_the_system():
    from provbench.errors import UserError

    with pytest.raises(UserError, match="planning-loop.*frontier_cap"):
        PlanningLoop(frontier_cap=0)


def test_a_fever_claim_is_answered_with_one_of_its_labels(view):
    from provbench.testing import schema_following_llm
    from provbench_plugins.datasets.fever.loader import FeverLoader
    from provbench_plugins.datasets.fever.scoring import LABELS

    loader = FeverLoader()
    claim = loader.load(Path(__file__).resolve().parents[1] / "datasets" / "fever-mini" / "dev.jsonl", limit=1)[0]
    assert claim.choices == list(LABELS)
    question = claim.model_copy(update={"question": "Alpha Topic is a prerequisite of Beta Topic."})
    llm = schema_following_llm()
    trace = PlanningLoop(confidence_bar=0.0).run(question, Environment(view=view, llm=llm))
    assert trace.outcome == "answered" and trace.answer in LABELS  # a label, so the FEVER scorer can credit it
    assert loader.score_answer(question, trace.answer)["accuracy"] in (0.0, 1.0)
    prompt = llm.backend.calls[0]["messages"][1]["content"]
    assert "Options (answer with one of them): SUPPORTS; REFUTES; NOT ENOUGH INFO" in prompt


def test_linked_text_is_read_for_the_seeds_too(view):
    trace, calls = run(view, "What does Alpha Topic lead to?", [reply()] * 4, text_units_per_concept=1)
    assert trace.read_text_units[0] == "tu:alpha"  # the seed, named in the question, comes first
    assert {"tu:beta", "tu:delta"} <= set(trace.read_text_units)
    assert "[tu:alpha] Alpha Topic: Alpha Topic is a test concept." in calls[0]["messages"][1]["content"]
    assert not run(view, "What does Alpha Topic lead to?", [reply()] * 4)[0].read_text_units  # default: graph only


def test_one_shot_with_the_loops_budget_expands_several_hops_before_its_one_call(view):
    trace, _ = run(
        view,
        "Where does Grid Node 00 lead?",
        [reply("Grid Node 20", 0.9)],
        max_rounds=1,
        hops_per_round=4,
        frontier_cap=48,
    )
    assert len(trace.llm_calls) == 1 and len(trace.visited_entities) == 48  # the loop's 4 x 12, in one context
    assert [s.tool for s in trace.steps] == ["seed", *["expand"] * 4, "synthesize"]  # the last hop adds edges only
    assert rounds(trace)[0]["expanded"] == ["ent:g00"] and len(rounds(trace)[0]["frontier"]) == 47
    # with one hop, the same budget sees only the seed's 14 neighbours
    trace, _ = run(view, "Where does Grid Node 00 lead?", [reply("Grid Node 20", 0.9)], max_rounds=1, frontier_cap=48)
    assert len(trace.visited_entities) == 15
