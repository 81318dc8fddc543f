"""Every Python example in docs/plugins.md runs as written (each in its own module and folder)."""

from __future__ import annotations

import re
import sys
import types

import pytest

from conftest import REPO

DOC = REPO / "docs" / "plugins.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def test_every_plugin_kind_has_an_example():
    text = "\n".join(BLOCKS)
    for hook in ("provbench_register_systems", "provbench_register_interventions", "provbench_register_metrics",
                 "provbench_register_dataset_loaders", "provbench_register_kb_builders",
                 "provbench_report_sections", "provbench_register_llm_backends", "provbench_register_claims",
                 "def variants("):
        assert hook in text, hook


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = f"docs_plugins_example_{index}"
    module = types.ModuleType(name)
    module.__file__ = str(DOC)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(BLOCKS[index], f"{DOC}:block {index + 1}", "exec"), module.__dict__)
