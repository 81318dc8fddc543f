"""A small suite run through litellm against :class:`provbench.testing.faults.FaultServer`
(used by test_faults.py and benchmarks/bench_faults.py).

The toy systems of runner_helpers.py answer from the server's replies; ``toy-json`` asks for a
JSON object with a schema, so invalid-JSON faults reach the client's re-ask path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from runner_helpers import QUESTIONS, ToySystem, toy_plugin_manager, toy_reply

from provbench import hookimpl
from provbench.model import Question, Trace

ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class JsonToySystem(ToySystem):
    """The toy graph system, asking for ``{"answer": ...}`` under a JSON schema."""

    name = "toy-json"

    def answer(self, question: Question, env, trace: Trace, visible: list[str]) -> Trace:
        prompt = f"Q: {question.question}\nvisible: {','.join(visible)}"
        resp = env.llm.chat(
            [{"role": "user", "content": prompt}], schema=ANSWER_SCHEMA, purpose="json answer", trace=trace
        )
        if resp.data is None:
            raise ValueError(f"the reply was not valid JSON: {resp.text[:80]!r}")
        trace.answer = resp.data["answer"]
        return trace


class JsonToyPlugin:
    @hookimpl
    def provbench_register_systems(self):
        return {"toy-json": JsonToySystem}


def fault_plugin_manager():
    return toy_plugin_manager(JsonToyPlugin())


def server_reply(messages: list[dict], schema: dict | None) -> str:
    """What the loopback model says: the toy answer, as JSON when a schema was asked."""
    original = [m for m in messages if m["role"] == "user"][0]  # a re-ask appends more messages
    answer = toy_reply([original])
    return json.dumps({"answer": answer}) if schema is not None else answer


SUITE = """\
name: faults
dataset: {{loader: toy-json, path: questions.json}}
model:
  id: openai/toy
  params: {{api_base: "{api_base}", api_key: "x", timeout: {timeout}, max_attempts: {attempts},
           backoff_s: 0.05, max_backoff_s: 0.2, deadline_s: {deadline}}}
systems: [toy-json, toy-plain]
interventions: [toy-hide-random]
exclusion: {{enabled: false}}
metrics: [toy-length]
concurrency: {concurrency}
"""


def questions(n: int) -> list[dict[str, Any]]:
    """``n`` answerable toy questions (the five of runner_helpers.py, repeated under new ids)."""
    base = QUESTIONS[:5]
    return [
        {**base[i % 5], "id": f"{base[i % 5]['id']}-{i}", "question": f"({i}) {base[i % 5]['question']}"}
        for i in range(n)
    ]


def write_fault_suite(
    folder: Path,
    api_base: str,
    *,
    n_questions: int = 5,
    timeout: float = 0.5,
    attempts: int = 3,
    deadline: float = 5.0,
    concurrency: int = 2,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(questions(n_questions)))
    path = folder / "suite.yaml"
    path.write_text(
        SUITE.format(api_base=api_base, timeout=timeout, attempts=attempts, deadline=deadline, concurrency=concurrency)
    )
    return path


def run_faults(suite: Path, out: Path, **kwargs: Any) -> Path:
    from provbench.runner import run_suite

    return run_suite(suite, out=out, pm=fault_plugin_manager(), write_report=False, **kwargs)


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines() if line]


def essence(run: Path) -> dict[str, tuple]:
    """Per unit key: status and answer (what an uninterrupted, fault-free run must match)."""
    out = {}
    for r in records(run):
        k = r["key"]
        out[f"{k['system']}|{k['condition']}|{k['repeat']}|{k['question_id']}"] = (
            r["status"],
            (r.get("trace") or {}).get("answer"),
        )
    return out


def nan_metrics(run: Path) -> list[str]:
    values = json.loads((run / "metrics.json").read_text())["values"]
    return [
        f"{v['metric']}/{v['system']}/{v['condition']}"
        for v in values
        if isinstance(v.get("value"), float) and math.isnan(v["value"])
    ]


def _build_tiny_kb_slowly(kb_dir: Path, delay: float) -> None:
    import time

    from kb_2wiki_helpers import scripted_kb_reply, tiny_questions

    from provbench.llm import LLMClient, ScriptedBackend
    from provbench_plugins.kb_builders.twowiki.builder import TwoWikiKBBuilder

    answer = scripted_kb_reply()

    def slow(messages):
        time.sleep(delay)
        return answer(messages)

    llm = LLMClient(ScriptedBackend(replies=[slow] * 500))
    print("building", flush=True)
    TwoWikiKBBuilder().build(tiny_questions(), kb_dir, llm).close()


if __name__ == "__main__":  # child processes of test_faults.py (kill -9, two processes)
    import sys

    from provbench.errors import UserError

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        if sys.argv[1] == "run":
            run_faults(Path(sys.argv[2]), Path(sys.argv[3]))
        else:
            _build_tiny_kb_slowly(Path(sys.argv[2]), float(sys.argv[3]))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
