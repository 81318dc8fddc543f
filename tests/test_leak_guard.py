"""The leak guard's three checks (provbench.leakguard) and the hidden-content API (provbench.kb.hidden),
on the tiny knowledge base (see provbench.testing.kb for its contents)."""

from __future__ import annotations

import pytest

from provbench.audit import logged_instructions, request_log
from provbench.capture import UnitCapture
from provbench.leakguard import check_unit, leak_lines, not_measurable
from provbench.model import LLMCall, LeakCheck, Question, RetrievedItem, RunRecord, Trace, UnitKey
from provbench.plugin_api import Environment, MetricValue, Results, left_out_note, with_left_out_notes
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
        llm.chat(
            [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": prompt}], purpose="answer"
        )
    return capture


def sent(messages: list[dict], reply: str = "answer") -> UnitCapture:
    """A capture holding one request of exactly these messages (a replayed history, a tool's
    result), answered ``reply``."""
    capture = UnitCapture("unit")
    capture.add_request(messages, LLMCall(model="m", request_hash="h"), reply, capture.tick())
    return capture


def check(
    view, capture=None, trace=None, baseline=None, question=QUESTION, trace_ids="kb", baseline_requests=None
) -> LeakCheck:
    trace = trace or Trace(question_id="q1", system="s")
    capture = capture or UnitCapture()
    return check_unit(view, question, trace, capture, baseline, trace_ids, baseline_requests=baseline_requests)


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
    assert (
        check(
            view.hide(hide_metadata_of=["ent:dunmere"]), requests(("Dunmere is a coastal town in Norland.", "x"))
        ).status
        == "clean"
    )
    blocked = check(
        view.hide(block_text_of=["ent:kestrel-bridge"]),
        requests(("Kestrel Bridge crosses the Aster River in the middle of Dunmere.", "x")),
    )
    assert leaked_items(blocked) == {("text", "tu:5")}


def test_the_question_and_the_models_own_earlier_words_are_no_leak(view, orin_gone):
    asked = Question(id="q2", question="Where was Orin Vale born?", answer="Dunmere")
    assert check(orin_gone, requests(("Orin Vale?", "x")), question=asked).status == "clean"
    guessed = requests(("Who directed Glass Harbor?", "Maybe Orin Vale"), ("You said Orin Vale. Sure?", "yes"))
    assert check(orin_gone, guessed).status == "clean"
    # the reply to the request that showed the name does not excuse that request
    shown = requests(("It was Orin Vale.", "Orin Vale"), ("Again: Orin Vale.", "yes"))
    assert check(orin_gone, shown).evidence[0].where == "request 1 (answer)"
    # an assistant message is the model's own words, also when a resumed trajectory replays it unasked
    replayed = sent(
        [
            {"role": "assistant", "content": '{"tool": "get_neighbors", "entity_id": "ent:orin-vale"}'},
            {"role": "user", "content": "Error: unknown entity id 'ent:orin-vale'"},
        ],
        "x",
    )
    assert check(orin_gone, replayed).status == "clean"


def test_short_names_and_sentences_are_not_matched(view):
    from provbench.kb.hidden import MIN_NAME_CHARS, MIN_SENTENCE_TOKENS, TextIndex

    index = TextIndex()
    index.add_secret("Leo", "name", "ent:leo")
    index.add_secret("He won.", "text", "tu:9")
    index.add_secret("Aster River", "name", "ent:aster-river")
    assert [s.surface for s in index.secrets.values()] == ["Aster River"]
    assert MIN_NAME_CHARS == 4 and MIN_SENTENCE_TOKENS == 4


# -- (a) trace ids -----------------------------------------------------------------------------------


def test_ids_the_view_hides_in_the_trace_leak_and_unknown_ids_do_not(view, orin_gone):
    trace = Trace(
        question_id="q1",
        system="s",
        visited_entities=[ORIN, "ent:unknown"],
        read_text_units=["tu:3"],
        retrieved=[RetrievedItem(kind="relationship", id="rel:6"), RetrievedItem(kind="text_unit", id="tu:1")],
        read_communities=["com:1"],
    )
    found = check(orin_gone, trace=trace)
    assert found.checks["trace_ids"] == "leaked"
    assert leaked_items(found) == {
        ("entity", ORIN),
        ("relationship", "rel:6"),
        ("text_unit", "tu:1"),
        ("community", "com:1"),
    }
    assert check(orin_gone, trace=trace, trace_ids="own").checks["trace_ids"] == "not-checkable"
    # a trace of known, visible ids is evidence; one of no id the knowledge base knows is none
    assert check(orin_gone, trace=Trace(question_id="q1", system="s", read_text_units=["tu:3"])).status == "clean"
    unknown = check(orin_gone, trace=Trace(question_id="q1", system="s", visited_entities=["ent:unknown"]))
    assert unknown.checks["trace_ids"] == "not-checkable" and unknown.status == "not-checkable"


# -- citations, and a unit with no evidence ------------------------------------------------------------


def cites(*ids: str, answer: str = "Glass Harbor") -> Trace:
    trace = Trace(question_id="q1", system="s", answer=answer)
    trace.citations.entities = [i for i in ids if i.startswith("ent:")]
    trace.citations.text_units = [i for i in ids if i.startswith("tu:")]
    return trace


def test_a_cited_hidden_id_leaks_without_a_model_or_when_shown_and_is_suspect_otherwise(orin_gone):
    alone = check(orin_gone, trace=cites(ORIN, "tu:3"))  # no LLM request: the system itself wrote it
    assert alone.status == "leaked" and alone.checks["citations"] == "leaked"
    assert leaked_items(alone) == {("entity", ORIN)}
    guessed = check(orin_gone, requests(("Which film won the award?", "Glass Harbor")), trace=cites("tu:1"))
    assert guessed.status == "suspect" and guessed.checks["citations"] == "suspect"
    shown = check(orin_gone, requests(("[tu:1] (text withheld)", "Glass Harbor")), trace=cites("tu:1"))
    assert shown.status == "leaked" and shown.checks["citations"] == "leaked"
    assert check(orin_gone, requests(("Which film?", "x")), trace=cites("tu:3")).checks["citations"] == "clean"
    # the model wrote the id itself, and its history shows it back
    own_words = sent([{"role": "assistant", "content": "I cite tu:1."}, {"role": "user", "content": "Sure?"}], "yes")
    assert check(orin_gone, own_words, trace=cites("tu:1")).status == "suspect"


def test_findings_past_the_cap_are_counted_in_a_note_not_listed(orin_gone, monkeypatch):
    import provbench.leakguard

    monkeypatch.setattr(provbench.leakguard, "MAX_EVIDENCE", 1)
    found = check(orin_gone, trace=cites(ORIN, "tu:1"))  # two hidden ids cited, no model: two findings
    assert found.status == "leaked" and len(found.evidence) == 1
    assert found.notes == ["1 more finding(s) not listed"]
    assert check(orin_gone, trace=cites(ORIN)).notes == []


def test_a_tool_echoing_the_models_own_call_shows_it_nothing(orin_gone):
    """A replayed step's call names the id it read (leave-one-step-out-replay's left-out step), and the
    tool's error echoes it: the id is the model's own word, not hidden content shown to it (2wiki-steps'
    random control cited such ids: 2 units called leaked, now suspect). A result listing it is evidence."""
    echoed = sent(
        [
            {"role": "assistant", "content": '{"tool": "read_textunit", "arguments": {"textunit_id": "tu:1"}}'},
            {"role": "user", "content": "Error from read_textunit: text unit 'tu:1' does not exist or cannot be read"},
        ]
    )
    found = check(orin_gone, echoed, trace=cites("tu:1"))
    assert found.checks["citations"] == "suspect" and found.checks["request_text"] == "clean"
    listed = sent([{"role": "user", "content": "Result of get_entity_details: text units tu:1, tu:3"}])
    assert check(orin_gone, listed, trace=cites("tu:1")).checks["citations"] == "leaked"


def instructed(instructions: str, user: str, reply: str = "Glass Harbor", declared: bool = True) -> UnitCapture:
    """One request of a system whose fixed instructions (declared, or not) are its system message."""
    capture = UnitCapture("unit")
    capture.instructions = (instructions,) if declared else ()
    scripted_llm([reply]).bound_to(capture).chat(
        [{"role": "system", "content": instructions}, {"role": "user", "content": user}], purpose="answer"
    )
    return capture


def test_words_of_a_systems_fixed_instructions_are_no_evidence_but_retrieved_ids_are(view):
    hidden = view.hide(text_units=["tu:1"])
    rules = "Cite passage ids as in tu:1 or tu:3. Answer briefly."  # an id that is also a word of the prompt
    question = "Which film won the Silver Reel Award?"
    undeclared = check(hidden, instructed(rules, question, declared=False), trace=cites("tu:1"))
    assert undeclared.status == "leaked" and undeclared.checks["citations"] == "leaked"
    declared = check(hidden, instructed(rules, question), trace=cites("tu:1"))
    assert declared.checks == {
        "trace_ids": "not-checkable",
        "citations": "suspect",
        "request_text": "clean",
        "no_effect": "not-checkable",
    }
    retrieved = check(hidden, instructed(rules, f"[tu:1] (text withheld)\n\n{question}"), trace=cites("tu:1"))
    assert retrieved.status == "leaked" and ("id", "tu:1") in leaked_items(retrieved)
    quoted = check(
        hidden, instructed(rules, f"Tessa Quill starred in Glass Harbor, which Lumen Studios produced.\n\n{question}")
    )
    assert quoted.status == "leaked" and quoted.checks["request_text"] == "leaked"
    # a baseline whose prompts named the hidden id only in the instructions: no effect is not claimed
    same, read = instructed(rules, question), Trace(question_id="q1", system="s", read_text_units=["tu:1"])
    assert (
        check_unit(hidden, QUESTION, cites(), same, read, baseline_requests=same.requests).checks["no_effect"]
        == "clean"
    )
    # the record keeps the instructions, so `provbench audit` reads the requests as the run did
    log = request_log(same.requests, same.instructions)
    assert logged_instructions(log) == (rules,) and logged_instructions(request_log(same.requests)) == ()


def test_a_cited_id_that_names_nothing_is_never_hidden(view):
    odd = view.hide(text_units=["tu:1", "Rules"])  # an intervention hid a model's citation "Rules" too
    trace = cites()
    trace.citations.text_units = ["Rules"]
    found = check(odd, instructed("Rules: answer briefly.", "Which film?", declared=False), trace=trace)
    assert found.checks["citations"] == "clean" and found.status == "clean"


def test_an_empty_trace_without_requests_is_not_checkable_unless_its_answer_shows_hidden_content(orin_gone):
    assert check(orin_gone, trace=cites(answer="Glass Harbor")).status == "not-checkable"
    named = check(orin_gone, trace=cites(answer="Orin Vale"))  # a removed entity's name, with no model to guess it
    assert named.status == "leaked" and named.evidence[0].where == "answer (no LLM request)"


def test_a_hidden_id_in_a_request_is_hidden_content_where_its_name_is_visible(view):
    only_entity = view.hide(entities=[ORIN])  # his name stays readable in the text units
    assert check(only_entity, requests(("Orin Vale directed it.", "x"))).status == "clean"
    found = check(only_entity, requests(("[ent:orin-vale] Orin Vale directed it.", "x")))
    assert found.status == "leaked" and ("id", ORIN) in leaked_items(found)
    assert check(view.hide(text_units=["tu:3"]), requests(("see tu:33 and tu:30", "x"))).status == "clean"


def test_an_own_store_system_under_a_text_ablation_needs_a_quotation_to_be_judged(view, orin_gone):
    text_only = view.hide(text_units=["tu:0", "tu:1", "tu:2"])  # removes no entity: a text ablation
    paraphrase = requests(("A Vale picture took the big prize.", "Glass Harbor"))
    assert check(text_only, paraphrase, trace_ids="own").status == "not-checkable"
    quoted = requests(("Lumen Studios employed Orin Vale for a decade.", "x"))
    assert check(text_only, quoted, trace_ids="own").status == "leaked"
    assert check(orin_gone, requests(("Which film won?", "x")), trace_ids="own").status == "clean"


def test_an_intervention_that_hid_nothing_is_a_no_op(view):
    found = check(view.hide(), requests(("Orin Vale?", "x")), trace=cites(ORIN))
    assert found.status == "no-op" and found.notes == ["the intervention hid nothing of the knowledge base"]
    # hiding ids the knowledge base does not hold (a model cited "Rules") hides nothing either
    assert check(view.hide(text_units=["Rules"], entities=["ent:nobody"])).status == "no-op"
    base = view.hide(text_units=["tu:5"])  # a run whose own view already hides something
    assert (
        check_unit(base.hide(text_units=["tu:5"]), QUESTION, cites(), UnitCapture(), None, base=base).status == "no-op"
    )
    assert (
        check_unit(base.hide(text_units=["tu:4"]), QUESTION, cites(), UnitCapture(), None, base=base).status != "no-op"
    )


# -- (d) no effect -------------------------------------------------------------------------------------


def test_requests_identical_to_a_baseline_whose_prompts_showed_hidden_items_have_no_effect(view):
    no_bridge = view.hide(relations=["rel:6"])  # both names stay visible: only the relation is gone
    line = "Orin Vale born in Dunmere."
    baseline_capture = requests((line, "Dunmere"))
    baseline = Trace(question_id="q1", system="s", retrieved=[RetrievedItem(kind="relationship", id="rel:6")])
    read = Trace(question_id="q1", system="s", read_text_units=["tu:3"])
    found = check(no_bridge, requests((line, "Dunmere")), read, baseline, baseline_requests=baseline_capture.requests)
    assert found.status == "no-effect" and found.evidence[0].check == "no_effect"
    changed = check(
        no_bridge, requests(("Where was he born?", "x")), cites(), baseline, baseline_requests=baseline_capture.requests
    )
    assert changed.checks["no_effect"] == "clean"
    # a retriever returned the relation, but the pipeline dropped it before the prompt: no effect expected
    dropped = requests(("Norland is a country.", "x"))
    unseen = check(
        no_bridge, requests(("Norland is a country.", "x")), cites(), baseline, baseline_requests=dropped.requests
    )
    assert unseen.checks["no_effect"] == "clean"
    # without the baseline's stored requests it cannot be compared
    assert (
        check_unit(no_bridge, QUESTION, cites(), requests((line, "x")), baseline).checks["no_effect"] == "not-checkable"
    )


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
    return RunRecord(
        key=UnitKey(question_id=question, system="s", condition=condition),
        leak_check=check_,
        trace=Trace(question_id=question, system="s"),
    )


def test_the_pairing_rule_leaves_out_leaked_no_effect_no_op_and_not_checkable_units():
    records = [
        record("leaked", "q1"),
        record("clean", "q2"),
        record(None, "q3", "baseline"),
        record("no-op", "q4"),
        record("not-checkable", "q5"),
        record("no-effect", "q6"),
        record("suspect", "q7"),
    ]
    assert [r.key.question_id for r in Results(records, {}).select("s", "cited-removal")] == ["q2", "q7"]
    assert len(Results(records, {}, include_leaked=True).select("s", "cited-removal")) == 3
    assert len(Results(records, {}).select("s", "cited-removal", leaked=True)) == 6
    assert left_out_note(records) == "1 leaked, 1 no-effect, 1 no-op, 1 not-checkable"


def test_a_cell_with_no_unit_left_is_not_measurable():
    assert not_measurable([record("leaked"), record("no-effect")]) == "not measurable: 1 leaked, 1 no-effect"
    assert not_measurable([record("no-op"), record("no-op")]) == "not measurable: 2 no-op"
    assert not_measurable([record("leaked"), record("clean")]) is None
    assert not_measurable([record("leaked")], include_leaked=True) is None
    assert not_measurable([record(None)]) is None and not_measurable([]) is None


def test_every_metric_value_notes_the_units_left_out_beside_it():
    records = [record("no-op", "q1"), record("clean", "q2"), record("no-op", "q1", "random-removal")]
    values = [
        MetricValue(metric="m", system="s", condition="cited-removal", value=0.5),
        MetricValue(metric="n", system="s", condition="cited-removal vs random-removal", value=0.0),
        MetricValue(metric="b", system="s", value=1.0),
    ]
    noted = with_left_out_notes(values, Results(records, {}))
    assert noted[0].value == 0.5 and noted[0].note == "left out (leak guard): 1 no-op"
    assert noted[0].detail["left_out"] == {"no-op": 1}
    assert noted[1].value is None and noted[1].note == "not measurable: 1 no-op"
    assert noted[2].note == "" and "left_out" not in noted[2].detail


def test_the_console_lines_name_system_condition_and_count():
    lines = leak_lines(
        [
            record("leaked"),
            record("leaked", "q2"),
            record("no-effect", "q3", "full-isolation"),
            record("clean", "q4"),
            record("no-op", "q5"),
        ]
    )
    assert lines[0] == "leak guard: 5 intervention unit(s) checked: 1 clean, 2 leaked, 1 no-effect, 1 no-op"
    assert "  leaked: s x cited-removal: 2 unit(s)" in lines and "  no-effect: s x full-isolation: 1 unit(s)" in lines
    assert "  no-op: s x cited-removal: 1 unit(s)" in lines
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
    with pytest.raises(
        SuiteError,
        match=r"bad.yaml, line 5, field 'leak_guard.include_leakd': unknown field "
        r"'include_leakd'; did you mean 'include_leaked'",
    ):
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
    unfiltered = block.replace(
        "found = env.hidden.keep(STORE.items(), text=lambda item: item[1])", "found = list(STORE.items())"
    ).replace('== ["svc:2"]', '== ["svc:1", "svc:2"]')
    with pytest.raises(AssertionError):
        exec(compile(unfiltered, "docs/integrations.md (unfiltered)", "exec"), {"__name__": "docs_unfiltered"})


def test_no_effect_is_found_against_a_baseline_recorded_by_an_earlier_run(tmp_path):
    """The baseline's requests come back from records.jsonl (their log and hashes): the comparison survives a resume."""
    import json

    from leak_helpers import leaky_plugin
    from provbench.runner import run_suite
    from provbench.run_store import RunStore
    from provbench.testing import TINY_QUESTIONS, plugin_manager, schema_following_llm, toy_plugin

    (tmp_path / "q.json").write_text(json.dumps(list(TINY_QUESTIONS)[:2]))
    suite = (
        "name: resume\ndataset: {loader: questions-json, path: q.json}\n"
        "knowledge_base: {builder: tiny-kb, directory: kb}\nmodel: {id: schema-following}\n"
        "systems: [leaky/relation-cache]\n"
    )
    (tmp_path / "first.yaml").write_text(suite)
    (tmp_path / "second.yaml").write_text(suite + "interventions: [invalidate-used-edges]\n")
    pm = plugin_manager(toy_plugin(), leaky_plugin(), builtins=True)
    run_suite(tmp_path / "first.yaml", out=tmp_path / "run", pm=pm, llm=schema_following_llm(), write_report=False)
    run_dir = run_suite(
        tmp_path / "second.yaml", out=tmp_path / "run", pm=pm, llm=schema_following_llm(), write_report=False
    )
    checked = [r for r in RunStore(run_dir).load_records().values() if r.key.condition == "invalidate-used-edges"]
    assert len(checked) == 2 and {r.leak_check.status for r in checked} == {"no-effect"}
