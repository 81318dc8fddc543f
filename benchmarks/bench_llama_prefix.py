"""Benchmark: how many prompt tokens the embedded model evaluates, and how long it takes.

Two steps:

* ``record SUITE OUT``: runs the suite (``provbench run SUITE --out OUT``, in this process) and
  writes ``OUT/llama-requests.jsonl``: every request the embedded model received, in the order
  it ran them (under its lock), with the reply, the prompt tokens it evaluated and the seconds.
* ``replay OUT``: sends that sequence again through ``LlamaCppBackend``, once as the run did and
  once with the prefix reuse of this change, each on a fresh model, and prints per mode the prompt
  tokens evaluated, the wall time, their ratio, and how many replies differ from the recording.

* ``breakdown RUN_DIR``: a finished run's own records, per kind of call (system and purpose, the
  judge's apart): calls, prompt tokens sent, completion tokens, and how many of them went to
  re-asks of a reply that was not valid JSON (usually one cut off by ``max_tokens``).
* ``repeats RUN_DIR``: the unit requests a run sent again with the same messages (an ablation
  that changed nothing in a prompt): served from the cache or generated again, with the
  completion tokens spent and how many replies differed from the first.

Run: ``python benchmarks/bench_llama_prefix.py record suites/quickstart.yaml /tmp/q --limit 2``
then ``python benchmarks/bench_llama_prefix.py replay /tmp/q``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from provbench.llm import backends, llama_prefix

TRACE = "llama-requests.jsonl"
REPLAYED = ("messages", "schema", "max_tokens", "temperature", "seed", "logprobs")  # what a backend reads


class EvalCounter:
    """Counts the tokens a Llama evaluates: the first ``eval`` of a generation is the prompt's."""

    def __init__(self, model: Any) -> None:
        self.prompt_tokens, self.generated, self._first = 0, 0, True
        self._eval = model.eval
        model.eval = self

    def __call__(self, tokens: Any) -> Any:
        if self._first:
            self.prompt_tokens += len(tokens)
            self._first = False
        else:
            self.generated += len(tokens)
        return self._eval(tokens)

    def start_call(self) -> None:
        self._first = True


def record(suite: str, out: Path, limit: int | None, model: str | None) -> None:
    """Run ``suite`` here, writing every request to ``out/llama-requests.jsonl`` in the order sent:
    on the embedded model as it ran them (with the tokens it evaluated), on another model (say
    ``schema-following``: the pipeline's own prompts in minutes) as the client sent them."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / TRACE).open("w", encoding="utf-8") as trace:
        order = threading.Lock()

        def write(row: dict[str, Any]) -> None:
            with order:
                trace.write(json.dumps(row) + "\n")
                trace.flush()

        if model is None or model == "embedded":
            _trace_llama(write)
        else:
            _trace_client(write)
        from provbench.cli import main

        args = ["run", suite, "--out", str(out)] + (["--limit", str(limit)] if limit else [])
        main(args + (["--model", model] if model else []), standalone_mode=False)


def _trace_llama(write: Any) -> None:
    counters: dict[int, EvalCounter] = {}
    original = backends._generate_holding

    def traced(lock: threading.Lock, model: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        counter = counters.setdefault(id(model), EvalCounter(model))

        def create(**call: Any) -> dict[str, Any]:  # runs under the model's lock: the order it ran
            counter.start_call()
            before, started = counter.prompt_tokens, time.perf_counter()
            result = model.__class__.create_chat_completion(model, **call)
            write(
                {
                    "request": call,
                    "reply": result["choices"][0]["message"]["content"],
                    "usage": result.get("usage"),
                    "evaluated": counter.prompt_tokens - before,
                    "tokens": model.input_ids[: model.n_tokens].tolist(),
                    "seconds": round(time.perf_counter() - started, 4),
                }
            )
            return result

        model.create_chat_completion = create
        return original(lock, model, kwargs)

    backends._generate_holding = traced


def _trace_client(write: Any) -> None:
    from provbench.llm.client import LLMClient

    original = LLMClient._call_backend

    def traced(self: Any, request: dict[str, Any]) -> dict[str, Any]:
        reply = original(self, request)
        write({"request": {key: request.get(key) for key in REPLAYED}, "reply": reply["text"]})
        return reply

    LLMClient._call_backend = traced


def load_trace(out: Path) -> list[dict[str, Any]]:
    """The recorded calls (the logprobs instance's left out: it keeps no cache), with their prompt
    tokens and the context each left (tokenized here when another model answered)."""
    rows = [json.loads(line) for line in (out / TRACE).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [row for row in rows if not row["request"].get("logprobs")]
    if rows and "tokens" not in rows[0]:
        tokens = chat_tokens(_vocabulary())
        return [{**row, **_row(tokens, row["request"]["messages"], row["reply"])} for row in rows]
    return [{**row, "prompt": row["tokens"][: row["usage"]["prompt_tokens"]], "context": row["tokens"]} for row in rows]


def _vocabulary() -> Any:
    from llama_cpp import Llama

    return Llama(model_path=str(backends.embedded_model_path()), vocab_only=True, verbose=False)


def shared(a: list[int], b: list[int]) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def simulate(rows: list[dict[str, Any]], capacity_mb: int, token_bytes: int) -> int:
    """Prompt tokens evaluated by llama-cpp-python's rules (its prefix reuse, then LlamaRAMCache's
    longest-prefix restore and LRU by bytes) from each call's prompt tokens and the context it
    leaves (prompt and reply), without the model."""
    context: list[int] = []
    saved: dict[tuple[int, ...], int] = {}  # key -> recency
    evaluated = 0
    for tick, row in enumerate(rows):
        prompt = row["prompt"]
        best = max(saved, key=lambda k: shared(list(k), prompt), default=None)
        if best is not None and shared(list(best), prompt) > shared(context, prompt):
            context, saved[best] = list(best), tick
        reuse = shared(context, prompt)
        evaluated += len(prompt) - (reuse - 1 if reuse == len(prompt) else reuse)
        context = row["context"]
        if capacity_mb:
            saved[tuple(context)] = tick
            while sum(len(k) for k in saved) * token_bytes > capacity_mb << 20:
                del saved[min(saved, key=saved.get)]
    return evaluated


def backend_request(call: dict[str, Any]) -> dict[str, Any]:
    """The backend's request: as recorded at the client, or rebuilt from the arguments the
    embedded model received."""
    if "response_format" not in call and "schema" in call:
        return {key: call[key] for key in REPLAYED if key != "logprobs"}
    return {
        "messages": call["messages"],
        "max_tokens": call["max_tokens"],
        "temperature": call["temperature"],
        "seed": call.get("seed"),
        "schema": (call.get("response_format") or {}).get("schema"),
    }


def replay(rows: list[dict[str, Any]], capacity_mb: int) -> dict[str, Any]:
    """``rows`` through a fresh ``LlamaCppBackend`` whose prefix cache holds ``capacity_mb``."""
    os.environ[llama_prefix.CACHE_ENV] = str(capacity_mb)
    backends._LLAMAS.clear()
    gc.collect()
    backend = backends.LlamaCppBackend(backends.EMBEDDED_NAME, n_ctx=8192, n_threads=2)
    model, _ = backends._shared_llama(backend.path, backend.n_ctx, backend.n_threads, logits_all=False)
    counter = EvalCounter(model)
    replies, started = [], time.perf_counter()
    for row in rows:
        counter.start_call()
        replies.append(backend.complete(backend_request(row["request"]))["text"])
    cache = model.cache
    return {
        "evaluated": counter.prompt_tokens,
        "seconds": time.perf_counter() - started,
        "replies": replies,
        "saved": len(cache.cache_state) if cache else 0,
        "saved_mb": (cache.cache_size >> 20) if cache else 0,
    }


def chat_tokens(model: Any) -> Any:
    """``tokens(messages)``: the prompt tokens ``create_chat_completion`` sends for ``messages``
    (the GGUF's chat template, as llama-cpp-python applies it)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    text = model._model.token_get_text
    formatter = Jinja2ChatFormatter(
        model.metadata["tokenizer.chat_template"], text(model.token_eos()), text(model.token_bos())
    )

    def tokens(messages: list[dict[str, str]]) -> list[int]:
        result = formatter(messages=messages)
        return model.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)

    tokens.reply = lambda text: model.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    return tokens


def rows_from_records(run_dir: Path, concurrency: int) -> list[dict[str, Any]]:
    """A run's units' requests (records keep each unit's, in its order) as the model would get them
    with ``concurrency`` units at a time taking turns, units in the order they started: token
    sequences for :func:`simulate` (the reply's tokens are its text's)."""
    from provbench.audit import logged_requests
    from provbench.model import RunRecord

    tokens = chat_tokens(_vocabulary())
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = sorted(
        (RunRecord.model_validate_json(line) for line in lines if line.strip()), key=lambda r: r.started_at or ""
    )
    waiting = [
        [
            _row(tokens, [{"role": role, "content": text} for role, text in request.messages], request.reply)
            for request in logged_requests(r.requests)
        ]
        for r in records
    ]
    running: list[list[dict[str, Any]]] = []
    rows: list[dict[str, Any]] = []
    while waiting or running:
        while waiting and len(running) < concurrency:
            running.append(waiting.pop(0))
        for unit in list(running):  # one call each in turn, as the model's lock hands it over
            if unit:
                rows.append(unit.pop(0))
            if not unit:
                running.remove(unit)
    return rows


def _row(tokens: Any, messages: list[dict[str, str]], reply: str | None) -> dict[str, Any]:
    prompt = tokens(messages)
    return {"prompt": prompt, "context": prompt + tokens.reply(reply or "")}


def breakdown(run_dir: Path) -> None:
    """Print a run's fresh (not cached) calls per kind from its records."""
    kinds: dict[str, list[int]] = {}
    for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        calls = [(record["key"]["system"], c) for c in (record.get("trace") or {}).get("llm_calls") or []]
        calls += [("judge", c) for c in record.get("judge_calls") or []]
        for owner, call in calls:
            if call["cached"]:
                continue
            row = kinds.setdefault(f"{owner} / {call['purpose'].split(' ')[0]}", [0, 0, 0, 0, 0])
            reasked = call.get("attempts", 1) > 1
            row[0] += 1
            row[1] += call["prompt_tokens"]
            row[2] += call["completion_tokens"]
            row[3] += reasked
            row[4] += call["completion_tokens"] if reasked else 0
    print(f"{'kind':36} {'calls':>5} {'prompt':>7} {'completion':>10} {'re-asked':>8} {'their completion':>16}")
    for kind, row in sorted(kinds.items()):
        print(f"{kind:36} {row[0]:>5} {row[1]:>7} {row[2]:>10} {row[3]:>8} {row[4]:>16}")
    totals = [sum(column) for column in zip(*kinds.values())]
    print(f"{'total':36} {totals[0]:>5} {totals[1]:>7} {totals[2]:>10} {totals[3]:>8} {totals[4]:>16}")


def repeats(run_dir: Path) -> None:
    """Print the unit requests a run sent with the same messages as an earlier one: served from the
    cache, or generated again (their completion tokens, and how many got another reply)."""
    from provbench.audit import logged_requests
    from provbench.model import RunRecord

    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = sorted(
        (RunRecord.model_validate_json(line) for line in lines if line.strip()), key=lambda r: r.started_at or ""
    )
    first: dict[str, str | None] = {}
    cached, fresh, tokens, other_reply = 0, 0, 0, 0
    for record in records:
        calls = record.trace.llm_calls if record.trace else []
        for request, call in zip(logged_requests(record.requests), calls):
            key = json.dumps(request.messages)
            if key not in first:
                first[key] = request.reply
            elif call.cached:
                cached += 1
            else:
                fresh, tokens, other_reply = (
                    fresh + 1,
                    tokens + call.completion_tokens,
                    other_reply + (request.reply != first[key]),
                )
    print(
        f"{len(first)} distinct unit requests; {cached + fresh} sent again: {cached} from the cache, {fresh} generated again"
    )
    print(f"generated again: {tokens} completion tokens, {other_reply} with another reply than the first time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    rec = steps.add_parser("record")
    rec.add_argument("suite")
    rec.add_argument("out", type=Path)
    rec.add_argument("--limit", type=int)
    rec.add_argument("--model", help="another model than the suite's (schema-following: no model, in minutes)")
    sim = steps.add_parser("simulate")
    sim.add_argument("out", type=Path, help=f"a recorded run ({TRACE}) or any run directory (its records)")
    sim.add_argument("--concurrency", type=int, default=2, help="units taking turns, for records")
    sim.add_argument("--capacities", default="0,64,128,256,512,1024")
    sim.add_argument("--token-bytes", type=int, default=23_040, help="a saved context's bytes per token")
    rep = steps.add_parser("replay")
    rep.add_argument("out", type=Path)
    rep.add_argument("--capacities", default="0,512", help="MB; the first is the reference (0: as before)")
    rep.add_argument("--skip", type=int, default=0, help="start after the first N calls")
    rep.add_argument("--calls", type=int, help="replay only N calls")
    brk = steps.add_parser("breakdown")
    brk.add_argument("out", type=Path, help="a finished run directory")
    again = steps.add_parser("repeats")
    again.add_argument("out", type=Path, help="a finished run directory")
    args = parser.parse_args()
    if args.step == "breakdown":
        breakdown(args.out)
    elif args.step == "repeats":
        repeats(args.out)
    elif args.step == "record":
        record(args.suite, args.out, args.limit, args.model)
    elif args.step == "simulate":
        traced = (args.out / TRACE).is_file()
        rows = load_trace(args.out) if traced else rows_from_records(args.out, args.concurrency)
        measured = [row["evaluated"] for row in rows if "evaluated" in row]
        recorded = f", the recorded run evaluated {sum(measured)}" if measured else ""
        print(f"{len(rows)} calls, {sum(len(r['prompt']) for r in rows)} prompt tokens{recorded}")
        for capacity in map(int, args.capacities.split(",")):
            print(f"cache {capacity:>5} MB: {simulate(rows, capacity, args.token_bytes):>7} prompt tokens evaluated")
    else:
        rows = load_trace(args.out)[args.skip :][: args.calls]
        print(
            f"{len(rows)} calls, {sum(len(r['prompt']) for r in rows)} prompt tokens, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        results = {capacity: replay(rows, capacity) for capacity in map(int, args.capacities.split(","))}
        first = next(iter(results.values()))
        embedded = "evaluated" in rows[0]  # the recording's replies are the embedded model's
        for capacity, got in results.items():
            differ = sum(a != b for a, b in zip(got["replies"], first["replies"]))
            recorded = sum(a != r["reply"] for a, r in zip(got["replies"], rows)) if embedded else "-"
            print(
                f"cache {capacity:>5} MB: {got['evaluated']:>7} prompt tokens evaluated, {got['seconds']:7.1f} s "
                f"(x{got['seconds'] / first['seconds']:.2f}), replies differing from the first row's {differ}, "
                f"from the recording's {recorded}; {got['saved']} contexts saved ({got['saved_mb']} MB)"
            )


if __name__ == "__main__":
    main()
