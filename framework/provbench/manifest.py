"""The run manifest: suite, models, seeds, package and plugin versions, git revision (never secrets)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import platform
import subprocess
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from rich.markup import escape

from .errors import UserError
from .model import RunManifest, utc_now
from .run_store import RunStore
from .suite import LoadedSuite

if TYPE_CHECKING:
    import pluggy
    from rich.console import Console

log = logging.getLogger(__name__)

KEY_PACKAGES = (
    "pydantic",
    "pluggy",
    "kuzu",
    "llama-index-core",
    "litellm",
    "ragas",
    "llama-cpp-python",
    "sentence-transformers",
    "networkx",
    "numpy",
    "scipy",
    "matplotlib",
    "jinja2",
)


def write_manifest(
    store: RunStore,
    loaded: LoadedSuite,
    llm: Any,
    kb_dir: Path | None,
    pm: "pluggy.PluginManager",
    console: "Console | None" = None,
    judge: Any = None,
    kb: Any = None,
) -> RunManifest:
    """The run's manifest, written; ``models`` names the systems' model (``suite_model``; ``llm``: the
    client's) and the ``judge`` of LLM-judged metrics (the systems' model unless the suite names one;
    ``judge_llm``: the client's)."""
    from .registry import build_registry, plugin_source

    previous = store.read_manifest()
    if previous is not None and previous.suite_sha256 != loaded.sha256:
        log.warning("%s changed since run %s started; its recorded units are kept", loaded.path, previous.run_id)
        if console is not None:
            console.print(
                f"[yellow]note:[/] {escape(str(loaded.path))} changed since this run started; recorded units are kept"
            )
    suite = loaded.suite
    registry = build_registry(pm)
    suite_dump = suite.model_dump(mode="json")
    if kb_dir is not None:
        suite_dump["knowledge_base"]["directory"] = str(kb_dir)
    manifest = RunManifest(
        run_id=previous.run_id if previous else uuid.uuid4().hex[:12],
        suite_name=suite.name,
        suite_path=str(loaded.path),
        suite=suite_dump,
        suite_sha256=loaded.sha256,
        models={
            "llm": str(getattr(llm, "model_id", suite.model.id)),
            "suite_model": suite.model.id,
            # the suite's judge, as suite_model is the suite's model (a test may inject a client)
            "judge": suite.judge.id if suite.judge else suite.model.id,
            "judge_llm": str(getattr(judge or llm, "model_id", "")),
        },
        seeds=[suite.seed, suite.dataset.seed],
        versions=_versions(),
        git_revision=_git_revision(loaded.path),
        plugins={name: plugin_source(pm, plugin) for name, plugin in pm.list_name_plugin()},
        plugin_versions=registry.versions(),
        judged_scores=sorted(
            {k for m in suite.metrics for k in getattr(registry.get("metric", m.name).factory, "judged_scores", ())}
        ),
        knowledge_base=_kb_summary(kb, kb_dir) | _kept_build_spending(previous),
        created_at=previous.created_at if previous else utc_now(),
    )
    store.write_manifest(manifest)
    return manifest


# Suite settings a resumed run may change: how it is executed, analysed and reported, and which
# questions it takes; none changes what an already recorded unit holds.
FREE_SETTINGS = {
    "name",
    "description",
    "concurrency",
    "unit_timeout_s",
    "executor",
    "report",
    "budget",
    "assertions",
    "controls",
    "leak_guard",
    "dataset.limit",
    "dataset.seed",
    "dataset.sample",
    "knowledge_base.directory",
    "model.rate_limit",
    "judge.rate_limit",
}
# model parameters that change how a request travels, not what the model is asked or answers
TRANSPORT_PARAMS = {"timeout", "deadline_s", "max_attempts", "backoff_s", "max_backoff_s", "api_base", "api_key"}
KEYED_LISTS = ("systems", "interventions", "metrics")  # compared entry by entry (adding one is free)
FREE_FORM = ("params", "options")  # the user's own dicts: a key added or removed is a change


def check_same_settings(store: RunStore, loaded: LoadedSuite) -> None:
    """Resuming a run whose suite now differs in a setting its recorded units were made under
    (a model parameter, a system's or intervention's options, the seed, ...) would leave a
    manifest claiming settings those records never had: refuse, naming each difference. Free to
    change: :data:`FREE_SETTINGS`, transport parameters, and systems, interventions or metrics added."""
    previous = store.read_manifest()
    recorded = store.records_path.exists() and store.records_path.stat().st_size > 0
    if previous is None or not previous.suite or not recorded:
        return
    now = store.redactor.data(loaded.suite.model_dump(mode="json"))  # as the manifest keeps it
    changes = list(_changes(_comparable(previous.suite), _comparable(now), ""))
    if changes:
        shown = "; ".join(f"{path}: {old!r} -> {new!r}" for path, old, new in changes[:10])
        raise UserError(
            f"{loaded.path} changed since run {previous.run_id} in {store.run_dir} started, in settings "
            f"its recorded units were made under: {shown}. Undo the change to resume, or pass --out "
            "with a new directory for a run under the new settings"
        )


def suite_changes(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(setting, old, new) for each record-affecting setting two stored suites differ in (the rule
    of :func:`check_same_settings`; ``provbench compare`` warns with it)."""
    return list(_changes(_comparable(old), _comparable(new), ""))


def _comparable(suite: dict[str, Any]) -> dict[str, Any]:
    """The suite's settings that recorded units depend on, keyed lists as dicts by their keys."""
    data = {k: v for k, v in suite.items() if k not in FREE_SETTINGS}
    for name in ("dataset", "knowledge_base", "model", "judge"):
        if isinstance(data.get(name), dict):
            data[name] = {k: v for k, v in data[name].items() if f"{name}.{k}" not in FREE_SETTINGS}
            if isinstance(data[name].get("params"), dict):
                data[name]["params"] = {k: v for k, v in data[name]["params"].items() if k not in TRANSPORT_PARAMS}
    for name in KEYED_LISTS:
        if isinstance(data.get(name), list):
            data[name] = {ref.get("label") or ref["name"].rsplit("/", 1)[-1]: ref for ref in data[name]}
    return data


def _changes(old: Any, new: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(path, old, new) where the two differ; within the suite's own structure only keys both
    have are compared (a setting a newer provbench added, or a system added, is no change)."""
    if isinstance(old, dict) and isinstance(new, dict) and not path.endswith(FREE_FORM):
        for key in sorted(old.keys() & new.keys()):
            yield from _changes(old[key], new[key], f"{path}.{key}" if path else key)
    elif old != new:
        yield path, old, new


def _kb_summary(kb: Any, kb_dir: Path | None) -> dict[str, Any]:
    """What identifies the run's knowledge base: its builder's input fingerprint (else a hash of
    its build info) and its counts (``provbench compare`` warns when two runs' differ)."""
    if kb is None or kb_dir is None:
        return {}
    info = kb.build_info
    inputs = info.get("inputs") if isinstance(info.get("inputs"), dict) else {}
    fingerprint = inputs.get("fingerprint") or hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()
    return {"fingerprint": str(fingerprint), "counts": kb.stats().model_dump(mode="json")}


def _kept_build_spending(previous: RunManifest | None) -> dict[str, Any]:
    """What building the KB cost an earlier start of this run (the budget still counts it)."""
    spent = previous.knowledge_base.get("build_llm") if previous is not None else None
    return {"build_llm": spent} if spent else {}


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in ("provbench",) + KEY_PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def _git_revision(near: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=near.parent, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
