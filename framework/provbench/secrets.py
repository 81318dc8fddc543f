"""Keep credentials out of every artefact a run writes (manifest, records, metrics, logs, report).

Two rules, applied together: a value stored under a *name* that looks like a credential
(``api_key``, ``token``, ``password``, ``secret``, ``Authorization``, ...) is replaced whatever it
is, and a string that *looks like* a key (``sk-...``, ``ghp_...``, ``AKIA...``, a JWT, ...) is
replaced wherever it appears. The exact values found under such names in the suite and in the
environment are also replaced anywhere they reappear (an error message quoting a key, say).
Credentials inside URLs are replaced too, whatever the key looks like: the password part of
``scheme://user:password@host`` and the value of a credential-named query parameter
(``?api_key=...``, ``&token=...``).
"""

from __future__ import annotations

import json
import logging
import os
import re
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Mapping

REDACTED = "[REDACTED]"
# words that mark a name as a credential; "tokens" (max_tokens) is a count, not a credential
SECRET_WORDS = {
    "key",
    "apikey",
    "token",
    "password",
    "passwd",
    "pwd",
    "secret",
    "credential",
    "credentials",
    "authorization",
    "auth",
    "bearer",
    "cookie",
    "signature",
}
SECRET_NAMES = {"headers", "extra_headers"}  # may carry Authorization: redact whole
KEY_PATTERN = re.compile(
    r"(?:\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{30,}|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|\bhf_[A-Za-z0-9]{20,}|\bgsk_[A-Za-z0-9]{20,}"
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"|(?i:bearer)\s+[A-Za-z0-9_\-.=]{12,})"
)
# every key KEY_PATTERN finds starts with one of these (then "bearer", in any case): checking
# for them first is much cheaper than the pattern on a record with none, which is nearly every record
_KEY_PREFIXES = (
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "AIza",
    "xox",
    "hf_",
    "gsk_",
    "eyJ",
)
# scheme://user:password@ -> the userinfo goes (a user name alone is no secret, but kept together
# with the password it names an account: both are replaced)
URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/@:?#]*:[^\s/@?#]*)@")
URL_QUERY_PARAM = re.compile(r"(?P<lead>[?&;](?P<name>[A-Za-z0-9_.\-]+)=)(?P<value>[^&#\s;'\"]+)")
_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# a record's unit key is no credential, nor is the shell's working directory (PWD, OLDPWD)
NOT_SECRET_NAMES = {"key", "keys", "cache_key", "sort_key", "pwd", "oldpwd"}
AUTH_SCHEMES = {"bearer", "basic", "token"}
MIN_SECRET_LEN = 6  # shorter values (e.g. a dummy "x") are redacted by name only


def is_secret_name(name: str) -> bool:
    """True for names like api_key, OPENAI_API_KEY, authToken, db-password, client_secret."""
    lowered = _CAMEL.sub("_", str(name)).lower()
    if lowered in NOT_SECRET_NAMES:
        return False
    return lowered in SECRET_NAMES or bool(set(_SPLIT.split(lowered)) & SECRET_WORDS)


def _may_hold_key(text: str) -> bool:
    return any(prefix in text for prefix in _KEY_PREFIXES) or "bearer" in text.lower()


def _may_hold_url_secret(text: str) -> bool:
    return "://" in text and ("@" in text or "=" in text)


def _query_param(match: re.Match) -> str:
    return match["lead"] + REDACTED if is_secret_name(match["name"]) else match[0]


def redact_urls(text: str) -> str:
    """``text`` with URL credentials replaced (``user:password@``, credential-named query parameters)."""
    if not _may_hold_url_secret(text):
        return text
    text = URL_USERINFO.sub(lambda m: m["scheme"] + REDACTED + "@", text)
    return URL_QUERY_PARAM.sub(_query_param, text)


_REMEMBERED: set[str] = set()  # secrets of the suites this process runs


def remember(redactor: "Redactor") -> None:
    """Make ``redactor``'s known values (a run's suite secrets) known to every later redaction in
    this process: a KB builder's error text or a console line knows no suite, but may quote them."""
    _REMEMBERED.update(redactor.values)


def redact(text: str, *configs: Any) -> str:
    """``text`` with every secret known to this process replaced (the environment's credential
    variables, those of ``configs``, key-like strings, URL credentials): for error texts and
    anything else printed or stored outside a run store."""
    return Redactor.for_run(*configs).text(str(text))


def secret_values(data: Any) -> set[str]:
    """Every string stored under a credential-like name anywhere inside ``data``."""
    found: set[str] = set()
    if isinstance(data, Mapping):
        for name, value in data.items():
            if is_secret_name(name):
                found |= _strings(value)
            else:
                found |= secret_values(value)
    elif isinstance(data, (list, tuple)):
        for item in data:
            found |= secret_values(item)
    elif isinstance(data, str) and _may_hold_url_secret(data):  # a URL's password may reappear alone
        found |= {m["userinfo"].partition(":")[2] for m in URL_USERINFO.finditer(data)}
        found |= {m["value"] for m in URL_QUERY_PARAM.finditer(data) if is_secret_name(m["name"])}
    return found


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):  # "Bearer X" may reappear as X alone
        scheme, _, rest = value.partition(" ")
        return {value, rest} if scheme.lower() in AUTH_SCHEMES and rest else {value}
    if isinstance(value, Mapping):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


class Redactor:
    """Replaces known secret values and key-looking strings; see the module docstring."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        kept = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LEN}
        self.values = sorted(kept, key=len, reverse=True)  # longest first: no partial leftovers

    @classmethod
    def for_run(cls, *configs: Any, environ: Mapping[str, str] | None = None) -> "Redactor":
        """Secrets of the given configs (suite dumps, plugin options), of the environment, and
        those :func:`remember` was given in this process."""
        env = os.environ if environ is None else environ
        values = {v for name, v in env.items() if is_secret_name(name)} | _REMEMBERED
        for config in configs:
            values |= secret_values(config)
        return cls(values)

    def needed(self, text: str) -> bool:
        return (
            any(v in text for v in self.values)
            or (_may_hold_key(text) and KEY_PATTERN.search(text) is not None)
            or redact_urls(text) != text
        )

    def text(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, REDACTED)
        text = redact_urls(text)
        return KEY_PATTERN.sub(REDACTED, text) if _may_hold_key(text) else text

    def data(self, data: Any, by_name: bool = True) -> Any:
        """A copy of ``data`` (JSON-like) with secret strings replaced, and with ``by_name`` every
        value under a credential-like name too (configs; records keep their structure)."""
        if isinstance(data, Mapping):
            return {
                k: (
                    REDACTED if by_name and is_secret_name(k) and v not in (None, "", {}, []) else self.data(v, by_name)
                )
                for k, v in data.items()
            }
        if isinstance(data, (list, tuple)):
            return type(data)(self.data(v, by_name) for v in data)
        if isinstance(data, str):
            return self.text(data)
        return data

    def json_line(self, line: str) -> str:
        """A JSON document with secrets replaced; unchanged (byte for byte) when it holds none."""
        if not self.needed(line):
            return line
        return json.dumps(self.data(json.loads(line), by_name=False), ensure_ascii=False, separators=(",", ":"))


def questions_with_secrets(questions: Iterable[Any], redactor: Redactor) -> list[str]:
    """Ids of the questions (pydantic models with an ``id``) whose text the run store will redact.

    The model is sent each question as the dataset wrote it (the run evaluates the dataset as
    given); only the artefacts hold ``[REDACTED]``, so the run says which questions differ."""
    return [q.id for q in questions if redactor.needed(q.model_dump_json())]


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each message before any handler formats it; with no
    ``redactor``, by what the process knows at that moment (:meth:`Redactor.for_run`)."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = self.redactor or Redactor.for_run()
        message = record.getMessage()
        if redactor.needed(message):
            record.msg, record.args = redactor.text(message), ()
        if record.exc_info and record.exc_info[1] is not None and redactor.needed(str(record.exc_info[1])):
            record.exc_info, record.exc_text = None, None  # a traceback quoting a key is dropped
        return True


@contextmanager
def redacted_logs(redactor: Redactor | None = None) -> Iterator[None]:
    """Redact every log message while the block runs, whichever root handler writes it (by
    ``redactor``, else by what the process knows when the message is logged)."""
    handlers = [h for h in [*logging.getLogger().handlers, logging.lastResort] if h is not None]
    flt = RedactingFilter(redactor)
    for handler in handlers:
        handler.addFilter(flt)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(flt)
