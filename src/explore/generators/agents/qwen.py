"""Qwen Code (`qwen`), a Gemini CLI fork: the prompt on stdin, `auto-edit` approval (file edits
accepted, nothing else approved in headless mode). Its `--output-format json` messages end with a
`result` in Claude Code's shape: the result text, the session, tokens under `usage` (no cost:
set `price`) and, on failure, `is_error` with `error.message`."""

from __future__ import annotations

from pathlib import Path

from ...model.usage import LLMUsage, Usage
from .base import AgentSettings, Outcome, Role, last_result
from .versions import Support

ASK = "Do the task given on standard input."


class Qwen:
    name = "qwen"
    install = "npm install -g @qwen-code/qwen-code"
    default_bin = "qwen"
    state = ("~/.qwen",)
    support = Support(required=("--output-format", "--approval-mode"))

    def argv(self, settings: AgentSettings, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        flags = ["--output-format", "json", "--approval-mode", "auto-edit"]
        return [*flags, *(["--model", settings.model] if settings.model else []), ASK]

    def env(self, settings: AgentSettings) -> dict[str, str]:
        return {}

    def parse(self, output: str) -> Outcome:
        result = last_result(output)
        if result is None:
            return Outcome()
        usage = result.get("usage") or {}
        tokens = LLMUsage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
            calls=int(result.get("num_turns") or 0),
        )
        error = result.get("error") if result.get("is_error") else None
        message = (
            (str(error.get("message")) if isinstance(error, dict) else str(error or "error"))
            if result.get("is_error")
            else None
        )
        return Outcome(
            text=str(result.get("result") or ""),
            session_id=result.get("session_id"),
            usage=Usage(llm=tokens),
            error=message,
        )
