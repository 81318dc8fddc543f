"""Every built-in system that prompts an LLM declares its fixed prompt text (``System.instructions``),
so that the leak guard reads no word of it as evidence (issue 32). Each system runs on the tiny
knowledge base with the schema-following LLM: every system message it sends is declared text, and
against a knowledge base whose hidden text units say what its prompt says (a knowledge base may say
anything), the guard finds its requests clean only because the text is declared: undeclared, the
same requests would be a false leak. ``recorded`` asks no model (nothing to declare), and
``llamaindex`` declares provbench's own answer prompt (its pipeline's prompts are the factory's)."""

from __future__ import annotations

import re

import pytest

from provbench.capture import UnitCapture
from provbench.kb import KnowledgeBase
from provbench.kb.hidden import sentences, tokens
from provbench.kb.types import TextUnit
from provbench.leakguard import check_unit, without_instructions
from provbench.model import Question, Trace
from provbench.plugin_api import Environment
from provbench.registry import build_registry, default_plugin_manager
from provbench.testing import build_tiny_kb, schema_following_llm

SYSTEMS = (
    "llm-only",
    "rag",
    "graphrag",
    "agentic-graphrag",
    "agentic-visited-only",
    "agentic-evidence-first",
    "kgrag-ex",
    "vector-rag",
    "p002/planning-loop",
    "vanilla-rag",
    "ga-rag",
)
QUESTION = Question(id="t1", question="Who directed Glass Harbor?", answer="Orin Vale")


@pytest.fixture(scope="module")
def registry():
    return build_registry(default_plugin_manager())


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    kb = build_tiny_kb(tmp_path_factory.mktemp("instructions") / "kb")
    yield kb.view()
    kb.close()


@pytest.fixture(scope="module")
def runs(registry, view) -> dict[str, tuple[object, UnitCapture]]:
    """Each system and the requests of one run of it (its declared instructions not yet attached)."""
    out = {}
    for name in SYSTEMS:
        system, capture = registry.create("system", name), UnitCapture("unit")
        system.run(QUESTION, Environment(view=view, llm=schema_following_llm().bound_to(capture)))
        assert capture.requests, name
        out[name] = system, capture
    return out


def test_every_system_message_a_built_in_system_sends_is_declared(runs):
    for name, (system, capture) in runs.items():
        assert system.instructions(), name
        left = without_instructions(capture.requests, system.instructions())
        assert not [text for r in left for role, text in r.messages if role == "system" and text.strip()], name


@pytest.fixture(scope="module")
def decoy(tmp_path_factory, runs):
    """A knowledge base whose text units are the sentences of the systems' declared instructions that
    their requests sent, all hidden."""
    said = {
        s
        for system, capture in runs.values()
        for declared in system.instructions()
        for s in sentences(declared)
        if any(s in text for request in capture.requests for _, text in request.messages)
    }
    units = [
        TextUnit(id=f"decoy:{n}", text=s, document_id="decoy")  # ids no prompt shows
        for n, s in enumerate(sorted(s for s in said if len(tokens(s)) >= 4))
    ]
    kb = KnowledgeBase.create(tmp_path_factory.mktemp("decoy") / "kb")
    kb.add_text_units(units)
    kb.finalize({"builder": "decoy"}, embed=False)
    yield kb.view().hide(text_units=[u.id for u in units])
    kb.close()


@pytest.mark.parametrize("name", SYSTEMS)
def test_undeclared_instructions_would_be_a_false_leak(runs, decoy, name):
    system, capture = runs[name]
    trace = Trace(question_id=QUESTION.id, system=name)
    undeclared = check_unit(decoy, QUESTION, trace, capture, None)
    assert undeclared.checks["request_text"] == "leaked", (name, undeclared)
    capture.instructions = tuple(system.instructions())
    declared = check_unit(decoy, QUESTION, trace, capture, None)
    capture.instructions = ()
    assert declared.checks["request_text"] == "clean", (name, declared.evidence)


def test_every_line_a_system_sends_whatever_its_view_shows_is_declared(registry, view, runs):
    """A prompt line sent both with the whole knowledge base and with nothing of it visible (a
    section heading such as graphrag's "## Text units") is fixed text: undeclared, an entity named
    like one of its words ("text") would be a false leak."""
    nothing = view.hide(entities=list(view.entity_ids()), text_units=list(view.text_unit_ids()))
    asked, undeclared = QUESTION.question, {}
    for name in SYSTEMS:
        system, capture = runs[name]
        blind = UnitCapture("blind")
        registry.create("system", name).run(
            QUESTION, Environment(view=nothing, llm=schema_following_llm().bound_to(blind))
        )
        # the first request: later ones carry tool results, which echo the model's own choices
        lines = [_sent_lines(c.requests[:1], system.instructions()) for c in (capture, blind)]
        # one-word labels ("Question:") stay undeclared on purpose (agents/base.py fixed_parts)
        fixed = {line for line in lines[0] & lines[1] if len(re.findall(r"\w+", line.replace(asked, ""))) >= 2}
        if fixed:
            undeclared[name] = sorted(fixed)
    assert not undeclared


def _sent_lines(requests, instructions) -> set[str]:
    """The non-blank lines of the user messages ``requests`` sent, without declared instructions."""
    left = without_instructions(requests, instructions)
    return {
        line.strip()
        for r in left
        for role, text in r.messages
        if role == "user"
        for line in text.splitlines()
        if line.strip()
    }
