"""Red team (case d): an outside user's explainers of KGRAG-Ex (paper 001), each a claim plugin in one
file that picks the "most influential" node of a question's paths its own way. A blind one (the
first node, whatever the perturbations did; a random node) must fail the explanation claim on the
known-truth controls; one that computes the real influence but hides it from the blind shams (never
asks ``runs.credit``) has no power against them, so validate fails it too. Paper 001's own claim, on
the same runs, passes: the controls can tell them apart."""

from __future__ import annotations

import json

import pytest

from outside_helpers import REPO, provbench_process

MINI = REPO / "datasets" / "medical-mini"

EXPLAINERS = '''\
"""The user's explainers, as claims on paper 001's explanation."""
import random

from provbench import hookimpl
from provbench_plugins.papers.p001_kgrag_ex.explain import explain
from provbench_plugins.papers.p001_kgrag_ex.known_truth import ExplanationNamesPlanted


def path_nodes(group):
    return list(dict.fromkeys(n["id"] for p in group.paths for n in p["nodes"]))


class FirstNode(ExplanationNamesPlanted):
    """All credit on the first node of the paths."""

    @staticmethod
    def named(runs, group):
        nodes = path_nodes(group)
        credit = runs.credit("most-influential", nodes, [1.0] + [0.0] * (len(nodes) - 1))
        return nodes[credit.index(max(credit))] if nodes else None


class RandomNode(ExplanationNamesPlanted):
    """A random node of the paths."""

    @staticmethod
    def named(runs, group):
        nodes = path_nodes(group)
        return random.Random(len(nodes)).choice(nodes) if nodes else None


class Unrouted(ExplanationNamesPlanted):
    """The real influence, read without runs.credit."""

    @staticmethod
    def named(runs, group):
        influence = explain(group).influence
        nodes = path_nodes(group)
        return max(nodes, key=lambda n: influence.get(n, 0)) if influence else None


@hookimpl
def provbench_register_claims():
    return {"first-node": FirstNode, "random-node": RandomNode, "unrouted": Unrouted}
'''

SUITE = f"""\
plugins: [./user_explainers.py]
name: outside-explainers
dataset: {{loader: medmcqa, path: {MINI / "dev.jsonl"}, limit: 2}}
systems: [{{name: kgrag-ex, options: {{top_k: 1, text_chars: 300}}}}]
intervention_systems: [kgrag-ex]
interventions: [kg-node-removal]
report: {{subgraph_pictures: false}}
controls:
  dataset: {{loader: medmcqa, path: {MINI / "dev.jsonl"}}}
  knowledge_base:
    builder: medical-kg
    options: {{corpus: {MINI / "corpus.jsonl"}, triples: {MINI / "kg_triples.csv"}}}
  llms: [oracle]
  claims:
"""

CLAIMS = ("p001/explanation-names-planted", "user_explainers/first-node", "user_explainers/random-node")


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """`provbench validate` of the user's suite: (its validity.json, the result)."""
    folder = tmp_path_factory.mktemp("outside-explainers")
    (folder / "user_explainers.py").write_text(EXPLAINERS)
    expect = "options: {conditions: [kg-node-removal], expect: [{control: oracle, effect: true}]}"
    claims = "".join(f"    - {{name: {c}, {expect}}}\n" for c in (*CLAIMS, "user_explainers/unrouted"))
    (folder / "suite.yaml").write_text(SUITE + claims)
    done = provbench_process("validate", "suite.yaml", "--out", "out", cwd=folder)
    return json.loads((folder / "out" / "validity.json").read_text()), done


def test_blind_explainers_fail_the_explanation_claim(validated):
    validity, done = validated
    assert done.returncode == 4, done.stdout + done.stderr
    passed = {v["claim"]: v["passed"] for v in validity["verdicts"]}
    assert passed == {**dict.fromkeys(CLAIMS, False), CLAIMS[0]: True, "user_explainers/unrouted": True}
    assert "not detectable: user_explainers/first-node, user_explainers/random-node" in done.stderr


def test_an_explainer_the_blind_shams_cannot_reach_has_no_power(validated):
    validity, done = validated
    power = {(r["claim"], r["sham"]): r["status"] for r in validity["power"]}
    for blind in ("the first element", "a random element", "shuffled credit"):
        assert power["p001/explanation-names-planted", f"most-influential: {blind}"] == "power"
        assert power["user_explainers/unrouted", f"most-influential: {blind}"] == "no power"
    assert "no power against most-influential: the first element: user_explainers/unrouted" in done.stderr
