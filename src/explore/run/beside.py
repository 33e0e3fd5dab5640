"""The baseline's flaky rerun, deferred to run beside the first iteration — its proposal and its
fan-out (issue 40.4) —, and what follows when it finds a target flaky: the candidates aimed only at
such targets are withdrawn, never started when the rerun ends before the fan-out does, stopped
wherever they are when it ends during it (fanout/pending).

The loop (run/loop.Runner) stays the one writer of the run's state: it is told what the rerun found
(a callback of its own, run when the rerun ends) and keeps the next state (run/transitions)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from ..decide import aims
from ..fanout.pending import Judged, Pending, withdrawn_result
from ..model.candidates import CandidatePlan, CandidateResult
from ..model.events import Note, Subscriber
from ..model.runstate import RunState
from ..model.testresults import TestRun
from . import iteration
from .kit import Kit
from .suite import Recheck

_T = TypeVar("_T")

Settle = Callable[[], tuple[Judged | None, dict[str, str]]]
"""What the fan-out judges by and whom it withdraws, asked when the rerun ends (`settled`)."""


class Rerun:
    """The baseline's flaky rerun left for the first iteration (Suite.recheck)."""

    def __init__(self, kit: Kit, left: Recheck) -> None:
        self.kit, self.left = kit, left
        self.ended = False
        self._fanout: tuple[Pending, Settle] | None = None

    def beside_fanout(self, settle: Settle) -> Pending | None:
        """The fan-out's view of the rerun: None when it has ended already (what it found is in the
        run's state); else the Pending that settle resolves when it ends."""
        if self.ended:
            return None
        pending = Pending()
        self._fanout = (pending, settle)
        return pending

    async def run(self, found: Callable[[set[str]], None]) -> None:
        """The rerun; found: the loop told what it found, before any fan-out waiting on it is."""
        found(await self.kit.suite.recheck(self.left))
        self.ended = True
        if self._fanout is not None:
            pending, settle = self._fanout
            pending.end(*settle())


async def alongside(rerun: Rerun | None, found: Callable[[set[str]], None], body: Callable[[], Awaitable[_T]]) -> _T:
    """body (the iteration's proposal and fan-out) with the rerun beside it; returns once both have
    ended. An error of body's (an escalation, a spent budget) is raised as it is, the rerun cancelled."""
    if rerun is None:
        return await body()
    done: list[_T] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:
        group.start_soon(rerun.run, found)
        try:
            done.append(await body())
        except Exception as exc:  # raised below, as it is (not wrapped in the group's)
            failed.append(exc)
            group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return done[0]


def settled(
    plans: list[CandidatePlan], failing: list[str], flaky: frozenset[str], run: RunState, tests: TestRun
) -> tuple[Judged | None, dict[str, str]]:
    """Once the rerun has ended (run: the state after it; flaky: the run's flaky tests as the fan-out
    started): what the candidates are judged by (None: it found nothing new) and the ones withdrawn."""
    now = frozenset(run.flaky)
    if now == flaky:
        return None, {}
    return iteration.judging(run, tests, now), aims.withdrawn(plans, failing, now)


def found_note(rechecked: list[str]) -> Note:
    which = ", ".join(rechecked[:5])
    return Note(f"flaky: {which} failed in the baseline and passed rerun alone (rerun beside the first iteration)")


def withdraw(
    plans: list[CandidatePlan], failing: list[str], flaky: frozenset[str], emit: Subscriber
) -> tuple[list[CandidatePlan], list[CandidateResult]]:
    """The plans aimed only at targets found flaky while they were proposed are withdrawn
    (decide/aims): never tested, kept on the record as rejected with the reason. Returns the
    plans left and the withdrawn ones' results."""
    reasons = aims.withdrawn(plans, failing, flaky)
    results = [withdrawn_result(p, reasons[p.id]) for p in plans if p.id in reasons]
    for result in results:
        emit(Note(f"[{result.id}] {result.reason}"))
    return [p for p in plans if p.id not in reasons], results
