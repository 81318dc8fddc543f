"""Statistics: repeated systems (each repeat its own seed and cache entry, the spread shown), the
paired permutation test of continuous scores, Benjamini-Hochberg adjustment (Table 2, compare, the paired
scores section) and compare over N runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provbench.llm import LLMClient, ScriptedBackend
from provbench.report import write_comparison
from provbench.report.data import load_run
from provbench.report.significance import adjust_bh, paired_scores, repeat_spread
from runner_helpers import QUESTIONS, run_toy, toy_reply, write_toy_suite

REPEATED = """\
name: rep
dataset: {loader: toy-json, path: questions.json}
model: {id: scripted, params: {temperature: 0.8}}
systems:
  - {name: toy-graph, repeats: 3}
  - toy-plain
interventions: [toy-hide-cited]
metrics: [toy-length]
report: {bootstrap_resamples: 200}
"""


def write_repeated(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(QUESTIONS[:4]))
    (folder / "suite.yaml").write_text(REPEATED)
    return folder / "suite.yaml"


@pytest.fixture(scope="module")
def repeated_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("repeats")
    backend = ScriptedBackend(replies=[toy_reply] * 200)
    run_dir = run_toy(
        write_repeated(folder / "suite"), folder / "run", llm=LLMClient(backend, cache_dir=folder / "cache")
    )
    return run_dir, backend, folder


def test_each_repeat_runs_with_its_own_seed_in_the_request(repeated_run):
    run_dir, backend, _ = repeated_run
    run = load_run(run_dir)
    graph = [r for r in run.records if r.key.system == "toy-graph" and r.key.condition == "baseline"]
    assert sorted({r.key.repeat for r in graph}) == [0, 1, 2] and len(graph) == 12
    q1_seeds = [
        c["seed"]
        for c in backend.calls
        if "Glass Harbor?" in c["messages"][-1]["content"] and "visible: ent:orin-vale" in c["messages"][-1]["content"]
    ]
    baseline_seeds = {r.seed for r in graph if r.key.question_id == "q1"}
    assert len(baseline_seeds) == 3 and baseline_seeds <= set(q1_seeds)  # three repeats, three seeds, three calls
    assert len(q1_seeds) == len(set(q1_seeds)) == 4  # and the intervention unit's own seed
    plain = [c for c in backend.calls if c["seed"] is None]  # a system without repeats pins no seed
    assert len(plain) == 4
    # interventions run once per question, against the first repeat's baseline
    assert {r.key.repeat for r in run.records if r.key.condition != "baseline"} == {0}


def test_a_rerun_is_served_from_the_cache(repeated_run, tmp_path):
    _, _, folder = repeated_run
    backend = ScriptedBackend(replies=[])
    run_toy(write_repeated(folder / "suite"), tmp_path / "again", llm=LLMClient(backend, cache_dir=folder / "cache"))
    assert backend.calls == []  # every repeat's seed is in its cache key


def test_the_spread_of_repeats_is_shown(repeated_run):
    run_dir, _, _ = repeated_run
    run = load_run(run_dir)
    assert repeat_spread(run.select("toy-graph")) == "3 repeats: 100.0–100.0% (sd 0.0 pts)"
    assert repeat_spread(run.select("toy-plain")) == ""
    html = (run_dir / "report.html").read_text()
    assert "3 repeats: 100.0–100.0%" in html


def test_continuous_scores_take_the_cores_paired_permutation_test():
    from provbench.report.stats import paired_permutation

    a = {f"q{i}": v for i, v in enumerate([0.2, 0.5, 0.9, 0.4, 0.3, 0.8, 0.1])}
    b = {f"q{i}": v for i, v in enumerate([0.4, 0.7, 0.9, 0.9, 0.6, 0.85, 0.5])}
    test = paired_scores(a, b)
    assert test.p_value == paired_permutation(a, b, alternative="two-sided").p_value
    assert (test.n, test.changed, test.mean_a) == (7, 6, pytest.approx(sum(a.values()) / 7))
    # exact: three questions all one higher; of the 2^3 sign flips, all + and all - are as extreme
    assert paired_scores({"x": 0, "y": 0, "z": 0}, {"x": 1, "y": 1, "z": 1}).p_value == pytest.approx(0.25)
    assert paired_scores(a, dict(a)).p_value is None
    assert paired_scores({"x": 0.2}, {"x": 0.9}).describe() == "not enough questions (n=1; needs >= 6)"
    assert paired_scores(a, {}).describe() == "no paired questions"


def test_benjamini_hochberg_keeps_missing_tests():
    assert adjust_bh([0.01, None, 0.02, 0.5]) == pytest.approx([0.03, None, 0.03, 0.5])
    assert adjust_bh([None]) == [None]


def test_paired_scores_section_and_table2_state_the_correction(repeated_run):
    run_dir, _, _ = repeated_run
    html = (run_dir / "report.html").read_text()
    section = html[html.index('id="paired-scores"') :]
    assert "answer_length" in section[:4000] and "paired permutation test" in section[:4000]
    table2 = html[html.index('id="table2"') :]
    assert "Benjamini-Hochberg" in table2[:6000]


def test_compare_takes_n_runs(repeated_run, tmp_path):
    run_dir, _, _ = repeated_run
    others = [
        run_toy(write_toy_suite(tmp_path / f"s{i}", kb=False, questions=QUESTIONS[:4]), tmp_path / f"r{i}")
        for i in range(2)
    ]
    out = write_comparison([run_dir, *others], tmp_path / "cmp.html")
    text = out.read_text()
    assert "Comparison of 3 runs" in text and "C − A" in text and "Paired test C vs A" in text
    # 4 shared questions: too few for a two-sided paired test, said per row, and nothing to adjust
    assert "not enough questions (n=4; needs &gt;= 6)" in text and "No test, so no p-value to adjust" in text
    from click.testing import CliRunner

    from provbench.cli import main

    result = CliRunner().invoke(main, ["compare", str(run_dir), *map(str, others), "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0 and (tmp_path / "c.html").exists()
    assert CliRunner().invoke(main, ["compare", str(run_dir)]).exit_code == 2  # one run: nothing to compare
