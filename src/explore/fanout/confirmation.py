"""The final confirmation of a winner, as the user will run it: before its commit goes on the run
branch, the commit's suite runs once unsharded, in a clean checkout of that commit (no ignored
file), in a fresh interpreter with no variable explore sets for its own runs (no shard, no
generator's extras: the user's environment and the checkout's own code first on `sys.path`), and
its outcomes must agree with the scored run test for test. A sharded validation runs a test file
in another process than the module whose import changes global state (a `decimal` context);
only this run sees what the user's plain `pytest` will see.

A scored run that already was one unsharded full-suite job on exactly the candidate's tree (no
ignored file: the worktree is scrubbed before every test job) is that run: nothing runs again.
The confirmation is held to the scored run's rules too (scoring.tamper_reason): collection, the
run itself, and explore's witness of what each test call did (witness.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..decide.scoring import Yardstick, tamper_reason
from ..edges.testing import TestCommand
from ..executors.jobs import Executor, JobStatus, TestJob
from ..model.testresults import TestRun


def disagreements(scored: TestRun, confirmed: TestRun, yardstick: Yardstick) -> tuple[list[str], list[str]]:
    """(tests that passed when scored but not in the confirmation, tests that failed when scored
    but passed in it) — over the tests the score counted and any new failing test. Pure."""
    scored_failing = set(yardstick.failing(scored))
    confirmed_failing = set(yardstick.failing(confirmed))
    counted = yardstick.considered(yardstick.aligned(scored)) | confirmed_failing
    worse = sorted((confirmed_failing - scored_failing) & counted)
    better = sorted((scored_failing - confirmed_failing) & counted)
    return worse, better


def reason(worse: list[str], better: list[str]) -> str | None:
    """Why the winner is rejected, naming the tests; None when the runs agree."""
    parts = []
    for tests, how in ((worse, "passed when scored, fail"), (better, "failed when scored, pass")):
        if tests:
            more = f" and {len(tests) - 3} more" if len(tests) > 3 else ""
            parts.append(f"{', '.join(tests[:3])}{more} {how}")
    if not parts:
        return None
    return (
        "the final confirmation (its commit's suite unsharded in a clean checkout, as you would run it) "
        f"disagrees with the scored run: {'; '.join(parts)} there"
    )


async def confirm(
    executor: Executor,
    command: TestCommand,
    commit: str,
    job_id: str,
    timeout_s: float,
    memory_limit: int | None,
    log_dir: Path,
    scored: TestRun,
    yardstick: Yardstick,
) -> str | None:
    """Run the confirmation of commit; None when it agrees with scored, else why not."""
    await executor.prepare(commit)
    job = TestJob(
        id=job_id,
        command=replace(command, extra_env={}),
        commit=commit,
        timeout_s=timeout_s,
        memory_limit=memory_limit,
        log_name="confirmation.log",
    )
    done = await executor.run(job, log_dir)
    if done.status != JobStatus.ok:
        return f"the final confirmation did not run to its end: {done.reason or done.status.value}"
    tamper = tamper_reason(done.run, yardstick)  # what the scored run was held to, the witness included
    if tamper:
        return f"the final confirmation: {tamper}"
    return reason(*disagreements(scored, done.run, yardstick))
