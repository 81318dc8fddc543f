"""The shared KB-building blocks (kb_builders/common): matcher, extraction caps, Leiden options, build info."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from provbench.kb.communities import detect_clusters
from provbench.kb.embeddings import VectorIndex, normalise
from provbench_plugins.kb_builders.common import prompts as P
from provbench_plugins.kb_builders.common.buildinfo import kb_counts, problems, standard_info
from provbench_plugins.kb_builders.common.extraction import ExtractionCounts, ExtractionSettings, apply_extraction
from provbench_plugins.kb_builders.common.graph import Graph
from provbench_plugins.kb_builders.common.llm_calls import LLMTally, effective_workers, run_calls
from provbench_plugins.kb_builders.common.matcher import MentionMatcher, mention_pattern
from provbench_plugins.kb_builders.twowiki import builder as K
from provbench_plugins.kb_builders.twowiki.gold import add_gold_graph
from provbench_plugins.kb_builders.twowiki.questions import build_corpus, read_question

# ---------------------------------------------------------------------------------------------
# the matcher finds exactly what one regular expression per name finds


TRICKY = ["Vale", "orin vale", "A.B. Smith", "O'Neil", "St. Louis", "x", "1987", "Harbor (film)", "Ünal Çelik"]


def regex_found(names, text):
    return {n for n in names if mention_pattern(n).search(text)}


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Orin  Vale\nmet A.B. Smith in St. Louis.", {"Vale", "orin vale", "A.B. Smith", "St. Louis"}),
        ("Valentine O'Neil, 1987x", {"O'Neil"}),  # "Vale" inside "Valentine" and "1987" inside "1987x" are not words
        ("x-ray; Glass Harbor (film) by ÜNAL ÇELIK", {"x", "Harbor (film)", "Ünal Çelik"}),
    ],
)
def test_matcher_agrees_with_the_regex_on_edge_cases(text, expected):
    assert MentionMatcher(TRICKY).names_in(text) == regex_found(TRICKY, text) == expected


def test_matcher_agrees_with_the_regex_on_a_generated_world(tmp_path):
    from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader
    from provbench_tools.world_2wiki import write_world

    questions = TwoWikiLoader().load(write_world(tmp_path / "w.json", n_questions=40, seed=3))
    data = [read_question(q) for q in questions]
    corpus = build_corpus(data, K.parse_options({}))
    graph = Graph()
    add_gold_graph(graph, corpus, data)
    names = [d.name for d in graph.entities.values()] + [p.title for q in data for p in q.paragraphs] + TRICKY
    matcher = MentionMatcher(names)
    linked = matcher.link(corpus.texts())
    assert len(linked) > 50  # the world is big enough to say something
    for tu_id, text in corpus.texts().items():
        assert {n for n, units in linked.items() if tu_id in units} == regex_found(set(names), text), tu_id


def test_an_empty_matcher_finds_nothing():
    assert MentionMatcher([]).names_in("anything") == set()


# ---------------------------------------------------------------------------------------------
# extraction caps


def test_caps_reach_the_schema_and_are_enforced_on_replies():
    schema = ExtractionSettings(max_entities=2, max_relations=1).schema
    assert schema["properties"]["entities"]["maxItems"] == 2
    assert schema["properties"]["relations"]["maxItems"] == 1
    assert (
        K.parse_options({"max_entities_per_unit": 20})
        .extraction_settings()
        .schema["properties"]["entities"]["maxItems"]
        == 20
    )
    graph = Graph()
    from provbench.kb.types import TextUnit

    tu = TextUnit(id="tu:0", text="Ada Quill, Bo Lark and Cy Moss met Di Fern.", document_id="doc:x")
    counts = ExtractionCounts()
    reply = {
        "entities": [{"name": n, "type": "PERSON"} for n in ("Ada Quill", "Bo Lark", "Cy Moss")],
        "relations": [{"source": "Ada Quill", "relation": "met", "target": t} for t in ("Bo Lark", "Di Fern")],
    }
    apply_extraction(graph, tu, reply, counts, ExtractionSettings(max_entities=2, max_relations=1))
    assert counts.over_cap_items == 2
    assert graph.find("Cy Moss") is None and graph.find("Di Fern") is None
    assert counts.relations_added == 1


def test_defaults_leave_room_for_the_papers_density():
    options = K.parse_options({})
    # paper 000: 1,692 relations over 318 text units (about 5.3 each); the old caps (4 and 3) could not get there
    assert options.max_relations_per_unit * 318 >= 1692 and options.max_entities_per_unit * 318 >= 1815
    assert options.extraction_max_tokens >= 25 * (options.max_entities_per_unit + options.max_relations_per_unit)


def test_the_builder_sends_the_capped_schema(tmp_path):
    from kb_2wiki_helpers import scripted_kb_llm, tiny_questions

    llm, backend = scripted_kb_llm()
    kb = K.TwoWikiKBBuilder(max_entities_per_unit=3, max_relations_per_unit=2, summarize=False).build(
        tiny_questions(), tmp_path / "kb", llm
    )
    kb.close()
    schemas = [c["schema"] for c in backend.calls if c["messages"][0]["content"] == P.extraction_system()]
    assert schemas and all(s["properties"]["entities"]["maxItems"] == 3 for s in schemas)


# ---------------------------------------------------------------------------------------------
# Leiden options


def two_cliques_and_an_island():
    a = [f"a{i}" for i in range(12)]
    b = [f"b{i}" for i in range(12)]
    edges = [(x, y) for group in (a, b) for i, x in enumerate(group) for y in group[i + 1 :]]
    return edges + [("a0", "b0"), ("island1", "island2")]


def test_largest_component_scope_leaves_small_components_out():
    edges = two_cliques_and_an_island()
    everything = detect_clusters(edges, scope="all")
    largest = detect_clusters(edges, scope="largest-component")
    assert any("island1" in c.members for c in everything)
    assert not any("island1" in c.members for c in largest)
    assert {m for c in largest for m in c.members} == {f"{g}{i}" for g in "ab" for i in range(12)}


def test_lower_resolution_gives_fewer_communities():
    edges = two_cliques_and_an_island()
    assert len(detect_clusters(edges, resolution=0.01, scope="largest-component")) == 1
    assert len(detect_clusters(edges, resolution=1.0, scope="largest-component")) == 2


def ring_of_cliques(n: int = 30, size: int = 4) -> list[tuple[str, str]]:
    """Modularity's resolution limit: on the whole ring Leiden merges neighbouring cliques; alone, they split."""
    cliques = [[f"c{c}n{i}" for i in range(size)] for c in range(n)]
    edges = [(x, y) for clique in cliques for i, x in enumerate(clique) for y in clique[i + 1 :]]
    return edges + [(cliques[c][0], cliques[(c + 1) % n][1]) for c in range(n)]


def test_hierarchical_levels_split_large_clusters_and_name_their_parents():
    edges = ring_of_cliques()
    top = detect_clusters(edges, hierarchical=True, max_cluster_size=5, levels=1)
    both = detect_clusters(edges, hierarchical=True, max_cluster_size=5, levels=2)
    assert all(c.level == 0 for c in top) and any(len(c.members) > 5 for c in top)
    assert [c for c in both if c.level == 0] == top
    children = [c for c in both if c.level == 1]
    assert children and all(len(c.members) <= 5 for c in children)
    for child in children:
        assert child.parent is not None and set(child.members) <= set(both[child.parent].members)


def test_store_writes_community_levels(tmp_path):
    from provbench.kb import Entity, KnowledgeBase, Relation, TextUnit

    edges = ring_of_cliques() + [("island1", "island2")]
    names = sorted({n for e in edges for n in e})
    kb = KnowledgeBase.create(tmp_path / "kb")
    kb.add_text_units([TextUnit(id="tu:0", text="t", document_id="doc:0")])
    kb.add_entities([Entity(id=n, name=n) for n in names])
    kb.add_relations([Relation(id=f"r{i}", source=a, target=b, label="x") for i, (a, b) in enumerate(edges)])
    communities = kb.detect_communities(hierarchical=True, max_cluster_size=5, levels=2, scope="largest-component")
    assert {c.level for c in communities} == {0, 1}
    kb.finalize({}, embed=False)
    view = kb.view()
    in_split = next(c for c in communities if c.level == 1).entity_ids[0]
    assert len(view.communities_of(in_split)) == 2  # one per level
    assert view.communities_of("island1") == []
    kb.close()


# ---------------------------------------------------------------------------------------------
# build info, concurrency, vector search


def test_problems_name_failures_and_member_list_summaries():
    tally = LLMTally()
    tally.fail("kb-extract", RuntimeError("down"))
    lines = problems(
        {"failed_calls": 1, "hallucinated_items": 0}, {"fallback_invalid": 2, "deterministic": 3}, tally.as_info()
    )
    assert lines == [
        "1 extraction call failed (their text units added nothing)",
        "2 community-summary replies were invalid (member list used instead)",
        "3 communities got a member list, not an LLM summary (summarize off or beyond max_summaries)",
    ]
    one = problems({}, {"deterministic": 1}, {"truncated_salvaged": 1})  # one of a kind is singular
    assert one == [
        "1 community got a member list, not an LLM summary (summarize off or beyond max_summaries)",
        "1 reply was cut off by max_tokens (complete items kept)",
    ]
    assert problems(None, None, {"salvaged": 2}) == ["2 replies were cut off by max_tokens (complete items kept)"]
    every = {"failed_calls": 2, "invalid_outputs": 2, "hallucinated_items": 2, "over_cap_items": 2}
    assert problems(every, None, None)[1:] == [
        "2 extraction replies were not valid JSON of the schema",
        "2 extracted names were not in their text unit (dropped)",
        "2 extracted items exceeded the per-text-unit caps (dropped)",
    ]
    assert problems(None, {"failed_calls": 1}, None) == ["1 community-summary call failed (member list used instead)"]
    info = standard_info(
        builder="b",
        inputs={},
        model="m",
        options={},
        counts={"entities": 1},
        extraction=ExtractionCounts(),
        communities={},
        llm=tally,
        paper={"id": "000", "counts": {}},
    )
    assert info["llm"]["errors"] == ["kb-extract: RuntimeError: down"] and info["paper"]["id"] == "000"


def test_kb_counts_keep_every_builders_order_and_leave_out_what_a_builder_has_not():
    counts = kb_counts(["u"], ["e1", "e2"], [], 4, communities=0)
    assert list(counts.items()) == [
        ("documents", 4),
        ("text_units", 1),
        ("entities", 2),
        ("relations", 0),
        ("communities", 0),
    ]
    assert list(kb_counts([], [], [], 1, questions=3))[:2] == ["questions", "documents"]


def test_failed_extraction_calls_reach_build_info_and_kb_info(tmp_path):
    from click.testing import CliRunner
    from kb_2wiki_helpers import scripted_kb_llm, tiny_questions

    from provbench.cli import main

    llm, _ = scripted_kb_llm(overrides={"Dunmere": RuntimeError("model down")})
    kb = K.TwoWikiKBBuilder(summarize=False).build(tiny_questions(), tmp_path / "kb", llm)
    info = kb.build_info
    kb.close()
    assert info["extraction"]["failed_calls"] == 1 and info["llm"]["failed"] == 1
    assert info["counts"]["text_units"] > 0 and info["paper"]["counts"]["entities"] == 1815
    assert "1 extraction call failed (their text units added nothing)" in info["problems"]  # one: singular
    out = CliRunner().invoke(main, ["kb", "info", str(tmp_path / "kb")], terminal_width=200).output
    assert "paper 000" in out and "1,815" in out and "1 extraction call failed" in out


def test_run_calls_runs_as_many_at_once_as_asked():
    active, peak, lock = [0], [0], threading.Lock()

    def call(i):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return i

    assert run_calls(call, list(range(12)), 6, "test") == list(range(12))  # input order
    assert peak[0] == 6


def test_dataset_builds_get_an_llm_client_as_wide_as_max_workers(tmp_path, monkeypatch):
    import provbench.llm_setup as llm_module
    from kb_2wiki_helpers import write_tiny_2wiki

    from provbench import runner

    asked = {}
    real = llm_module.make_llm

    def spy(model, **kwargs):
        asked.update(kwargs)
        return real(model, **kwargs)

    monkeypatch.setattr(llm_module, "make_llm", spy)
    runner.build_dataset_kb(
        write_tiny_2wiki(tmp_path / "tiny.json"),
        tmp_path / "kb",
        loader="2wiki",
        builder="2wiki-paper000",
        model="scripted",
        options={"extract": False, "summarize": False, "max_workers": 8},
    )
    assert asked["max_concurrency"] == 8
    assert effective_workers(None, type("C", (), {"max_concurrency": 5})()) == 5


def test_hnsw_search_matches_exact_search_and_honours_overrides(tmp_path):
    rng = np.random.default_rng(1)
    vectors = normalise(rng.standard_normal((500, 384)).astype(np.float32))
    ids = tuple(f"e{i}" for i in range(500))
    VectorIndex(ids, vectors).save(tmp_path, "exact", ann_min_vectors=None)
    VectorIndex(ids, vectors).save(tmp_path, "hnsw", ann_min_vectors=100)
    exact, hnsw = VectorIndex.load(tmp_path, "exact"), VectorIndex.load(tmp_path, "hnsw")
    assert exact.ann is None and hnsw.ann is not None and isinstance(hnsw.vectors, np.memmap)
    query = vectors[7]
    visible = lambda i: i != "e7"  # noqa: E731
    assert hnsw.search(query, 5, visible, hidden_hint=1) == exact.search(query, 5, visible, hidden_hint=1)
    overrides = {"e400": 2.0}
    assert hnsw.search(query, 3, visible, overrides=overrides)[0] == ("e400", 2.0)
    assert exact.search(query, 3, visible, overrides=overrides)[0] == ("e400", 2.0)
