"""Evaluate GraphRAG on your own documents, end to end as docs/own-data.md walks through it: a folder
of Markdown, HTML, PDF and text files and a CSV of questions with supporting documents, then
``provbench init``, ``kb build``, ``run --model schema-following`` and ``validate``, with no code
(issue 31 items 2, 4 and 8). The embedding model is real; the LLM is the offline schema-following one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import invoke_ok as invoke
from provbench.cli import main
from provbench_tools.own_docs import write as write_own_docs


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("own-project")
    write_own_docs(root / "data")
    return root


def test_init_kb_build_run_and_validate(project, monkeypatch):
    monkeypatch.chdir(project)
    said = invoke("init", "--docs", "data/docs", "--questions", "data/questions.csv", "--out", "suite.yaml")
    assert "10 question(s), 10 with gold evidence" in said
    suite = (project / "suite.yaml").read_text(encoding="utf-8")
    assert "loader: qa" in suite and "builder: documents" in suite and "controls:" in suite and "# " in suite

    built = invoke("kb", "build", "suite.yaml", "--model", "schema-following")
    assert "knowledge base built" in built and "degenerate" not in built
    kb_dir = Path(built.split("knowledge base built: ")[1].split()[0])
    info = json.loads(invoke("kb", "info", str(kb_dir), "--json"))
    stats = info["stats"]
    assert stats["documents"] == 10 and stats["text_units"] >= 10
    assert stats["entities"] > 0 and stats["relations"] > 0 and info["degenerate"] == []
    assert info["build_info"]["files"] == {"html": 3, "md": 4, "pdf": 2, "txt": 1}
    sources = json.loads((kb_dir / "sources.json").read_text(encoding="utf-8"))["text_units"]
    assert len(sources) == stats["text_units"] and all(Path(s["path"]).is_file() for s in sources.values())

    ran = invoke("run", "suite.yaml", "--model", "schema-following", "--limit", "2")
    assert "gold evidence: 2 of 2 question(s) map wholly onto the knowledge base" in ran
    run_dir = project / "reports" / "suite"
    page = next((run_dir / "pages").glob("q01-*.html")).read_text(encoding="utf-8")
    assert f'href="{(project / "data" / "docs").as_uri()}/' in page  # read text units link to the user's files
    report = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="kb kb-counts' in report and 'class="kb kb-degenerate' not in report

    validated = invoke("validate", "suite.yaml")
    assert "FAIL" not in validated and "p000/exclusion-reference" in validated
    certified = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["certification"]
    for system in ("graphrag", "agentic-graphrag"):  # init's claims cover the systems it wrote
        assert {f"{system} x cited-removal", f"{system} x random-removal"} <= set(certified["certified_cells"])
    assert "warning:" not in validated


def test_every_question_of_the_corpus_maps_its_gold(project, monkeypatch):
    from provbench.kb import KnowledgeBase
    from provbench.kb.goldmap import gold_mapping_report
    from provbench_plugins.datasets.qa.loader import QALoader

    monkeypatch.chdir(project)
    kb_dir = next(d for d in (project / "reports" / ".kb-cache").glob("documents-*") if (d / "graph.kuzu").exists())
    questions = QALoader().load(project / "data" / "questions.csv", documents="docs")
    with KnowledgeBase.open(kb_dir, read_only=True) as kb:
        with_gold, unmapped = gold_mapping_report(kb.view(), questions)
    assert (with_gold, unmapped) == (10, {})


def test_init_refuses_what_would_not_run(project, tmp_path):
    runner = CliRunner()
    args = ["init", "--docs", str(project / "data" / "docs"), "--questions", str(project / "data" / "questions.csv")]
    result = runner.invoke(main, [*args, "--out", str(tmp_path / "s.yaml"), "--system", "llamaindex"])
    assert result.exit_code == 2 and "--system llamaindex" in result.output and "by hand" in result.output
    result = runner.invoke(main, [*args, "--out", str(tmp_path / "s.yaml"), "--system", "graphrg"])
    assert result.exit_code == 2 and "did you mean" in result.output
    (tmp_path / "s.yaml").write_text("mine", encoding="utf-8")
    result = runner.invoke(main, [*args, "--out", str(tmp_path / "s.yaml")])
    assert result.exit_code == 2 and "exists" in result.output and (tmp_path / "s.yaml").read_text() == "mine"
    bad = tmp_path / "bad.csv"
    bad.write_text("question,answer\nQ?,\n", encoding="utf-8")
    result = runner.invoke(
        main,
        ["init", "--docs", str(project / "data" / "docs"), "--questions", str(bad), "--out", str(tmp_path / "t.yaml")],
    )
    assert result.exit_code == 2 and f"{bad}:2: field 'answer': is empty" in " ".join(result.output.split())
    assert not (tmp_path / "t.yaml").exists()


def test_init_prints_a_suite_path_holding_console_markup_as_written(project, tmp_path):
    out = tmp_path / "a[" / "x]" / "suite [bold].yaml"  # its path reads ".../a[/x]/...": a closing tag
    out.parent.mkdir(parents=True)
    said = invoke(
        "init",
        "--docs",
        str(project / "data" / "docs"),
        "--questions",
        str(project / "data" / "questions.csv"),
        "--out",
        str(out),
    )
    assert f"suite: {out}" in " ".join(said.split()) and out.exists()


def test_kb_build_of_a_documents_folder_needs_no_question_file(project, tmp_path):
    """``provbench kb build DIR --builder documents``: the folder is the builder's source (issue 31)."""
    built = invoke(
        "kb",
        "build",
        str(project / "data" / "docs"),
        "--builder",
        "documents",
        "--model",
        "schema-following",
        "--out",
        str(tmp_path / "kb"),
    )
    assert f"knowledge base built: {tmp_path / 'kb'}" in built and "degenerate" not in built
    info = json.loads(invoke("kb", "info", str(tmp_path / "kb"), "--json"))
    assert info["stats"]["documents"] == 10 and info["stats"]["entities"] > 0
    assert info["build_info"]["counts"]["questions"] == 0
    assert info["build_info"]["inputs"]["source"] == str(project / "data" / "docs")
    refused = CliRunner().invoke(
        main,
        ["kb", "build", str(project / "data" / "docs"), "--builder", "2wiki-paper000", "--out", str(tmp_path / "kb2")],
    )
    assert refused.exit_code == 2 and "no loader recognises" in refused.output  # a builder that reads no folder


def test_kb_builds_executor_options_name_the_executor_spec():
    from provbench.cli import _executor_spec
    from provbench.errors import UserError
    from provbench.suite import ExecutorSpec

    assert _executor_spec(None, None) is None  # the suite's own
    assert _executor_spec("threads", None) == ExecutorSpec()
    assert _executor_spec("ray", None) == ExecutorSpec(kind="ray")
    assert _executor_spec(None, "auto") == ExecutorSpec(kind="ray", address="auto")  # an address implies Ray
    with pytest.raises(UserError, match="--ray-address goes with --executor ray"):
        _executor_spec("threads", "auto")
