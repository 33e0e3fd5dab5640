"""A candidate's test jobs through the executor: the affected tests first (an estimate) — or, when
the whole suite is cheap (decide/first_run), the whole suite at once, taking turns (turns.py) —
the full suite (sharded or one job), and the rerun that keeps a flake from condemning it."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio

from ..decide import first_run, scoring
from ..executors import shards
from ..executors.jobs import JobResult, JobStatus, TestJob
from ..model.candidates import CandidateResult, CandidateStatus
from ..model.events import Phase
from ..model.testresults import PASSING, TestOutcome, TestRun
from .board import Board
from .config import FanOutConfig
from .turns import off_the_clock

log = logging.getLogger("explore.fanout")


def failed_status(job: JobResult) -> CandidateStatus:
    """The status of a candidate whose test job did not complete."""
    return {JobStatus.timeout: CandidateStatus.timeout, JobStatus.oom: CandidateStatus.oom}.get(
        job.status, CandidateStatus.crashed
    )


def job_failure(job: JobResult) -> tuple[CandidateStatus, str]:
    """The status and reason of a candidate whose test job did not complete."""
    status = failed_status(job)
    if job.status == JobStatus.oom:
        return status, f"its tests exceeded the memory cap ({job.run.infra_error or job.reason})"
    return status, job.reason or f"its test job {job.status.value}"


def candidate_job(
    config: FanOutConfig, board: Board, cid: str, path: Path, kind: str, select: list[str] | None = None
) -> TestJob:
    """The job running candidate cid's tests (kind: affected, full or rerun) on its patch."""
    return TestJob(
        id=f"{config.request.iteration}{cid}-{kind}",
        command=config.test_command,
        commit=config.commit,
        patch=board.patches.get(cid, ""),
        select=select,
        timeout_s=config.branch_timeout,
        memory_limit=config.memory_limit,
        log_name={"affected": "affected.log", "rerun": "rerun.log"}.get(kind, "tests.log"),
        workdir=path,
    )


async def run_tests(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> JobResult | None:
    """Affected tests first (failing now + test files importing a changed module); the full suite
    runs now only when selection cannot tell, otherwise later in validation for the best — unless
    the whole suite is cheap (`goes_whole_first`): then it runs now, when its turn comes, as one job on
    the candidate's exact tree, and that is its validation and final confirmation; or, when it is
    worth it only for the best prospect (`best_goes_whole_first`), the first turn's candidate runs it
    alone and the others their affected tests after it. None: its turn never came, a validated
    candidate outranks it whatever its run would find (turns.py)."""
    failing_now = sorted(config.yardstick.ids - config.current_passing - config.current_xfailed)
    selection = _selection(config, result.files_changed, failing_now)
    if selection is not None and goes_whole_first(config, board, selection):
        return await _whole_in_turn(cid, path, config, board, result, files_dir)
    board.turns.standing[cid] = result.confidence  # as realised
    if selection is not None and best_goes_whole_first(config, board, selection):
        if not await _turn(cid, config, board, result):
            return None
        if not board.turns.ended:  # the first whole-suite run, alone: the best prospect's
            config.emit(cid, Phase.full, "whole suite first: the best prospect; it validates the candidate")
            return await full_suite(cid, path, config, board, result, files_dir, [])
        board.turns.give_back(cid, None)  # the first did not outrank it: its affected tests, as before
    if selection is not None:
        config.emit(cid, Phase.affected, str(len(selection)))
        await anyio.to_thread.run_sync(config.pool.scrub, path, board.kept.get(cid, frozenset()))
        first = await config.executor.run(candidate_job(config, board, cid, path, "affected", selection), files_dir)
        if first.status != JobStatus.ok:
            return first
        if not first.run.infra_error:
            assumed = {i: TestOutcome(id=i, outcome="passed") for i in config.current_passing} | {
                i: TestOutcome(id=i, outcome="xfailed") for i in config.current_xfailed
            }
            ran = [
                o
                for o in first.run.outcomes.values()
                if o.id in config.yardstick.ids or o.id not in config.yardstick.skipped
            ]
            passed = sum(1 for o in ran if o.outcome in PASSING)
            result.progress = f"affected {passed:,}/{len(ran):,}"
            result.validated = False
            board.estimates.add(cid)
            estimate = TestRun(
                outcomes={**assumed, **first.run.outcomes},
                exit_code=first.run.exit_code,
                log_path=first.run.log_path,
                unconfirmed=first.run.unconfirmed,
            )
            if prospect(config, board, estimate):  # the best it can be: its whole run starts now
                return await prospect_whole(cid, path, config, board, result, files_dir)
            return first.model_copy(update={"run": estimate})
    groups = config.shard_groups(board.running)
    config.emit(cid, Phase.full, f"{len(groups)} shards" if groups else "")
    return await full_suite(cid, path, config, board, result, files_dir, groups)


async def full_suite(
    cid: str,
    path: Path,
    config: FanOutConfig,
    board: Board,
    result: CandidateResult,
    files_dir: Path,
    groups: list[list[str]],
) -> JobResult:
    await anyio.to_thread.run_sync(config.pool.scrub, path, board.kept.get(cid, frozenset()))
    # one unsharded job on exactly the tested tree is the final confirmation; an earlier test run
    # that rewrote tracked files makes it not so (the confirmation then runs on a clean checkout)
    whole = not groups and await anyio.to_thread.run_sync(config.pool.tree_of, path) == board.tested[cid].tree
    full = await shards.run_sharded(config.executor, candidate_job(config, board, cid, path, "full"), groups, files_dir)
    if full.status == JobStatus.ok:
        (board.whole.add if whole else board.whole.discard)(cid)
        counts = config.yardstick.counts(full.run)
        result.progress = f"{result.progress + ' → ' if result.progress else ''}full {counts.passed:,}/{counts.total:,}"
        result.validated = True
    return full


def prospect(config: FanOutConfig, board: Board, estimate: TestRun) -> bool:
    """A candidate whose affected tests all pass, fixing what fails now, is the best prospect a
    fan-out can have: its whole run (its validation and confirmation) need not wait for the others'
    first runs — nor for a loser's whole run — unless another such prospect's is under way."""
    counts = config.yardstick.counts(estimate)
    improves = scoring.is_improvement(counts.pass_rate, config.current_rate)
    return improves and counts.passed == counts.total and board.prospect is None and config.test_command.is_pytest


async def prospect_whole(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> JobResult:
    """The best prospect's whole suite, at once and unsharded (its validation and, on its exact
    tree, its final confirmation), under validation's own --branch-timeout."""
    board.prospect = cid
    config.emit(cid, Phase.validating, "the best prospect: its affected tests all pass")
    try:
        with off_the_clock(board.deadlines.get(cid)), anyio.move_on_after(config.branch_timeout) as scope:
            full = await full_suite(cid, path, config, board, result, files_dir, [])
    finally:
        board.prospect = None
    if scope.cancelled_caught:
        reason = f"full-suite validation exceeded {config.branch_timeout:g}s"
        return JobResult(job_id=f"{config.request.iteration}{cid}-full", status=JobStatus.timeout, reason=reason)
    if full.status == JobStatus.ok:
        board.estimates.discard(cid)
    return full


def goes_whole_first(config: FanOutConfig, board: Board, selection: list[str]) -> bool:
    """The strategy lets the whole suite go first (tests mode `auto`) and the whole suite is cheap
    next to the selection (decide/first_run) — with --shards too: a validation is never sharded."""
    if not config.whole_first_allowed:
        return False
    test_s, selected_s = sum(config.durations.values()), first_run.selected_seconds(selection, config.durations)
    cheap = first_run.whole_is_cheap(test_s, selected_s, config.overhead_s, board.turns.candidates, board.turns.slots)
    log.debug(
        "whole suite first: %s (tests %.2fs, affected %.2fs, start-up %.2fs, %d candidates on %d slots)",
        "yes" if cheap else "no",
        test_s,
        selected_s,
        config.overhead_s,
        board.turns.candidates,
        board.turns.slots,
    )
    return cheap


def best_goes_whole_first(config: FanOutConfig, board: Board, selection: list[str]) -> bool:
    """Not every candidate's first run can be the whole suite (`goes_whole_first` said no), but the
    best prospect's can (decide/first_run.best_is_worth_whole): the candidates take turns, the first
    runs the whole suite alone, and those it does not outrank run their affected tests after it."""
    if not config.whole_first_allowed or board.turns.candidates < 1:
        return False
    test_s, selected_s = sum(config.durations.values()), first_run.selected_seconds(selection, config.durations)
    worth = first_run.best_is_worth_whole(
        test_s, selected_s, config.overhead_s, board.turns.candidates, board.turns.slots, board.turns.first_wins()
    )
    log.debug("whole suite first for the best prospect: %s", "yes" if worth else "no")
    return worth


async def _turn(cid: str, config: FanOutConfig, board: Board, result: CandidateResult) -> bool:
    """cid's whole-suite turn (the caller gives it back once the run is scored); False: a validated
    candidate outranks it whatever its run would find. Its --branch-timeout is suspended while it
    waits (Turns.take)."""

    def waits(running: list[str]) -> None:  # the live view and the log say why nothing runs yet
        config.emit(cid, Phase.turn, ", ".join(running))

    return await board.turns.take(ranked(board, result, 100.0, 0), board.deadlines.get(cid), waits)


async def _whole_in_turn(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path
) -> JobResult | None:
    """The whole suite as cid's first test job, when its turn comes; the caller gives the turn back
    once the run is scored."""
    if not await _turn(cid, config, board, result):
        return None
    config.emit(cid, Phase.full, "whole suite first: it is cheap; it validates the candidate")
    return await full_suite(cid, path, config, board, result, files_dir, [])


def ranked(board: Board, result: CandidateResult, pass_rate: float, newly_failing: int) -> scoring.Ranked:
    """result as it ranks now, with that pass rate and that many newly failing tests: its agreement
    is the board's so far (the fan-out's count comes when it ends)."""
    return scoring.ranked_result(result, pass_rate, newly_failing, board.agreement(result.id))


def _selection(config: FanOutConfig, changed: list[str], failing_now: list[str]) -> list[str] | None:
    if not (config.progressive and config.test_command.is_pytest and config.import_map is not None and failing_now):
        return None
    if len(failing_now) > 500 or not all("::" in i for i in failing_now):
        return None
    files = config.import_map.affected_files(changed, config.test_patterns)
    if files is None:
        return None
    return sorted(files) + [i for i in failing_now if i.split("::", 1)[0] not in files]


MAX_RERUN = 20
"""More tests newly failing than this is a breakage, not a flake: no rerun."""


async def confirm_newly_failing(
    cid: str, path: Path, config: FanOutConfig, board: Board, run: TestRun, files_dir: Path
) -> list[str]:
    """No candidate condemned by a flake: the tests that passed before and fail in run are rerun
    alone (in one job, in the candidate's tree) before they can reject or outrank it; those that
    pass then take the rerun's outcome in run. Returns them."""
    newly = [
        i
        for i in scoring.newly_failing(set(config.current_passing), run, config.yardstick)
        if "::" in i and i in run.outcomes and run.outcomes[i].outcome != "timeout"
    ]  # a hang would cost its whole limit again
    if not newly or len(newly) > MAX_RERUN or not config.test_command.is_pytest:
        return []
    rerun = await config.executor.run(candidate_job(config, board, cid, path, "rerun", newly), files_dir)
    if rerun.status != JobStatus.ok:
        return []
    passed = [i for i in newly if i in rerun.run.outcomes and rerun.run.outcomes[i].outcome in PASSING]
    run.outcomes.update({i: rerun.run.outcomes[i] for i in passed})
    return passed
