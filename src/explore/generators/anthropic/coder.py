"""The coder: applies one diagnosis inside one candidate's worktree with read_file /
replace_in_file / write_file, and says it is done with `finish`. Turns are bounded; refused
paths and failed edits go back to the model as errors and the candidate carries on."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from .session import ReAsk, Session, Transcript, converse
from .tools import CODER_TOOLS, ToolError, Workspace

SYSTEM = """You are a coder working for explore, a tool that repairs failing test suites.
You work in one git worktree of the repository; every path is relative to its root and must
stay inside it. Apply the diagnosis you are given with replace_in_file (exact text, occurring
once) or write_file, reading files first. Test files are read-only unless stated otherwise: fix
the code under test. Make the smallest change that repairs the failures, then call finish with
a summary and your confidence (0-1) that the failing tests now pass."""


class Finish(BaseModel):
    summary: str
    confidence: float = Field(ge=0, le=1)


@dataclass
class CoderResult:
    summary: str
    confidence: float
    finished: bool


def plan_text(diagnosis: dict[str, Any], variant: int, of: int, guidance: str, allow_test_edits: bool) -> str:
    parts = [guidance, "## Diagnosis to apply", "```json", json.dumps(diagnosis, indent=1), "```"]
    if of > 1:
        parts.append(f"You are coder {variant + 1} of {of}, working independently on this diagnosis.")
    if allow_test_edits:
        parts.append("The user allows edits to test files when the tests themselves are wrong.")
    parts.append("Make the change now, then call finish.")
    return "\n".join(p for p in parts if p)


async def apply(
    session: Session,
    workspace: Workspace,
    context_text: str,
    task: str,
    max_turns: int,
    transcript: Transcript,
    after_first_turn: Callable[[], Awaitable[None]] | None = None,
) -> CoderResult:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": context_text, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": task},
            ],
        }
    ]
    finished: Finish | None = None
    # on the last model the edits made so far are still worth testing: keep going
    reask = ReAsk(session, "finish", last_keeps_going=True)

    async def run(name: str, args: dict[str, Any]) -> tuple[str, bool]:
        nonlocal finished
        if name == "finish":
            try:
                finished = Finish.model_validate(args)
            except ValidationError as exc:
                reask.invalid()
                return f"invalid finish input, call finish again: {exc}", True
            return "done", False
        try:
            return workspace.run(name, args), False
        except ToolError as exc:
            return str(exc), True

    turns = await converse(
        session,
        messages,
        run,
        transcript,
        max_turns,
        lambda: finished is not None,
        "Use the tools to make the change, then call finish.",
        after_first_turn,
    )
    if finished is not None:
        return CoderResult(finished.summary, finished.confidence, True)
    changed = ", ".join(sorted(workspace.changed)) or "nothing"
    return CoderResult(f"stopped without finish after {turns} turn(s); changed {changed}", 0.2, False)


def tools() -> list[dict[str, Any]]:
    return list(CODER_TOOLS)
