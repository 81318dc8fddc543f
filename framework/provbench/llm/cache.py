"""On-disk response cache: one entry per (model, messages, generation parameters).

diskcache stores entries in SQLite with file locking, so threads and processes can share a
directory. Only successful replies are stored; secrets never reach the key or the value.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import UserError

log = logging.getLogger(__name__)

SECRET_PARAM_NAMES = {
    "api_key",
    "api_token",
    "token",
    "password",
    "headers",
    "extra_headers",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "azure_ad_token",
}


def is_secret_param(name: str) -> bool:
    from ..secrets import is_secret_name

    lowered = name.lower()
    return lowered in SECRET_PARAM_NAMES or is_secret_name(name)


def public_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without anything that could carry a credential."""
    return {k: v for k, v in params.items() if not is_secret_param(k)}


def cache_key(model_id: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 over the model id, the messages and every generation parameter (schema, seed, ...)."""
    payload = {"model": model_id, "messages": messages, "params": public_params(params)}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """A thin wrapper over ``diskcache.Cache`` holding plain-dict replies.

    A corrupted cache (a damaged SQLite file) is moved aside to ``<dir>.corrupt-<time>`` with a
    warning naming both paths, and the run continues with an empty cache: the replies are asked
    again, nothing is lost but time. A cache that cannot be written (disk full, read-only, locked:
    SQLite's *operational* errors, or the OS's) is not damaged: it is kept as it is, the run goes
    on without caching, and one warning says why ("disk full").
    """

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.quarantined: Path | None = None
        self.unwritable: str | None = None  # why the cache stopped caching (e.g. "disk full")
        self._guard = threading.Lock()
        self._cache = self._open()

    def _open(self) -> Any:
        import diskcache

        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            cache = diskcache.Cache(str(self.directory))
            cache.get("provbench-probe")  # some damage shows only on the first read
            return cache
        except (sqlite3.OperationalError, OSError) as exc:
            raise UserError(f"LLM cache {self.directory}: cannot open it: {why_unwritable(exc)}") from None
        except sqlite3.DatabaseError as exc:
            self._quarantine(exc)
            return diskcache.Cache(str(self.directory))

    def _quarantine(self, exc: Exception) -> None:
        target = self.directory.with_name(f"{self.directory.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        os.replace(self.directory, target)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.quarantined = target
        log.warning(
            "LLM cache %s is corrupted (%s: %s); moved it to %s and continuing with an empty cache "
            "(replies will be asked again; delete the moved folder once you no longer need it)",
            self.directory / "cache.db",
            type(exc).__name__,
            exc,
            target,
        )

    def _guarded(self, action: str, *args: Any) -> Any:
        try:
            return getattr(self._cache, action)(*args)
        except (sqlite3.OperationalError, OSError) as exc:  # the cache is fine; the disk is not
            self._stop_caching(exc)
            return None
        except sqlite3.DatabaseError as exc:
            with self._guard:
                if self.quarantined is None:  # the first thread to notice moves it aside
                    try:
                        self._cache.close()
                    except sqlite3.Error:
                        pass
                    self._quarantine(exc)
                    self._cache = self._open()
            return getattr(self._cache, action)(*args)

    def _stop_caching(self, exc: Exception) -> None:
        with self._guard:
            if self.unwritable is None:
                self.unwritable = why_unwritable(exc)
                log.warning(
                    "LLM cache %s: %s; continuing without it (new replies are not cached; the "
                    "cache itself is kept as it was)",
                    self.directory,
                    self.unwritable,
                )

    def get(self, key: str) -> dict[str, Any] | None:  # a full disk still reads
        return self._guarded("get", key)

    def put(self, key: str, reply: dict[str, Any]) -> None:
        if self.unwritable is None:
            self._guarded("set", key, reply)

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"


def why_unwritable(exc: Exception) -> str:
    """ "disk full" for SQLite's SQLITE_FULL or the OS's ENOSPC / EDQUOT; else the error itself."""
    if getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "full" in str(exc).lower():
        return f"disk full ({exc})"
    return f"{type(exc).__name__}: {exc}"
