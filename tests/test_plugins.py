"""The plugin system: built-ins through the same hooks, entry-point discovery, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from provbench import hookimpl
from provbench.errors import UserError
from provbench.model import Trace
from provbench.plugin_api import Metric, System
from provbench.registry import BUILTIN_PLUGINS, PluginError, build_registry, make_plugin_manager, provbench_version
from provbench_plugins.papers.p000_neighborhoods.systems import RAG

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "provbench-hello"


def test_builtin_plugins_register_the_paper_000_parts():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    assert {
        "p000/llm-only",
        "p000/rag",
        "p000/graphrag",
        "p000/agentic-graphrag",
        "p000/agentic-visited-only",
        "p000/agentic-evidence-first",
    } <= set(registry.names("system"))
    assert {
        "p000/full-isolation",
        "p000/text-only-isolation",
        "p000/cited-removal",
        "p000/random-removal",
        "p000/entity-removal",
        "p000/entity-text-mask",
    } <= set(registry.names("intervention"))
    assert "2wiki" in registry.names("dataset_loader")
    assert "2wiki-paper000" in registry.names("kb_builder")
    assert {"embedded", "llama-cpp", "scripted", "litellm"} <= set(registry.names("llm_backend"))
    sources = {reg.source for reg in registry.all()}
    assert sources <= {f"builtin ({m})" for m in BUILTIN_PLUGINS}
    assert {reg.version for reg in registry.all()} == {provbench_version()}
    assert registry.get("system", "graphrag") is registry.get("system", "p000/graphrag")


def test_duplicate_name_names_both_sources():
    pm = make_plugin_manager(load_entry_points=False)
    intruder = types.ModuleType("intruder_plugin")

    @hookimpl
    def provbench_register_systems():
        return {"rag": RAG}

    intruder.provbench_register_systems = provbench_register_systems
    intruder.PROVBENCH_NAMESPACE = "p000"
    pm.register(intruder, name="intruder_plugin")
    with pytest.raises(PluginError) as err:
        build_registry(pm)
    message = str(err.value)
    assert "duplicate system name 'p000/rag'" in message
    assert "builtin (provbench_plugins.papers.p000_neighborhoods)" in message and "intruder_plugin" in message


def test_unknown_name_suggests_the_nearest():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    with pytest.raises(PluginError, match=r"unknown system 'agentic-grahprag'; did you mean 'p000/agentic-graphrag'\?"):
        registry.get("system", "agentic-grahprag")


def test_bad_options_name_the_plugin():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    with pytest.raises(
        PluginError,
        match="system 'p000/llm-only': bad options: no_such_option=1: Extra inputs"
        ".*known options: max_tokens, temperature",
    ):
        registry.create("system", "llm-only", no_such_option=1)


def _plugin_module(name: str, namespace: str | None = None, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    if namespace is not None:
        module.PROVBENCH_NAMESPACE = namespace
    for hook_name, registered in hooks.items():

        def hook(registered=registered):
            return registered

        hook.__name__ = hook_name
        setattr(module, hook_name, hookimpl(hook))
    return module


def _registry_with(*modules: types.ModuleType):
    pm = make_plugin_manager(load_entry_points=False)
    for module in modules:
        pm.register(module, name=module.__name__)
    return build_registry(pm)


class Echo(System):
    """Answers with the question text."""

    def run(self, question, env):
        return Trace(question_id=question.id, system=self.name, answer=question.question)


def test_a_second_package_with_the_same_short_name_makes_it_ambiguous():
    registry = _registry_with(
        _plugin_module("paper_a", "pa", provbench_register_systems={"echo": Echo}),
        _plugin_module("paper_b", "pb", provbench_register_systems={"echo": Echo}),
    )
    assert registry.get("system", "pa/echo").name == "pa/echo"
    assert registry.get("system", "p000/rag").factory is RAG
    with pytest.raises(PluginError, match=r"system name 'echo' is ambiguous: pa/echo, pb/echo \(use the full name\)"):
        registry.get("system", "echo")
    assert registry.get("system", "llm-only").name == "p000/llm-only"  # still unambiguous


def test_a_factory_of_the_wrong_kind_is_refused_at_registration():
    bad = _plugin_module("wrong_kind", "wk", provbench_register_systems={"scorer": Metric})
    with pytest.raises(
        PluginError,
        match=r"system 'wk/scorer' \(from wrong_kind\): "
        r"provbench.plugin_api.Metric is not a subclass of provbench.plugin_api.System",
    ):
        _registry_with(bad)
    not_callable = _plugin_module("not_callable", provbench_register_metrics={"x": 42})
    with pytest.raises(PluginError, match="metric 'x' .*not a class or callable"):
        _registry_with(not_callable)
    slashed = _plugin_module("slashed", provbench_register_systems={"a/b": Echo})
    with pytest.raises(PluginError, match="set PROVBENCH_NAMESPACE"):
        _registry_with(slashed)


def test_a_factory_function_returning_the_wrong_type_is_refused_at_creation():
    registry = _registry_with(
        _plugin_module(
            "fn_plugin", "fn", provbench_register_systems={"good": lambda: Echo(), "bad": lambda: "not a system"}
        )
    )
    assert isinstance(registry.create("system", "fn/good"), Echo)
    with pytest.raises(
        PluginError,
        match=r"system 'fn/bad' \(from fn_plugin\): its factory returned str, "
        r"not a provbench.plugin_api.System",
    ):
        registry.create("system", "bad")


def test_options_of_a_plain_factory_are_checked_against_its_signature():
    def make(k: int, label: str = "x"):
        return Echo()

    registry = _registry_with(_plugin_module("sig_plugin", "sig", provbench_register_systems={"echo": make}))
    with pytest.raises(
        PluginError,
        match=r"system 'sig/echo': bad options: unknown option 'kk'; "
        r"missing option 'k' \(known options: k, label\)",
    ):
        registry.create("system", "echo", kk=1)
    with pytest.raises(PluginError, match=r"known options: none"):
        registry.create("intervention", "p000/entity-text-mask", repeats=2)


def test_an_llm_backend_plugin_serves_its_prefix():
    from provbench.llm import LLMClient
    from provbench.llm.backends import LiteLLMBackend, ScriptedBackend, make_backend

    calls = []

    def echo_backend(model_id, **params):
        calls.append(model_id)
        return ScriptedBackend(["pong"], model_id=model_id)

    registry = _registry_with(_plugin_module("echo_llm", provbench_register_llm_backends={"echo": echo_backend}))
    llm = LLMClient(make_backend("echo:v1", registry=registry))
    assert llm.chat([{"role": "user", "content": "ping"}]).text == "pong" and calls == ["echo:v1"]
    assert isinstance(make_backend("echo-unclaimed/x", registry=registry, mock_response="hi"), LiteLLMBackend)


def test_a_namespaced_llm_backend_answers_to_its_full_and_its_short_name():
    from provbench.llm.backends import LiteLLMBackend, ScriptedBackend, make_backend

    def shout(model_id, **params):
        return ScriptedBackend(["!"], model_id=model_id)

    one = _registry_with(_plugin_module("shout_a", "pa", provbench_register_llm_backends={"shout": shout}))
    for model_id in ("pa/shout:v1", "shout:v1", "shout"):  # the short name too, as docs/plugins.md says
        backend = make_backend(model_id, registry=one)
        assert isinstance(backend, ScriptedBackend) and backend.model_id == model_id
    assert isinstance(make_backend("openai/shout", registry=one, mock_response="x"), LiteLLMBackend)
    two = _registry_with(
        _plugin_module("shout_a", "pa", provbench_register_llm_backends={"shout": shout}),
        _plugin_module("shout_b", "pb", provbench_register_llm_backends={"shout": shout}),
    )
    with pytest.raises(UserError, match=r"LLM backend 'shout' is ambiguous: pa/shout, pb/shout \(use the full name\)"):
        make_backend("shout:v1", registry=two)
    assert isinstance(make_backend("pb/shout:v1", registry=two), ScriptedBackend)


def test_the_schema_following_test_llm_is_a_model_id():
    from provbench.llm import make_llm

    llm = make_llm("schema-following")
    reply = llm.chat(
        [{"role": "user", "content": "Who directed Glass Harbor?"}],
        schema={"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
    )
    assert llm.model_id == "schema-following" and isinstance(reply.data["answer"], str)


def test_an_llm_backend_of_the_wrong_type_is_refused():
    from provbench.llm.backends import make_backend

    registry = _registry_with(_plugin_module("bad_llm", provbench_register_llm_backends={"nope": lambda m, **p: 3}))
    with pytest.raises(
        PluginError,
        match=r"llm_backend 'nope' \(from bad_llm\): its factory returned int, "
        r"not an LLM backend",
    ):
        make_backend("nope:x", registry=registry)
    with pytest.raises(UserError, match="needs a model name"):
        make_backend("llama-cpp:")


def test_separately_installed_package_is_discovered_through_its_entry_point(tmp_path):
    """Installs examples/provbench-hello for real (pip, into a target dir) and lists it."""
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        check=True,
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]), COLUMNS="200")
    listing = subprocess.run(
        [sys.executable, "-m", "provbench.cli", "plugins"], env=env, capture_output=True, text=True, check=True
    ).stdout
    hello_rows = [line for line in listing.splitlines() if "nearest-entity" in line or "answer-length" in line]
    assert len(hello_rows) == 2, listing
    assert all("provbench-hello 0.1.0" in row and "hello/" in row for row in hello_rows), listing
    assert "p000/agentic-graphrag" in listing and "builtin (provbench_plugins.papers.p000_neighborhoods)" in listing

    # and it runs: a suite names it (short name) beside a built-in, through the CLI
    mini = REPO / "datasets" / "2wiki-mini" / "dev.json"
    (tmp_path / "suite.yaml").write_text(HELLO_SUITE.format(dataset=mini))
    subprocess.run(
        [sys.executable, "-m", "provbench.cli", "run", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "run")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert {r["key"]["system"] for r in records} == {"nearest-entity"} and len(records) == 2
    assert all(r["status"] == "ok" and r["trace"]["answer"] and r["trace"]["citations"]["entities"] for r in records)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert [v["metric"] for v in metrics["values"]] == ["answer-length"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["plugin_versions"]["system:hello/nearest-entity"] == "0.1.0"


HELLO_SUITE = """\
name: hello
dataset: {{loader: 2wiki, path: "{dataset}", limit: 2}}
knowledge_base: {{builder: 2wiki-paper000, options: {{extract: false, summarize: false}}, directory: kb}}
model: {{id: scripted}}
systems: [{{name: nearest-entity, options: {{k: 2}}}}]
metrics: [answer-length]
report: {{bootstrap_resamples: 100}}
"""


DRY_RUN_SUITE = """\
name: dry
dataset: {{loader: 2wiki, path: "{dataset}", limit: 2}}
knowledge_base: {{builder: 2wiki-paper000, directory: kb}}
model: {{id: embedded}}
systems: [llm-only, graphrag, {{name: agentic-graphrag, options: {{max_steps: 4}}}}]
intervention_systems: [graphrag, agentic-graphrag]
interventions: [cited-removal]
metrics: [accuracy, output-changed]
report: {{bootstrap_resamples: 100}}
"""


def test_a_dry_run_through_the_cli_with_the_schema_following_model(tmp_path):
    """``--model schema-following`` runs a suite end to end with no model (KB build included)."""
    (tmp_path / "suite.yaml").write_text(DRY_RUN_SUITE.format(dataset=REPO / "datasets" / "2wiki-mini" / "dev.json"))
    done = subprocess.run(
        [sys.executable, "-m", "provbench.cli", "run", "suite.yaml", "--model", "schema-following", "--out", "run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # every unit checked, none leaked. The schema-following model cites words of its prompt ("Rules", a word
    # of the agent's instructions): cited removal then hides ids no knowledge-base item has, so two units
    # hid nothing (no-op; one baseline cited only a relationship, which cited removal keeps)
    assert "leak guard: 4 intervention unit(s) checked: 2 clean, 0 leaked, 2 no-op" in done.stdout, done.stdout
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["models"]["suite_model"] == "schema-following"
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 10 and all(r["status"] == "ok" for r in records)
    assert (tmp_path / "run" / "report.html").is_file()


def test_cli_help_does_not_import_the_heavy_stack():
    code = (
        "import sys; from click.testing import CliRunner; from provbench.cli import main; "
        "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output; "
        "heavy = [m for m in ('torch', 'llama_index.core', 'kuzu', 'ragas', 'litellm', 'llama_cpp') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plugins_command_lists_every_builtin_with_namespace_version_and_source():
    from click.testing import CliRunner

    from provbench.cli import main
    from provbench.registry import default_registry

    listing = CliRunner().invoke(main, ["plugins"]).output  # not a terminal: one tab-separated line a plugin
    rows = {line.split("\t")[1]: line for line in listing.splitlines()[2:]}
    for reg in default_registry().all():
        if reg.source.startswith("builtin"):
            assert reg.name in rows and reg.version in rows[reg.name] and reg.source in rows[reg.name], reg.name
    assert "p000/llm-only" in rows and "p000/cited-removal" in rows and "llama-cpp" in rows
    assert "report_sections" in rows["p000"] and "Why Neighborhoods Matter" in rows["p000"]


def test_dataset_loader_options_belong_to_load():
    registry = build_registry(make_plugin_manager(load_entry_points=False))
    with pytest.raises(PluginError, match=r"dataset_loader '2wiki': options go to load\(\).*: select"):
        registry.create("dataset_loader", "2wiki", select=True)
    assert registry.check_options("dataset_loader", "2wiki", {"select": True}).select is True
