"""A new run's baseline with the generator warming up beside it (mutate: its screening workers
start while the suite runs, in the worktree the first iteration proposes in)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio

from ..generators.base import WarmUpRequest
from ..model.config import Options
from ..model.events import WarmUpWait
from . import baseline
from .kit import Kit


@dataclass(frozen=True)
class Warmed:
    """The baseline measured, and how long the warm-up outlasted it."""

    measured: baseline.Measured
    waited_s: float = 0.0
    """Seconds the run waited for the warm-up after the baseline had ended: the first proposal's
    time (it would have waited for the warm-up itself), booked on its `propose` phase."""


async def measure(kit: Kit, options: Options, commit: str) -> Warmed:
    """The baseline's run, with the generator warming up beside it (mutate: its screening
    workers, on the core a one-process baseline leaves idle) in the worktree the baseline runs
    in and the first iteration proposes in. Cancelled when the baseline fails or finds nothing
    to repair; else left to finish (the first proposal would wait for it anyway). Not when the
    tree changes under it after the baseline's checkout: a setup command, copied files, or
    `--issue`'s reproduction."""
    tools = kit.tools
    if options.issue or options.worktree_setup or options.worktree_include:
        return Warmed(await baseline.measure(tools, commit))
    scratch, _ = await anyio.to_thread.run_sync(kit.pool.acquire, "a", commit)
    warm = WarmUpRequest(scratch, commit, kit.test_command, kit.run_dir / "warm-up", kit.tracker)
    measured: list[baseline.Measured] = []
    failed: list[Exception] = []
    warmed = anyio.Event()

    async def warm_up() -> None:
        try:
            await kit.generator.warm_up(warm)
        finally:
            warmed.set()

    async with anyio.create_task_group() as group:
        group.start_soon(warm_up)
        try:
            measured.append(await baseline.measure(tools, commit, scratch))
        except Exception as exc:  # raised below, as it is (not inside the task group's exception group)
            failed.append(exc)
        if failed or not measured[0].run.failing():
            group.cancel_scope.cancel()
        ended = time.monotonic()
        waits = not group.cancel_scope.cancel_called and not warmed.is_set()
        if waits:  # the live view and the log say what the run waits for, as the timing books it
            kit.emit(WarmUpWait(kit.generator.name))
    if failed:
        raise failed[0]
    waited = time.monotonic() - ended
    if waits:
        kit.emit(WarmUpWait(kit.generator.name, round(waited, 3)))
    return Warmed(measured[0], waited)
