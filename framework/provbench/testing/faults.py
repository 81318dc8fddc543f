"""A loopback OpenAI-compatible chat server that injects faults, for reliability tests and benchmarks.

It listens on 127.0.0.1 only, answers ``POST /v1/chat/completions`` with ``reply(messages, schema)``
and, for a seeded fraction ``rate`` of requests, injects one fault instead:

    429           rate limited (with Retry-After: ``retry_after`` seconds, default 0)
    500           server error
    hang          waits ``hang_s`` before answering (the client's timeout should fire first)
    invalid_json  the reply content is not JSON when a schema was asked, else the body is cut short
    reset         the TCP connection is reset without a reply

``first_faults`` injects the named faults into the first requests, in order (a 429 then a success,
say), before the seeded ones. It is bounded: after ``max_requests`` it answers 503 to everything,
and it shuts itself down after ``lifetime_s`` seconds even if the test forgets to.
"""

from __future__ import annotations

import json
import random
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

FAULTS = ("429", "500", "hang", "invalid_json", "reset")


class FaultServer:
    def __init__(
        self,
        reply: Callable[[list[dict], dict | None], str],
        *,
        rate: float = 0.0,
        faults: tuple[str, ...] = FAULTS,
        seed: int = 0,
        hang_s: float = 2.0,
        max_requests: int = 5000,
        lifetime_s: float = 600.0,
        retry_after: str = "0",
        first_faults: tuple[str, ...] = (),
    ) -> None:
        self.reply, self.rate, self.faults, self.hang_s = reply, rate, faults, hang_s
        self.retry_after, self.first_faults = retry_after, tuple(first_faults)
        self.arrivals: list[float] = []  # monotonic time of every request
        self.models: list[str] = []  # the model every request named
        self.max_requests = max_requests
        self.requests = 0
        self.injected: dict[str, int] = {name: 0 for name in (*faults, *first_faults)}
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime_s, self.stop)
        self._timer.daemon = True

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "FaultServer":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FaultServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_fault(self) -> str | None:
        with self._lock:
            self.requests += 1
            self.arrivals.append(time.monotonic())
            if self.requests > self.max_requests:
                return "exhausted"
            if self.requests <= len(self.first_faults):
                fault = self.first_faults[self.requests - 1]
                self.injected[fault] += 1
                return fault
            if self._rng.random() >= self.rate:
                return None
            fault = self._rng.choice(self.faults)
            self.injected[fault] += 1
            return fault


def _handler_for(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:  # http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            server.models.append(str(body.get("model", "")))
            fault = server.next_fault()
            schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
            if fault == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if fault in ("429", "500", "exhausted"):
                status = {"429": 429, "500": 500, "exhausted": 503}[fault]
                return self._send(status, json.dumps({"error": {"message": f"injected {fault}", "type": "fault"}}))
            if fault == "hang":
                time.sleep(server.hang_s)
            text = server.reply(body.get("messages", []), schema)
            if fault == "invalid_json":
                if schema is not None:
                    text = text[: max(1, len(text) // 2)]  # a reply cut mid-JSON
                else:
                    return self._send(200, '{"id": "x", "object": "chat.completion", "choices": [')
            self._send(200, json.dumps(_completion(body, text)))

        def _send(self, status: int, payload: str) -> None:
            data = payload.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", server.retry_after)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout fired)
                pass

    return Handler


def _completion(body: dict, text: str) -> dict:
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "toy"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt + len(text.split()),
        },
    }
