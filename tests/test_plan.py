"""`provbench plan`: units, expected LLM calls, tokens and cost before anything runs (no request sent)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from provbench.cli import main

MODEL = "openai/gpt-4o-mini"  # priced in litellm's table; never called: the plan sends nothing


def plan(*args: str) -> str:
    result = CliRunner().invoke(main, ["plan", "quickstart", "--model", MODEL, "--limit", "2", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_plan_before_the_knowledge_base_is_built_counts_units_and_calls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = plan()
    rows = {line.split("\t")[0]: line.split("\t") for line in out.splitlines() if "\t" in line}
    assert rows["llm-only"][2:4] == ["2", "2"] and rows["agentic-graphrag"][2:4] == ["2", "8"]  # max_steps 4
    assert rows["graphrag x cited-removal"][2] == "2" and rows["judge"][3] == "32"  # ragas: 4 calls a baseline
    assert "total: 20 unit(s)" in out and "is not built yet" in out and "cost unknown" in out.replace("$", "")
    assert not (tmp_path / "reports" / "quickstart").exists()  # planning creates no run directory


def test_plan_on_the_quickstart_prices_measured_prompts(tmp_path, monkeypatch):
    from provbench.runner import build_suite_kb
    from provbench.bundled import resolve_suite
    from provbench.testing import schema_following_llm

    monkeypatch.chdir(tmp_path)
    build_suite_kb(resolve_suite("quickstart"), model=MODEL, limit=2, llm=schema_following_llm())
    out = plan("--concurrency", "4", "--latency", "0.5")
    rows = {line.split("\t")[0]: line.split("\t") for line in out.splitlines() if "\t" in line}
    for system in ("llm-only", "rag", "graphrag", "agentic-graphrag", "judge"):
        prompt, cost = rows[system][4], rows[system][7]
        assert prompt != "?" and int(prompt.replace(",", "")) > 10, rows[system]
        assert cost.startswith("$") and float(cost[1:]) > 0, rows[system]
    assert "prompt sizes from" in rows["rag"][8]
    assert "estimated cost $" in out and "at concurrency 4 and 0.5 s a call" in out
    data = json.loads(
        CliRunner().invoke(main, ["plan", "quickstart", "--model", MODEL, "--limit", "2", "--json"]).output
    )
    assert data["units"] == 20 and data["cost_usd"] > 0 and data["unpriced_rows"] == 0
    assert data["recorded_units"] == 0 and "built: reused as is" in data["knowledge_base"]


def test_plan_counts_a_repeated_systems_units(tmp_path, monkeypatch):
    from pathlib import Path

    source = Path(__file__).resolve().parents[1] / "suites" / "quickstart.yaml"
    text = source.read_text().replace("../datasets/", f"{source.parent.parent}/datasets/")
    text = text.replace("  params: {}", "  params: {temperature: 0.7}").replace(
        "  - llm-only\n", "  - {name: llm-only, repeats: 3}\n"
    )
    (tmp_path / "suite.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["plan", str(tmp_path / "suite.yaml"), "--model", MODEL, "--limit", "2"])
    assert result.exit_code == 0, result.output
    rows = {line.split("\t")[0]: line.split("\t") for line in result.output.splitlines() if "\t" in line}
    assert rows["llm-only"][2:4] == ["6", "6"]  # 3 repeats x 2 questions, one call each


def test_an_unbuilt_knowledge_base_is_named_as_the_cause_and_its_build_lands_where_the_run_looks(tmp_path, monkeypatch):
    """Issue 37 item 4: a priced model's plan before the KB exists blames the KB, not the price;
    its hint builds the KB where `plan --out X` (and `run --out X`) look."""
    from provbench.bundled import resolve_suite
    from provbench.runner import build_suite_kb
    from provbench.testing import schema_following_llm

    monkeypatch.chdir(tmp_path)
    out_dir = tmp_path / "elsewhere" / "qs"
    before = plan("--out", str(out_dir))
    assert "estimated cost unknown: the knowledge base is not built yet" in before and "no price" not in before
    hint = f"provbench kb build {resolve_suite('quickstart')} --model {MODEL} --limit 2 --out {out_dir}"
    assert hint in before and f"{tmp_path / 'elsewhere' / '.kb-cache'}" in before
    kb_row = next(line.split("\t") for line in before.splitlines() if line.startswith("knowledge base build\t"))
    assert kb_row[3] == "16" and kb_row[7] == "unknown"  # 8 extractions + 8 summaries at most (quickstart's caps)
    kb_dir, _, _ = build_suite_kb(
        resolve_suite("quickstart"), model=MODEL, limit=2, llm=schema_following_llm(), out=out_dir
    )  # what the hint runs (offline here)
    assert kb_dir.parent == tmp_path / "elsewhere" / ".kb-cache"
    after = plan("--out", str(out_dir))
    assert "built: reused as is" in after and "is not built yet" not in after and "estimated cost $" in after
    assert not (tmp_path / "reports").exists()  # nothing went to the default place


def test_an_unpriced_model_is_named_as_the_cause(tmp_path, monkeypatch):
    from provbench.plan import Plan, Row
    from provbench.plan_output import plan_summary

    rows = [Row("rag", 2, 2, 100, 10, model="openai/unpriced", cost_usd=None)]
    summary = plan_summary(Plan("s", 2, rows, 0, 0, 0, "none", None, 1, 1.0), 0)
    assert "estimated cost unknown: no price for openai/unpriced" in summary[0]


def test_following_the_printed_kb_build_hint_literally_builds_the_kb_plan_looks_for(tmp_path, monkeypatch):
    """The hint carries every option that moves the KB (the model and the limit are in its
    fingerprint, --out in its folder): run as printed, `plan` then finds it built, its costs local as `run` shows them."""
    import re
    import shlex

    from provbench.bundled import resolve_suite
    from provbench.cli import kb_build_cmd
    from provbench.registry import default_registry
    from provbench.runner import default_run_dir, prepare_suite, suite_kb_dir

    monkeypatch.chdir(tmp_path)
    args = ["plan", "quickstart", "--model", "schema-following", "--limit", "2", "--out", str(tmp_path / "x" / "qs")]
    before = CliRunner().invoke(main, args).output
    assert "is not built yet" in before, before
    hint = shlex.split(re.search(r"`(provbench kb build [^`]*)`", before).group(1))
    given = kb_build_cmd.make_context("build", hint[3:]).params  # where the hint's build goes, before running it
    loaded = prepare_suite(resolve_suite(given["source"]), default_registry(), given["model"], given["limit"])
    looked_at = prepare_suite(resolve_suite("quickstart"), default_registry(), "schema-following", 2)
    assert suite_kb_dir(loaded, given["out"] or default_run_dir(loaded)) == suite_kb_dir(
        looked_at, tmp_path / "x" / "qs"
    )
    built = CliRunner().invoke(main, hint[1:])
    assert built.exit_code == 0, built.output
    after = CliRunner().invoke(main, args).output
    assert "built: reused as is" in after and "is not built yet" not in after, after
    rows = {line.split("\t")[0]: line.split("\t") for line in after.splitlines() if "\t" in line}
    assert rows["rag"][7] == "0 (local)" and "estimated cost 0 (local)" in after  # as `run` shows it


def test_the_kb_build_hint_repeats_the_command_lines_plugin_files(tmp_path):
    """A --plugin file may hold the suite's builder or loader: `kb build` needs it too."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "mine.py").write_text("")  # a plugin file registering nothing
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(repo / p) for p in ("framework", "plugins", "tools"))}
    args = ["plan", "quickstart", "--plugin", "mine.py", "--model", "schema-following", "--limit", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "provbench.cli", *args], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "kb build " in done.stdout and " --plugin mine.py --model schema-following --limit 2`" in done.stdout


def test_a_run_directory_of_another_model_counts_none_of_its_records(tmp_path, monkeypatch):
    """`run` refuses a directory that holds another model's run: `plan` says so and counts none of its records."""
    from provbench.runner import run_suite
    from provbench.bundled import resolve_suite

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "reports" / "quickstart"
    run_suite(resolve_suite("quickstart"), model="schema-following", limit=2, out=out, write_report=False)
    again = CliRunner().invoke(main, ["plan", "quickstart", "--model", "schema-following", "--limit", "2", "--json"])
    assert json.loads(again.output)["recorded_units"] == 20  # the same model: its records are reused
    other = CliRunner().invoke(main, ["plan", "quickstart", "--model", MODEL, "--limit", "2", "--json"])
    data = json.loads(other.output)
    assert data["recorded_units"] == 0
    assert any("holds a run with model 'schema-following'" in note for note in data["notes"])


NO_LLM_SYSTEM = """
from provbench import hookimpl
from provbench.model import Trace
from provbench.plugin_api import System


class FirstUnit(System):
    expected_llm_calls = 0  # reads the view only

    def run(self, question, env):
        return Trace(question_id=question.id, system=self.name, answer="-")


@hookimpl
def provbench_register_systems():
    return {"first-unit": FirstUnit}
"""


def test_own_documents_plan_counts_the_extractions_against_the_budget(tmp_path, monkeypatch):
    """A new user's plan gave 0 calls for their documents' KB build (69 in fact) and 13 for a
    system without LLM: each text unit is one extraction, a system declaring 0 calls is planned at 0,
    and the budget note counts the build."""
    from provbench_plugins.kb_builders.documents.corpus import chunk_corpus
    from provbench_plugins.kb_builders.documents.readers import read_documents
    from provbench_tools.own_docs import write as write_own_docs
    from provbench import registry

    # the suite's plugin file joins the process's plugins: a fresh manager keeps it out of later tests'
    # (a Ray worker of another test could not import its module)
    own = registry.make_plugin_manager()
    monkeypatch.setattr(registry, "default_plugin_manager", lambda: own)
    monkeypatch.chdir(tmp_path)
    write_own_docs(tmp_path / "data")
    (tmp_path / "first_unit.py").write_text(NO_LLM_SYSTEM, encoding="utf-8")
    ran = CliRunner().invoke(main, ["init", "--docs", "data/docs", "--questions", "data/questions.csv"])
    assert ran.exit_code == 0, ran.output
    suite = (tmp_path / "suite.yaml").read_text(encoding="utf-8")
    suite = suite.replace("systems:\n", "budget: {max_calls: 20}\nsystems:\n  - first-unit\n", 1)
    (tmp_path / "suite.yaml").write_text("plugins: [./first_unit.py]\n" + suite, encoding="utf-8")
    result = CliRunner().invoke(main, ["plan", "suite.yaml", "--model", MODEL, "--limit", "2"])
    assert result.exit_code == 0, result.output
    rows = {line.split("\t")[0]: line.split("\t") for line in result.output.splitlines() if "\t" in line}
    corpus, _ = chunk_corpus(read_documents(tmp_path / "data" / "docs"), 256, 0)
    summaries = 40  # the documents builder's default cap
    assert float(rows["knowledge base build"][3].replace(",", "")) == len(corpus.text_units) + summaries
    assert rows["first-unit"][3] == "0" and "expected_llm_calls" not in rows["first-unit"][8]
    assert "does not declare expected_llm_calls" in rows["llm-only"][8]
    assert f"({len(corpus.text_units) + summaries} of them the knowledge base build) pass" in result.output
    assert "budget max_calls: 20" in result.output
