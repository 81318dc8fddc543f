"""The six graph ablations on a hand-built KB (tests/interventions_helpers.py): for each, exactly
which entities, text units and metadata the view hides, checked on the plan and on the view."""

from __future__ import annotations

import random

import pytest

from interventions_helpers import (  # noqa: F401 (fixtures)
    A, ALL_ENTITIES, ALL_TEXT_UNITS, B, C, D, E, F, G, ablation_kb, ablation_view, baseline_trace,
)
from provbench.errors import UserError
from provbench.registry import default_registry
from provbench.model import Question
from provbench_plugins.papers.p000_neighborhoods.interventions import (
    ABLATIONS,
    CitedRemoval,
    EntityRemoval,
    EntityTextMask,
    FullIsolation,
    RandomRemoval,
    TextOnlyIsolation,
    label_entities,
)

QUESTION = Question(id="q1", question="Who directed Blue River?", answer="Ann Lee")


@pytest.fixture()
def view(ablation_view):
    return ablation_view


def apply(intervention, view, baseline=None, seed=0):
    baseline = baseline or baseline_trace()
    plan = intervention.plan(view, QUESTION, baseline, random.Random(seed))
    return plan, intervention.make_view(view, QUESTION, baseline, random.Random(seed))


def readable_text_units(view) -> set[str]:
    return {tu for tu in ALL_TEXT_UNITS if view.text_unit(tu) is not None}


def test_labels():
    labels = label_entities(baseline_trace(cited=(A, "ent:ghost"), visited=(A, B, C)))
    assert labels.cited == {A, "ent:ghost"} and labels.visited_uncited == {B, C}
    assert labels.cited_unvisited == {"ent:ghost"}
    assert [labels.label(e) for e in (A, B, D)] == ["cited", "visited-uncited", "not-visited"]


def test_full_isolation_keeps_only_cited_entities_and_their_text(view):
    plan, isolated = apply(FullIsolation(), view)
    assert plan.entities == ALL_ENTITIES - {A}
    # every text unit of a removed entity (tu:1 too, though A shares it) except the cited tu:2
    assert plan.text_units == {"tu:1", "tu:3", "tu:4", "tu:5", "tu:7", "tu:8"}
    assert plan.hide_metadata_of == frozenset()  # A shares tu:1 but is cited: kept evidence
    assert set(isolated.entity_ids()) == {A}
    assert readable_text_units(isolated) == {"tu:2", "tu:6", "tu:9"}
    assert isolated.neighbors(A) == []
    assert isolated.entity(A).description  # cited metadata untouched


def test_text_only_isolation_blocks_text_but_keeps_structure(view):
    plan, masked = apply(TextOnlyIsolation(), view)
    assert plan.entities == frozenset() and plan.hide_metadata_of == frozenset()
    # the same text as full isolation: every text unit of a non-cited entity except the cited tu:2
    assert plan.text_units == {"tu:1", "tu:3", "tu:4", "tu:5", "tu:7", "tu:8"}
    assert set(masked.entity_ids()) == ALL_ENTITIES
    assert masked.entity(D).description == "Film production company."  # metadata visible
    assert masked.text_units_of(D) == []
    assert masked.text_units_of(B) == ["tu:2"]  # the cited text unit stays
    assert {n.entity.id for n in masked.neighbors(B)} == {A, C, D}


def test_cited_removal(view):
    plan, removed = apply(CitedRemoval(), view)
    assert plan.entities == {A}
    assert plan.text_units == {"tu:1", "tu:6"}  # A's text goes with it, tu:1 though B shares it
    assert plan.hide_metadata_of == {B}  # B's description may quote the hidden tu:1
    assert removed.entity(A) is None and A not in set(removed.entity_ids())
    assert {n.entity.id for n in removed.neighbors(B)} == {C, D}
    assert readable_text_units(removed) == ALL_TEXT_UNITS - {"tu:1", "tu:6"}
    assert removed.text_unit("tu:1") is None and removed.entity(B).description == ""


def test_unknown_cited_ids_are_ignored_and_noted(view):
    plan, _ = apply(CitedRemoval(), view, baseline_trace(cited=(A, "ent:ghost")))
    assert plan.entities == {A}
    assert plan.notes == ["1 cited entity id(s) not in the knowledge base were ignored"]


def test_entity_removal_removes_visited_but_uncited(view):
    plan, removed = apply(EntityRemoval(), view)
    assert plan.entities == {B, C}
    assert plan.text_units == {"tu:1", "tu:3", "tu:7"}  # all of B's and C's text but the cited tu:2
    assert plan.hide_metadata_of == {D}  # shares tu:3; A shares tu:1 but is cited
    assert set(removed.entity_ids()) == ALL_ENTITIES - {B, C}
    assert removed.neighbors(A) == []
    assert readable_text_units(removed) == ALL_TEXT_UNITS - {"tu:1", "tu:3", "tu:7"}


def test_entity_text_mask_hides_text_and_metadata_of_visited_but_uncited(view):
    plan, masked = apply(EntityTextMask(), view)
    assert plan.entities == frozenset()
    assert plan.hide_metadata_of == {B, C, D}  # D shares the hidden tu:3
    assert plan.text_units == {"tu:1", "tu:3", "tu:7"}  # the same text as entity removal
    entity_b = masked.entity(B)
    assert (entity_b.name, entity_b.label, entity_b.description) == ("Blue River", "", "")
    assert masked.entity(A).description and masked.entity(E).description  # others untouched
    assert masked.text_units_of(B) == ["tu:2"] and masked.text_units_of(C) == ["tu:2"]
    assert readable_text_units(masked) == ALL_TEXT_UNITS - {"tu:1", "tu:3", "tu:7"}


@pytest.mark.parametrize("cited, expected_size", [((A,), 1), ((A, D), 2)])
def test_random_removal_is_seeded_same_sized_and_spares_cited(view, cited, expected_size):
    ablation = RandomRemoval(search_k=0)
    baseline = baseline_trace(cited=cited)
    chosen = [apply(ablation, view, baseline, seed)[0].entities for seed in range(12)]
    assert all(len(c) == expected_size for c in chosen)
    assert all(not (c & set(cited)) for c in chosen)
    # plausibly retrievable with search_k=0: within 2 hops of {A, B, C} (plus D when cited): never F, G
    pool = {B, C, D, E} - set(cited) | ({F} if D in cited else set())
    assert set().union(*chosen) <= pool
    assert len(set(chosen)) > 1  # the seed matters
    assert apply(ablation, view, baseline, 7)[0].entities == apply(ablation, view, baseline, 7)[0].entities


def test_random_removal_hides_the_text_and_removes_in_the_view(view):
    ablation = RandomRemoval(search_k=0, hops=0)  # pool: visited but not cited = {B, C}
    for seed in range(6):
        plan, removed = apply(ablation, view, seed=seed)
        assert plan.entities in ({B}, {C})
        assert plan.text_units == ({"tu:7"} if plan.entities == {C} else {"tu:1", "tu:3"})  # tu:2 is cited
        assert set(removed.entity_ids()) == ALL_ENTITIES - plan.entities


def test_random_removal_tops_up_a_small_pool(view):
    baseline = baseline_trace(cited=(A, B, C), visited=(A, B, C))
    plan, _ = apply(RandomRemoval(search_k=0, hops=0), view, baseline, seed=3)
    assert len(plan.entities) == 3 and plan.entities <= {D, E, F, G}
    assert "pool of plausibly retrievable entities had 0" in plan.notes[0]


def test_random_removal_pool_includes_question_hits(view):
    ablation = RandomRemoval(search_k=3, hops=0)
    labels = label_entities(baseline_trace())
    from provbench_plugins.papers.p000_neighborhoods.interventions import lookup_for

    pool = ablation.candidate_pool(view, lookup_for(view), Question(id="q", question="Gale Park oak trees",
                                                                     answer="x"), labels)
    assert G in pool and {A, B, C} <= pool


@pytest.mark.parametrize("options, message", [
    ({"repeats": 0}, r"intervention '(p000/)?random-removal': bad options: repeats=0: .*greater than or equal to 1"),
    ({"hops": "2"}, r"hops='2': Input should be a valid integer"),
    ({"search_k": -1}, r"search_k=-1"),
    ({"hide_orphan_text_units": False}, r"hide_orphan_text_units=False: Extra inputs"),  # one text rule, no option
    ({"repeat": 2}, r"repeat=2: Extra inputs .*known options: repeats, hops, search_k"),
])
def test_random_removal_options_are_validated(options, message):
    with pytest.raises(UserError, match=message):
        RandomRemoval(**options)
    with pytest.raises(UserError, match=message):  # the registry gives the same message
        default_registry().create("intervention", "random-removal", **options)


def test_ablations_take_no_text_rule_option():
    for ablation in (TextOnlyIsolation, CitedRemoval, EntityRemoval):
        with pytest.raises(UserError, match=f"intervention '{ablation.name}': bad options: takes no options"):
            ablation(hide_orphan_text_units=False)
    with pytest.raises(UserError, match=r"intervention 'p000/text-only-isolation': bad options: .*"
                                        r"unknown option 'hide_orphan_text_units' \(known options: none\)"):
        default_registry().create("intervention", "text-only-isolation", hide_orphan_text_units=False)


def test_registration_and_repeats():
    from provbench_plugins.papers.p000_neighborhoods import provbench_register_interventions

    registered = provbench_register_interventions()
    assert set(registered) == {"full-isolation", "text-only-isolation", "cited-removal", "random-removal",
                               "entity-removal", "entity-text-mask"}
    assert all(cls.level == "graph" for cls in ABLATIONS)
    assert RandomRemoval().repeats == 3 and RandomRemoval(repeats=5).repeats == 5
    assert CitedRemoval().repeats == 1
