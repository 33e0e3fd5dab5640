"""The baseline's flaky rerun, deferred to run beside the first proposal (issue 40.4), and what
follows when it finds a target flaky: the plans aimed only at such targets are withdrawn.

The loop (run/loop.Runner) stays the one writer of the run's state: these return the next state
(through run/transitions) and the loop keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio

from .. import generators
from ..decide import aims
from ..model.candidates import CandidatePlan, CandidateResult, CandidateStatus, Proposal
from ..model.errors import BudgetExhausted, Escalation
from ..model.events import Note, Subscriber
from ..model.runstate import RunState
from ..model.testresults import TestRun
from . import iteration, transitions
from .kit import Kit
from .suite import Recheck


@dataclass(frozen=True)
class Proposed:
    """The generator's proposal, the run's state after the rerun beside it, and the targets that
    rerun found flaky (now in the run's flaky tests and out of its current failures)."""

    proposal: Proposal
    run: RunState
    rechecked: list[str]


async def propose(
    kit: Kit,
    asked: generators.ProposalRequest,
    iteration_dir: Path,
    left: Recheck | None,
    run: RunState,
    current_run: TestRun | None,
    emit: Subscriber,
) -> Proposed:
    """The generator's proposal, with the baseline's flaky rerun left for it (Suite.recheck; None:
    nothing left) running beside it. An escalation or a spent budget from the generator is raised
    as it is, the rerun cancelled."""
    if left is None:
        return Proposed(await iteration.propose(kit.generator, asked, iteration_dir), run, [])
    found: set[str] = set()
    proposals: list[Proposal] = []
    failed: list[BaseException] = []

    async def rerun() -> None:
        found.update(await kit.suite.recheck(left))

    async with anyio.create_task_group() as group:
        group.start_soon(rerun)
        try:
            proposals.append(await iteration.propose(kit.generator, asked, iteration_dir))
        except (Escalation, BudgetExhausted) as exc:  # raised below, as it is
            failed.append(exc)
            group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    rechecked = sorted(found & set(run.current_failing))
    if rechecked:
        assert current_run is not None
        run = transitions.flaky_at_baseline(run, rechecked, current_run)  # iteration 1's: the baseline's
        which = ", ".join(rechecked[:5])
        emit(Note(f"flaky: {which} failed in the baseline and passed rerun alone (rerun beside the proposal)"))
    return Proposed(proposals[0], run, rechecked)


def withdraw(
    plans: list[CandidatePlan], failing: list[str], flaky: frozenset[str], emit: Subscriber
) -> tuple[list[CandidatePlan], list[CandidateResult]]:
    """The plans aimed only at targets found flaky while they were proposed are withdrawn
    (decide/aims): never tested, kept on the record as rejected with the reason. Returns the
    plans left and the withdrawn ones' results."""
    reasons = aims.withdrawn(plans, failing, flaky)
    results = [
        CandidateResult(
            id=p.id,
            status=CandidateStatus.rejected,
            reason=reasons[p.id],
            hypothesis=p.hypothesis,
            confidence=p.confidence,
            operator=p.operator,
            location=p.location,
            generator=p.generator,
            tested=False,
            validated=False,
        )
        for p in plans
        if p.id in reasons
    ]
    for result in results:
        emit(Note(f"[{result.id}] {result.reason}"))
    return [p for p in plans if p.id not in reasons], results
