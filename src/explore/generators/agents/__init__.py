"""Named coding agents: `--agent claude-code | codex | gemini | qwen | aider`, each set by
`[tool.explore.agents.NAME]` (model, args, bin, env, price), and named command agents that table
defines with `cmd`."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ...model.errors import UsageError
from ..command import CommandGenerator
from .aider import Aider
from .base import Adapter, AgentSettings, CLIAgent
from .claude_code import ClaudeCode
from .codex import Codex
from .gemini import Gemini
from .qwen import Qwen

ADAPTERS: dict[str, Adapter] = {a.name: a for a in (ClaudeCode(), Codex(), Gemini(), Qwen(), Aider())}

__all__ = ["ADAPTERS", "AgentSettings", "CLIAgent", "create", "is_named", "settings_for"]


def settings_for(name: str, agents: dict[str, Any]) -> AgentSettings:
    try:
        return AgentSettings.model_validate(agents.get(name) or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UsageError(
            f"[tool.explore.agents.{name}] {where}: {first['msg']} (keys: {', '.join(AgentSettings.model_fields)})"
        ) from exc


def is_named(name: str, agents: dict[str, Any]) -> bool:
    """A built-in named agent, or one `[tool.explore.agents.NAME]` defines with `cmd`."""
    return name in ADAPTERS or name in agents


def create(name: str, options: dict[str, Any], check: bool = True) -> CLIAgent | CommandGenerator:
    """The generator for a named agent; with check, a missing executable is a UsageError (exit 2)."""
    agents = options.get("agents") or {}
    settings = settings_for(name, agents)
    if settings.cmd:
        generator = CommandGenerator(settings.cmd)
        generator.name = name
        return generator
    if name not in ADAPTERS:
        raise UsageError(
            f"[tool.explore.agents.{name}] defines no `cmd`, and {name!r} is not one of the named agents "
            f"({', '.join(ADAPTERS)})"
        )
    agent = CLIAgent(ADAPTERS[name], settings, options)
    if check:
        agent.capabilities()  # a missing executable, or a release too old to run safely: exit 2 now
    return agent
