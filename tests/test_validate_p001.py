"""``provbench validate`` on paper 001's claims: KGRAG-Ex's explanation names the node the gold
path plants, removals that blank nothing planted change nothing, and both fail, naming the claim,
when the oracle is swapped for the random control. The built-in suites' own blocks run in full
in tests/test_validate.py's integration test."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import validate_cli, validated_once, write_suite
from provbench.cli import EXIT_CLAIM_NOT_DETECTABLE
from provbench.controls.validity import read_validity
from provbench.gold import GoldEvidence, GoldTriple
from provbench.model import BASELINE, Question, RunRecord, Trace, UnitKey, VariantInfo
from provbench.testing import control_runs
from provbench_plugins.papers.p001_kgrag_ex.known_truth import ExplanationNamesPlanted, Planted, UnplantedChangeNothing
from provbench_plugins.papers.p001_kgrag_ex.paths import enumerate_variants, make_path

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "datasets" / "medical-mini"
CLAIMS = """\
    - p001/explanation-names-planted
    - p001/unplanted-change-nothing
"""


def p001_suite(
    folder: Path, kb: Path, *, llms: str = "[oracle, ignores-context]", claims: str = CLAIMS, limit: str = ""
) -> Path:
    return write_suite(
        folder,
        f"""\
name: p001-controls
dataset: {{loader: medmcqa, path: {MINI / "dev.jsonl"}, limit: 2}}
systems: [{{name: kgrag-ex, options: {{top_k: 1, text_chars: 300}}}}]
intervention_systems: [kgrag-ex]
interventions:
  - kg-node-removal
  - kg-edge-removal
  - kg-subpath-removal
  - {{name: kg-subpath-removal, label: kg-subpath-blanked, options: {{rule: authors}}}}
report: {{subgraph_pictures: false}}
controls:
  dataset: {{loader: medmcqa, path: {MINI / "dev.jsonl"}{limit}}}
  knowledge_base:
    builder: medical-kg
    directory: {kb}
    options: {{corpus: {MINI / "corpus.jsonl"}, triples: {MINI / "kg_triples.csv"}}}
  llms: {llms}
  claims:
{claims}""",
    )


@pytest.fixture(scope="module")
def validated(tmp_path_factory, kb_dir):
    """One `provbench validate` of the p001 suite: (its folder, its --out, the CLI result)."""
    return validated_once(tmp_path_factory, p001_suite, kb_dir)


def test_paper001_claims_pass_on_medical_mini(validated):
    _, out, result = validated
    assert result.exit_code == 0, result.output
    verdicts = {(v.claim, v.control, v.expected.split(":")[0]): v for v in read_validity(out).verdicts}
    named = verdicts["p001/explanation-names-planted", "oracle", "every removal (Table 2)"]
    assert named.passed and named.observed.startswith(
        "every removal (Table 2): hit rate 1.00: 30 of 30 explanations name a planted node "
        "(a random node of their paths: 0.53)"
    )
    assert named.p_value < 0.05  # the bridge questions' planted nodes are no path ends
    blind = [v for v in verdicts.values() if v.control == "ignores-context"]
    assert [v.observed for v in blind] == ["0 of 30 questions with removals changed"]  # the oracle's paths, ignored
    specific = verdicts["p001/unplanted-change-nothing", "oracle", "kg-node-removal"]
    assert specific.passed and specific.observed.startswith(
        "kg-node-removal: unplanted: 0 of 75 changed; planted: 73 of 91 changed"
    )
    assert specific.p_value < 1e-4
    paths = kept_paths(out / "controls" / "oracle")
    assert min(len(p["edges"]) for ps in paths.values() for p in ps) >= 2  # no one-edge fragments
    bridges = [ps for qid, ps in paths.items() if qid.startswith("mm-b")]
    assert len(bridges) == 4 and all([len(p["edges"]) for p in ps] == [3] for ps in bridges)
    farther = sorted(len(ps[0]["edges"]) for qid, ps in paths.items() if qid.startswith("mm-e"))
    assert farther == [4] * 8 + [5] * 8  # the first and third complications' questions


def test_two_questions_are_not_enough_for_paper001s_claims(tmp_path, kb_dir):
    """The controls cut to 2 questions: every verdict, the oracle's and the blind control's, says so (exit 4)."""
    result = validate_cli(p001_suite(tmp_path, kb_dir, limit=", limit: 2"), tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    verdicts = read_validity(tmp_path / "out").verdicts
    assert {v.control for v in verdicts} == {"oracle", "ignores-context"}
    assert all(v.unmeasured.startswith("not enough questions (n=2; needs >= ") for v in verdicts), [
        (v.control, v.observed, v.unmeasured) for v in verdicts
    ]
    assert not any(v.passed for v in verdicts)


def kept_paths(run_dir: Path) -> dict[str, list[dict]]:
    from provbench.report.data import load_run

    return {
        r.key.question_id: r.trace.artifacts["kgrag"]["paths"]
        for r in load_run(run_dir).records
        if r.key.condition == BASELINE and r.trace and "kgrag" in r.trace.artifacts
    }


@pytest.mark.parametrize(
    "at, label, seen",
    [
        (0, "first", "0.33: 10 of 30"),
        (1, "second", "0.73: 22 of 30"),
        (2, "third", "0.63: 19 of 30"),
        (-2, "next-to-last", "0.73: 22 of 30"),
        (-1, "last", "0.17: 5 of 30"),
    ],
)
def test_an_explanation_naming_a_fixed_path_position_fails_validate(validated, kb_dir, monkeypatch, at, label, seen):
    """Issue 34 item 10a: an explanation blind to the perturbations, always naming the node at one
    fixed position of the first path, fails `explanation-names-planted` on medical-mini (exit 4),
    where the real one passes (test_paper001_claims_pass_on_medical_mini): the planted node sits at
    1-2 on the bridges and the first complications' questions, 3-4 on the third
    complications' and on every node of the others, so no one position is planted on 80 % of the questions."""
    from types import SimpleNamespace

    from provbench_plugins.papers.p001_kgrag_ex import known_truth

    def blind(group):
        return SimpleNamespace(influence={group.paths[0]["nodes"][at]["id"]: 1.0})

    monkeypatch.setattr(known_truth, "explain", blind)
    folder, out, _ = validated
    result = validate_cli(p001_suite(folder / label, kb_dir), folder / label / "out", reuse=out)
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failures = read_validity(folder / label / "out").failures  # Table 2's explanation, then each removal's
    assert {(v.claim, v.control) for v in failures} == {("p001/explanation-names-planted", "oracle")}
    failed = failures[0]
    assert failed.observed.startswith(f"every removal (Table 2): hit rate {seen}"), failed.observed


def test_the_random_control_in_place_of_the_oracle_fails_paper001s_claims(tmp_path, kb_dir, monkeypatch):
    from provbench.controls import BEHAVIOURS

    monkeypatch.setitem(BEHAVIOURS, "oracle", BEHAVIOURS["random"])  # "control:oracle" now replies at random
    suite = p001_suite(
        tmp_path,
        kb_dir,
        llms="[oracle]",
        claims="    - name: p001/unplanted-change-nothing\n      options: {controls: [oracle]}\n",
    )
    result = validate_cli(suite, tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failed = read_validity(tmp_path / "out").failures
    assert {v.claim for v in failed} == {"p001/unplanted-change-nothing"}
    assert not any(": unplanted: 0 of" in v.observed for v in failed)  # unplanted removals changed random replies
    assert "not detectable: p001/unplanted-change-nothing" in result.stderr


# -- the claims on records built in memory -----------------------------------------------------


def two_paths() -> list[dict]:
    """fasting -R-> fever -A-> knee (the gold chain) and fever -C-> cough (a distractor path)."""

    def node(i, name):
        return {"id": f"n{i}", "name": name, "label": "Diseases"}

    def edge(i, label, a, b):
        return {"id": f"r{i}", "label": label, "source": a, "target": b, "text_unit": "", "source_file": ""}

    gold = make_path(
        "path:0",
        [node(0, "fasting"), node(1, "Fever"), node(2, "knee")],
        [edge(0, "IS RISK FACTOR FOR", "n0", "n1"), edge(1, "AFFECTS", "n1", "n2")],
    )
    other = make_path("path:1", [node(1, "Fever"), node(3, "cough")], [edge(2, "CAUSES", "n1", "n3")])
    return [gold, other]


GOLD = GoldEvidence(
    triples=[
        GoldTriple(subject="fasting", relation="IS RISK FACTOR FOR", object="fever"),
        GoldTriple(subject="fever", relation="AFFECTS", object="knee"),
    ],
    ordered=True,
    entities=["fasting", "fever", "knee"],
)


def test_planted_elements_are_the_gold_nodes_and_the_edges_stating_a_gold_triple():
    planted = Planted.on(two_paths(), GOLD)
    assert planted.nodes == {"n0", "n1", "n2"} and planted.edges == {"r0", "r1"}  # case aside; r2 is no gold triple
    cough = enumerate_variants(two_paths(), "node")[4]["data"]
    assert cough["element"] == "cough" and not planted.blanked_by(cough)
    assert planted.blanked_by(enumerate_variants(two_paths(), "edge")[1]["data"])
    assert Planted.on(two_paths(), None).nodes == set()


def records(changes: set[str], answer: str = "A") -> list[RunRecord]:
    """A right baseline on two_paths() and one record per node / edge / sub-path variant; the
    variants in ``changes`` (ids such as "node:1:1") changed the answer."""
    paths = two_paths()
    out = [
        RunRecord(
            key=UnitKey(question_id="q", system="kgrag-ex"),
            scores={"accuracy": 1.0},
            trace=Trace(question_id="q", system="kgrag-ex", answer=answer, artifacts={"kgrag": {"paths": paths}}),
        )
    ]
    for kind in ("node", "edge", "subpath"):
        for v in enumerate_variants(paths, kind):
            changed = v["id"] in changes
            out.append(
                RunRecord(
                    key=UnitKey(question_id="q", system="kgrag-ex", condition=f"kg-{kind}-removal", variant=v["id"]),
                    scores={"output_changed": float(changed)},
                    trace=Trace(question_id="q", system="kgrag-ex", answer="B" if changed else answer),
                    variant=VariantInfo(**v),
                )
            )
    return out


def runs_of(recs: list[RunRecord]):
    question = Question(id="q", question="?", answer="A", gold=GOLD)
    return control_runs(
        {"oracle": recs, "ignores-context": [r for r in recs if r.key.condition == BASELINE]},
        questions={"oracle": [question], "ignores-context": [question]},
    )


def test_the_claims_on_hand_built_records():
    planted_changes = {"node:0:1", "edge:0:1", "subpath:0:1"}  # the fever -AFFECTS-> knee triplet
    good = runs_of(records(planted_changes))
    named, *alone, ignoring = ExplanationNamesPlanted().check(good)  # every removal, then each alone
    assert named.observed.startswith("every removal (Table 2): hit rate 1.00: 1 of 1")
    assert [v.observed.split(":")[0] for v in alone] == ["kg-node-removal", "kg-edge-removal", "kg-subpath-removal"]
    assert not named.passed and named.p_value == pytest.approx(0.75)  # one question, 3 of 4 nodes planted: no evidence
    assert named.unmeasured == "not enough questions (n=1; needs >= 11)"  # 0.75^11 < 0.05: 11 questions at best
    assert not ignoring.passed and ignoring.observed == "no question had a path to perturb"  # saw nothing
    assert ignoring.unmeasured == "not measurable: no question had a path to perturb"
    node, edge, subpath = UnplantedChangeNothing().check(good)  # one verdict per removal
    assert node.observed.startswith("kg-node-removal: unplanted: 0 of 1 changed; planted: 1 of 4 changed")
    assert edge.observed.startswith("kg-edge-removal: unplanted: 0 of 1 changed; planted: 1 of 2 changed")
    assert not node.passed  # 1 question: 1 of 4 against 0 of 1 is no significant contrast
    assert node.unmeasured == "not enough questions (n=1; needs >= 5)"
    leaky = runs_of(records(planted_changes | {"node:1:1"}))  # removing "cough" changed the answer
    node, *_ = UnplantedChangeNothing().check(leaky)
    assert not node.passed and node.observed.startswith("kg-node-removal: unplanted: 1 of 1 changed")
    assert (
        ExplanationNamesPlanted()
        .check(runs_of(records({"node:1:1", "edge:1:0"})))[0]
        .observed.startswith("every removal (Table 2): hit rate 0.00: 0 of 1")
    )  # only the distractor path mattered: the explanation names "cough"


# -- the hit rate must beat naming a random path node (binomial test in the pass rule) ----------


def bridge_records(qid: str, changes: set[str]) -> tuple[list[RunRecord], Question]:
    """A right baseline on the path cough - Fever* - Palsy* - ear, whose gold is the one middle
    triple "Fever CAN LEAD TO Palsy" (medical-mini's bridge questions): the ends are not planted."""
    names = ["cough", "Fever", "Palsy", "ear"]
    nodes = [{"id": f"{qid}-n{i}", "name": n, "label": "Diseases"} for i, n in enumerate(names)]
    labels = ["CAUSES", "CAN LEAD TO", "AFFECTS"]
    sources = [(1, 0), (1, 2), (2, 3)]  # Fever causes cough; Fever can lead to Palsy; Palsy affects ear
    edges = [
        {
            "id": f"{qid}-r{k}",
            "label": labels[k],
            "source": nodes[a]["id"],
            "target": nodes[b]["id"],
            "text_unit": "",
            "source_file": "",
        }
        for k, (a, b) in enumerate(sources)
    ]
    paths = [make_path("path:0", nodes, edges)]
    out = [
        RunRecord(
            key=UnitKey(question_id=qid, system="kgrag-ex"),
            scores={"accuracy": 1.0},
            trace=Trace(question_id=qid, system="kgrag-ex", answer="A", artifacts={"kgrag": {"paths": paths}}),
        )
    ]
    for kind in ("node", "edge", "subpath"):
        for v in enumerate_variants(paths, kind):
            hit = v["id"] in changes
            out.append(
                RunRecord(
                    key=UnitKey(question_id=qid, system="kgrag-ex", condition=f"kg-{kind}-removal", variant=v["id"]),
                    scores={"output_changed": float(hit)},
                    trace=Trace(question_id=qid, system="kgrag-ex", answer="B" if hit else "A"),
                    variant=VariantInfo(**v),
                )
            )
    gold = GoldEvidence(
        triples=[GoldTriple(subject="Fever", relation="CAN LEAD TO", object="Palsy")],
        ordered=True,
        entities=["Fever", "Palsy"],
    )
    return out, Question(id=qid, question="?", answer="A", gold=gold)


def explanation_verdict(changes: set[str], questions: int = 6):
    recs, asked = [], []
    for i in range(questions):
        r, q = bridge_records(f"b{i}", changes)
        recs += r
        asked.append(q)
    runs = control_runs({"oracle": recs}, questions={"oracle": asked})
    pooled, *_ = ExplanationNamesPlanted(expect=[{"control": "oracle", "effect": True}]).check(runs)
    return pooled  # Table 2's explanation, every removal together


def test_an_explanation_must_beat_naming_a_random_node_of_its_paths():
    # the answer hangs on the middle triple: its node, edge and sub-path removals change it
    honest = explanation_verdict({"node:0:1", "node:0:2", "edge:0:1", "subpath:0:1"})
    assert (
        honest.passed
        and honest.observed.startswith("every removal (Table 2): hit rate 1.00: 6 of 6")
        and honest.p_value == pytest.approx(0.5**6)
    )
    # a sham whose changes credit only the path's first node (an explanation blind to the perturbations)
    sham = explanation_verdict({"node:0:0"})
    assert not sham.passed and sham.observed.startswith("every removal (Table 2): hit rate 0.00: 0 of 6")
    # a high hit rate on too few questions is no evidence either
    few = explanation_verdict({"node:0:1", "node:0:2", "edge:0:1", "subpath:0:1"}, questions=2)
    assert few.observed.startswith("every removal (Table 2): hit rate 1.00: 2 of 2") and not few.passed  # p = 0.25
    assert few.unmeasured == "not enough questions (n=2; needs >= 5)"  # chance 1/2: 0.5^5 < 0.05
