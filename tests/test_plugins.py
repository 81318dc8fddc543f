"""The plugin system: built-ins through the same hooks, entry-point discovery, clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from provbench import hookimpl
from provbench.registry import BUILTIN_PLUGINS, PluginError, build_registry, make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "provbench-hello"


def test_builtin_plugins_register_the_paper_000_parts():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    assert {"llm-only", "rag", "graphrag", "agentic-graphrag", "agentic-visited-only",
            "agentic-evidence-first"} <= set(registry.names("system"))
    assert {"full-isolation", "text-only-isolation", "cited-removal", "random-removal",
            "entity-removal", "entity-text-mask"} <= set(registry.names("intervention"))
    assert "2wiki" in registry.names("dataset_loader")
    assert "2wiki-paper000" in registry.names("kb_builder")
    sources = {reg.source for reg in registry.all()}
    assert sources <= {f"builtin ({m})" for m in BUILTIN_PLUGINS}


def test_duplicate_name_names_both_sources():
    pm = make_plugin_manager(load_entry_points=False)
    intruder = types.ModuleType("intruder_plugin")

    @hookimpl
    def provbench_register_systems():
        return {"rag": object}

    intruder.provbench_register_systems = provbench_register_systems
    pm.register(intruder, name="intruder_plugin")
    with pytest.raises(PluginError) as err:
        build_registry(pm)
    message = str(err.value)
    assert "duplicate system name 'rag'" in message
    assert "builtin (provbench_plugins.papers.p000_neighborhoods)" in message and "intruder_plugin" in message


def test_unknown_name_suggests_the_nearest():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    with pytest.raises(PluginError, match=r"unknown system 'agentic-grahprag'; did you mean 'agentic-graphrag'\?"):
        registry.get("system", "agentic-grahprag")


def test_bad_options_name_the_plugin():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    with pytest.raises(PluginError, match="system 'llm-only': bad options"):
        registry.create("system", "llm-only", no_such_option=1)


def test_separately_installed_package_is_discovered_through_its_entry_point(tmp_path):
    """Installs examples/provbench-hello for real (pip, into a target dir) and lists it."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(EXAMPLE)],
        check=True,
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]),
               COLUMNS="200")
    listing = subprocess.run([sys.executable, "-m", "provbench.cli", "plugins"], env=env,
                             capture_output=True, text=True, check=True).stdout
    hello_rows = [line for line in listing.splitlines() if "nearest-entity" in line or "answer-length" in line]
    assert len(hello_rows) == 2, listing
    assert all("provbench-hello 0.1.0" in row for row in hello_rows), listing
    assert "builtin (provbench_plugins.papers.p000_neighborhoods)" in listing


def test_cli_help_does_not_import_the_heavy_stack():
    code = ("import sys; from click.testing import CliRunner; from provbench.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output; "
            "heavy = [m for m in ('torch', 'llama_index.core', 'kuzu', 'ragas', 'litellm', 'llama_cpp') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
