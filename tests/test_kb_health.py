"""A degenerate knowledge base never yields results (issue 31 item 7): no text units, entities or
relations, no entity linked to text, or too many failed extractions make ``run`` (and so
``validate``) refuse it with the reasons; ``kb info`` and the report's knowledge-base section show
them first. The issue's route is reproduced: a corpus converted to 2Wiki JSON without ``evidences``,
every paragraph supporting, builds 0 entities and 0 relations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb_2wiki_helpers import TINY_RECORDS
from provbench.cli import main
from provbench.kb.health import DEFAULT_MAX_FAILED_EXTRACTION_SHARE, degenerate_reasons
from provbench.report.explore import knowledge_base_blocks

SUITE = """name: converted
dataset: {loader: 2wiki, path: converted.json}
knowledge_base: {builder: 2wiki-paper000, options: {summarize: false}}
model: {id: schema-following}
systems: [llm-only, graphrag]
metrics: [accuracy]
"""


def converted_corpus(path: Path) -> Path:
    """The tiny 2Wiki world as a user converts a corpus: no evidence triples, every paragraph supporting."""
    records = []
    for record in TINY_RECORDS[:2]:
        records.append(
            {
                **{k: v for k, v in record.items() if k != "evidences"},
                "supporting_facts": [[title, 0] for title, _ in record["context"]],
            }
        )
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    root = tmp_path_factory.mktemp("converted")
    converted_corpus(root / "converted.json")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(root / "suite.yaml"), "--out", str(root / "run")])
    return root, result


def test_a_converted_corpus_with_an_empty_graph_is_refused(refused):
    root, result = refused
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "is degenerate" in said and "it has no entities" in said and "it has no relations" in said
    assert not (root / "run" / "records.jsonl").exists() or not (root / "run" / "records.jsonl").read_text()


def test_kb_info_shows_the_problem_first(refused):
    root, _ = refused
    kb_dir = next(d for d in (root / ".kb-cache").glob("2wiki-paper000-*") if (d / "graph.kuzu").exists())
    result = CliRunner().invoke(main, ["kb", "info", str(kb_dir)])
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("degenerate knowledge base: it has no entities"), result.output
    info = json.loads(CliRunner().invoke(main, ["kb", "info", str(kb_dir), "--json"]).output)
    assert "it has no relations" in info["degenerate"]


def test_every_reason_and_the_report_section():
    healthy = {"text_units": 4, "entities": 3, "relations": 2}
    assert degenerate_reasons(healthy, {}, linked_entities=3) == []
    assert degenerate_reasons({**healthy, "text_units": 0}, {}) == ["it has no text units"]
    [unlinked] = degenerate_reasons(healthy, {}, linked_entities=0)
    assert unlinked.startswith("none of its 3 entities is linked to a text unit")
    assert degenerate_reasons(healthy, {}, 0, {"allow_unlinked_entities": True}) == []  # KG paths only (paper 001)
    failing = {"extraction": {"text_units": 10, "failed_calls": 4, "invalid_outputs": 2}}
    [reason] = degenerate_reasons(healthy, failing, 3)
    assert "extraction failed on 6 of 10 text units (60%" in reason
    assert f"max_failed_extraction_share={DEFAULT_MAX_FAILED_EXTRACTION_SHARE:g}" in reason
    assert degenerate_reasons(healthy, {**failing, "options": {"max_failed_extraction_share": 0.7}}, 3) == []
    # the suite's option now wins over the one the build recorded (it does not change the KB)
    assert degenerate_reasons(
        healthy, {**failing, "options": {"max_failed_extraction_share": 0.7}}, 3, {"max_failed_extraction_share": 0.5}
    ) == [reason]
    blocks = knowledge_base_blocks({"counts": {**healthy, "entities": 0}, "problems": []})
    assert blocks[0].css_class == "kb kb-degenerate" and blocks[0].rows[0].cells[0].text == "it has no entities"
    blocks = knowledge_base_blocks(
        {"counts": {**healthy, "relations": 0}, "problems": []},
        {"invalidate-used-edges": "not measurable: the knowledge base has no relations, which it acts on"},
    )
    assert blocks[0].css_class == "kb kb-lacking" and "kb kb-degenerate" not in [
        getattr(b, "css_class", "") for b in blocks
    ]
    assert [c.text for c in blocks[0].rows[0].cells] == ["it has no relations", "invalidate-used-edges"]


def test_the_builder_option_is_validated_and_does_not_change_the_kb():
    from provbench.errors import UserError
    from provbench_plugins.kb_builders.common.options import CommonBuildOptions
    from provbench_plugins.kb_builders.twowiki.builder import parse_options

    assert "max_failed_extraction_share" not in CommonBuildOptions(max_failed_extraction_share=0.9).fingerprint_fields()
    with pytest.raises(UserError, match="max_failed_extraction_share"):
        parse_options({"max_failed_extraction_share": 1.5})


def test_a_question_whose_gold_does_not_map_is_listed_not_dropped(tmp_path):
    from provbench.gold import GoldEvidence, GoldSentence
    from provbench.kb.health import check_run_kb
    from provbench.model import Question
    from provbench.testing.kb import build_tiny_kb
    from provbench_plugins.trajectory.metric import mapping_value
    from provbench.kb.goldmap import map_gold

    kb = build_tiny_kb(tmp_path / "kb")
    held = Question(
        id="held",
        question="Q?",
        answer="Orin Vale",
        gold=GoldEvidence(
            sentences=[GoldSentence(document="film", text="Orin Vale was born in Dunmere.")], entities=["Orin Vale"]
        ),
    )
    lost = Question(
        id="lost",
        question="Q?",
        answer="x",
        gold=GoldEvidence(
            sentences=[GoldSentence(document="a.md", text="A sentence no text unit holds.")], entities=["Nobody"]
        ),
    )
    plain = Question(id="plain", question="Q?", answer="x")
    lines = check_run_kb(kb, tmp_path / "kb", [held, lost, plain])
    assert lines[0] == "gold evidence: 1 of 2 question(s) map wholly onto the knowledge base"
    assert lines[1] == (
        "  lost: sentence 'A sentence no text unit holds.' (a.md) is in no text unit; "
        "entity 'Nobody' is not in the graph"
    )
    detail = mapping_value({q.id: map_gold(kb.view(), q) for q in (held, lost)}).detail
    assert list(detail["unmapped"]) == ["lost"]  # the report's trajectory section lists it
    kb.close()


NO_RELATIONS = """name: no-relations
dataset: {loader: qa, path: data/questions.csv, options: {documents: docs}}
knowledge_base: {builder: documents, options: {extract: false, summarize: false}}
model: {id: schema-following}
systems: [llm-only, agentic-graphrag]
interventions: [cited-removal, invalidate-used-edges]
intervention_systems: [agentic-graphrag]
metrics: [accuracy]
"""


def test_interventions_on_relations_are_not_measurable_on_a_kb_without_any(tmp_path):
    """A KB with entities and text but no relations (no extraction: titled documents' subjects
    only): the run goes on, and the intervention that acts on relations is marked not measurable
    with the reason (console, manifest, report) instead of refusing the whole run (issue 31 item 7)."""
    from provbench.run_store import RunStore
    from provbench_tools.own_docs import write as write_own_docs

    write_own_docs(tmp_path / "data")
    (tmp_path / "suite.yaml").write_text(NO_RELATIONS, encoding="utf-8")
    result = CliRunner().invoke(
        main,
        ["run", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "run"), "--limit", "2"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    said = " ".join(result.output.split())
    assert (
        "intervention 'invalidate-used-edges' not measurable: the knowledge base has no relations, which it "
        "acts on (left out of this run)"
    ) in said
    store = RunStore(tmp_path / "run")
    conditions = {r.key.condition for r in store.load_records().values()}
    assert "cited-removal" in conditions and "invalidate-used-edges" not in conditions
    assert list(store.read_manifest().knowledge_base["not_measurable"]) == ["invalidate-used-edges"]
    report = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert 'class="kb kb-lacking' in report and 'class="kb kb-degenerate' not in report
