"""Offline LLM backends that need no model: ``schema-following`` answers every request with an
instance of the JSON schema it asks for, so a suite runs end to end in seconds (a dry run:
``provbench run SUITE --model schema-following``, or ``model: {id: schema-following}``). Its
answers mean nothing; it checks that a suite, its plugins and its report work.

A built-in plugin module: it registers the backend through ``provbench_register_llm_backends``.
:func:`provbench.testing.schema_following_llm` gives tests a client over it.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from functools import lru_cache
from typing import Any

from ..hookspecs import hookimpl
from .backends import reply

ID_TOKEN = re.compile(r"\b[a-z]{1,12}:[A-Za-z0-9_.:-]+\b")
WORD = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?")


class SchemaFollowingBackend:
    """Answers every request with an instance of its JSON schema (plain text without a schema).

    Choices (``anyOf`` branch, enum value, list length, which prompt token fills a string) come
    from a hash of the messages, so a request always gets the same reply. Strings are filled with
    ids seen in the prompt (``tu:12``-like tokens) or capitalised words, so citations and answers
    refer to what the system showed the model.
    """

    model_id = "schema-following"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        return {}

    def price(self, prompt_tokens: int, completion_tokens: int) -> tuple[float, str]:
        return 0.0, "local"  # no model, nothing to pay

    def __getstate__(self) -> dict[str, Any]:  # to a worker process: the replies, not the call log
        return {"model_id": self.model_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()
        self.model_id = state["model_id"]

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls.append(request)
        prompt = "\n".join(str(m.get("content", "")) for m in request["messages"])
        fixed = "\n".join(str(m.get("content", "")) for m in request["messages"] if m.get("role") == "system")
        chooser = _Chooser(prompt, fixed)
        schema = request.get("schema")
        text = json.dumps(chooser.instance(schema)) if schema else chooser.word()
        return reply(text, prompt_tokens=len(prompt.split()), completion_tokens=len(text.split()))


class _Chooser:
    def __init__(self, prompt: str, fixed: str = "") -> None:
        self.seed = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big")
        self.ids = list(dict.fromkeys(ID_TOKEN.findall(prompt)))
        self.words = content_words(prompt, fixed) or ["yes"]
        self.n = 0

    def pick(self, options: list[Any]) -> Any:
        self.n += 1
        return options[(self.seed >> (self.n % 48)) % len(options)]

    def word(self) -> str:
        return self.pick(self.words)

    def instance(self, schema: dict[str, Any], name: str = "") -> Any:
        if "anyOf" in schema or "oneOf" in schema:
            return self.instance(self.pick(schema.get("anyOf") or schema["oneOf"]), name)
        if "enum" in schema:
            return self.pick(schema["enum"])
        if "const" in schema:
            return schema["const"]
        kind = schema.get("type", "object")
        kind = self.pick([k for k in kind if k != "null"] or ["null"]) if isinstance(kind, list) else kind
        if kind == "object":
            props = schema.get("properties", {})
            return {key: self.instance(sub, key) for key, sub in props.items()}
        if kind == "array":
            low, high = schema.get("minItems", 0), min(schema.get("maxItems", 3), 3)
            count = self.pick(list(range(low, max(low, high) + 1)))
            return [self.instance(schema.get("items", {"type": "string"}), name) for _ in range(count)]
        if kind in ("number", "integer"):
            low, high = schema.get("minimum", 0), schema.get("maximum", 1 if kind == "number" else 10)
            value = low + (high - low) * self.pick([0.0, 0.25, 0.5, 0.85, 1.0])
            return int(value) if kind == "integer" else round(value, 2)
        if kind == "boolean":
            return self.pick([True, False])
        if kind == "null":
            return None
        text = self.pick(self.ids) if self.ids and ("id" in name or "cited" in name) else self.word()
        return text[: schema.get("maxLength", len(text))]


def _schema_following(model_id: str, /) -> SchemaFollowingBackend:
    """Replies that follow the requested JSON schema, chosen from the prompt (a dry run, no model)."""
    return SchemaFollowingBackend()


@hookimpl
def provbench_register_llm_backends():
    return {"schema-following": _schema_following}


LABEL = re.compile(r"^\s*([A-Z][a-z]+):", re.MULTILINE)  # "Text: ...", "Title: ...": a prompt's format


def content_words(prompt: str, fixed: str = "") -> list[str]:
    """The prompt's capitalised words that could name something: not a function word ("This" opening
    a sentence), nor a word of the ``fixed`` system text or a line label ("Text:"), which the
    extraction made entities of (an entity "text" then matched graphrag's "## Text units")."""
    format_words = {w.lower() for w in re.findall(r"\w+", fixed)} | {w.lower() for w in LABEL.findall(prompt)}
    skip = format_words | stopwords()
    found = dict.fromkeys(WORD.findall(prompt))
    return [w for w in found if not all(part.lower() in skip for part in w.split())]


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """English function words: NLTK's list as llama-index ships it (no download) and scikit-learn's,
    which also holds "cannot" (a KB entity "cannot" matched the agents' "... cannot be read")."""
    from llama_index.core.utils import globals_helper
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(globals_helper.stopwords) | ENGLISH_STOP_WORDS
