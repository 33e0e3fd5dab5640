"""The local executor: test jobs in the run's pool of git worktrees, as process trees on this machine.

A job that names a workdir (a candidate's worktree, which already holds its patch) runs there;
any other job (a shard, the baseline) takes an idle job slot of the pool, reset to the job's
commit, with the patch applied. `slots` is --parallel: the cores the user gave the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from ..edges import gitrepo, procs, progress
from ..edges.sandbox import Sandbox
from ..edges.worktrees import WorktreePool, run_setup
from .execute import execute
from .jobs import ExecutorName, JobResult, JobStatus, TestJob


@dataclass
class LocalExecutor:
    pool: WorktreePool
    tracker: procs.ProcessTracker
    parallel: int
    worktree_setup: str | None = None
    sandbox: Sandbox | None = None
    """Where its test processes run (see sandbox.py)."""
    name: ExecutorName = ExecutorName.local
    _idle: list[str] = field(default_factory=list)
    _made: int = 0

    @property
    def slots(self) -> int:
        return self.parallel

    async def prepare(self, commit: str) -> None:
        """Worktrees are made from the repository itself: nothing to send."""

    async def run(self, job: TestJob, log_dir: Path) -> JobResult:
        log_path = log_dir / job.log_name
        job = with_progress(job, log_path)
        if job.workdir is not None:
            return await execute(
                job, job.workdir, log_path, self.name, tracker=self.tracker, confine=self._confine(job.workdir, log_dir)
            )
        slot = self._take_slot()
        try:
            path = await self._tree(slot, job, log_dir)
            if isinstance(path, JobResult):
                return path
            return await execute(
                job, path, log_path, self.name, tracker=self.tracker, confine=self._confine(path, log_dir)
            )
        finally:
            self._idle.append(slot)

    def _confine(self, path: Path, log_dir: Path) -> procs.Confinement | None:
        return self.sandbox.confine(path, log_dir) if self.sandbox else None

    def _take_slot(self) -> str:
        if self._idle:
            return self._idle.pop()
        self._made += 1
        return f"job{self._made}"

    async def _tree(self, slot: str, job: TestJob, log_dir: Path) -> Path | JobResult:
        path, fresh = await anyio.to_thread.run_sync(self.pool.acquire, slot, job.commit)
        if fresh and self.worktree_setup:
            setup = await run_setup(
                self.worktree_setup,
                path,
                log_dir / f"setup-{slot}.log",
                tracker=self.tracker,
                confine=self._confine(path, log_dir),
            )
            setup.check()
        if job.patch:
            done = await procs.run(
                [*gitrepo.GIT, "apply", "--binary", "--whitespace=nowarn", "-"],
                path,
                stdin=job.patch.encode("utf-8", errors="surrogateescape"),
                tracker=self.tracker,
            )
            if done.exit_code != 0:
                return JobResult(
                    job_id=job.id,
                    status=JobStatus.crashed,
                    executor=self.name,
                    reason=f"{job.id}: the patch does not apply on {job.commit[:10]}: {done.output_tail.strip()[-300:]}",
                )
        return path

    async def close(self) -> None:
        """The pool's worktrees are removed with the run's (WorktreePool.remove_all)."""


def with_progress(job: TestJob, log_path: Path) -> TestJob:
    """job, its pytest asked to write how far it has gone beside its log (edges/progress), for the
    run to show while it runs."""
    if not job.command.is_pytest:
        return job
    env = {**job.command.extra_env, progress.PROGRESS_ENV: str(progress.path_for(log_path))}
    return job.model_copy(update={"command": replace(job.command, extra_env=env)})
