"""The end of a run (run/kit.Kit.close): every process the run still has is killed first — a
generator's warm worker would otherwise be ended gracefully, paying its interpreter's teardown while
the run waits — then the generator and the executor release what they hold, through their own waits
(no asyncio warning of an unknown child), then the worktrees go."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from explore.edges import procs
from explore.run.kit import Kit

GRACEFUL = "import sys\nsys.stdin.read()\nopen(sys.argv[1], 'w').write('ended on end of input')\n"
"""A warm worker's way: it ends on the end of its input, leaving a mark that it did."""


class WarmGenerator:
    """A generator with a worker process that its aclose ends the way mutate's ends its own."""

    def __init__(self, tracker: procs.ProcessTracker, mark: Path) -> None:
        self.tracker, self.mark = tracker, mark
        self.process: Process | None = None
        self.returncode: int | None = None

    async def start(self) -> None:
        self.process = await anyio.open_process([sys.executable, "-c", GRACEFUL, str(self.mark)])
        self.tracker.pids.add(self.process.pid)

    async def aclose(self) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            await self.process.stdin.aclose()
        except (OSError, anyio.BrokenResourceError):
            pass
        with anyio.fail_after(60):
            self.returncode = await self.process.wait()
        await self.process.aclose()
        self.tracker.pids.discard(self.process.pid)


class Closed:
    async def close(self) -> None:
        return None


class Pool:
    removed = False

    def remove_all(self) -> None:
        self.removed = True


@pytest.mark.anyio
async def test_the_runs_processes_are_killed_before_the_generator_closes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tracker = procs.ProcessTracker()
    generator = WarmGenerator(tracker, tmp_path / "mark")
    await generator.start()
    kit: Any = SimpleNamespace(generator=generator, executor=Closed(), tracker=tracker, pool=Pool())
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        await Kit.close(kit)
    assert generator.returncode == -9  # SIGKILL, not its graceful end
    assert not (tmp_path / "mark").exists()
    assert not tracker.pids and kit.pool.removed
    assert "Unknown child" not in caplog.text
