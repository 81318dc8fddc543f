"""Benchmark: how many prompt tokens the embedded model evaluates, and how long it takes.

Two steps:

* ``record SUITE OUT``: runs the suite (``provbench run SUITE --out OUT``, in this process) and
  writes ``OUT/llama-requests.jsonl``: every request the embedded model received, in the order
  it ran them (under its lock), with the reply, the prompt tokens it evaluated and the seconds.
* ``replay OUT``: sends that sequence again through ``LlamaCppBackend``, once as the run did and
  once with the prefix reuse of this change, each on a fresh model, and prints per mode the prompt
  tokens evaluated, the wall time, their ratio, and how many replies differ from the recording.

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


def record(suite: str, out: Path, limit: int | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    trace = (out / TRACE).open("w", encoding="utf-8")
    counters: dict[int, EvalCounter] = {}
    original = backends._generate_holding
    order = threading.Lock()

    def traced(lock: threading.Lock, model: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        counter = counters.setdefault(id(model), EvalCounter(model))

        def create(**call: Any) -> dict[str, Any]:  # runs under the model's lock: the order it ran
            counter.start_call()
            before, started = counter.prompt_tokens, time.perf_counter()
            result = model.__class__.create_chat_completion(model, **call)
            with order:
                trace.write(json.dumps({"request": call, "reply": result["choices"][0]["message"]["content"],
                                        "usage": result.get("usage"), "evaluated": counter.prompt_tokens - before,
                                        "tokens": model.input_ids[:model.n_tokens].tolist(),
                                        "seconds": round(time.perf_counter() - started, 4)}) + "\n")
                trace.flush()
            return result

        model.create_chat_completion = create
        return original(lock, model, kwargs)

    backends._generate_holding = traced
    from provbench.cli import main

    args = ["run", suite, "--out", str(out)] + (["--limit", str(limit)] if limit else [])
    try:
        main(args, standalone_mode=False)
    finally:
        trace.close()


def load_trace(out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (out / TRACE).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if not row["request"].get("logprobs")]  # the logprobs instance keeps no cache


def shared(a: list[int], b: list[int]) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def simulate(rows: list[dict[str, Any]], capacity_mb: int, token_bytes: int) -> int:
    """Prompt tokens evaluated by llama-cpp-python's rules (its prefix reuse, then LlamaRAMCache's
    longest-prefix restore and LRU by bytes) from the recorded token sequences, without the model."""
    context: list[int] = []
    saved: dict[tuple[int, ...], int] = {}  # key -> recency
    evaluated = 0
    for tick, row in enumerate(rows):
        prompt = row["tokens"][:row["usage"]["prompt_tokens"]]
        best = max(saved, key=lambda k: shared(list(k), prompt), default=None)
        if best is not None and shared(list(best), prompt) > shared(context, prompt):
            context, saved[best] = list(best), tick
        reuse = shared(context, prompt)
        evaluated += len(prompt) - (reuse - 1 if reuse == len(prompt) else reuse)
        context = row["tokens"]
        if capacity_mb:
            saved[tuple(context)] = tick
            while sum(len(k) for k in saved) * token_bytes > capacity_mb << 20:
                del saved[min(saved, key=saved.get)]
    return evaluated


def backend_request(call: dict[str, Any]) -> dict[str, Any]:
    """The backend's request that produced the recorded ``create_chat_completion`` arguments."""
    request = {"messages": call["messages"], "max_tokens": call["max_tokens"],
               "temperature": call["temperature"], "seed": call.get("seed"),
               "schema": (call.get("response_format") or {}).get("schema")}
    return request


def replay(rows: list[dict[str, Any]], capacity_mb: int) -> dict[str, Any]:
    """``rows`` through a fresh ``LlamaCppBackend`` whose prefix cache holds ``capacity_mb``."""
    os.environ[llama_prefix.CACHE_ENV] = str(capacity_mb)
    backends._LLAMAS.clear()
    gc.collect()
    backend = backends.LlamaCppBackend(backends.EMBEDDED_NAME, n_ctx=8192, n_threads=2)
    model, _ = backends._shared_llama(backend.path, backend.n_ctx, backend.n_threads, logits_all=False)
    counter = EvalCounter(model)
    differ, started = 0, time.perf_counter()
    for row in rows:
        counter.start_call()
        differ += backend.complete(backend_request(row["request"]))["text"] != row["reply"]
    cache = model.cache
    return {"evaluated": counter.prompt_tokens, "seconds": time.perf_counter() - started, "differ": differ,
            "saved": len(cache.cache_state) if cache else 0, "saved_mb": (cache.cache_size >> 20) if cache else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    rec = steps.add_parser("record")
    rec.add_argument("suite")
    rec.add_argument("out", type=Path)
    rec.add_argument("--limit", type=int)
    sim = steps.add_parser("simulate")
    sim.add_argument("out", type=Path)
    sim.add_argument("--capacities", default="0,64,128,256,512,1024")
    sim.add_argument("--token-bytes", type=int, default=23_040, help="a saved context's bytes per token")
    rep = steps.add_parser("replay")
    rep.add_argument("out", type=Path)
    rep.add_argument("--capacities", default="0,512", help="MB; the first is the reference (0: as before)")
    rep.add_argument("--calls", type=int, help="replay only the first N calls")
    args = parser.parse_args()
    if args.step == "record":
        record(args.suite, args.out, args.limit)
    elif args.step == "simulate":
        rows = load_trace(args.out)
        prompts = sum(row["usage"]["prompt_tokens"] for row in rows)
        print(f"{len(rows)} calls, {prompts} prompt tokens, recorded run evaluated "
              f"{sum(row['evaluated'] for row in rows)}")
        for capacity in map(int, args.capacities.split(",")):
            print(f"cache {capacity:>5} MB: {simulate(rows, capacity, args.token_bytes):>7} prompt tokens evaluated")
    else:
        rows = load_trace(args.out)[:args.calls]
        print(f"{len(rows)} calls, load average {os.getloadavg()[0]:.1f}")
        results = {capacity: replay(rows, capacity) for capacity in map(int, args.capacities.split(","))}
        first = next(iter(results.values()))
        for capacity, got in results.items():
            print(f"cache {capacity:>5} MB: {got['evaluated']:>7} prompt tokens evaluated, {got['seconds']:7.1f} s "
                  f"(x{got['seconds'] / first['seconds']:.2f}), {got['differ']} replies differ from the recording, "
                  f"{got['saved']} contexts saved ({got['saved_mb']} MB)")


if __name__ == "__main__":
    main()
