"""provbench installed from its wheel, outside the checkout: built-in suites and datasets ship
inside the package, so `provbench suites`, `provbench data info` and suites by name work there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import REPO, shared_dir

SOURCES = (
    "framework",
    "plugins",
    "tools",
    "suites",
    "datasets",
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv holding only the provbench wheel; its dependencies come from this
    interpreter's site-packages through a .pth file (offline and fast, nothing else shared)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in SOURCES:  # a clean copy: no stale build/ from earlier builds in the checkout
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(REPO / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(work / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next((work / "dist").glob("provbench-*.whl"))
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "shared-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    return venv


def run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(cwd),
        "COLUMNS": "400",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAGAS_DO_NOT_TRACK": "true",
    }
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True)


def test_the_wheel_runs_outside_the_checkout(installed, tmp_path):
    where = run(installed, "python", "-c", "import provbench; print(provbench.__file__)", cwd=tmp_path)
    assert str(installed) in where.stdout, where.stdout + where.stderr  # not the checkout's copy

    suites = run(installed, "provbench", "suites", cwd=tmp_path)
    assert suites.returncode == 0, suites.stderr
    assert "quickstart" in suites.stdout and "2wiki-provenance" in suites.stdout
    assert "Paper 000's systems" in suites.stdout and "bundled" in suites.stdout

    # a built-in suite by name validates inside the package: its ../datasets path resolves there
    code = (
        "from provbench.bundled import resolve_suite; from provbench.suite import load_suite; "
        "print(load_suite(resolve_suite('quickstart')).dataset_source())"
    )
    source = run(installed, "python", "-c", code, cwd=tmp_path)
    assert source.returncode == 0 and source.stdout.strip().endswith("bundled/datasets/2wiki-mini/dev.json"), (
        source.stdout + source.stderr
    )
    assert source.stdout.startswith(str(installed))

    every = (
        "from provbench.bundled import builtin_suites; from provbench.suite import load_suite; "
        "[load_suite(s.path) for s in builtin_suites()]; print(len(builtin_suites()))"
    )
    loaded = run(installed, "python", "-c", every, cwd=tmp_path)
    assert loaded.returncode == 0 and int(loaded.stdout) == len(list((REPO / "suites").glob("*.yaml"))), (
        loaded.stdout + loaded.stderr
    )

    info = run(installed, "provbench", "data", "info", source.stdout.strip(), cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    assert "30 record(s), loader '2wiki'" in info.stdout and "local-path" in info.stdout

    script = run(
        installed,
        "python",
        "-c",
        "from provbench.report.explore import EXPLORE_SCRIPT; print('explore' in EXPLORE_SCRIPT)",
        cwd=tmp_path,
    )  # the report's filter script ships
    assert script.stdout.strip() == "True", script.stdout + script.stderr

    plugins = run(installed, "provbench", "plugins", cwd=tmp_path)
    assert "p000/agentic-graphrag" in plugins.stdout and "2wiki-paper000" in plugins.stdout


def test_data_info_on_the_shared_samples_from_the_wheel(installed, tmp_path):
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    for sample in sorted((shared / "datasets" / "2wikimultihopqa").glob("*.json")):
        info = run(installed, "provbench", "data", "info", str(sample), cwd=tmp_path)
        assert info.returncode == 0 and "record(s)" in info.stdout, info.stderr
    broken = tmp_path / "broken.json"
    broken.write_text(
        '[{"_id": "x", "type": "comparison", "question": "Q?", "answer": "a", "context": [], "supporting_facts": []}]'
    )
    bad = run(installed, "provbench", "data", "info", str(broken), "--loader", "2wiki", cwd=tmp_path)
    assert bad.returncode != 0 and "record 'x': field context" in bad.stderr, bad.stderr
