"""Suite files: valid ones load; each kind of mistake names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest


from runner_helpers import toy_registry, write_toy_suite

from provbench.errors import UserError
from provbench.suite import SuiteError, line_of, load_suite

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def registry():
    return toy_registry()


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "questions.json").write_text("[]")
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


GOOD = """\
name: t
dataset:
  loader: toy-json
  path: questions.json
systems:
  - toy-graph
  - name: toy-plain
interventions: [toy-hide-cited]
metrics:
  - toy-length
"""


def error_of(path: Path, registry) -> str:
    with pytest.raises(SuiteError) as info:
        load_suite(path, registry)
    assert isinstance(info.value, UserError)
    return str(info.value)


def test_valid_suite_loads_with_defaults(tmp_path, registry):
    loaded = load_suite(write(tmp_path, GOOD), registry)
    suite = loaded.suite
    assert suite.system_names == ["toy-graph", "toy-plain"]
    assert suite.model.id == "embedded" and suite.concurrency == 2 and not suite.exclusion.enabled
    assert loaded.dataset_source() == str(tmp_path.resolve() / "questions.json")


def test_bad_yaml_names_file_and_line(tmp_path, registry):
    path = write(tmp_path, GOOD.replace("  - toy-graph\n", "  - toy-graph\n   bad: [unclosed\n"))
    message = error_of(path, registry)
    assert str(path) in message and "invalid YAML" in message
    assert "line 7" in message or "line 8" in message, message


def test_unknown_plugin_suggests_nearest_name(tmp_path, registry):
    path = write(tmp_path, GOOD.replace("  - name: toy-plain", "  - name: toy-plian"))
    message = error_of(path, registry)
    assert f"{path}, line 7, field 'systems[1].name'" in message, message
    assert "unknown system 'toy-plian'" in message and "did you mean 'toy-plain'?" in message


def test_unknown_intervention_in_flow_list(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD.replace("[toy-hide-cited]", "[toy-hide-citd]")), registry)
    assert "line 8, field 'interventions[0]'" in message and "did you mean 'toy-hide-cited'?" in message, message


def test_wrong_type_names_line_and_field(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD + "concurrency: lots\n"), registry)
    assert "line 11, field 'concurrency'" in message and "integer" in message, message


def test_nested_wrong_type(tmp_path, registry):
    text = GOOD.replace("  path: questions.json\n", "  path: questions.json\n  limit: [1, 2]\n")
    message = error_of(write(tmp_path, text), registry)
    assert "line 5, field 'dataset.limit'" in message, message


def test_misspelt_field_suggests_the_real_one(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD.replace("metrics:", "metrcs:")), registry)
    assert "line 9, field 'metrcs'" in message and "did you mean 'metrics'?" in message, message


def test_missing_required_field(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD.replace("  loader: toy-json\n", "")), registry)
    assert "line 2, field 'dataset.loader'" in message and "missing" in message, message


def test_missing_dataset_file_names_path(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD.replace("questions.json", "nowhere/dev.json")), registry)
    assert f"{tmp_path / 'suite.yaml'}, line 4, field 'dataset.path'" in message, message
    assert "dataset file not found" in message and str(tmp_path.resolve() / "nowhere" / "dev.json") in message


def test_hub_id_is_not_checked_as_a_file(tmp_path, registry):
    loaded = load_suite(write(tmp_path, GOOD.replace("questions.json", "someone/2wikimultihopqa")), registry)
    assert loaded.dataset_source() == "someone/2wikimultihopqa"


def test_bad_plugin_option_names_the_options(tmp_path, registry):
    text = GOOD.replace("  - name: toy-plain", "  - name: toy-graph\n    label: g2\n    options: {speed: 3}")
    message = error_of(write(tmp_path, text), registry)
    assert "field 'systems[1].options'" in message and "speed" in message, message


def test_exclusion_reference_must_be_a_system(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD + "exclusion:\n  reference_system: llm-only\n"), registry)
    assert "line 12, field 'exclusion.reference_system'" in message and "llm-only" in message, message


def test_duplicate_system(tmp_path, registry):
    message = error_of(write(tmp_path, GOOD.replace("  - name: toy-plain", "  - toy-graph")), registry)
    assert "field 'systems'" in message and "more than once" in message, message


def test_line_of_walks_nested_nodes():
    from ruamel.yaml import YAML

    tree = YAML().load("a:\n  b:\n    - x\n    - y: 1\n")
    assert line_of(tree, ("a", "b", 1, "y")) == 4
    assert line_of(tree, ("a", "missing")) == 1


def test_toy_suite_helper_is_valid(tmp_path, registry):
    assert load_suite(write_toy_suite(tmp_path, kb=False), registry).suite.name == "toy"


@pytest.mark.parametrize("name", ["quickstart.yaml", "2wiki-provenance.yaml"])
def test_shipped_suites_parse(name):
    """The shipped suites validate (plugin names are checked by the runner's own registry)."""
    from provbench.suite import Suite, _parse_yaml, _plain

    path = REPO / "suites" / name
    suite = Suite.model_validate(_plain(_parse_yaml(path, path.read_text())))
    assert suite.exclusion.enabled and suite.exclusion.reference_system in suite.system_names
    assert set(suite.targets_of_interventions()) <= set(suite.system_names)
    if name == "2wiki-provenance.yaml":
        paper000 = [s for s in suite.systems if s.name != "planning-loop"]  # paper 002's loop joins as a 7th
        assert len(paper000) == 6 and len(suite.interventions) == 6


@pytest.mark.parametrize("name", ["quickstart.yaml", "2wiki-provenance.yaml"])
def test_shipped_suites_load_with_builtin_plugins(name):
    """Every plugin a shipped suite names is registered and accepts its options; the dataset exists."""
    loaded = load_suite(REPO / "suites" / name)
    assert Path(loaded.dataset_source()).is_file()


def test_exclusion_needs_a_reference_system(tmp_path, registry):
    for text in ("exclusion: true\n", "exclusion:\n  enabled: true\n"):
        message = error_of(write(tmp_path, GOOD + text), registry)
        assert "line 11, field 'exclusion'" in message and "needs a reference_system" in message, message


def test_ambiguous_short_name_lists_the_candidates(tmp_path):
    from provbench.testing import registry_of, toy_plugin
    from runner_helpers import ToyPlugin

    registry = registry_of(ToyPlugin(), toy_plugin("one"), toy_plugin("two"))
    text = GOOD.replace("  - toy-graph\n", "  - top-entity\n")
    message = error_of(write(tmp_path, text), registry)
    assert "line 6, field 'systems[0]'" in message, message
    assert "system name 'top-entity' is ambiguous: one/top-entity, two/top-entity" in message, message
    loaded = load_suite(write(tmp_path, GOOD.replace("  - toy-graph\n", "  - one/top-entity\n")), registry)
    assert loaded.suite.system_names == ["top-entity", "toy-plain"]  # record keys: the short name
    both = GOOD.replace("  - toy-graph\n", "  - one/top-entity\n  - two/top-entity\n")
    message = error_of(write(tmp_path, both), registry)
    assert "listed more than once: top-entity (give one a distinct 'label')" in message, message


def test_bad_dataset_option_is_located(tmp_path):
    from provbench.testing import registry_of

    registry = registry_of(builtins=True)
    (tmp_path / "dev.json").write_text("[]")
    text = "name: t\ndataset:\n  loader: 2wiki\n  path: dev.json\n  options:\n    selct: true\nsystems: [llm-only]\n"
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    message = error_of(path, registry)
    assert "line 5, field 'dataset.options'" in message, message
    assert "dataset_loader '2wiki': bad options: selct=True" in message and "known options: select" in message


def test_references_may_use_a_systems_full_name(tmp_path):
    from provbench.testing import registry_of, toy_plugin
    from runner_helpers import ToyPlugin

    registry = registry_of(ToyPlugin(), toy_plugin("one"))
    text = GOOD.replace("  - toy-graph\n", "  - one/top-entity\n") + (
        "intervention_systems: [one/top-entity]\nexclusion: {enabled: true, reference_system: one/top-entity}\n"
    )
    suite = load_suite(write(tmp_path, text), registry).suite
    assert suite.intervention_systems == ["top-entity"] and suite.exclusion.reference_system == "top-entity"
    message = error_of(
        write(
            tmp_path, text.replace("intervention_systems: [one/top-entity]", "intervention_systems: [two/top-entity]")
        ),
        registry,
    )
    assert "field 'intervention_systems[0]'" in message and "unknown system 'two/top-entity'" in message, message
    assert message.endswith("(must be one of the suite's systems)"), message


def test_the_controls_intervention_systems_must_be_systems_the_controls_run(tmp_path):
    import yaml

    from provbench.registry import default_registry

    fever_garag = REPO / "suites" / "fever-garag.yaml"
    raw = yaml.safe_load(fever_garag.read_text(encoding="utf-8"))
    raw["dataset"]["path"] = raw["controls"]["dataset"]["path"] = str(REPO / "datasets" / "fever-mini" / "dev.jsonl")
    raw["controls"]["differences"]["systems"] = ["ga-rag"]
    raw["controls"]["differences"]["intervention_systems"] = ["ga-rag-gamma0"]  # the suite's, not the controls'
    path = write(tmp_path, yaml.safe_dump(raw, sort_keys=False))
    message = error_of(path, default_registry())
    assert "field 'controls.differences.intervention_systems[0]'" in message, message
    assert "unknown system 'ga-rag-gamma0'" in message and message.endswith("(must be one the controls run)"), message
