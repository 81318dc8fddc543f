"""Toy plugins and plugin-manager helpers for a plugin author's tests.

* :class:`QuestionsJsonLoader` (``questions-json``): a JSON list of :class:`~provbench.model.Question`
  objects, the simplest dataset a suite can name.
* :class:`TinyKBBuilder` (``tiny-kb``): the tiny knowledge base of :mod:`provbench.testing.kb`
  (real Kùzu, known contents), with no LLM call.
* :class:`TopEntitySystem` (``top-entity``): answers with the entity most similar to the
  question and cites it, so interventions that hide it change the answer.
* :data:`TINY_QUESTIONS`: questions about the tiny KB's world.
* :func:`plugin_manager` / :func:`registry_of`: a plugin manager (and its registry) holding the
  plugins you pass, with or without provbench's built-ins; hand the manager to
  ``provbench.runner.run_suite(..., pm=pm, llm=scripted_llm([...]))``.
"""

from __future__ import annotations

import json
import random
import types
from pathlib import Path
from typing import Any

import pluggy

from .. import hookspecs
from ..errors import UserError
from ..hookspecs import hookimpl
from ..model import Question, Trace
from ..plugin_api import DatasetLoader, KBBuilder, System

TINY_QUESTIONS: tuple[dict[str, Any], ...] = (
    {"id": "t1", "question": "Who directed Glass Harbor?", "answer": "Orin Vale", "type": "bridge"},
    {"id": "t2", "question": "In which country is Dunmere?", "answer": "Norland", "type": "bridge"},
    {"id": "t3", "question": "Who is the mayor of Dunmere?", "answer": "Mara Holt", "type": "lookup"},
)


class QuestionsJsonLoader(DatasetLoader):
    """A JSON list of Question objects (id, question, answer, and optionally the other fields)."""

    name = "questions-json"

    def claims(self, source: str | Path) -> bool:
        path = Path(source)
        if path.suffix != ".json" or not path.is_file():
            return False
        try:
            first = (json.loads(path.read_text(encoding="utf-8")) or [None])[0]
        except (ValueError, IndexError, KeyError, TypeError):
            return False
        return isinstance(first, dict) and {"id", "question", "answer"} <= set(first) and "_id" not in first

    def load(self, source, *, limit=None, seed=0, sample=False, **options) -> list[Question]:
        self.load_options(options)
        path = Path(source)
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"{path}: cannot read a JSON list of questions: {exc}") from None
        if not isinstance(items, list):
            raise UserError(f"{path}: expected a JSON list of questions, got {type(items).__name__}")
        questions = [self._question(path, i, item) for i, item in enumerate(items)]
        if sample and limit:
            questions = random.Random(seed).sample(questions, min(limit, len(questions)))
        return questions[:limit] if limit else questions

    @staticmethod
    def _question(path: Path, index: int, item: Any) -> Question:
        from pydantic import ValidationError

        try:
            return Question.model_validate(item)
        except ValidationError as exc:
            error = exc.errors()[0]
            record = item.get("id", f"#{index}") if isinstance(item, dict) else f"#{index}"
            raise UserError(
                f"{path}: record {record!r}: field {'.'.join(map(str, error['loc']))}: {error['msg']}"
            ) from None


class TinyKBBuilder(KBBuilder):
    """The tiny knowledge base of provbench.testing.kb, whatever the questions (no LLM call)."""

    name = "tiny-kb"

    def build(self, questions, kb_dir, llm, **options):
        from .kb import build_tiny_kb

        return build_tiny_kb(Path(kb_dir))

    def expected_llm_calls(self, questions) -> float:
        return 0.0


class TopEntitySystem(System):
    """Answers with the name of the entity most similar to the question, and cites it (no LLM)."""

    name = "top-entity"

    def run(self, question: Question, env) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        hits = env.view.search_entities(question.question, k=1)
        trace.add_step(
            "retrieval", tool="search_entities", arguments={"query": question.question}, result=[hit.id for hit in hits]
        )
        if not hits:
            trace.outcome = "abstained"
            return trace
        trace.visit(hits[0].id)
        trace.answer = hits[0].name
        trace.citations.entities.append(hits[0].id)
        return trace


def toy_plugin(namespace: str | None = "toy") -> types.ModuleType:
    """The toys above as one plugin module (``toy/top-entity``, ``toy/questions-json``, ``toy/tiny-kb``)."""
    module = types.ModuleType(f"provbench_testing_toys_{namespace or ''}".rstrip("_"))
    if namespace:
        module.PROVBENCH_NAMESPACE = namespace
    module.provbench_register_systems = hookimpl(lambda: {"top-entity": TopEntitySystem})
    module.provbench_register_dataset_loaders = hookimpl(lambda: {"questions-json": QuestionsJsonLoader})
    module.provbench_register_kb_builders = hookimpl(lambda: {"tiny-kb": TinyKBBuilder})
    return module


def plugin_manager(*plugins: object, builtins: bool = False) -> pluggy.PluginManager:
    """A plugin manager with ``plugins`` registered (modules or objects with @hookimpl methods);
    ``builtins=True`` adds provbench's built-in plugins first. Installed entry points are not loaded."""
    if builtins:
        from ..registry import make_plugin_manager

        pm = make_plugin_manager(load_entry_points=False)
    else:
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
    for plugin in plugins:
        name = getattr(plugin, "__name__", None) if isinstance(plugin, types.ModuleType) else None
        pm.register(plugin, name=name)
    return pm


def registry_of(*plugins: object, builtins: bool = False):
    """The registry of :func:`plugin_manager` (kinds, namespaces and factories checked)."""
    from ..registry import build_registry

    return build_registry(plugin_manager(*plugins, builtins=builtins))
