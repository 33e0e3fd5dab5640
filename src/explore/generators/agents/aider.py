"""Aider (`aider --message-file`): one message, every question answered yes, no commits of its own
(explore takes the worktree's diff), no update check or analytics. It has no structured output:
its report lines — `Tokens: 2.1k sent, 310 received. Cost: $0.01 message, $0.03 session.` — give
tokens and cost, and a `litellm.…Error` line what failed."""

from __future__ import annotations

import re
from pathlib import Path

from ...model.usage import LLMUsage, Usage
from .base import AgentSettings, Outcome, Role
from .versions import Support

TOKENS = re.compile(
    r"^Tokens: ([\d.]+)([kM]?) sent(?:, ([\d.]+)([kM]?) cache write)?(?:, ([\d.]+)([kM]?) cache hit)?, ([\d.]+)([kM]?) received\."
    r"(?: Cost: \$([\d.]+) message, \$([\d.]+) session\.)?",
    re.MULTILINE,
)
ERROR = re.compile(r"^litellm\.(\w+Error):\s*(.*)$", re.MULTILINE)


def _count(number: str | None, unit: str | None) -> int:
    return round(float(number or 0) * {"k": 1e3, "M": 1e6}.get(unit or "", 1))


class Aider:
    name = "aider"
    install = "python -m pip install aider-chat"
    default_bin = "aider"
    state = ("~/.aider",)
    support = Support(
        required=("--message-file", "--yes-always", "--no-auto-commits"),
        optional={"--no-show-release-notes": 0, "--analytics-disable": 0, "--no-check-update": 0, "--no-stream": 0},
    )

    def argv(self, settings: AgentSettings, role: Role, prompt_file: Path, budget_usd: float | None) -> list[str]:
        flags = [
            "--message-file",
            str(prompt_file),
            "--yes-always",
            "--no-auto-commits",
            "--no-dirty-commits",
            "--no-check-update",
            "--analytics-disable",
            "--no-pretty",
            "--no-stream",
            "--no-show-release-notes",
        ]
        return [*flags, "--model", settings.model] if settings.model else flags

    def env(self, settings: AgentSettings) -> dict[str, str]:
        return {}

    def parse(self, output: str) -> Outcome:
        tokens, session_cost = LLMUsage(), 0.0
        for m in TOKENS.finditer(output):
            written, hit = _count(m.group(3), m.group(4)), _count(m.group(5), m.group(6))
            # "sent" counts cache writes, not cache hits
            tokens += LLMUsage(
                input_tokens=_count(m.group(1), m.group(2)) - written,
                cache_creation_input_tokens=written,
                cache_read_input_tokens=hit,
                output_tokens=_count(m.group(7), m.group(8)),
                calls=1,
            )
            session_cost = float(m.group(10) or session_cost)
        tokens.cost_usd = session_cost
        errors = ERROR.findall(output)
        return Outcome(usage=Usage(llm=tokens), error=f"{errors[-1][0]}: {errors[-1][1]}" if errors else None)
