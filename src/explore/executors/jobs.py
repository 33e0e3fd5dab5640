"""The seam between the loop and where tests run: a typed test job in, a typed result out.

    TestJob ──► Executor (local worktrees | Ray workers) ──► JobResult

An executor reproduces the job's tree (the commit plus the patch), runs the test command there
under the job's time and memory limits, and reports per-test outcomes and the log. It never
raises for a job's own failure: a timeout, a memory overrun or a dead worker is the result's
status. Only cancellation (Ctrl-C) and infrastructure it cannot provide (a worktree_setup that
fails, a cluster that is gone) leave it as exceptions.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from ..edges.testing import TestCommand
from ..model.candidates import ExecutorName as ExecutorName  # re-exported: an executor names itself by it
from ..model.testresults import TestRun


class TestJob(BaseModel):
    """One execution of the test command on one tree."""

    __test__ = False

    id: str
    """Unique within the run, e.g. "baseline", "1a-affected", "1a-full/shard-2"."""
    command: TestCommand
    """How to run the tests, the per-test limit included."""
    commit: str
    patch: str = ""
    """A binary git diff applied on commit ("" for the commit itself)."""
    select: list[str] | None = None
    """Test ids or files to run; None runs the whole suite."""
    ignore: list[str] = Field(default_factory=list)
    """Test files left out of a whole-suite run (the files other shards run)."""
    only: list[str] | None = None
    """The only test files a whole-suite run collects (one shard's files; pytest's own collection
    rules still apply, so a file an unsharded run would not collect is not run either)."""
    timeout_s: float = 600.0
    """The job's wall-clock limit: its whole process tree is killed when it expires."""
    memory_limit: int | None = None
    """Bytes the job's process tree may hold (its peak is watched)."""
    log_name: str = "tests.log"
    workdir: Path | None = None
    """A local tree that already holds commit + patch (a candidate's worktree); executors
    that run elsewhere ignore it and rebuild the tree from commit and patch."""


class JobStatus(str, Enum):
    ok = "ok"
    """The test command ran to its end; the run says what it found (infra_error included)."""
    timeout = "timeout"
    oom = "oom"
    crashed = "crashed"
    """The job could not run or its worker died: nothing is known about the code."""


class JobResult(BaseModel):
    job_id: str
    status: JobStatus
    run: TestRun = Field(default_factory=TestRun)
    reason: str | None = None
    """Why the status is not ok, in words a person can act on."""
    log: str = ""
    """The tail of the job's output (the whole log is at run.log_path)."""
    executor: ExecutorName = ExecutorName.local
    duration_s: float = 0.0
    overhead_s: float | None = None
    """Wall seconds of its test process beyond its tests' own (interpreter, imports, collection,
    report); a sharded job's is its cheapest shard's. None when the tests did not run to an end."""


class Executor(Protocol):
    """Where test jobs run. Implementations: executors.local, executors.ray."""

    name: ExecutorName

    @property
    def slots(self) -> int:
        """How many jobs it runs at once without queueing: what sharding splits a suite over."""
        ...

    async def prepare(self, commit: str) -> None:
        """Make commit available to the workers (once per commit; cheap when already done)."""
        ...

    async def run(self, job: TestJob, log_dir: Path) -> JobResult:
        """Run one job; its log goes to log_dir / job.log_name on this machine."""
        ...

    async def close(self) -> None:
        """Release what the executor holds: no process, task or temporary folder is left."""
        ...
