"""Sharded full-suite runs: split by test file (the plan: decide/shard_plan), run, merged into one run.

Shards 1..N-1 each collect only their list of test files (explore's plugin, `--explore-only`:
pytest's own collection rules still apply, so a listed file an unsharded run would not collect
is not collected either); the last shard runs the whole suite minus those files (pytest
--ignore), so a test file the plan does not know (one a candidate added) still runs, and the
union of the shards is exactly what one unsharded run collects. A shard that
times out, overruns its memory or dies makes the merged job say so, naming the shard: its tests
are never dropped silently.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import anyio

from ..decide import shard_plan
from ..edges.gitrepo import GIT
from ..model.testresults import TestRun
from .jobs import Executor, ExecutorName, JobResult, JobStatus, TestJob

NO_TESTS = 5
"""pytest's exit code when a shard collected nothing (the rest shard of a fully planned suite)."""


def usable_slots(executor: Executor) -> int:
    """The slots a full-suite run may split over: a remote executor's as they are; the local
    executor's `--parallel`, but never more than the cores this process may run on (a third shard
    on two cores pays one more start-up and runs no sooner)."""
    if executor.name != ExecutorName.local:
        return executor.slots
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(executor.slots, cores))


def disk_weights(workdir: Path) -> dict[str, float]:
    """The tracked test files of a checkout that an argument-less `pytest` at its root collects
    (its configuration's `testpaths`, `norecursedirs` and `python_files`: `collect_rules`), weighed
    by the tests they define (shard_plan.source_weight): the first baseline's plan, with no test
    process run to make it."""
    listed = subprocess.run([*GIT, "ls-files", "-z"], cwd=workdir, capture_output=True, check=False).stdout.decode(
        errors="replace"
    )
    rules = collect_rules(workdir)
    weights: dict[str, float] = {}
    for name in filter(None, listed.split("\0")):
        if name.endswith(".py") and shard_plan.collects(name, rules):
            try:
                weights[name] = shard_plan.source_weight((workdir / name).read_bytes())
            except OSError:
                continue
    return weights


def collect_rules(workdir: Path) -> shard_plan.CollectRules:
    """pytest's collection rules from the configuration files at workdir (shard_plan.collect_rules);
    `testpaths` none of which exists are dropped, as pytest then collects from the root."""
    configs: dict[str, str] = {}
    for name in shard_plan.CONFIG_FILES:
        try:
            configs[name] = (workdir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    rules = shard_plan.collect_rules(configs)
    if rules.testpaths and not any(_exists(workdir, p) for p in rules.testpaths):
        return replace(rules, testpaths=())
    return rules


def _exists(workdir: Path, pattern: str) -> bool:
    try:
        return any(workdir.glob(pattern.strip("/")))
    except (ValueError, NotImplementedError, OSError):  # a pattern pathlib refuses ("", "..")
        return False


SHARD_ENV = "EXPLORE_SHARD"
"""`k/n` in a shard's environment: what rides along the run (mutate's per-test coverage) writes
its own part, for the reader to merge."""


def shard_jobs(job: TestJob, groups: list[list[str]]) -> list[TestJob]:
    """One job per group; the last one runs everything the others do not."""
    others = sorted(path for group in groups[:-1] for path in group)
    stem = Path(job.log_name).stem

    def shard(k: int, **update: object) -> TestJob:
        command = replace(job.command, extra_env={**job.command.extra_env, SHARD_ENV: f"{k}/{len(groups)}"})
        return job.model_copy(
            update={
                "id": f"{job.id}/shard-{k}",
                "select": None,
                "command": command,
                "log_name": f"{stem}.shard-{k}.log",
                **update,
            }
        )

    return [
        *(shard(k + 1, only=group, ignore=[]) for k, group in enumerate(groups[:-1])),
        shard(len(groups), ignore=others),
    ]


def merge(job: TestJob, parts: list[JobResult], log_path: Path) -> JobResult:
    """One result for the whole suite. The worst status wins (crashed > timeout > oom > ok), and
    any shard's infrastructure error is the merged run's, prefixed with the shard's name."""
    run = TestRun(log_path=str(log_path), duration_s=max((p.run.duration_s for p in parts), default=0.0))
    codes: list[int] = []
    errors: list[str] = []
    for part in parts:
        run.outcomes.update(part.run.outcomes)
        run.collection_errors += part.run.collection_errors
        for path, openers in part.run.opened.items():
            run.opened[path] = sorted(set(run.opened.get(path, [])) | set(openers))
        run.unconfirmed.update(part.run.unconfirmed)
        run.oom = run.oom or part.run.oom
        run.per_test = run.per_test and part.run.per_test
        if part.run.exit_code is not None:
            codes.append(part.run.exit_code)
        if part.run.infra_error and not _empty_shard(part):
            errors.append(f"{part.job_id}: {part.run.infra_error}")
    if run.collection_errors:  # pytest stops a run at collection errors: so does a sharded one
        run.outcomes = {}
    real = [code for code in codes if code != NO_TESTS]
    run.exit_code = None if len(codes) < len(parts) else (max(real) if real else NO_TESTS)
    if errors:
        run.infra_error = "; ".join(errors)
    elif not run.outcomes and run.exit_code == NO_TESTS:
        run.infra_error = "no tests collected"
    rank = [JobStatus.ok, JobStatus.oom, JobStatus.timeout, JobStatus.crashed]
    worst = max(parts, key=lambda p: rank.index(p.status))
    bad = [p for p in parts if p.status != JobStatus.ok]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("".join(_section(p) for p in parts), encoding="utf-8")
    measured = [p.overhead_s for p in parts if p.overhead_s is not None]
    return JobResult(
        job_id=job.id,
        status=worst.status,
        run=run,
        executor=worst.executor,
        overhead_s=min(measured) if measured else None,
        reason="; ".join(p.reason or f"{p.job_id}: {p.status.value}" for p in bad) or None,
        log="\n".join(p.log[-2000:] for p in parts)[-8000:],
        duration_s=max((p.duration_s for p in parts), default=0.0),
    )


def _empty_shard(part: JobResult) -> bool:
    return part.run.exit_code == NO_TESTS and not part.run.outcomes and not part.run.collection_errors


def _section(part: JobResult) -> str:
    body = (
        Path(part.run.log_path).read_text(encoding="utf-8", errors="replace")
        if part.run.log_path and Path(part.run.log_path).is_file()
        else part.log
    )
    return f"===== {part.job_id} ({part.status.value}, {part.duration_s:.1f}s) =====\n{body}\n"


Then = Callable[[TestJob, JobResult], Awaitable[None]]
"""What runs in a shard's slot as soon as that shard ends (the baseline's flaky reruns)."""


async def run_sharded(
    executor: Executor, job: TestJob, groups: list[list[str]], log_dir: Path, then: Then | None = None
) -> JobResult:
    """The job split along groups (from `plan`), run concurrently, merged; unsharded when groups is [].
    then: awaited after each shard (or the unsharded job) with its job and result, while the
    other shards still run; the merged result waits for it."""
    if not groups:
        whole = await executor.run(job, log_dir)
        if then is not None:
            await then(job, whole)
        return whole
    parts: list[JobResult | None] = [None] * len(groups)

    async def one(index: int, shard: TestJob) -> None:
        shard = shard.model_copy(update={"workdir": job.workdir if index == 0 else None})
        parts[index] = part = await executor.run(shard, log_dir)
        if then is not None:
            await then(shard, part)

    async with anyio.create_task_group() as group:
        for index, shard in enumerate(shard_jobs(job, groups)):
            group.start_soon(one, index, shard)
    return merge(job, [p for p in parts if p is not None], log_dir / job.log_name)
