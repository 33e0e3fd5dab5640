"""Run one test job in a directory that holds its tree: the part every executor shares.

Local worktrees and Ray workers both end here, so a job runs under the same per-job time
limit, the same memory cap and the same reading of the results wherever it runs.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from ..decide import shard_plan
from ..edges import procs
from ..edges.testing import run_tests
from ..model.testresults import TestRun
from .jobs import ExecutorName, JobResult, JobStatus, TestJob


async def execute(
    job: TestJob,
    workdir: Path,
    log_path: Path,
    executor: ExecutorName,
    *,
    tracker: procs.ProcessTracker | None = None,
    die_with_parent: bool = False,
    confine: procs.Confinement | None = None,
) -> JobResult:
    started = time.monotonic()
    result = JobResult(job_id=job.id, status=JobStatus.ok, executor=executor)
    with anyio.move_on_after(job.timeout_s) as scope:
        select = _present(job.select, workdir)
        if select == []:  # every selected file is gone (a candidate deleted them): their tests are missing
            result.run = TestRun(exit_code=5, log_path=str(log_path))
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(
                f"none of the files of {job.id} exists: {', '.join(job.select or [])}\n", encoding="utf-8"
            )
            return result
        result.run = await run_tests(
            job.command,
            workdir,
            log_path,
            select=select,
            ignore=job.ignore,
            only=job.only,
            tracker=tracker,
            memory_limit=job.memory_limit,
            die_with_parent=die_with_parent,
            confine=confine,
        )
    if scope.cancelled_caught:
        result.status = JobStatus.timeout
        result.reason = f"{job.id}: the test run exceeded its {job.timeout_s:g}s limit; its process tree was killed"
        result.run = TestRun(log_path=str(log_path))
    elif result.run.oom:
        result.status, result.reason = JobStatus.oom, f"{job.id}: {result.run.infra_error}"
    elif result.run.outcomes and result.run.exit_code is not None:
        result.overhead_s = round(shard_plan.process_overhead(result.run), 3)
    result.log = log_path.read_text(encoding="utf-8", errors="replace")[-8000:] if log_path.exists() else ""
    result.duration_s = round(time.monotonic() - started, 3)
    return result


def _present(select: list[str] | None, workdir: Path) -> list[str] | None:
    """The selected files that exist in this tree (test ids and non-file selections pass through)."""
    if select is None:
        return None
    return [item for item in select if "::" in item or (workdir / item).exists()]
