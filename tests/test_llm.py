"""The LLM layer with the scripted backend and litellm's mock_response: no network, no model."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from provbench.errors import UserError
from provbench.llm import LLMClient, LLMError, ScriptedBackend, is_transient, make_llm
from provbench.llm.backends import normalise_logprobs
from provbench.llm.cache import cache_key
from provbench.model import Trace

ASK = [{"role": "user", "content": "Who directed Glass Harbor?"}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def scripted(replies, **kwargs) -> tuple[LLMClient, ScriptedBackend]:
    backend = ScriptedBackend(replies=list(replies))
    return LLMClient(backend, backoff_s=0, **kwargs), backend


def new_trace() -> Trace:
    return Trace(question_id="q1", system="test")


# -- cache ---------------------------------------------------------------------------------------


def test_a_cached_call_is_not_sent_again(tmp_path):
    llm, backend = scripted(["Orin Vale", "second reply"], cache_dir=tmp_path)
    first = llm.chat(ASK)
    again = llm.chat(ASK)
    assert len(backend.calls) == 1
    assert (first.text, first.cached) == ("Orin Vale", False)
    assert (again.text, again.cached) == ("Orin Vale", True)
    assert again.prompt_tokens == first.prompt_tokens and again.completion_tokens == first.completion_tokens
    assert llm.stats.calls == 1 and llm.stats.cached == 1


def test_the_cache_survives_a_new_client_on_the_same_directory(tmp_path):
    llm, _ = scripted([{"answer": "Orin Vale"}], cache_dir=tmp_path)
    llm.chat(ASK, schema=SCHEMA)
    llm.close()
    fresh, backend = scripted([], cache_dir=tmp_path)  # no replies: any backend call would fail
    resp = fresh.chat(ASK, schema=SCHEMA)
    assert resp.cached and resp.data == {"answer": "Orin Vale"} and backend.calls == []


def test_the_cache_is_shared_with_another_process(tmp_path):
    code = (
        "import sys; from provbench.llm import LLMClient, ScriptedBackend; "
        "llm = LLMClient(ScriptedBackend(replies=['from the child']), cache_dir=sys.argv[1]); "
        f"print(llm.chat({ASK!r}).text)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "from the child"
    llm, backend = scripted([], cache_dir=tmp_path)
    assert llm.chat(ASK).text == "from the child" and backend.calls == []


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 64},
        {"seed": 1},
        {"logprobs": True},
        {"top_logprobs": 3},
        {"schema": SCHEMA},
        {"messages": [{"role": "user", "content": "Who directed Glass Harbour?"}]},
        {"model": "other-model"},
    ],
)
def test_any_different_parameter_gives_a_different_key(change):
    base = {"schema": None, "max_tokens": 512, "temperature": 0.0, "logprobs": False, "top_logprobs": 0, "seed": None}
    model, messages = change.pop("model", "m"), change.pop("messages", ASK)
    assert cache_key(model, messages, {**base, **change}) != cache_key("m", ASK, base)


def test_different_parameters_are_sent_not_served_from_cache(tmp_path):
    llm, backend = scripted(["cold", "warm"], cache_dir=tmp_path)
    assert llm.chat(ASK, temperature=0.0).text == "cold"
    assert llm.chat(ASK, temperature=0.9).text == "warm"
    assert len(backend.calls) == 2 and backend.calls[1]["temperature"] == 0.9


def test_a_greedy_request_differing_only_in_seed_is_served_from_the_cache_when_the_backend_ignores_it(tmp_path):
    llm, backend = scripted(["first", "second", "third", "fourth"], cache_dir=tmp_path)
    backend.greedy_ignores_seed = True  # as the embedded model's backend declares (llama.cpp's greedy sampler)
    assert llm.chat(ASK, temperature=0.0, seed=1).text == "first"
    again = llm.chat(ASK, temperature=0.0, seed=2)
    assert (again.text, again.cached, len(backend.calls)) == ("first", True, 1)
    assert llm.chat(ASK, temperature=0.7, seed=1).text == "second"  # sampling reads the seed
    assert llm.chat(ASK, temperature=0.7, seed=2).text == "third"
    del backend.greedy_ignores_seed  # other backends (an API) may read it at temperature 0 too
    assert llm.chat(ASK, temperature=0.0, seed=3).text == "fourth"


def test_the_embedded_backend_declares_that_greedy_decoding_ignores_the_seed():
    from provbench.llm.backends import LlamaCppBackend, LiteLLMBackend

    assert LlamaCppBackend.greedy_ignores_seed is True
    assert not hasattr(LiteLLMBackend, "greedy_ignores_seed")


def test_failed_calls_are_not_cached(tmp_path):
    llm, backend = scripted([ValueError("bad request"), "fine"], cache_dir=tmp_path)
    with pytest.raises(LLMError):
        llm.chat(ASK)
    assert llm.chat(ASK).text == "fine" and len(backend.calls) == 2


def test_no_cache_dir_means_every_call_is_sent():
    llm, backend = scripted(["a", "b"], cache_dir=None)
    assert [llm.chat(ASK).text, llm.chat(ASK).text] == ["a", "b"] and len(backend.calls) == 2


# -- retries and failures ------------------------------------------------------------------------


def test_a_transient_failure_is_retried_then_succeeds():
    llm, backend = scripted([TimeoutError("read timed out"), ConnectionError("reset"), "Orin Vale"], max_attempts=4)
    trace = new_trace()
    resp = llm.chat(ASK, trace=trace, purpose="answer")
    assert resp.text == "Orin Vale" and resp.attempts == 3 and len(backend.calls) == 3
    assert llm.stats.retries == 2 and llm.stats.failures == 0
    assert trace.llm_calls[0].attempts == 3 and trace.llm_calls[0].error is None


def test_a_persistent_transient_failure_raises_an_error_naming_model_and_cause():
    llm, backend = scripted([TimeoutError("read timed out")] * 5, max_attempts=3)
    with pytest.raises(LLMError, match=r"model 'scripted' failed after 3 attempts: TimeoutError: read timed out"):
        llm.chat(ASK)
    assert len(backend.calls) == 3 and llm.stats.failures == 1


def test_backoff_waits_grow_between_attempts():
    llm = LLMClient(ScriptedBackend(replies=[TimeoutError("t")] * 3), max_attempts=3, backoff_s=0.05)
    started = time.perf_counter()
    with pytest.raises(LLMError):
        llm.chat(ASK)
    assert time.perf_counter() - started >= 0.05 + 0.1 * 0.9  # waits of 0.05 s then 0.1 s


def test_a_non_transient_failure_fails_at_once():
    llm, backend = scripted([ValueError("malformed request"), "never sent"], max_attempts=4)
    trace = new_trace()
    with pytest.raises(LLMError, match=r"failed after 1 attempt: ValueError: malformed request"):
        llm.chat(ASK, trace=trace, purpose="answer")
    assert len(backend.calls) == 1
    call = trace.llm_calls[0]
    assert call.purpose == "answer" and call.attempts == 1 and "malformed request" in call.error


class StatusError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (TimeoutError(), True),
        (ConnectionError(), True),
        (StatusError(429), True),
        (StatusError(503), True),
        (StatusError(500), True),
        (StatusError(400), False),
        (StatusError(401), False),
        (ValueError(), False),
        (LLMError("already final"), False),
    ],
)
def test_transient_classification(exc, transient):
    assert is_transient(exc) is transient


def test_scripted_replies_running_out_is_a_clear_error():
    llm, _ = scripted(["only one"])
    llm.chat(ASK)
    with pytest.raises(LLMError, match=r"no reply for call 2: it was given 1 replies"):
        llm.chat(ASK)


def test_scripted_callable_replies_see_the_messages():
    llm, backend = scripted([lambda messages: {"echo": messages[-1]["content"]}])
    resp = llm.chat(ASK, schema=SCHEMA)
    assert resp.data == {"echo": ASK[0]["content"]} and backend.calls[0]["schema"] == SCHEMA


# -- schema, trace, stats ------------------------------------------------------------------------


def test_schema_replies_are_parsed_and_invalid_json_gives_data_none():
    llm, _ = scripted([{"answer": "Orin Vale"}, '{"answer": "Orin', '```json\n{"answer": "X"}\n```', '{"a": 1}'])
    assert llm.chat(ASK, schema=SCHEMA).data == {"answer": "Orin Vale"}
    broken = llm.chat(ASK, schema=SCHEMA)
    assert broken.data is None and broken.text == '{"answer": "Orin'
    assert llm.chat(ASK, schema=SCHEMA).data == {"answer": "X"}
    assert llm.chat(ASK).data is None  # no schema asked: no parsing


def test_trace_gets_one_llm_call_per_chat_with_tokens_and_cache_flag(tmp_path):
    llm, _ = scripted(["Orin Vale directed it"], cache_dir=tmp_path)
    trace = new_trace()
    llm.chat(ASK, purpose="answer", trace=trace)
    llm.chat(ASK, purpose="answer again", trace=trace)
    first, second = trace.llm_calls
    assert (first.model, first.purpose, first.cached, first.attempts) == ("scripted", "answer", False, 1)
    assert first.prompt_tokens == 4 and first.completion_tokens == 4 and first.latency_s > 0
    assert (second.purpose, second.cached) == ("answer again", True)
    assert trace.tokens == 16
    stats = llm.stats.as_dict()
    assert stats["calls"] == 1 and stats["cached"] == 1 and stats["tokens"] == 8


def test_defaults_from_make_llm_reach_the_backend_and_arguments_override_them():
    llm = make_llm("scripted", replies=["a", "b"], temperature=0.3, max_tokens=99)
    llm.chat(ASK)
    llm.chat(ASK, max_tokens=7)
    first, second = llm.backend.calls
    assert (first["temperature"], first["max_tokens"]) == (0.3, 99)
    assert (second["temperature"], second["max_tokens"]) == (0.3, 7)


def test_bad_input_gets_clear_errors(tmp_path):
    llm, _ = scripted(["x"])
    with pytest.raises(TypeError, match=r"messages\[0\] must be a dict"):
        llm.chat([("user", "hi")])
    with pytest.raises(UserError, match="llama-cpp model file not found"):
        make_llm(f"llama-cpp:{tmp_path / 'missing.gguf'}")
    with pytest.raises(
        UserError,
        match=r"model 'embedded' \(llm_backend 'embedded' .*unknown or missing "
        r"parameters \['api_base'\].*known parameters: n_ctx, n_threads, logprobs_n_ctx",
    ):
        make_llm("embedded", api_base="http://localhost")
    with pytest.raises(UserError, match=r"known parameters: replies"):
        make_llm("scripted", reply=["x"])


# -- concurrency and async -----------------------------------------------------------------------


class Gauge:
    """A slow reply that records how many calls were in flight at once."""

    def __init__(self) -> None:
        self.active = self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, messages):
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1
        return "done"


def test_the_concurrency_limit_is_honoured_by_threads(tmp_path):
    gauge = Gauge()
    llm, backend = scripted([gauge] * 8, max_concurrency=2, cache_dir=tmp_path)  # threads share the cache too
    threads = [threading.Thread(target=llm.chat, args=([{"role": "user", "content": str(i)}],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(backend.calls) == 8 and gauge.peak == 2 and len(llm.cache) == 8


def test_achat_runs_concurrently_within_the_limit():
    gauge = Gauge()
    llm, backend = scripted([gauge] * 6, max_concurrency=3)

    async def main():
        return await asyncio.gather(
            *(llm.achat([{"role": "user", "content": str(i)}], purpose="ragas") for i in range(6))
        )

    replies = asyncio.run(main())
    assert [r.text for r in replies] == ["done"] * 6 and len(backend.calls) == 6
    assert 2 <= gauge.peak <= 3


# -- litellm code path (mock_response: litellm runs its real request path up to the HTTP call) --

SECRET = "sk-provbench-test-SECRET-0123456789"


@pytest.fixture()
def secret_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)


def test_litellm_backend_returns_text_json_and_tokens(tmp_path, secret_env):
    llm = make_llm("openai/gpt-4o-mini", cache_dir=tmp_path, mock_response='{"answer": "Orin Vale"}')
    trace = new_trace()
    resp = llm.chat(ASK, schema=SCHEMA, purpose="answer", trace=trace)
    assert resp.data == {"answer": "Orin Vale"} and resp.prompt_tokens > 0 and resp.completion_tokens > 0
    assert llm.chat(ASK, schema=SCHEMA).cached and llm.stats.calls == 1
    assert trace.llm_calls[0].model == "openai/gpt-4o-mini"


def test_api_keys_never_reach_the_cache_the_trace_or_a_repr(tmp_path, secret_env):
    llm = make_llm("deepseek/deepseek-chat", cache_dir=tmp_path, mock_response="Orin Vale", api_key=SECRET)
    trace = new_trace()
    llm.chat(ASK, trace=trace)
    llm.close()
    stored = b"".join(p.read_bytes() for p in Path(tmp_path).rglob("*") if p.is_file())
    assert stored and SECRET.encode() not in stored
    assert SECRET not in trace.model_dump_json() and SECRET not in repr(llm) and SECRET not in repr(llm.backend)
    params = {"max_tokens": 1}
    assert cache_key("m", ASK, {**params, "api_key": SECRET}) == cache_key("m", ASK, params)


def test_litellm_rate_limits_are_retried_then_reported():
    llm = make_llm("openai/gpt-4o-mini", mock_response="litellm.RateLimitError", max_attempts=3, backoff_s=0)
    with pytest.raises(LLMError, match=r"'openai/gpt-4o-mini' failed after 3 attempts: RateLimitError"):
        llm.chat(ASK)
    assert llm.stats.calls == 3


def test_litellm_server_errors_are_retried():
    llm = make_llm("openai/gpt-4o-mini", mock_response="litellm.InternalServerError", max_attempts=2, backoff_s=0)
    with pytest.raises(LLMError, match=r"failed after 2 attempts: InternalServerError"):
        llm.chat(ASK)


@pytest.mark.parametrize("mock", ["litellm.ContextWindowExceededError", "exception"])
def test_litellm_bad_requests_and_auth_errors_fail_at_once(mock):
    import litellm

    if mock == "exception":
        mock = litellm.AuthenticationError(message="invalid api key", llm_provider="openai", model="gpt-4o-mini")
    llm = make_llm("openai/gpt-4o-mini", mock_response=mock, max_attempts=4, backoff_s=0)
    with pytest.raises(LLMError, match=r"failed after 1 attempt: (ContextWindowExceeded|Authentication)Error"):
        llm.chat(ASK)
    assert llm.stats.calls == 1


def test_logprobs_are_normalised_from_openai_shape():
    raw = {
        "content": [
            {
                "token": "Or",
                "logprob": -0.1,
                "bytes": [79, 114],
                "top_logprobs": [{"token": "Or", "logprob": -0.1}, {"token": "An", "logprob": -2.5}],
            }
        ]
    }
    assert normalise_logprobs(raw) == [
        {
            "token": "Or",
            "logprob": -0.1,
            "top_logprobs": [{"token": "Or", "logprob": -0.1}, {"token": "An", "logprob": -2.5}],
        }
    ]
    assert normalise_logprobs(None) is None


def test_parse_json_accepts_raw_newlines_in_strings_and_fences():
    """llama.cpp's grammar lets a small model put raw newlines inside a JSON string."""
    from provbench.llm import parse_json

    assert parse_json('{ "thought": "a\n\n" ,"tool": "x"}') == {"thought": "a\n\n", "tool": "x"}
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json('{"a": "cut') is None
