"""SIGINT, SIGTERM and SIGHUP during a run: the first cancels the run's scope (what candidates
wrote outside their worktrees put back, state saved, exit 130), a second forces the exit."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

import anyio
import anyio.abc

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a run cleanly: Ctrl-C, a CI job cancelled, the terminal closed."""


async def watch(
    scope: anyio.CancelScope,
    on_signal: Callable[[bool], None],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """on_signal(again) for each signal; the first one also cancels scope. Started with
    `TaskGroup.start`: the signals are received from the moment it returns."""
    seen = False
    with anyio.open_signal_receiver(*STOPPING) as signals:
        task_status.started()
        async for _ in signals:
            on_signal(seen)
            if not seen:
                seen = True
                scope.cancel()


@dataclass
class Held:
    """The stopping signals that arrived while held (see held)."""

    seen: int = 0


@contextmanager
def held() -> Iterator[Held]:
    """Outside the run's cancellable scope (its start, its end: the fast-forward of the user's
    branch), a stopping signal is held: noted, never a half-done step; the loop looks at it between
    steps. A third one forces the exit. The previous handlers come back on the way out."""
    found = Held()

    def note(signum: int, frame: FrameType | None) -> None:
        found.seen += 1
        if found.seen >= 3:
            os._exit(130)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield found
        return
    previous = {s: signal.signal(s, note) for s in STOPPING}
    try:
        yield found
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
