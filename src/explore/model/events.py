"""Typed progress of a fan-out: what a candidate is doing, for the display and the checkpoints.

The scheduler emits events; the loop decides what they mean (a line on the display, a state
save when a candidate finishes). Nobody parses display text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from .models import CandidateResult, CandidateStatus


class Phase(str, Enum):
    starting = "starting"
    setup = "setup"
    generating = "generating"
    shared = "shared"
    """Same normalised patch as an earlier candidate: its tests are reused."""
    affected = "affected"
    full = "full"
    validating = "validating"
    not_needed = "not_needed"
    """Validation skipped: it cannot beat what is already validated."""
    confirming = "confirming"
    """The winner's commit runs unsharded in a clean checkout before the merge (confirmation.py)."""
    finished = "finished"
    """A result (final, or again after validation): the moment to checkpoint."""


@dataclass(frozen=True)
class CandidateEvent:
    candidate: str
    phase: Phase
    detail: str = ""
    """Phase-specific: the twin's id, the size of a selection, the executor's name."""
    result: CandidateResult | None = None


Listener = Callable[[CandidateEvent], None]


def describe(event: CandidateEvent) -> str:
    """The display's words for an event."""
    if event.phase == Phase.finished and event.result is not None:
        return result_text(event.result)
    return {
        Phase.starting: "starting",
        Phase.setup: "worktree setup",
        Phase.generating: "generating",
        Phase.shared: f"same patch as {event.detail}: reusing its tests",
        Phase.affected: f"affected tests ({event.detail} ids/files)",
        Phase.full: "full suite" + (f" ({event.detail})" if event.detail else ""),
        Phase.validating: "validating on the full suite" + (f" ({event.detail})" if event.detail else ""),
        Phase.not_needed: f"full suite not needed ({event.detail})",
        Phase.confirming: "final confirmation: the commit's suite unsharded in a clean checkout",
    }.get(event.phase, event.phase.value)


def result_text(result: CandidateResult) -> str:
    cost = f" — ${result.usage.llm.cost_usd:.4f}" if result.usage.llm.cost_usd else ""
    if result.status == CandidateStatus.ok:
        return f"ok {result.pass_rate:.1f}%" + (f" ({result.progress})" if result.progress else "") + cost
    return f"{result.status.value}: {result.reason or ''}{cost}"
