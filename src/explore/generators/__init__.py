"""generators: the fix generators (mutate, anthropic, command agents, fallback chains), found by name.
They may import explore.model, decide and edges; nothing above (executors, fanout, run, cli)."""

from __future__ import annotations

import os
from typing import Any

from ..decide.redaction import SECRET_VARS
from ..model import agentnames
from ..model.errors import UsageError
from .base import SEPARATOR, CandidateContext, FixGenerator, ProposalRequest, TestWriter

NAMES = ("mutate", "anthropic", "command", "claude-code", "codex", "gemini", "qwen", "aider")
TEST_WRITERS = ("anthropic", "command", "claude-code", "codex", "gemini", "qwen", "aider")
"""Generators that can write reproduction tests from a bug report (`--issue`), with the named
command agents of `[tool.explore.agents.NAME]`."""

__all__ = [
    "NAMES",
    "SEPARATOR",
    "TEST_WRITERS",
    "CandidateContext",
    "FixGenerator",
    "ProposalRequest",
    "check_issue",
    "create",
    "resolve_agent",
]


def resolve_agent(agent: str | list[str], agent_cmd: str | None, agents: dict[str, Any] | None = None) -> str:
    """DESIGN §2: auto means command when --agent-cmd is given, anthropic with a key, else mutate.
    `A,B,C` is a fallback chain: each member resolved alike, `auto` and repeats refused. A named
    agent must be installed (or `[tool.explore.agents.NAME]` must define it with `cmd`). Several
    slots (`--agent` given several times) are the fleet: each resolved alike, joined by ` + `."""
    agents = agents or {}
    if not isinstance(agent, str):
        slots = [resolve_agent(slot, agent_cmd, agents) for slot in agent]
        if not slots:
            raise UsageError("--agent: no agent given")
        return SEPARATOR.join(slots)
    if "," in agent:
        members = [m.strip() for m in agent.split(",")]
        if "auto" in members or "" in members or len(set(members)) != len(members):
            raise UsageError(
                f"--agent {agent!r}: a chain names each generator once, without auto "
                f"(e.g. anthropic,command,mutate; generators: {', '.join(NAMES)})"
            )
        return ",".join(resolve_agent(m, agent_cmd, agents) for m in members)
    if agent == "auto":
        if agent_cmd:
            return "command"
        return "anthropic" if has_anthropic_credentials() else "mutate"
    if agent not in NAMES and agent not in agents:
        raise UsageError(
            f"unknown agent {agent!r}: choose one of auto, {', '.join(NAMES)}, or a name defined in "
            f"[tool.explore.agents.NAME] with cmd"
        )
    if agent not in ("mutate", "anthropic", "command"):
        from . import agents as named

        named.create(agent, {"agents": agents})  # a missing executable or a bad setting: exit 2 now
    if agent == "command" and not agent_cmd:
        raise UsageError("--agent command needs --agent-cmd CMD (the agent to run in each worktree)")
    if agent == "anthropic" and not has_anthropic_credentials():
        raise UsageError(
            "--agent anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway) in the "
            "environment; set it, or use --agent mutate to repair offline"
        )
    return agent


def has_anthropic_credentials() -> bool:
    """What the Anthropic SDK authenticates with; without one, every call would fail."""
    return any(os.environ.get(name) for name in SECRET_VARS)


def check_issue(agent: str) -> None:
    """`--issue` needs a generator that writes tests; mutate cannot."""
    if not any(m in TEST_WRITERS or m not in NAMES for m in agentnames.members(agent)):
        raise UsageError(
            f"--issue needs a generator that can write tests from the report: {' or '.join(TEST_WRITERS)} "
            f"(e.g. --agent anthropic, --agent command --agent-cmd CMD, or a chain such as "
            f"--agent anthropic,mutate); --agent {agent} cannot"
        )


def test_writer(generator: FixGenerator) -> TestWriter:
    """The generator itself, or the first member of a chain, that writes tests for `--issue`."""
    found = generator.test_writer()
    if found is None:
        check_issue(generator.name)
        raise UsageError(f"--issue: {generator.name} writes no tests")  # check_issue refuses it first
    return found


def create(name: str, options: dict[str, Any]) -> FixGenerator:
    if SEPARATOR in name:
        from .fleet import FleetGenerator

        return FleetGenerator(
            [create(slot, options) for slot in agentnames.slots(name)],
            mode=options.get("deal") or "auto",
            history=options.get("history") or [],
            parallel=int(options.get("parallel") or 3),
            run_id=str(options.get("run_id") or ""),
        )
    if "," in name:
        from .chain import ChainGenerator

        return ChainGenerator([create(member, options) for member in agentnames.chain(name)])
    if name == "command":
        from .command import CommandGenerator

        return CommandGenerator(options["agent_cmd"])
    if name == "mutate":
        from .mutate import MutateGenerator

        return MutateGenerator(options)
    if name == "anthropic":
        from .anthropic import AnthropicGenerator

        return AnthropicGenerator(options)
    if name in NAMES or name in (options.get("agents") or {}):
        from . import agents

        return agents.create(name, options)
    raise UsageError(f"unknown agent {name!r}: choose one of auto, {', '.join(NAMES)}")


GENERATOR_WORDS = {
    "mutate": "built in, offline: mutations of the lines the failing tests point at",
    "anthropic": "Claude through the Anthropic API",
    "command": "your agent command, run in each candidate's worktree",
}


def why_agent(asked: str | list[str], agent_cmd: str | None, resolved: str) -> str:
    """A run's first line: the generator it uses, why, and how to choose another."""
    if not isinstance(asked, str):
        slots = agentnames.slots(resolved)
        return (
            f"agents: a fleet of {len(slots)} slots ({'; '.join(slots)}) — chosen with --agent given {len(asked)} times"
        )
    what = ", then ".join(
        f"{name} ({GENERATOR_WORDS.get(name, 'a named agent')})" for name in agentnames.chain(resolved)
    )
    if asked != "auto":
        return f"generator: {what} — chosen with --agent {asked}"
    if resolved == "command":
        why = "--agent-cmd is given"
    elif resolved == "anthropic":
        why = "ANTHROPIC_API_KEY is set; --agent mutate repairs offline"
    else:
        why = "no ANTHROPIC_API_KEY; set it for Claude, or choose with --agent (anthropic, command, ...)"
    return f"generator: {what} — auto: {why}"
