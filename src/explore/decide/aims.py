"""What a candidate is aimed at, and when a target found flaky after the proposal withdraws it
(issue 40.4): the baseline's last flaky rerun runs beside the first proposal and its fan-out, so a
test it finds flaky may already have candidates aimed at it, running or not. A candidate aimed only
at such tests would be scored against a failure that was never there: it is withdrawn, its tests
stopped. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model.candidates import CandidatePlan

SHOWN = 3
"""Tests named in a withdrawal's reason (the rest counted)."""


def aimed_at(plan: CandidatePlan, failing: Sequence[str]) -> frozenset[str]:
    """The failing tests the generator says the plan fixes (mutate's screening: `data["fixed"]`),
    else every failing test the proposal was asked to repair."""
    fixed = plan.data.get("fixed")
    if isinstance(fixed, list) and fixed and all(isinstance(i, str) for i in fixed):
        return frozenset(fixed)
    return frozenset(failing)


def withdrawn(plans: Iterable[CandidatePlan], failing: Sequence[str], flaky: frozenset[str]) -> dict[str, str]:
    """The plans aimed only at tests now known flaky, each with its reason (by plan id)."""
    found: dict[str, str] = {}
    for plan in plans:
        aims = aimed_at(plan, failing)
        if aims and aims <= flaky:
            named = sorted(aims)
            more = f" (+{len(named) - SHOWN} more)" if len(named) > SHOWN else ""
            found[plan.id] = (
                f"withdrawn: aimed only at {', '.join(named[:SHOWN])}{more}, found flaky by the baseline's rerun "
                "beside the first iteration (it failed in the baseline and passed rerun alone)"
            )
    return found
