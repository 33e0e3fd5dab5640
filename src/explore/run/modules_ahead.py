"""explore's own modules that only an iteration needs (the fan-out, its checks and scoring, the
iteration's steps) or the run's end (the report), imported on a thread while the baseline runs.

Every module a run imports before the baseline's first pytest process starts is on the path of a
start-up-bound suite's repair: on a sub-second suite each 0.1 s of it is 0.1x of the run's time
against the suite's. These modules are not needed until the baseline has ended, so run/loop imports
them where an iteration uses them, and the baseline starts this thread, which waits until the
suite's first process has been spawned: the import then goes on the core a one-process baseline
leaves idle, and does not take the GIL from the main thread while it prepares the spawn (started
before it, at load 2 the baseline spawned no sooner than without the thread). An iteration that begins before the thread is
done waits on Python's own lock of the module being imported (explore's modules import no cycle:
tests/test_layers), and an import that fails here fails again, with its error, where it is used."""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("explore.run")

ITERATION_MODULES = ("..fanout.scheduler", ".iteration", ".beside", ".retiming", ".reports")
"""Relative to this package; each pulls in what it needs (fanout/*, decide/scoring, decide/policy…);
the last, the run's report and `--json` summary, is for the run's end (cli/session)."""


WAIT_S = 5.0
"""How long the thread waits for `started`: past it (a suite that never spawns, a slow setup) it imports anyway."""


def import_ahead(
    started: Callable[[], object] = lambda: True, names: tuple[str, ...] = ITERATION_MODULES
) -> threading.Thread:
    """A daemon thread importing `names` once `started()` is true (checked every 10 ms, WAIT_S at
    most): a run that ends before it does never waits for it."""
    thread = threading.Thread(target=_import, args=(started, names), name="explore-modules-ahead", daemon=True)
    thread.start()
    return thread


def _import(started: Callable[[], object], names: tuple[str, ...]) -> None:
    until = time.monotonic() + WAIT_S
    while not started() and time.monotonic() < until:
        time.sleep(0.01)
    for name in names:
        try:
            importlib.import_module(name, __package__)
        except Exception:  # raised again where the module is used
            log.debug("modules ahead: %s not imported", name, exc_info=True)
