"""OpenAI's Codex CLI (`codex exec`): the prompt on stdin (no prompt argument), its `workspace-write` sandbox (edits in
the worktree, no network for the commands it runs; `exec` never asks for approval), no web search,
no session kept. Its `--json` events are the transcript: `thread.started` names the session,
`turn.completed` counts tokens (no cost: set `price`), `error` / `turn.failed` say what failed."""

from __future__ import annotations

import re
from pathlib import Path

from ...model.usage import LLMUsage, Usage
from .base import AgentSettings, Outcome, Role, json_objects
from .versions import Support


class Codex:
    name = "codex"
    install = "npm install -g @openai/codex"
    default_bin = "codex"
    state = ("~/.codex",)
    support = Support(
        required=("--json", "--sandbox"),
        optional={"--skip-git-repo-check": 0, "--ephemeral": 0, "--color": 1},
        help_args=("exec", "--help"),
    )

    def argv(self, settings: AgentSettings, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        flags = [
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "--skip-git-repo-check",
            "--ephemeral",
            "--color",
            "never",
            "--config",
            'web_search="disabled"',
        ]
        return [*flags, "--model", settings.model] if settings.model else flags

    def env(self, settings: AgentSettings) -> dict[str, str]:
        return {}

    def parse(self, output: str) -> Outcome:
        outcome, tokens = Outcome(), LLMUsage()
        for event in json_objects(output):
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "thread.started":
                outcome.session_id = event.get("thread_id")
            elif kind == "turn.completed":
                usage = event.get("usage") or {}
                cached = int(usage.get("cached_input_tokens") or 0)
                tokens += LLMUsage(
                    input_tokens=int(usage.get("input_tokens") or 0) - cached,
                    cache_read_input_tokens=cached,
                    output_tokens=int(usage.get("output_tokens") or 0),
                    calls=1,
                )
            elif kind == "item.completed" and (event.get("item") or {}).get("type") == "agent_message":
                outcome.text = str(event["item"].get("text") or "")
            elif kind in ("error", "turn.failed"):
                outcome.error = str(event.get("message") or (event.get("error") or {}).get("message") or kind)
        outcome.usage = Usage(llm=tokens)
        status = re.search(r"status:? (\d{3})", outcome.error or "")
        outcome.status = int(status.group(1)) if status else None
        return outcome
