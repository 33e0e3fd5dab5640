"""Fan-out: each candidate in its own worktree under its own deadline, at most --parallel at once,
its tests through the executor (the whole suite first when it is cheap, taking turns: turns.py);
then full-suite validation of the best not yet validated, and the ranking.

A candidate's failure (crash, timeout, exception) is recorded as its status and never takes the
run down; cancellation (Ctrl-C) kills every process tree and cancels every executor job.
`fan_out` returns a FanOutResult: the loop reads nothing else.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

import anyio

from ..decide import escalation, scoring
from ..edges import gitrepo
from ..edges.worktrees import Captured
from ..executors import shards
from ..executors.jobs import JobStatus
from ..model.candidates import CandidatePlan, CandidateResult, CandidateStatus
from ..model.errors import Escalation
from ..model.events import Phase
from ..model.runstate import EscalationCategory
from ..model.testresults import TestRun, percent
from . import confirmation
from .board import Board
from .candidate import run_candidate
from .checks import LINK_REWRITTEN, outside, score
from .config import FanOutConfig
from .pending import Pending, withdrawn_result
from .testjobs import confirm_reruns, failed_status, full_suite
from .turns import Turns

__all__ = ["FanOutConfig", "FanOutResult", "Findings", "fan_out"]

log = logging.getLogger("explore.fanout")


@dataclass(frozen=True)
class Findings:
    """What the candidates found that a person must hear about: the run stops after the fan-out."""

    stop: Exception | None = None
    """An escalation or budget stop raised inside a candidate."""
    infra_error: str | None = None
    destructive: dict[str, escalation.Pattern] = field(default_factory=dict)
    agent: dict[str, escalation.Pattern] = field(default_factory=dict)
    """Agents that failed on an always-escalate condition (auth, rate limit…), by candidate."""

    def escalation(self, planned: int) -> Exception | None:
        """The exception that ends the run, or None: a stop, an infrastructure failure, a
        destructive patch, or every agent failing on an always-escalate condition."""
        if self.stop is not None:
            return self.stop
        if self.infra_error:
            return Escalation(EscalationCategory.infrastructure, self.infra_error, escalation.INFRASTRUCTURE_ACTION)
        for cid, found in sorted(self.destructive.items()):
            return Escalation(EscalationCategory.destructive, f"candidate {cid}: {found.reason}", found.action)
        if self.agent and len(self.agent) == planned:
            cid, found = sorted(self.agent.items())[0]
            return Escalation(found.category, f"the agent failed: {found.reason} (candidate {cid})", found.action)
        return None


@dataclass(frozen=True)
class FanOutResult:
    candidates: list[CandidateResult]
    """In plan order."""
    runs: dict[str, TestRun]
    """Each scored candidate's test run (a twin's is its original's)."""
    agreement: dict[str, int]
    """How many candidates share each candidate's normalised patch."""
    findings: Findings
    ranking: list[str]
    """Validated `ok` candidates, best first (DESIGN §1's order)."""
    validation_s: float = 0.0
    """Wall time of the full-suite validation of the best candidates and the final confirmation."""
    tested: dict[str, Captured] = field(default_factory=dict)
    """Each candidate's change as captured before its tests ran: a winner's commit is built from it."""
    confirmation_s: float = 0.0
    """Of validation_s: the final confirmation of the winner (confirmation.py)."""

    def best(self) -> CandidateResult | None:
        return next((c for c in self.candidates if self.ranking and c.id == self.ranking[0]), None)


async def fan_out(plans: list[CandidatePlan], config: FanOutConfig, parallel: int) -> FanOutResult:
    limiter = anyio.CapacityLimiter(parallel)
    board = Board(turns=Turns(shards.usable_slots(config.executor)))
    board.turns.candidates = len(plans)
    board.turns.standing = {plan.id: plan.confidence for plan in plans}
    results: dict[str, CandidateResult] = {}

    pending = config.pending

    async def one(plan: CandidatePlan) -> None:
        async with limiter:
            if pending is not None and plan.id in pending.withdrawn:  # before its turn came
                results[plan.id] = withdrawn_result(plan, pending.withdrawn[plan.id])
                board.done[plan.id].set()
                config.emit(plan.id, Phase.finished, result=results[plan.id])
                return
            results[plan.id] = await run_candidate(plan, config, board)

    async with anyio.create_task_group() as group:
        for plan in plans:
            board.done[plan.id] = anyio.Event()
            group.start_soon(one, plan)
        if pending is not None:
            group.start_soon(_withdraw_when_found, pending, board)
    config = await config.judged()  # what the baseline's rerun found, for validation and the ranking
    if pending is not None and pending.withdrawn:
        await _withdrawn(pending, [results[plan.id] for plan in plans], config, board)
    if config.watch is not None:  # a change several candidates may have made: each runs again, alone
        for cid in config.watch.ambiguous:  # what the ones run again must beat: not any of their first runs
            board.turns.withdraw(cid)
        for plan in plans:
            if plan.id in config.watch.ambiguous and not (pending and plan.id in pending.withdrawn):
                config.watch.forget(plan.id)
                board.forget(plan.id)
                first = results[plan.id]
                results[plan.id] = await run_candidate(plan, config, board)
                results[plan.id].usage += first.usage
        for cid, named in config.watch.named.items():  # changed elsewhere after cid had ended
            results[cid].outside_writes += [p for p in named if p not in results[cid].outside_writes]
        config.watch.named.clear()
    agreement = {cid: sum(1 for other in board.keys.values() if other == key) for cid, key in board.keys.items()}
    for cid, count in agreement.items():
        results[cid].agreement = count
    ordered = [results[plan.id] for plan in plans]
    started = time.monotonic()
    confirmation_s = await settle(ordered, config, board)
    validation_s = time.monotonic() - started
    runs = {
        r.id: board.runs[board.twin_of(r.id) or r.id] for r in ordered if (board.twin_of(r.id) or r.id) in board.runs
    }
    findings = Findings(board.stop, board.infra_error, dict(board.destructive), dict(board.agent_escalation))
    ranked = scoring.rank([scoring.ranked_result(r) for r in ordered if r.status == CandidateStatus.ok and r.validated])
    return FanOutResult(
        ordered, runs, agreement, findings, [r.id for r in ranked], validation_s, dict(board.tested), confirmation_s
    )


async def _withdraw_when_found(pending: Pending, board: Board) -> None:
    """Once the baseline's rerun ends, the candidates aimed only at a test it found flaky are
    stopped wherever they are (their --branch-timeout scope cancelled: their test jobs killed,
    their worktrees' checks run as they end); one that has not started is never started (`one`)."""
    await pending.ended.wait()
    for cid in pending.withdrawn:
        if cid in board.deadlines:
            board.deadlines[cid].cancel()


async def _withdrawn(pending: Pending, results: list[CandidateResult], config: FanOutConfig, board: Board) -> None:
    """The withdrawn candidates as the fan-out leaves them: rejected with the reason, whatever they
    had reached (one that ended on its own before the rerun did never reached a score), out of the
    turns, and their worktrees back at the commit, clean of what their cancelled jobs left."""
    for result in results:
        if result.id not in pending.withdrawn:
            continue
        result.status, result.reason, result.score = CandidateStatus.rejected, pending.withdrawn[result.id], 0.0
        result.tested = result.validated = False
        board.turns.withdraw(result.id)
        board.skipped.discard(result.id)
        if result.id in config.pool.created:
            try:
                await anyio.to_thread.run_sync(config.pool.acquire, result.id, config.commit)
            except Exception as exc:  # the next iteration's acquire tries again; the run's end removes it
                log.warning("could not clean withdrawn candidate %s's worktree: %s", result.id, exc)


async def settle(results: list[CandidateResult], config: FanOutConfig, board: Board) -> float:
    """Validation of the best, then the final confirmation of the one that would be merged
    (confirmation.py); a winner it refuses is rejected and validation goes on for the next.
    Returns the seconds the confirmations took."""
    spent = 0.0
    while True:
        await validate(results, config, board)
        ranked = scoring.rank(
            [scoring.ranked_result(r) for r in results if r.status == CandidateStatus.ok and r.validated]
        )
        best = next((r for r in results if ranked and r.id == ranked[0].id), None)
        if (
            best is None
            or not scoring.is_improvement(best.pass_rate, config.current_rate)
            or _confirmed(best.id, board)
        ):
            return spent  # nothing to merge, or its scored run was one unsharded job on its own tree: that is the confirmation
        config.emit(best.id, Phase.confirming)
        started = time.monotonic()
        why = await confirm(best, config, board)
        spent += time.monotonic() - started
        if not why:
            return spent
        best.status, best.reason, best.score = CandidateStatus.rejected, why, 0.0
        config.emit(best.id, Phase.finished, result=best)


def _confirmed(cid: str, board: Board) -> bool:
    """cid's scored run (its own, or its twin's: the same change) was one unsharded full-suite job
    on exactly the tree cid's commit would hold: that run is its final confirmation."""
    scored = board.twin_of(cid) or cid
    return scored in board.whole and board.tested[scored].tree == board.tested[cid].tree


async def confirm(result: CandidateResult, config: FanOutConfig, board: Board) -> str | None:
    """The final confirmation of result's tree; tests found flaky in its run (rerun_passed) are
    held to it neither way, as they join the run's flaky ones when it is merged."""
    cid, flaky = result.id, frozenset(result.rerun_passed) | frozenset(result.machine_skips)
    tested = board.tested[cid]
    yardstick = replace(config.yardstick, ids=config.yardstick.ids - flaky, skipped=config.yardstick.skipped | flaky)
    commit = await anyio.to_thread.run_sync(
        gitrepo.commit_tree,
        config.pool.repo,
        tested.tree,
        config.commit,
        f"explore: final confirmation of candidate {cid}",
    )
    return await confirmation.confirm(
        config.executor,
        config.test_command,
        commit,
        f"{config.request.iteration}{cid}-confirm",
        config.branch_timeout,
        config.memory_limit,
        config.iteration_dir / f"candidate-{cid}",
        board.runs[board.twin_of(cid) or cid],
        yardstick,
    )


async def validate(results: list[CandidateResult], config: FanOutConfig, board: Board) -> None:
    """Full-suite validation of the candidates selection made look best, best first, until one
    holds up or none can still beat what is validated: a selection miss costs time, never a
    wrong merge. Each one validated could be the winner, so its full suite is one unsharded job on
    its exact tree, whatever --shards says (the baseline's runs shard): that run is also its final
    confirmation (`board.whole`), where a sharded one (T/k + start-up) would be followed by the
    confirmation (T + start-up) — on any number of slots, one job costs less while a confirmation
    follows (issue 40: with --shards 2 on networkx the winner's suite ran twice, 25–44 s more).
    Candidates whose whole-suite first run never came (`board.skipped`: a validated one outranks
    them whatever theirs finds) come last, in plan order, should that one not be merged after all —
    or should they outrank it passing every test with their final agreement (`_outranks`: twins
    that came after their turn was refused count)."""
    floor = max(
        [config.current_rate] + [r.pass_rate for r in results if r.status == CandidateStatus.ok and r.validated]
    )
    pending = [r for r in results if r.status == CandidateStatus.ok and not r.validated and r.id in board.runs]
    untested = [r for r in results if r.status == CandidateStatus.ok and r.id in board.skipped]
    best = max(
        (
            scoring.ranked_result(r).key()
            for r in results
            if r.status == CandidateStatus.ok and r.validated and r.tested
        ),
        default=None,
    )
    for result in sorted(pending, key=lambda r: scoring.ranked_result(r).key(), reverse=True) + untested:
        # an untested one could pass every test, unless its stopped run had failed tests it does not fix
        best_possible = board.turns.caps.get(result.id, 100.0) if result.id in board.skipped else result.pass_rate
        if not scoring.is_improvement(best_possible, floor) and not _outranks(result, best, board):
            if result.id not in board.skipped:  # an untested one said so when its turn did not come
                result.progress = f"{result.progress} → full not needed (cannot beat {percent(floor)})"
                config.emit(result.id, Phase.not_needed, f"cannot beat {percent(floor)}")
            continue
        files_dir = config.iteration_dir / f"candidate-{result.id}"
        if result.id in board.skipped:  # "not tested" no longer: its suite runs now
            result.reason, result.progress = None, None
        result.tested = True
        config.emit(result.id, Phase.validating)
        if config.watch is not None:
            config.watch.enter(result.id)
        with anyio.move_on_after(config.branch_timeout) as scope:
            job = await full_suite(result.id, config.pool.path_for(result.id), config, board, result, files_dir, [])
        if scope.cancelled_caught:
            result.status, result.reason = (
                CandidateStatus.timeout,
                f"full-suite validation exceeded {config.branch_timeout:g}s",
            )
        elif job.status != JobStatus.ok:
            result.status = failed_status(job)
            result.reason = f"full-suite validation: {job.reason or job.status.value}"
        else:
            board.runs[result.id] = job.run
            board.estimates.discard(result.id)
            board.skipped.discard(result.id)
            await confirm_reruns(result.id, config.pool.path_for(result.id), config, board, result, job.run, files_dir)
            score(result, job.run, config, result.files_changed)
            if not config.pool.intact(config.pool.path_for(result.id)):
                result.status, result.reason = CandidateStatus.rejected, LINK_REWRITTEN
        if config.watch is not None:  # its full suite ran its code: checked like the candidate
            outside(result, await config.watch.leave(result.id))
        if result.status != CandidateStatus.ok:
            result.score = 0.0
        config.emit(result.id, Phase.finished, result=result)
        if result.status == CandidateStatus.ok:
            floor = max(floor, result.pass_rate)
            best = max(best or scoring.ranked_result(result).key(), scoring.ranked_result(result).key())
    for result in results:  # twins share their original's validated result
        twin = board.twin_of(result.id)
        if twin and twin in board.runs and result.status == CandidateStatus.ok:
            score(result, board.runs[twin], config, result.files_changed)
            result.validated, result.tested = twin not in board.estimates, True
            result.progress, result.reason = f"same normalised patch as candidate {twin}", None


def _outranks(result: CandidateResult, best: tuple[float, int, int, float, int, str] | None, board: Board) -> bool:
    """A candidate would outrank the best validated one on more than its letter: an untested one
    passing every test it could still pass, with its final agreement (its turn was refused on the
    agreement it had then, and twins that came later count); a pending one as its affected tests
    found it (a tie on the pass rate with a higher confidence still runs — and one that differs
    only by letter does not: the letter decides among equals only when both suites ran)."""
    if best is None:
        return result.id in board.skipped
    if result.id in board.skipped:
        return scoring.ranked_result(result, board.turns.caps.get(result.id, 100.0), 0).key() > best
    return scoring.ranked_result(result).key()[:-1] > best[:-1]
