"""A paper package from outside the project (tests/third_party/toypaper.py) runs through the
public hooks: its enumerated intervention gives one record per variant, its metric sees graded
scores and abstentions, and its report section appears in the HTML report (checked in Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import import_file
from provbench.runner import run_suite
from provbench.run_store import RunStore
from provbench.testing import plugin_manager, scripted_llm

HERE = Path(__file__).resolve().parent
QUESTIONS = [
    {
        "id": "a",
        "question": "Where does the path end?",
        "answer": "Corvo",
        "metadata": {"path": ["Abel", "Brin", "Corvo"]},
    },
    {"id": "b", "question": "Where does this one end?", "answer": "Dune", "metadata": {"path": ["Elm", "Dune"]}},
    {"id": "c", "question": "And this one?", "answer": "Fen", "metadata": {"path": []}},
]
SUITE = """\
name: toypaper
dataset: {loader: path-questions, path: questions.json}
model: {id: scripted}
systems: [path-reader]
interventions: [drop-node]
metrics: [graded-coverage]
report: {bootstrap_resamples: 100}
"""


def last_node(messages):
    """The scripted model: the path's last node, or "I don't know" when the path has one node."""
    nodes = messages[-1]["content"].removeprefix("path: ").split(" > ")
    return nodes[-1] if len(nodes) > 1 else "I don't know"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("toypaper")
    (folder / "questions.json").write_text(json.dumps(QUESTIONS))
    (folder / "suite.yaml").write_text(SUITE)
    pm = plugin_manager(import_file(HERE / "third_party" / "toypaper.py"))
    return run_suite(folder / "suite.yaml", out=folder / "run", pm=pm, llm=scripted_llm([last_node] * 50))


def test_enumerated_variants_are_units_with_descriptions(run_dir):
    records = RunStore(run_dir).load_records()
    variants = sorted(k for k, r in records.items() if r.variant is not None)
    assert variants == [
        "path-reader|drop-node|0|a|node:0",
        "path-reader|drop-node|0|a|node:1",
        "path-reader|drop-node|0|a|node:2",
        "path-reader|drop-node|0|b|node:0",
        "path-reader|drop-node|0|b|node:1",
    ]  # no path, no variant for c
    last = records["path-reader|drop-node|0|a|node:2"]
    assert last.variant.description == "remove node 2 (Corvo)" and last.trace.answer == "Brin"
    assert last.scores["output_changed"] == 1.0
    assert records["path-reader|drop-node|0|a|node:0"].scores["output_changed"] == 0.0


def test_graded_scores_and_abstention_reach_the_metric(run_dir):
    records = RunStore(run_dir).load_records()
    assert records["path-reader|drop-node|0|b|node:0"].scores["accuracy"] == pytest.approx(0.3)  # "I don't know"
    assert records["path-reader|baseline|0|c"].trace.outcome == "abstained"
    values = {
        v["metric"]: v
        for v in json.loads((run_dir / "metrics.json").read_text())["values"]
        if v["system"] == "path-reader"
    }
    assert values["abstention-rate"]["numerator"] == 1 and values["abstention-rate"]["denominator"] == 3
    assert values["selective-accuracy"]["value"] == pytest.approx(1.0)


def test_section_is_rendered_and_escaped(run_dir):
    html = (run_dir / "report.html").read_text()
    assert 'id="toy-influence"' in html and "remove node 2 (Corvo)" in html
    assert "&lt;b&gt;(escaped)&lt;/b&gt;" in html and "<b>(escaped)</b>" not in html
    page = next((run_dir / "pages").glob("a-*.html")).read_text()
    assert "remove node 2 (Corvo)" in page and "path:0: Abel -&gt; Brin -&gt; Corvo" in page


@pytest.mark.browser
def test_section_shows_in_chromium(run_dir, artifacts_dir):
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip(f"{chromium} is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((run_dir / "report.html").as_uri())
        section_title = page.locator("h2#toy-influence")
        assert section_title.is_visible() and section_title.inner_text() == "Toy paper: node influence"
        assert page.locator("table.toy-influence tbody tr").count() == 5
        chart = page.locator("figure.chart svg").first.bounding_box()
        assert chart and chart["width"] > 200
        page.locator("h2#toy-influence").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / "third-party-section.png"))
        browser.close()
