"""The Ray executor: test jobs as Ray tasks on a cluster (RAY_ADDRESS) or on a local Ray for the run.

A worker gets what reproduces the tree without the user's disk: a git bundle of the run's commit,
put once per commit into Ray's object store, and the job's patch. It checks them out into a
temporary folder of its own (reset, not re-cloned, for its next job of the run), runs the job
exactly as the local executor does (executors.execute: same time and memory limits), and
returns the result and the log. A worker that dies
makes its job `crashed`; a cancelled run (Ctrl-C) cancels its tasks (force: the worker process
dies, and its test run with it, through the kernel's parent-death signal); `close` removes the
run's folders on every node, so no temporary folder outlives the run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..model.errors import UsageError
from . import bundle
from .jobs import ExecutorName, JobResult, JobStatus, TestJob

INSTALL_HINT = "pip install 'explore-runner[ray]'"


def scratch_root(run_id: str) -> Path:
    return Path(tempfile.gettempdir()) / "explore-ray" / run_id


def run_on_worker(
    tree_bundle: bytes, job: dict[str, Any], run_id: str, setup: str | None
) -> tuple[dict[str, Any], str]:
    """The Ray task: the tree (this worker's, reused across its jobs of the run), the patch, the
    run. Returns (JobResult, full log). The worker's folder stays for its next job: `sweep`
    removes it when the run closes."""
    from ..edges.worktrees import run_setup
    from .execute import execute

    test_job = TestJob.model_validate(job)
    folder = scratch_root(run_id) / f"worker-{os.getpid()}"
    tree, log_path = folder / "tree", folder / "logs" / f"{uuid.uuid4().hex[:8]}-{test_job.log_name}"
    if test_job.command.python and not Path(test_job.command.python).exists():
        import sys

        test_job.command.python = sys.executable  # the interpreter the worker's environment provides
    try:
        fresh = not (tree / ".git").is_dir()
        try:
            bundle.reuse_or_checkout(tree_bundle, test_job.commit, tree)
            bundle.apply_patch(tree, test_job.patch)
        except RuntimeError as exc:
            shutil.rmtree(tree, ignore_errors=True)  # a half-made tree is never reused
            return JobResult(
                job_id=test_job.id,
                status=JobStatus.crashed,
                executor=ExecutorName.ray,
                reason=f"{test_job.id}: cannot reproduce the tree on the worker: {exc}",
            ).model_dump(mode="json"), ""
        if setup and fresh:
            outcome = anyio.run(lambda: run_setup(setup, tree, folder / "setup.log", die_with_parent=True))
            if not outcome.ok:  # a crashed job, as every failure on a worker
                shutil.rmtree(tree, ignore_errors=True)
                return JobResult(
                    job_id=test_job.id,
                    status=JobStatus.crashed,
                    executor=ExecutorName.ray,
                    reason=f"on the worker: {outcome.reason}",
                ).model_dump(mode="json"), outcome.output_tail

        async def go() -> JobResult:
            return await execute(
                test_job.model_copy(update={"workdir": None}), tree, log_path, ExecutorName.ray, die_with_parent=True
            )

        result = anyio.run(go)
        log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else result.log
        return result.model_dump(mode="json"), log
    finally:
        shutil.rmtree(folder / "logs", ignore_errors=True)


def sweep(run_id: str) -> bool:
    """On one node: remove what killed workers of the run left behind."""
    root = scratch_root(run_id)
    shutil.rmtree(root, ignore_errors=True)
    try:
        root.parent.rmdir()  # the shared parent, once no run uses it
    except OSError:
        pass
    return not root.exists()


@dataclass
class RayExecutor:
    repo_root: Path
    run_id: str
    num_cpus: float = 1.0
    memory: int | None = None
    """Bytes of Ray's `memory` resource each job asks for (scheduling, not a cap)."""
    worktree_setup: str | None = None
    name: ExecutorName = ExecutorName.ray
    started_local: bool = False
    _bundles: dict[str, Any] = field(default_factory=dict)
    _remote: Any = None

    @classmethod
    def connect(
        cls,
        repo_root: Path,
        run_id: str,
        *,
        address: str | None = None,
        num_cpus: float = 1.0,
        memory: int | None = None,
        worktree_setup: str | None = None,
        runtime_env: dict[str, Any] | None = None,
    ) -> RayExecutor:
        """Join the cluster at address (or RAY_ADDRESS), or start a local Ray for the run."""
        ray = _import_ray()
        address = address or os.environ.get("RAY_ADDRESS") or None
        if address:
            _reachable(address)
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                runtime_env=runtime_env or None,
            )
        except Exception as exc:  # ConnectionError, TimeoutError, RuntimeError, ValueError: all mean "not reachable"
            where = f"the Ray cluster at {address}" if address else "a local Ray"
            raise UsageError(
                f"cannot start or reach {where}: {type(exc).__name__}: {str(exc).strip()[:300]} — "
                "check RAY_ADDRESS (`ray status` there), or unset it to start a local Ray"
            ) from exc
        executor = cls(
            repo_root=repo_root,
            run_id=run_id,
            num_cpus=num_cpus,
            memory=memory,
            worktree_setup=worktree_setup,
            started_local=address is None,
        )
        executor._remote = ray.remote(max_retries=0)(run_on_worker)
        return executor

    @property
    def slots(self) -> int:
        ray = _import_ray()
        return max(1, int(ray.cluster_resources().get("CPU", 1) // self.num_cpus))

    async def prepare(self, commit: str) -> None:
        if commit in self._bundles:
            return
        ray = _import_ray()
        data = await anyio.to_thread.run_sync(bundle.make_bundle, self.repo_root, commit)
        self._bundles = {commit: ray.put(data)}  # one commit at a time: the previous one is released

    async def run(self, job: TestJob, log_dir: Path) -> JobResult:
        ray = _import_ray()
        await self.prepare(job.commit)
        options: dict[str, Any] = {"num_cpus": self.num_cpus, "name": f"explore:{self.run_id}:{job.id}"}
        if self.memory:
            options["memory"] = self.memory
        ref = self._remote.options(**options).remote(
            self._bundles[job.commit],
            job.model_dump(mode="json", exclude={"workdir"}),
            self.run_id,
            self.worktree_setup,
        )
        log_path = log_dir / job.log_name
        try:
            payload, log = await asyncio.wrap_future(ref.future())
        except anyio.get_cancelled_exc_class():
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayError as exc:
            reason = f"{job.id}: the Ray worker died ({type(exc).__name__}): {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}"
            return JobResult(job_id=job.id, status=JobStatus.crashed, executor=self.name, reason=reason)
        result = JobResult.model_validate(payload)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(log, encoding="utf-8")
        result.run.log_path = str(log_path)
        return result

    async def close(self) -> None:
        ray = _import_ray()
        if not ray.is_initialized():
            return
        self._bundles.clear()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        sweeper = ray.remote(num_cpus=0, max_retries=0)(sweep)
        refs = [
            sweeper.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote(
                self.run_id
            )
            for node in ray.nodes()
            if node.get("Alive")
        ]
        with anyio.move_on_after(30):
            await asyncio.gather(*(asyncio.wrap_future(ref.future()) for ref in refs), return_exceptions=True)
        ray.shutdown()


def _reachable(address: str) -> None:
    """Fail in seconds, not after Ray's minutes of retries, when nothing listens at address."""
    host_port = address.removeprefix("ray://")
    if address == "auto" or ":" not in host_port:
        return
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            return
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"cannot reach the Ray cluster at {address} (RAY_ADDRESS): {exc} — start it with "
            "`ray start --head`, fix the address, or unset RAY_ADDRESS to start a local Ray for the run"
        ) from exc


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed in {os.path.dirname(os.path.dirname(anyio.__file__))}: "
            f"{INSTALL_HINT}"
        ) from exc
    return ray
