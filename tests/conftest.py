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
