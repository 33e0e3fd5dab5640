"""When every candidate of an iteration crashed with the same agent message, the next iteration would
meet it again: the run stops at once with that message instead — exit 2 when the agent refused its
own command line (an option its release does not know: a person fixes the settings or updates the
CLI), exit 3 otherwise (a person must look at the agent). A single candidate's crash stops the run
only when it is such a usage error: one crash alone may be the model's bad luck."""

from __future__ import annotations

import re

from ..model.candidates import CandidateResult, CandidateStatus
from ..model.errors import Escalation, ExploreError, UsageError
from ..model.runstate import EscalationCategory

AGENT_CRASH = re.compile(r"^(?P<agent>\S+) exited with (?P<code>-?\d+): (?P<message>.*)$", re.DOTALL)
"""How a generator words an agent's crash (GeneratorFailed: `claude-code exited with 1: …`)."""
USAGE = re.compile(
    r"unknown (option|argument|flag|command)|unrecognized (option|argument|arguments)|unexpected argument|"
    r"invalid (value|choice) for|no such option|^usage:",
    re.IGNORECASE | re.MULTILINE,
)
"""What a CLI's own argument parser says when it refuses its command line."""


def same_crash(candidates: list[CandidateResult]) -> ExploreError | None:
    """The stop for an iteration whose every candidate's agent crashed alike, or None."""
    if not candidates or any(c.status != CandidateStatus.crashed for c in candidates):
        return None
    found = [AGENT_CRASH.match(c.reason or "") for c in candidates]
    if any(m is None for m in found) or len({c.reason for c in candidates}) != 1:
        return None
    first = found[0]
    assert first is not None
    agent, message = first["agent"], first["message"].strip()
    every = f"every candidate ({len(candidates)})" if len(candidates) > 1 else "the only candidate"
    if USAGE.search(message):
        return UsageError(
            f"--agent {agent}: {every} crashed at once with the agent's own usage error: {message} — "
            f"its release does not accept the command line explore gave it: update the CLI, or remove the "
            f"flag from [tool.explore.agents.{agent}] args"
        )
    if len(candidates) < 2:
        return None
    return Escalation(
        EscalationCategory.infrastructure,
        f"{every} of this iteration crashed with the same message from {agent} (exit {first['code']}): {message}",
        f"run {agent} by hand in the repository to see why it fails, fix that, then `explore resume`",
    )
