"""executors: where test jobs run — the job and executor seam (jobs), splitting a test run into
shards (shards), and the local and Ray executors, found by the option's name (the registry here).
It may import explore.model, decide and edges."""

from __future__ import annotations

from pathlib import Path

from ..edges import procs
from ..edges.sandbox import Sandbox
from ..edges.worktrees import WorktreePool
from ..model.config import Options, parse_size
from .jobs import Executor


def create(
    options: Options,
    *,
    root: Path,
    run_id: str,
    pool: WorktreePool,
    tracker: procs.ProcessTracker,
    sandbox: Sandbox | None = None,
) -> Executor:
    """The executor the options name; `ray` connects (or starts a local Ray) now, so a bad address
    or a missing extra is a usage error before the baseline. sandbox: where local test processes
    run (Ray workers run theirs unsandboxed)."""
    if options.executor == "ray":
        from .ray import RayExecutor

        return RayExecutor.connect(
            root,
            run_id,
            num_cpus=options.ray_num_cpus,
            memory=parse_size(options.ray_memory) if options.ray_memory else None,
            worktree_setup=options.worktree_setup,
            runtime_env=options.ray_runtime_env,
        )
    from .local import LocalExecutor

    return LocalExecutor(
        pool=pool, tracker=tracker, parallel=options.parallel, worktree_setup=options.worktree_setup, sandbox=sandbox
    )
