"""A LlamaIndex pipeline over an index of its own (a VectorStoreIndex of the user's files, through
the documented `llamaindex` route, docs/own-data.md): its nodes map to no knowledge-base id, so no
unit of it is "no-op" or "clean" (nothing shows an intervention applied to what it read), its
retrieval scores are not measurable (not 0), and the console and the report name the system."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from provbench.leakguard import leak_lines

REPO = Path(__file__).resolve().parent.parent

PIPELINE = '''\
"""A user's pipeline: their own VectorStoreIndex, ignoring the index provbench hands in."""
from pathlib import Path

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding

DOCS = Path(__file__).parent / "docs"


def own_index(index, llm, embed_model=None):
    docs = [Document(text=p.read_text(), id_=p.name) for p in sorted(DOCS.glob("*.md"))]
    own = VectorStoreIndex.from_documents(docs, embed_model=MockEmbedding(embed_dim=8))
    return own.as_query_engine(llm=llm, similarity_top_k=2)
'''

SUITE = """\
name: own-index
dataset: {{loader: 2wiki, path: {dataset}, limit: 3}}
knowledge_base: {{builder: 2wiki-paper000, directory: kb, options: {{extract: false, summarize: false}}}}
model: {{id: schema-following}}
systems:
  - {{name: llamaindex, label: own-index, options: {{factory: "own_pipeline:own_index"}}}}
intervention_systems: [own-index]
interventions: [cited-removal, entity-removal, full-isolation]
exclusion: {{enabled: false}}
metrics: [accuracy, footprint, gold-trajectory]
report: {{bootstrap_resamples: 100}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from provbench.run_store import RunStore
    from provbench.runner import run_suite
    from provbench.testing import schema_following_llm

    folder = tmp_path_factory.mktemp("own-index")
    (folder / "docs").mkdir()
    for name, text in {"a": "Mara Holt is the mayor of Dunmere.", "b": "Dunmere lies on the river Esk."}.items():
        (folder / "docs" / f"{name}.md").write_text(text)
    (folder / "own_pipeline.py").write_text(PIPELINE)
    (folder / "suite.yaml").write_text(SUITE.format(dataset=REPO / "datasets" / "2wiki-mini" / "dev.json"))
    sys.path.insert(0, str(folder))
    try:
        run_dir = run_suite(
            folder / "suite.yaml", out=folder / "run", llm=schema_following_llm(cache_dir=folder / "llm")
        )
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("own_pipeline", None)
    return run_dir, RunStore(run_dir).load_records()


def test_no_unit_that_read_its_own_index_is_no_op_or_clean(run):
    _, records = run
    checked = [r for r in records.values() if r.leak_check is not None]
    assert len(checked) == 9
    for record in checked:
        assert record.trace.artifacts["llamaindex"]["unmapped_nodes"] > 0
        assert record.leak_check.status in ("not-checkable", "leaked"), (record.key, record.leak_check.status)
    not_checkable = [r for r in checked if r.leak_check.status == "not-checkable"]
    assert {r.key.condition for r in not_checkable} >= {"cited-removal", "entity-removal"}
    assert all("from an index of its own" in r.leak_check.notes[0] for r in not_checkable)


def test_its_retrieval_scores_are_not_measurable_not_zero(run):
    run_dir, _ = run
    values = json.loads((run_dir / "metrics.json").read_text())
    values = values["values"] if isinstance(values, dict) else values
    mine = [v for v in values if v["system"] == "own-index" and v["condition"] == "baseline"]
    footprint = [v for v in mine if v["metric"].startswith("footprint.")]
    gold = [v for v in mine if v["metric"].startswith("gold-trajectory.")]
    assert footprint and gold
    for value in footprint + gold:
        assert value["value"] is None, value
        assert "index of their own" in value["note"], value


def test_the_console_and_the_report_name_the_system(run):
    run_dir, records = run
    warning = [line for line in leak_lines(records.values()) if line.startswith("warning:")]
    assert len(warning) == 1 and warning[0].startswith("warning: own-index read ") and "12 unit(s)" in warning[0]
    report = (run_dir / "report.html").read_text()
    assert "Warning: own-index read " in report
