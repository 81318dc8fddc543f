"""A loopback OpenAI-compatible chat server with a fixed latency, for benchmarks and tests.

It answers ``POST /v1/chat/completions`` like :class:`~provbench.testing.SchemaFollowingBackend`
(a reply valid against the request's ``response_format`` JSON schema, chosen from a hash of the
messages), after sleeping ``latency_s``. It listens on 127.0.0.1 only, serves at most
``max_inflight`` requests at once (more wait their turn) and stops by itself after ``idle_s``
seconds without a request or ``lifetime_s`` seconds in all, so a benchmark that dies cannot leave
it running.

    with LoopbackServer(latency_s=0.5) as server:
        make_llm("openai/bench", api_base=server.api_base, api_key="none")

Run standalone (a separate process keeps its CPU out of the caller's figures):
``python -m provbench.testing.server --latency 0.5`` prints ``READY <api_base>`` once listening.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .llms import SchemaFollowingBackend


class LoopbackServer:
    """Start on enter (or :meth:`start`), stop on exit, after ``idle_s`` idle or ``lifetime_s`` in all."""

    def __init__(
        self, latency_s: float = 0.5, *, max_inflight: int = 64, idle_s: float = 120.0, lifetime_s: float = 3600.0
    ) -> None:
        self.latency_s = latency_s
        self.idle_s = idle_s
        self.lifetime_s = lifetime_s
        self.backend = SchemaFollowingBackend()
        self.requests = 0
        self._slots = threading.BoundedSemaphore(max_inflight)
        self._count_lock = threading.Lock()
        self._last_request = time.monotonic()
        self._stopped = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True

    @property
    def api_base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "LoopbackServer":
        threading.Thread(target=self._httpd.serve_forever, name="loopback-llm", daemon=True).start()
        threading.Thread(target=self._watchdog, name="loopback-llm-watchdog", daemon=True).start()
        return self

    def stop(self) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            self._httpd.shutdown()
            self._httpd.server_close()

    def wait(self) -> None:
        self._stopped.wait()

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _watchdog(self) -> None:
        started = time.monotonic()
        while not self._stopped.wait(0.5):
            now = time.monotonic()
            if now - self._last_request > self.idle_s or now - started > self.lifetime_s:
                self.stop()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion for one request body, ``latency_s`` after it arrived."""
        with self._slots:
            with self._count_lock:
                self.requests += 1
                self._last_request = time.monotonic()
            started = time.monotonic()
            fmt = body.get("response_format") or {}
            schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
            out = self.backend.complete({"messages": body.get("messages") or [], "schema": schema})
            # the latency is the whole reply time, as a real API's is: writing the reply is part of it
            time.sleep(max(0.0, self.latency_s - (time.monotonic() - started)))
        return {
            "id": f"loopback-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "loopback"),
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": out["text"]}}
            ],
            "usage": {
                "prompt_tokens": out["prompt_tokens"],
                "completion_tokens": out["completion_tokens"],
                "total_tokens": out["prompt_tokens"] + out["completion_tokens"],
            },
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections as with a real API
            # headers and body go out as two writes: with Nagle's algorithm on, the body waits for
            # the client's delayed ACK of the headers (~40 ms a reply on Linux), which no real API adds
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # the http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._send(400, {"error": {"message": "request body is not JSON"}})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                self._send(200, server.answer(body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # quiet: a benchmark prints its own figures
                pass

        return Handler


def spawn(latency: float, idle: float = 600.0) -> tuple[subprocess.Popen, str]:
    """The server in a child process (so its threads take no share of the measured process's
    interpreter): the process and its API base, once it listens. The caller kills the process."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "provbench.testing.server", "--latency", str(latency), "--idle", str(idle)],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().strip()
    if not line.startswith("READY "):
        proc.kill()
        raise RuntimeError(f"loopback server did not start: {line!r}")
    return proc, line.removeprefix("READY ")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible chat server with a fixed latency.")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request")
    parser.add_argument("--max-inflight", type=int, default=64)
    parser.add_argument("--idle", type=float, default=120.0, help="stop after this many idle seconds")
    parser.add_argument("--lifetime", type=float, default=3600.0, help="stop after this many seconds in all")
    args = parser.parse_args(argv)
    server = LoopbackServer(
        args.latency, max_inflight=args.max_inflight, idle_s=args.idle, lifetime_s=args.lifetime
    ).start()
    print(f"READY {server.api_base}", flush=True)
    server.wait()
    print(f"served {server.requests} request(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
