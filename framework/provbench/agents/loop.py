"""The schema-constrained action loop every tool-using agent shares.

Each step is one LLM call whose reply is constrained by a JSON schema to
``{"thought": str, "tool": <a tool offered this step>, "arguments": {...}}``. The tool runs and
its result goes back to the model as text. Every step, good or bad, uses one unit of the
``max_steps`` budget; when it is spent without an accepted answer the trace ends with
``outcome="budget_exhausted"`` and ``answer=None`` (the last rejected answer, if any, is kept in
``artifacts["last_rejected_answer"]``).

What each step records (a :class:`~provbench.model.Step`)
    ``tool_call``  a well-formed call that ran; ``result`` is the tool's summary.
    ``rejection``  the reply broke the protocol or a rule: not a JSON object, a tool not offered,
                   bad arguments, an exact repeat of an earlier call, citations that fail
                   :meth:`ToolAgent.check_submission`.
    ``error``      a well-formed call the environment could not serve, or a failed LLM call (the
                   run then ends ``failed``).
    Rejections and errors are reported to the model in the next message.

Finishing within the budget (``force_final_answer``, on by default)
    The last step offers only the finishing tools (:attr:`Tool.finishes`, e.g. submit_answer),
    and their citation lists may only name ids the agent can cite (:meth:`ToolAgent.citable_ids`),
    with tighter string and list caps (``tools.FORCED_LIMITS``) and twice the usual token cap,
    so the reply is never cut off.
    A submission on that step is never sent back: citations that fail the checks are dropped and
    listed in ``artifacts["flagged_citations"]``. An answer accepted there sets
    ``artifacts["forced_answer"] = True`` and its step's result carries ``"forced": true``.
    :meth:`ToolAgent.offered_tools` decides what a step offers (a variant may force more steps).

Repeats (``reject_repeats``, on by default)
    A call with exactly the same tool and arguments as an earlier one is rejected with a hint,
    without running: a small model otherwise spends its budget repeating one search. Finishing
    tools are exempt: a repeated submission is a retry, bounded by ``max_retries``.

Submissions
    Citations must pass :meth:`ToolAgent.check_submission` (overridable; by default every cited
    id must exist in ``env.view``). A rejected submission may be retried ``max_retries`` times;
    the next rejection ends the run as ``answered`` with the citations that passed, the failed
    ones in ``artifacts["flagged_citations"]``. With ``check_citations: false`` cited ids need not
    exist and a forced submission may cite any id (only a subclass's own rules still apply): the
    agent's citations are recorded as it gave them (a study of unconstrained citing needs this).

What each step keeps for later
    ``reply`` is the model's reply text as received; ``shown`` the ids whose content the tool's
    result showed (what handlers pass to :meth:`AgentRun.show`), None for a tool that does not
    read (:attr:`Tool.reads`: submissions) and for a rejected reply.

Resuming from a step (:meth:`ToolAgent.resume_from_step`, the leave-one-step-out intervention)
    A new run replays the recorded replies of the steps before ``point.step`` and of that step
    itself: no LLM call, each action runs again against the run's view, so the step's result is
    what that view returns now (a step before it whose result differs from the recorded one is
    listed in ``artifacts["resumed"]["diverged"]``). From the next step on the model decides again;
    with ``point.replay_rest`` the recorded actions after the step are replayed as well, all but
    the accepted final answer, and the model decides only how to finish: that step offers only the
    finishing tools, as the budget's last step does. A later recorded reply that shows something the
    view hides (an id, name or sentence the left-out step first showed) is withheld, not replayed
    (``artifacts["resumed"]["withheld"]``): it was written having seen that step, and replayed it
    would hand the model what the view hides.

Extending: override :meth:`~ToolAgent.tools`, :meth:`~ToolAgent.check_submission`,
:meth:`~ToolAgent.rules` or :meth:`~ToolAgent.offered_tools`; word the prompts with ``messages``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import Field

from ..leakguard import shows_hidden
from ..model import Citations, Question, Step, Trace
from ..plugin_api import Environment, ResumePoint
from .base import LLMSystem, SystemOptions, clip, replayed_reply, reply_object
from .tools import KIND_OF_FIELD, CitationProblem, Tool, ToolFailure, ToolResult, citations_from, rejected, without


@dataclass(frozen=True)
class AgentMessages:
    """How the loop words its messages (``str.format`` templates). A paper sets its own."""

    system: str = (
        "Answer the question using the tools. At every step reply with one JSON object "
        '{{"thought": "...", "tool": "<tool name>", "arguments": {{...}}}}.\n\n'
        "Tools:\n{tools}\n\nRules:\n{rules}"
    )
    rules: str = "- You have at most {max_steps} steps; call a finishing tool before they run out."
    tool_line: str = "- {name}({params}): {description}"
    observation: str = "Result of {tool}:\n{result}\n\n{budget}"
    error: str = "Error from {tool}: {error}\n\n{budget}"
    rejection: str = "Rejected: {error}\n\n{budget}"
    budget: str = "Steps left: {left}."
    next_step_only: str = "Steps left: {left}. Next step: call {tools}."
    last_step: str = "Steps left: 1. This is your last step: call {tools} now."
    citations_rejected: str = "these citations failed: {problems}. Fix them and call {tool} again."
    repeated_call: str = (
        "you already called {tool} with these arguments at step {step}; its result is "
        "above. Call another tool or other arguments, or finish."
    )
    not_offered: str = "{tool} cannot be called on this step; call {tools}"


class AgentOptions(SystemOptions):
    max_tokens: int = Field(384, ge=16, le=8192, description="cap on each agent reply")
    max_steps: int = Field(12, ge=1, le=200, description="LLM turns before the run counts as budget_exhausted")
    max_retries: int = Field(2, ge=0, le=50, description="re-submissions allowed after a rejected submission")
    constrain_ids: bool = Field(
        False,
        description="let the reply schema allow only ids that tool results "
        "showed (helps very small models; off for the paper)",
    )
    force_final_answer: bool = Field(
        True,
        description="the last step offers only the finishing tools and "
        "its submission is accepted (failing citations dropped)",
    )
    reject_repeats: bool = Field(True, description="reject an exact repeat of an earlier call with a hint")
    check_citations: bool = Field(
        True,
        description="cited ids must exist in the view (else sent back for a "
        "retry) and a forced submission may cite only citable ids; "
        "off: neither (a subclass's own rules still apply)",
    )


@dataclass
class AgentRun:
    """The state of one agent run."""

    question: Question
    env: Environment
    trace: Trace
    messages: list[dict[str, str]]
    steps_used: int = 0
    accepted_evidence: Citations | None = None
    rejected_submissions: int = 0
    finished: bool = False
    forced: bool = False  # this step offers only what the budget's end allows
    finish_now: bool = False  # the next step may only finish (a replay's last decision)
    shown_ids: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids tool results showed
    calls: dict[str, int] = field(default_factory=dict)  # canonical call -> step that made it
    step_shown: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids this step's result showed

    def show(self, kind: str, *ids: str, content: bool = True) -> None:
        """Ids a tool result showed; ``content=False`` for ids only listed (a text unit's id, not its
        text): they may be cited and called, but the step did not show what they hold."""
        known = self.shown_ids.setdefault(kind, [])
        known.extend(i for i in dict.fromkeys(ids) if i not in known)
        if content:
            this_step = self.step_shown.setdefault(kind, [])
            this_step.extend(i for i in dict.fromkeys(ids) if i not in this_step)


class ToolAgent(LLMSystem):
    """An agent answering through tools in a schema-constrained loop (see the module docstring)."""

    Options: ClassVar[type[SystemOptions]] = AgentOptions
    messages: ClassVar[AgentMessages] = AgentMessages()

    # -- what a subclass provides -----------------------------------------------------------------
    def tools(self) -> list[Tool]:
        """The tools offered to the agent, in prompt order (at least one with ``finishes=True``)."""
        return [
            Tool("submit_answer", (("answer", "string"),), self.submit_answer, "give the final answer", finishes=True)
        ]

    def rules(self) -> list[str]:
        return [self.messages.rules.format(max_steps=self.options.max_steps)]

    @property
    def expected_llm_calls(self) -> float:
        return float(self.options.max_steps)  # one call a step; most runs use their budget

    def check_submission(self, run: AgentRun, citations: Citations) -> list[CitationProblem]:
        """Problems with submitted citations; here: every cited id must exist in the view (none
        with ``check_citations: false``)."""
        if not self.options.check_citations:
            return []
        view = run.env.view
        if view is None:
            return [CitationProblem(f, i, "nothing to cite") for f in KIND_OF_FIELD for i in getattr(citations, f)]
        lookups = {
            "entities": view.entity,
            "relationships": view.relation,
            "text_units": view.text_unit,
            "communities": view.community,
        }
        return [
            CitationProblem(field_name, item_id, f"no such {KIND_OF_FIELD[field_name]}")
            for field_name, lookup in lookups.items()
            for item_id in getattr(citations, field_name)
            if lookup(item_id) is None
        ]

    def citable_ids(self, run: AgentRun) -> dict[str, list[str]]:
        """Ids (by kind) a forced submission's schema allows: by default what tool results showed."""
        return run.shown_ids

    def offered_tools(self, run: AgentRun, steps_left: int) -> list[Tool]:
        """The tools a step with ``steps_left`` (this one included) offers."""
        tools = self.tools()
        if run.finish_now or self.options.force_final_answer and steps_left <= 1:
            return [t for t in tools if t.finishes]
        return tools

    # -- the loop -------------------------------------------------------------------------------
    def run(self, question: Question, env: Environment) -> Trace:
        run = self.start(question, env)
        self.go_on(run)
        return self.end(run)

    def start(self, question: Question, env: Environment) -> AgentRun:
        messages = [
            {"role": "system", "content": self.system_prompt()},
            {"role": "user", "content": self.question_text(question)},
        ]
        return AgentRun(question, env, self.new_trace(question), messages)

    def go_on(self, run: AgentRun) -> None:
        """Steps decided by the model until the run finishes or the budget is spent."""
        while not run.finished and run.steps_used < self.options.max_steps:
            self.step(run)

    def end(self, run: AgentRun) -> Trace:
        trace = run.trace
        trace.artifacts["steps_used"] = run.steps_used
        if not run.finished:
            trace.outcome, trace.answer = "budget_exhausted", None
            trace.error = f"no accepted answer within {self.options.max_steps} steps"
        return trace

    supports_step_resume = True

    def resume_from_step(self, question: Question, env: Environment, recorded: Trace, point: ResumePoint) -> Trace:
        """Replay ``recorded`` up to ``point.step`` against ``env.view``, then go on (module docstring)."""
        if not 0 <= point.step < len(recorded.steps):
            raise ValueError(
                f"cannot resume from step {point.step}: the recorded trace has {len(recorded.steps)} steps"
            )
        replay, withheld = recorded.steps[: point.step + 1], []
        if point.replay_rest:
            rest = recorded.steps[point.step + 1 :]
            final = rest and recorded.outcome == "answered" and rest[-1].kind == "tool_call"
            later = rest[:-1] if final else rest
            withheld = [s.index for s in later if s.reply is not None and shows_hidden(env.view, question, s.reply)]
            replay += [s for s in later if s.index not in withheld]
        missing = [s.index for s in replay if s.reply is None]
        if missing:
            raise ValueError(
                f"cannot replay step(s) {missing}: the recorded trace holds no reply for them "
                "(recorded by an earlier provbench, or the LLM call failed); run its baseline again"
            )
        run = self.start(question, env)
        diverged = []
        for recorded_step in replay:
            if run.finished or run.steps_used >= self.options.max_steps:
                break
            self.step(run, replay=recorded_step.reply)
            if recorded_step.index < point.step and not _same_step(run.trace.steps[-1], recorded_step):
                diverged.append(recorded_step.index)  # before the step, the view hides nothing it showed
        replayed = len(run.trace.steps)
        if point.replay_rest and not run.finished and run.steps_used < self.options.max_steps:
            run.finish_now = True  # every action replayed: what is left to decide is the answer
            self.step(run)
        self.go_on(run)
        run.trace.artifacts["resumed"] = {
            "from_step": point.step,
            "replay_rest": point.replay_rest,
            "replayed_steps": replayed,
            "diverged": diverged,
            "withheld": withheld,
        }
        return self.end(run)

    def system_prompt(self) -> str:
        tools = "\n".join(t.prompt_line(self.messages.tool_line) for t in self.tools())
        return self.messages.system.format(tools=tools, rules="\n".join(self.rules()))

    def instructions(self) -> list[str]:
        return [*super().instructions(), self.system_prompt()]  # the same whatever the view shows (leak guard)

    def action_schema(self, run: AgentRun | None = None, offered: list[Tool] | None = None) -> dict:
        """One branch per offered tool, so constrained decoding pairs each tool with its arguments.
        Id arguments are limited to shown ids with ``constrain_ids``, and to citable ids on a forced step."""
        allowed = None
        if run is not None and run.forced and self.options.check_citations:
            allowed = self.citable_ids(run)
        elif run is not None and self.options.constrain_ids:
            allowed = run.shown_ids
        compact = run is not None and run.forced
        branches = [tool.action_schema(allowed, compact) for tool in (offered or self.tools())]
        return {"anyOf": [branch for branch in branches if branch is not None]}

    def step(self, run: AgentRun, replay: str | None = None) -> None:
        """One LLM turn: ask for an action (or take the recorded ``replay``), run it, record the
        Step, report back."""
        offered = self.offered_tools(run, self.options.max_steps - run.steps_used)
        run.forced = len(offered) < len(self.tools())
        run.steps_used += 1
        resp = self.ask(run, offered) if replay is None else replayed_reply(replay)
        if resp is None:  # the LLM failed for good; chat() marked the trace failed
            run.finished = True
            return
        reply = resp.text or ""
        run.messages.append({"role": "assistant", "content": reply})
        run.step_shown = {}
        action: dict[str, Any] = {"thought": None, "tool": None, "arguments": {}}
        try:
            tool, arguments = self.parse_action(resp, action, offered)
            self.check_repeat(run, tool, arguments)
            result = tool.handler(run, arguments)
        except ToolFailure as failure:
            feedback = self._record_failure(run, action, failure, reply)
        else:
            run.trace.add_step(
                "tool_call",
                tool=tool.name,
                arguments=arguments,
                result=result.summary,
                thought=action["thought"],
                reply=reply,
                shown=dict(run.step_shown) if tool.reads else None,
            )
            feedback = self.messages.observation.format(
                tool=tool.name, result=result.text, budget=self.budget_note(run)
            )
        if not run.finished:
            run.messages.append({"role": "user", "content": feedback})

    def _record_failure(self, run: AgentRun, action: dict[str, Any], failure: ToolFailure, reply: str) -> str:
        """Record a step whose action failed (an error, or a rejected reply) and return what the model is told."""
        reads = failure.kind == "error" and self.reads(action["tool"])
        run.trace.add_step(
            failure.kind,
            tool=action["tool"],
            arguments=action["arguments"],
            error=failure.message,
            thought=action["thought"],
            reply=reply,
            shown=dict(run.step_shown) if reads else None,
        )
        template = self.messages.error if failure.kind == "error" else self.messages.rejection
        return template.format(tool=action["tool"] or "your reply", error=failure.message, budget=self.budget_note(run))

    def ask(self, run: AgentRun, offered: list[Tool]) -> Any | None:
        """The model's reply for this step (None when the LLM failed for good)."""
        # a forced reply cannot be retried: room for its answer and citations, so the cap never cuts its JSON
        max_tokens = 2 * self.options.max_tokens if run.forced else None
        return self.chat(
            run.env,
            run.trace,
            run.messages,
            schema=self.action_schema(run, offered),
            purpose=f"agent step {run.steps_used}",
            max_tokens=max_tokens,
        )

    def reads(self, tool_name: str | None) -> bool:
        tool = next((t for t in self.tools() if t.name == tool_name), None)
        return tool is not None and tool.reads

    def parse_action(
        self, resp: Any, action: dict[str, Any], offered: list[Tool] | None = None
    ) -> tuple[Tool, dict[str, Any]]:
        """The tool and validated arguments of a reply; fills ``action`` with what could be read."""
        reply = reply_object(resp)
        if reply is None:
            raise rejected(f"your reply was not a JSON object: {clip(resp.text or '', 200)!r}")
        thought = reply.get("thought")
        action["thought"] = thought if isinstance(thought, str) else None
        raw_arguments = reply.get("arguments")
        if raw_arguments is not None:
            action["arguments"] = raw_arguments if isinstance(raw_arguments, dict) else {"raw": raw_arguments}
        tools = {t.name: t for t in self.tools()}
        name = reply.get("tool")
        action["tool"] = name if isinstance(name, str) else None
        if not isinstance(name, str) or name not in tools:
            raise rejected(f"unknown tool {name!r}; the tools are {sorted(tools)}")
        offered_names = [t.name for t in offered or tools.values()]
        if name not in offered_names:
            raise rejected(self.messages.not_offered.format(tool=name, tools=" or ".join(offered_names)))
        return tools[name], tools[name].check_arguments(raw_arguments)

    def check_repeat(self, run: AgentRun, tool: Tool, arguments: dict[str, Any]) -> None:
        """Reject an exact repeat of an earlier call; remember this call otherwise."""
        if tool.finishes:  # a repeated submission is a retry: max_retries bounds those
            return
        key = tool.name + json.dumps(arguments, sort_keys=True)
        earlier = run.calls.get(key)
        if earlier is not None and self.options.reject_repeats:
            raise rejected(self.messages.repeated_call.format(tool=tool.name, step=earlier))
        run.calls.setdefault(key, run.steps_used)

    def budget_note(self, run: AgentRun) -> str:
        left = self.options.max_steps - run.steps_used
        if left < 1:
            return self.messages.budget.format(left=0)
        offered = self.offered_tools(run, left)
        names = " or ".join(t.name for t in offered)
        if left == 1:
            return self.messages.last_step.format(tools=names)
        if len(offered) < len(self.tools()):
            return self.messages.next_step_only.format(left=left, tools=names)
        return self.messages.budget.format(left=left)

    # -- submission -----------------------------------------------------------------------------
    def submit_answer(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        """Check the citations in ``args`` and accept the answer, or reject it for a retry."""
        citations = citations_from(args)
        problems = self.check_submission(run, citations)
        if not problems:
            return self.accept(run, args["answer"], citations)
        run.rejected_submissions += 1
        run.trace.artifacts["last_rejected_answer"] = args["answer"]
        if run.forced or run.rejected_submissions > self.options.max_retries:
            return self.accept(run, args["answer"], without(citations, problems), flagged=problems)
        raise rejected(
            self.messages.citations_rejected.format(problems=", ".join(map(str, problems)), tool="submit_answer")
        )

    def accept(
        self, run: AgentRun, answer: str, citations: Citations, flagged: list[CitationProblem] = ()
    ) -> ToolResult:
        """End the run with this answer and citations (``flagged``: citations dropped on the way)."""
        run.trace.citations = citations
        self.finish_answer(run.trace, answer)
        run.finished = True
        summary: dict[str, Any] = {"answer": answer, "citations": citations.model_dump()}
        if flagged:
            run.trace.artifacts["flagged_citations"] = [vars(p) for p in flagged]
            summary["dropped_after_retries"] = [vars(p) for p in flagged]
        if run.forced:
            run.trace.artifacts["forced_answer"] = True
            summary["forced"] = True
        return ToolResult("answer accepted", summary)


def _same_step(replayed: Step, recorded: Step) -> bool:
    return (replayed.kind, replayed.tool, replayed.result, replayed.error) == (
        recorded.kind,
        recorded.tool,
        recorded.result,
        recorded.error,
    )
