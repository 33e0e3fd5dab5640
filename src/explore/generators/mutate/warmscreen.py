"""mutate's screening workers across a run: started while the baseline runs (`warm_up`), lent
to the baseline's flaky rerun (`rerun_failing`), kept across iterations while they screen the same
worktree the same way (`_warm_screener`), ended with the run (`aclose`). A part of
MutateGenerator, whose state it keeps (`_screener`, `_screener_at`, `_warming`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import anyio

from ...edges import procs
from ..base import ProposalRequest, RerunRequest, WarmUpRequest
from . import rerun
from .changes import changed_files
from .options import MutateOptions
from .screen import ForkWorker, Screener


class WarmScreening:
    """The generator's screening workers, from the warm-up to the run's end."""

    settings: MutateOptions
    parallel: int
    _screener: Screener | None
    _screener_at: tuple[tuple[str, str, str, int, int, int], str] | None
    _warming: anyio.Event | None
    _rerun_lock: anyio.Lock

    async def warm_up(self, request: WarmUpRequest) -> None:
        """The screening workers, started while the baseline runs in the worktree the first
        iteration proposes in: its `propose` finds them there, ready (pytest configured), and
        only tells them what changed since the base commit. A failure leaves propose to start
        them afresh; a cancellation kills those already started (a half-started worker has
        nothing to finish)."""
        if not request.test_command.is_pytest:
            return
        python = request.test_command.python or sys.executable
        key = self._key(python, request.scratch, request.tracker)
        self._warming = warming = anyio.Event()
        try:
            await self._open(
                key, python, request.scratch, request.run_dir / "mutate", [], request.tracker, request.commit
            )
        except Exception:  # an optimisation only: propose starts them itself (and says why if it cannot)
            await self.aclose()
        finally:
            warming.set()

    async def rerun_failing(self, request: RerunRequest) -> dict[str, str] | None:
        """The baseline's flaky rerun in a fresh fork of a warm worker (rerun.py), once the
        warm-up has its workers ready at the baseline's commit; None when there was no warm-up,
        it failed, or its workers are not ready within the per-test limit."""
        warming = self._warming
        if warming is None:
            return None
        with anyio.move_on_after(request.test_timeout or 30.0):
            await warming.wait()
        screener, at = self._screener, self._screener_at
        if not warming.is_set() or screener is None or at is None or at[1] != request.commit:
            return None
        worker = screener.slots[0]
        if not isinstance(worker, ForkWorker):
            return None
        async with self._rerun_lock:  # one request at a time per worker (shards end together)
            try:
                return await rerun.in_worker(worker, request)
            except Exception:  # the run reruns them in a process of its own
                return None

    def _lanes(self) -> int:
        return self.settings.lanes or max(1, min(self.parallel, os.cpu_count() or 1))

    def _key(self, python: str, scratch: Path, tracker: object) -> tuple[str, str, str, int, int, int]:
        """What a screener is opened for: kept while it screens the same worktree the same way."""
        return (self.settings.design, python, str(scratch), os.stat(scratch).st_ino, self._lanes(), id(tracker))

    async def _open(
        self,
        key: tuple[str, str, str, int, int, int],
        python: str,
        scratch: Path,
        run_dir: Path,
        preload: list[str],
        tracker: procs.ProcessTracker | None,
        commit: str,
    ) -> Screener:
        await self.aclose()
        screener = Screener(self.settings.design, python, scratch, run_dir, key[4], preload, tracker)
        await screener.__aenter__()
        self._screener, self._screener_at = screener, (key, commit)
        return screener

    async def _warm_screener(
        self, request: ProposalRequest, python: str, run_dir: Path, preload: Callable[[], list[str]]
    ) -> Screener:
        """The run's screener: kept across iterations while it screens the same worktree the same
        way (the one `warm_up` started, too), told which files changed since (a worker restarts
        only when it imported one). A new one pre-imports `preload()` (read only then: parsing
        the sources is not free)."""
        key = self._key(python, request.scratch, request.tracker)
        if self._screener is not None and self._screener_at is not None and self._screener_at[0] == key:
            changed = await changed_files(request, self._screener_at[1])
            if changed is not None:
                await self._screener.refresh(changed)
                self._screener_at = (key, request.current_commit)
                return self._screener
        return await self._open(
            key, python, request.scratch, run_dir, preload(), request.tracker, request.current_commit
        )

    async def aclose(self) -> None:
        """End the warm screening workers (the loop calls it when the run ends)."""
        screener, self._screener, self._screener_at = self._screener, None, None
        if screener is not None:
            await screener.aclose()
