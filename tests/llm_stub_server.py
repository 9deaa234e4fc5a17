"""A small OpenAI-compatible HTTP server on 127.0.0.1 for the LLM client's tests.

Why a real socket instead of litellm's ``mock_response``: what the issue is about happens on the
wire (which ``response_format`` the request carries, a server that is down, slow, answers garbage
or answers far too much), and only a real HTTP exchange through litellm's OpenAI client shows it.
The server binds loopback only, on a free port, runs in a daemon thread, and every handler has
a bounded sleep; ``stop()`` (or the context manager) shuts it down.

``answer`` decides each reply from the request body: it returns an ``Reply`` (status, body bytes,
delay). ``requests`` keeps every parsed request body for the test's assertions.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    delay_s: float = 0.0  # before the headers (a slow server); bounded by MAX_DELAY_S
    content_type: str = "application/json"


MAX_DELAY_S = 10.0


def chat_reply(content: str, *, prompt_tokens: int = 100, completion_tokens: int = 10,
               finish_reason: str = "stop") -> Reply:
    """A well-formed chat.completion carrying ``content``."""
    body = {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}
    return Reply(body=json.dumps(body).encode())


class StubServer:
    """``with StubServer(answer) as s: LLMConfig(model="openai/stub", api_base=s.base_url, ...)``."""

    def __init__(self, answer: Callable[[dict[str, Any]], Reply]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802: the model list, as `worldmind llm check` asks for it
                body = json.dumps({"object": "list", "data": [{"id": "stub", "object": "model"}]}).encode()
                self.send_response(200 if self.path.rstrip("/").endswith("/models") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(min(length, 50 << 20))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw[:200].decode("utf-8", "replace")}
                outer.requests.append(body)
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = outer.answer(body)
                if reply.delay_s:
                    time.sleep(min(reply.delay_s, MAX_DELAY_S))
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to do

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "StubServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def closed_port_url() -> str:
    """A loopback URL nothing listens on (bound, then closed: connection refused at once)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"
