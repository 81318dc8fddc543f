"""Paper 001's claims as checks on known-truth controls (``provbench validate``, docs/controls.md),
declared as a third-party package would: claims on :mod:`provbench.controls`, registered with
``provbench_register_claims`` (so they are ``p001/<name>``).

The known truth is the question's gold path (``Question.gold``: medical-mini's chain of triples).
Mapped onto the paths KGRAG-Ex retrieved, it *plants* nodes (the gold entities) and triplets
(edges whose head, relation and tail are a gold triple's) on them: the oracle's answer is right
exactly when its prompt holds every gold triple, so it depends on the planted triplets and on
nothing else of the paths. A question's answer "depends on one planted node or triplet" when a
single removal changed it (the same element elsewhere on another path would keep it).

* ``explanation-names-planted``: on every question whose oracle answer some removal changed, the
  most influential entity of Table 2's explanation (:func:`.explain.explain`, as the report shows
  it) is a planted node: the hit rate reaches ``min_hit_rate`` and a one-sided binomial test
  finds it above naming a node of the question's paths at random (p < ``alpha``), so an
  explanation that ignores the perturbations (the first node of the first path) fails where the
  planted node is not a path end (medical-mini's bridge questions). A control that ignores
  context changes under no removal, so its explanation names nothing.
* ``unplanted-change-nothing``: a removal that blanks no planted node and no planted triplet
  (``blanked`` in the variant's data) never changes the oracle's answer, while removals that do
  blank one change it more often (one-sided Fisher exact test).

Both give one verdict per removal (condition), read from that removal's records alone, and the
explanation claim one more for Table 2's explanation over all of them. Pooled alone, a removal
whose intervention hid nothing would be carried by the others: the claim could not tell a faked
removal from a real one (its "hides nothing" sham would pass). Per removal, faking one fails its
verdict.

Both read the oracle's questions whose baseline answer was right (its prompt held the gold, so
its answer depends on it); a question the oracle got wrong holds no planted dependence. Over
fewer questions than could ever be significant (the binomial test's best p is chance^n; 5 for
the rest) a verdict is "not enough questions", never a pass (docs/controls.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pydantic import BaseModel, ConfigDict, Field

from provbench.controls import Claim, ClaimAbout, ClaimNeeds, ControlRuns, Verdict, default_about, unmeasured_over
from provbench.controls.contrasts import Expectation, default_expect
from provbench.gold import GoldEvidence, normalize_relation, normalize_text
from provbench.model import BASELINE
from provbench.plugin_api import correctness

from . import analysis as A
from .explain import explain

SYSTEM = "kgrag-ex"
KG_CONDITIONS = ["kg-node-removal", "kg-edge-removal", "kg-subpath-removal"]


@dataclass
class Planted:
    """The ids of a question's paths that its gold plants: nodes of gold entities, and edges that
    state a gold triple (head, relation and tail, in the relation's own direction)."""

    nodes: set[str] = field(default_factory=set)
    edges: set[str] = field(default_factory=set)

    @classmethod
    def on(cls, paths: list[dict], gold: GoldEvidence | None) -> "Planted":
        if gold is None:
            return cls()
        names = {normalize_text(n) for n in gold.entities} | {
            normalize_text(n) for t in gold.triples for n in (t.subject, t.object)
        }
        triples = {
            (normalize_text(t.subject), normalize_relation(t.relation), normalize_text(t.object)) for t in gold.triples
        }
        planted = cls()
        for path in paths:
            name_of = {n["id"]: normalize_text(n["name"]) for n in path["nodes"]}
            planted.nodes |= {node for node, name in name_of.items() if name in names}
            planted.edges |= {
                e["id"]
                for e in path["edges"]
                if (name_of.get(e["source"]), normalize_relation(e["label"]), name_of.get(e["target"])) in triples
            }
        return planted

    def blanked_by(self, data: dict) -> bool:
        """Does a variant (its data's ``blanked`` ids) blank a planted node or triplet?"""
        blanked = data.get("blanked") or {}
        return bool(self.nodes & set(blanked.get("nodes", [])) or self.edges & set(blanked.get("edges", [])))


class Perturbed:
    """One control's KGRAG-Ex questions: baseline, perturbation records (of ``conditions`` only)
    and what the gold plants on the baseline's paths. Sub-path removals are read under one rule,
    the paper's when both ran (as Table 2); a condition read alone, under its own."""

    def __init__(self, runs: ControlRuns, control: str, system: str, conditions: list[str]) -> None:
        run = runs.run(control)
        kept = [
            r
            for r in run.records
            if r.key.system == system and (r.key.condition == BASELINE or r.key.condition in conditions)
        ]
        rules = A.subpath_rules(kept, system)
        self.groups = A.group(kept, system, rules[0])
        self.right = {r.key.question_id for r in kept if r.key.condition == BASELINE and correctness(r) == 1.0}
        self.planted = {
            qid: Planted.on(g.paths, run.questions[qid].gold if qid in run.questions else None)
            for qid, g in self.groups.items()
        }

    def changed_questions(self, questions: set[str]) -> list[str]:
        return sorted(q for q in questions & set(self.groups) if any(self.groups[q].changes(k) for k in A.KINDS))


class ExplanationOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(SYSTEM, description="the KGRAG-Ex system key")
    conditions: list[str] = Field(
        default_factory=lambda: list(KG_CONDITIONS),
        min_length=1,
        description="the node, edge and sub-path removals the explanation counts",
    )
    min_hit_rate: float = Field(0.8, ge=0, le=1, description="least share of explanations naming a planted node")
    alpha: float = Field(0.05, gt=0, lt=1, description="significance of the hit rate against a random path node")
    expect: list[Expectation] = default_expect(("oracle", True), ("ignores-context", False))


class ExplanationNamesPlanted(Claim):
    """KGRAG-Ex's explanation names a planted node whenever a removal changes the oracle's answer."""

    name = "explanation-names-planted"
    description = __doc__
    Options = ExplanationOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(
            controls=tuple(e.control for e in o.expect), systems=(o.system,), conditions=tuple(o.conditions)
        )

    def about(self) -> ClaimAbout:
        """As its options say, and the explanation it reads (so blind explanations stand in for it):
        only a positive expectation reads it (a negative one counts changed answers alone)."""
        about = default_about(self)
        return replace(about, explanations=("most-influential",) if about.positive_controls else ())

    def check(self, runs: ControlRuns) -> list[Verdict]:
        """A positive control: one verdict per removal, and one for Table 2's explanation over all
        of them; a negative control: one verdict, no removal changes its answer."""
        verdicts = []
        for e in self.options.expect:
            if not e.effect:
                verdicts.append(self.negative(runs, e.control))
                continue
            verdicts += [self.positive(runs, e.control, scope, conditions) for scope, conditions in self.scopes()]
        return verdicts

    def scopes(self) -> list[tuple[str, list[str]]]:
        """(label, conditions) of each positive verdict: every removal together, then each alone."""
        conditions = self.options.conditions
        alone = [(c, [c]) for c in conditions]
        return alone if len(conditions) == 1 else [("every removal (Table 2)", list(conditions)), *alone]

    @staticmethod
    def named(runs: ControlRuns, group) -> str | None:
        """The explanation's most influential entity (ties: the earlier on the paths), its credit
        read through ``runs.credit``."""
        nodes = list(dict.fromkeys(n["id"] for p in group.paths for n in p["nodes"]))
        influence = explain(group).influence
        credit = runs.credit("most-influential", nodes, [float(influence.get(n, 0)) for n in nodes])
        return nodes[credit.index(max(credit))] if nodes and max(credit) > 0 else None

    def positive(self, runs: ControlRuns, control: str, scope: str, conditions: list[str]) -> Verdict:
        from scipy.stats import binomtest

        o, seen = self.options, Perturbed(runs, control, self.options.system, conditions)
        changed = seen.changed_questions(seen.right)
        hits = [q for q in changed if self.named(runs, seen.groups[q]) in seen.planted[q].nodes]
        chance = [
            len(seen.planted[q].nodes) / len({n["id"] for p in seen.groups[q].paths for n in p["nodes"]})
            for q in changed
        ]
        rate, at_random = (len(hits) / len(changed), sum(chance) / len(chance)) if changed else (0.0, 0.0)
        p = binomtest(len(hits), len(changed), at_random, alternative="greater").pvalue if changed else None
        nothing = f"no removal changed any of the {len(seen.right)} right answers: nothing to explain"
        # the binomial test's best p is chance^n; a chance of 0 or 1 decides by its p alone
        why_not = unmeasured_over(len(changed), nothing, o.alpha, at_random if 0 < at_random < 1 else 0.5)
        observed = (
            f"hit rate {rate:.2f}: {len(hits)} of {len(changed)} explanations name a planted node "
            f"(a random node of their paths: {at_random:.2f}); {_right(seen)}"
        )
        return Verdict(
            claim=self.name,
            control=control,
            p_value=p,
            observed=f"{scope}: {observed if changed else nothing}",
            expected=f"{scope}: where a removal changes the answer, the explanation names a planted node "
            f"(hit rate >= {o.min_hit_rate:g}, and above naming a random node of the paths: "
            f"one-sided binomial test, p < {o.alpha:g})",
            passed=not why_not and rate >= o.min_hit_rate and p is not None and p < o.alpha,
            unmeasured=why_not,
        )

    def negative(self, runs: ControlRuns, control: str) -> Verdict:
        seen = Perturbed(runs, control, self.options.system, self.options.conditions)
        changed = seen.changed_questions(set(seen.groups))
        observed = (
            f"{len(changed)} of {len(seen.groups)} questions with removals changed"
            if seen.groups
            else "no question had a path to perturb"
        )
        why_not = unmeasured_over(len(seen.groups), "no question had a path to perturb", self.options.alpha)
        return Verdict(
            claim=self.name,
            control=control,
            observed=observed,
            expected="no removal changes the answer, so the explanation names nothing",
            passed=not why_not and not changed,
            unmeasured=why_not,
        )


class UnplantedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(SYSTEM, description="the KGRAG-Ex system key")
    conditions: list[str] = Field(
        default_factory=lambda: list(KG_CONDITIONS), min_length=1, description="removals whose variants are checked"
    )
    controls: list[str] = Field(
        default_factory=lambda: ["oracle"], min_length=1, description="controls whose answer depends on the gold alone"
    )
    alpha: float = Field(0.05, gt=0, lt=1, description="significance of planted removals changing more")


class UnplantedChangeNothing(Claim):
    """A removal that blanks neither a planted node nor a planted triplet changes nothing."""

    name = "unplanted-change-nothing"
    description = __doc__
    Options = UnplantedOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(controls=tuple(o.controls), systems=(o.system,), conditions=tuple(o.conditions))

    def check(self, runs: ControlRuns) -> list[Verdict]:
        """One verdict per control and removal: pooled, a removal faking its effect would be
        carried by the others."""
        return [
            self.verdict(runs, control, condition)
            for control in self.options.controls
            for condition in self.options.conditions
        ]

    def verdict(self, runs: ControlRuns, control: str, condition: str) -> Verdict:
        from scipy.stats import fisher_exact

        o, seen = self.options, Perturbed(runs, control, self.options.system, [condition])
        counts = {True: [0, 0], False: [0, 0]}  # blanks a planted element -> [changed, variants]
        measured = seen.right & set(seen.groups)
        for qid in measured:
            for r in (r for kind in A.KINDS for r in seen.groups[qid].records.get(kind, [])):
                tally = counts[seen.planted[qid].blanked_by(r.variant.data)]
                tally[0] += A.changed(r)
                tally[1] += 1
        (hit, planted), (miss, unplanted) = counts[True], counts[False]
        p = (
            fisher_exact([[hit, planted - hit], [miss, unplanted - miss]], alternative="greater")[1]
            if planted and unplanted
            else None
        )
        why_not = unmeasured_over(len(measured), f"no question answered right had a {condition} variant", o.alpha)
        return Verdict(
            claim=self.name,
            control=control,
            p_value=p,
            expected=f"{condition}: removals blanking no planted node or triplet change nothing; those "
            f"blanking one change more (one-sided Fisher exact test, p < {o.alpha:g})",
            observed=f"{condition}: unplanted: {miss} of {unplanted} changed; "
            f"planted: {hit} of {planted} changed ({_right(seen)})",
            passed=not why_not and bool(unplanted) and miss == 0 and p is not None and p < o.alpha,
            unmeasured=why_not,
        )


def _right(seen: Perturbed) -> str:
    return f"{len(seen.right)} question{'s' * (len(seen.right) != 1)} answered right"


CLAIMS = (ExplanationNamesPlanted, UnplantedChangeNothing)
