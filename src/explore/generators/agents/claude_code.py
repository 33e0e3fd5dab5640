"""Claude Code (`claude -p`): edits allowed in the worktree and nothing else — only the file tools
(no shell, no web), edits accepted, and any other permission request denied automatically, so it
never waits on a prompt. Its `stream-json` output is the transcript; the last line, the result,
says the cost, tokens, session and any API error."""

from __future__ import annotations

import os
from pathlib import Path

from ...model.usage import LLMUsage, Usage
from .base import AgentSettings, Outcome, Role, last_result
from .versions import Support

TOOLS = "Read,Edit,Write,Glob,Grep"


class ClaudeCode:
    name = "claude-code"
    install = "npm install -g @anthropic-ai/claude-code"
    default_bin = "claude"
    state = ("~/.claude", "~/.claude.json")
    support = Support(
        required=("--print", "--output-format", "--permission-mode", "--tools"),
        optional={"--permission-prompts": 1, "--no-session-persistence": 0, "--max-budget-usd": 1},
        minimum="2.1.197",
    )
    """Without --permission-prompts (2.1.197 has none), -p denies a prompt by itself (2.1.197 measured:
    a write outside the worktree comes back `permission_denials`, the turn goes on); without
    --max-budget-usd explore's own check before each run still holds the budget."""

    def argv(self, settings: AgentSettings, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        flags = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--permission-prompts",
            "none",
            "--tools",
            TOOLS,
            "--no-session-persistence",
        ]
        if settings.model:
            flags += ["--model", settings.model]
        if budget_usd is not None:
            flags += ["--max-budget-usd", f"{budget_usd:.4f}"]
        return flags

    def env(self, settings: AgentSettings) -> dict[str, str]:
        """No telemetry or update checks; few retries of its own, so a refused key or a busy service
        comes back in seconds (a chain then moves on)."""
        return {
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": os.environ.get("CLAUDE_CODE_MAX_RETRIES", "2"),
        }

    def parse(self, output: str) -> Outcome:
        result = last_result(output)
        if result is None:
            return Outcome(error=None)
        usage = result.get("usage") or {}
        tokens = LLMUsage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            cost_usd=float(result.get("total_cost_usd") or 0.0),
            calls=int(result.get("num_turns") or 0),
        )
        text = str(result.get("result") or "")
        return Outcome(
            text=text,
            session_id=result.get("session_id"),
            usage=Usage(llm=tokens),
            error=(text or str(result.get("subtype"))) if result.get("is_error") else None,
            status=result.get("api_error_status"),
        )
