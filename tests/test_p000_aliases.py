"""The Mistral suite can read a local data_ids release with its id_aliases.json (issue 34 item 5):
uncommenting the two lines its dataset block documents gives questions with the official aliases,
scored as the official evaluation does. The fixture (tests/fixtures/2wiki-data-ids) is three
invented records in the release's format (Python-literal context, entity_ids, evidences_id,
answer_id) and an id_aliases.json of JSON lines, as the release ships them."""

from __future__ import annotations

from pathlib import Path

from provbench.registry import default_registry
from provbench.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "2wiki-data-ids"


def test_the_mistral_suite_reads_a_local_data_ids_release_with_its_aliases(tmp_path):
    text = (REPO / "suites" / "2wiki-paper000-mistral.yaml").read_text(encoding="utf-8")
    documented = ("  # path: /path/to/2wikimultihop/data_ids/dev.json\n", "    # id_aliases: id_aliases.json")
    assert all(line in text for line in documented)
    text = text.replace("  path: xanhho/2WikiMultihopQA", "  # path: xanhho/2WikiMultihopQA", 1)
    text = text.replace(documented[0], f"  path: {FIXTURE / 'dev.json'}\n").replace(
        documented[1], "    id_aliases: id_aliases.json"
    )
    (tmp_path / "suites").mkdir()
    (tmp_path / "datasets").symlink_to(REPO / "datasets")  # the controls block's relative path
    (tmp_path / "suites" / "suite.yaml").write_text(text, encoding="utf-8")
    registry = default_registry()
    dataset = load_suite(tmp_path / "suites" / "suite.yaml", registry).suite.dataset
    loader = registry.create("dataset_loader", dataset.loader)
    questions = {q.id: q for q in loader.load(dataset.path, **{**dataset.options, "select": False})}
    assert questions["tiny-q1"].aliases == ["M. Vale"]
    assert questions["tiny-q2"].aliases == ["Glass Harbour", "Glass Harborian"]
    assert loader.score_answer(questions["tiny-q2"], "Glass Harborian")["em"] == 1.0
