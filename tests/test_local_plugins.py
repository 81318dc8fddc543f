"""A user's own plugin without packaging (issue 37 item 10): a one-file system named by the suite's
``plugins:`` or by ``--plugin``, run through the real CLI, recorded in the manifest with its
file's digest; bad files and names are refused with file, line and field."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from provbench.errors import PluginError, UserError
from provbench.local_plugins import plugin_setup
from provbench.registry import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "2wiki-mini" / "dev.json"

MY_SYSTEM = '''\
from provbench import hookimpl
from provbench.model import Trace
from provbench.plugin_api import System


class EchoSystem(System):
    """Answers with the question's first word (no graph, one LLM call)."""

    expected_llm_calls = 1

    def run(self, question, env):
        trace = Trace(question_id=question.id, system="echo")
        env.llm.chat([{"role": "user", "content": question.question}], purpose="echo", trace=trace)
        trace.answer = question.question.split()[0]
        return trace


@hookimpl
def provbench_register_systems():
    return {"echo": EchoSystem}
'''

SUITE = """\
name: mine
{plugins}dataset:
  loader: 2wiki
  path: {dataset}
  limit: 2
model:
  id: schema-following
systems:
  - {system}
"""


def write_suite(folder: Path, plugins: str = "plugins: [./my_system.py]\n", system: str = "my_system/echo") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "my_system.py").write_text(MY_SYSTEM)
    suite = folder / "suite.yaml"
    suite.write_text(SUITE.format(plugins=plugins, dataset=DATASET, system=system))
    return suite


def provbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(REPO / p) for p in ("framework", "plugins", "tools"))}
    return subprocess.run(
        [sys.executable, "-m", "provbench.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_suite_runs_its_own_plugin_file_and_records_its_digest(tmp_path):
    suite = write_suite(tmp_path / "project")
    done = provbench("run", str(suite), "--out", str(tmp_path / "runs" / "mine"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "runs" / "mine" / "manifest.json").read_text())
    digest = hashlib.sha256((suite.parent / "my_system.py").read_bytes()).hexdigest()
    source = next(s for s in manifest["plugins"].values() if "my_system.py" in s)
    assert digest in source and str(suite.parent / "my_system.py") in source
    assert manifest["plugin_versions"]["system:my_system/echo"] == f"sha256:{digest[:12]}"
    records = (tmp_path / "runs" / "mine" / "records.jsonl").read_text().splitlines()
    assert len(records) == 2 and all(json.loads(r)["key"]["system"] == "echo" for r in records)


def test_the_command_line_names_a_plugin_file(tmp_path):
    write_suite(tmp_path)
    listed = provbench("plugins", "--plugin", "my_system.py", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [r for r in json.loads(listed.stdout) if r["name"] == "my_system/echo"]
    assert rows and rows[0]["kind"] == "system" and rows[0]["source"].startswith(f"local {tmp_path / 'my_system.py'}")
    missing = provbench("plugins", "--plugin", "nowhere.py", cwd=tmp_path)
    assert missing.returncode == 2 and "no plugin file" in missing.stderr and "nowhere.py" in missing.stderr


def test_a_module_name_from_the_suite_folder_and_its_namespace(tmp_path):
    suite = write_suite(tmp_path, plugins="plugins: [my_system]\n")
    pm, registry = plugin_setup(suite, make_plugin_manager(load_entry_points=False))
    assert registry.get("system", "my_system/echo").version.startswith("sha256:")
    other = write_suite(tmp_path / "b", plugins="plugins: [./my_system.py]\n")
    (other.parent / "my_system.py").write_text(MY_SYSTEM + 'PROVBENCH_NAMESPACE = "mine"\n')
    _, registry = plugin_setup(other, make_plugin_manager(load_entry_points=False))
    assert registry.get("system", "mine/echo")


@pytest.mark.parametrize(
    "plugins, expected",
    [
        ("plugins: [./missing.py]\n", "line 2, field 'plugins[0]': no plugin file"),
        (
            "plugins: [./my_system.py, not_a_module_anywhere]\n",
            "line 2, field 'plugins[1]': no module 'not_a_module_anywhere'",
        ),
        ("plugins: ./my_system.py\n", "line 2, field 'plugins': a list of plugin files"),
    ],
)
def test_a_bad_plugin_entry_is_located(tmp_path, plugins, expected):
    suite = write_suite(tmp_path, plugins=plugins)
    with pytest.raises(UserError, match="suite.yaml") as caught:
        plugin_setup(suite, make_plugin_manager(load_entry_points=False))
    assert expected in str(caught.value)


def test_an_error_in_the_plugin_file_names_its_line(tmp_path):
    suite = write_suite(tmp_path)
    (tmp_path / "my_system.py").write_text(MY_SYSTEM + "\nraise RuntimeError('not configured')\n")
    with pytest.raises(UserError) as caught:
        plugin_setup(suite, make_plugin_manager(load_entry_points=False))
    line = MY_SYSTEM.count("\n") + 2
    assert f"my_system.py, line {line}: RuntimeError: not configured" in str(caught.value)
    assert "field 'plugins[0]'" in str(caught.value)
    (tmp_path / "my_system.py").write_text("def broken(:\n")
    with pytest.raises(UserError, match=r"my_system.py, line 1: invalid syntax|my_system.py, line 1: "):
        plugin_setup(suite, make_plugin_manager(load_entry_points=False))


def test_a_plugin_file_registering_a_non_system_is_refused_as_an_entry_point_is(tmp_path):
    suite = write_suite(tmp_path)
    (tmp_path / "my_system.py").write_text(MY_SYSTEM.replace('{"echo": EchoSystem}', '{"echo": dict}'))
    with pytest.raises(PluginError, match=r"local .*my_system.py .* is not a subclass of provbench.plugin_api.System"):
        plugin_setup(suite, make_plugin_manager(load_entry_points=False))


def test_an_error_in_a_registration_hook_is_one_located_line(tmp_path):
    """A NameError inside provbench_register_systems: file, line, hook and error, no traceback."""
    write_suite(tmp_path)
    broken = MY_SYSTEM.replace('return {"echo": EchoSystem}', 'return {"echo": EchoSytem}')
    (tmp_path / "my_system.py").write_text(broken)
    listed = provbench("plugins", "--plugin", "my_system.py", cwd=tmp_path)
    line = broken.splitlines().index('    return {"echo": EchoSytem}') + 1
    assert listed.returncode == 2 and "Traceback" not in listed.stderr, listed.stderr
    assert f"provbench_register_systems() raised {tmp_path / 'my_system.py'}, line {line}: NameError" in listed.stderr
    assert len(listed.stderr.strip().splitlines()) <= 2, listed.stderr


def test_an_entry_points_failing_registration_hook_is_located_too(tmp_path):
    """An installed plugin goes through the same registry: its hook's error names its module's file."""
    import importlib.util

    from provbench.registry import build_registry

    (tmp_path / "installed_plugin.py").write_text(MY_SYSTEM.replace("EchoSystem}", "undefined_name}"))
    spec = importlib.util.spec_from_file_location("installed_plugin", tmp_path / "installed_plugin.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pm = make_plugin_manager(load_entry_points=False)
    pm.register(module, name="installed-plugin")
    with pytest.raises(PluginError, match=r"installed_plugin.py, line \d+: NameError: name 'undefined_name'"):
        build_registry(pm)


def test_a_hook_defined_twice_in_a_plugin_file_is_warned_of(tmp_path, caplog):
    """Python keeps a file's last definition of a name, so the first hook registers nothing: say so."""
    suite = write_suite(tmp_path)
    second = MY_SYSTEM.split("@hookimpl")[1].replace('"echo"', '"echo-2"')
    (tmp_path / "my_system.py").write_text(MY_SYSTEM + "\n@hookimpl" + second)
    with caplog.at_level("WARNING", logger="provbench.local_plugins"):
        _, registry = plugin_setup(suite, make_plugin_manager(load_entry_points=False))
    assert "my_system/echo" not in registry.names("system")  # the shadowing itself
    assert "provbench_register_systems is defined 2 times" in caplog.text and "only the last counts" in caplog.text
