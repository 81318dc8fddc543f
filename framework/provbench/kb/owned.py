"""Which files of a knowledge-base directory provbench wrote: the only ones it ever deletes.

``KnowledgeBase.create`` writes :data:`OWNED_LIST` first, before anything else, naming the
entries a knowledge base holds (the Kùzu database and its side files, vectors, build info,
marker); a builder that writes more (a facts file, say) adds its names with :func:`claim`.
:func:`remove_kb` deletes exactly those entries, and refuses a directory holding anything else:
a user's file in a knowledge-base directory is never deleted, whatever happens to the KB.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..errors import UserError
from .graphstore import BUILD_INFO, COMPLETE_MARKER, DB_NAME, KB_JSON, STAGING_DIR, VECTORS_DIR

OWNED_LIST = ".provbench-files.json"
# Kùzu keeps a write-ahead log and a shadow file beside its database; atomic writes leave *.tmp
STANDARD_ENTRIES = (
    DB_NAME,
    f"{DB_NAME}.wal",
    f"{DB_NAME}.shadow",
    f"{DB_NAME}.lock",
    KB_JSON,
    VECTORS_DIR,
    STAGING_DIR,
    BUILD_INFO,
    COMPLETE_MARKER,
    f"{BUILD_INFO}.tmp",
    f"{COMPLETE_MARKER}.tmp",
)


def start(kb_dir: Path) -> None:
    """Write the list of provbench's entries into a new (empty) knowledge-base directory."""
    _write(kb_dir, list(STANDARD_ENTRIES))


def claim(kb_dir: str | Path, *names: str) -> None:
    """Add ``names`` (entries directly in ``kb_dir``) to what provbench wrote there."""
    kb_dir = Path(kb_dir)
    _write(kb_dir, sorted(set(listed(kb_dir) or STANDARD_ENTRIES) | set(names)))


def listed(kb_dir: Path) -> list[str] | None:
    """The names provbench recorded as its own in ``kb_dir``; None when it recorded none."""
    try:
        names = json.loads((kb_dir / OWNED_LIST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UserError(
            f"{kb_dir / OWNED_LIST}: unreadable list of provbench's files ({exc}); "
            "delete the knowledge base yourself or choose another directory"
        ) from None
    if not isinstance(names, list) or not all(isinstance(n, str) and "/" not in n for n in names):
        raise UserError(f"{kb_dir / OWNED_LIST}: expected a JSON list of file names")
    return names


def foreign_entries(kb_dir: Path) -> list[str]:
    """Entries of ``kb_dir`` provbench did not write (all but its list when it recorded none)."""
    own = {OWNED_LIST, OWNED_LIST + ".tmp"} | set(listed(kb_dir) or ())  # .tmp: killed while listing
    return sorted(p.name for p in kb_dir.iterdir() if p.name not in own)


def remove_kb(kb_dir: Path, why: str) -> None:
    """Delete provbench's entries of ``kb_dir`` (then the directory, if empty); ``why`` says for
    the error why it was being deleted. Refuses, deleting nothing, if anything else is there."""
    if not kb_dir.is_dir():
        raise UserError(f"{kb_dir} is a file, not a knowledge-base directory")
    foreign = foreign_entries(kb_dir)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise UserError(
            f"{kb_dir}: {why}, but it holds files provbench did not write ({shown}); refusing to "
            "delete anything: move them out, or choose an empty or new directory for the knowledge base"
        )
    for name in listed(kb_dir) or []:
        entry = kb_dir / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink(missing_ok=True)
    for name in (OWNED_LIST, OWNED_LIST + ".tmp"):
        (kb_dir / name).unlink(missing_ok=True)
    try:
        kb_dir.rmdir()
    except OSError:  # something appeared meanwhile: leave it
        pass


def _write(kb_dir: Path, names: list[str]) -> None:
    tmp = kb_dir / (OWNED_LIST + ".tmp")
    tmp.write_text(json.dumps(names), encoding="utf-8")
    os.replace(tmp, kb_dir / OWNED_LIST)
