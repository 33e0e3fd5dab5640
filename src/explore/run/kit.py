"""What a run works with, built once from its options when the Runner (run/loop) starts: the strategies,
the generator, the worktree pool, the executor, the suite and its command, the guard of the user's
tree; and closed whatever happens (the cleanup at the end of the run)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from .. import executors, generators
from ..decide.strategy import Strategy
from ..edges import gitrepo, guard, history_io, homes, procs, sandbox, strategy_io
from ..edges.testing import BASELINE_TEST_TIMEOUT, TestCommand, make_command
from ..edges.worktrees import WorktreePool, default_root
from ..executors.jobs import Executor
from ..generators.base import FixGenerator
from ..model.config import Options, parse_size
from ..model.events import Note, Subscriber
from ..model.runstate import RunState
from . import baseline, state
from .suite import Suite

log = logging.getLogger("explore.run")


@dataclass
class Kit:
    """The run's tools. It holds no run state: the loop keeps that (RunState) and writes it."""

    info: gitrepo.RepoInfo
    options: Options
    emit: Subscriber
    tracker: procs.ProcessTracker
    strategies: dict[str, Strategy]
    agent: str
    generator: FixGenerator
    pool: WorktreePool
    memory_limit: int | None
    history_path: Path
    run_dir: Path
    sandbox: sandbox.Sandbox
    executor: Executor
    suite: Suite
    guard: guard.Guard

    @property
    def root(self) -> Path:
        return self.info.root

    @property
    def test_command(self) -> TestCommand:
        """The suite's command: the baseline gives it the per-test limit it derives."""
        return self.suite.command

    @property
    def tools(self) -> baseline.Tools:
        return baseline.Tools(
            repo=self.info.repo,
            root=self.root,
            options=self.options,
            pool=self.pool,
            suite=self.suite,
            generator=self.generator,
            history_path=self.history_path,
            run_dir=self.run_dir,
            tracker=self.tracker,
            memory_limit=self.memory_limit,
            sandbox=self.sandbox,
            emit=self.emit,
        )

    async def close(self) -> None:
        """The cleanup, whatever happened: every process the run started (mutate's warm workers among
        them: nothing of theirs is needed any more, and ending them gracefully cost each one its
        interpreter's teardown, one after the other), the generator's and the executor's own
        cleanup, the worktrees, and the test jobs' private homes. The caller shields it from cancellation."""
        t0 = time.monotonic()
        self.tracker.kill_all(wait=False)  # reaped by their owners' own waits, in the acloses below
        await self.generator.aclose()
        t1 = time.monotonic()
        await self.executor.close()
        self.tracker.kill_all()
        t2 = time.monotonic()
        await anyio.to_thread.run_sync(self.pool.remove_all)
        t3 = time.monotonic()
        await anyio.to_thread.run_sync(homes.drain)  # the test jobs' private homes, removed as they ended
        log.debug(
            "close: generator %.2fs, executor %.2fs, worktrees %.2fs, homes %.2fs",
            t1 - t0,
            t2 - t1,
            t3 - t2,
            time.monotonic() - t3,
        )

    @staticmethod
    def load_strategies(root: Path, options: Options) -> dict[str, Strategy]:
        """The built-in strategies, the project's (.explore/strategies) and --strategies-dir's."""
        extra = [root / ".explore" / "strategies"]
        if options.strategies_dir:
            extra.append((root / options.strategies_dir).resolve())
        return strategy_io.load_strategies(extra)

    @classmethod
    def build(cls, info: gitrepo.RepoInfo, options: Options, run: RunState, emit: Subscriber) -> Kit:
        """The kit for `run` (new or resumed) as `options` say; notes the sandbox it found."""
        root = info.root
        tracker = procs.ProcessTracker()
        strategies = cls.load_strategies(root, options)
        agent = generators.resolve_agent(options.agent, options.agent_cmd, options.agents)
        # what earlier sessions of a resumed run spent counts against its budget
        generator = generators.create(
            agent,
            {
                **options.model_dump(),
                "spent": run.usage.model_dump(),
                "history": history_io.load_tallies(root) if generators.SEPARATOR in agent else [],
                "run_id": run.run_id,
            },
        )
        test_command = make_command(
            options.test_cmd,
            options.junit_xml,
            options.python,
            test_timeout=options.test_timeout or run.test_timeout or BASELINE_TEST_TIMEOUT,
            root=root,
            slowest_pass_s=run.slowest_pass_s or 0.0,
        )
        pool_root = Path(options.worktree_dir).expanduser() / root.name if options.worktree_dir else default_root(root)
        pool = WorktreePool(
            info.repo,
            root,
            pool_root / run.run_id,
            include=options.worktree_include,
            keep_ignored=bool(options.worktree_setup),
        )
        memory_limit = options.memory_cap()
        pool.disk_floor = parse_size(options.disk_floor)
        history_path = state.explore_dir(root) / "history.jsonl"
        run_dir = state.run_dir(root, run.run_id)
        found = sandbox.probe(options.sandbox, tuple(options.sandbox_writable))
        emit(Note(found.note))
        executor = executors.create(
            options,
            root=root,
            run_id=run.run_id,
            pool=pool,
            tracker=tracker,
            sandbox=found,
        )
        suite = Suite(executor, test_command, options, run_dir, emit, tracker, memory_limit, sandbox=found)
        fence = guard.Guard(
            root,
            Path(info.repo.git_dir),
            Path(info.repo.common_dir),
            run_dir / "quarantine",
            packs_within=pool.root,
            confined=found.confined and executor.name == "local",  # Ray's workers run unsandboxed
        )
        return cls(
            info=info,
            options=options,
            emit=emit,
            tracker=tracker,
            strategies=strategies,
            agent=agent,
            generator=generator,
            pool=pool,
            memory_limit=memory_limit,
            history_path=history_path,
            run_dir=run_dir,
            sandbox=found,
            executor=executor,
            suite=suite,
            guard=fence,
        )
