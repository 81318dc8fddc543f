"""The six graph ablations on a hand-built KB (tests/interventions_helpers.py): for each, exactly
which entities, text units and metadata the view hides, checked on the plan and on the view."""

from __future__ import annotations

import random

import pytest

from interventions_helpers import (  # noqa: F401 (fixtures)
    A,
    ALL_ENTITIES,
    ALL_TEXT_UNITS,
    B,
    C,
    D,
    E,
    F,
    G,
    ablation_kb,
    ablation_view,
    baseline_trace,
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
    # every text unit of a removed entity except the cited tu:2 and A's own tu:1 (shared with B)
    assert plan.text_units == {"tu:3", "tu:4", "tu:5", "tu:7", "tu:8"}
    assert plan.hide_metadata_of == frozenset()
    assert set(isolated.entity_ids()) == {A}
    assert readable_text_units(isolated) == {"tu:1", "tu:2", "tu:6", "tu:9"}
    assert isolated.text_units_of(A) == ["tu:1", "tu:6"]  # the cited entity's own text stays readable
    assert isolated.neighbors(A) == []
    assert isolated.entity(A).description  # cited metadata untouched


@pytest.mark.parametrize("ablation", [FullIsolation, TextOnlyIsolation])
def test_isolation_hiding_shared_text_takes_the_cited_entitys_shared_unit(view, ablation):
    plan, isolated = apply(ablation(shared_text="hide"), view)
    assert plan.text_units == {"tu:1", "tu:3", "tu:4", "tu:5", "tu:7", "tu:8"}  # tu:1 names B too
    assert isolated.text_units_of(A) == ["tu:6"]
    assert apply(ablation(shared_text="keep"), view)[0].text_units == plan.text_units - {"tu:1"}


@pytest.mark.parametrize("ablation", [FullIsolation, TextOnlyIsolation])
def test_isolation_keeps_a_cited_entitys_own_text_not_paragraphs_naming_it(view, ablation):
    """Citing the place E, which has no paragraph of its own, keeps neither D's tu:4 nor F's tu:5,
    though both name it: only the cited evidence stays (A's own tu:1 and tu:6, the cited tu:2)."""
    plan, isolated = apply(ablation(), view, baseline_trace(cited=(A, E)))
    assert plan.text_units == {"tu:3", "tu:4", "tu:5", "tu:7", "tu:8"}
    assert readable_text_units(isolated) == {"tu:1", "tu:2", "tu:6", "tu:9"}
    assert isolated.text_units_of(E) == [] and isolated.entity(E).own_text_unit_ids == ()


def test_text_only_isolation_blocks_text_but_keeps_structure(view):
    plan, masked = apply(TextOnlyIsolation(), view)
    assert plan.entities == frozenset() and plan.hide_metadata_of == frozenset()
    # the same text as full isolation: every text unit of a non-cited entity but A's and the cited tu:2
    assert plan.text_units == {"tu:3", "tu:4", "tu:5", "tu:7", "tu:8"}
    assert set(masked.entity_ids()) == ALL_ENTITIES
    assert masked.entity(D).description.startswith("Film production company.")  # metadata visible
    assert masked.text_units_of(D) == []
    assert masked.text_units_of(B) == ["tu:1", "tu:2"]  # A's text unit and the cited one stay
    assert {n.entity.id for n in masked.neighbors(B)} == {A, C, D}


def test_cited_removal(view):
    plan, removed = apply(CitedRemoval(), view)
    assert plan.entities == {A}
    # A's text goes with it (tu:1 though B shares it), and so does the cited tu:2 (A is not linked to it)
    assert plan.text_units == {"tu:1", "tu:2", "tu:6"}
    assert plan.notes == [
        "hides the baseline's 1 cited text unit(s); 1 of them linked to no cited entity",
        "1 removed entities: 0 of their 2 own text unit(s) still readable",
    ]
    assert plan.hide_metadata_of == frozenset()  # B's and C's descriptions quote no hidden text
    assert removed.entity(A) is None and A not in set(removed.entity_ids())
    assert {n.entity.id for n in removed.neighbors(B)} == {C, D}
    assert readable_text_units(removed) == ALL_TEXT_UNITS - {"tu:1", "tu:2", "tu:6"}
    assert removed.text_unit("tu:2") is None and removed.entity(B).description == "A 1990 drama film."


def test_unknown_cited_ids_are_ignored_and_noted(view):
    plan, _ = apply(CitedRemoval(), view, baseline_trace(cited=(A, "ent:ghost")))
    assert plan.entities == {A}
    assert plan.notes[0] == "1 cited entity id(s) not in the knowledge base were ignored"


def test_entity_removal_removes_visited_but_uncited(view):
    plan, removed = apply(EntityRemoval(), view)
    assert plan.entities == {B, C}
    # B's and C's text but the cited tu:2 and the cited entity A's tu:1
    assert plan.text_units == {"tu:3", "tu:7"}
    assert plan.hide_metadata_of == {D}  # its description quotes the hidden tu:3
    assert set(removed.entity_ids()) == ALL_ENTITIES - {B, C}
    assert removed.neighbors(A) == []
    assert readable_text_units(removed) == ALL_TEXT_UNITS - {"tu:3", "tu:7"}
    assert removed.text_units_of(A) == ["tu:1", "tu:6"]  # the control keeps the cited entity's text


def test_entity_removal_of_orphaned_text_keeps_the_units_a_kept_entity_links(view):
    """``text: orphaned``: B and C go with their edges, but only C's tu:7 is hidden: tu:3 (B's own
    paragraph) also links the kept D, so it stays readable, and D's description quoting it stays."""
    plan, removed = apply(EntityRemoval(text="orphaned"), view)
    assert plan.entities == {B, C} and set(removed.entity_ids()) == ALL_ENTITIES - {B, C}
    assert plan.text_units == {"tu:7"} and plan.hide_metadata_of == frozenset()
    assert readable_text_units(removed) == ALL_TEXT_UNITS - {"tu:7"}
    assert removed.neighbors(A) == [] and removed.text_unit("tu:3").text.startswith("Blue River")
    mask, _ = apply(EntityTextMask(), view)
    assert mask.text_units - plan.text_units == {"tu:3"}  # the mask now hides text this removal keeps
    assert EntityRemoval().options.text == "linked"


def test_entity_text_mask_hides_text_and_metadata_of_visited_but_uncited(view):
    plan, masked = apply(EntityTextMask(), view)
    assert plan.entities == frozenset()
    assert plan.hide_metadata_of == {B, C, D}  # D quotes the hidden tu:3
    assert plan.text_units == {"tu:3", "tu:7"}  # the same text as entity removal
    entity_b = masked.entity(B)
    assert (entity_b.name, entity_b.label, entity_b.description) == ("Blue River", "", "")
    assert masked.entity(A).description and masked.entity(E).description  # others untouched
    assert masked.text_units_of(B) == ["tu:1", "tu:2"] and masked.text_units_of(C) == ["tu:2"]
    assert readable_text_units(masked) == ALL_TEXT_UNITS - {"tu:3", "tu:7"}


def test_a_description_quoting_hidden_text_is_hidden_only_when_it_quotes():
    from provbench_plugins.papers.p000_neighborhoods.interventions import quotes

    text = "Blue River was produced by Dune Studio. It opened in 1990."
    assert quotes("Film production company. Blue River was produced by Dune Studio.", [text])
    assert quotes("It opened in 1990.", [text])  # a whole sentence of the text
    assert quotes("blue  river was PRODUCED by dune studio", [text])  # case and spacing ignored
    assert not quotes("Film production company.", [text])
    assert not quotes("A 1990 film.", ["A 1990 film. Other words here."])  # under four words: no quote


@pytest.mark.parametrize("ablation", [CitedRemoval, RandomRemoval, EntityRemoval, EntityTextMask])
def test_metadata_is_hidden_only_when_it_would_show_hidden_text(view, ablation):
    """The old rule hid the metadata of every kept entity sharing a hidden text unit (B under cited
    removal); now only a description quoting one of its hidden text units goes."""
    plan, ablated = apply(ablation(search_k=0) if ablation is RandomRemoval else ablation(), view)
    for entity_id in plan.hide_metadata_of - plan.entities:
        hidden_own = set(view.entity(entity_id).text_unit_ids) & plan.text_units
        assert hidden_own and (entity_id in {B, C} and ablation is EntityTextMask or entity_id == D)
    for entity in (ablated.entity(e) for e in ALL_ENTITIES - plan.entities - plan.hide_metadata_of):
        assert entity.description == view.entity(entity.id).description


@pytest.mark.parametrize("ablation", [RandomRemoval, EntityRemoval, EntityTextMask])
def test_the_controls_keep_the_cited_entities_text(view, ablation):
    baseline = baseline_trace(cited=(A, B), visited=(A, B, C, D))
    for seed in range(4):
        plan, ablated = apply(ablation(), view, baseline, seed)
        assert {"tu:1", "tu:2", "tu:3", "tu:6"} <= readable_text_units(ablated), (ablation.name, seed)
        assert not plan.text_units & {"tu:1", "tu:2", "tu:3", "tu:6"}


@pytest.mark.parametrize("cited, expected_size", [((A,), 1), ((A, D), 2)])
def test_random_removal_is_seeded_same_sized_and_spares_cited(view, cited, expected_size):
    ablation = RandomRemoval(search_k=0)
    baseline = baseline_trace(cited=cited)
    chosen = [apply(ablation, view, baseline, seed)[0].entities for seed in range(12)]
    assert all(len(c) == expected_size for c in chosen)
    assert all(not (c & set(cited)) for c in chosen)
    # plausibly retrievable with search_k=0 and not visited: within 2 hops of {A, B, C} (plus D when cited)
    pool = {D, E} - set(cited) | ({F} if D in cited else set())
    assert set().union(*chosen) <= pool
    assert apply(ablation, view, baseline, 7)[0].entities == apply(ablation, view, baseline, 7)[0].entities
    if len(pool) > expected_size:
        assert len(set(chosen)) > 1  # the seed matters


def test_random_removal_draws_not_visited_entities_first(view):
    """Visited-but-uncited entities are Study 3's target: the control leaves them while it can."""
    ablation = RandomRemoval(search_k=0, hops=0)  # plausibly retrievable: only the visited {A, B, C}
    for seed in range(8):
        plan, removed = apply(ablation, view, seed=seed)
        assert len(plan.entities) == 1 and plan.entities <= {D, E, F, G}, seed
        assert set(removed.entity_ids()) == ALL_ENTITIES - plan.entities
        assert "1 drawn from the rest of the graph" in plan.notes[0]
    for seed in range(4):  # with a 2-hop pool, its not-visited members are enough
        assert apply(RandomRemoval(search_k=0), view, seed=seed)[0].entities <= {D, E}


def test_random_removal_takes_visited_entities_last(view):
    baseline = baseline_trace(cited=(A, B), visited=tuple(ALL_ENTITIES))
    plan, _ = apply(RandomRemoval(search_k=0), view, baseline, seed=1)
    assert len(plan.entities) == 2 and plan.entities <= {C, D, E, F, G}
    assert plan.notes[-3].endswith("drawn from the visited-but-uncited entities")
    assert plan.notes[-2] == "2 of 2 drawn entities were on the trajectory (visited)"  # every entity was visited


def test_random_removal_drawn_uniformly_takes_visited_but_uncited_entities_too(view):
    """``draw: uniform`` samples the non-cited pool as the paper words it: with hops=0 and no search
    that pool is the visited-but-uncited {B, C}, which the default draw leaves for the rest of the graph."""
    drawn = [apply(RandomRemoval(search_k=0, hops=0, draw="uniform"), view, seed=s)[0] for s in range(8)]
    assert {frozenset(p.entities) for p in drawn} == {frozenset({B}), frozenset({C})}
    assert all(p.notes[-2] == "1 of 1 drawn entities were on the trajectory (visited)" for p in drawn)
    default = apply(RandomRemoval(search_k=0, hops=0), view)[0]
    assert default.notes[-2] == "0 of 1 drawn entities were on the trajectory (visited)"
    small = apply(RandomRemoval(search_k=0, hops=0, draw="uniform"), view, baseline_trace(cited=(A, B, C)), 3)[0]
    assert len(small.entities) == 3 and small.entities <= {D, E, F, G}  # the pool {} topped up from the rest
    assert small.notes[0] == "plausibly retrievable entities: 0; 3 drawn from the rest"


def test_random_removal_hides_the_text_but_not_the_cited_entitys(view):
    for seed in range(6):
        plan, _ = apply(RandomRemoval(search_k=0), view, seed=seed)
        assert plan.entities in ({D}, {E})
        assert plan.text_units == ({"tu:3", "tu:4"} if plan.entities == {D} else {"tu:4", "tu:5"})


def test_random_removal_tops_up_a_small_pool(view):
    baseline = baseline_trace(cited=(A, B, C), visited=(A, B, C))
    plan, _ = apply(RandomRemoval(search_k=0, hops=0), view, baseline, seed=3)
    assert len(plan.entities) == 3 and plan.entities <= {D, E, F, G}
    assert plan.notes[0] == ("plausibly retrievable, not-visited entities: 0; 3 drawn from the rest of the graph")


def test_random_removal_pool_includes_question_hits(view):
    ablation = RandomRemoval(search_k=3, hops=0)
    labels = label_entities(baseline_trace())
    from provbench_plugins.papers.p000_neighborhoods.interventions import lookup_for

    pool = ablation.candidate_pool(
        view, lookup_for(view), Question(id="q", question="Gale Park oak trees", answer="x"), labels
    )
    assert G in pool and {A, B, C} <= pool


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"repeats": 0},
            r"intervention '(p000/)?random-removal': bad options: repeats=0: .*greater than or equal to 1",
        ),
        ({"hops": "2"}, r"hops='2': Input should be a valid integer"),
        ({"search_k": -1}, r"search_k=-1"),
        ({"hide_orphan_text_units": False}, r"hide_orphan_text_units=False: Extra inputs"),  # one text rule, no option
        ({"repeat": 2}, r"repeat=2: Extra inputs .*known options: repeats, hops, search_k, draw"),
        ({"draw": "visited"}, r"draw='visited': Input should be 'not-visited-first' or 'uniform'"),
    ],
)
def test_random_removal_options_are_validated(options, message):
    with pytest.raises(UserError, match=message):
        RandomRemoval(**options)
    with pytest.raises(UserError, match=message):  # the registry gives the same message
        default_registry().create("intervention", "random-removal", **options)


def test_ablations_take_no_text_rule_option():
    with pytest.raises(UserError, match="intervention 'cited-removal': bad options: takes no options"):
        CitedRemoval(hide_orphan_text_units=False)
    with pytest.raises(UserError, match=r"hide_orphan_text_units=False: Extra inputs .*known options: text"):
        EntityRemoval(hide_orphan_text_units=False)
    with pytest.raises(UserError, match=r"text='shared': Input should be 'linked' or 'orphaned'"):
        default_registry().create("intervention", "entity-removal", text="shared")
    with pytest.raises(
        UserError,
        match=r"intervention 'p000/cited-removal': bad options: .*"
        r"unknown option 'hide_orphan_text_units' \(known options: none\)",
    ):
        default_registry().create("intervention", "cited-removal", hide_orphan_text_units=False)


@pytest.mark.parametrize("name", ["full-isolation", "text-only-isolation"])
def test_the_isolations_take_shared_text(name):
    assert default_registry().create("intervention", name).options.shared_text == "keep"
    assert default_registry().create("intervention", name, shared_text="hide").options.shared_text == "hide"
    with pytest.raises(UserError, match=r"shared_text='drop': Input should be 'keep' or 'hide'"):
        default_registry().create("intervention", name, shared_text="drop")


def test_registration_and_repeats():
    from provbench_plugins.papers.p000_neighborhoods import provbench_register_interventions

    registered = provbench_register_interventions()
    assert set(registered) == {
        "full-isolation",
        "text-only-isolation",
        "cited-removal",
        "random-removal",
        "entity-removal",
        "entity-text-mask",
    }
    assert all(cls.level == "graph" for cls in ABLATIONS)
    assert RandomRemoval().repeats == 3 and RandomRemoval(repeats=5).repeats == 5
    assert CitedRemoval().repeats == 1


def test_a_record_counts_the_community_reports_a_removal_hides(view):
    """Any removed member hides a report: the record's summary says how many (Table 2's note)."""
    assert view.hidden_summary() == {}
    communities = view.communities_of(A)
    summary = view.hide(entities=[A]).hidden_summary()
    assert communities and summary["communities"] == {"count": len(communities), "ids": communities}
    assert summary["entities"] == {"count": 1, "ids": [A]}


@pytest.mark.parametrize("ablation", [EntityRemoval, EntityTextMask])
def test_study3_takes_a_visited_entitys_own_paragraph_that_names_a_cited_entity(view, ablation):
    """D's own tu:4 names the cited place E: the old rule kept every text unit linked to a cited
    entity, so it stayed readable; only the cited entities' own text (E has none) is protected now."""
    baseline = baseline_trace(cited=(A, E), visited=(A, B, C, D), cited_text_units=())
    plan, ablated = apply(ablation(), view, baseline)
    assert plan.text_units == {"tu:2", "tu:3", "tu:4", "tu:7"}
    assert readable_text_units(ablated) == {"tu:1", "tu:5", "tu:6", "tu:8", "tu:9"}
    what = "removed" if ablation is EntityRemoval else "masked"
    assert plan.notes[-1] == f"3 {what} entities: 0 of their 4 own text unit(s) still readable"


def test_every_condition_notes_the_targeted_own_text_left_readable(view):
    """The cited tu:2 is C's own text: the controls keep it, and their notes count it."""
    notes = {cls.name: apply(cls(), view)[0].notes[-1] for cls in ABLATIONS}
    assert notes["entity-removal"] == "2 removed entities: 1 of their 3 own text unit(s) still readable"
    assert notes["entity-text-mask"] == "2 masked entities: 1 of their 3 own text unit(s) still readable"
    assert (
        notes["full-isolation"]
        == notes["text-only-isolation"].replace("non-cited", "removed")
        == ("6 removed entities: 1 of their 6 own text unit(s) still readable")
    )
    assert notes["random-removal"].endswith("0 of their 1 own text unit(s) still readable")


@pytest.mark.parametrize("ablation", [FullIsolation, TextOnlyIsolation, RandomRemoval, EntityRemoval, EntityTextMask])
def test_cited_community_reports_stay_readable(view, ablation):
    every = sorted({c for e in ALL_ENTITIES for c in view.communities_of(e)})
    cited = baseline_trace(visited=tuple(ALL_ENTITIES - {G}))
    cited.citations.communities = every + ["com:ghost"]  # an unknown id is not kept
    for seed in range(3):
        plan, ablated = apply(ablation(), view, cited, seed)
        assert plan.keep_communities == set(every)
        assert all(ablated.community(c) is not None for c in every), (ablation.name, seed)
        assert ablated.hidden_summary()["keep_communities"]["count"] == len(every)


def test_cited_removal_takes_the_cited_community_reports(view):
    baseline = baseline_trace()
    baseline.citations.communities = view.communities_of(A)
    plan, removed = apply(CitedRemoval(), view, baseline)
    assert plan.keep_communities == frozenset()
    assert all(removed.community(c) is None for c in view.communities_of(A))
