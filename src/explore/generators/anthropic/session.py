"""One conversation with a role's model chain: turns with fallback to the next model, tool
dispatch with errors returned as `is_error` results, and a transcript file — with any
credential from the environment redacted from everything written."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic

from ...decide.redaction import redact
from . import cost
from .client import ChainExhausted, ModelClient, ModelFailed, strip_thinking

log = logging.getLogger("explore.generators.anthropic")


class Transcript:
    """JSON lines of a conversation, kept outside the worktree for the person reading the run."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, **event: Any) -> None:
        if self.path is None:
            return
        line = redact(json.dumps(event, default=str, ensure_ascii=False))
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class Session:
    """Turns of one conversation; falls back along `chain` when a model fails."""

    def __init__(
        self,
        client: ModelClient,
        api: anthropic.AsyncAnthropic,
        role: str,
        chain: list[str],
        params: dict[str, Any],
        transcript: Transcript,
    ) -> None:
        self.client = client
        self.api = api
        self.role = role
        self.chain = list(chain)
        self.index = 0
        self.params = params
        self.transcript = transcript
        self.usage = cost.empty_usage()
        self.failures: list[str] = []
        self.kinds: list[str] = []
        self.switched = False

    @property
    def model(self) -> str:
        return self.chain[self.index]

    def fail_model(self, reason: str, kind: str = "output") -> None:
        """Count a failure of the current model (`api`: unavailable; `output`: invalid or weak
        answers) and move on; ChainExhausted after the last."""
        self.failures.append(reason)
        self.kinds.append(kind)
        self.transcript.write(event="model_failed", model=self.model, reason=reason)
        log.warning("%s: %s — falling back", self.role, reason)
        if self.index + 1 >= len(self.chain):
            raise ChainExhausted(self.role, self.failures, self.kinds)
        self.index += 1
        self.switched = True

    async def turn(self, messages: list[dict[str, Any]]) -> Any:
        """One assistant message; the assistant turn is appended to `messages`."""
        while True:
            if self.switched:
                messages[:] = strip_thinking(messages)
                self.switched = False
            try:
                message, usage = await self.client.create(self.api, self.model, {**self.params, "messages": messages})
            except ModelFailed as exc:
                self.fail_model(str(exc), "api")
                continue
            cost.add(self.usage, usage)
            content = [block.to_dict() for block in message.content]
            messages.append({"role": "assistant", "content": content})
            self.transcript.write(
                event="turn", model=self.model, stop_reason=message.stop_reason, content=content, usage=usage
            )
            return message


class ReAsk:
    """An invalid answer is sent back once with its error; a second one on the same model counts
    as a failure of that model (the next one takes over). `last_keeps_going`: on the last model,
    keep re-asking rather than end the conversation (the turn bound still holds)."""

    def __init__(self, session: Session, what: str, last_keeps_going: bool = False) -> None:
        self.session, self.what, self.last_keeps_going = session, what, last_keeps_going
        self.count, self.model = 0, session.model

    def invalid(self) -> None:
        if self.model != self.session.model:
            self.count, self.model = 0, self.session.model
        self.count += 1
        if self.count < 2:
            return
        self.count = 0
        if self.last_keeps_going and self.session.index + 1 >= len(self.session.chain):
            return
        self.session.fail_model(f"{self.session.model}: invalid {self.what} twice", "output")

    def valid(self) -> None:
        self.count = 0


ToolRunner = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]


async def answer_tools(message: Any, run: ToolRunner, transcript: Transcript) -> list[dict[str, Any]]:
    """tool_result blocks for every tool_use of `message` (errors as is_error, never raised)."""
    results = []
    for block in message.content:
        if block.type != "tool_use":
            continue
        text, is_error = await run(block.name, block.input if isinstance(block.input, dict) else {})
        transcript.write(event="tool", name=block.name, input=block.input, is_error=is_error, result=text[:2000])
        results.append({"type": "tool_result", "tool_use_id": block.id, "content": redact(text), "is_error": is_error})
    return results


async def converse(
    session: Session,
    messages: list[dict[str, Any]],
    run: ToolRunner,
    transcript: Transcript,
    max_turns: int,
    finished: Callable[[], bool],
    nudge: str,
    after_first_turn: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Turns until `finished()` (the role's closing tool was called) or `max_turns`: each turn's
    tool calls are answered; a turn without any gets `nudge` once, a second one ends the
    conversation. Returns the number of turns taken."""
    nudged = False
    for turn in range(max_turns):
        message = await session.turn(messages)
        if turn == 0 and after_first_turn is not None:
            await after_first_turn()
        results = await answer_tools(message, run, transcript)
        if finished():
            return turn + 1
        if results:
            messages.append({"role": "user", "content": results})
            continue
        if nudged:
            return turn + 1
        nudged = True
        messages.append({"role": "user", "content": nudge})
    return max_turns
