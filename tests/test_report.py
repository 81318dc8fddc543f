"""The HTML report: tables laid out as paper 000's, statistics, charts, pages, escaping, compare."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest


from runner_helpers import run_toy, write_toy_suite

from provbench.report import write_comparison, write_report
from provbench.report.explore import EXPLORE_SCRIPT, script_hash
from provbench.report import charts
from provbench.report.stats import arrow, bootstrap_ci, mcnemar, share

UNESCAPED = re.compile(r"<\s*script|<[^>]*\bonerror\s*=", re.IGNORECASE)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    return run_toy(write_toy_suite(folder / "suite", kb=False), folder / "run")


def html_files(run_dir: Path) -> list[Path]:
    return [run_dir / "report.html", *sorted((run_dir / "pages").glob("*.html"))]


def test_no_dataset_or_model_string_reaches_html_unescaped(run_dir):
    files = html_files(run_dir)
    assert len(files) == 1 + 7
    own_script = f"<script>{EXPLORE_SCRIPT}</script>"
    for path in files:
        text = path.read_text()
        assert text.count(own_script) == (path.name == "report.html")  # the report's filters, nothing else
        text = text.replace(own_script, "")
        assert not UNESCAPED.search(text), f"unescaped markup in {path.name}: {UNESCAPED.search(text).group(0)}"
    report = (run_dir / "report.html").read_text()
    assert "Who directed &lt;script&gt;window.__pwned=1" in report  # shown as text, not dropped
    page = next(p for p in files if p.name.startswith("q5-")).read_text()
    assert "&lt;img src=x onerror=&#34;window.__pwned=3&#34;&gt;" in page  # the model's answer
    assert "Orin &lt;b&gt;Vale&lt;/b&gt;" in page  # the gold answer


def test_report_is_self_contained(run_dir):
    text = (run_dir / "report.html").read_text()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert policy == f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '{script_hash()}'"
    digest = base64.b64encode(hashlib.sha256(EXPLORE_SCRIPT.encode()).digest()).decode()
    assert script_hash() == f"sha256-{digest}"
    page = next((run_dir / "pages").glob("q1-*.html")).read_text()
    assert "script-src" not in page and "<script" not in page  # question pages: no script at all
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "<link" not in text and "@import" not in text
    assert text.count("<svg") >= 2  # accuracy and output-changed charts, inline


def test_table1_and_table2_follow_the_paper(run_dir):
    text = (run_dir / "report.html").read_text()
    table1 = text[text.index('class="table1"') : text.index("</table>", text.index('class="table1"'))]
    # toy-graph answers q1, q3, q4 correctly out of 7 (q5 wrong, q2 reached, q6/q7 failed)
    assert "57.1%" in table1 and "(4/7)" in table1 and "95% CI" in table1
    table2 = text[text.index('class="table2"') : text.index("</table>", text.index('class="table2"'))]
    for label in ("Baseline experiment", "Output changed", "Acc.", "toy-hide-cited", "toy-hide-random"):
        assert label in table2
    assert "(3/6)" in table2  # baseline accuracy over the 6 analysed questions
    assert "→" in table2 and "McNemar" in text and "binomtest" in text  # no KB: the toy views hide nothing


def test_question_pages_show_traces(run_dir):
    page = next(p for p in (run_dir / "pages").glob("q1-*.html")).read_text()
    assert 'id="toy-graph"' in page and "submit_answer" in page and "get_entity" in page
    assert "toy-hide-random" in page and "back to the report" in page
    report = (run_dir / "report.html").read_text()  # the same page, embedded with prefixed ids
    assert 'id="q-q1-' in report and 'id="q1-' in report and "toy-hide-random #1: details" in report


def test_rerender_from_the_run_directory_alone(run_dir):
    (run_dir / "report.html").unlink()
    assert write_report(run_dir) == run_dir / "report.html" and (run_dir / "report.html").is_file()


def test_compare_two_runs(run_dir, tmp_path):
    other = run_toy(write_toy_suite(tmp_path / "suite", kb=False), tmp_path / "other")
    out = write_comparison([run_dir, other], tmp_path / "cmp.html")
    text = out.read_text()
    assert "toy-graph" in text and "+0.0 pts" in text and "Paired test" in text
    assert not UNESCAPED.search(text)


def test_bootstrap_interval_is_scipys_percentile_interval_and_quiet_on_equal_values():
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    values = [1.0] * 17 + [0.0] * 3  # skewed: BCa and percentile intervals differ here
    expected = bootstrap(
        (np.asarray(values),), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(5)
    ).confidence_interval
    assert bootstrap_ci(values, seed=5) == (expected.low, expected.high)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # all-equal values: a zero-width interval, no warning, no NaN
        assert bootstrap_ci([1.0] * 5) == (1.0, 1.0)


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    values = [1.0] * 6 + [0.0] * 4
    low, high = bootstrap_ci(values, seed=3)
    assert (low, high) == bootstrap_ci(values, seed=3)
    assert low < 0.6 < high and 0.0 <= low and high <= 1.0
    assert bootstrap_ci([1.0]) == (None, None)
    s = share({"a": 1.0, "b": 0.5}, ["a", "b", "missing"])
    assert (s.numerator, s.denominator, s.counts()) == (1.5, 2, "(1.5/2)")


def test_exact_mcnemar():
    before = {f"q{i}": 1.0 for i in range(8)}
    after = {**before, **{f"q{i}": 0.0 for i in range(5)}}
    test = mcnemar(before, after)
    assert (test.baseline_only, test.condition_only) == (5, 0)
    assert test.p_value == pytest.approx(0.0625)  # 2 * 0.5**5
    assert mcnemar(before, before).p_value is None
    assert (arrow(0.5, 0.4), arrow(0.5, 0.5), arrow(0.4, 0.5)) == ("↓", "→", "↑")


def test_chart_labels_are_escaped_in_svg():
    svg = charts.grouped_chart(
        ["<script>alert(1)</script>", "$x$"], {"<img src=x onerror=alert(1)>": [0.5, 0.2]}, "y", "<b>t</b>"
    )
    assert svg.startswith("<svg") and not UNESCAPED.search(svg)
    assert "&lt;script&gt;" in svg


def test_an_interval_a_rounding_error_off_its_estimate_still_draws():
    # a bootstrap bound of 1/12 computed another way can sit just above the estimate 1/12
    svg = charts.accuracy_chart(["a", "b"], [1 / 12, 0.5], [(1 / 12 + 1e-12, 0.2), (0.4, 0.5 - 1e-12)], "t")
    assert svg.startswith("<svg")


def test_a_mean_over_records_shows_its_count_not_none():
    from provbench.report.data import format_metric_value

    assert format_metric_value({"value": 0.5, "numerator": 3, "denominator": 6}) == "0.500 (3/6)"
    assert format_metric_value({"value": 0.7, "numerator": None, "denominator": 2}) == "0.700 (n=2)"


BUILD_INFO = {
    "builder": "2wiki-paper000",
    "duration_s": 8.96,
    "counts": {"documents": 87, "text_units": 87, "entities": 49, "relations": 28, "communities": 1, "questions": 12},
    "paper": {
        "id": "000",
        "title": "Why Neighborhoods Matter (paper 000), section 2.1",
        "counts": {"documents": 275, "text_units": 318, "entities": 1815, "relations": 1692, "communities": 7},
    },
    "llm": {"calls": 9, "failed": 0, "by_purpose": {"kb-extract": 8}},
    "extraction": {"entities_added": 12, "hallucinated_items": 11},
    "inputs": {"builder": "2wiki-paper000/v2", "fingerprint": "abc", "options": {"chunk_size": 200}},
    "options": {"chunk_size": 200, "summarize": True, "max_workers": None},
    "problems": ["11 extracted names were not in their text unit (dropped)"],
}


def test_knowledge_base_section_is_grouped(run_dir, tmp_path):
    import json

    from provbench.report.data import load_run
    from provbench.report.render import knowledge_base_section

    (tmp_path / "build_info.json").write_text(json.dumps(BUILD_INFO))
    run = load_run(run_dir)
    run.manifest.suite["knowledge_base"] = {"builder": "2wiki-paper000", "directory": str(tmp_path)}
    tables = {b.css_class: b for b in knowledge_base_section(run).blocks}
    counts = tables["kb kb-counts"]
    assert counts.columns == ["Item", "This knowledge base", "Paper 000", "Ratio"]
    entities = next(r for r in counts.rows if r.cells[0].text == "entities")
    assert [c.text for c in entities.cells[1:]] == ["49", "1,815", "0.03"]
    assert tables["kb kb-problems"].rows[0].cells[0].text.startswith("11 extracted names")
    build = {r.cells[0].text: r.cells[1].text for r in tables["kb kb-build"].rows}
    assert build["llm"].startswith("calls=9") and build["inputs"] == "builder=2wiki-paper000/v2, fingerprint=abc"
    assert "counts" not in build and "options" not in build and "paper" not in build
    options = {r.cells[0].text: r.cells[1].text for r in tables["kb kb-options"].rows}
    assert options == {"chunk_size": "200", "max_workers": "null", "summarize": "true"}
    (tmp_path / "build_info.json").write_text(json.dumps({"builder": "tiny", "version": 1}))
    assert [b.css_class for b in knowledge_base_section(run).blocks] == ["kb kb-build"]  # no empty tables


def test_a_dry_run_report_says_its_answers_mean_nothing(run_dir):
    """The run_dir's scripted model answers without reading: the report says so at the top (a new
    user read a schema-following report's numbers as results); a real model's header says nothing."""
    from provbench.report.render import dry_run_model

    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert html.index('class="warning dry-run">This is a dry run: scripted') < html.index('id="run"')
    assert "a control run" in dry_run_model("control:oracle") and "a dry run" in dry_run_model("schema-following")
    assert dry_run_model("openai/gpt-4o-mini") == ""
