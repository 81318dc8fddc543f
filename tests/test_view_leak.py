"""No ablation leaks what it hides: everything a system can obtain through the view is rendered
and searched for the removed entities' ids and names and for the hidden text.

What is rendered (every read a system can make): similarity search of entities, text units and
communities for each removed entity's name and the question; ``find_entity`` by name; details of
every entity (``entity``, ``text_units_of``, ``communities_of``); the neighbours of every entity;
every text unit; every community report; every relation; shortest paths between the kept
neighbours of removed entities; the subgraph of everything.

What must not appear (see the text rule in p000_neighborhoods/interventions.py)
    * a removed entity's id, name (whole word) or slug (the form a name takes in an id);
    * a sentence of a hidden text unit (four words or more), anywhere: in a description, a
      community report, a search hit ... Matching sentences, not whole text units, is what
      catches a description that quotes one sentence of a hidden paragraph;
    * the description of an entity masked by entity text mask.
The evidence a condition keeps on purpose is exempt: a removed entity's name inside the text of a
text unit the condition keeps readable by design (the baseline's cited text units, except under
cited removal, and the cited entities' own text units under the isolations and the controls),
and a hidden sentence that is also the sentence of a text unit the ablated view lets a system
read. Descriptions have no exemption, under text-only isolation either: it keeps every entity's
metadata, so metadata must quote no hidden text.

Runs on the bundled mini KB (datasets/2wiki-mini) and on a freshly generated world, both built
with the schema-following LLM, extraction off and summaries off: community reports are then
member lists naming their entities, so a report that survives a removal shows as a leak. The
KBs live in this process's graph database: Kùzu, or LadybugDB when scripts/test.sh runs the
file a second time with PROVBENCH_TEST_GRAPH_STORE=ladybug.
The last tests put the old rules back (orphaned text units only; community reports always
readable; descriptions quoting their own hidden text) and check that this test sees the leaks.

The LlamaIndex path gets the same check twice: everything the LlamaIndex view store gives
(provbench.integrations.llamaindex), and the prompts of a LlamaIndex pipeline run as the
``llamaindex`` system under each ablation of its own baseline (both stock retrievers, two hops,
node properties, and a model that offers every entity name as a keyword). Each has a control in
which the store ignores the view, and the leaks show.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from provbench.kb import GraphView
from provbench.model import Citations, Question, Trace
from provbench.testing import schema_following_llm
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader
from provbench_plugins.kb_builders.twowiki.builder import TwoWikiKBBuilder
from provbench_plugins.papers.p000_neighborhoods import interventions as I

REPO = Path(__file__).resolve().parents[1]
QUESTIONS_PER_KB = 2
ABLATIONS = [
    I.FullIsolation(),
    I.TextOnlyIsolation(),
    I.CitedRemoval(),
    I.RandomRemoval(repeats=1),
    I.EntityRemoval(),
    I.EntityRemoval(text="orphaned"),
    I.EntityTextMask(),
]


def ablation_id(ablation) -> str:
    orphaned = isinstance(ablation, I.EntityRemoval) and ablation.options.text == "orphaned"
    return ablation.name + ("-orphaned" if orphaned else "")


@dataclass
class KB:
    view: GraphView
    questions: list[Question]
    text_units: list[str]
    relations: list[str]
    communities: list[str]
    descriptions: dict[str, str]


def build(tmp: Path, dataset: Path) -> KB:
    questions = TwoWikiLoader().load(dataset)
    kb = TwoWikiKBBuilder(extract=False, summarize=False).build(
        questions, tmp / "kb", schema_following_llm(cache_dir=tmp / "llm")
    )
    view = kb.view()
    ids = {
        name: [row[0] for row in view._store.rows(query)]
        for name, query in (
            ("text_units", "MATCH (c:Chunk) RETURN c.id"),
            ("relations", "MATCH ()-[r:LINKS]->() RETURN r.id"),
            ("communities", "MATCH (m:Community) RETURN m.id"),
        )
    }
    descriptions = {e: view.entity(e).description for e in view.entity_ids()}
    return KB(view, questions, descriptions=descriptions, **ids)


@pytest.fixture(scope="module", params=["mini", "generated-world"])
def kb(request, tmp_path_factory, graph_store) -> KB:
    """Built in this process's graph database (conftest's ``graph_store``: Kùzu, or LadybugDB)."""
    from provbench.kb.backends import default_graph_store
    from provbench.kb.graphstore import graph_store_of
    from provbench_tools import world_2wiki

    tmp = tmp_path_factory.mktemp(f"leak-{request.param}-{graph_store}")
    dataset = REPO / "datasets" / "2wiki-mini" / "dev.json"
    if request.param == "generated-world":
        dataset = world_2wiki.write_world(tmp / "dev.json", n_questions=12, seed=7)
    with default_graph_store(graph_store):
        built = build(tmp, dataset)
    assert graph_store_of(tmp / "kb") == graph_store
    return built


def baseline_of(view: GraphView, question: Question) -> Trace:
    """A plausible agent baseline: visited = top entity hits and their neighbours, two of them cited
    with one of their text units."""
    hits = [h.id for h in view.search_entities(question.question, k=4)]
    visited = list(dict.fromkeys(hits + [n.entity.id for h in hits[:2] for n in view.neighbors(h, limit=3)]))
    cited = visited[:2]
    units = [t for e in cited for t in view.text_units_of(e)][:1]
    return Trace(
        question_id=question.id,
        system="agentic-graphrag",
        answer="x",
        visited_entities=visited,
        citations=Citations(entities=cited, text_units=units),
    )


def render(view: GraphView, kb: KB, queries: list[str], around: set[str]) -> list[tuple[str, str]]:
    """Everything the view gives, as (source, text) pairs; sources name descriptions and text-unit texts."""
    out: list[tuple[str, str]] = []

    def entity(e) -> None:
        out.append((f"entity:{e.id}", f"{e.id} | {e.name} | {e.label} | {e.text_unit_ids} | {e.community_ids}"))
        out.append((f"desc:{e.id}", e.description))

    for query in queries:
        hits = [
            *view.search_entities(query, k=50),
            *view.search_text_units(query, k=50),
            *view.search_communities(query, k=50),
        ]
        out += [("search", f"{h.kind} {h.id} {h.name}") for h in hits]
        found = view.find_entity(query)
        if found:
            entity(found)
    all_entities = sorted(kb.view.entity_ids())
    for eid in all_entities:
        found = view.entity(eid)
        if found:
            entity(found)
            out.append(("lists", f"{view.text_units_of(eid)} {view.communities_of(eid)}"))
        for nb in view.neighbors(eid):
            out.append(("neighbour", f"{nb.relation!r}"))
            entity(nb.entity)
    for tid in kb.text_units:
        unit = view.text_unit(tid)
        if unit:
            out += [(f"text:{tid}", unit.text), ("text-unit", f"{unit.id} {unit.document_id} {unit.entity_ids}")]
    for cid in kb.communities:
        c = view.community(cid)
        if c:
            out.append(("community", f"{c.id} {c.title} {c.summary} {c.entity_ids}"))
    out += [("relation", repr(r)) for r in map(view.relation, kb.relations) if r]
    kept = sorted({n.entity.id for e in around for n in kb.view.neighbors(e)} - around)[:8]
    out += [("path", repr(p)) for a in kept for b in kept if a < b for p in view.shortest_paths(a, b, max_hops=4)]
    graph = view.subgraph(all_entities)
    out += [("subgraph", f"{n} {d.get('name')}") for n, d in graph.nodes(data=True)]
    return out


def word(text: str) -> re.Pattern:
    return re.compile(rf"(?<![\w:-]){re.escape(text)}(?![\w-])")


SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def sentences(text: str) -> list[str]:
    """Sentences of four words or more, case and spacing folded."""
    return [s for s in (folded(p) for p in SENTENCE_END.split(text)) if len(s.split()) >= 4]


def kept_by_design(kb: KB, name: str, baseline: Trace, plan: I.HidePlan) -> set[str]:
    """Text units a condition keeps readable on purpose (module docstring); entity removal of
    orphaned text also keeps a removed entity's units that a kept entity links."""
    if name == "cited-removal":
        return set()
    cited = [kb.view.entity(e) for e in baseline.citations.entities]
    units = {t for e in plan.entities for t in kb.view.entity(e).text_unit_ids}
    shared = {t for t in units if not set(kb.view.text_unit(t).entity_ids) <= plan.entities}
    return (
        set(baseline.citations.text_units)
        | {t for e in cited if e for t in e.text_unit_ids}
        | (shared if name == "entity-removal-orphaned" else set())
    )


def leaks(
    kb: KB, name: str, plan: I.HidePlan, baseline: Trace, rendered: list[tuple[str, str]], readable: list[str]
) -> list[str]:
    """What ``rendered`` shows of what ``plan`` hides; ``readable``: the folded texts of the text
    units the ablated view lets a system read."""
    base, kept = kb.view, kept_by_design(kb, name, baseline, plan)
    from provbench_plugins.kb_builders.common.names import slug

    names: list[tuple[str, re.Pattern]] = []
    for eid in plan.entities:
        entity = base.entity(eid)
        names += [
            (f"removed id {eid}", word(eid)),
            (f"removed name of {eid}", word(entity.name)),
            (f"slug of removed {eid}", word(slug(entity.name))),
        ]
    texts = [
        (f"text of {tid}", s)
        for tid in plan.text_units
        for s in sentences(base.text_unit(tid).text)
        if not any(s in text for text in readable)
    ]
    masked = plan.hide_metadata_of & set(baseline.visited_entities) if name == "entity-text-mask" else set()
    shown = {d for e, d in kb.descriptions.items() if e not in plan.hide_metadata_of | plan.entities}
    texts += [
        (f"description of {eid}", folded(kb.descriptions[eid]))
        for eid in masked
        if kb.descriptions[eid] and kb.descriptions[eid] not in shown
    ]  # a description others share names no one
    found = set()
    for source, text in rendered:
        kind, _, item = source.partition(":")
        by_design = kind == "text" and item in kept
        found |= {
            f"{what} in {source}"
            for what, pattern in names
            if pattern.search(text) and not (by_design or kind == "text" and what.startswith("slug"))
        }
        found |= {f"{what} in {source}" for what, sentence in texts if sentence in folded(text)}
    return sorted(found)


def readable_texts(view: GraphView, kb: KB) -> list[str]:
    return [folded(unit.text) for tid in kb.text_units if (unit := view.text_unit(tid))]


def check(kb: KB, ablation, render_with=render, reads=lambda view: view) -> dict[str, list[str]]:
    """Leaks per question under one ablation (``render_with`` renders what a reader over
    ``reads(view)`` gives), with a control: the unmodified view shows every marker."""
    found = {}
    for question in kb.questions[:QUESTIONS_PER_KB]:
        baseline = baseline_of(kb.view, question)
        plan = ablation.plan(kb.view, question, baseline, random.Random(0))
        ablated = kb.view.hide(**plan.as_kwargs())
        names = [kb.view.entity(e).name for e in sorted(plan.entities)[:20]]
        rendered = render_with(
            reads(ablated), kb, [question.question, *names], set(plan.entities) | set(plan.hide_metadata_of)
        )
        found[question.id] = leaks(kb, ablation_id(ablation), plan, baseline, rendered, readable_texts(ablated, kb))
    return found


@pytest.mark.parametrize("ablation", ABLATIONS, ids=ablation_id)
def test_nothing_hidden_can_be_obtained_through_the_view(kb, ablation):
    leaked = {q: items for q, items in check(kb, ablation).items() if items}
    assert not leaked, f"{ablation.name} leaks: {leaked}"


@pytest.mark.parametrize("ablation", ABLATIONS, ids=ablation_id)
def test_control_every_plan_hides_something_the_unmodified_view_shows(kb, ablation):
    question = kb.questions[0]
    baseline = baseline_of(kb.view, question)
    plan = ablation.plan(kb.view, question, baseline, random.Random(0))
    assert plan.entities or plan.text_units or plan.hide_metadata_of
    names = [kb.view.entity(e).name for e in sorted(plan.entities)[:20]]
    rendered = render(kb.view, kb, [question.question, *names], set(plan.entities))
    ablated = readable_texts(kb.view.hide(**plan.as_kwargs()), kb)
    assert leaks(kb, ablation_id(ablation), plan, baseline, rendered, ablated), (
        "the markers must be visible without the ablation"
    )


def test_the_old_orphan_rule_leaks_the_removed_entities_text(kb, monkeypatch):
    def orphans_only(lookup, entities, keep_units=(), protected=()):
        entities = set(entities)
        units = {
            t
            for t in lookup.text_units_of_all(entities)
            if t not in set(keep_units) and set(lookup.entities_of(t)) <= entities
        }
        return frozenset(units), frozenset()

    monkeypatch.setattr(I, "text_hidden_with", orphans_only)
    assert any(check(kb, I.CitedRemoval()).values())
    assert any(check(kb, I.EntityRemoval()).values())


def test_readable_community_reports_would_leak(kb, monkeypatch):
    monkeypatch.setattr(GraphView, "_communities_hidden", lambda self: frozenset())
    leaked = [item for items in check(kb, I.CitedRemoval()).values() for item in items]
    assert any("in community" in item for item in leaked)


@pytest.mark.parametrize("ablation", [I.CitedRemoval(), I.EntityRemoval()], ids=lambda a: a.name)
def test_a_description_quoting_hidden_text_is_caught(kb, ablation, monkeypatch):
    """A knowledge base whose descriptions quote the first sentence of their entity's first text
    unit, and a view that does not hide them: the test must see the quote (one sentence of a
    multi-sentence paragraph, which whole-text-unit matching missed)."""
    quote = {}
    for eid in kb.view.entity_ids():
        units = kb.view.entity(eid).text_unit_ids
        quote[eid] = SENTENCE_END.split(kb.view.text_unit(units[0]).text)[0] if units else ""
    original = GraphView._entity

    def quoting(self, eid, *fields):
        entity = original(self, eid, *fields)
        return entity.model_copy(update={"description": quote.get(eid, "")})

    monkeypatch.setattr(GraphView, "_entity", quoting)
    leaked = [item for items in check(kb, ablation).values() for item in items]
    assert any(item.startswith("text of ") and " in desc:" in item for item in leaked), leaked


def test_the_designed_orderings_hold(kb):
    """Full isolation hides at least what text-only isolation hides; entity removal at least what
    entity text mask hides (same text, plus the entities), as section 2.3 designs the pairs; entity
    removal of orphaned text hides no more text than the default reading."""
    for question in kb.questions[:QUESTIONS_PER_KB]:
        baseline, rng = baseline_of(kb.view, question), random.Random(0)
        full, text_only = (a.plan(kb.view, question, baseline, rng) for a in (I.FullIsolation(), I.TextOnlyIsolation()))
        removal, mask = (a.plan(kb.view, question, baseline, rng) for a in (I.EntityRemoval(), I.EntityTextMask()))
        orphaned = I.EntityRemoval(text="orphaned").plan(kb.view, question, baseline, rng)
        assert text_only.text_units <= full.text_units and not text_only.entities
        assert removal.text_units == mask.text_units
        assert mask.hide_metadata_of <= removal.entities | removal.hide_metadata_of
        assert orphaned.entities == removal.entities and orphaned.text_units <= removal.text_units


def test_a_community_report_quoting_hidden_text_is_caught_under_text_only_isolation(kb, monkeypatch):
    """Text-only isolation keeps every community report, safe only while reports are written from
    names and relations (which it keeps): a report is checked like a description, so one whose
    summary quotes a member's text unit must show as a leak when that unit is hidden."""
    original = GraphView.community

    def quoting(self, community_id):
        report = original(self, community_id)
        if report is None:
            return None
        units = [t for e in report.entity_ids for t in kb.view.entity(e).text_unit_ids]
        quoted = " ".join(SENTENCE_END.split(kb.view.text_unit(t).text)[0] for t in units)
        return report.model_copy(update={"summary": quoted})

    monkeypatch.setattr(GraphView, "community", quoting)
    leaked = [item for items in check(kb, I.TextOnlyIsolation()).values() for item in items]
    assert any(item.startswith("text of ") and item.endswith(" in community") for item in leaked), leaked


# -- the LlamaIndex path: the view store, and a LlamaIndex pipeline's prompts ------------------------------


def render_store(view: GraphView, kb: KB, queries: list[str], around: set[str]) -> list[tuple[str, str]]:
    """Everything the LlamaIndex view store over ``view`` gives, as (source, text) pairs like :func:`render`."""
    from provbench.integrations.llamaindex import property_graph_store
    from llama_index.core.vector_stores.types import VectorStoreQuery

    store, out = property_graph_store(view), []

    def node(n) -> None:
        if hasattr(n, "name"):
            eid = n.properties.get("entity_id", n.name)
            out.append((f"entity:{eid}", f"{eid} | {n.name} | {n.label} | {n.properties.get('triplet_source_id')}"))
            out.append((f"desc:{eid}", n.properties.get("description", "")))
        else:
            out.append((f"text:{n.id}", n.text))

    every = kb.view.entities(kb.view.entity_ids())
    nodes = [*store.get(), *store.get(ids=[e.id for e in every] + [e.name for e in every] + kb.text_units)]
    for query in queries:
        nodes += store.vector_query(VectorStoreQuery(query_str=query, similarity_top_k=50))[0]
    triplets = store.get_triplets(entity_names=[e.name for e in every]) + store.get_rel_map(nodes, depth=3, limit=10**6)
    for source, relation, target in triplets:
        nodes += [source, target]
        out.append(("triplet", f"{source.id} {relation.label} {target.id} {relation.properties}"))
    for n in nodes:
        node(n)
    out += [(f"text:{n.node_id}", n.text) for n in store.get_llama_nodes(kb.text_units)]
    return out + [("schema", repr(store.get_schema()))]


@pytest.mark.parametrize("ablation", ABLATIONS, ids=ablation_id)
def test_nothing_hidden_can_be_obtained_through_the_llamaindex_store(kb, ablation):
    leaked = {q: items for q, items in check(kb, ablation, render_store).items() if items}
    assert not leaked, f"{ablation.name} leaks through the LlamaIndex store: {leaked}"


@pytest.mark.parametrize("ablation", ABLATIONS, ids=lambda a: a.name)
def test_control_a_store_that_ignores_the_view_leaks(kb, ablation):
    found = check(kb, ablation, render_store, reads=lambda view: kb.view)
    assert any(found.values()), "the store test must see what a store over the whole graph shows"


def leak_probe(index, llm, embed_model):
    """A LlamaIndex pipeline that puts all it can in its prompts: both stock retrievers, two hops,
    source text, and node properties (ids, descriptions)."""
    from llama_index.core.indices.property_graph import LLMSynonymRetriever, VectorContextRetriever
    from llama_index.core.query_engine import RetrieverQueryEngine

    store = index.property_graph_store
    retriever = index.as_retriever(
        sub_retrievers=[
            VectorContextRetriever(
                store, embed_model=embed_model, similarity_top_k=5, path_depth=2, include_properties=True
            ),
            LLMSynonymRetriever(store, llm=llm, path_depth=2, include_properties=True),
        ]
    )
    return RetrieverQueryEngine.from_args(retriever, llm=llm)


def pipeline_prompts(kb: KB, view: GraphView, question: Question) -> tuple[Trace, list[str]]:
    """The ``llamaindex`` system's trace and prompts; its model offers every entity name as a keyword
    (guessing a removed name is the model's doing, not a leak: the store must still not find it)."""
    from provbench.plugin_api import Environment
    from provbench.registry import default_registry
    from provbench.testing import scripted_llm

    every_name = "^".join(e.name for e in kb.view.entities(kb.view.entity_ids()))
    llm = scripted_llm([lambda m: every_name if "KEYWORDS:" in m[-1]["content"] else "an answer"] * 4)
    # one prompt for the whole context: LlamaIndex would split a long one mid-sentence, and a cut sentence
    # of a text unit the condition keeps could no longer be told from other text
    system = default_registry().create(
        "system", "llamaindex", factory="test_view_leak:leak_probe", context_window=1_000_000
    )
    trace = system.run(question, Environment(view=view, llm=llm))
    assert trace.outcome != "failed", trace.error  # "abstained": the ablation left nothing to retrieve
    return trace, [m["content"] for call in llm.backend.calls for m in call["messages"]]


def prompt_leaks(kb: KB, ablation) -> dict[str, list[str]]:
    """Leaks in the prompts of the ``llamaindex`` system under one ablation of its own baseline.
    The question and the text units a condition keeps by design (see the module docstring) are
    taken out of the prompts first."""
    found = {}
    for question in kb.questions[:QUESTIONS_PER_KB]:
        baseline, _ = pipeline_prompts(kb, kb.view, question)
        plan = ablation.plan(kb.view, question, baseline, random.Random(0))
        ablated = kb.view.hide(**plan.as_kwargs())
        _, prompts = pipeline_prompts(kb, ablated, question)
        kept = [kb.view.text_unit(t).text for t in kept_by_design(kb, ablation.name, baseline, plan)] + [
            question.question
        ]
        for text in sorted(kept, key=len, reverse=True):
            prompts = [p.replace(text, " ") for p in prompts]
        found[question.id] = leaks(
            kb, ablation.name, plan, baseline, [("prompt", p) for p in prompts], readable_texts(ablated, kb)
        )
    return found


@pytest.mark.parametrize("ablation", ABLATIONS, ids=lambda a: a.name)
def test_no_hidden_id_name_or_text_reaches_a_llamaindex_pipelines_prompts(kb, ablation, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    leaked = {q: items for q, items in prompt_leaks(kb, ablation).items() if items}
    assert not leaked, f"{ablation.name} leaks into the pipeline's prompts: {leaked}"


def test_control_a_pipeline_whose_store_ignores_the_view_leaks_into_its_prompts(kb, monkeypatch):
    import provbench.integrations.llamaindex as integration

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    whole = integration.property_graph_index
    monkeypatch.setattr(integration, "property_graph_index", lambda view, *args, **kw: whole(kb.view, *args, **kw))
    # cited removal takes away what the baseline read: a store over the whole graph shows it again
    assert any(prompt_leaks(kb, I.CitedRemoval()).values())
