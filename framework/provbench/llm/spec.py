"""What a suite says about a model (``model:`` and ``judge:``): its id, its parameters, and the
provider's rate limits."""

from __future__ import annotations

import difflib
import logging
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


log = logging.getLogger(__name__)


class RateLimitSpec(BaseModel):
    """A model's limits per minute (either may be left out); :mod:`provbench.llm.ratelimit` keeps to them."""

    model_config = ConfigDict(extra="forbid")

    requests_per_minute: int | None = Field(default=None, ge=1)
    tokens_per_minute: int | None = Field(default=None, ge=1)


class ModelSpec(BaseModel):
    """A model: its id, its parameters (backend and generation), and the provider's rate limits.
    A plain string is the id."""

    model_config = ConfigDict(extra="forbid")

    id: str = "embedded"
    params: dict[str, Any] = Field(default_factory=dict)
    rate_limit: RateLimitSpec | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_id(cls, value: Any) -> Any:
        return {"id": value} if isinstance(value, str) else value


class KnownParams(BaseModel):
    """The model parameters provbench itself reads (client settings, generation defaults, llama.cpp
    settings) and the common litellm ones, with their types and ranges: checked when a suite is
    loaded, so ``deadline_s: soon`` stops the suite there instead of failing every unit."""

    model_config = ConfigDict(extra="allow")

    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0)
    timeout: float | None = Field(default=None, gt=0)
    deadline_s: float | None = Field(default=None, gt=0)
    max_attempts: int | None = Field(default=None, ge=1)
    backoff_s: float | None = Field(default=None, ge=0)
    max_backoff_s: float | None = Field(default=None, ge=0)
    json_retries: int | None = Field(default=None, ge=0)
    n_ctx: int | None = Field(default=None, ge=1)
    n_threads: int | None = Field(default=None, ge=1)
    logprobs_n_ctx: int | None = Field(default=None, ge=1)
    api_base: str | None = None
    input_cost_per_token: float | None = Field(default=None, ge=0)
    output_cost_per_token: float | None = Field(default=None, ge=0)


# other names a provider takes through litellm: passed on unchecked, and not warned about
PASSED_ON = {
    "api_key",
    "api_version",
    "base_url",
    "organization",
    "extra_headers",
    "headers",
    "stop",
    "n",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "user",
    "top_k",
    "reasoning_effort",
    "num_retries",
    "custom_llm_provider",
    "drop_params",
    "response_format",
    "replies",
    "aws_region_name",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "vertex_project",
    "vertex_location",
}


def check_model_params(
    specs: dict[str, "ModelSpec | None"], where: Callable[[tuple], str], error: type[Exception]
) -> list[str]:
    """Refuse a known parameter of the wrong type or range (``error``, located by ``where(loc)``);
    return one warning per unknown name (it is passed to the backend as is, where a misspelling
    like ``temprature`` would be silently dropped)."""
    warnings = []
    for block, spec in specs.items():
        if spec is None:
            continue
        try:
            KnownParams.model_validate(spec.params)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = (block, "params", *first["loc"])
            raise error(f"{where(loc)}: {first['msg']} (got {first['input']!r})") from None
        known = set(KnownParams.model_fields) | PASSED_ON
        for name in spec.params:
            if name not in known:
                close = difflib.get_close_matches(name, sorted(known), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                warnings.append(
                    f"{where((block, 'params', name))}: not a parameter provbench knows{hint}; "
                    "passed to the model's backend as is"
                )
    for line in warnings:
        log.warning(line)
    return warnings
