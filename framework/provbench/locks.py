"""Inter-process locks on run and knowledge-base directories.

The lock itself is an OS file lock (``filelock``: ``flock`` on POSIX), so it dies with its
holder: a process killed with SIGKILL never leaves a lock behind. Beside it, ``<lock>.holder``
records who holds it (pid, host, command, since) for the error a second process sees; a holder
file whose lock is free is stale (its writer died) and is simply overwritten.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from filelock import FileLock, Timeout

from .errors import UserError

log = logging.getLogger(__name__)


class LockHeld(UserError):
    """Another process holds the lock; the message names it."""


def describe_holder(lock_path: Path) -> str:
    """``pid 123 on host h (provbench run ..., since 10:02:11 UTC)``, or 'an unknown process'."""
    try:
        info = json.loads(Path(str(lock_path) + ".holder").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "an unknown process"
    since = time.strftime("%H:%M:%S UTC", time.gmtime(info.get("since", 0)))
    return f"pid {info.get('pid')} on host {info.get('host')} ({info.get('command', '?')}, since {since})"


class DirLock:
    """An exclusive lock on ``lock_path`` (a file that need not exist yet)."""

    def __init__(self, lock_path: Path | str, what: str) -> None:
        self.path = Path(lock_path)
        self.what = what  # e.g. "run directory /x" (for messages)
        self._lock = FileLock(str(self.path), thread_local=False)

    @property
    def holder_path(self) -> Path:
        return Path(str(self.path) + ".holder")

    def acquire(self, wait_s: float = 0.0, on_wait: Callable[[str], None] | None = None) -> None:
        """Take the lock, waiting up to ``wait_s`` (0: fail at once). Raises :class:`LockHeld`."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            holder = describe_holder(self.path)
            if wait_s <= 0:
                raise LockHeld(
                    f"{self.what} is in use by {holder}; wait for it to finish, or use another directory"
                ) from None
            message = f"waiting up to {wait_s:.0f} s for {holder}, which holds {self.what}"
            log.warning(message)
            if on_wait is not None:
                on_wait(message)
            try:
                self._lock.acquire(timeout=wait_s)
            except Timeout:
                raise LockHeld(
                    f"{self.what} is still in use by {describe_holder(self.path)} after {wait_s:.0f} s"
                ) from None
        self._note_holder()

    def _note_holder(self) -> None:
        if self.holder_path.exists():  # the lock was free, so whoever wrote this is gone
            log.info("%s: replacing a stale lock note (%s)", self.what, describe_holder(self.path))
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.time(),
            "command": " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv[:3]))[:200],
        }
        tmp = self.holder_path.with_name(self.holder_path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(info), encoding="utf-8")
        os.replace(tmp, self.holder_path)

    def release(self) -> None:
        if not self._lock.is_locked:
            return
        try:
            self.holder_path.unlink(missing_ok=True)
        finally:
            self._lock.release()

    def __enter__(self) -> "DirLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


KB_WAIT_S = 6 * 3600.0  # default wait for another process's KB build (PROVBENCH_KB_LOCK_WAIT_S)


def lock_dir() -> Path:
    """Where knowledge-base locks live: ``PROVBENCH_LOCK_DIR``, else a per-user folder in the
    system's temporary directory. Not beside the KB: its parent may be an input folder (a
    dataset's) or read-only media, and a lock file must land in neither."""
    configured = os.environ.get("PROVBENCH_LOCK_DIR")
    if configured:
        return Path(configured)
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"provbench-locks-{user}"


def kb_lock_path(kb_dir: Path | str) -> Path:
    """The lock of the KB at ``kb_dir``: named by its resolved path, in :func:`lock_dir`. (Processes
    of one user on one host exclude each other; other users' builds of one KB do not.)"""
    resolved = Path(kb_dir).resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    return lock_dir() / f"kb-{resolved.name[:40]}-{digest}.lock"


_HELD: set[tuple[str, int]] = set()  # (lock path, thread id) this process holds: re-entry is free


@contextmanager
def kb_build_lock(kb_dir: Path | str, wait_s: float | None = None) -> Iterator[DirLock | None]:
    """Hold while deciding to reuse or (re)build the KB at ``kb_dir``: a second process waits for
    the first one's build to finish, then finds it complete and reuses it. Re-entrant within a
    thread (``KBBuilder`` takes it around every ``build``; a nested build takes it again for free)."""
    path = kb_lock_path(kb_dir)
    token = (str(path), threading.get_ident())
    if token in _HELD:
        yield None
        return
    if wait_s is None:
        wait_s = float(os.environ.get("PROVBENCH_KB_LOCK_WAIT_S", KB_WAIT_S))
    lock = DirLock(path, f"knowledge base {Path(kb_dir)}")
    lock.acquire(wait_s=wait_s)
    _HELD.add(token)
    try:
        yield lock
    finally:
        _HELD.discard(token)
        lock.release()
