"""SIGINT and SIGTERM during a run: the first cancels the run's scope (state saved, exit 130), a
second forces the exit."""

from __future__ import annotations

import signal
from collections.abc import Callable

import anyio


async def watch(scope: anyio.CancelScope, on_signal: Callable[[bool], None]) -> None:
    """on_signal(again) for each signal; the first one also cancels scope."""
    seen = False
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            on_signal(seen)
            if not seen:
                seen = True
                scope.cancel()
