"""Whether runs can be compared: what each was made with, and a warning for every difference.

``provbench compare`` puts runs side by side; a different judge, knowledge base, question set or
package version can explain a difference as well as the systems can. Each row of the table is one
thing a run was made with (from its manifest, and the knowledge base's ``build_info.json`` where
the directory still holds it); a row whose runs disagree becomes a warning naming the runs and
both values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..manifest import suite_changes
from ..results.data import RunData

# suite settings that have their own row, or say nothing about what a record holds
OWN_ROWS = {"name", "description", "dataset", "knowledge_base", "model", "judge", "report"}


@dataclass
class Comparability:
    rows: list[dict[str, Any]] = field(default_factory=list)  # {"what", "cells", "same"}
    warnings: list[str] = field(default_factory=list)


def comparability(runs: Sequence[RunData], labels: Sequence[str]) -> Comparability:
    """The table of what each run was made with, and a warning per row whose runs disagree."""
    found = Comparability()
    kbs = [_knowledge_base(run) for run in runs]
    rows = [
        ("dataset", [_dataset(run) for run in runs]),
        ("questions", [f"{len(run.question_ids)}: {_digest(sorted(run.question_ids))}" for run in runs]),
        ("knowledge base fingerprint", [kb[0] for kb in kbs]),
        ("knowledge base counts", [kb[1] for kb in kbs]),
        ("model", [run.manifest.models.get("llm", "") for run in runs]),
        ("judge", [run.manifest.models.get("judge", "") for run in runs]),
        ("provbench version", [run.manifest.versions.get("provbench", "unknown") for run in runs]),
    ]
    for what, values in rows:
        _add(found, what, values, labels)
    used = set().union(*(_used(run) for run in runs))
    for key in sorted({k for run in runs for k in run.manifest.plugin_versions}):
        name = key.rpartition(":")[2]
        if name in used or name.rpartition("/")[2] in used:  # the plugins these runs ran, not every one installed
            _add(found, f"plugin {key}", [run.manifest.plugin_versions.get(key, "absent") for run in runs], labels)
    for label, run in zip(labels[1:], runs[1:]):
        for path, old, new in suite_changes(_settings(runs[0]), _settings(run)):
            found.rows.append({"what": f"suite {path}", "cells": [_short(old)] + ["" for _ in runs[1:]], "same": False})
            found.rows[-1]["cells"][labels.index(label)] = _short(new)
            found.warnings.append(
                f"{label} differs from {labels[0]} in the suite's {path}: {_short(old)} vs {_short(new)}"
            )
    return found


def _add(found: Comparability, what: str, values: list[str], labels: Sequence[str]) -> None:
    same = len(set(values)) == 1
    found.rows.append({"what": what, "cells": values, "same": same})
    for label, value in zip(labels[1:], values[1:]):
        if value != values[0]:
            found.warnings.append(f"{label} differs from {labels[0]} in {what}: {values[0]} vs {value}")


def _dataset(run: RunData) -> str:
    d = run.suite.get("dataset") or {}
    parts = [f"{d.get('loader', '?')}:{d.get('path', '?')}"] + [
        f"{k}={d[k]}" for k in ("limit", "seed", "sample") if d.get(k) is not None
    ]
    return " ".join(parts + ([f"options={_short(d['options'])}"] if d.get("options") else []))


def _knowledge_base(run: RunData) -> tuple[str, str]:
    """(fingerprint, counts) of the run's knowledge base as its manifest recorded them when the run
    started; a run from before provbench recorded them reads the directory's build_info.json."""
    recorded = run.manifest.knowledge_base
    if recorded:
        counts = ", ".join(f"{k} {v}" for k, v in recorded.get("counts", {}).items() if v)
        return str(recorded.get("fingerprint", "unknown"))[:16], counts or "empty"
    directory = (run.suite.get("knowledge_base") or {}).get("directory")
    if not directory:
        return "none", "none"
    try:
        info = json.loads((Path(directory) / "build_info.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"unknown ({directory} holds no readable build_info.json)", "unknown"
    inputs = info.get("inputs") if isinstance(info.get("inputs"), dict) else {}
    return str(inputs.get("fingerprint") or _digest(info))[:16], "not recorded"


def _used(run: RunData) -> set[str]:
    """Plugin names (full and short) the run's suite uses."""
    names = set()
    for section in ("systems", "interventions", "metrics"):
        names |= set(run.plugin_names(section).values())
    suite = run.suite
    names |= {(suite.get("dataset") or {}).get("loader"), (suite.get("knowledge_base") or {}).get("builder")}
    return {n for name in names if name for n in (name, name.rpartition("/")[2])}


def _settings(run: RunData) -> dict[str, Any]:
    return {k: v for k, v in run.suite.items() if k not in OWN_ROWS}


def _digest(value: Any) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
