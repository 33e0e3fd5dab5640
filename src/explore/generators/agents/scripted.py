"""A deterministic, scripted OpenAI Responses API for the real Codex CLI (a custom model provider's
`base_url` pointing at it): test support, as `anthropic/scripted.py` is for the Messages API.

Each POST to `…/responses` streams one output item (server-sent events) chosen by `reply(body,
turn)` — the turn is the number of tool calls the conversation already holds — then
`response.completed` with fixed token counts, which Codex adds up into its `turn.completed` event."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

USAGE = {
    "input_tokens": 1000,
    "input_tokens_details": {"cached_tokens": 100},
    "output_tokens": 50,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 1050,
}
"""What every scripted response says it used."""


def message(text: str) -> dict[str, Any]:
    """The assistant's last word (the turn ends)."""
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def apply_patch(patch: str) -> dict[str, Any]:
    """Codex's own edit tool (freeform): `*** Begin Patch … *** End Patch`."""
    return {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "status": "completed"}


@dataclass
class ScriptedResponses:
    reply: Callable[[dict[str, Any], int], dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or not path.split("?")[0].endswith("/responses"):
            return 404, {}, json.dumps({"error": {"message": f"no {path} here"}}).encode()
        data = json.loads(body or b"{}")
        with self._lock:
            self.requests.append(data)
            number = len(self.requests)
        turn = sum(1 for item in data.get("input", []) if item.get("type") in ("function_call", "custom_tool_call"))
        item = {"id": f"item_{number}", "call_id": f"call_{number}", **self.reply(data, turn)}
        response = {"id": f"resp_{number}", "object": "response", "status": "completed", "usage": USAGE}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {**response, "status": "in_progress"}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response},
        ]
        payload = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        return 200, {"content-type": "text/event-stream"}, payload
