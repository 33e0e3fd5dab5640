"""The one exception tree of explore; only the CLI turns it into a message and an exit code.

    ExploreError
    ├── UsageError          bad usage or input: exit 2
    ├── LockedError         another run holds the repository: exit 2
    ├── Escalation          a person is needed: exit 3
    │   └── Unavailable     a service past its retries (a chain falls back)
    │   └── SetupFailed     the environment cannot be provided (worktree_setup, disk, Ray cluster)
    ├── BudgetExhausted     the LLM budget is spent: the run ends `failed`, exit 1
    ├── InternalError       a state explore must never reach (scoring with no baseline): a bug, exit 1
    └── GeneratorFailed     a generator's agent or command failed on one candidate or sample: that
                            candidate is `crashed` (the run goes on; it never reaches the CLI)

An interrupted run (SIGINT/SIGTERM) is not an exception: it ends with status `interrupted`
and exit 130 (see loop.Runner.execute).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `explore --version` and `--help` need no pydantic (cli.commands)
    from .runstate import EscalationCategory
    from .usage import Usage


class ExploreError(Exception):
    exit_code = 1


class UsageError(ExploreError):
    """Bad usage or input the user can correct (not a git repo, invalid option, bad config)."""

    exit_code = 2


class LockedError(UsageError):
    """Another live explore run holds this repository."""


class Escalation(ExploreError):
    """A person is needed: the run stops at once, without spending an iteration."""

    exit_code = 3

    def __init__(self, category: EscalationCategory, reason: str, suggested_action: str) -> None:
        from .runstate import EscalationCategory

        super().__init__(reason)
        self.category = EscalationCategory(category)  # a misspelt category fails where it is raised
        self.reason = reason
        self.suggested_action = suggested_action


class Unavailable(Escalation):
    """A service could not serve the call past its retries (rate limit, overload, unreachable):
    alone it escalates as external_service; in an `--agent A,B,C` chain the next generator takes over.
    A refused key (401/403) is a plain Escalation: falling back would hide it."""

    def __init__(self, reason: str, suggested_action: str) -> None:
        from .runstate import EscalationCategory

        super().__init__(EscalationCategory.external_service, reason, suggested_action)


class BudgetExhausted(ExploreError):
    """The next generator call would exceed --budget-usd or --budget-tokens: the run stops cleanly
    with status `failed` and stop reason `budget`."""

    exit_code = 1


class SetupFailed(Escalation):
    """The environment for a test job cannot be provided (worktree_setup failed, the disk is full,
    the Ray cluster is gone): an infrastructure escalation, never a candidate's fault."""

    def __init__(self, reason: str) -> None:
        from .runstate import EscalationCategory

        super().__init__(
            EscalationCategory.infrastructure, reason, "fix the environment (see the reason), then `explore resume`"
        )


class InternalError(ExploreError):
    """A state explore must never reach, checked where it would do harm (scoring against a baseline
    that was never measured): a bug to report, never a result."""

    exit_code = 1


class GeneratorFailed(ExploreError):
    """A generator's agent or command failed (exited non-zero, or gave up with an error that is
    neither a refused key nor an unavailable service): its candidate is `crashed`, a test-writer
    sample is lost; the run goes on. `usage`: what it spent before failing, which the run books."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        from .usage import Usage

        super().__init__(reason)
        self.usage = usage if usage is not None else Usage()
