"""The 2Wiki knowledge-base builder of paper 000 (issue 3, item 3), with a scripted model."""

from __future__ import annotations

import json
import re

import pytest

from kb_2wiki_helpers import (
    TINY_GOLD_ENTITIES,
    TINY_RECORDS,
    TINY_UNIQUE_PARAGRAPHS,
    question_from_record,
    scripted_kb_llm,
    tiny_questions,
    write_tiny_2wiki,
)
from provbench.errors import UserError
from provbench_plugins.kb_builders.common.extraction import (
    ExtractionCounts,
    apply_extraction,
    choose_extraction_units,
    salvage_truncated,
)
from provbench_plugins.kb_builders.common.graph import Graph
from provbench_plugins.kb_builders.common.names import pick_type as _pick_type
from provbench_plugins.kb_builders.twowiki import builder as K
from provbench_plugins.kb_builders.twowiki.gold import TYPE_PRIORITY, add_gold_graph
from provbench_plugins.kb_builders.twowiki.questions import build_corpus, read_question


def pick_type(types):
    return _pick_type(types, TYPE_PRIORITY)


def distractor_units(corpus):
    return [tu for tu in corpus.text_units if tu not in corpus.supporting_units]


# ---------------------------------------------------------------------------------------------
# corpus and gold graph (no knowledge base needed)


def doc(corpus, title, text_starts=""):
    """The document of a paragraph title (ids are opaque digests); ``text_starts`` tells two
    paragraphs of one title apart."""
    (found,) = [
        d for d in corpus.documents.values() if d.title == title and " ".join(d.sentences).startswith(text_starts)
    ]
    return found


def corpus_of(questions, **options):
    data = [read_question(q) for q in questions]
    return data, build_corpus(data, K.parse_options(options))


def test_paragraphs_are_merged_by_title_and_text():
    data, corpus = corpus_of(tiny_questions())
    assert sum(len(q.paragraphs) for q in data) == 13
    assert len(corpus.documents) == TINY_UNIQUE_PARAGRAPHS
    titles = sorted(d.title for d in corpus.documents.values())
    assert "Glass Harbor (film)" in titles and "Glass Harbor (novel)" in titles
    assert titles.count("Calder Bay") == 2  # same title, other text: two documents
    # q1 and q3 see their own version of Calder Bay
    assert corpus.question_docs["tiny-q1"]["Calder Bay"] == doc(corpus, "Calder Bay", "Calder Bay is a fishing").id
    assert corpus.question_docs["tiny-q3"]["Calder Bay"] == doc(corpus, "Calder Bay", "Calder Bay is a village").id


def test_document_ids_are_opaque():
    """A document id is shown to systems: it must not spell out a (possibly removed) entity's name."""
    _, corpus = corpus_of(tiny_questions())
    for document in corpus.documents.values():
        assert re.fullmatch(r"doc:[0-9a-f]{12}", document.id), document.id


def test_document_ids_are_stable_across_question_order():
    _, forward = corpus_of(tiny_questions())
    _, again = corpus_of(tiny_questions())
    assert list(forward.documents) == list(again.documents)
    assert [tu.text for tu in forward.text_units.values()] == [tu.text for tu in again.text_units.values()]


def test_small_chunks_split_paragraphs_and_map_every_sentence():
    _, whole = corpus_of(tiny_questions(), chunk_size=200)
    assert len(whole.text_units) == TINY_UNIQUE_PARAGRAPHS  # short paragraphs: one text unit each
    _, small = corpus_of(tiny_questions(), chunk_size=32)
    assert len(small.text_units) > len(whole.text_units)
    film = doc(small, "Glass Harbor (film)")
    assert len(film.text_unit_ids) >= 2
    for sid, sentence in enumerate(film.sentences):
        tu = small.text_units[small.sentence_unit[(film.id, sid)]]
        assert tu.document_id == film.id
        assert sentence[:20] in tu.text  # the sentence starts in the text unit it maps to
    # text units of a document are consecutive and cover its text in order
    assert " ".join(small.text_units[t].text for t in film.text_unit_ids) == " ".join(film.sentences)


def test_supporting_facts_mark_their_text_units():
    _, corpus = corpus_of(tiny_questions(), chunk_size=32)
    film = doc(corpus, "Glass Harbor (film)")
    expected = {corpus.sentence_unit[(film.id, 0)], corpus.sentence_unit[(film.id, 1)]}
    assert expected <= corpus.supporting_units
    novel = doc(corpus, "Glass Harbor (novel)")
    assert not set(novel.text_unit_ids) & corpus.supporting_units


def gold_graph(questions, **options):
    data, corpus = corpus_of(questions, **options)
    graph = Graph()
    add_gold_graph(graph, corpus, data)
    return graph, corpus


def test_gold_entities_and_relations_come_from_evidence_triples():
    graph, corpus = gold_graph(tiny_questions(), chunk_size=16)
    assert {e.name for e in graph.entities.values()} == TINY_GOLD_ENTITIES
    types = {e.name: pick_type(e.types) for e in graph.entities.values()}
    assert types == {
        "Glass Harbor": "FILM",
        "Orin Vale": "PERSON",
        "Mira Vale": "PERSON",
        "1987": "DATE",
        "Red Meadow": "FILM",
        "1992": "DATE",
        "Lark Denholm": "PERSON",
        "Sorrel": "PLACE",
    }
    labels = {(graph_name(graph, r.source), r.label, graph_name(graph, r.target)): r for r in graph.relations.values()}
    assert set(labels) == {tuple(e) for rec in TINY_RECORDS for e in rec["evidences"]}
    # each relation points at the text unit of the supporting-fact sentence of the subject's paragraph
    film, orin = doc(corpus, "Glass Harbor (film)"), doc(corpus, "Orin Vale")
    assert labels["Glass Harbor", "director", "Orin Vale"].text_unit_id == corpus.sentence_unit[(film.id, 1)]
    assert labels["Glass Harbor", "publication date", "1987"].text_unit_id == corpus.sentence_unit[(film.id, 0)]
    assert labels["Orin Vale", "mother", "Mira Vale"].text_unit_id == corpus.sentence_unit[(orin.id, 1)]
    assert corpus.sentence_unit[(film.id, 0)] != corpus.sentence_unit[(film.id, 1)]  # the choice mattered


def graph_name(graph, entity_id):
    return next(e.name for e in graph.entities.values() if e.id == entity_id)


def test_relation_falls_back_to_a_text_unit_mentioning_both_names():
    record = json.loads(json.dumps(TINY_RECORDS[0]))
    record["supporting_facts"] = []  # no supporting fact: the link must be found by mentions
    record["evidences"] = [["Tessa Quill", "mother", "Ada Quill"]]
    record["context"][3][0] = "Tessa Quill (actress)"
    graph, corpus = gold_graph([question_from_record(record)])
    (relation,) = graph.relations.values()
    assert corpus.text_units[relation.text_unit_id].document_id == doc(corpus, "Tessa Quill (actress)").id


def test_entity_names_merge_case_insensitively_and_ids_are_stable():
    record = json.loads(json.dumps(TINY_RECORDS[2]))
    record["_id"] = "tiny-q4"
    record["evidences"] = [["RED MEADOW", "director", "lark  denholm"]]
    graph, _ = gold_graph(tiny_questions() + [question_from_record(record)])
    assert len(graph.entities) == len(TINY_GOLD_ENTITIES)
    assert graph.find("Red Meadow").id == "ent:red-meadow"
    assert graph.find("Lark Denholm").name == "Lark Denholm"  # the first spelling seen is kept


def test_bad_question_metadata_names_question_and_field():
    broken = tiny_questions()[0].model_copy(
        update={"metadata": {"context": [], "supporting_facts": [], "evidences": [["only", "two"]]}}
    )
    with pytest.raises(UserError, match=r"tiny-q1.*evidences"):
        read_question(broken)
    missing = tiny_questions()[1].model_copy(update={"metadata": {}})
    with pytest.raises(UserError, match=r"tiny-q2.*context"):
        read_question(missing)


def test_bad_options_are_named():
    with pytest.raises(UserError, match="chunk_sise"):
        K.TwoWikiKBBuilder(chunk_sise=10)
    with pytest.raises(UserError, match="chunk_overlap"):
        K.TwoWikiKBBuilder(chunk_size=64, chunk_overlap=64)


# ---------------------------------------------------------------------------------------------
# extraction (validation and hallucination filter), no knowledge base needed


def test_extraction_keeps_only_valid_items_found_in_the_text():
    graph, corpus = gold_graph(tiny_questions())
    tu = corpus.text_units[doc(corpus, "Tessa Quill").text_unit_ids[0]]
    counts = ExtractionCounts()
    apply_extraction(
        graph,
        tu,
        {
            "entities": [
                {"name": "Tessa Quill", "type": "PERSON"},
                {"name": "ada quill", "type": "person"},  # case differs from the text: still found
                {"name": "Zorro Khan", "type": "PERSON"},  # hallucinated
                {"name": 7, "type": "PERSON"},  # wrong type
                {"type": "PLACE"},  # missing name
                {"name": "Dunmere", "type": "SPACESHIP"},  # unknown type -> OTHER
                {"name": "an actress", "type": "PERSON"},  # in the text, but not a name
            ],
            "relations": [
                {"source": "Tessa Quill", "relation": "Mother", "target": "Ada Quill"},
                {"source": "Tessa Quill", "relation": "rival", "target": "Zorro Khan"},  # hallucinated end
                {"source": "Tessa Quill", "relation": "self", "target": "tessa quill"},  # self-loop
                ["not", "an", "object"],
            ],
        },
        counts,
    )
    assert counts.hallucinated_items == 2
    assert counts.invalid_items == 5
    assert counts.entities_added == 3
    assert graph.find("Zorro Khan") is None
    assert pick_type(graph.find("Dunmere").types) == "OTHER"
    assert pick_type(graph.find("Ada Quill").types) == "PERSON"
    assert graph.find("ada quill").name == "Ada Quill"  # spelled as in the text, not as the model wrote it
    (extracted,) = [r for r in graph.relations.values() if r.origin == "extracted"]
    assert (extracted.label, extracted.text_unit_id) == ("mother", tu.id)


def test_an_extracted_label_naming_an_entity_is_not_quoted_in_descriptions():
    """Extracted labels are free text: one that names another entity would keep that name readable
    in a description after the entity is removed (issue 22, item 5)."""
    from provbench_plugins.kb_builders.twowiki.gold import describe_entities

    graph, corpus = gold_graph(tiny_questions())
    tu = corpus.text_units[doc(corpus, "Tessa Quill").text_unit_ids[0]]
    apply_extraction(
        graph,
        tu,
        {
            "entities": [{"name": "Ada Quill", "type": "PERSON"}],
            "relations": [
                {"source": "Tessa Quill", "relation": "daughter of Ada Quill", "target": "Ada Quill"},
                {"source": "Tessa Quill", "relation": "acted in Dunmere", "target": "Dunmere"},
                {"source": "Tessa Quill", "relation": "Tessa Quill's home", "target": "Dunmere"},
            ],
        },
        ExtractionCounts(),
    )
    describe_entities(graph)
    tessa, ada = graph.find("Tessa Quill").description, graph.find("Ada Quill").description
    assert "Ada Quill".lower() not in tessa.lower() and "dunmere" not in tessa.lower()
    assert "extracted relation (outgoing)" in tessa and "tessa quill's home (outgoing)" in tessa  # its own name
    assert ada == "A person; relations: daughter of ada quill (incoming)."  # names only Ada herself


def test_extraction_output_that_is_not_an_object_is_counted():
    graph, corpus = gold_graph(tiny_questions())
    tu = next(iter(corpus.text_units.values()))
    counts = ExtractionCounts()
    for garbage in (None, [1, 2], "text", {"entities": "Dunmere", "relations": None}):
        apply_extraction(graph, tu, garbage, counts)
    assert counts.invalid_outputs == 3
    assert counts.invalid_items == 2  # "entities" and "relations" of the last reply are not lists
    assert len(graph.entities) == len(TINY_GOLD_ENTITIES)


def test_extraction_does_not_retype_gold_entities():
    graph, corpus = gold_graph(tiny_questions())
    tu = corpus.text_units[doc(corpus, "Red Meadow").text_unit_ids[0]]
    apply_extraction(graph, tu, {"entities": [{"name": "1992", "type": "PERSON"}], "relations": []}, ExtractionCounts())
    assert pick_type(graph.find("1992").types) == "DATE"


def test_extraction_targets_distractor_units_mentioning_gold_entities_first():
    graph, corpus = gold_graph(tiny_questions())
    chosen = choose_extraction_units(corpus, graph, distractor_units(corpus), limit=None)
    assert not set(chosen) & corpus.supporting_units
    assert len(chosen) == len(corpus.text_units) - len(corpus.supporting_units)
    first_doc = corpus.text_units[chosen[0]].document_id
    assert corpus.documents[first_doc].title in {"Calder Bay", "Dunmere"}  # mention Mira Vale / Sorrel: gold names
    assert choose_extraction_units(corpus, graph, distractor_units(corpus), limit=2) == chosen[:2]


# ---------------------------------------------------------------------------------------------
# whole builds against the real knowledge base


# a reply cut off by max_tokens: its complete items are kept
TRUNCATED = '{"entities": [{"name": "Dunmere", "type": "PLACE"}, {"name": "Dunmere Film School", "ty'


def test_truncated_reply_keeps_its_complete_items():
    assert salvage_truncated(TRUNCATED) == {
        "entities": [{"name": "Dunmere", "type": "PLACE"}, {"name": "Dunmere Film School"}]
    }
    assert salvage_truncated("not json {") is None
    assert salvage_truncated("[1, 2") is None


@pytest.fixture(scope="module")
def tiny_build(tmp_path_factory):
    """One real build of the tiny world, closed again: tests open it when they need it."""
    llm, backend = scripted_kb_llm(
        overrides={
            "Glass Harbor (novel)": "not json {",  # invalid JSON
            "Tessa Quill": {"entities": [{"name": "Zorro Khan", "type": "PERSON"}, {"name": 3}], "relations": []},
            "Dunmere": TRUNCATED,
        }
    )
    kb_dir = tmp_path_factory.mktemp("kb") / "tiny"
    kb = K.TwoWikiKBBuilder().build(tiny_questions(), kb_dir, llm)
    built = {
        "kb_dir": kb_dir,
        "calls": len(backend.calls),
        "model": llm.model_id,
        "info": kb.build_info,
        "stats": kb.stats(),
    }
    kb.close()
    return built


@pytest.fixture
def tiny_kb(tiny_build):
    from provbench.kb import KnowledgeBase

    kb = KnowledgeBase.open(tiny_build["kb_dir"])
    yield kb
    kb.close()


def test_build_info_records_the_build(tiny_build):
    info = tiny_build["info"]
    assert info["builder"] == "2wiki-paper000" and info["model"] == tiny_build["model"]
    assert info["questions"] == 3 and info["paragraphs"] == TINY_UNIQUE_PARAGRAPHS
    assert info["text_units"] == TINY_UNIQUE_PARAGRAPHS
    assert info["entities"]["gold"] == len(TINY_GOLD_ENTITIES) and info["entities"]["extracted"] > 0
    assert info["relations"]["gold"] == 6 and info["relations"]["extracted"] > 0
    extraction = info["extraction"]
    assert extraction["text_units"] == 5  # the distractor units (max_extractions 60 > 5)
    assert extraction["invalid_outputs"] == 1 and extraction["invalid_items"] == 1
    assert extraction["hallucinated_items"] == 1
    assert info["llm"]["truncated_salvaged"] == 1
    assert info["llm"]["calls"] == tiny_build["calls"] == 5 + info["communities"]["by_llm"]
    assert info["communities"]["communities"] >= 1
    assert info["options"]["chunk_size"] == 200 and info["duration_s"] >= 0


def test_kb_stats_match_build_info(tiny_build):
    stats, info = tiny_build["stats"], tiny_build["info"]
    assert stats.documents == info["paragraphs"]
    assert stats.text_units == info["text_units"]
    assert stats.entities == info["entities"]["total"]
    assert stats.relations == info["relations"]["total"]
    assert stats.communities == info["communities"]["communities"]


def test_kb_links_gold_relations_to_supporting_text_units(tiny_kb):
    view = tiny_kb.view()
    film = view.find_entity("Glass Harbor")
    assert film is not None and film.label == "FILM"
    assert film.description == "A film; relations: director (outgoing), publication date (outgoing)."
    director = [n for n in view.neighbors(film.id, direction="out") if n.relation.label == "director"]
    assert [n.entity.name for n in director] == ["Orin Vale"]
    unit = view.text_unit(director[0].relation.text_unit_id)
    assert "directed by Orin Vale" in unit.text
    assert unit.id in view.text_units_of(film.id)
    school = view.find_entity("Dunmere Film School")  # from the salvaged reply, linked by mention
    assert school is not None and school.label == "OTHER"
    titles = {d.id: d.title for d in corpus_of(tiny_questions())[1].documents.values()}
    assert {titles[view.text_unit(t).document_id] for t in view.text_units_of(school.id)} == {"Dunmere", "Orin Vale"}


@pytest.mark.parametrize("extract", [False, True], ids=["gold-only", "with-extraction"])
def test_every_chunk_of_an_entitys_own_paragraph_is_linked_to_it(tmp_path, extract):
    """Removal takes, and isolation keeps, an entity's whole paragraph: also the chunks that go on
    with "He ..." or "Vale ..." without its name (issue 22, item 4); isolation keeps that paragraph
    as its own text, not the film's paragraph naming it."""
    import random

    from provbench.model import Citations, Trace
    from provbench_plugins.papers.p000_neighborhoods.interventions import CitedRemoval, FullIsolation

    llm, _ = scripted_kb_llm()
    kb = K.TwoWikiKBBuilder(chunk_size=16, extract=extract, summarize=False).build(
        tiny_questions(), tmp_path / "kb", llm
    )
    view = kb.view()
    _, corpus = corpus_of(tiny_questions(), chunk_size=16)
    orin = view.find_entity("Orin Vale")
    own = doc(corpus, "Orin Vale").text_unit_ids
    nameless = [t for t in own if "Orin Vale" not in corpus.text_units[t].text]
    assert len(own) >= 2 and nameless  # the paragraph is split, and a chunk lacks the name
    for title, name in (
        ("Orin Vale", "Orin Vale"),
        ("Glass Harbor (film)", "Glass Harbor"),
        ("Glass Harbor (novel)", "Glass Harbor"),
        ("Lark Denholm", "Lark Denholm"),
    ):
        assert set(doc(corpus, title).text_unit_ids) <= set(view.entity(view.find_entity(name).id).text_unit_ids), title
    assert view.entity(orin.id).own_text_unit_ids == tuple(own)
    assert kb.build_info["own_paragraph_links"] >= len(nameless)
    baseline = Trace(question_id="tiny-q1", system="s", citations=Citations(entities=[orin.id]))
    plan = CitedRemoval().plan(view, tiny_questions()[0], baseline, random.Random(0))
    assert set(own) <= plan.text_units
    film_naming_him = [
        t for t in doc(corpus, "Glass Harbor (film)").text_unit_ids if "Orin Vale" in corpus.text_units[t].text
    ]
    isolated = FullIsolation().plan(view, tiny_questions()[0], baseline, random.Random(0))
    assert film_naming_him and set(film_naming_him) <= isolated.text_units and not set(own) & isolated.text_units
    kb.close()


def test_descriptions_quote_no_text_and_name_no_other_entity(tiny_kb):
    """Text-only isolation keeps every entity's metadata: a description must hold none of the text
    it hides (issue 22, item 5)."""
    view = tiny_kb.view()
    sentences = {s.strip().lower() for r in TINY_RECORDS for _, paragraph in r["context"] for s in paragraph}
    names = {view.entity(e).name.lower() for e in view.entity_ids()}
    for entity_id in view.entity_ids():
        entity = view.entity(entity_id)
        description = entity.description.lower()
        assert description and not any(s in description or description in s for s in sentences), entity
        assert not [
            n
            for n in names - {entity.name.lower()}
            if re.search(rf"\b{re.escape(n)}\b", description) and n not in ("film", "person")
        ], entity
    orin = view.find_entity("Orin Vale")
    assert orin.description == "A person; relations: director (incoming), mother (outgoing)."


def test_community_summaries_come_from_the_model(tiny_kb):
    view = tiny_kb.view()
    community = view.community(view.communities_of(view.find_entity("Orin Vale").id)[0])
    assert community.title.startswith("About ") and community.summary.startswith("Members: ")


def test_second_build_reuses_the_kb_without_llm_calls(tiny_build):
    llm, backend = scripted_kb_llm()
    again = K.TwoWikiKBBuilder().build(tiny_questions(), tiny_build["kb_dir"], llm)
    try:
        assert backend.calls == []
        assert again.stats() == tiny_build["stats"]
        assert again.build_info == tiny_build["info"]
    finally:
        again.close()


def test_other_inputs_in_a_finished_kb_dir_are_an_error(tiny_build):
    kb_dir = tiny_build["kb_dir"]
    llm, backend = scripted_kb_llm()
    with pytest.raises(UserError, match=r"other inputs.*options"):
        K.TwoWikiKBBuilder(chunk_size=64).build(tiny_questions(), kb_dir, llm)
    with pytest.raises(UserError, match=r"other inputs.*question_ids"):
        K.TwoWikiKBBuilder().build(tiny_questions()[:2], kb_dir, llm)
    assert backend.calls == []


def test_summary_fallback_and_no_extraction(tmp_path):
    llm, backend = scripted_kb_llm(overrides={"summary": '{"title": 5}'})
    kb = K.TwoWikiKBBuilder(extract=False).build(tiny_questions(), tmp_path / "kb", llm)
    try:
        info = kb.build_info
        assert info["extraction"]["text_units"] == 0 and info["entities"]["extracted"] == 0
        assert info["communities"]["by_llm"] == 0
        assert info["communities"]["fallback_invalid"] == info["communities"]["communities"] == len(backend.calls)
        view = kb.view()
        community = view.community(view.communities_of(view.find_entity("Orin Vale").id)[0])
        assert community.title.startswith("Community of ") and "Orin Vale" in community.summary
    finally:
        kb.close()


def test_interrupted_build_is_rebuilt_from_scratch(tmp_path):
    from provbench.kb import KnowledgeBase, TextUnit

    kb_dir = tmp_path / "kb"
    crashed = KnowledgeBase.create(kb_dir)  # a build that died before finalize
    crashed.add_text_units([TextUnit(id="tu:0", text="left over from a crash", document_id="doc:old")])
    crashed.close()
    llm, _ = scripted_kb_llm()
    kb = K.TwoWikiKBBuilder(extract=False, summarize=False).build(tiny_questions(), kb_dir, llm)
    try:
        assert kb.view().text_unit("tu:0").document_id != "doc:old"
        assert kb.build_info["communities"]["deterministic"] == kb.build_info["communities"]["communities"]
        assert kb.stats().documents == TINY_UNIQUE_PARAGRAPHS
    finally:
        kb.close()


def test_a_directory_that_holds_no_kb_is_never_deleted(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    llm, _ = scripted_kb_llm()
    with pytest.raises(UserError, match="refusing to delete"):
        K.TwoWikiKBBuilder(extract=False).build(tiny_questions(), tmp_path, llm)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_model_that_always_fails_does_not_leave_a_finished_kb(tmp_path):
    from provbench.kb import KnowledgeBase

    llm, _ = scripted_kb_llm(
        overrides={
            "summary": RuntimeError("model down"),
            **{r[0]: RuntimeError("model down") for rec in TINY_RECORDS for r in rec["context"]},
        }
    )
    with pytest.raises(UserError, match="every LLM call"):
        K.TwoWikiKBBuilder().build(tiny_questions(), tmp_path / "kb", llm)
    assert not KnowledgeBase.is_complete(tmp_path / "kb")


def test_registered_and_reads_the_2wiki_loader_output(tmp_path):
    from provbench.registry import default_registry

    registry = default_registry()
    assert isinstance(registry.create("kb_builder", "2wiki-paper000"), K.TwoWikiKBBuilder)
    loader = registry.create("dataset_loader", "2wiki")  # a built-in: a failure here is a bug, not a skip
    questions = loader.load(write_tiny_2wiki(tmp_path / "tiny.json"))
    data, corpus = corpus_of(questions)
    assert len(corpus.documents) == TINY_UNIQUE_PARAGRAPHS
    ours = [read_question(q) for q in tiny_questions()]
    assert (
        K.fingerprint(data, K.BuildOptions(), "m")["content"] == K.fingerprint(ours, K.BuildOptions(), "m")["content"]
    )


def test_cli_builds_from_a_dataset_file_then_reuses_and_describes_it(tmp_path):
    """`provbench kb build DATASET` twice (the second reuses), then `kb info`; no LLM is needed
    with extraction and summaries off, so the scripted model is never called."""
    from click.testing import CliRunner

    from provbench.cli import main

    data = write_tiny_2wiki(tmp_path / "dev.json")
    args = [
        "kb",
        "build",
        str(data),
        "--builder",
        "2wiki-paper000",
        "--out",
        str(tmp_path / "kb"),
        "--model",
        "scripted",
        "--option",
        "extract=false",
        "--option",
        "summarize=false",
    ]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "knowledge base built" in first.output
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0 and "knowledge base reused" in second.output, second.output
    info = CliRunner().invoke(main, ["kb", "info", str(tmp_path / "kb")])
    assert info.exit_code == 0, info.output
    # not a terminal: the table comes as tab-separated lines
    assert re.search(rf"paragraphs \(documents\)\t{TINY_UNIQUE_PARAGRAPHS}\b", info.output), info.output
    for row in ("text units", "entities", "relations", "communities"):
        assert row in info.output
    bad = CliRunner().invoke(main, ["kb", "build", str(data), "--builder", "2wiki-paper000", "--option", "extract"])
    assert bad.exit_code == 2 and "expected KEY=VALUE" in bad.output
