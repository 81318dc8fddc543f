"""Test-wide settings: everything offline, artifacts in one place."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

for key, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(key, value)

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def shared_dir() -> Path | None:
    """../shared beside the repository (or $PROVBENCH_SHARED); None when absent."""
    candidate = Path(os.environ.get("PROVBENCH_SHARED", REPO.parent / "shared"))
    return candidate if (candidate / "datasets").is_dir() else None


# Kùzu and LadybugDB cannot share a process (both native modules register the same pybind11
# types), so one pytest process tests one of them: PROVBENCH_TEST_GRAPH_STORE=ladybug selects the
# fork (scripts/test.sh runs the graph tests a second time that way).
TEST_GRAPH_STORE = os.environ.get("PROVBENCH_TEST_GRAPH_STORE", "kuzu")


@pytest.fixture(scope="session", params=[TEST_GRAPH_STORE])
def graph_store(request) -> str:
    """The embedded graph database knowledge bases of this test process live in."""
    from provbench.kb.backends import BACKENDS

    if importlib.util.find_spec(BACKENDS[request.param].module) is None:
        pytest.skip(f"graph store {request.param!r} is not installed (pip install 'provbench[{request.param}]')")
    return request.param


@pytest.fixture
def on_graph_store(graph_store):
    """Knowledge bases a test creates go to ``graph_store``."""
    from provbench.kb.backends import default_graph_store

    with default_graph_store(graph_store):
        yield graph_store


def import_file(path: Path, name: str | None = None) -> ModuleType:
    """A module imported from a file outside any package (e.g. a stand-in for a third-party
    plugin), without putting its folder on sys.path."""
    name = name or path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def shared_tiny_kb(tmp_path_factory, graph_store):
    """The tiny KB of provbench.testing in this process's graph database, built once per session:
    for tests that only read it."""
    from provbench.kb.backends import default_graph_store
    from provbench.testing import build_tiny_kb

    with default_graph_store(graph_store):
        kb = build_tiny_kb(tmp_path_factory.mktemp(f"shared-tiny-{graph_store}") / "kb")
    yield kb
    kb.close()


@pytest.fixture(scope="session")
def curriculum_mini(tmp_path_factory):
    """curriculum-mini's questions and its knowledge base, built once per test session (read only)."""
    from provbench_plugins.datasets.curriculum.loader import CurriculumLoader
    from provbench_plugins.kb_builders.concepts.builder import ConceptGraphBuilder

    questions = CurriculumLoader().load(REPO / "datasets" / "curriculum-mini")
    kb = ConceptGraphBuilder().build(questions, tmp_path_factory.mktemp("curriculum-mini") / "kb")
    yield questions, kb
    kb.close()


@pytest.fixture(scope="module")
def controls_kb_dir(tmp_path_factory) -> Path:
    """One controls knowledge base for every suite of a test module (same inputs: built once, reused)."""
    return tmp_path_factory.mktemp("controls-kb") / "kb"


@pytest.fixture(scope="module")
def kb_dir(controls_kb_dir) -> Path:
    """The controls knowledge base under the name the claim tests use (a module may define its own)."""
    return controls_kb_dir


def validate_cli(suite: Path, out: Path, reuse: Path | None = None):
    """``provbench validate SUITE --out OUT`` through the CLI (its result: exit code, output, stderr);
    ``reuse``: an earlier --out whose control runs are copied in first, so they resume, not rerun."""
    import shutil

    from click.testing import CliRunner

    from provbench.cli import main

    if reuse is not None:
        shutil.copytree(reuse / "controls", out / "controls")
    return CliRunner().invoke(main, ["validate", str(suite), "--out", str(out)])


def write_suite(folder: Path, text: str) -> Path:
    """``text`` written as ``folder/suite.yaml`` (the folder made as needed): its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def validated_once(tmp_path_factory, make_suite, kb: Path):
    """One ``provbench validate`` of ``make_suite(folder, kb)`` in a fresh folder, for a module's
    tests to share: (the folder, its --out, the CLI result)."""
    folder = tmp_path_factory.mktemp("validated")
    return folder, folder / "out", validate_cli(make_suite(folder, kb), folder / "out")


def verdicts_by_claim(verdicts) -> dict[tuple[str, str], list]:
    """(claim, control) -> its verdicts, in the order given (a claim may give a control several)."""
    found: dict[tuple[str, str], list] = {}
    for v in verdicts:
        found.setdefault((v.claim, v.control), []).append(v)
    return found
