"""Red team (case c): an outside user's interventions, in one plugin file beside their suite, that
claim to hide the baseline's cited entities. One that hides nothing, or hides other entities, must
fail `provbench validate`; one that hides the whole graph instead passes its claim (the answers do
change) and is told apart only by the power matrix's "indistinct" against a same-size random set."""

from __future__ import annotations

import json

import pytest

from provbench.results.validity import read_validity

from outside_helpers import provbench_process, user_suite

INTERVENTIONS = '''\
"""The user's interventions: each says it hides the entities the baseline cited."""
from provbench import hookimpl
from provbench.plugin_api import Intervention


class HidesNothing(Intervention):
    def make_view(self, view, question, baseline, rng, **kwargs):
        return view


class HidesOthers(Intervention):
    def make_view(self, view, question, baseline, rng, **kwargs):
        cited = set(baseline.citations.entities)
        others = [e for e in sorted(view.entity_ids()) if e not in cited]
        return view.hide(entities=others[: max(1, len(cited))])


class HidesEverything(Intervention):
    def make_view(self, view, question, baseline, rng, **kwargs):
        return view.hide(entities=list(view.entity_ids()), text_units=list(view.text_unit_ids()))


@hookimpl
def provbench_register_interventions():
    return {"hides-nothing": HidesNothing, "hides-others": HidesOthers, "hides-everything": HidesEverything}
'''


NEGATIVE = (
    ", {control: ignores-context, effect: false}]}, expect_not_measurable: "
    "{ignores-context: 'it cites nothing: nothing is hidden for it'}}"
)


def suite(folder, interventions: list[str], negative: bool = False):
    """The user's suite: paper 000's agent under ``interventions``, and for each a claim that it
    changes the oracle's answers (and, with ``negative``, not the context-ignoring control's, whose
    units are declared not measurable: it cites nothing)."""
    claims = "".join(
        f"  - {{name: condition-effect, label: {name}-matters, options: {{system: agentic-graphrag, "
        f"conditions: [{name}], expect: [{{control: oracle, effect: true}}" + (NEGATIVE if negative else "]}}") + "\n"
        for name in interventions
    )
    body = (
        "plugins: [./user_interventions.py]\nsystems: [llm-only, agentic-graphrag]\n"
        f"intervention_systems: [agentic-graphrag]\ninterventions: [{', '.join(interventions)}]\n"
        "metrics: [accuracy, output-changed]\n"
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user_interventions.py").write_text(INTERVENTIONS)
    llms = "[oracle, ignores-context]" if negative else "[oracle]"
    return user_suite(folder, body, f"llms: {llms}\nclaims:\n{claims}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("outside-interventions")


def test_an_intervention_hiding_nothing_or_other_entities_fails_validate(folder):
    path = suite(folder / "fakes", ["hides-nothing", "hides-others"])
    done = provbench_process("validate", str(path), "--out", str(folder / "fakes" / "out"), cwd=path.parent)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "not detectable: hides-nothing-matters, hides-others-matters" in done.stderr, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines() if line.startswith("hides-")]
    verdicts = {row[0]: row[-1] for row in rows if row[1] == "oracle" and len(row) == 6}
    assert verdicts == {"hides-nothing-matters": "NOT MEASURABLE: 10 NO-OP", "hides-others-matters": "FAIL"}


@pytest.fixture(scope="module")
def declared(folder):
    """`provbench run --controls` of a suite whose interventions hide the whole graph, and nothing,
    each claim with its negative control declared not measurable: (its --out, the result)."""
    path = suite(folder / "declared", ["hides-everything", "hides-nothing"], negative=True)
    out = folder / "declared" / "out"
    return out, provbench_process("run", str(path), "--controls", "--out", str(out), cwd=path.parent)


def test_an_intervention_hiding_everything_is_indistinct_from_a_random_set(declared):
    out, _ = declared
    power = json.loads((out / "validity.json").read_text())["power"]
    status = {row["sham"]: row["status"] for row in power}
    assert status["hides-everything hides nothing"] == "power"
    assert status["hides-everything hides a same-size random set"] == "indistinct"


def test_a_claim_whose_specificity_went_untested_is_among_the_exceptions(declared):
    """An intervention hiding the whole graph while it says it hides the cited entities passes its
    claim; indistinct from a same-size random set, its specificity is untested: an exception."""
    out, _ = declared
    exceptions = read_validity(out).exceptions  # the headline's exceptions, shown when no claim fails
    assert any(e.startswith("hides-everything-matters: specificity untested") for e in exceptions), exceptions


def test_an_intervention_hiding_nothing_fails_validate_whatever_the_negative_control_declares(declared):
    """expect_not_measurable names the negative control: the oracle's 'not measurable' is not excused."""
    _, done = declared
    assert done.returncode == 4, done.stdout + done.stderr
