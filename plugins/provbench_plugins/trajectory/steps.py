"""Which step mattered: leave one step of an agent's trajectory out, and see whether the answer changes.

``leave-one-step-out`` is an enumerated, graph-level intervention for systems that can resume from a
step (:meth:`provbench.plugin_api.System.resume_from_step`: the tool-agent loop, paper 002's planning
loop). For each step of the baseline trajectory that showed something new (``Step.shown`` ids no
earlier step had shown) it lists one variant, ``step:<k>``. That variant's unit:

1. hides, through the view, the items step ``k`` first showed (entities, relations, text units,
   community reports), for the whole re-run, so the system cannot simply fetch them again;
2. replays the steps before ``k`` as recorded (their recorded replies, no LLM call) and step ``k``'s
   recorded action, whose result is now what the view returns;
3. lets the system decide again from there on (``leave-one-step-out``), or replays its remaining
   recorded actions too and lets it decide only the answer (``leave-one-step-out-replay``); a later
   recorded action that shows what the view hides (written having seen step ``k``) is not replayed
   (the system's ``artifacts["resumed"]["withheld"]``).

A step is *critical* when leaving it out changes the answer (``scores["output_changed"]``). Each
variant's data names the step, its tool and what was hidden; the ``gold-trajectory`` metric reports,
per system, the share of answers that depend on a single step and the step most often critical.

Opt-in: a question gets one unit per step that showed something, so a system's units multiply by up
to its step budget.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar

from provbench.model import Question, Trace
from provbench.plugin_api import Intervention, ResumePoint, Variant
from provbench.trajectory import LEFT_OUT_STEP, new_items

if TYPE_CHECKING:
    from provbench.kb import GraphView

HIDE_ARGUMENT = {
    "entity": "entities",
    "relationship": "relations",
    "text_unit": "text_units",
    "community": "communities",
}


class LeaveOneStepOut(Intervention):
    """Leave out one step's results (hidden from then on) and let the system go on from there."""

    name = "leave-one-step-out"
    level = "graph"
    resumes = True
    replay_rest: ClassVar[bool] = False

    def variants(self, question: Question, baseline: Trace, rng: random.Random) -> list[Variant]:
        found = []
        for step in baseline.steps:
            hidden = {kind: ids for kind, ids in new_items(step, baseline).items() if kind in HIDE_ARGUMENT}
            if not hidden:
                continue
            count = sum(map(len, hidden.values()))
            what = "; ".join(f"{len(ids)} {kind.replace('_', ' ')}(s)" for kind, ids in hidden.items())
            found.append(
                Variant(
                    id=f"step:{step.index}",
                    description=f"step {step.index} ({step.tool or step.kind}) left out: the {count} item(s) it "
                    f"first showed ({what}) hidden from then on"
                    + ("; later actions replayed" if self.replay_rest else ""),
                    data={
                        LEFT_OUT_STEP: step.index,
                        "tool": step.tool or step.kind,
                        "hidden": hidden,
                        "replay_rest": self.replay_rest,
                    },
                )
            )
        return found

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random, **kwargs: Any
    ) -> "GraphView":
        hidden = kwargs["variant"].data["hidden"]
        return view.hide(**{HIDE_ARGUMENT[kind]: ids for kind, ids in hidden.items()})

    def resume_point(self, question: Question, baseline: Trace, rng: random.Random, **kwargs: Any) -> ResumePoint:
        return ResumePoint(step=kwargs["variant"].data[LEFT_OUT_STEP], replay_rest=self.replay_rest)


class LeaveOneStepOutReplay(LeaveOneStepOut):
    """Leave out one step's results and replay the remaining recorded actions; only the answer is re-decided."""

    name = "leave-one-step-out-replay"
    replay_rest = True
