"""A deterministic, scripted Messages API — the one fake explore allows, at the network edge.

Tests and benchmarks drive the real SDK against it, either in-process through
`httpx2.MockTransport(api.handle_httpx)` or over real HTTP with `serve(api)` and
ANTHROPIC_BASE_URL. Replies are chosen from the request alone (role by its tools, turn by
the number of assistant messages), so concurrent conversations stay deterministic. Token
counts are ~4 characters a token, and a `cache_control` block counts as a cache write the
first time it is seen and a cache read after — as the real API bills it."""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2

Step = list[tuple[str, dict[str, Any]]] | str
"""One assistant turn: tool calls [(name, input), …], or plain text (end_turn)."""


@dataclass
class Failure:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    """Only requests for this model fail (None: any)."""


@dataclass
class ScriptedAPI:
    debugger: list[Step] = field(default_factory=list)
    coder: list[Step] = field(default_factory=list)
    test_writer: list[Step] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    """HTTP errors served, in order, before scripted replies (matching model only)."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    """(model, usage) of every scripted reply, to check accounting against."""
    on_reply: Callable[[str, int, dict[str, Any]], Step | None] | None = None
    """Optional override: (role, turn, body) → a step, or None for the script's."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: set[str] = set()
        self._ids = 0

    def forget_cache(self) -> None:
        """As if the prompt cache expired: the next cache_control blocks are written again."""
        with self._lock:
            self._cached.clear()

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        """A scripted failure answers any request (another CLI's protocol too); replies need /v1/messages."""
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            data = {}
        with self._lock:
            self.requests.append({"model": data.get("model"), "body": data, "headers": headers, "path": path})
            for failure in self.failures:
                if failure.model in (None, data.get("model")):
                    self.failures.remove(failure)
                    kind = {
                        401: "authentication_error",
                        403: "permission_error",
                        429: "rate_limit_error",
                        529: "overloaded_error",
                    }.get(failure.status, "api_error")
                    payload = {"type": "error", "error": {"type": kind, "message": f"scripted {failure.status}"}}
                    return failure.status, failure.headers, json.dumps(payload).encode()
        if method != "POST" or not path.split("?")[0].endswith("/v1/messages"):
            return (
                404,
                {},
                json.dumps({"type": "error", "error": {"type": "not_found_error", "message": path}}).encode(),
            )
        # outside the lock: an override may block one conversation while the others go on
        step = self.on_reply(self.role(data), self.turn(data), data) if self.on_reply else None
        with self._lock:
            reply = self._reply(data, step)
        if data.get("stream"):
            return 200, {"content-type": "text/event-stream"}, sse(reply)
        return 200, {"content-type": "application/json"}, json.dumps(reply).encode()

    def role(self, data: dict[str, Any]) -> str:
        names = {t.get("name") for t in data.get("tools", [])}
        if "write_test" in names:
            return "test_writer"
        return "debugger" if "submit_diagnosis" in names else "coder"

    @staticmethod
    def workdir(data: dict[str, Any]) -> str | None:
        """The working directory Claude Code names in its prompt: which candidate's worktree is asking."""
        found = re.search(r"Primary working directory: (\S+)", json.dumps(data).replace("\\n", "\n"))
        return found.group(1) if found else None

    @staticmethod
    def turn(data: dict[str, Any]) -> int:
        return sum(1 for m in data.get("messages", []) if m.get("role") == "assistant")

    def _reply(self, data: dict[str, Any], step: Step | None = None) -> dict[str, Any]:
        turn = self.turn(data)
        script = {"debugger": self.debugger, "test_writer": self.test_writer}.get(self.role(data), self.coder)
        if step is None:
            step = script[turn] if turn < len(script) else "nothing more to do"
        content: list[dict[str, Any]] = []
        if isinstance(step, str):
            content.append({"type": "text", "text": step})
        else:
            for name, tool_input in step:
                self._ids += 1
                content.append({"type": "tool_use", "id": f"toolu_{self._ids:06d}", "name": name, "input": tool_input})
        usage = self.usage(data, content)
        self.served.append((str(data.get("model")), usage))
        return {
            "id": f"msg_{self._ids:06d}_{turn}",
            "type": "message",
            "role": "assistant",
            "model": data.get("model"),
            "content": content,
            "stop_reason": "end_turn" if isinstance(step, str) else "tool_use",
            "stop_sequence": None,
            "usage": usage,
        }

    def usage(self, data: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, int]:
        """~4 characters a token; cache_control blocks are cache writes once, then cache reads."""
        cached_chars = write_chars = 0
        prefix = json.dumps([data.get("tools"), data.get("system")], sort_keys=True)
        for message in data.get("messages", []):
            blocks = message.get("content")
            for block in blocks if isinstance(blocks, list) else []:
                if isinstance(block, dict) and block.get("cache_control"):
                    text = json.dumps(block.get("text", block), sort_keys=True)
                    key = hashlib.sha256((data.get("model", "") + prefix + text).encode()).hexdigest()
                    if key in self._cached:
                        cached_chars += len(prefix) + len(text)
                    else:
                        self._cached.add(key)
                        write_chars += len(prefix) + len(text)
        total = len(json.dumps({k: data.get(k) for k in ("system", "tools", "messages")}))
        return {
            "input_tokens": max(1, (total - cached_chars - write_chars) // 4),
            "output_tokens": max(1, len(json.dumps(content)) // 4),
            "cache_creation_input_tokens": write_chars // 4,
            "cache_read_input_tokens": cached_chars // 4,
        }

    # -- adapters ----------------------------------------------------------------------------
    def handle_httpx(self, request: httpx2.Request) -> httpx2.Response:
        status, headers, body = self.handle(request.method, request.url.path, dict(request.headers), request.content)
        return httpx2.Response(status, headers=headers, content=body)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle_httpx)


def sse(reply: dict[str, Any]) -> bytes:
    """A finished reply as the Messages API streams it (`"stream": true`): server-sent events."""
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {"message": {**reply, "content": [], "stop_reason": None, "usage": {**reply["usage"], "output_tokens": 0}}},
        )
    ]
    start: dict[str, Any]
    for index, block in enumerate(reply["content"]):
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"index": index, "content_block": start}),
            ("content_block_delta", {"index": index, "delta": delta}),
            ("content_block_stop", {"index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": reply["usage"]["output_tokens"]},
            },
        ),
        ("message_stop", {}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps({'type': name, **body})}\n\n" for name, body in events).encode()


@contextmanager
def serve(api: ScriptedAPI) -> Iterator[str]:
    """Serve `api` over HTTP on 127.0.0.1; yields the base URL for ANTHROPIC_BASE_URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            status, headers, payload = api.handle("POST", self.path, dict(self.headers), body)
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
