"""What an outside user brings to provbench, for the tests/test_outside_*.py red-team checks: their
own documents and questions (own-docs-mini's, in the documented own-data format), one-file plugins
written next to their suite, and the commands they run (`provbench run`, `provbench validate`)."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
OWN_DOCS = REPO / "datasets" / "own-docs-mini"

DATA = """\
dataset:
  loader: qa
  path: data/questions.csv
  options: {documents: docs}
knowledge_base: {builder: documents, options: {chunk_size: 256}}
"""


def own_data(folder: Path) -> Path:
    """own-docs-mini's documents and questions copied into ``folder/data`` (the user's own files)."""
    data = folder / "data"
    if not data.exists():
        shutil.copytree(OWN_DOCS / "docs", data / "docs")
        shutil.copy(OWN_DOCS / "questions.csv", data / "questions.csv")
    return data


def user_suite(folder: Path, body: str, controls: str = "") -> Path:
    """``folder/suite.yaml``: the user's data and a knowledge base built from it, ``body`` (plugins, systems,
    interventions, metrics) and, when given, a controls block on the same data with ``controls``
    (llms and claims)."""
    own_data(folder)
    text = f"name: outside\n{DATA}model: {{id: schema-following}}\nseed: 0\n{body}"
    if controls:
        text += "controls:\n" + "".join("  " + line + "\n" for line in DATA.splitlines())
        text += "".join("  " + line + "\n" for line in controls.splitlines())
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def provbench(*args: str):
    """A provbench command in this process, as the user types it (its click result)."""
    from provbench.cli import main

    return CliRunner().invoke(main, list(args))


def provbench_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """A provbench command in a fresh process, as the user's shell runs it: only what the command
    itself loads (the suite's `plugins:`, `--plugin`) is registered."""
    paths = [str(REPO / p) for p in ("framework", "plugins", "tools")] + [str(cwd)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    command = [sys.executable, "-m", "provbench.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def report_text(run_dir: Path) -> str:
    """The run's HTML report as the words a reader sees (tags and scripts dropped), one line per row."""
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    page = re.sub(r"<(script|style).*?</\1>", "", page, flags=re.S)
    page = re.sub(r"<(tr|p|h\d|li|div|br)\b[^>]*>", "\n", page)
    page = html.unescape(re.sub(r"<[^>]+>", " ", page))
    return re.sub(r"\n\s*\n+", "\n", re.sub(r"[ \t]+", " ", page))


def statuses(run_dir: Path, system: str) -> dict[str, set[str]]:
    """condition -> the leak guard's statuses of ``system``'s units under it."""
    from provbench import load_run

    found: dict[str, set[str]] = {}
    for r in load_run(run_dir).records:
        if r.key.system == system and r.leak_check is not None:
            found.setdefault(r.key.condition, set()).add(r.leak_check.status)
    return found


def metric(run_dir: Path, name: str, system: str, condition: str) -> dict:
    """The value of metric ``name`` for a system under a condition in the run's metrics.json."""
    from provbench import load_run

    [value] = [
        v
        for v in load_run(run_dir).metric_values(name)
        if v.get("system") == system and v.get("condition") == condition
    ]
    return value
