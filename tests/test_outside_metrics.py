"""Red team (case h): an outside user's metric plugin, a scorer of their own named in their suite,
whose values a reader finds in the report's "All metric values" table. A value of a system under an
intervention that no certified claim covers is marked there as Table 2 marks it; one over units the
leak guard left out is "not measurable", even when the metric ignored the pairing rule."""

from __future__ import annotations

import pytest

from outside_helpers import metric, provbench, provbench_process, report_text, user_suite

SCORER = '''\
"""The user's scorer: right answers per system and condition, over every record it is given."""
from provbench import hookimpl
from provbench.plugin_api import Metric, MetricValue, correctness


class RightAnywhere(Metric):
    def score(self, record, question, context):
        return {"my_right": float(correctness(record) or 0.0)}

    def aggregate(self, results, context):
        cells = {}
        for r in results.records:  # not results.select(): leaked units included
            cells.setdefault((r.key.system, r.key.condition), []).append(r.scores.get("my_right", 0.0))
        return [MetricValue(metric="right-anywhere", system=s, condition=c, value=sum(v) / len(v),
                            numerator=sum(v), denominator=len(v)) for (s, c), v in sorted(cells.items())]


@hookimpl
def provbench_register_metrics():
    return {"right-anywhere": RightAnywhere}
'''

HALF_CHEAT = '''\
"""A system that reads the view, and on every other question sentences of its own copy of the documents."""
from pathlib import Path

from provbench import hookimpl
from provbench.model import Trace
from provbench.plugin_api import System

DOCS = Path(__file__).parent / "data" / "docs"


class HalfCheat(System):
    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name)
        hits = [h.id for h in env.view.search_text_units(question.question, k=2)]
        trace.read_text_unit(*hits)
        texts = [env.view.text_unit(h).text for h in hits]
        if int(question.id.lstrip("q")) % 2:
            texts += [p.read_text() for p in sorted(DOCS.glob("*.md"))]
        reply = env.llm.chat([{"role": "user", "content": "\\n".join(texts) + "\\n\\nQ: " + question.question}],
                             purpose="answer", trace=trace)
        trace.answer, trace.citations.text_units = reply.text, hits
        return trace


@hookimpl
def provbench_register_systems():
    return {"half-cheat": HalfCheat}
'''

BODY = """\
plugins: [./user_scorer.py, ./user_half_cheat.py]
systems: [llm-only, p000/rag, user_half_cheat/half-cheat]
intervention_systems: [rag, half-cheat]
interventions: [cited-removal, full-isolation]
exclusion: {reference_system: llm-only}
metrics: [accuracy, output-changed, right-anywhere]
"""

CONTROLS = """\
llms: [oracle]
claims:
  - {name: condition-effect, label: rag-reads, options: {system: rag, conditions: [cited-removal], \
expect: [{control: oracle, effect: true}]}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The user's run (the oracle control as model), then `provbench validate` on the same --out."""
    folder = tmp_path_factory.mktemp("outside-metrics")
    (folder / "user_scorer.py").write_text(SCORER)
    (folder / "user_half_cheat.py").write_text(HALF_CHEAT)
    suite = user_suite(folder, BODY, CONTROLS)
    ran = provbench("run", str(suite), "--model", "control:oracle", "--out", str(folder / "run"))
    assert ran.exit_code == 0, ran.output
    validated = provbench_process("validate", str(suite), "--out", str(folder / "run"), cwd=folder)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    return folder / "run"


def listed(run, system: str, condition: str) -> str:
    """The "All metric values" row of the user's scorer for a system under a condition."""
    rows = [line for line in report_text(run).splitlines() if line.strip().startswith("right-anywhere ")]
    return next(row for row in rows if row.split()[1:3] == [system, condition])


def test_an_outside_scorers_uncovered_values_are_marked_uncertified(run):
    assert "†" not in listed(run, "rag", "cited-removal")  # the claim rag-reads covers it
    for system, condition in (("rag", "full-isolation"), ("half-cheat", "cited-removal")):
        assert "† not certified" in listed(run, system, condition)
    assert "†" not in listed(run, "rag", "baseline")


def test_the_units_the_leak_guard_left_out_are_counted_beside_an_outside_scorers_value(run):
    value = metric(run, "right-anywhere", "half-cheat", "full-isolation")
    assert value["detail"]["left_out"]["leaked"] == 5, value  # the odd questions quote hidden text


@pytest.mark.xfail(
    strict=True,
    reason="red team (h): a scorer that aggregates results.records (not results.select) counts the units "
    "the leak guard left out, while the note beside its value says they were left out "
    "(half-cheat x full-isolation: 10 counted, note 'left out (leak guard): 5 leaked')",
)
def test_a_scorer_ignoring_the_pairing_rule_is_not_shown_as_if_it_applied_it(run):
    value = metric(run, "right-anywhere", "half-cheat", "full-isolation")
    assert value["denominator"] == 5 or "left out" not in value["note"], value
