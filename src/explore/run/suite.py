"""Full-suite runs of the run's own commits — the baseline, its flaky reruns (in the generator's
warm worker when it has one ready), the re-test on resume — through the executor, sharded over
its free slots."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from ..decide import escalation, shard_plan
from ..edges import procs, progress
from ..edges.sandbox import Sandbox
from ..edges.testing import TEST_TIMEOUT_FACTOR, TestCommand, derived_test_timeout, slowest_pass
from ..edges.worktrees import run_setup
from ..executors import shards
from ..executors.jobs import Executor, JobResult, JobStatus, TestJob
from ..generators.base import FixGenerator, RerunRequest
from ..model.candidates import ExecutorName
from ..model.config import Options
from ..model.errors import Escalation
from ..model.events import Note, Subscriber
from ..model.runstate import EscalationCategory
from ..model.testresults import PASSING, TestRun
from . import durations, state

log = logging.getLogger("explore.suite")

FAILED_IN_FORK = frozenset({"failed", "error", "timeout"})
"""A fork's outcomes that keep a baseline failure failing without a process of its own."""

SLOW_RERUN_FACTOR = 3.0
"""A test that overran the per-test limit at the baseline runs again alone with this many times it."""
MAX_SLOW_RERUN = 5
"""More timeouts than this at the baseline are hangs (a looping bug), not a slow machine: no rerun."""
GENERATOR_RUN_FACTOR = 10.0
GENERATOR_RUN_FLOOR_S = 120.0


@dataclass(frozen=True)
class Recheck:
    """The baseline's failing tests whose flaky rerun runs beside the first proposal (issue 40.4)."""

    commit: str
    failing: list[str]
    name: str
    """The rerun's job and log name (`baseline-rerun`, or `baseline-rerun-shard-N`)."""


@dataclass
class Suite:
    executor: Executor
    command: TestCommand
    options: Options
    run_dir: Path
    emit: Subscriber
    tracker: procs.ProcessTracker
    memory_limit: int | None
    overhead_s: float = shard_plan.DEFAULT_OVERHEAD_S
    """One test process's cost beyond its tests, measured on the last full run (its cheapest shard)."""
    sandbox: Sandbox | None = None
    slow: list[str] = field(default_factory=list)
    """The tests the last baseline found slow, not failing (`slow_not_hung`)."""

    def timeout(self) -> float:
        return self.options.baseline_timeout or max(self.options.branch_timeout, 600.0)

    def generator_limit(self, run: TestRun) -> float:
        """Seconds a generator's own whole-suite run (mutate's per-test coverage, unsharded and
        traced) may take: a multiple of the last full run's test time, within the suite's limit."""
        return min(
            self.timeout(),
            max(GENERATOR_RUN_FLOOR_S, GENERATOR_RUN_FACTOR * shard_plan.test_seconds(run) + run.duration_s),
        )

    def shard_count(self, run: TestRun | None) -> int:
        """--shards, else as many of the free slots as the last full run's test time fills."""
        if self.options.shards is not None:
            return self.options.shards
        return shard_plan.worthwhile(
            shards.usable_slots(self.executor), shard_plan.test_seconds(run) if run else 0.0, self.overhead_s
        )

    def plan(self, run: TestRun | None, baseline_ids: list[str]) -> list[list[str]]:
        """Shards by the last full run's per-test durations, else by the baseline's test counts."""
        if not self.command.is_pytest:
            return []
        if run is not None:
            return shard_plan.plan(shard_plan.file_weights(run.outcomes, weights_of(run)), self.shard_count(run))
        return shard_plan.plan(shard_plan.file_weights(baseline_ids), self.shard_count(None))

    async def first_plan(self, path: Path) -> list[list[str]]:
        """The first baseline: its shards balance the test files found on disk by the seconds the
        last baseline in this repository recorded (`.explore/durations.json`), else by the tests
        each defines (no test process runs to plan it, each test taken at `shard_plan.FIRST_TEST_S`),
        and it splits only as far as `worthwhile` finds it pays over the free cores
        (shards.usable_slots) — unless --shards says how many. What the generator asks the
        baseline to carry (mutate's per-test coverage) is recorded per shard (`shards.SHARD_ENV`)
        and merged by its reader."""
        slots = self.options.shards if self.options.shards is not None else shards.usable_slots(self.executor)
        if not self.command.is_pytest or slots < 2:
            return []
        on_disk = await anyio.to_thread.run_sync(shards.disk_weights, path)
        recorded = durations.read(durations.path_for(self.run_dir))
        if recorded is not None:
            weights, overhead = durations.first_weights(on_disk, recorded), recorded.overhead_s
            seconds = sum(weights.values())
        else:
            weights, overhead = on_disk, self.overhead_s
            seconds = shard_plan.FIRST_TEST_S * sum(on_disk.values())
        count = (
            self.options.shards if self.options.shards is not None else shard_plan.worthwhile(slots, seconds, overhead)
        )
        return shard_plan.plan(weights, count)

    async def full_run(
        self,
        path: Path,
        name: str,
        commit: str,
        groups: list[list[str]],
        extra_env: dict[str, str] | None = None,
        then: shards.Then | None = None,
    ) -> TestRun:
        """The whole suite at commit; an overrun, a memory cap or a job that cannot run escalates.
        extra_env: what the generator asks the baseline to carry (mutate's per-test coverage);
        then: what runs in each shard's slot when that shard ends (shards.run_sharded)."""
        timeout = self.timeout()
        await self.executor.prepare(commit)
        command = (
            replace(self.command, extra_env={**self.command.extra_env, **extra_env}) if extra_env else self.command
        )
        job = TestJob(
            id=name,
            command=command,
            commit=commit,
            timeout_s=timeout,
            memory_limit=self.memory_limit,
            log_name=f"{name}.log",
            workdir=path,
        )
        if groups:
            self.emit(Note(f"{name}: the suite split into {len(groups)} shards ({self.executor.name.value})"))
        done = await shards.run_sharded(self.executor, job, groups, self.run_dir, then)
        if done.status == JobStatus.oom:
            cap = f" of {self.memory_limit / 2**20:,.0f} MiB" if self.memory_limit else ""
            raise Escalation(
                EscalationCategory.infrastructure,
                f"the full test suite exceeded the memory cap{cap} ({done.reason})",
                "raise --branch-memory, or find what allocates without bound",
            )
        if done.status == JobStatus.timeout:
            ran = progress.of_job(self.run_dir, name)  # how far it went: the run's counts say none
            so_far = f"; {ran[0]:,} of {ran[1]:,} tests had run, {ran[2]:,} failing" if ran else ""
            raise Escalation(
                EscalationCategory.infrastructure,
                f"the full test suite did not finish within {timeout:g}s ({done.reason}{so_far})",
                "raise --branch-timeout or baseline-timeout, or make the suite faster",
            )
        if done.status == JobStatus.crashed:
            raise Escalation(
                EscalationCategory.infrastructure,
                f"the full test suite could not run: {done.reason}",
                escalation.INFRASTRUCTURE_ACTION,
            )
        if done.overhead_s is not None:
            self.overhead_s = done.overhead_s
        return done.run

    async def baseline(
        self,
        path: Path,
        commit: str,
        groups: list[list[str]],
        extra_env: dict[str, str],
        warm: FixGenerator | None = None,
    ) -> tuple[TestRun, set[str], Recheck | None]:
        """The baseline and its flaky reruns: a shard's failing tests run again (`flaky-reruns`
        times) in its slot as soon as that shard ends, while the other shards still run. The shard
        that ends last (the whole suite, unsharded) leaves its rerun to run beside the first
        proposal (`Recheck`, issue 40.4) instead of holding the baseline's end — unless the
        generator's warm worker serves it (a fork of the worker the proposal then screens in).
        Returns the run, the failing tests that passed when rerun (a hang is not rerun: it would
        cost its whole limit again; nor a failure that escalates anyway), and the rerun left for
        later. warm: the generator whose warm-up may serve the reruns (`FixGenerator.rerun_failing`)
        — only for an unsharded baseline: its worker runs in the first shard's worktree, where
        another shard's tests may still be running."""
        found: set[str] = set()
        served = warm if len(groups) < 2 else None
        left: list[Recheck] = []
        ended = [0]

        async def rerun(shard: TestJob, part: JobResult) -> None:
            ended[0] += 1
            failing = [i for i in part.run.failing() if "::" in i and part.run.outcomes[i].outcome != "timeout"]
            if part.status != JobStatus.ok or not failing or not self.command.is_pytest:
                return
            if escalation.classify_failures(
                [part.run.outcomes[i].longrepr or part.run.outcomes[i].message for i in failing]
            ):
                return
            name = shard.id.replace("baseline", "baseline-rerun", 1)
            if ended[0] == max(len(groups), 1) and not (serves_reruns(served) and self.warm_rerun_fits()):
                left.append(Recheck(commit, failing, name))  # the last to end: beside the first proposal
                return
            state.fault_point("baseline-rerun")
            found.update(await self.flaky(shard.workdir, commit, failing, name, served))

        run = await self.full_run(path, "baseline", commit, groups, extra_env, then=rerun)
        if not run.infra_error:
            await self.slow_not_hung(path, commit, run)
        if self.command.is_pytest and not run.infra_error:  # what the next run's first baseline is planned from
            await anyio.to_thread.run_sync(durations.write, durations.path_for(self.run_dir), run, self.overhead_s)
        return run, found, (left[0] if left and not run.infra_error else None)

    async def recheck(self, left: Recheck) -> set[str]:
        """The baseline's rerun left for the first proposal's time (`baseline`): in a free job slot
        (the proposal works in the baseline's worktree), each attempt a pytest process of its own."""
        state.fault_point("baseline-rerun")
        return await self.flaky(None, left.commit, left.failing, left.name)

    async def flaky(
        self, path: Path | None, commit: str, failing: list[str], name: str, warm: FixGenerator | None = None
    ) -> set[str]:
        """Failing tests that pass when rerun (`flaky-reruns` times, each in a fresh pytest process
        with its own home, sandboxed as the baseline was) in path (None: a free slot). warm: a
        generator whose warm worker (`warm_rerun_fits`) may screen each attempt first: a fresh
        fork of it runs the failing tests, and those that fail there again (`failed`, `error`,
        `timeout`) stay failing with no process. A fork is not a process of its own (pytest's
        capture as the project configures it, but `--reruns` off and the worker's home) and may
        pass a test every process fails, so the tests it reports anything
        else for (passed, xfailed, skipped, not run) go on to the process, and only a pass there
        makes a test flaky. A fork that fails a test a process would pass keeps a flake a
        target, as a flake failing twice always did: never a green suite that is not."""
        found: set[str] = set()
        served = warm if warm is not None and self.warm_rerun_fits() else None
        for attempt in range(self.options.flaky_reruns):
            stem = f"{name.replace('/', '.')}-{attempt + 1}"
            candidates = failing
            if served is not None:
                outcomes = await served.rerun_failing(
                    RerunRequest(
                        failing,
                        commit,
                        self.command.test_timeout or self.timeout(),
                        self.memory_limit,
                        self.run_dir / f"{stem}-fork.log",
                    )
                )
                if outcomes is None:
                    served = None  # not ready now: a later attempt would wait for it again
                else:
                    candidates = [i for i in failing if outcomes.get(i) not in FAILED_IN_FORK]
                    log.debug(
                        "%s: %d failing test(s) rerun in %s's warm worker, %d to confirm in a process",
                        stem,
                        len(failing),
                        served.name,
                        len(candidates),
                    )
            if not candidates:
                continue
            rerun = await self.executor.run(
                TestJob(
                    id=f"{name}-{attempt + 1}",
                    command=self.command,
                    commit=commit,
                    select=candidates,
                    workdir=path,
                    timeout_s=self.timeout(),
                    memory_limit=self.memory_limit,
                    log_name=f"{stem}.log",
                ),
                self.run_dir,
            )
            found |= {i for i in candidates if i in rerun.run.outcomes and rerun.run.outcomes[i].outcome in PASSING}
        return found

    async def slow_not_hung(self, path: Path, commit: str, run: TestRun) -> list[str]:
        """A timeout at the baseline is not a target until it is a real one: the tests that overran
        the per-test limit run again alone, one after another in one process (no lowered limits),
        with SLOW_RERUN_FACTOR times the limit they overran (at most the suite's budget). Those that
        pass are slow, not failing: they take that pass in run (so the limit derived from the
        baseline's slowest pass is raised for the run; a configured one is raised to
        TEST_TIMEOUT_FACTOR times their time), and a candidate cannot gain by them. Returns them."""
        hung = [i for i, o in run.outcomes.items() if o.outcome == "timeout" and "::" in i]
        limit = self.command.test_timeout
        self.slow = []
        if not hung or len(hung) > MAX_SLOW_RERUN or not self.command.is_pytest or not limit:
            return []
        overran = max([limit, *(run.outcomes[i].duration_s for i in hung)])
        generous = min(self.timeout(), SLOW_RERUN_FACTOR * overran)
        rerun = await self.executor.run(
            TestJob(
                id="baseline-slow",
                command=replace(self.command, test_timeout=generous, hang_floor=0.0),
                commit=commit,
                select=hung,
                workdir=path,
                timeout_s=self.timeout(),
                memory_limit=self.memory_limit,
                log_name="baseline-slow.log",
            ),
            self.run_dir,
        )
        slow = [i for i in hung if i in rerun.run.outcomes and rerun.run.outcomes[i].outcome in PASSING]
        if rerun.status != JobStatus.ok or not slow:
            return []
        run.outcomes.update({i: rerun.run.outcomes[i] for i in slow})
        took = max(rerun.run.outcomes[i].duration_s for i in slow)
        raised = min(self.timeout(), max(limit, round(TEST_TIMEOUT_FACTOR * took, 1)))
        self.command = replace(self.command, test_timeout=raised)
        self.emit(
            Note(
                f"slow, not failing: {', '.join(slow[:5])} overran the per-test limit of {limit:g}s in the baseline "
                f"and passed rerun alone (limit {generous:g}s, {took:.1f}s): not targets; the per-test limit "
                f"is {raised:g}s for the run"
            )
        )
        log.info("baseline: slow tests, not failing: %s", slow)
        self.slow = slow
        return slow

    def retime(self, plain: TestRun) -> float | None:
        """The per-test limit from a plain whole run (decide/suite_time: it replaces a traced
        baseline's), as the baseline derives it, and the hang floor from its slowest pass. Returns
        the new limit (None: configured, or not pytest — the limit stays)."""
        if not self.command.is_pytest:
            return None
        limit = None if self.options.test_timeout else derived_test_timeout(plain)
        self.command = replace(
            self.command, test_timeout=limit or self.command.test_timeout, slowest_pass_s=slowest_pass(plain)
        )
        return limit

    def warm_rerun_fits(self) -> bool:
        """A generator's warm worker may screen the rerun (`flaky`): the tests run on this machine
        (not Ray), with nothing in their environment the worker lacks, and unsandboxed, the
        baseline too — mutate's workers are not sandboxed, and a fork outside the sandbox does
        not fail what fails only inside it."""
        return (
            self.command.is_pytest
            and self.options.sandbox != "require"
            and (self.sandbox is None or not self.sandbox.confined)
            and self.executor.name == ExecutorName.local
            and not self.command.extra_env
        )

    async def setup_once(self, path: Path) -> None:
        if self.options.worktree_setup:
            setup = await run_setup(
                self.options.worktree_setup,
                path,
                self.run_dir / "setup.log",
                tracker=self.tracker,
                confine=self.sandbox.confine(path, self.run_dir) if self.sandbox else None,
            )
            if not setup.ok:  # the test environment's action, as for every baseline failure
                raise Escalation(EscalationCategory.infrastructure, setup.reason, escalation.INFRASTRUCTURE_ACTION)


def serves_reruns(warm: FixGenerator | None) -> bool:
    """The generator may serve the baseline's rerun from a warm worker (it has its own
    `rerun_failing`: mutate, or a chain or fleet that may hold it)."""
    return warm is not None and type(warm).rerun_failing is not FixGenerator.rerun_failing


def weights_of(run: TestRun) -> dict[str, float]:
    return {i: o.duration_s for i, o in run.outcomes.items()}
