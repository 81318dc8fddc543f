"""Where each text unit of a knowledge base came from: the user's file and the character offsets of
the chunk in the text read from it (``sources.json`` in the KB directory, written by a builder that
reads files, e.g. ``documents``). Reports link a question page's text units back to those files.

Layout: ``{"text_units": {"tu:0": {"path": "/abs/docs/a.md", "file": "a.md", "document": "doc:0",
"start": 0, "end": 812}, ...}}``. Offsets index the document's text as its reader extracted it
(for Markdown, HTML and PDF that is not the file's bytes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .owned import claim

SOURCES_FILE = "sources.json"


def write_sources(kb_dir: str | Path, text_units: dict[str, dict[str, Any]]) -> None:
    claim(kb_dir, SOURCES_FILE)  # provbench's own file: removed with the KB when it is rebuilt
    (Path(kb_dir) / SOURCES_FILE).write_text(
        json.dumps({"text_units": text_units}, indent=1, ensure_ascii=False), encoding="utf-8"
    )


def text_unit_sources(kb_dir: str | Path | None) -> dict[str, dict[str, Any]]:
    """Text unit id -> its source (path, file, document, start, end); {} when the KB records none."""
    if kb_dir is None:
        return {}
    path = Path(kb_dir) / SOURCES_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("text_units", {})
    except (OSError, ValueError, AttributeError):
        return {}


def source_link(source: dict[str, Any]) -> tuple[str, str]:
    """(href, label) of a text unit's source: a ``file://`` link and "file, characters a-b"."""
    href = Path(source["path"]).as_uri() if source.get("path") else ""
    span = f", characters {source['start']}-{source['end']}" if source.get("start") is not None else ""
    return href, f"{source.get('file') or source.get('path', '')}{span}"
