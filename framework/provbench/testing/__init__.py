"""Helpers for testing provbench plugins: public, so third-party plugin authors can use them too.

* :class:`SchemaFollowingBackend` / :func:`schema_following_llm`: an offline LLM whose every reply
  is valid against the JSON schema it is asked for, chosen deterministically from the request.
  Pipelines run end to end with it, and the same inputs always give the same records.
* :func:`scripted_llm`: an LLM that replies with what a test wrote in advance, in order.
"""

from .llms import SchemaFollowingBackend, schema_following_llm, scripted_llm

__all__ = ["SchemaFollowingBackend", "schema_following_llm", "scripted_llm"]
