"""Red team: an outside user's own systems, written as one plugin file beside their suite, on their
own documents and questions, try to get an uncertified number past provbench (cases a, b, e, g of
the red-team brief). Each escape must be flagged by the leak guard (left out of every statistic)
or marked uncertified, never reported as a finding:

a. a system with its own store that reads the gold from it and records no trajectory;
b. a system that reads the knowledge base but records a decoy instead of what it read;
e. sham systems: one ignoring its context, one answering from the question alone;
g. a LlamaIndex pipeline over the user's own VectorStoreIndex through the `llamaindex` adapter.

One run (the control oracle as the suite's model) and one `provbench validate` serve every test."""

from __future__ import annotations

import sys

import pytest

from outside_helpers import metric, provbench, provbench_process, report_text, statuses, user_suite

SYSTEMS = '''\
"""The user's systems."""
from pathlib import Path

from provbench import hookimpl
from provbench.model import Trace
from provbench.plugin_api import System

DOCS = Path(__file__).parent / "data" / "docs"


def own_store():
    """Every sentence of the user's Markdown documents, read from disk (not the knowledge base)."""
    return [s.strip() for p in sorted(DOCS.glob("*.md")) for s in p.read_text().replace("\\n", " ").split(". ")]


def ask(env, trace, context, question):
    return env.llm.chat([{"role": "user", "content": f"{context}\\n\\nQ: {question.question}"}], purpose="answer",
                        trace=trace).text


class OwnStore(System):
    """Retrieves from its own store and records no trajectory, no citation."""

    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name)
        words = {w.lower() for w in question.question.split() if len(w) > 3}
        hits = [s for s in own_store() if words & {w.lower() for w in s.split()}]
        trace.answer = ask(env, trace, "\\n".join(hits), question)
        return trace


class DecoyCiter(System):
    """Reads the top text units through the view, but records reading and citing an unrelated one."""

    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name)
        units = [env.view.text_unit(h.id) for h in env.view.search_text_units(question.question, k=3)]
        read = {u.id for u in units}
        decoy = [h.id for h in env.view.search_text_units("weather at sea", k=10) if h.id not in read][:1]
        trace.answer = ask(env, trace, "\\n".join(u.text for u in units), question)
        trace.read_text_unit(*decoy)
        trace.citations.text_units = decoy
        return trace


class IgnoresContext(System):
    """Retrieves and cites like a RAG system, but prompts with the question alone."""

    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name)
        hits = [h.id for h in env.view.search_text_units(question.question, k=3)]
        trace.read_text_unit(*hits)
        trace.citations.text_units = hits[:1]
        trace.answer = ask(env, trace, "", question)
        return trace


class QuestionOnly(System):
    """Answers with the question's last two words, cites the top text unit; no LLM."""

    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name)
        hits = [h.id for h in env.view.search_text_units(question.question, k=1)]
        trace.read_text_unit(*hits)
        trace.citations.text_units = hits
        trace.answer = " ".join(question.question.rstrip("?").split()[-2:])
        return trace


@hookimpl
def provbench_register_systems():
    return {"own-store": OwnStore, "decoy-citer": DecoyCiter, "ignores-context": IgnoresContext,
            "question-only": QuestionOnly}
'''

PIPELINE = '''\
"""The user's LlamaIndex pipeline: a query engine over a VectorStoreIndex of their own documents."""
from pathlib import Path

from llama_index.core import Document, VectorStoreIndex

DOCS = Path(__file__).parent / "data" / "docs"


def own_index(index, llm, embed_model=None):
    docs = [Document(text=p.read_text(), id_=p.name) for p in sorted(DOCS.glob("*.md"))]
    return VectorStoreIndex.from_documents(docs, embed_model=embed_model).as_query_engine(llm=llm, similarity_top_k=3)
'''

BODY = """\
plugins: [./user_systems.py]
systems:
  - llm-only
  - p000/rag
  - user_systems/own-store
  - user_systems/decoy-citer
  - user_systems/ignores-context
  - user_systems/question-only
  - {name: llamaindex, label: own-index, options: {factory: "user_pipeline:own_index"}}
intervention_systems: [rag, own-store, decoy-citer, ignores-context, question-only, own-index]
interventions: [cited-removal, full-isolation]
exclusion: {reference_system: llm-only}
metrics: [accuracy, output-changed]
"""


def reads(label: str, system: str) -> str:
    """A claim that cited removal changes the oracle's answers given through ``system``."""
    return (
        f"  - {{name: condition-effect, label: {label}, options: {{system: {system}, conditions: [cited-removal], "
        "expect: [{control: oracle, effect: true}]}}\n"
    )


CONTROLS = "llms: [oracle]\nclaims:\n" + "".join(
    reads(label, system)
    for label, system in (
        ("rag-reads", "rag"),
        ("decoy-reads", "decoy-citer"),
        ("sham-reads", "ignores-context"),
        ("question-only-reads", "question-only"),
    )
)


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    """The user's folder after `provbench run --model control:oracle` and `provbench validate`:
    (folder, run directory, validate's result)."""
    folder = tmp_path_factory.mktemp("outside-systems")
    (folder / "user_systems.py").write_text(SYSTEMS)
    (folder / "user_pipeline.py").write_text(PIPELINE)
    suite = user_suite(folder, BODY, CONTROLS)
    sys.path.insert(0, str(folder))  # the pipeline's module is importable where provbench runs
    try:
        ran = provbench("run", str(suite), "--model", "control:oracle", "--out", str(folder / "run"))
        assert ran.exit_code == 0, ran.output
    finally:
        sys.path.remove(str(folder))
    validated = provbench_process("validate", str(suite), "--out", str(folder / "run"), cwd=folder)
    return folder, folder / "run", validated


def test_a_system_reading_gold_from_its_own_store_is_never_clean(user):
    """(a) Its prompts quote the text an ablation hid: leaked, or no-op where nothing was hidden
    (it cites nothing); no cell of it is measured."""
    _, run, _ = user
    assert statuses(run, "own-store") == {"cited-removal": {"no-op"}, "full-isolation": {"leaked"}}
    for condition in ("cited-removal", "full-isolation"):
        value = metric(run, "output-changed", "own-store", condition)
        assert value["value"] is None and value["note"].startswith("not measurable"), value


def test_validate_loads_the_suites_own_plugin_files(user):
    """`provbench validate` reads the suite's `plugins:` as `provbench run` does (it stopped with
    "unknown system" before), and its controls run the user's systems."""
    _, _, validated = user
    said = validated.stdout + validated.stderr
    assert "unknown system" not in said, said
    assert validated.returncode == 4, said  # the shams' claims fail: the next tests


def test_a_decoy_trajectory_is_caught_by_a_claim_on_its_controls(user):
    """(b) Cited removal hides the decoy, so the decoy citer's answers never change: the leak guard
    rightly calls it clean (it read nothing hidden), but the claim that cited removal changes the
    oracle's answers fails for it, and the report marks its Table 2 cell uncertified."""
    _, run, validated = user
    assert statuses(run, "decoy-citer")["cited-removal"] == {"clean"}
    assert metric(run, "output-changed", "decoy-citer", "cited-removal")["value"] == 0.0
    assert "decoy-reads" in validated.stderr and "not detectable" in validated.stderr
    assert "rag-reads" not in validated.stderr.split("not detectable")[-1]  # the real RAG's claim holds
    row = next(line for line in report_text(run).splitlines() if line.strip().startswith("Cited ablation"))
    assert row.count("† not certified") == 5, row  # every system but rag


def test_sham_systems_fail_the_claims_about_them(user):
    """(e) A system that ignores its context, and one that answers from the question alone, keep
    their answers under cited removal: the claim that the oracle's answers change fails for both."""
    _, _, validated = user
    failed = validated.stderr.split("not detectable:")[-1]
    assert "sham-reads" in failed and "question-only-reads" in failed, validated.stderr


def test_a_llamaindex_pipeline_over_its_own_index_is_flagged(user):
    """(g) Its nodes map to no knowledge-base id and its prompts quote hidden text: leaked under
    isolation, not checkable under cited removal (it read nodes no view binds: never no-op)."""
    _, run, _ = user
    assert statuses(run, "own-index") == {"cited-removal": {"not-checkable"}, "full-isolation": {"leaked"}}
    assert metric(run, "accuracy", "own-index", "full-isolation")["value"] is None


def test_the_baseline_accuracy_of_a_system_whose_every_unit_was_flagged_is_marked(user):
    _, run, _ = user
    row = next(line for line in report_text(run).splitlines() if line.strip().startswith("own-store "))
    assert "not certified" in row, row
