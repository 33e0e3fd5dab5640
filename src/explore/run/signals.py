"""SIGINT, SIGTERM and SIGHUP during a run: the first cancels the run's scope (what candidates
wrote outside their worktrees put back, state saved, exit 130), a second forces the exit.

A SIGHUP from a closed terminal comes after the kernel has hung the terminal up: every later write to
it fails (EIO), and the first line the run's undo or its end would print there would end the process
with that error instead of the undo. The hung-up terminal's descriptors are pointed at /dev/null as
the signal arrives (`detach_hung_up`): the run stops as on Ctrl-C, with nobody left to read it."""

from __future__ import annotations

import errno
import os
import signal
import termios
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
        async for signum in signals:
            if signum == signal.SIGHUP:
                detach_hung_up()
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
        if signum == signal.SIGHUP:
            detach_hung_up()
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


def detach_hung_up() -> list[int]:
    """Standard input, output and error that are a terminal hung up now read and write /dev/null;
    returns those fds. A pipe, a file or a live terminal is left as it is."""
    moved = []
    for fd in (0, 1, 2):
        if _hung_up(fd):
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, fd)
            os.close(null)
            moved.append(fd)
    return moved


def _hung_up(fd: int) -> bool:
    """A terminal the kernel hung up: its ioctl fails with EIO, as every call on it does (a pipe or a
    file: ENOTTY; a closed fd: EBADF)."""
    try:
        termios.tcgetattr(fd)
    except termios.error as exc:
        return bool(exc.args and exc.args[0] == errno.EIO)
    return False
