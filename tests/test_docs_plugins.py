"""Every Python example in docs/plugins.md and docs/integrations.md runs as written (each in its
own module and folder)."""

from __future__ import annotations

import importlib
import re
import sys
import types

import pytest

from conftest import REPO

DOC = REPO / "docs" / "plugins.md"
DOCS = (DOC, REPO / "docs" / "integrations.md")


def python_blocks(doc):
    return re.findall(r"^```python\n(.*?)^```", doc.read_text(encoding="utf-8"), re.S | re.M)


BLOCKS = python_blocks(DOC)
EXAMPLES = [(doc, n, block) for doc in DOCS for n, block in enumerate(python_blocks(doc))]


def test_every_plugin_kind_has_an_example():
    text = "\n".join(BLOCKS)
    for hook in (
        "provbench_register_systems",
        "provbench_register_interventions",
        "provbench_register_metrics",
        "provbench_register_dataset_loaders",
        "provbench_register_kb_builders",
        "provbench_report_sections",
        "provbench_register_llm_backends",
        "provbench_register_claims",
        "def variants(",
    ):
        assert hook in text, hook


@pytest.mark.parametrize("doc, index, block", EXAMPLES, ids=[f"{d.stem}-{n}" for d, n, _ in EXAMPLES])
def test_example_runs(doc, index, block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = f"docs_{doc.stem}_example_{index}"
    module = types.ModuleType(name)
    module.__file__ = str(doc)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(block, f"{doc}:block {index + 1}", "exec"), module.__dict__)


SURFACE = re.findall(r"^\| (`provbench[^|]*) \| ([^|]*) \|$", DOC.read_text(encoding="utf-8"), re.M)


@pytest.mark.parametrize("modules, names", SURFACE, ids=[m for m, _ in SURFACE])
def test_the_public_surface_imports(modules, names):
    """Every name the public-surface table lists is in one of its row's modules."""
    found = [importlib.import_module(m) for m in re.findall(r"`([\w.]+)`", modules)]
    missing = [n for n in re.findall(r"`(\w+)`", names) if not any(hasattr(m, n) for m in found)]
    assert missing == []
