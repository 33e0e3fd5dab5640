"""Typed progress of a run: what the loop and its steps are doing, and what a candidate is doing.

The run publishes events (`Publisher`); the CLI subscribes the live view, the line log and the JSON
summary writer. The scheduler emits candidate events; the loop decides what they mean (a line on
the display, a state save when a candidate finishes). Nobody parses display text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from .candidates import CandidateResult, CandidateStatus
from .runstate import EscalationInfo, RunState, RunStatus
from .testresults import Counts, percent
from .usage import Usage


class Phase(str, Enum):
    starting = "starting"
    setup = "setup"
    generating = "generating"
    shared = "shared"
    """Same normalised patch as an earlier candidate: its tests are reused."""
    affected = "affected"
    turn = "turn"
    """Waiting for its turn to run the whole suite first (fanout/turns): the detail names the runs under way."""
    full = "full"
    validating = "validating"
    not_needed = "not_needed"
    """Validation skipped: it cannot beat what is already validated."""
    not_tested = "not_tested"
    """No test of it ran: its whole-suite first turn was refused, a validated candidate outranks it
    even if it passed every test (validation tests it if that one is not merged after all)."""
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


@dataclass(frozen=True)
class Note:
    """A line of the log: something the person watching should know (a fallback, a left-out test…)."""

    text: str


@dataclass(frozen=True)
class Step:
    """A step of the run begins or ends that has no event of its own (targets, reproduce, resume)."""

    text: str


@dataclass(frozen=True)
class BaselineStarted:
    command: str
    """The test command, as the person would type it."""
    commit: str


@dataclass(frozen=True)
class BaselineFinished:
    counts: Counts
    flaky: tuple[str, ...] = ()


@dataclass(frozen=True)
class WarmUpWait:
    """The baseline's run has ended and the generator's warm-up beside it has not (run/warming):
    the run waits for it, the first proposal's time (booked on its `propose` phase)."""

    generator: str
    waited_s: float | None = None
    """None as the wait begins; its seconds when it ends."""


@dataclass(frozen=True)
class IterationStarted:
    """The run header: which iteration, with which strategy and why."""

    n: int
    strategy: str
    reason: str


@dataclass(frozen=True)
class FanOutStarted:
    n: int
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class UsageSpent:
    """What iteration n and the whole run spent so far."""

    n: int
    iteration: Usage
    run: Usage


@dataclass(frozen=True)
class Merged:
    candidate: str
    before: float
    after: float
    commit: str


@dataclass(frozen=True)
class TestsProgress:
    """How far a running test job has gone (run/progress): its tests done of those collected."""

    __test__ = False
    label: str
    """`baseline`, or `[a] full suite`: the job."""
    done: int
    total: int


@dataclass(frozen=True)
class Escalated:
    info: EscalationInfo


@dataclass(frozen=True)
class RunFinished:
    """The run's end (also an escalated or interrupted one): its final state."""

    status: RunStatus
    stop_reason: str | None
    state: RunState = field(compare=False)


Event = (
    Note
    | Step
    | BaselineStarted
    | BaselineFinished
    | WarmUpWait
    | IterationStarted
    | FanOutStarted
    | CandidateEvent
    | UsageSpent
    | Merged
    | Escalated
    | RunFinished
    | TestsProgress
)
Subscriber = Callable[[Event], None]


class Publisher:
    """The run's events to whoever subscribed, in the order they happen. A subscriber that raises
    takes the run down: subscribers are the CLI's own (display, log, summary), not plug-ins."""

    def __init__(self, *subscribers: Subscriber) -> None:
        self.subscribers: list[Subscriber] = list(subscribers)

    def subscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.append(subscriber)

    def __call__(self, event: Event) -> None:
        for subscriber in self.subscribers:
            subscriber(event)


def note_text(event: Event) -> str | None:
    """The line-log words of a run event (None: a candidate event, see describe, or none)."""
    if isinstance(event, (Note, Step)):
        return event.text
    if isinstance(event, BaselineStarted):
        return f"baseline: running {event.command} on {event.commit[:10]}"
    if isinstance(event, BaselineFinished):
        b = event.counts
        flaky = f", {len(event.flaky)} flaky: {', '.join(event.flaky)}" if event.flaky else ""
        return f"baseline: {b.passed}/{b.total} passed ({percent(b.pass_rate)}){flaky}"
    if isinstance(event, WarmUpWait):
        if event.waited_s is None:
            return f"baseline run over; waiting for {event.generator}'s warm-up beside it (the first proposal's time)"
        return f"{event.generator}'s warm-up ready, {event.waited_s:.1f}s after the baseline's run"
    if isinstance(event, IterationStarted):
        return f"iteration {event.n}: strategy {event.strategy} — {event.reason}"
    if isinstance(event, UsageSpent):
        return f"usage: iteration {event.n} {event.iteration.text()}; run {event.run.text()}"
    if isinstance(event, TestsProgress):
        return f"{event.label}: {event.done:,}/{event.total:,} tests run"
    if isinstance(event, Merged):
        return f"merged candidate {event.candidate}: {percent(event.before)} → {percent(event.after)} ({event.commit[:10]})"
    return None


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
        Phase.turn: f"waiting for its turn: the whole suite runs first for {event.detail}"
        if event.detail
        else "waiting for its turn: a whole-suite run goes first",
        Phase.full: "full suite" + (f" ({event.detail})" if event.detail else ""),
        Phase.validating: "validating on the full suite" + (f" ({event.detail})" if event.detail else ""),
        Phase.not_needed: f"full suite not needed ({event.detail})",
        Phase.not_tested: f"not tested: {event.detail}",
        Phase.confirming: "final confirmation: the commit's suite unsharded in a clean checkout",
    }.get(event.phase, event.phase.value)


def result_text(result: CandidateResult) -> str:
    cost = f" — ${result.usage.llm.cost_usd:.4f}" if result.usage.llm.cost_usd else ""
    if result.status == CandidateStatus.ok and not result.tested:
        return f"{result.reason or result.progress or 'not tested'}{cost}"
    if result.status == CandidateStatus.ok:
        return f"ok {percent(result.pass_rate)}" + (f" ({result.progress})" if result.progress else "") + cost
    return f"{result.status.value}: {result.reason or ''}{cost}"
