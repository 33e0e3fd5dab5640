"""The run's state transitions: each takes the RunState and what a step found, and returns the next
RunState (a model_copy; the state it was given is left as it was).

Only the loop (run/loop.Runner) calls them: it is the one writer of the run's state, and it keeps what
they return. The stop checks (run/stops) are transitions of the same kind."""

from __future__ import annotations

from pathlib import Path

from ..decide import history, scoring
from ..model.candidates import IterationRecord
from ..model.errors import InternalError
from ..model.phase import RunPhase
from ..model.runstate import Reproduction, RunState, RunStatus
from ..model.testresults import TestRun
from ..model.usage import Usage
from . import adoption
from .baseline import Baseline
from .merging import Ending


def yardstick(run: RunState) -> scoring.Yardstick:
    """What counts as passing and failing against the run's baseline: only a measured one (a run
    interrupted in its baseline measures it again on resume). Without it every pass rate would be
    0 % or 100 % of nothing: InternalError, never a score."""
    if not run.baselined:
        raise InternalError(
            f"run {run.run_id}: asked to score against a baseline that was never measured (phase {run.phase}); "
            "this is a bug in explore: `explore resume` measures the baseline again"
        )
    flaky = frozenset(run.flaky)  # counted neither way: never a reason to merge or reject
    return scoring.Yardstick(
        frozenset(run.baseline_ids) - flaky,
        frozenset(run.baseline_skipped) | flaky,
        frozenset(run.baseline_xfailed),
        frozenset(run.baseline_unconfirmed),
    )


def checkpoint(run: RunState, phase: RunPhase | None, worktrees: list[str], pids: list[int], now: float) -> RunState:
    """The state as it is saved: the step reached, the run's worktrees and processes, its duration."""
    update: dict[str, object] = {"worktrees": worktrees, "pids": pids, "duration_s": round(now - run.started_at, 3)}
    if phase:
        update["phase"] = phase
    return run.model_copy(update=update)


def current(run: RunState, tests: TestRun) -> RunState:
    """The tests as `tests` found them are the run's current counts, failing tests and messages."""
    yard = yardstick(run)
    failing = yard.failing(tests)
    return run.model_copy(
        update={
            "current": yard.counts(tests),
            "current_failing": failing,
            "failure_messages": {
                i: (tests.outcomes[i].message if i in tests.outcomes else "missing from the run")[:500] for i in failing
            },
        }
    )


def spent(run: RunState, *costs: Usage) -> RunState:
    """What a step's generator calls (or each candidate) cost, added to the run's usage in turn."""
    total = run.usage
    for cost in costs:
        total = total + cost
    return run.model_copy(update={"usage": total})


def ended(run: RunState, status: RunStatus, reason: str) -> RunState:
    """The run stops: how, and why."""
    return run.model_copy(update={"status": status, "stop_reason": reason})


def put_back(run: RunState, paths: list[str], kept: Path | None) -> RunState:
    """What a candidate wrote outside its worktree, put back as the run stopped short."""
    return run.model_copy(
        update={
            "restored": sorted(set(run.restored) | set(paths)),
            "restored_kept": str(kept) if kept else run.restored_kept,
        }
    )


def broken(run: RunState, exc: BaseException) -> RunState:
    """An error of explore's own stopped the run: interrupted, the error and what was put back named,
    so that `explore resume` goes on from the last checkpoint."""
    while getattr(exc, "exceptions", None):  # a task group's: the first error it holds
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    cause = f"stopped by an error of explore's own ({type(exc).__name__}: {str(exc)[:200]})"
    return ended(run, "interrupted", interrupted_reason(run, cause))


def interrupted_reason(run: RunState, cause: str = "interrupted by a signal") -> str:
    """The stop reason of a run a signal (or an error of explore's own: cause) stopped: what it put
    back, and how it goes on."""
    if not run.restored:
        return f"{cause}; `explore resume` continues"
    shown = ", ".join(run.restored[:8]) + (f" (+{len(run.restored) - 8} more)" if len(run.restored) > 8 else "")
    kept = f" (what was there is kept in {run.restored_kept})" if run.restored_kept else ""
    return (
        f"{cause}; restored what a candidate had written outside its worktree: {shown}{kept}; "
        "`explore resume` continues"
    )


# ------------------------------------------------------------------ the run's start and end


def resumed(run: RunState, pid: int) -> RunState:
    """`explore resume`: running again in this process, the last session's ending forgotten."""
    return run.model_copy(
        update={
            "pid": pid,
            "status": "running",
            "escalation": None,
            "stop_reason": None,
            "no_progress": 0,
            "gave_up": None,
        }
    )


def hinted(run: RunState, hint: str) -> RunState:
    """A person's hint for the generator (kept in the report whether or not it reads it)."""
    return run.model_copy(update={"hints": [*run.hints, hint]})


def unrecorded(run: RunState, total: Usage) -> RunState:
    """The run's usage with what the generator spent and no step recorded (model/usage.unrecorded)."""
    return run.model_copy(update={"usage": total})


def finished(run: RunState, ending: Ending) -> RunState:
    """Where the result is once the run ended (merging.finish); finished unless interrupted."""
    update: dict[str, object] = {"merged_commit": ending.merged_commit, "branch": ending.branch}
    if ending.application is not None:
        update.update(application=ending.application, applied=True)
    update["finished"] = run.status != "interrupted"
    return run.model_copy(update=update)


# ------------------------------------------------------------------ the baseline


def baselined(run: RunState, found: Baseline) -> RunState:
    """What the baseline tells about the tests (written before its escalation, if any, is raised)."""
    chosen = found.targets
    update: dict[str, object] = {
        "baselined": True,
        "baseline_skipped": found.skipped,
        "baseline_ids": found.ids,
        "baseline_xfailed": found.xfailed,
        "baseline_opened": found.opened,
        "baseline_unconfirmed": found.unconfirmed,
        "slowest_pass_s": found.slowest_pass_s,
        "flaky": found.flaky,
        "targets": chosen.targets,
        "preexisting_failures": chosen.preexisting,
        "known_failures": chosen.known_failures,
        "environment_failures": chosen.environment_failures,
        "awaiting_service": chosen.awaiting_service,
    }
    if found.test_timeout is not None:
        update["test_timeout"] = found.test_timeout
    run = current(run.model_copy(update=update), found.run)  # true counts even when the baseline escalates
    return run.model_copy(update={"baseline": run.current.model_copy(), "baseline_failing": list(run.current_failing)})


def measured(run: RunState, found: Baseline) -> RunState:
    """The baseline's run is the current state and the baseline counts; a failing test an earlier run
    set aside is one unmoved iteration short of being set aside again."""
    run = current(run, found.run)
    earlier = set(found.set_aside_before) & set(run.current_failing)
    return run.model_copy(
        update={
            "baseline": run.current.model_copy(),
            "unmoved_streak": {t: history.SET_ASIDE_AFTER - 1 for t in sorted(earlier)},
            "baseline_timeouts": found.timeouts,
            "baseline_slow": found.slow,
        }
    )


def reproduction_tried(run: RunState, result: Reproduction) -> RunState:
    """`--issue`'s samples: their cost and what they found."""
    return spent(run, *(attempt.usage for attempt in result.samples)).model_copy(update={"reproduction": result})


def not_reproduced(run: RunState, tests: TestRun) -> RunState:
    """No sample kept: the suite on the base commit is the baseline the escalation reports."""
    run = run.model_copy(
        update={
            "baselined": True,
            "baseline_ids": sorted(i for i, o in tests.outcomes.items() if o.outcome != "skipped"),
        }
    )
    run = current(run, tests)
    return run.model_copy(update={"baseline": run.current.model_copy()})


def reproduction_committed(run: RunState, commit: str) -> RunState:
    """The kept tests' commit ("reproduce: …") is the run's current commit."""
    assert run.reproduction is not None
    return run.model_copy(
        update={"current_commit": commit, "reproduction": run.reproduction.model_copy(update={"commit": commit})}
    )


def adopted(run: RunState, record: IterationRecord) -> RunState:
    """On resume: an iteration merged on the run branch after the last save (adoption.py)."""
    return run.model_copy(
        update={
            "current_commit": record.commit,
            "merged_commit": record.commit,
            "iterations": [*run.iterations, record],
        }
    )


def retested(run: RunState, tests: TestRun) -> RunState:
    """On resume: the current commit's fresh results; an adopted iteration gets its figures from them."""
    run = current(run, tests)
    last = run.iterations[-1] if run.iterations else None
    if last and last.strategy_reason == adoption.RECOVERED and not last.failed_tests and last.pass_rate == 0:
        last = last.model_copy(update={"pass_rate": run.current.pass_rate, "failed_tests": list(run.current_failing)})
        run = run.model_copy(update={"iterations": [*run.iterations[:-1], last]})
    return run


# ------------------------------------------------------------------ an iteration


def recorded(run: RunState, record: IterationRecord) -> RunState:
    """The iteration's record among the run's iterations (once)."""
    if any(r is record for r in run.iterations):
        return run
    return run.model_copy(update={"iterations": [*run.iterations, record]})


def found_flaky(run: RunState, tests: list[str]) -> RunState:
    """Tests that failed in a candidate's run and passed rerun alone are flaky from now on."""
    return run.model_copy(update={"flaky": sorted(set(run.flaky) | set(tests))})


def flaky_at_baseline(run: RunState, tests: list[str], baseline: TestRun) -> RunState:
    """Tests the baseline's rerun found flaky beside the first proposal (issue 40.4): flaky from now
    on, and out of the current and the baseline's counts, as if the baseline had found them."""
    run = current(found_flaky(run, tests), baseline)
    return run.model_copy(update={"baseline": run.current.model_copy(), "baseline_failing": list(run.current_failing)})


def merged(run: RunState, commit: str, tests: TestRun) -> RunState:
    """The merged commit is the current one; its tests' run is the current state."""
    return current(run.model_copy(update={"current_commit": commit, "merged_commit": commit}), tests)


def unmoved(run: RunState, tests: list[str]) -> tuple[RunState, list[str]]:
    """A failing test that no edit the generator tried has moved, in two iterations running, is set
    aside: later iterations no longer aim at it. Returns the state and the tests set aside now."""
    streak = history.unmoved_streaks(run.unmoved_streak, tests, run.current_failing)
    new = history.to_set_aside(streak, run.set_aside)
    return run.model_copy(update={"unmoved_streak": streak, "set_aside": [*run.set_aside, *new]}), new


def iterated(run: RunState, record: IterationRecord) -> RunState:
    """The iteration done: in the run's iterations, and the count of iterations without a merge."""
    run = recorded(run, record)
    return run.model_copy(update={"no_progress": 0 if record.commit else run.no_progress + 1})


def retimed(run: RunState, test_timeout: float | None, slowest_pass_s: float) -> RunState:
    """The suite timed by a plain whole run (decide/suite_time): the per-test limit (None: configured,
    kept) and the slowest pass a resumed run starts from."""
    update: dict[str, object] = {"slowest_pass_s": slowest_pass_s}
    if test_timeout is not None:
        update["test_timeout"] = test_timeout
    return run.model_copy(update=update)


def end_booked(run: RunState, seconds: float) -> RunState:
    """The run's end (processes, worktrees, the result applied) booked on its last iteration's timing."""
    if not run.iterations:
        return run
    last = run.iterations[-1]
    timing = last.timing.model_copy(update={"end": round(last.timing.end + seconds, 3)})
    return run.model_copy(update={"iterations": [*run.iterations[:-1], last.model_copy(update={"timing": timing})]})


def report_committed(run: RunState, tip: str) -> RunState:
    """`--commit-reports`: the debug report's commit is the run's tip."""
    return run.model_copy(update={"current_commit": tip, "merged_commit": tip})
