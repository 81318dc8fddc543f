"""Rate limits: requests and tokens per minute (PyrateLimiter), and Retry-After parsing.

The minute is shortened to one second here (``window_s``); suites always use a minute."""

from __future__ import annotations

import time
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from provbench.llm import LLMClient, ScriptedBackend, make_llm
from provbench.llm.errors import retry_after_s
from provbench.llm.ratelimit import RateLimiter, RateLimitSpec, request_tokens
from provbench.suite import SuiteError, load_suite
from provbench.testing import registry_of, toy_plugin

ASK = [{"role": "user", "content": "x" * 40}]


def timed_calls(client: LLMClient, n: int, **kwargs) -> float:
    started = time.monotonic()
    for _ in range(n):
        client.chat(ASK, **kwargs)
    return time.monotonic() - started


def test_requests_per_minute_make_the_extra_requests_wait():
    limiter = RateLimiter(RateLimitSpec(requests_per_minute=2), window_s=1.0)
    client = LLMClient(ScriptedBackend(["a"] * 4), rate_limiter=limiter, max_attempts=1)
    assert timed_calls(client, 2) < 0.5  # within the allowance: no wait
    assert timed_calls(client, 1) >= 0.5  # the third waits for the window to move on


def test_tokens_per_minute_count_the_prompt_and_max_tokens():
    assert request_tokens({"messages": ASK, "max_tokens": 50}) == 40 // 4 + 1 + 50
    limiter = RateLimiter(RateLimitSpec(tokens_per_minute=100), window_s=1.0)
    client = LLMClient(ScriptedBackend(["a"] * 3), rate_limiter=limiter, max_attempts=1)
    assert timed_calls(client, 1, max_tokens=50) < 0.5
    assert timed_calls(client, 1, max_tokens=50) >= 0.5  # 61 + 61 tokens exceed 100 a window


def test_a_suite_caps_its_model_and_its_judge(tmp_path):
    (tmp_path / "q.json").write_text("[]")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\ndataset: {loader: questions-json, path: q.json}\n"
        "model: {id: scripted, rate_limit: {requests_per_minute: 60, tokens_per_minute: 9000}}\n"
        "judge: {id: scripted, rate_limit: {requests_per_minute: 5}}\nsystems: [top-entity]\n"
    )
    loaded = load_suite(suite, registry_of(toy_plugin()))
    assert loaded.suite.model.rate_limit.tokens_per_minute == 9000
    assert loaded.suite.judge.rate_limit.requests_per_minute == 5
    client = make_llm("scripted", rate_limit=loaded.suite.model.rate_limit)
    assert client.rate_limiter.spec.requests_per_minute == 60
    suite.write_text(suite.read_text().replace("requests_per_minute: 5", "requests_per_hour: 5"))
    with pytest.raises(SuiteError, match=r"line 4, field 'judge.rate_limit.requests_per_hour'"):
        load_suite(suite, registry_of(toy_plugin()))


def rate_limited(headers: dict[str, str]) -> Exception:
    error = RuntimeError("429")
    error.response = httpx.Response(429, headers=headers)
    return error


def test_retry_after_in_seconds_milliseconds_or_as_a_date():
    assert retry_after_s(rate_limited({"Retry-After": "7"})) == 7.0
    assert retry_after_s(rate_limited({"retry-after-ms": "250"})) == 0.25
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_s(rate_limited({"Retry-After": later})) <= 30
    assert retry_after_s(rate_limited({})) is None
    assert retry_after_s(rate_limited({"Retry-After": "soon"})) is None
    assert retry_after_s(ValueError("no response")) is None
