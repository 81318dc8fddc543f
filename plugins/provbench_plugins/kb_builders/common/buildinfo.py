"""Reusing a finished knowledge base, and the ``build_info.json`` every builder writes.

A build is keyed by a fingerprint of its inputs (builder name and version, model, options that
change the KB, content hash). :func:`reuse_existing` opens a finished KB with the same
fingerprint, deletes an interrupted one (only the files provbench wrote there:
:mod:`provbench.kb.owned`; a directory holding others is refused), and refuses to replace a finished
KB built from other inputs, another builder version included, unless asked (``overwrite``). :func:`standard_info` lays out build info the same way for every builder,
so ``provbench kb info`` and the report read any builder's KB:

``counts``      documents, text_units, entities, relations, communities (the KB's own counts)
``paper``       optional: ``{"id", "title", "counts"}`` the published KB this builder follows,
                printed beside the KB's counts
``extraction``  :class:`~.extraction.ExtractionCounts`; ``communities``: :class:`~.communities.SummaryCounts`
``llm``         :class:`~.llm_calls.LLMTally` (calls, failures, tokens, first errors)
``problems``    what went wrong but did not stop the build (failed calls, invalid replies,
                member-list summaries), one readable line each; empty when all went well
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from provbench.errors import UserError
from provbench.kb.owned import remove_kb

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase

log = logging.getLogger(__name__)

FINGERPRINT_KEYS = ("builder", "model", "options", "content")


def fingerprint(builder: str, model_id: str, options: dict[str, Any], content: Any, **extra: str) -> dict[str, Any]:
    """Hashes of a build's inputs, and ``fingerprint``: the hash of them all."""
    parts = {
        "builder": builder,
        "model": model_id,
        "options": options,
        "content": hashlib.sha256(json.dumps(content, ensure_ascii=False, sort_keys=True).encode()).hexdigest(),
        **extra,
    }
    parts["fingerprint"] = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return parts


def file_digests(paths: Iterable[Path]) -> list[list[str]]:
    """[name, sha256] of each file, read in blocks (constant memory): a fingerprint's ``content``
    for builders whose input is files. (For multi-GB dumps, name, size and mtime may stand in.)"""
    digests = []
    for path in paths:
        digest = hashlib.sha256()
        with Path(path).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digests.append([Path(path).name, digest.hexdigest()])
    return digests


def reuse_existing(
    kb_dir: Path, expected: dict[str, Any], overwrite: bool, read_only: bool = False
) -> "KnowledgeBase | None":
    """The finished KB at ``kb_dir`` if it was built from the same inputs (opened ``read_only``
    when asked); None if there is none (an interrupted build's files are removed first). A
    finished KB from other inputs, another builder version included, is refused unless
    ``overwrite``: rebuilding it may cost a paid build again."""
    from provbench.kb import KnowledgeBase

    if not kb_dir.exists():
        return None
    if not KnowledgeBase.is_complete(kb_dir):
        remove_partial(kb_dir)
        return None
    kb = KnowledgeBase.open(kb_dir, read_only=read_only)
    found = (kb.build_info or {}).get("inputs", {})
    if found.get("fingerprint") == expected["fingerprint"]:
        return kb
    kb.close()
    differing = [k for k in expected if k != "fingerprint" and found.get(k) != expected[k]]
    if not overwrite:
        version = (
            f"it was built by {found.get('builder') or 'an unknown builder'}, this is {expected['builder']}; "
            if "builder" in differing
            else ""
        )
        raise UserError(
            f"knowledge base at {kb_dir} was built from other inputs ({version}{', '.join(differing) or 'unknown'} "
            "differ); use another directory, or the builder option overwrite=true to rebuild it "
            "(a build through an API model is paid for again)"
        )
    log.warning("replacing knowledge base at %s (%s differ)", kb_dir, ", ".join(differing))
    remove_kb(kb_dir, "the knowledge base there is to be replaced (overwrite=true)")
    return None


def remove_partial(kb_dir: Path) -> None:
    """Delete an interrupted build: only the files provbench wrote, and nothing if there are others."""
    remove_kb(kb_dir, "it holds no finished knowledge base (an interrupted build?)")
    log.warning("knowledge base at %s was incomplete (an interrupted build?): building it again", kb_dir)


def _plain(value: Any) -> Any:
    return {k: v for k, v in asdict(value).items() if not k.startswith("_")} if is_dataclass(value) else value


# What can go wrong without stopping a build, by section of its info:
# (count key, noun and verb for one, for several, what follows)
_PROBLEMS = {
    "extraction": (
        ("failed_calls", "extraction call failed", "extraction calls failed", " (their text units added nothing)"),
        ("invalid_outputs", "extraction reply was", "extraction replies were", " not valid JSON of the schema"),
        ("hallucinated_items", "extracted name was", "extracted names were", " not in their text unit (dropped)"),
        ("over_cap_items", "extracted item", "extracted items", " exceeded the per-text-unit caps (dropped)"),
    ),
    "communities": (
        (
            "failed_calls",
            "community-summary call failed",
            "community-summary calls failed",
            " (member list used instead)",
        ),
        (
            "fallback_invalid",
            "community-summary reply was",
            "community-summary replies were",
            " invalid (member list used instead)",
        ),
        (
            "deterministic",
            "community",
            "communities",
            " got a member list, not an LLM summary (summarize off or beyond max_summaries)",
        ),
    ),
    "llm": (("truncated_salvaged", "reply was", "replies were", " cut off by max_tokens (complete items kept)"),),
}


def problems(extraction: Any, communities: Any, llm: Any) -> list[str]:
    """One line per kind of thing that went wrong without stopping the build."""
    sections = {"extraction": _plain(extraction), "communities": _plain(communities), "llm": _plain(llm)}
    if sections["llm"] and "truncated_salvaged" not in sections["llm"]:  # an older tally's name for it
        sections["llm"] = {"truncated_salvaged": sections["llm"].get("salvaged", 0)}
    lines = []
    for section, checks in _PROBLEMS.items():
        for key, one, many, rest in checks:
            count = (sections[section] or {}).get(key, 0)
            if count:
                lines.append(f"{count} {one if count == 1 else many}{rest}")
    return lines


def kb_counts(
    units: list,
    entities: list,
    relations: list,
    documents: int,
    questions: int | None = None,
    communities: int | None = None,
) -> dict[str, int]:
    """Build info's ``counts``, in the order every builder writes them; one a builder has not (None) is left out."""
    counts = {
        "questions": questions,
        "documents": documents,
        "text_units": len(units),
        "entities": len(entities),
        "relations": len(relations),
        "communities": communities,
    }
    return {key: count for key, count in counts.items() if count is not None}


def standard_info(
    *,
    builder: str,
    inputs: dict[str, Any],
    model: str,
    options: dict[str, Any],
    counts: dict[str, int],
    extraction: Any = None,
    communities: Any = None,
    llm: Any = None,
    paper: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Build info in the layout the module docstring describes (plain JSON); a section a builder
    does not have (no LLM, no communities) is left out."""
    llm_info = llm.as_info() if hasattr(llm, "as_info") else _plain(llm)
    sections = {"extraction": _plain(extraction), "communities": _plain(communities), "llm": llm_info}
    info = {
        "builder": builder,
        "inputs": inputs,
        "model": model,
        "options": options,
        "counts": counts,
        **{k: v for k, v in sections.items() if v is not None},
        "problems": problems(extraction, communities, llm_info),
        **extra,
    }
    if paper:
        info["paper"] = paper
    return info
