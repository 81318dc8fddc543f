"""Offline LLMs for tests: scripted replies, and replies that follow the requested JSON schema
(the ``schema-following`` backend of :mod:`provbench.llm.offline`, also a model id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..llm.backends import ScriptedBackend
from ..llm.client import LLMClient
from ..llm.offline import SchemaFollowingBackend

__all__ = ["SchemaFollowingBackend", "schema_following_llm", "scripted_llm"]


def schema_following_llm(cache_dir: Path | str | None = None, max_concurrency: int = 2) -> LLMClient:
    """An LLMClient over :class:`SchemaFollowingBackend` (retries off: it never fails)."""
    return LLMClient(SchemaFollowingBackend(), cache_dir=cache_dir, max_concurrency=max_concurrency, max_attempts=1)


def scripted_llm(replies: list[Any], cache_dir: Path | str | None = None, max_concurrency: int = 1) -> LLMClient:
    """An LLMClient whose backend returns ``replies`` in order (see :class:`ScriptedBackend`)."""
    return LLMClient(ScriptedBackend(replies), cache_dir=cache_dir, max_concurrency=max_concurrency, max_attempts=1)
