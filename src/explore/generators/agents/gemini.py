"""Google's Gemini CLI (`gemini -p`): the prompt on stdin, `auto_edit` approval (file edits accepted;
in headless mode a tool that would need approval is not offered, so it never waits on a prompt),
the worktree trusted for the session. Its `--output-format json` object says the response, the
session, tokens per model under `stats.models` (no cost: set `price`) and any `error`."""

from __future__ import annotations

import re
from pathlib import Path

from ...model.usage import LLMUsage, Usage
from .base import AgentSettings, Outcome, Role, json_objects
from .versions import Support

ASK = "Do the task given above."


class Gemini:
    name = "gemini"
    install = "npm install -g @google/gemini-cli"
    default_bin = "gemini"
    state = ("~/.gemini",)
    support = Support(required=("--prompt", "--output-format", "--approval-mode"), optional={"--skip-trust": 0})

    def argv(self, settings: AgentSettings, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        flags = ["--prompt", ASK, "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust"]
        return [*flags, "--model", settings.model] if settings.model else flags

    def env(self, settings: AgentSettings) -> dict[str, str]:
        return {}

    def parse(self, output: str) -> Outcome:
        found = [
            v for v in json_objects(output) if isinstance(v, dict) and ("response" in v or "error" in v or "stats" in v)
        ]
        if not found:
            return Outcome()
        result = found[-1]
        tokens = LLMUsage()
        for model in ((result.get("stats") or {}).get("models") or {}).values():
            counts, api = model.get("tokens") or {}, model.get("api") or {}
            cached = int(counts.get("cached") or 0)
            tokens += LLMUsage(
                input_tokens=int(counts.get("prompt") or 0) - cached,
                cache_read_input_tokens=cached,
                output_tokens=int(counts.get("candidates") or 0) + int(counts.get("thoughts") or 0),
                calls=int(api.get("totalRequests") or 0),
            )
        error = result.get("error")
        message = str(error.get("message") or error) if isinstance(error, dict) else (str(error) if error else None)
        status = error.get("code") if isinstance(error, dict) and isinstance(error.get("code"), int) else None
        if status is None and message and (match := re.search(r"\b(40[13]|429|5\d\d)\b", message)):
            status = int(match.group(1))
        return Outcome(
            text=str(result.get("response") or ""),
            session_id=result.get("session_id"),
            usage=Usage(llm=tokens),
            error=message,
            status=status if status and status >= 400 else None,
        )
