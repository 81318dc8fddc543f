"""Helpers for testing provbench plugins: public, so third-party plugin authors can use them too.

* :class:`SchemaFollowingBackend` / :func:`schema_following_llm`: an offline LLM whose every reply
  is valid against the JSON schema it is asked for, chosen deterministically from the request.
  Pipelines run end to end with it, and the same inputs always give the same records.
* :func:`scripted_llm`: an LLM that replies with what a test wrote in advance, in order.
* :func:`build_tiny_kb`: a tiny knowledge base with known contents (:mod:`provbench.testing.kb`).
* :func:`control_runs`: runs of known-truth controls made of records in memory, to test a claim.
* Toy plugins (:class:`QuestionsJsonLoader`, :class:`TinyKBBuilder`, :class:`TopEntitySystem`,
  :func:`toy_plugin`) and :func:`plugin_manager` / :func:`registry_of` to register yours in a
  test without installing it (:mod:`provbench.testing.plugins`).
"""

from .runs import control_runs
from .kb import build_tiny_kb
from .llms import SchemaFollowingBackend, schema_following_llm, scripted_llm
from .plugins import (
    TINY_QUESTIONS,
    QuestionsJsonLoader,
    TinyKBBuilder,
    TopEntitySystem,
    plugin_manager,
    registry_of,
    toy_plugin,
)

__all__ = [
    "control_runs",
    "SchemaFollowingBackend",
    "schema_following_llm",
    "scripted_llm",
    "build_tiny_kb",
    "TINY_QUESTIONS",
    "QuestionsJsonLoader",
    "TinyKBBuilder",
    "TopEntitySystem",
    "plugin_manager",
    "registry_of",
    "toy_plugin",
]
