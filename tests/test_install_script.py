"""scripts/install.sh run twice: the second run only checks (a stamp of what the install depends on
in the venv) and prints no pip output; a changed pyproject.toml installs again. The venv's python
is a stand-in that logs how it was called, so nothing is downloaded or installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import REPO

FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../calls.log"
"""


def checkout(tmp_path: Path) -> Path:
    """What install.sh reads, copied: it cds to its checkout's root."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "install.sh", root / "scripts" / "install.sh")
    for name in ("pyproject.toml", "constraints.txt", "constraints-phoenix.txt", "setup.py"):
        shutil.copy2(REPO / name, root / name)
    python = root / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return root


def install(root: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PROVBENCH_VENV": str(root / "venv")}
    return subprocess.run(
        ["bash", "scripts/install.sh"], cwd=root, env=env, capture_output=True, text=True, timeout=60, check=True
    )


def calls(root: Path) -> list[str]:
    return (root / "venv" / "calls.log").read_text().splitlines()


def test_a_second_install_only_checks_and_a_changed_pyproject_installs_again(tmp_path):
    root = checkout(tmp_path)
    install(root)
    first = calls(root)
    assert any("install -c constraints.txt -e ." in c for c in first), first
    again = install(root)
    assert "up to date" in again.stdout and not again.stderr
    assert [c for c in calls(root)[len(first) :] if "pip" in c] == []  # pip not run at all
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + "\n# changed\n")
    install(root)
    assert any("install -c constraints.txt -e ." in c for c in calls(root)[len(first) :])
