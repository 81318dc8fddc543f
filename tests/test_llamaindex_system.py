"""The built-in ``llamaindex`` system: a third-party LlamaIndex pipeline (tests/third_party/li_pipeline.py,
installed as a distribution on a temporary sys.path entry; nothing in it knows provbench) runs
unchanged, on the tiny KB and in a suite beside p000/graphrag under paper 000's six ablations."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import sys
from pathlib import Path

import pytest

from provbench.errors import PluginError
from provbench.kb import KnowledgeBase
from provbench.model import Question
from provbench.plugin_api import Environment
from provbench.registry import default_registry
from provbench.testing import schema_following_llm, scripted_llm

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUESTION = Question(id="q1", question="Who is the mayor of Dunmere?", answer="Mara Holt")
ABLATIONS = [
    "full-isolation",
    "text-only-isolation",
    "cited-removal",
    "random-removal",
    "entity-removal",
    "entity-text-mask",
]


@pytest.fixture(scope="module")
def third_party(tmp_path_factory):
    """li_pipeline as an installed distribution, importable only while this module's tests run."""
    site = tmp_path_factory.mktemp("site")
    shutil.copy(HERE / "third_party" / "li_pipeline.py", site / "li_pipeline.py")
    info = site / "li_pipeline-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: li-pipeline\nVersion: 0.1.0\n")
    sys.modules.pop("li_pipeline", None)  # another test may have imported the repository's copy
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
    sys.modules.pop("li_pipeline", None)


@pytest.fixture(scope="module")
def kb(shared_tiny_kb):
    return shared_tiny_kb


def system(**options):
    return default_registry().create("system", "llamaindex", **options)


def model(messages):
    """Keywords for the synonym step, a JSON answer for provbench's answer step, else plain text."""
    prompt = messages[-1]["content"]
    if "KEYWORDS:" in prompt:
        return "Mara Holt"
    if "bracketed ids" in messages[0]["content"]:
        return json.dumps({"answer": "Mara Holt", "cited_textunits": ["tu:4", "tu:99"], "cited_relationships": []})
    return "Mara Holt is the mayor."


def empty_engine(index, llm):
    """A query engine that finds nothing (no keyword, and no entity scores 0.99)."""
    return index.as_query_engine(llm=llm, similarity_score=0.99)


def broken_pipeline(index, llm):
    raise RuntimeError("the pipeline's own bug")


def not_a_pipeline(index):
    return 42


# -- one unit on the tiny KB -------------------------------------------------------------------------------


def test_the_query_engines_response_and_source_nodes_become_answer_and_citations(third_party, kb):
    trace = system(factory="li_pipeline:graph_rag").run(
        QUESTION, Environment(view=kb.view(), llm=scripted_llm([model] * 3))
    )
    assert trace.outcome == "answered" and trace.answer == "Mara Holt is the mayor."
    assert "tu:4" in trace.citations.text_units and "rel:9" in trace.citations.relationships
    assert {"ent:mara-holt", "ent:dunmere"} <= set(trace.citations.entities)
    assert set(trace.read_text_units) == set(trace.citations.text_units)  # what the synthesis was given
    assert {s.tool for s in trace.steps} >= {
        "llamaindex:VectorContextRetriever",
        "llamaindex:LLMSynonymRetriever",
        "llamaindex:query",
    }
    assert [c.purpose for c in trace.llm_calls] == ["llamaindex", "llamaindex"]


def test_the_answer_step_keeps_citations_of_nodes_it_showed(third_party, kb):
    llm = scripted_llm([model] * 3)
    trace = system(factory="li_pipeline:graph_retriever", answer="auto").run(
        QUESTION, Environment(view=kb.view(), llm=llm)
    )
    assert trace.answer == "Mara Holt" and trace.citations.text_units == ["tu:4"]
    assert "rel:9" in trace.citations.relationships and "ent:mara-holt" in trace.citations.entities
    assert any(s.kind == "rejection" and "tu:99" in str(s.arguments) for s in trace.steps)
    prompt = llm.backend.calls[-1]["messages"][-1]["content"]
    assert "[tu:4] Here are some facts" in prompt and all(f"[{t}]" in prompt for t in trace.read_text_units)


def test_nothing_retrieved_is_an_abstention(kb):
    trace = system(factory="test_llamaindex_system:empty_engine").run(
        QUESTION, Environment(view=kb.view(), llm=scripted_llm(["", "unused"]))
    )
    assert trace.outcome == "abstained" and trace.answer is None and trace.retrieved == []


@pytest.mark.parametrize(
    "factory, replies, error",
    [
        (
            "test_llamaindex_system:broken_pipeline",
            [],
            "the LlamaIndex pipeline raised RuntimeError: the pipeline's own bug",
        ),
        ("test_llamaindex_system:not_a_pipeline", [], "expected a LlamaIndex query engine"),
        ("li_pipeline:graph_rag", [RuntimeError("provider down")], "LLM call failed"),
    ],
)
def test_a_failing_pipeline_gives_a_failed_trace(third_party, kb, factory, replies, error):
    trace = system(factory=factory).run(QUESTION, Environment(view=kb.view(), llm=scripted_llm(replies)))
    assert trace.outcome == "failed" and error in trace.error and trace.steps[-1].kind == "error"


def test_a_factory_that_cannot_be_imported_is_a_clear_option_error():
    with pytest.raises(PluginError, match="factory=.*cannot import module 'no_such_pipeline'"):
        system(factory="no_such_pipeline:build")
    with pytest.raises(PluginError, match="not of the form 'module:function'"):
        system(factory="no_colon")


# -- a suite: the pipeline beside p000/graphrag under the six ablations ------------------------------------------

SUITE = """\
name: li-suite
dataset: {{loader: 2wiki, path: {dataset}, limit: 3}}
knowledge_base: {{builder: 2wiki-paper000, directory: kb, options: {{extract: false, summarize: false}}}}
model: {{id: schema-following}}
systems:
  - p000/graphrag
  - {{name: llamaindex, label: li-pipeline, options: {{factory: "li_pipeline:graph_rag"}}}}
intervention_systems: [graphrag, li-pipeline]
interventions:
  - full-isolation
  - text-only-isolation
  - cited-removal
  - {{name: random-removal, options: {{repeats: 1}}}}
  - entity-removal
  - entity-text-mask
exclusion: {{enabled: false}}
metrics: [accuracy, output-changed, footprint, provenance]
concurrency: 2
report: {{bootstrap_resamples: 100}}
"""


@pytest.fixture(scope="module")
def run(third_party, tmp_path_factory):
    from provbench.runner import run_suite
    from provbench.run_store import RunStore

    folder = tmp_path_factory.mktemp("li-suite")
    (folder / "suite.yaml").write_text(SUITE.format(dataset=REPO / "datasets" / "2wiki-mini" / "dev.json"))
    run_dir = run_suite(folder / "suite.yaml", out=folder / "run", llm=schema_following_llm(cache_dir=folder / "llm"))
    return folder, run_dir, RunStore(run_dir).load_records()


def test_the_pipeline_is_a_distribution_outside_the_project(third_party):
    import li_pipeline

    assert importlib.metadata.version("li-pipeline") == "0.1.0"
    assert not Path(li_pipeline.__file__).resolve().is_relative_to(REPO)
    imports = [
        line for line in Path(li_pipeline.__file__).read_text().splitlines() if line.startswith(("import", "from"))
    ]
    assert imports and not any("provbench" in line for line in imports)


def test_it_runs_beside_graphrag_under_every_ablation(run):
    _, _, records = run
    for system_key in ("graphrag", "li-pipeline"):
        for condition in ["baseline", *ABLATIONS]:
            found = [r for r in records.values() if r.key.system == system_key and r.key.condition == condition]
            assert len(found) == 3 and all(r.status == "ok" for r in found), (system_key, condition)


def test_its_trace_is_captured_with_no_provbench_code_in_the_pipeline(run):
    _, _, records = run
    for record in (r for r in records.values() if r.key.system == "li-pipeline" and r.key.condition == "baseline"):
        trace = record.trace
        tools = {s.tool for s in trace.steps}
        assert {"llamaindex:VectorContextRetriever", "llamaindex:LLMSynonymRetriever"} <= tools
        assert trace.visited_entities and trace.read_text_units and trace.citations.entities
        assert trace.llm_calls and all(c.purpose == "llamaindex" for c in trace.llm_calls)


def test_no_hidden_id_is_in_an_intervention_trace(run):
    _, _, records = run
    for record in (r for r in records.values() if r.key.system == "li-pipeline" and r.key.condition != "baseline"):
        hidden = record.trace.artifacts["hidden_by_intervention"]
        baseline = records[record.key.model_copy(update={"condition": "baseline"}).as_str()].trace
        # a query engine cites every node it read: no visited-but-uncited entity for the last two to take
        uncited_only = record.key.condition in ("entity-removal", "entity-text-mask")
        assert hidden or (uncited_only and set(baseline.visited_entities) <= set(baseline.citations.entities)), (
            record.key
        )
        gone = {kind: set(hidden[kind]["ids"]) for kind in ("entities", "text_units") if kind in hidden}
        trace = record.trace
        seen = {
            "entities": set(trace.visited_entities) | set(trace.citations.entities),
            "text_units": set(trace.read_text_units)
            | set(trace.citations.text_units)
            | {r.id for r in trace.retrieved if r.kind == "text_unit"},
        }
        for kind, ids in gone.items():
            assert not ids & seen[kind], (record.key, kind, ids & seen[kind])


def test_units_run_two_at_a_time_are_attributed_to_their_own_traces(run):
    """Each baseline re-run alone, one after the other, gives the trace the concurrent run recorded."""
    folder, _, records = run
    kb = KnowledgeBase.open(folder / "kb", read_only=True)
    try:
        from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader

        questions = {q.id: q for q in TwoWikiLoader().load(REPO / "datasets" / "2wiki-mini" / "dev.json", limit=3)}
        li = system(factory="li_pipeline:graph_rag")
        for record in (r for r in records.values() if r.key.system == "li-pipeline" and r.key.condition == "baseline"):
            alone = li.run(
                questions[record.key.question_id],
                Environment(view=kb.view(), llm=schema_following_llm(), seed=record.seed),
            )
            for field in ("steps", "retrieved", "visited_entities", "read_text_units", "citations", "answer"):
                assert getattr(alone, field) == getattr(record.trace, field), (record.key, field)
    finally:
        kb.close()


def test_its_table2_rows_are_real(run):
    _, run_dir, _ = run
    metrics = json.loads((run_dir / "metrics.json").read_text())["values"]
    changed = {v["condition"]: v for v in metrics if v["metric"] == "output-changed" and v["system"] == "li-pipeline"}
    assert set(changed) == set(ABLATIONS)
    # a query engine cites everything it read: the visited-but-uncited ablations hide nothing (no-op)
    uncited = ("entity-removal", "entity-text-mask")
    assert all(v["denominator"] == 3 for c, v in changed.items() if c not in uncited)
    assert all(changed[c]["value"] is None and changed[c]["note"] == "not measurable: 3 no-op" for c in uncited)
    html = (run_dir / "report.html").read_text()
    table2 = html[html.index('id="table2"') :]
    table2 = table2[: table2.index("</table>")]
    assert "li-pipeline" in table2 and "Full isolation" in table2 and "Entity text mask" in table2
