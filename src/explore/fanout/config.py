"""What every candidate of one fan-out shares: the generator, the request, the worktree pool, the
executor and the limits and sets its patch checks and tests read (read-only while candidates run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from ..decide import scoring, shard_plan
from ..decide.affected import ImportMap
from ..edges import attribution, procs, sandbox
from ..edges.testing import TestCommand
from ..edges.worktrees import WorktreePool
from ..executors import shards
from ..executors.jobs import Executor
from ..generators.base import FixGenerator, ProposalRequest
from ..model.candidates import CandidateResult
from ..model.events import CandidateEvent, Listener, Phase
from .pending import Pending


@dataclass(frozen=True)
class FanOutConfig:
    """What every candidate of one iteration shares: read-only inputs."""

    generator: FixGenerator
    request: ProposalRequest
    pool: WorktreePool
    executor: Executor
    commit: str
    iteration_dir: Path
    test_command: TestCommand
    yardstick: scoring.Yardstick
    current_passing: frozenset[str]
    current_rate: float
    test_patterns: list[str]
    allow_test_edits: bool
    branch_timeout: float
    worktree_setup: str | None
    tracker: procs.ProcessTracker
    listener: Listener = lambda _event: None
    progressive: bool = True
    memory_limit: int | None = None
    current_xfailed: frozenset[str] = frozenset()
    """Tests xfail now that were xfail at the baseline: passing by the yardstick, and nothing an
    affected selection needs to run (a test not selected keeps its outcome in the estimate)."""
    import_map: ImportMap | None = None
    shard_weights: dict[str, float] = field(default_factory=dict)
    """Seconds (or test counts) per test file of the current run: what full-suite shards balance."""
    durations: Mapping[str, float] = field(default_factory=dict)
    """Seconds per test of the current run: what an affected selection is estimated to cost."""
    whole_first_allowed: bool = False
    """The strategy's tests mode is `auto`: a candidate's first test job is the whole suite when
    that is cheap (decide/first_run), and then its validation."""
    shards: int | None = None
    """--shards; None: the free slots the current run's test time fills (shard_plan.worthwhile)."""
    overhead_s: float = shard_plan.DEFAULT_OVERHEAD_S
    protected: frozenset[str] = frozenset()
    """With target tests: the other tests passing at the baseline, which no candidate may break."""
    frozen: frozenset[str] = frozenset()
    """`--issue`: the reproduction test files of iteration 0, which no candidate may edit."""
    test_data: frozenset[str] = frozenset()
    """The files the tests read at the baseline: edits to them are test edits."""
    allow_new_files: tuple[str, ...] = ()
    """`[tool.explore] allow-new-files`: globs of new files the change policy admits (decide/policy)."""
    watch: attribution.Watch | None = None
    """What no candidate may change outside its worktree, checked when each one ends."""
    sandbox: sandbox.Sandbox | None = None
    """Where its agent and setup processes run (its tests: the executor's)."""
    max_patch_bytes: int | None = None
    """`max-patch-size`: a larger patch is not read further and its candidate is rejected."""
    pending: Pending | None = None
    """The baseline's flaky rerun, still going as the fan-out starts (pending.py): `judged` waits for it."""

    async def judged(self, cid: str | None = None) -> FanOutConfig:
        """This config once the baseline's rerun has ended, with what it found (pending.py): what
        every score, prospect, stop and validation reads. cid: the candidate asking — one withdrawn
        waits here until the fan-out cancels it."""
        if self.pending is None:
            return self
        await self.pending.ended.wait()
        if cid is not None and cid in self.pending.withdrawn:
            await anyio.sleep_forever()  # its scope is cancelled (scheduler.fan_out)
        found = self.pending.judged
        if found is None:
            return replace(self, pending=None)
        return replace(
            self,
            pending=None,
            yardstick=found.yardstick,
            current_passing=found.current_passing,
            current_rate=found.current_rate,
            protected=found.protected,
        )

    def emit(self, cid: str, phase: Phase, detail: str = "", result: CandidateResult | None = None) -> None:
        self.listener(CandidateEvent(cid, phase, detail, result))

    def shard_groups(self, busy: int) -> list[list[str]]:
        """The file groups of a full-suite run while `busy` candidates share the executor's slots."""
        slots = max(1, shards.usable_slots(self.executor) // max(1, busy))
        count = (
            self.shards
            if self.shards is not None
            else shard_plan.worthwhile(slots, sum(self.shard_weights.values()), self.overhead_s)
        )
        return shard_plan.plan(self.shard_weights, count) if self.test_command.is_pytest else []
