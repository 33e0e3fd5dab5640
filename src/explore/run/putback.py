"""A fan-out cut short (a signal, an error, a generator lost mid-way): what its candidates wrote
outside their worktrees and no check has put back yet is put back before the process goes, and the
run's state names it. Returns the next state; the loop (run/loop.Runner) keeps it."""

from __future__ import annotations

import anyio

from ..edges import attribution
from ..model.events import Note, Subscriber
from ..model.runstate import RunState
from . import transitions
from .kit import Kit


async def after_cut(kit: Kit, run: RunState, watch: attribution.Watch, emit: Subscriber) -> RunState:
    """The fan-out was cut short: what candidates wrote outside their worktrees and no check has
    put back yet is put back now, before the process goes, and the run's state names it with what
    the candidates' checks had already put back (their results, which said so, are not recorded)."""
    done = list(watch.restored)
    try:
        after = await anyio.to_thread.run_sync(kit.guard.fingerprint)
        if kit.guard.compare(watch.baseline, after):
            done.append(await anyio.to_thread.run_sync(kit.guard.restore, watch.baseline, after, f"{watch.label}-cut"))
    except (OSError, RuntimeError) as exc:
        emit(Note(f"could not check what the candidates changed outside their worktrees: {exc}"))
    paths = sorted({p for change in done for p in change.paths})
    if not paths:
        return run
    kept = next((c.quarantine for c in reversed(done) if c.quarantine), None)
    run = transitions.put_back(run, paths, kept)
    held = (
        "put back" if all(c.restored for c in done) else "put back, but changed again since (a process still writing?)"
    )
    where = f"; what was there is kept in {kept}" if kept else ""
    emit(Note(f"{held}: {', '.join(paths[:8])}, written outside a candidate's worktree{where}"))
    return run
