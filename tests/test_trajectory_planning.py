"""Paper 002's planning loop resumes from a step: its seed and expand steps record what they brought
into the evidence, its synthesize steps their replies, and leave-one-step-out finds the round whose
expansion a scripted planner's answer needs (on test_p002_planning's concept graph).

The chain used: rho -prerequisite-> sigma -prerequisite-> tau -builds_on-> phi;
sigma -builds_on-> upsilon -contrasts_with-> chi. Step 0 seeds Rho, step 1 (round 1) brings Sigma,
step 3 (round 2) Tau and Upsilon, step 5 (round 3) Phi and Chi; steps 2, 4, 6 synthesize.
"""

from __future__ import annotations

import json
import random

import pytest
from test_p002_planning import view  # noqa: F401  (the module's concept-graph fixture)

from provbench.llm import LLMClient, ScriptedBackend
from provbench.model import Question
from provbench.plugin_api import Environment, ResumePoint
from provbench_plugins.papers.p002_planning.loop import PlanningLoop
from provbench_plugins.trajectory.steps import LeaveOneStepOut

PLANTED = 3  # round 2's expansion: it brings Tau Topic, which the planner's answer needs
OPTIONS = {"fallback_search_k": 3}  # a question naming no concept left is seeded by similarity search
QUESTION = Question(id="q-rho", question="What does Rho Topic lead to?", answer="Tau Topic")


def planner(messages: list[dict]) -> dict:
    """Low confidence in rounds 1 and 2; in round 3, Tau Topic when its evidence lists it."""
    prompt = messages[-1]["content"]
    if "round 3" not in prompt.lower():
        return {"answer": "", "confidence": 0.1, "focus": "", "relation_types": []}
    return {
        "answer": "Tau Topic" if "Tau Topic" in prompt else "unknown",
        "confidence": 0.9,
        "focus": "",
        "relation_types": [],
    }


def planned_llm() -> tuple[LLMClient, ScriptedBackend]:
    backend = ScriptedBackend([planner] * 20)
    return LLMClient(backend, max_attempts=1), backend


def baseline(view):
    return PlanningLoop(**OPTIONS).run(QUESTION, Environment(view=view, llm=planned_llm()[0]))


def resume(view, recorded, step, replay_rest=False):
    llm, backend = planned_llm()
    variant = next(
        v for v in LeaveOneStepOut().variants(QUESTION, recorded, random.Random(0)) if v.id == f"step:{step}"
    )
    hiding = LeaveOneStepOut().make_view(view, QUESTION, recorded, random.Random(0), variant=variant)
    trace = PlanningLoop(**OPTIONS).resume_from_step(
        QUESTION, Environment(view=hiding, llm=llm), recorded, ResumePoint(step=step, replay_rest=replay_rest)
    )
    return trace, backend


def test_steps_record_what_they_brought_in_and_the_replies(view):
    trace = baseline(view)
    assert trace.answer == "Tau Topic" and [s.tool for s in trace.steps] == ["seed"] + ["expand", "synthesize"] * 3
    assert [(s.tool, s.shown) for s in trace.steps if s.kind == "retrieval"] == [
        ("seed", {"entity": ["ent:rho"]}),
        ("expand", {"entity": ["ent:sigma"], "relationship": [trace.steps[1].result["edges"][0]]}),
        ("expand", {"entity": ["ent:tau", "ent:upsilon"], "relationship": trace.steps[3].result["edges"]}),
        ("expand", {"entity": ["ent:phi", "ent:chi"], "relationship": trace.steps[5].result["edges"]}),
    ]
    generations = [s for s in trace.steps if s.tool == "synthesize"]
    assert [json.loads(s.reply)["confidence"] for s in generations] == [0.1, 0.1, 0.9]
    assert all(s.shown is None for s in generations)


def test_resuming_with_nothing_hidden_replays_the_earlier_rounds_without_asking(view):
    recorded = baseline(view)
    llm, backend = planned_llm()
    resumed = PlanningLoop().resume_from_step(
        QUESTION, Environment(view=view, llm=llm), recorded, ResumePoint(step=PLANTED)
    )
    strip = lambda t: [s.model_dump() for s in t.steps]  # noqa: E731
    assert strip(resumed) == strip(recorded) and resumed.answer == recorded.answer
    assert len(backend.calls) == 2  # rounds 2 and 3 decided again; round 1's reply replayed
    assert resumed.artifacts["resumed"] == {
        "from_step": PLANTED,
        "replay_rest": False,
        "replayed_steps": 1,
        "diverged": [],
        "withheld": [],
    }


def test_leaving_out_the_planted_round_changes_the_answer(view):
    recorded = baseline(view)
    variants = {v.id: v.data["hidden"] for v in LeaveOneStepOut().variants(QUESTION, recorded, random.Random(0))}
    assert sorted(variants) == ["step:0", "step:1", "step:3", "step:5"]
    runs = {step: resume(view, recorded, step)[0] for step in (0, 1, 3, 5)}
    changed = {step: trace.answer != recorded.answer for step, trace in runs.items()}
    # without Rho, similarity search seeds the loop on the chain further down, so Tau is still reached;
    # without Sigma or the planted round, Tau never is; without round 3's Phi and Chi that round has
    # nothing new to examine, and by the paper's rule round 2's unconfident reply stands: it abstains
    assert changed == {0: False, 1: True, PLANTED: True, 5: True}
    assert runs[0].steps[0].result[0]["how"] == "search"
    assert "nothing new" in runs[5].artifacts["abstention_reason"]
    left_out, backend = resume(view, recorded, PLANTED)
    assert "ent:tau" not in left_out.visited_entities and left_out.artifacts["resumed"]["diverged"] == []
    assert len(backend.calls) == 0  # round 1 replayed; round 2 found nothing new to ask about
    assert left_out.outcome == "abstained" and [s.tool for s in left_out.steps] == [
        "seed",
        "expand",
        "synthesize",
        "expand",
    ]


def test_replay_rest_decides_only_the_last_reply(view):
    recorded = baseline(view)
    decided, asked = resume(view, recorded, 0)
    replayed, asked_once = resume(view, recorded, 0, replay_rest=True)  # the seed left out: search seeds it
    assert [s.result for s in replayed.steps if s.kind == "retrieval"] == [
        s.result for s in decided.steps if s.kind == "retrieval"
    ]
    assert len(asked.calls) == 3 and len(asked_once.calls) == 1  # rounds 1 and 2 replayed: only round 3 asked
    assert asked_once.calls[0]["messages"][-1]["content"] == asked.calls[2]["messages"][-1]["content"]
    assert replayed.artifacts["resumed"] == {
        "from_step": 0,
        "replay_rest": True,
        "replayed_steps": 2,
        "diverged": [],
        "withheld": [],
    }


def test_a_trace_without_replies_cannot_be_resumed(view):
    recorded = baseline(view)
    for s in recorded.steps:
        s.reply = None
    with pytest.raises(ValueError, match="no reply"):
        PlanningLoop().resume_from_step(
            QUESTION, Environment(view=view, llm=planned_llm()[0]), recorded, ResumePoint(step=PLANTED)
        )
