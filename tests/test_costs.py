"""A judge apart from the system, cost in money per call / trace / system / run, and budgets.

Suites run through litellm against the loopback fault server (no fault injected), so the calls,
their prices (litellm's own table: ``openai/gpt-4o-mini`` is priced, ``openai/judge-x`` is not)
and the cache are the real ones.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fault_helpers import fault_plugin_manager, questions, server_reply
from rich.console import Console

from provbench import hookimpl
from provbench.costs import CostTotal
from provbench.errors import UserError
from provbench.model import LLMCall
from provbench.plugin_api import Metric
from provbench.runner import run_suite
from provbench.run_store import RunStore
from provbench.testing.faults import FaultServer

REPO = Path(__file__).resolve().parents[1]
PRICED, UNPRICED = "openai/gpt-4o-mini", "openai/judge-x"


class AskTheJudge(Metric):
    """A third-party metric whose score is one call to the metric context's LLM (the judge)."""

    name = "ask-the-judge"

    def score(self, record, question, context):
        reply = context.llm.chat(
            [{"role": "user", "content": f"Q: {question.question}\nIs it right?"}], purpose="judge"
        )
        return {"judged": float(bool(reply.text))}

    def expected_llm_calls(self, condition):
        return 1.0


class JudgePlugin:
    @hookimpl
    def provbench_register_metrics(self):
        return {"ask-the-judge": AskTheJudge}


def pm():
    manager = fault_plugin_manager()
    manager.register(JudgePlugin(), name="judge-plugin")
    return manager


def write_suite(
    folder: Path,
    api_base: str,
    *,
    model: str = PRICED,
    judge: str | None = UNPRICED,
    extra: str = "",
    n_questions: int = 3,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(questions(n_questions)))
    params = f'{{api_base: "{api_base}", api_key: "x", max_attempts: 1}}'
    judge_line = f"judge: {{id: {judge}, params: {params}}}\n" if judge else ""
    (folder / "suite.yaml").write_text(
        f"name: costs\ndataset: {{loader: toy-json, path: questions.json}}\nmodel: {{id: {model}, params: {params}}}\n"
        f"{judge_line}systems: [toy-json]\nmetrics: [ask-the-judge]\nconcurrency: 1\n{extra}"
    )
    return folder / "suite.yaml"


@pytest.fixture
def server():
    with FaultServer(server_reply, lifetime_s=300) as fault_server:
        yield fault_server


def records(run: Path):
    return list(RunStore(run).load_records().values())


def test_the_judge_is_a_model_apart_from_the_systems_in_manifest_records_cache_and_report(tmp_path, server):
    run = run_suite(write_suite(tmp_path / "s", server.api_base), out=tmp_path / "run", pm=pm())
    manifest = RunStore(run).read_manifest()
    assert manifest.models["llm"] == PRICED and manifest.models["judge"] == UNPRICED
    for record in records(run):
        assert {c.model for c in record.trace.llm_calls} == {PRICED}
        assert [(c.model, c.purpose) for c in record.judge_calls] == [(UNPRICED, "judge")]
        assert record.scores["judged"] == 1.0
    assert server.models.count("judge-x") == 3 and server.models.count("gpt-4o-mini") == 3  # the provider's names
    assert f"{UNPRICED} (a separate model)" in (run / "report.html").read_text()

    # the judge is in the cache key: the same cache with another judge asks the judge again, not the system
    other = tmp_path / "other"
    other.mkdir()
    shutil.copytree(run / "cache", other / "cache")
    asked = len(server.models)
    run_suite(write_suite(tmp_path / "s", server.api_base), out=other, pm=pm(), judge="openai/judge-y")
    assert server.models[asked:] == ["judge-y"] * 3
    assert RunStore(other).read_manifest().models["judge"] == "openai/judge-y"


def test_resuming_with_another_judge_is_refused(tmp_path, server):
    suite = write_suite(tmp_path / "s", server.api_base)
    run = run_suite(suite, out=tmp_path / "run", pm=pm(), write_report=False)
    with pytest.raises(UserError, match="judged by 'openai/judge-x', not 'openai/judge-y'"):
        run_suite(suite, out=run, pm=pm(), judge="openai/judge-y", write_report=False)


def test_without_a_judge_the_systems_model_judges(tmp_path, server):
    run = run_suite(write_suite(tmp_path / "s", server.api_base, judge=None), out=tmp_path / "run", pm=pm())
    assert RunStore(run).read_manifest().models["judge"] == PRICED
    assert {c.model for r in records(run) for c in r.judge_calls} == {PRICED}
    assert f"{PRICED} (the same model as the systems)" in (run / "report.html").read_text()


def test_calls_are_priced_from_litellms_table_and_an_unpriced_model_stays_unknown(tmp_path, server):
    import litellm

    console = Console(file=io.StringIO(), width=300)
    run = run_suite(write_suite(tmp_path / "s", server.api_base), out=tmp_path / "run", pm=pm(), console=console)
    for record in records(run):
        [call] = record.trace.llm_calls
        prompt, completion = litellm.cost_per_token(
            model=PRICED, prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens
        )
        assert (
            call.cost_source == "litellm" and call.cost_usd == pytest.approx(prompt + completion) and call.cost_usd > 0
        )
        [judged] = record.judge_calls
        assert judged.cost_usd is None and judged.cost_source == "unknown"
    system_cost = CostTotal.of(c for r in records(run) for c in r.trace.llm_calls)
    assert (
        system_cost.describe().startswith("$")
        and CostTotal.of(c for r in records(run) for c in r.judge_calls).describe() == "unknown"
    )
    out = console.file.getvalue()
    assert f"systems ({PRICED}): 3 LLM calls" in out and f"judge ({UNPRICED}): 3 LLM calls" in out
    assert "cost unknown" in out and f"cost {system_cost.describe()}" in out
    html = (run / "report.html").read_text()
    assert '<th class="num">Cost</th>' in html or ">Cost<" in html
    assert system_cost.describe() in html


def test_prices_in_the_models_params_and_local_backends(tmp_path, server):
    suite = write_suite(tmp_path / "s", server.api_base, model="openai/house-model", judge=None)
    text = suite.read_text().replace(
        "max_attempts: 1}", "max_attempts: 1, input_cost_per_token: 0.001, output_cost_per_token: 0.002}", 1
    )
    suite.write_text(text)
    run = run_suite(suite, out=tmp_path / "run", pm=pm(), write_report=False)
    call = records(run)[0].trace.llm_calls[0]
    assert call.cost_source == "custom"
    assert call.cost_usd == pytest.approx(0.001 * call.prompt_tokens + 0.002 * call.completion_tokens)

    from provbench.testing import scripted_llm

    local = scripted_llm(["an answer"])
    assert local.chat([{"role": "user", "content": "q"}]).cost_usd == 0.0
    assert CostTotal.of([LLMCall(model="m", cost_usd=0.0, cost_source="local")]).describe() == "0 (local)"
    assert (
        CostTotal.of([LLMCall(model="m", cost_usd=0.5, cost_source="litellm"), LLMCall(model="m")]).describe()
        == "$0.5000 + 1 unpriced call"
    )


def test_a_call_budget_stops_the_run_cleanly_and_a_larger_one_resumes_it(tmp_path, server):
    suite = write_suite(tmp_path / "s", server.api_base, judge=None, n_questions=4, extra="budget: {max_calls: 3}\n")
    run = run_suite(suite, out=tmp_path / "run", pm=pm())
    stopped = RunStore(run).read_manifest().stopped
    assert stopped and "budget.max_calls 3 reached" in stopped
    assert 1 <= len(records(run)) < 4 and len(server.models) <= 4  # the unit under way finished
    assert "budget.max_calls 3 reached" in (run / "report.html").read_text()

    suite.write_text(suite.read_text().replace("max_calls: 3", "max_calls: 100"))
    run_suite(suite, out=run, pm=pm())
    assert RunStore(run).read_manifest().stopped is None
    assert len(records(run)) == 4 and {r.status for r in records(run)} == {"ok"}
    assert len(server.models) == 8  # nothing asked twice: 4 answers and 4 judgements


def test_a_cost_budget_with_an_unpriced_model_is_refused_unless_accepted(tmp_path, server):
    suite = write_suite(tmp_path / "s", server.api_base, extra="budget: {max_cost_usd: 1.0}\n")
    with pytest.raises(UserError, match="judge model 'openai/judge-x' has none in litellm's price table"):
        run_suite(suite, out=tmp_path / "run", pm=pm())
    assert server.models == [] and not (tmp_path / "run").exists()  # refused before anything, run directory too
    suite.write_text(suite.read_text().replace("max_cost_usd: 1.0", "max_cost_usd: 1.0, accept_unknown_costs: true"))
    run = run_suite(suite, out=tmp_path / "run2", pm=pm(), write_report=False)
    assert len(records(run)) == 3


def test_a_cost_budget_stops_a_priced_run(tmp_path, server):
    suite = write_suite(
        tmp_path / "s", server.api_base, judge=None, n_questions=4, extra="budget: {max_cost_usd: 0.0000001}\n"
    )
    run = run_suite(suite, out=tmp_path / "run", pm=pm(), write_report=False)
    assert "budget.max_cost_usd 1e-07 reached" in RunStore(run).read_manifest().stopped
    assert len(records(run)) < 4


def test_the_cli_exits_6_when_the_budget_stopped_the_run(tmp_path, server):
    """Built-in plugins only (the command line finds no test plugin): paper 000's LLM-only system."""
    from provbench.cli import EXIT_BUDGET, main

    suite = tmp_path / "suite.yaml"
    suite.write_text(f"""name: budget
dataset: {{loader: 2wiki, path: {REPO / "datasets" / "2wiki-mini" / "dev.json"}, limit: 3}}
model: {{id: {PRICED}, params: {{api_base: "{server.api_base}", api_key: "x", max_attempts: 1}}}}
systems: [llm-only]
concurrency: 1
budget: {{max_calls: 1}}
""")
    result = CliRunner().invoke(main, ["run", str(suite), "--out", str(tmp_path / "run")])
    assert result.exit_code == EXIT_BUDGET == 6, result.output
    assert "budget.max_calls 1 reached" in result.output
    assert "units not run: at least" in " ".join(result.output.split())  # the runner's own note, unwrapped


def test_a_cheap_call_shows_its_significant_digits():
    """Issue 37 item 5: a priced call never shows as $0.0000."""
    from provbench.costs import dollars

    assert dollars(0.00000135) == "$0.00000135" and dollars(0.000042) == "$0.0000420"
    assert dollars(0.0123) == "$0.0123" and dollars(1234.5) == "$1,234.50" and dollars(0) == "$0.0000"
    total = CostTotal.of([LLMCall(purpose="a", model="m", prompt_tokens=9, completion_tokens=1, cost_usd=2.5e-6)])
    assert total.describe() == "$0.00000250"


def test_the_runs_own_kb_build_counts_against_its_budget(tmp_path):
    """Issue 37 item 4: the calls a run makes to build its knowledge base count against `budget:`,
    also when the run is resumed (the manifest keeps them)."""
    from runner_helpers import ToyKB, scripted_llm, toy_plugin_manager, write_toy_suite

    class AskingKB(ToyKB):
        name = "asking-kb"

        def build(self, questions, kb_dir, llm, **options):
            from provbench.kb import KnowledgeBase

            for i in range(0 if KnowledgeBase.is_complete(kb_dir) else 3):  # a finished KB is reused as is
                llm.chat([{"role": "user", "content": f"extract {i}"}], purpose="extraction")
            return super().build(questions, kb_dir, llm, **options)

    class Plugin:
        @hookimpl
        def provbench_register_kb_builders(self):
            return {"asking-kb": AskingKB}

    suite = write_toy_suite(tmp_path / "suite")
    suite.write_text(suite.read_text().replace("builder: toy-tiny", "builder: asking-kb") + "budget: {max_calls: 3}\n")
    llm, _ = scripted_llm()
    run_dir = run_suite(suite, out=tmp_path / "run", pm=toy_plugin_manager(Plugin()), llm=llm, write_report=False)
    manifest = RunStore(run_dir).read_manifest()
    assert manifest.knowledge_base["build_llm"]["calls"] == 3
    assert manifest.stopped == "budget.max_calls 3 reached (3 LLM requests sent)"
    assert not RunStore(run_dir).load_records()  # no unit started
    llm, _ = scripted_llm()  # resumed: the KB is reused (no call), its build still counts
    run_suite(suite, out=run_dir, pm=toy_plugin_manager(Plugin()), llm=llm, write_report=False)
    assert RunStore(run_dir).read_manifest().stopped == "budget.max_calls 3 reached (3 LLM requests sent)"
    assert not RunStore(run_dir).load_records()


def test_a_control_llm_costs_0_local_in_runs_summary_as_in_plan(tmp_path):
    """Control LLMs answer by rule on this machine: `run`'s summary says "0 (local)", never
    "unknown", and a plan's line uses the same rule (no "$0.0000" for a local model)."""
    from provbench.costs import cost_text
    from provbench.plan import Plan, Row
    from provbench.plan_output import plan_rows, plan_summary

    suite = write_suite(tmp_path / "s", "http://unused", judge=None)
    suite.write_text(suite.read_text().replace(suite.read_text().splitlines()[2], "model: {id: control:oracle}"))
    shown = io.StringIO()
    run = run_suite(
        suite, out=tmp_path / "run", pm=pm(), write_report=False, console=Console(file=shown, soft_wrap=True)
    )
    assert {c.cost_source for r in records(run) for c in r.trace.llm_calls + r.judge_calls} == {"local"}
    summary = [line for line in shown.getvalue().splitlines() if "LLM calls" in line]
    assert len(summary) == 2 and all(line.endswith("cost 0 (local)") for line in summary), summary
    rows = [Row("rag", 2, 2, 100, 10, model="schema-following", cost_usd=0.0, cost_source="local")]
    assert plan_rows(Plan("s", 2, rows, 0, 0, 0, "none", None, 1, 1.0))[0][7] == "0 (local)" == cost_text(0.0, "local")
    assert "estimated cost 0 (local)" in plan_summary(Plan("s", 2, rows, 0, 0, 0, "none", None, 1, 1.0), 0)[0]
