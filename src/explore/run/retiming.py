"""After a baseline a tracer slowed (mutate's coverage): the first plain whole run of the suite
times it from now on (decide/suite_time) — the search budget and the per-test limit. Returns the
next state; the loop (run/loop.Runner) keeps it."""

from __future__ import annotations

from ..decide import stop as giving_up
from ..decide import suite_time
from ..fanout.scheduler import FanOutResult
from ..model.events import Note, Subscriber
from ..model.runstate import RunState
from . import transitions
from .kit import Kit


def after_fanout(
    kit: Kit,
    run: RunState,
    timed: suite_time.SuiteTime | None,
    clock: giving_up.SearchClock | None,
    outcome: FanOutResult,
    emit: Subscriber,
) -> tuple[RunState, suite_time.SuiteTime] | None:
    """The state and the suite's timing once a plain whole run of the fan-out times the suite (the
    search budget's clock told in place); None: nothing to retime."""
    if timed is None:
        return None
    runs = suite_time.plain_runs(outcome.runs, outcome.ranking)
    settled = suite_time.settled(timed, runs, run.baseline_ids)
    if settled is None:
        return None
    why = "timed by a whole run without the baseline's coverage"
    if clock is not None:
        clock.suite_s = giving_up.suite_seconds(settled.test_s, kit.suite.overhead_s)
        emit(Note(f"search budget: {clock.describe()}, {why}"))
    limit = kit.suite.retime(settled.run)
    run = transitions.retimed(run, limit, kit.suite.command.slowest_pass_s)
    if limit is not None:
        emit(Note(f"per-test limit from now on: {limit:g}s, {why}"))
    return run, settled
