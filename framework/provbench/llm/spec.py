"""What a suite says about a model (``model:`` and ``judge:``): its id, its parameters, and the
provider's rate limits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


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
