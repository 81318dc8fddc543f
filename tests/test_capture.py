"""Per-unit capture of LLM requests (provbench.capture): attributed to the right unit from any thread
the system starts, also with units running concurrently; hashed stably; never stored as text."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from provbench import hookimpl
from provbench.capture import UnitCapture, current_capture, propagate, request_hash
from provbench.model import Question, Trace
from provbench.plugin_api import System
from provbench.runner import run_suite
from provbench.run_store import RunStore
from provbench.testing import TINY_QUESTIONS, plugin_manager, scripted_llm, toy_plugin

MESSAGES = [{"role": "user", "content": "Who directed Glass Harbor?"}]


def test_the_request_hash_is_stable_across_processes_and_ignores_sampling():
    code = (
        "import json, sys; from provbench.capture import request_hash; "
        "print(request_hash(json.loads(sys.argv[1]), {'type': 'object'}))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, json.dumps(MESSAGES)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == request_hash(MESSAGES, {"type": "object"})
    assert request_hash(MESSAGES) != request_hash(MESSAGES, {"type": "object"})
    assert request_hash(MESSAGES) != request_hash([{"role": "user", "content": "Who directed Glass Harbour?"}])
    llm = scripted_llm(["a", "b"])
    first, second = Trace(question_id="q", system="s"), Trace(question_id="q", system="s")
    llm.chat(MESSAGES, seed=1, temperature=0.0, trace=first)
    llm.chat(MESSAGES, seed=2, temperature=0.7, trace=second)  # a unit's seed differs from its baseline's
    assert first.llm_calls[0].request_hash == second.llm_calls[0].request_hash == request_hash(MESSAGES)


def test_a_bound_client_attributes_requests_from_threads_the_system_starts():
    llm = scripted_llm([lambda m: m[-1]["content"].upper()] * 8, max_concurrency=4)
    mine, theirs = UnitCapture("mine"), UnitCapture("theirs")
    with ThreadPoolExecutor(4) as pool:  # threads that inherit no context
        for n in range(4):
            capture = mine if n % 2 else theirs
            pool.submit(llm.bound_to(capture).chat, [{"role": "user", "content": f"{capture.key} {n}"}]).result()
    assert [r.messages[0][1] for r in mine.requests] == ["mine 1", "mine 3"]
    assert [r.reply for r in theirs.requests] == ["THEIRS 0", "THEIRS 2"]
    assert llm.stats.calls == 4 and llm.bound_to(mine).stats is llm.stats  # one client, one accounting


def test_the_context_attributes_requests_of_any_client_where_it_is_copied():
    llm = scripted_llm([lambda m: "ok"] * 8)
    capture = UnitCapture("unit")
    with capture.active():
        assert current_capture() is capture
        llm.chat([{"role": "user", "content": "in the unit's thread"}])
        asyncio.run(llm.achat([{"role": "user", "content": "through achat"}]))
        thread = threading.Thread(target=propagate(llm.chat), args=([{"role": "user", "content": "propagated"}],))
        thread.start()
        thread.join()
        bare = threading.Thread(target=llm.chat, args=([{"role": "user", "content": "a bare thread"}],))
        bare.start()
        bare.join()
    assert current_capture() is None
    assert [r.messages[0][1] for r in capture.requests] == ["in the unit's thread", "through achat", "propagated"]


def test_complete_adds_unrecorded_calls_and_observations_once():
    llm = scripted_llm(["a", "b"])
    capture = UnitCapture("u")
    trace = Trace(question_id="q", system="s")
    bound = llm.bound_to(capture)
    bound.chat([{"role": "user", "content": "recorded"}], trace=trace)
    bound.chat([{"role": "user", "content": "not recorded"}], purpose="hidden helper")
    capture.observe(
        lambda t: (
            t.read_text_unit("tu:1"),
            t.visit("ent:orin-vale"),
            t.add_step("retrieval", tool="library retriever", result=["tu:1"]),
        )
    )
    copied = trace.model_copy(deep=True)  # a system may return a copy: its calls still count once
    capture.complete(copied)
    assert [c.purpose for c in copied.llm_calls] == ["", "hidden helper"]
    assert copied.read_text_units == ["tu:1"] and copied.visited_entities == ["ent:orin-vale"]
    assert copied.steps[0].tool == "library retriever"


class FanOut(System):
    """Asks the LLM twice from a thread pool of its own, without passing its trace."""

    name = "fan-out"

    def run(self, question: Question, env) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        with ThreadPoolExecutor(2) as pool:
            replies = list(
                pool.map(
                    lambda n: (
                        env.llm.chat(
                            [{"role": "user", "content": f"{question.id} secret {n}"}], purpose=f"part {n}"
                        ).text
                    ),
                    range(2),
                )
            )
        trace.answer = " ".join(replies)
        return trace


class FanOutPlugin:
    @hookimpl
    def provbench_register_systems(self):
        return {"fan-out": FanOut}


def slow_reply(messages):
    time.sleep(0.05)  # units overlap at concurrency 2
    return "ok"


def test_units_running_concurrently_each_get_their_own_requests(tmp_path):
    (tmp_path / "questions.json").write_text(json.dumps(list(TINY_QUESTIONS)))
    (tmp_path / "suite.yaml").write_text(
        "name: fan\ndataset: {loader: questions-json, path: questions.json}\n"
        "model: {id: scripted}\nsystems: [fan-out]\nconcurrency: 2\n"
    )
    llm = scripted_llm([slow_reply] * 40, max_concurrency=2)
    run_dir = run_suite(
        tmp_path / "suite.yaml",
        out=tmp_path / "run",
        pm=plugin_manager(toy_plugin(), FanOutPlugin()),
        llm=llm,
        write_report=False,
    )
    records = RunStore(run_dir).load_records().values()
    assert len(records) == len(TINY_QUESTIONS) >= 2
    for record in records:
        qid = record.key.question_id
        expected = sorted(request_hash([{"role": "user", "content": f"{qid} secret {n}"}]) for n in range(2))
        assert sorted(c.request_hash for c in record.trace.llm_calls) == expected
        assert sorted(c.purpose for c in record.trace.llm_calls) == ["part 0", "part 1"]
    assert "secret" not in (run_dir / "records.jsonl").read_text()  # request texts are never stored
