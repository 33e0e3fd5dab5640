"""A candidate's test jobs through the executor: the affected tests first (an estimate) — or, when
the whole suite is cheap (decide/first_run), the whole suite at once, taking turns (turns.py) —
the full suite (sharded or one job), and the rerun that keeps a flake from condemning it."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import anyio

from ..decide import first_run, scoring
from ..edges import progress
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
        log_name="tests.log" if kind == "full" else f"{kind}.log",
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
            why = "whole suite first: the best prospect; it validates the candidate"
            return await _stoppable_whole(cid, path, config, board, result, files_dir, why)
        board.turns.give_back(cid, None)  # the first did not outrank it: its affected tests, as before
    if selection is not None:
        config.emit(cid, Phase.affected, str(len(selection)))
        await anyio.to_thread.run_sync(config.pool.scrub, path, board.kept.get(cid, frozenset()))
        first = await config.executor.run(candidate_job(config, board, cid, path, "affected", selection), files_dir)
        if first.status != JobStatus.ok:
            return first
        config = await config.judged(cid)  # the estimate and a prospect read what the baseline's rerun found
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
        counts = (await config.judged(cid)).yardstick.counts(full.run)
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
    stopped = board.turns.prospect_starts(ranked(board, result, 100.0, 0))
    if stopped:
        log.debug("candidate %s, the best prospect, stopped the whole runs of %s", cid, ", ".join(stopped))
    full: JobResult | None = None
    try:
        with off_the_clock(board.deadlines.get(cid)), anyio.move_on_after(config.branch_timeout) as scope:
            full = await full_suite(cid, path, config, board, result, files_dir, [])
    finally:
        board.prospect = None
        validated = full is not None and full.status == JobStatus.ok and not scope.cancelled_caught
        board.turns.prospect_ends(_as_validated(board, result, config, full) if full and validated else None)
    if scope.cancelled_caught or full is None:
        reason = f"full-suite validation exceeded {config.branch_timeout:g}s"
        return JobResult(job_id=f"{config.request.iteration}{cid}-full", status=JobStatus.timeout, reason=reason)
    if full.status == JobStatus.ok:
        board.estimates.discard(cid)
    return full


def _as_validated(board: Board, result: CandidateResult, config: FanOutConfig, full: JobResult) -> scoring.Ranked:
    """The prospect as its whole run ranks it (before its flaky rerun: a test that newly fails
    only counts against it, so the rank is never above what scoring will give it)."""
    counts = config.yardstick.counts(full.run)
    newly = scoring.newly_failing(set(config.current_passing), full.run, config.yardstick)
    return ranked(board, result, counts.pass_rate, len(newly))


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
    why = "whole suite first: it is cheap; it validates the candidate"
    return await _stoppable_whole(cid, path, config, board, result, files_dir, why)


async def _stoppable_whole(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, files_dir: Path, why: str
) -> JobResult | None:
    """cid's whole-suite first run in its turn; None when a prospect that outranks it even if it
    passed every test stopped it (Turns.prospect_starts): it is then not tested, as when its turn
    never comes."""
    config.emit(cid, Phase.full, why)
    marks = progress.path_for(files_dir / "tests.log")  # what the local executor's job writes
    await anyio.to_thread.run_sync(progress.forget, marks)

    async def stop_when_outranked() -> None:  # by the failing tests the baseline's rerun left failing
        judged = await config.judged(cid)
        failing_now = judged.yardstick.ids - judged.current_passing - judged.current_xfailed
        rank_at = partial(ranked, board, result, newly_failing=0)
        await board.turns.stop_when_outranked(cid, marks, failing_now, len(judged.yardstick.ids), rank_at)

    with board.turns.stoppable(cid) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(stop_when_outranked)
            job = await full_suite(cid, path, config, board, result, files_dir, [])
            group.cancel_scope.cancel()
    if scope.cancelled_caught:
        result.progress = None
        return None
    return job


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
MAX_SKIP_RERUN = 50
"""More tests newly skipping than this is not the machine: no rerun, the skips stand."""


async def confirm_reruns(
    cid: str, path: Path, config: FanOutConfig, board: Board, result: CandidateResult, run: TestRun, files_dir: Path
) -> None:
    """Condemn and excuse only on reproduction, in the order it happened: the newly failing tests
    of run (confirm_newly_failing) and the tests it skips that ran at the baseline (confirm_skips).
    What they find goes into result (rerun_passed, order_dependent, machine_skips) and run."""
    flaky, ordered = await confirm_newly_failing(cid, path, config, board, run, files_dir)
    result.rerun_passed = sorted(set(result.rerun_passed) | set(flaky))
    result.order_dependent = sorted((set(result.order_dependent) | set(ordered)) - set(result.rerun_passed))
    result.machine_skips = sorted(
        set(result.machine_skips) | set(await confirm_skips(cid, path, config, board, run, files_dir))
    )


async def confirm_newly_failing(
    cid: str, path: Path, config: FanOutConfig, board: Board, run: TestRun, files_dir: Path
) -> tuple[list[str], list[str]]:
    """No candidate condemned by a flake, none excused by one: the tests that passed before and fail
    in run are rerun alone (in one job, in the candidate's tree); those that pass there are rerun
    again after the tests that ran before them in run, in run's order (one job: its prefix up to the
    last of them), in the candidate's tree and on the baseline's side by side. A pass there in the
    candidate's tree excuses a test (flaky: it takes that outcome in run), and so does a failure on
    the baseline's tree too (the order breaks it whatever the change: not the candidate's doing; it
    takes its pass alone). One that fails after its predecessors in the candidate's tree only is
    order-dependent — a candidate that sets process-wide state at import
    (`decimal.getcontext().prec`) breaks a test of another file that passes alone — and counts as
    failing. Returns (excused, order-dependent)."""
    newly = [
        i
        for i in scoring.newly_failing(set(config.current_passing), run, config.yardstick)
        if "::" in i and i in run.outcomes and run.outcomes[i].outcome != "timeout"
    ]  # a hang would cost its whole limit again
    if not newly or len(newly) > MAX_RERUN or not config.test_command.is_pytest:
        return [], []
    rerun = await config.executor.run(candidate_job(config, board, cid, path, "rerun", newly), files_dir)
    if rerun.status != JobStatus.ok:
        return [], []
    alone = [i for i in newly if i in rerun.run.outcomes and rerun.run.outcomes[i].outcome in PASSING]
    if not alone:
        return [], []
    select = in_order(list(run.outcomes), alone)
    mine, base = await side_by_side(config, board, cid, path, "rerun-in-order", select, files_dir)
    if mine.status != JobStatus.ok:
        return [], alone
    flaky = [i for i in alone if i in mine.run.outcomes and mine.run.outcomes[i].outcome in PASSING]
    before = base.run.outcomes if base.status == JobStatus.ok else {}
    also_before = [i for i in alone if i not in flaky and i in before and before[i].outcome not in PASSING]
    run.outcomes.update({i: mine.run.outcomes[i] for i in flaky})
    run.outcomes.update({i: rerun.run.outcomes[i] for i in also_before})  # its pass alone, in its tree
    ordered = [i for i in alone if i not in flaky and i not in also_before]
    if also_before:
        log.info("candidate %s: fail after the tests before them on the baseline's tree too: %s", cid, also_before)
    if ordered:
        log.info("candidate %s: order-dependent (pass alone, fail after the tests before them): %s", cid, ordered)
    return flaky + also_before, ordered


async def side_by_side(
    config: FanOutConfig, board: Board, cid: str, path: Path, kind: str, select: list[str], files_dir: Path
) -> tuple[JobResult, JobResult]:
    """The same tests in the candidate's tree and on the baseline's (the run's current commit), at
    the same time: what the machine does to both shows on both."""
    theirs = candidate_job(config, board, cid, path, kind, select)
    base = theirs.model_copy(
        update={"id": f"{theirs.id}-baseline", "patch": "", "workdir": None, "log_name": f"{kind}-baseline.log"}
    )
    found: dict[str, JobResult] = {}

    async def one(key: str, job: TestJob) -> None:
        found[key] = await config.executor.run(job, files_dir)

    async with anyio.create_task_group() as group:
        group.start_soon(one, "candidate", theirs)
        group.start_soon(one, "baseline", base)
    return found["candidate"], found["baseline"]


def in_order(ran: list[str], last: list[str]) -> list[str]:
    """The pytest arguments that run ran's tests in ran's order up to the last of `last`: whole
    files where every test of a file that ran is in the prefix (a short command line), ids else."""
    wanted = set(last)
    end = max(n for n, i in enumerate(ran) if i in wanted) + 1
    prefix = [i for i in ran[:end] if "::" in i]
    files_in_run: dict[str, int] = {}
    for test in ran:
        files_in_run[test.split("::", 1)[0]] = files_in_run.get(test.split("::", 1)[0], 0) + 1
    in_prefix: dict[str, int] = {}
    for test in prefix:
        in_prefix[test.split("::", 1)[0]] = in_prefix.get(test.split("::", 1)[0], 0) + 1
    out: list[str] = []
    for test in prefix:
        file = test.split("::", 1)[0]
        whole = in_prefix[file] == files_in_run[file]
        item = file if whole else test
        if not out or out[-1] != item:
            out.append(item)
    return out


async def confirm_skips(
    cid: str, path: Path, config: FanOutConfig, board: Board, run: TestRun, files_dir: Path
) -> list[str]:
    """A test that skips in run but ran at the baseline is a candidate's doing only if it still
    skips when rerun in the candidate's tree and runs when rerun on the baseline's tree, side by
    side (two jobs at once). One that skips on both is the machine (tqdm's performance tests skip
    when a sleep costs CPU): returned, held to nothing either way. The rest stay skipped in run,
    and scoring's skip rule rejects the candidate."""
    skipped = [i for i in sorted(config.yardstick.ids) if i in run.outcomes and run.outcomes[i].outcome == "skipped"]
    if not skipped or len(skipped) > MAX_SKIP_RERUN or not config.test_command.is_pytest:
        return []
    if not all("::" in i for i in skipped):
        return []
    theirs, base = await side_by_side(config, board, cid, path, "rerun-skips", skipped, files_dir)
    if theirs.status != JobStatus.ok or base.status != JobStatus.ok:
        return []
    mine, baseline = theirs.run.outcomes, base.run.outcomes
    machine = [i for i in skipped if i in mine and i in baseline and baseline[i].outcome == "skipped"]
    ran_now = [i for i in skipped if i in mine and mine[i].outcome != "skipped"]
    run.outcomes.update({i: mine[i] for i in ran_now})  # it skips no more: what it does now counts
    if machine:
        log.info("candidate %s: skips on the baseline's tree too (the machine, not the change): %s", cid, machine)
    return machine
