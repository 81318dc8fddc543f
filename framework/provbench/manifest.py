"""The run manifest: suite, models, seeds, package and plugin versions, git revision (never secrets)."""

from __future__ import annotations

import importlib.metadata
import logging
import platform
import subprocess
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from .model import RunManifest, utc_now
from .store import RunStore
from .suite import LoadedSuite

if TYPE_CHECKING:
    import pluggy
    from rich.console import Console

log = logging.getLogger(__name__)

KEY_PACKAGES = ("pydantic", "pluggy", "kuzu", "llama-index-core", "litellm", "ragas", "llama-cpp-python",
                "sentence-transformers", "networkx", "numpy", "scipy", "matplotlib", "jinja2")


def write_manifest(store: RunStore, loaded: LoadedSuite, llm: Any, kb_dir: Path | None,
                   pm: "pluggy.PluginManager", console: "Console | None" = None, judge: Any = None) -> RunManifest:
    """The run's manifest, written; ``models`` names the systems' model (``suite_model``; ``llm``: the
    client's) and the ``judge`` of LLM-judged metrics (the systems' model unless the suite names one;
    ``judge_llm``: the client's)."""
    from .registry import build_registry, plugin_source

    previous = store.read_manifest()
    if previous is not None and previous.suite_sha256 != loaded.sha256:
        log.warning("%s changed since run %s started; its recorded units are kept", loaded.path, previous.run_id)
        if console is not None:
            console.print(f"[yellow]note:[/] {escape(str(loaded.path))} changed since this run started; "
                          "recorded units are kept")
    suite = loaded.suite
    suite_dump = suite.model_dump(mode="json")
    if kb_dir is not None:
        suite_dump["knowledge_base"]["directory"] = str(kb_dir)
    manifest = RunManifest(
        run_id=previous.run_id if previous else uuid.uuid4().hex[:12],
        suite_name=suite.name, suite_path=str(loaded.path), suite=suite_dump, suite_sha256=loaded.sha256,
        models={"llm": str(getattr(llm, "model_id", suite.model.id)), "suite_model": suite.model.id,
                # the suite's judge, as suite_model is the suite's model (a test may inject a client)
                "judge": suite.judge.id if suite.judge else suite.model.id,
                "judge_llm": str(getattr(judge or llm, "model_id", ""))},
        seeds=[suite.seed, suite.dataset.seed], versions=_versions(), git_revision=_git_revision(loaded.path),
        plugins={name: plugin_source(pm, plugin) for name, plugin in pm.list_name_plugin()},
        plugin_versions=build_registry(pm).versions(),
        created_at=previous.created_at if previous else utc_now())
    store.write_manifest(manifest)
    return manifest


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


