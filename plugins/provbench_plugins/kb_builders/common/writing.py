"""Writing a built graph into a knowledge base, and finishing it.

Every builder ends the same way: :func:`write_kb` creates the KB at ``kb_dir`` and adds its text
units, entities and relations; communities and summaries follow (if any); :func:`finish` records
how long the build took, embeds the indices with a progress bar (terminal only) and marks the KB
complete with its build info.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .progress import embedding_progress

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.kb.types import Entity, Relation, TextUnit


def write_kb(
    kb_dir: Path, units: Sequence["TextUnit"], entities: Sequence["Entity"], relations: Sequence["Relation"]
) -> "KnowledgeBase":
    """A new KB at ``kb_dir`` holding these records (not complete until :func:`finish`)."""
    from provbench.kb import KnowledgeBase

    kb = KnowledgeBase.create(kb_dir)
    kb.add_text_units(list(units))
    kb.add_entities(list(entities))
    kb.add_relations(list(relations))
    return kb


def finish(
    kb: "KnowledgeBase",
    info: dict[str, Any],
    started: float,
    ann_min_vectors: int | None = None,
    known_vectors: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Embed and mark complete; ``info["duration_s"]`` is the time from ``started``
    (``time.monotonic()``) up to embedding. ``known_vectors``: rows not to embed again (KnowledgeBase.finalize)."""
    info["duration_s"] = round(time.monotonic() - started, 2)
    # what provbench.kb.health reads from build info alone (the report has no open KB)
    info.setdefault(
        "linked_entities", kb.store.scalar("MATCH (:Chunk)-[:MENTIONS]->(e:Entity) RETURN count(DISTINCT e)")
    )
    with embedding_progress() as progress:
        kb.finalize(info, ann_min_vectors=ann_min_vectors, progress=progress, known_vectors=known_vectors)
