"""Fix generators, found by name."""

from __future__ import annotations

import os
from typing import Any

from ..errors import UsageError
from ..redaction import SECRET_VARS
from .base import CandidateContext, FixGenerator, ProposalRequest

NAMES = ("mutate", "anthropic", "command")

__all__ = ["CandidateContext", "FixGenerator", "ProposalRequest", "NAMES", "resolve_agent", "create"]


def resolve_agent(agent: str, agent_cmd: str | None) -> str:
    """DESIGN §2: auto means command when --agent-cmd is given, anthropic with a key, else mutate."""
    if agent == "auto":
        if agent_cmd:
            return "command"
        return "anthropic" if has_anthropic_credentials() else "mutate"
    if agent not in NAMES:
        raise UsageError(f"unknown agent {agent!r}: choose one of auto, {', '.join(NAMES)}")
    if agent == "command" and not agent_cmd:
        raise UsageError("--agent command needs --agent-cmd CMD (the agent to run in each worktree)")
    if agent == "anthropic" and not has_anthropic_credentials():
        raise UsageError("--agent anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway) in the "
                         "environment; set it, or use --agent mutate to repair offline")
    return agent


def has_anthropic_credentials() -> bool:
    """What the Anthropic SDK authenticates with; without one, every call would fail."""
    return any(os.environ.get(name) for name in SECRET_VARS)


def create(name: str, options: dict[str, Any]) -> FixGenerator:
    if name == "command":
        from .command import CommandGenerator

        return CommandGenerator(options["agent_cmd"])
    if name == "mutate":
        from .mutate import MutateGenerator

        return MutateGenerator(options)
    if name == "anthropic":
        from .anthropic import AnthropicGenerator

        return AnthropicGenerator(options)
    raise UsageError(f"unknown agent {name!r}: choose one of auto, {', '.join(NAMES)}")
