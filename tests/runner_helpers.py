"""Toy plugins and a tiny suite for runner, store and report tests.

The toy systems read the graph only through their view and ask the scripted LLM for the
answer; the prompt lists the entities of the question that are visible in the view, and
:func:`toy_reply` answers from that list, so interventions change answers and the LLM cache
key depends on what the view shows. Failure modes are driven by question metadata:
``crash`` (the system raises) and ``llm_fail`` (the LLM raises).

Run as a script (used by the SIGKILL test):
    python runner_helpers.py SUITE OUT [DELAY]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pluggy

from provbench import hookimpl, hookspecs
from provbench.model import Question, Trace
from provbench.plugin_api import Intervention, Metric, MetricContext, MetricValue, Results, System
from provbench.testing import QuestionsJsonLoader, TinyKBBuilder

HERE = Path(__file__).resolve().parent
XSS_QUESTION = "Who directed <script>window.__pwned=1;document.title='pwned'</script><img src=x onerror=\"window.__pwned=2;alert(1)\">?"
XSS_ANSWER = '<img src=x onerror="window.__pwned=3"><script>window.__pwned=4</script>'


# -- toy plugins ---------------------------------------------------------------------------------


class ToyLoader(QuestionsJsonLoader):
    """Reads a JSON list of Question objects."""

    name = "toy-json"


class ToySystem(System):
    """Visits the question's entities that its view shows, cites the first, asks the LLM."""

    name = "toy-graph"

    def __init__(self, delay: float = 0.0, cite: bool = True) -> None:
        self.delay, self.cite = delay, cite

    def run(self, question: Question, env) -> Trace:
        if self.delay:
            time.sleep(self.delay)
        if question.metadata.get("crash"):
            raise RuntimeError(f"toy system crashed on {question.id}")
        trace = Trace(question_id=question.id, system=self.name)
        wanted = question.metadata.get("entities", [])
        visible = [e for e in wanted if env.view is None or env.view.entity(e) is not None]
        for entity_id in visible:
            trace.add_step(
                "tool_call",
                tool="get_entity",
                arguments={"id": entity_id},
                result={"id": entity_id, "note": question.metadata.get("note", "")},
            )
            trace.visit(entity_id)
        trace.artifacts["visible"] = visible
        return self.answer(question, env, trace, visible)

    def answer(self, question: Question, env, trace: Trace, visible: list[str]) -> Trace:
        prompt = f"Q: {question.question}\nvisible: {','.join(visible)}"
        resp = env.llm.chat([{"role": "user", "content": prompt}], purpose="toy answer", trace=trace)
        trace.answer = resp.text
        if self.cite and visible:
            trace.citations.entities = visible[:1]
        trace.add_step("tool_call", tool="submit_answer", arguments={"answer": trace.answer})
        return trace

    supports_resume = True

    def resume(self, question: Question, env, perturbed: Trace) -> Trace:
        """Only the answering stage re-runs, from the perturbed list of visible entities."""
        trace = Trace(question_id=question.id, system=self.name, artifacts=dict(perturbed.artifacts))
        return self.answer(question, env, trace, list(perturbed.artifacts.get("visible", [])))


class ToyPlain(System):
    """An LLM-only baseline: sees no graph, knows only questions marked ``known``."""

    name = "toy-plain"

    def run(self, question: Question, env) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        known = question.metadata.get("entities", []) if question.metadata.get("known") else []
        prompt = f"Q: {question.question}\nvisible: {','.join(known)}"
        trace.answer = env.llm.chat([{"role": "user", "content": prompt}], purpose="toy answer", trace=trace).text
        return trace


class ToyHideCited(Intervention):
    """Graph level: hide the baseline's cited entities."""

    name = "toy-hide-cited"
    level = "graph"

    def make_view(self, view, question, baseline, rng):
        return view.hide(entities=baseline.citations.entities) if view is not None else view


class ToyHideRandom(Intervention):
    """Graph level, randomised: hide one random visited entity (repeats 2)."""

    name = "toy-hide-random"
    level = "graph"

    def __init__(self, repeats: int = 2) -> None:
        self.repeats = repeats

    def make_view(self, view, question, baseline, rng):
        pool = sorted(baseline.visited_entities)
        chosen = [rng.choice(pool)] if pool else []
        return view.hide(entities=chosen) if view is not None else view


class ToyDropFirst(Intervention):
    """Context level: drop the first visible entity from the retrieved context."""

    name = "toy-drop-first"
    level = "context"

    def perturb(self, question, baseline, rng):
        perturbed = baseline.model_copy(deep=True)
        perturbed.artifacts["visible"] = perturbed.artifacts.get("visible", [])[1:]
        return perturbed


class ToyLength(Metric):
    """Per record: answer length; aggregate: mean length per system and condition."""

    name = "toy-length"

    def score(self, record, question, context):
        return {"answer_length": float(len(record.trace.answer or "")) if record.trace else None}

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        out = []
        for system in results.systems:
            for condition in results.conditions:
                values = [
                    r.scores["answer_length"]
                    for r in results.select(system, condition)
                    if r.scores.get("answer_length") is not None
                ]
                out.append(
                    MetricValue(
                        metric="provenance.toy-length",
                        system=system,
                        condition=condition,
                        value=sum(values) / len(values) if values else None,
                        numerator=sum(values),
                        denominator=len(values),
                    )
                )
        return out


class ToyKB(TinyKBBuilder):
    """The tiny KB of provbench.testing.kb."""

    name = "toy-tiny"


class ToyPlugin:
    @hookimpl
    def provbench_register_systems(self):
        return {"toy-graph": ToySystem, "toy-plain": ToyPlain}

    @hookimpl
    def provbench_register_interventions(self):
        return {"toy-hide-cited": ToyHideCited, "toy-hide-random": ToyHideRandom, "toy-drop-first": ToyDropFirst}

    @hookimpl
    def provbench_register_metrics(self):
        return {"toy-length": ToyLength}

    @hookimpl
    def provbench_register_dataset_loaders(self):
        return {"toy-json": ToyLoader}

    @hookimpl
    def provbench_register_kb_builders(self):
        return {"toy-tiny": ToyKB}

    @hookimpl
    def provbench_report_sections(self, run):
        """Paper 000's Tables 1 and 2 laid out over the toy systems and interventions."""
        from provbench_plugins.papers.p000_neighborhoods.report import table1_section, table2_section

        return [s for s in (table1_section(run), table2_section(run)) if s is not None]


class LifecycleRecorder:
    """Counts lifecycle hook calls."""

    def __init__(self) -> None:
        self.events: list[str] = []

    @hookimpl
    def provbench_run_started(self, manifest, run_dir):
        self.events.append("started")

    @hookimpl
    def provbench_record_written(self, record, run_dir):
        self.events.append("record")

    @hookimpl
    def provbench_run_finished(self, manifest, run_dir):
        self.events.append("finished")


def toy_plugin_manager(*extra: object) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(ToyPlugin(), name="toy")
    for plugin in extra:
        pm.register(plugin)
    return pm


def toy_registry():
    from provbench.registry import build_registry

    return build_registry(toy_plugin_manager())


# -- the scripted LLM ------------------------------------------------------------------------------

ANSWERS = {
    "ent:orin-vale": "Orin Vale",
    "ent:norland": "Norland",
    "ent:mara-holt": "Mara Holt",
    "ent:lumen-studios": "Lumen Studios",
    "ent:aster-river": "Aster River",
}


def toy_reply(messages: list[dict]) -> str:
    """Answer with the name of the first visible entity; 'unknown' when nothing is visible."""
    content = messages[-1]["content"]
    if "LLM-FAIL" in content:
        raise ValueError("scripted LLM failure")
    visible = content.rsplit("visible: ", 1)[-1].split(",")
    for entity_id in visible:
        if entity_id in ANSWERS:
            return ANSWERS[entity_id]
    if "<script>" in content:
        return XSS_ANSWER
    return "unknown"


def scripted_llm(n: int = 2000, failing: bool = False):
    from provbench.llm import LLMClient, ScriptedBackend

    reply = (lambda messages: (_ for _ in ()).throw(AssertionError("LLM called"))) if failing else toy_reply
    backend = ScriptedBackend(replies=[reply] * n)
    return LLMClient(backend), backend


# -- suite and data --------------------------------------------------------------------------------

QUESTIONS = [
    {
        "id": "q1",
        "question": "Who directed Glass Harbor?",
        "answer": "Orin Vale",
        "metadata": {"entities": ["ent:orin-vale", "ent:glass-harbor", "ent:tessa-quill"]},
    },
    {
        "id": "q2",
        "question": "In which country is Dunmere?",
        "answer": "Norland",
        "metadata": {"entities": ["ent:norland", "ent:dunmere"], "known": True},
    },
    {
        "id": "q3",
        "question": "Who is the mayor of Dunmere?",
        "answer": "Mara Holt",
        "metadata": {"entities": ["ent:mara-holt", "ent:dunmere", "ent:aster-river"]},
    },
    {
        "id": "q4",
        "question": "Which studio produced Glass Harbor?",
        "answer": "Lumen Studios",
        "metadata": {"entities": ["ent:glass-harbor", "ent:lumen-studios"]},
    },
    {
        "id": "q5",
        "question": XSS_QUESTION,
        "answer": "Orin <b>Vale</b>",
        "metadata": {"entities": ["ent:tessa-quill"], "note": '<img src=x onerror="window.__pwned=5">'},
    },
    {
        "id": "q6-crash",
        "question": "Which river flows through Dunmere?",
        "answer": "Aster River",
        "metadata": {"entities": ["ent:aster-river"], "crash": True},
    },
    {
        "id": "q7-llm",
        "question": "LLM-FAIL: who starred in Glass Harbor?",
        "answer": "Tessa Quill",
        "metadata": {"entities": ["ent:tessa-quill"]},
    },
]

SUITE = """\
name: toy
description: toy suite for tests
dataset:
  loader: toy-json
  path: questions.json
{kb}
model:
  id: scripted
systems:
  - name: toy-graph
    options: {{delay: {delay}}}
  - toy-plain
interventions:
  - toy-hide-cited
  - toy-hide-random
exclusion:
  enabled: true
  reference_system: toy-plain
metrics:
  - toy-length
concurrency: {concurrency}
report:
  bootstrap_resamples: 200
"""


def write_toy_suite(
    folder: Path, *, kb: bool = True, delay: float = 0.0, concurrency: int = 2, questions: list[dict] | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(questions if questions is not None else QUESTIONS))
    kb_text = "knowledge_base:\n  builder: toy-tiny\n  directory: kb" if kb else ""
    path = folder / "suite.yaml"
    path.write_text(SUITE.format(kb=kb_text, delay=delay, concurrency=concurrency))
    return path


def run_toy(suite: Path, out: Path, llm: Any = None, **kwargs: Any) -> Path:
    from provbench.runner import run_suite

    if llm is None:
        llm, _ = scripted_llm()
    return run_suite(suite, out=out, pm=toy_plugin_manager(), llm=llm, **kwargs)


if __name__ == "__main__":  # the SIGKILL test's child process (this folder is on sys.path as a script's)
    run_toy(Path(sys.argv[1]), Path(sys.argv[2]), write_report=False)


# -- the built-in plugins through the runner -------------------------------------------------------

BUILTIN_SUITE = """\
name: builtin
dataset: {loader: toy-json, path: questions.json}
knowledge_base: {builder: toy-tiny, directory: kb}
model: {id: scripted}
systems:
  - llm-only
  - graphrag
  - name: agentic-graphrag
    options: {max_steps: 3}
intervention_systems: [graphrag, agentic-graphrag]
interventions: [cited-removal, full-isolation, {name: random-removal, options: {repeats: 2}}]
exclusion: {enabled: true, reference_system: llm-only}
metrics: [accuracy, output-changed, footprint, provenance]
"""


def builtin_reply(messages: list[dict]) -> dict:
    """A well-formed reply for paper 000's systems: the agent submits, one-shot systems answer."""
    text = "\n".join(m["content"] for m in messages)
    cited = ["ent:orin-vale"] if "ent:orin-vale" in text else []
    if "submit_answer" in text:
        return {
            "thought": "done",
            "tool": "submit_answer",
            "arguments": {
                "answer": "Orin Vale" if cited else "unknown",
                "cited_entities": cited,
                "cited_relationships": [],
                "cited_textunits": [],
                "cited_communities": [],
            },
        }
    return {
        "answer": "Orin Vale" if cited else "unknown",
        "cited_entities": cited,
        "cited_relationships": [],
        "cited_textunits": [],
        "cited_communities": [],
    }


def builtin_plugin_manager() -> pluggy.PluginManager:
    import provbench_plugins.metrics
    import provbench_plugins.papers.p000_neighborhoods

    pm = toy_plugin_manager()
    for module in (provbench_plugins.papers.p000_neighborhoods, provbench_plugins.metrics):
        pm.register(module, name=module.__name__)
    return pm


def write_builtin_suite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(QUESTIONS[:2]))
    path = folder / "suite.yaml"
    path.write_text(BUILTIN_SUITE)
    return path
