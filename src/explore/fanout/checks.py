"""What rejects a candidate whatever its tests say: its patch (outside the change policy of
decide/policy, destructive, a credential's value, library code reaching into the running program,
test harness or test code edited), a rewritten
worktree link, changes outside its worktree, and tampering seen in its test run (`score`)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from ..decide import escalation, policy, redaction, scoring, testcode
from ..edges import attribution, gitrepo, guard, harness_refs, policy_io, testcode_io
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
    tests = tuple(f for f in files if is_test_file(f, config.test_patterns))
    review = await anyio.to_thread.run_sync(  # first: whatever else it does, a destructive patch stops the run
        escalation.review_patch, captured.review, tests, testcode_io.sources(path, config.commit)
    )
    if review.destructive:
        board.destructive[cid] = review.destructive
        return f"destructive: {review.destructive.reason}"
    board.removals[cid] = [r.describe() for r in review.allowed]
    clobbered = gitrepo.would_overwrite(config.pool.repo_root, captured.added)
    reach = [await anyio.to_thread.run_sync(_policy_reason, config, captured)]
    if clobbered:
        reach.insert(
            0,
            f"adds {', '.join(clobbered[:3])}, which would replace an untracked or ignored file of yours in {config.pool.repo_root}",
        )
    if any(reach):
        return "; ".join(filter(None, reach))
    secrets = redaction.leaked(captured.patch if captured.patch is not None else captured.review.encode())
    if secrets:
        return f"writes the value of a credential in explore's environment ({', '.join(secrets)}) into the repository: never merged, never shown"
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


def _policy_reason(config: FanOutConfig, captured: Captured) -> str | None:
    """decide/policy's verdict on the captured tree (DESIGN §4), its facts read by edges/policy_io."""
    git_dir = Path(config.pool.repo.common_dir).resolve()
    collected = testcode.collected_files(config.yardstick.ids | config.yardstick.skipped)
    value = policy.Policy(
        tracked=policy_io.tracked(git_dir, config.commit),
        test_patterns=tuple(config.test_patterns),
        reserved=policy_io.reserved(config.test_command.python or sys.executable),
        test_support=policy_io.test_support(
            git_dir,
            config.commit,
            tuple(config.test_patterns),
            frozenset(p for p, doctests_only in collected.items() if not doctests_only),
        ),
        frozen=config.frozen,
        allow_test_edits=config.allow_test_edits,
        allow_new_files=tuple(config.allow_new_files),
    )
    if captured.tree:
        changes = policy_io.entries(git_dir, config.commit, captured.tree, captured.binary, captured.links)
    else:
        changes = [policy.Entry(f, "A" if f in captured.added else "M") for f in captured.files]
    changes += [policy.Entry(folder, "A", new_mode=policy.GITLINK) for folder in captured.nested]
    return policy.describe(policy.verdict(value, changes))


def outside(result: CandidateResult, change: guard.Change | None) -> None:
    """A candidate that changed what it must not in the repository is rejected, whatever its tests
    said; files it may have changed elsewhere (home, the repository's parent) are named."""
    if change is None:
        return
    result.outside_writes = [*change.paths, *change.elsewhere]
    reason = attribution.reason(change)
    if reason:
        result.status, result.reason = CandidateStatus.rejected, reason


def score(result: CandidateResult, run: TestRun, config: FanOutConfig, files: list[str]) -> None:
    """The candidate's pass rate and failures in run; `ok` with that score unless run shows tampering
    or breaks a test it must not (then rejected)."""
    yardstick = scoring.excusing(config.yardstick, result.machine_skips)  # skips on the baseline's tree too
    reason = scoring.tamper_reason(run, yardstick)
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
