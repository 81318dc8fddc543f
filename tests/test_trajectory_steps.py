"""Which step mattered: steps record what they showed and the model's reply, the tool-agent loop resumes
from a step, and the leave-one-step-out intervention finds the step a scripted agent's answer needs."""

from __future__ import annotations

import json
import random

import pytest
from systems_helpers import systems_kb, view  # noqa: F401

from provbench.gold import GoldEvidence, GoldSentence, GoldTriple
from provbench.llm import LLMClient, ScriptedBackend
from provbench.model import Question
from provbench.plugin_api import Environment, ResumePoint
from provbench_plugins.papers.p000_neighborhoods.agentic import AgenticEvidenceFirst, AgenticGraphRAG
from provbench_plugins.trajectory.steps import LeaveOneStepOut

PLANTED = 2  # the step whose result the answer needs: reading tu:3 ("Dunmere is a coastal town in Norland.")
PLAN = [
    ("search_entities", {"query": "Orin Vale"}),
    ("get_neighbors", {"entity_id": "ent:orin-vale"}),
    ("read_textunit", {"textunit_id": "tu:3"}),
    ("search_entities", {"query": "Kestrel Bridge"}),
]


def planted_agent(messages: list[dict]) -> dict:
    """Follows PLAN, then answers Norland exactly when its conversation holds tu:3's sentence."""
    done = sum(m["role"] == "assistant" for m in messages)
    if done < len(PLAN):
        tool, arguments = PLAN[done]
        return {"thought": f"step {done}", "tool": tool, "arguments": arguments}
    seen = "coastal town in Norland" in "\n".join(m["content"] for m in messages)
    return {
        "thought": "done",
        "tool": "submit_answer",
        "arguments": {"answer": "Norland" if seen else "unknown", "cited_textunits": ["tu:3"] if seen else []},
    }


def question() -> Question:
    gold = GoldEvidence(
        sentences=[GoldSentence(document="Dunmere", index=0, text="Dunmere is a coastal town in Norland.")],
        triples=[
            GoldTriple(subject="Orin Vale", relation="born in", object="Dunmere"),
            GoldTriple(subject="Dunmere", relation="located in", object="Norland"),
        ],
        entities=["Orin Vale", "Dunmere", "Norland"],
    )
    return Question(id="q-born", question="In which country was Orin Vale born?", answer="Norland", gold=gold)


def planted_llm() -> tuple[LLMClient, ScriptedBackend]:
    backend = ScriptedBackend([planted_agent] * 200)
    return LLMClient(backend, max_attempts=1), backend


def baseline(view):
    llm, backend = planted_llm()
    return AgenticGraphRAG().run(question(), Environment(view=view, llm=llm)), backend


def test_steps_record_the_reply_and_what_their_result_showed(view):
    trace, _ = baseline(view)
    assert trace.answer == "Norland" and [s.tool for s in trace.steps] == [t for t, _ in PLAN] + ["submit_answer"]
    assert all(json.loads(s.reply)["tool"] == s.tool for s in trace.steps)
    hits = [h.id for h in view.search_entities("Orin Vale", k=5)]
    assert trace.steps[0].shown == {"entity": hits}
    assert set(trace.steps[1].shown) == {"relationship", "entity"} and "rel:6" in trace.steps[1].shown["relationship"]
    assert trace.steps[2].shown == {"text_unit": ["tu:3"]}
    assert trace.steps[4].shown is None  # a submission reads nothing


def test_details_list_text_units_without_showing_them(view):
    llm = LLMClient(
        ScriptedBackend(
            [
                {"thought": "", "tool": "get_entity_details", "arguments": {"entity_id": "ent:dunmere"}},
                {"thought": "", "tool": "submit_answer", "arguments": {"answer": "x"}},
            ]
        ),
        max_attempts=1,
    )
    trace = AgenticGraphRAG().run(question(), Environment(view=view, llm=llm))
    assert trace.steps[0].shown == {"entity": ["ent:dunmere"]}  # its text units are listed, not read


def test_resuming_with_nothing_hidden_reproduces_the_run_without_asking_for_the_replayed_steps(view):
    recorded, _ = baseline(view)
    llm, backend = planted_llm()
    resumed = AgenticGraphRAG().resume_from_step(
        question(), Environment(view=view, llm=llm), recorded, ResumePoint(step=PLANTED)
    )
    strip = lambda t: [s.model_dump() for s in t.steps]  # noqa: E731
    assert strip(resumed) == strip(recorded) and resumed.answer == recorded.answer
    assert len(backend.calls) == 2 and len(resumed.llm_calls) == 2  # steps 3 and 4 decided; 0-2 replayed
    assert resumed.artifacts["resumed"] == {
        "from_step": PLANTED,
        "replay_rest": False,
        "replayed_steps": 3,
        "diverged": [],
        "withheld": [],
    }


def test_the_left_out_step_sees_the_view_and_the_model_decides_from_there(view):
    recorded, _ = baseline(view)
    llm, backend = planted_llm()
    resumed = AgenticGraphRAG().resume_from_step(
        question(), Environment(view=view.hide(text_units=["tu:3"]), llm=llm), recorded, ResumePoint(step=PLANTED)
    )
    assert resumed.steps[PLANTED].kind == "error" and "tu:3" in resumed.steps[PLANTED].error
    assert resumed.steps[PLANTED].shown == {}  # a read that found nothing: a retrieval step all the same
    assert resumed.answer == "unknown" and len(backend.calls) == 2


def test_replay_rest_replays_the_later_actions_and_decides_only_the_answer(view):
    recorded, _ = baseline(view)
    llm, backend = planted_llm()
    resumed = AgenticGraphRAG().resume_from_step(
        question(),
        Environment(view=view.hide(text_units=["tu:3"]), llm=llm),
        recorded,
        ResumePoint(step=PLANTED, replay_rest=True),  # the step that first showed tu:3
    )
    assert [s.tool for s in resumed.steps] == [s.tool for s in recorded.steps]
    assert len(backend.calls) == 1 and resumed.answer == "unknown"  # only the final answer was asked for
    offered = [branch["properties"]["tool"]["enum"][0] for branch in backend.calls[0]["schema"]["anyOf"]]
    assert offered == ["submit_answer"]
    assert resumed.artifacts["resumed"]["replayed_steps"] == 4 and resumed.artifacts["resumed"]["withheld"] == []


def test_replay_rest_withholds_later_actions_that_name_what_the_left_out_step_showed(view):
    """Step 0 first showed ent:orin-vale; step 1's recorded action names it (get_neighbors). Replayed,
    it would hand the model the hidden id (as 2wiki-steps' random control then cited such ids): it is
    withheld, and nothing the view hides reaches the model's prompt."""
    from provbench.leakguard import shows_hidden
    from provbench_plugins.trajectory.steps import LeaveOneStepOutReplay

    recorded, _ = baseline(view)
    replay, rng = LeaveOneStepOutReplay(), random.Random(0)
    (variant,) = [v for v in replay.variants(question(), recorded, rng) if v.id == "step:0"]
    hiding = replay.make_view(view, question(), recorded, rng, variant=variant)
    assert "ent:orin-vale" in variant.data["hidden"]["entity"]
    llm, backend = planted_llm()
    resumed = AgenticGraphRAG().resume_from_step(
        question(),
        Environment(view=hiding, llm=llm),
        recorded,
        replay.resume_point(question(), recorded, rng, variant=variant),
    )
    assert resumed.artifacts["resumed"]["withheld"] == [1]
    assert [s.tool for s in resumed.steps][:3] == ["search_entities", "read_textunit", "search_entities"]
    assert resumed.steps[-1].tool == "submit_answer"
    assert not any(shows_hidden(hiding, question(), m["content"]) for m in backend.calls[-1]["messages"])


def test_evidence_first_replays_its_accepted_evidence(view):
    replies = [
        {"thought": "", "tool": "read_textunit", "arguments": {"textunit_id": "tu:3"}},
        {"thought": "", "tool": "submit_evidence", "arguments": {"cited_textunits": ["tu:3"]}},
        {"thought": "", "tool": "submit_answer", "arguments": {"answer": "Norland"}},
    ]
    recorded = AgenticEvidenceFirst().run(question(), Environment(view=view, llm=LLMClient(ScriptedBackend(replies))))
    assert recorded.steps[1].shown is None and recorded.citations.text_units == ["tu:3"]
    final = LLMClient(ScriptedBackend([replies[-1]]))
    resumed = AgenticEvidenceFirst().resume_from_step(
        question(), Environment(view=view, llm=final), recorded, ResumePoint(step=1)
    )
    assert resumed.citations.text_units == ["tu:3"] and resumed.answer == "Norland"


def test_a_trace_without_replies_cannot_be_resumed(view):
    recorded, _ = baseline(view)
    for s in recorded.steps:
        s.reply = None
    with pytest.raises(ValueError, match="no reply"):
        AgenticGraphRAG().resume_from_step(
            question(), Environment(view=view, llm=planted_llm()[0]), recorded, ResumePoint(step=1)
        )


def test_variants_hide_what_each_step_first_showed(view):
    recorded, _ = baseline(view)
    variants = LeaveOneStepOut().variants(question(), recorded, None)
    assert [v.id for v in variants] == [f"step:{i}" for i in range(len(PLAN))]
    hidden = {v.data["left_out_step"]: v.data["hidden"] for v in variants}
    assert hidden[PLANTED] == {"text_unit": ["tu:3"]}
    assert not set(hidden[1]["entity"]) & set(recorded.steps[0].shown["entity"])  # only what was new
    view_of = LeaveOneStepOut().make_view(view, question(), recorded, None, variant=variants[PLANTED])
    assert view_of.text_unit("tu:3") is None and view_of.entity("ent:dunmere") is not None


SUITE = """
name: planted-step
dataset: {{loader: toy/questions-json, path: {questions}}}
knowledge_base: {{builder: toy/tiny-kb, directory: {kb}}}
model: {{id: scripted}}
systems: [agentic-graphrag]
interventions: [leave-one-step-out]
metrics: [accuracy, gold-trajectory]
"""


def test_leave_one_step_out_finds_the_planted_step(tmp_path):
    from provbench.report import write_report
    from provbench.runner import run_suite
    from provbench.run_store import RunStore
    from provbench.testing import plugin_manager, toy_plugin

    (tmp_path / "questions.json").write_text(json.dumps([question().model_dump(mode="json")]))
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(questions=tmp_path / "questions.json", kb=tmp_path / "kb"))
    pm = plugin_manager(toy_plugin(), builtins=True)
    run_dir = run_suite(suite, out=tmp_path / "run", pm=pm, llm=planted_llm()[0], write_report=False)
    records = RunStore(run_dir).load_records().values()
    changed = {r.key.variant: r.scores["output_changed"] for r in records if r.key.condition == "leave-one-step-out"}
    assert changed == {f"step:{i}": float(i == PLANTED) for i in range(len(PLAN))}
    calls = {r.key.variant: len(r.trace.llm_calls) for r in records if r.key.condition == "leave-one-step-out"}
    assert calls == {f"step:{i}": len(PLAN) - i for i in range(len(PLAN))}  # resumed: steps up to i replayed
    assert all(r.leak_check.status == "clean" for r in records if r.key.condition != "baseline")
    metrics = {
        v["metric"]: v
        for v in json.loads((run_dir / "metrics.json").read_text())["values"]
        if v["condition"] == "leave-one-step-out"
    }
    assert metrics["gold-trajectory.critical_step"]["value"] == PLANTED
    assert metrics["gold-trajectory.single_step_dependence"]["value"] == 1.0
    write_report(run_dir, pm)
    page = next((run_dir / "pages").glob("q-born*.html")).read_text()
    rows = page.split('<table class="gold-chain">')[1].split("</table>")[0].split("<tr")
    critical = [row for row in rows if "✱ changed" in row]
    assert len(critical) == 1 and f'<td class="idx">{PLANTED}</td>' in critical[0]
    assert "Trajectory against gold" in (run_dir / "report.html").read_text()
