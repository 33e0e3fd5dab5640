"""What rejects a candidate whatever its tests say: its patch (reach outside the repository,
destructive, the issue's reproduction tests, test harness or test code edited), a rewritten
worktree link, changes outside its worktree, and tampering seen in its test run (`score`)."""

from __future__ import annotations

from pathlib import Path

import anyio

from ..decide import escalation, scoring
from ..edges import gitrepo, guard, harness_refs, testcode_io
from ..edges.worktrees import Captured
from ..model.candidates import CandidateResult, CandidateStatus
from ..model.testfiles import is_test_file
from ..model.testresults import TestRun
from .board import Board
from .config import FanOutConfig

LINK_REWRITTEN = (
    "rewrote its worktree's .git file (or pointed the worktree's HEAD at a branch): explore's own git "
    "would have acted on another repository or branch"
)


async def patch_rejection(cid: str, path: Path, config: FanOutConfig, board: Board, captured: Captured) -> str | None:
    """Why the captured patch of candidate cid (its worktree at path) is rejected before any test
    runs, or None; a destructive one is also noted on the board (it stops the run)."""
    files = captured.files
    reach = scoring.reach_reason(files, captured.links)
    clobbered = gitrepo.would_overwrite(config.pool.repo_root, captured.added)
    if clobbered and not reach:
        reach = f"adds {', '.join(clobbered[:3])}, which would replace an untracked or ignored file of yours in {config.pool.repo_root}"
    if reach:
        return reach
    tests = tuple(f for f in files if is_test_file(f, config.test_patterns))
    review = await anyio.to_thread.run_sync(
        escalation.review_patch, captured.review, tests, testcode_io.sources(path, config.commit)
    )
    if review.destructive:
        board.destructive[cid] = review.destructive
        return f"destructive: {review.destructive.reason}"
    board.removals[cid] = [r.describe() for r in review.allowed]
    frozen = [f for f in files if f in config.frozen]
    if frozen:
        return f"edits the reproduction tests of the issue: {', '.join(frozen)}"
    harness = (
        await anyio.to_thread.run_sync(  # allow-test-edits does not lift it: library code must not know it is tested
            harness_refs.reason,
            path,
            config.commit,
            files,
            config.test_patterns,
            config.yardstick.ids | config.yardstick.skipped,
        )
    )
    if harness:
        return harness
    if tests and not config.allow_test_edits:
        return f"edits test files: {', '.join(tests[:5])}"
    if not config.allow_test_edits:
        edits = await anyio.to_thread.run_sync(
            testcode_io.reason,
            path,
            config.commit,
            files,
            config.yardstick.ids | config.yardstick.skipped,
            config.test_command.shell,
            config.test_data,
        )
        if edits:
            return edits
    return None


def outside(result: CandidateResult, change: guard.Change | None) -> None:
    """A candidate that changed what it must not in the repository is rejected, whatever its tests
    said; files it may have changed elsewhere (home, the repository's parent) are named."""
    if change is None:
        return
    result.outside_writes = [*change.paths, *change.elsewhere]
    reason = guard.reason(change)
    if reason:
        result.status, result.reason = CandidateStatus.rejected, reason


def score(result: CandidateResult, run: TestRun, config: FanOutConfig, files: list[str]) -> None:
    """The candidate's pass rate and failures in run; `ok` with that score unless run shows tampering
    or breaks a test it must not (then rejected)."""
    yardstick = scoring.excusing(config.yardstick, result.machine_skips)  # skips on the baseline's tree too
    reason = scoring.tamper_reason(files, run, yardstick, config.test_patterns, config.allow_test_edits)
    reason = reason or scoring.outside_targets_reason(run, config.protected)
    counts = yardstick.counts(run)
    result.pass_rate = counts.pass_rate
    result.failed_tests = yardstick.failing(run)
    result.newly_failing = scoring.newly_failing(set(config.current_passing), run, yardstick)
    if reason:
        result.status, result.reason = CandidateStatus.rejected, reason
        return
    result.status = CandidateStatus.ok
    result.score = counts.pass_rate
