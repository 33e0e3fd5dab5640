"""When the run stops: the quality gate, the limits checked after each iteration (set-aside failures
only, max iterations, no progress, the search budget), giving up, and escalating to a person.

These are the loop's own state transitions (like run/transitions): each returns the next RunState
(a model_copy) and only the loop (run/loop.Runner) calls them. The search budget's rules are in
decide/stop."""

from __future__ import annotations

from ..decide import criticality, environment, escalation, targets
from ..decide import stop as giving_up
from ..model.config import Options
from ..model.runstate import EscalationCategory, RunState
from ..model.testresults import TestOutcome
from .transitions import ended


def clock(
    options: Options, suite_bound: bool, test_s: float, overhead_s: float, now: float
) -> giving_up.SearchClock | None:
    """The search budget's clock, in proportion to the suite's time as this run measured it (None: no budget)."""
    budget = giving_up.budget_for(options.search_budget_spec(), suite_bound)
    if budget is None:
        return None
    return giving_up.SearchClock(budget, giving_up.suite_seconds(test_s, overhead_s), now)


def gate(run: RunState, outcomes: dict[str, TestOutcome], options: Options) -> RunState:
    """The failing tests' criticality; the run succeeded (or ended partial) once the quality gate is met."""
    levels = {t: criticality.classify(t, outcomes.get(t), options.criticality) for t in run.current_failing}
    run = run.model_copy(update={"criticality": levels})
    blocking = targets.blocking(run.current_failing, run.targets, run.preexisting_failures)
    verdict = criticality.gate(run.current.pass_rate, {t: levels[t] for t in blocking}, options.target_pass_rate)
    if not verdict:
        return run
    awaiting = [t for t in run.awaiting_service if t in run.current_failing]
    if awaiting:  # the rest is repaired; what is left needs a person, not an edit
        reason = environment.awaiting_reason(run.environment_failures, awaiting)
        return escalated(run, EscalationCategory.external_service, reason, environment.SERVICE_ACTION, "")
    reason = "the quality gate is met" + (" (the whole suite is green)" if verdict == "succeeded" else "")
    if verdict == "succeeded" and run.current_failing:
        reason = (
            f"the quality gate is met (every target passes; {len(run.current_failing)} "
            "pre-existing failure(s) outside the targets left alone)"
        )
    return ended(run, verdict, reason)


def gave_up(
    run: RunState, why: giving_up.Why, clock: giving_up.SearchClock, now: float, agent: str, generator: str
) -> RunState:
    """The search budget spent (or the search complete): failed, with what was tried and how to spend more."""
    account = giving_up.account(why, clock, now, run, agent)
    return ended(run.model_copy(update={"gave_up": account}), "failed", giving_up.reason(account, clock, generator))


def escalated(run: RunState, category: EscalationCategory, reason: str, action: str, agent: str) -> RunState:
    """A person is needed: the escalation's category, reason and suggested action."""
    info = escalation.info(
        category,
        reason,
        action,
        run.run_id,
        len(run.iterations),
        agent,
        any(r.commit for r in run.iterations),
    )
    return run.model_copy(update={"status": "escalated", "escalation": info, "stop_reason": f"escalated ({category})"})


def after_iteration(
    run: RunState,
    n: int,
    flaky: frozenset[str],
    options: Options,
    clock: giving_up.SearchClock | None,
    now: float,
    agent: str,
    generator: str,
) -> RunState:
    """After iteration n (the gate checked): stop when only set-aside failures remain, at the
    iteration limit, after too many iterations without progress, or once the search budget is spent.
    flaky: the tests flaky when the iteration began."""
    if run.status != "running":
        return run
    left = [t for t in targets.to_repair(run.current_failing, run.targets) if t not in run.set_aside and t not in flaky]
    if not left and run.set_aside:
        return ended(run, "failed", f"only set-aside failures remain: {', '.join(run.set_aside)}")
    if n >= options.max_iterations:
        return ended(run, "failed", f"max iterations ({options.max_iterations}) spent")
    if run.no_progress >= options.no_progress_limit:
        return ended(run, "failed", f"no progress in {run.no_progress} iterations in a row")
    if clock is not None and clock.over(now):
        return gave_up(run, "search_budget", clock, now, agent, generator)
    return run
