"""On-disk response cache: one entry per (model, messages, generation parameters).

diskcache stores entries in SQLite with file locking, so threads and processes can share a
directory. Only successful replies are stored; secrets never reach the key or the value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SECRET_PARAM_NAMES = {"api_key", "api_token", "token", "password", "headers", "extra_headers",
                      "aws_access_key_id", "aws_secret_access_key", "aws_session_token", "azure_ad_token"}


def is_secret_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in SECRET_PARAM_NAMES or lowered.endswith(("_key", "_secret", "_password"))


def public_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without anything that could carry a credential."""
    return {k: v for k, v in params.items() if not is_secret_param(k)}


def cache_key(model_id: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 over the model id, the messages and every generation parameter (schema, seed, ...)."""
    payload = {"model": model_id, "messages": messages, "params": public_params(params)}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """A thin wrapper over ``diskcache.Cache`` holding plain-dict replies."""

    def __init__(self, directory: Path | str) -> None:
        import diskcache

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._cache = diskcache.Cache(str(self.directory))

    def get(self, key: str) -> dict[str, Any] | None:
        return self._cache.get(key)

    def put(self, key: str, reply: dict[str, Any]) -> None:
        self._cache.set(key, reply)

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"
