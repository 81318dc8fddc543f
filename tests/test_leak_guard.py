"""The leak guard's three checks (provbench.leakguard) and the hidden-content API (provbench.kb.hidden),
on the tiny knowledge base (see provbench.testing.kb for its contents)."""

from __future__ import annotations

import pytest

from provbench.capture import UnitCapture
from provbench.leakguard import check_unit, leak_lines, not_measurable
from provbench.model import LeakCheck, Question, RetrievedItem, RunRecord, Trace, UnitKey
from provbench.plugin_api import Environment, Results
from provbench.testing import build_tiny_kb, scripted_llm

ORIN = "ent:orin-vale"
QUESTION = Question(id="q1", question="Which film won the Silver Reel Award?", answer="Glass Harbor")


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    kb = build_tiny_kb(tmp_path_factory.mktemp("leak") / "kb")
    yield kb.view()
    kb.close()


@pytest.fixture
def orin_gone(view):
    """Orin Vale removed with every text that names him: his text units, Glass Harbor's description."""
    return view.hide(entities=[ORIN], text_units=["tu:0", "tu:1", "tu:2"], hide_metadata_of=["ent:glass-harbor"])


def requests(*turns: tuple[str, str]) -> UnitCapture:
    """A capture holding one request per (prompt, reply), sent in order through a bound client."""
    capture = UnitCapture("unit")
    llm = scripted_llm([reply for _, reply in turns]).bound_to(capture)
    for prompt, _ in turns:
        llm.chat([{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": prompt}],
                 purpose="answer")
    return capture


def check(view, capture=None, trace=None, baseline=None, question=QUESTION, trace_ids="kb") -> LeakCheck:
    return check_unit(view, question, trace or Trace(question_id="q1", system="s"), capture or UnitCapture(),
                      baseline, trace_ids)


def leaked_items(result: LeakCheck) -> set[tuple[str, str]]:
    return {(e.kind, e.item) for e in result.evidence}


# -- (b) request text -------------------------------------------------------------------------------

def test_a_removed_name_in_a_request_leaks_only_where_the_view_shows_it_nowhere(view, orin_gone):
    prompt = "Context: the film was directed by Orin Vale."
    found = check(orin_gone, requests((prompt, "Glass Harbor")))
    assert found.status == "leaked" and found.checks["request_text"] == "leaked"
    assert leaked_items(found) == {("name", ORIN)} and found.evidence[0].where == "request 1 (answer)"
    # hiding only the entity leaves his name readable in text units: no leak
    assert check(view.hide(entities=[ORIN]), requests((prompt, "Glass Harbor"))).status == "clean"
    # "orin-vale" in an id shows the name as well
    assert check(orin_gone, requests(("see [ent:orin-vale]", "x"))).status == "leaked"


def test_hidden_sentences_and_descriptions_leak_in_any_form(view, orin_gone):
    found = check(orin_gone, requests(("GLASS HARBOR WON THE SILVER REEL AWARD!", "x")))
    assert leaked_items(found) == {("text", "tu:2")}  # a sentence of a hidden text unit, case and punctuation aside
    masked = check(view.hide(hide_metadata_of=["ent:norland"]), requests(("Norland is a cold northern country.", "x")))
    assert leaked_items(masked) == {("description", "ent:norland")}
    # a masked description that is also a sentence of a readable text unit is readable through the view
    assert check(view.hide(hide_metadata_of=["ent:dunmere"]),
                 requests(("Dunmere is a coastal town in Norland.", "x"))).status == "clean"
    blocked = check(view.hide(block_text_of=["ent:kestrel-bridge"]),
                    requests(("Kestrel Bridge crosses the Aster River in the middle of Dunmere.", "x")))
    assert leaked_items(blocked) == {("text", "tu:5")}


def test_the_question_and_the_models_own_earlier_words_are_no_leak(view, orin_gone):
    asked = Question(id="q2", question="Where was Orin Vale born?", answer="Dunmere")
    assert check(orin_gone, requests(("Orin Vale?", "x")), question=asked).status == "clean"
    guessed = requests(("Who directed Glass Harbor?", "Maybe Orin Vale"), ("You said Orin Vale. Sure?", "yes"))
    assert check(orin_gone, guessed).status == "clean"
    # the reply to the request that showed the name does not excuse that request
    shown = requests(("It was Orin Vale.", "Orin Vale"), ("Again: Orin Vale.", "yes"))
    assert check(orin_gone, shown).evidence[0].where == "request 1 (answer)"


def test_short_names_and_sentences_are_not_matched(view):
    from provbench.kb.hidden import MIN_NAME_CHARS, MIN_SENTENCE_TOKENS, TextIndex

    index = TextIndex()
    index.add_secret("Leo", "name", "ent:leo")
    index.add_secret("He won.", "text", "tu:9")
    index.add_secret("Aster River", "name", "ent:aster-river")
    assert [s.surface for s in index.secrets.values()] == ["Aster River"]
    assert MIN_NAME_CHARS == 4 and MIN_SENTENCE_TOKENS == 4


# -- (a) trace ids -----------------------------------------------------------------------------------

def test_ids_the_view_hides_in_the_trace_leak_but_citations_and_unknown_ids_do_not(view, orin_gone):
    trace = Trace(question_id="q1", system="s", visited_entities=[ORIN, "ent:unknown"], read_text_units=["tu:3"],
                  retrieved=[RetrievedItem(kind="relationship", id="rel:6"), RetrievedItem(kind="text_unit", id="tu:1")],
                  read_communities=["com:1"])
    found = check(orin_gone, trace=trace)
    assert found.checks["trace_ids"] == "leaked"
    assert leaked_items(found) == {("entity", ORIN), ("relationship", "rel:6"), ("text_unit", "tu:1"),
                                   ("community", "com:1")}
    cited = Trace(question_id="q1", system="s")
    cited.citations.entities = [ORIN]  # the model may write an id it never saw
    assert check(orin_gone, trace=cited).checks["trace_ids"] == "clean"
    assert check(orin_gone, trace=trace, trace_ids="own").checks["trace_ids"] == "not-checkable"


# -- (c) no effect -------------------------------------------------------------------------------------

def test_requests_identical_to_a_baseline_that_read_hidden_items_have_no_effect(view, orin_gone):
    baseline = Trace(question_id="q1", system="s", visited_entities=[ORIN])
    capture = requests(("Which film won?", "Glass Harbor"))
    baseline.llm_calls = [r.call for r in capture.requests]
    found = check(orin_gone, requests(("Which film won?", "Glass Harbor")), baseline=baseline)
    assert found.status == "no-effect" and found.evidence[0].check == "no_effect"
    assert check(orin_gone, requests(("Which film won? (new context)", "x")), baseline=baseline).status == "clean"
    # the baseline read nothing the view hides: the same requests are expected
    unread = baseline.model_copy(update={"visited_entities": ["ent:norland"]})
    assert check(orin_gone, requests(("Which film won?", "x")), baseline=unread).checks["no_effect"] == "clean"
    # a baseline recorded before requests were hashed cannot be compared
    old = baseline.model_copy(deep=True)
    old.llm_calls[0].request_hash = None
    assert check(orin_gone, requests(("Which film won?", "x")), baseline=old).checks["no_effect"] == "not-checkable"


def test_nothing_to_check_is_not_checkable(orin_gone):
    found = check(orin_gone, trace_ids="own")
    assert found.status == "not-checkable" and found.requests == 0


# -- hidden content, for systems with their own store ----------------------------------------------------

def test_the_environment_resolves_what_the_view_hides(view, orin_gone):
    hidden = Environment(view=orin_gone, llm=None).hidden
    assert hidden.entity_names == {ORIN: "Orin Vale"}
    assert hidden.text_unit_ids == {"tu:0", "tu:1", "tu:2"} and hidden.text_unit_texts["tu:0"].startswith("Glass")
    assert hidden.masked_entity_ids == {"ent:glass-harbor"}
    assert hidden.relation_ids == {"rel:0", "rel:4", "rel:5", "rel:6"} and hidden.community_ids == {"com:1"}
    own = [("a", "Orin Vale directed it."), ("b", "Dunmere is a coastal town in Norland."), ("c", "Kestrel Bridge.")]
    assert [p for p, _ in hidden.keep(own, text=lambda p: p[1])] == ["b", "c"]
    mapped = {"a": "tu:3", "b": "tu:0", "c": None}
    assert [p for p, _ in hidden.keep(own, kb_id=lambda p: mapped[p[0]])] == ["a", "c"]
    assert Environment(view=view, llm=None).hidden.empty and view.hidden_content().allows("Orin Vale")


# -- statistics and the console ------------------------------------------------------------------------

def record(status: str | None, question: str = "q1", condition: str = "cited-removal") -> RunRecord:
    check_ = LeakCheck(status=status) if status else None
    return RunRecord(key=UnitKey(question_id=question, system="s", condition=condition), leak_check=check_,
                     trace=Trace(question_id=question, system="s"))


def test_leaked_units_are_left_out_unless_the_suite_includes_them():
    records = [record("leaked", "q1"), record("clean", "q2"), record(None, "q3", "baseline")]
    assert [r.key.question_id for r in Results(records, {}).select("s", "cited-removal")] == ["q2"]
    assert len(Results(records, {}, include_leaked=True).select("s", "cited-removal")) == 2
    assert len(Results(records, {}).select("s", "cited-removal", leaked=True)) == 2


def test_a_cell_of_only_leaked_or_no_effect_units_is_not_measurable():
    assert not_measurable([record("leaked"), record("no-effect")]) == "not measurable: 1 leaked, 1 no-effect"
    assert not_measurable([record("leaked"), record("clean")]) is None
    assert not_measurable([record(None)]) is None and not_measurable([]) is None


def test_the_console_lines_name_system_condition_and_count():
    lines = leak_lines([record("leaked"), record("leaked", "q2"), record("no-effect", "q3", "full-isolation"),
                        record("clean", "q4")])
    assert lines[0] == "leak guard: 4 intervention unit(s) checked: 1 clean, 2 leaked, 1 no-effect, 0 not-checkable"
    assert "  leaked: s x cited-removal: 2 unit(s)" in lines and "  no-effect: s x full-isolation: 1 unit(s)" in lines
    assert leak_lines([record(None)]) == []


def test_the_suite_option_is_validated(tmp_path):
    from provbench.suite import SuiteError, load_suite
    from provbench.testing import TINY_QUESTIONS, registry_of, toy_plugin
    import json

    (tmp_path / "q.json").write_text(json.dumps(list(TINY_QUESTIONS)))
    base = "name: s\ndataset: {loader: questions-json, path: q.json}\nsystems: [top-entity]\n"
    (tmp_path / "ok.yaml").write_text(base + "leak_guard: {include_leaked: true}\n")
    assert load_suite(tmp_path / "ok.yaml", registry_of(toy_plugin())).suite.leak_guard.include_leaked
    (tmp_path / "bad.yaml").write_text(base + "leak_guard:\n  include_leakd: true\n")
    with pytest.raises(SuiteError, match=r"bad.yaml, line 5, field 'leak_guard.include_leakd': unknown field "
                                         r"'include_leakd'; did you mean 'include_leaked'"):
        load_suite(tmp_path / "bad.yaml", registry_of(toy_plugin()))


def test_the_own_store_recipe_in_docs_runs(tmp_path, monkeypatch):
    """The example of docs/integrations.md's own-store section runs as written."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("## Systems that keep their own store", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/integrations.md", "exec"), {"__name__": "docs_integrations_own_store"})
    # the same system without the filter leaks: the guard sees it
    unfiltered = block.replace("found = env.hidden.keep(STORE.items(), text=lambda item: item[1])",
                               "found = list(STORE.items())").replace('== ["svc:2"]', '== ["svc:1", "svc:2"]')
    with pytest.raises(AssertionError):
        exec(compile(unfiltered, "docs/integrations.md (unfiltered)", "exec"), {"__name__": "docs_unfiltered"})


def test_no_effect_is_found_against_a_baseline_recorded_by_an_earlier_run(tmp_path):
    """The baseline's requests come back from records.jsonl as hashes: the comparison survives a resume."""
    import json

    from leak_helpers import leaky_plugin
    from provbench.runner import run_suite
    from provbench.store import RunStore
    from provbench.testing import TINY_QUESTIONS, plugin_manager, schema_following_llm, toy_plugin

    (tmp_path / "q.json").write_text(json.dumps(list(TINY_QUESTIONS)[:2]))
    suite = ("name: resume\ndataset: {loader: questions-json, path: q.json}\n"
             "knowledge_base: {builder: tiny-kb, directory: kb}\nmodel: {id: schema-following}\n"
             "systems: [leaky/ignores-what-it-reads]\n")
    (tmp_path / "first.yaml").write_text(suite)
    (tmp_path / "second.yaml").write_text(suite + "interventions: [p000/cited-removal]\n")
    pm = plugin_manager(toy_plugin(), leaky_plugin(), builtins=True)
    run_suite(tmp_path / "first.yaml", out=tmp_path / "run", pm=pm, llm=schema_following_llm(), write_report=False)
    run_dir = run_suite(tmp_path / "second.yaml", out=tmp_path / "run", pm=pm, llm=schema_following_llm(),
                        write_report=False)
    checked = [r for r in RunStore(run_dir).load_records().values() if r.key.condition == "cited-removal"]
    assert len(checked) == 2 and {r.leak_check.status for r in checked} == {"no-effect"}
