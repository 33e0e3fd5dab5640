"""Giving up in proportion (issue 27.4): when the search has had no repair in sight for longer than
the search budget — a multiple of the suite's time, or a fixed duration — or the generator has
searched all it can, the run stops and says what it tried and how to spend more.

Pure: the clock is read by the loop and handed in (`now`, monotonic seconds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from ..model.config import SearchBudget, parse_search_budget
from ..model.runstate import GaveUp, RunState
from . import escalation

DEFAULT = parse_search_budget("10x")
"""The search budget of a generator whose search grows with the suite (mutate), when none is set."""
BUDGET_FLOOR_S = 30.0
"""A multiple of a sub-second suite is too short for any search: `Nx` gives at least this."""
MORE = 3
"""How much more the advice suggests: three times the budget that ran out."""

Why = Literal["search_budget", "search_complete"]


def budget_for(setting: SearchBudget | None, suite_bound: bool) -> SearchBudget | None:
    """The budget a run keeps to: the one set (flag or `[tool.explore]`), for any generator; else
    DEFAULT for a generator whose search grows with the suite (mutate), and none for one that
    calls a model or an agent (its time is the model's, bounded by `--budget-usd`, `--branch-timeout`
    and the no-progress rule)."""
    if setting is not None:
        return setting
    return DEFAULT if suite_bound else None


def budget_seconds(budget: SearchBudget, suite_s: float) -> float:
    """`Nx`: N times the suite's time, at least BUDGET_FLOOR_S; a duration (`90s`): itself."""
    if budget.seconds is not None:
        return budget.seconds
    assert budget.factor is not None
    return max(BUDGET_FLOOR_S, budget.factor * max(suite_s, 0.0))


def suite_seconds(test_s: float, overhead_s: float) -> float:
    """The suite's time as one plain run would take it: its tests' seconds (summed over shards, so
    more cores do not shrink the budget) plus one process's start-up and collection."""
    return max(test_s, 0.0) + max(overhead_s, 0.0)


class SearchInputs(NamedTuple):
    """What a generator's search depends on: asked again with the same, a deterministic search
    (mutate) finds the same."""

    commit: str
    strategy: str
    aimed: frozenset[str]
    """The failing tests the iteration aims at (set-aside and flaky ones left out)."""


@dataclass
class SearchClock:
    """Seconds of search with no repair in sight: from the end of the baseline (or a resumed run's
    re-test), restarted at every merged improvement. Checked between iterations, so an iteration
    that has candidates always finishes their validation."""

    budget: SearchBudget
    suite_s: float
    started: float
    exhausted_on: SearchInputs | None = None
    """The inputs of the last proposal that searched all it could and found nothing."""

    @property
    def budget_s(self) -> float:
        return budget_seconds(self.budget, self.suite_s)

    def spent(self, now: float) -> float:
        return max(0.0, now - self.started)

    def deadline(self) -> float:
        """When the budget runs out (monotonic): a generator may stop its own search there."""
        return self.started + self.budget_s

    def over(self, now: float) -> bool:
        return self.spent(now) >= self.budget_s

    def restart(self, now: float) -> None:
        """A merged improvement: the repair is moving, the clock starts again."""
        self.started, self.exhausted_on = now, None

    def nothing_left(self, inputs: SearchInputs) -> bool:
        """The last search was complete with nothing found, and the next would ask the same."""
        return self.exhausted_on is not None and self.exhausted_on == inputs

    def describe(self) -> str:
        """`30s (10x the suite's 1.2s, at least 30s)`, or `90s` when set as a duration."""
        if self.budget.factor is None:
            return f"{self.budget_s:.0f}s"
        floor = f", at least {BUDGET_FLOOR_S:.0f}s" if self.budget_s == BUDGET_FLOOR_S else ""
        return f"{self.budget_s:.0f}s ({self.budget.text} the suite's {self.suite_s:.1f}s{floor})"


def more(budget: SearchBudget) -> str:
    """The setting that searches MORE times longer: `10x` → `30x`, `90s` → `270s`."""
    if budget.factor is not None:
        return parse_search_budget(f"{budget.factor * MORE:g}x").text
    assert budget.seconds is not None
    return parse_search_budget(f"{budget.seconds * MORE:g}s").text


def account(why: Why, clock: SearchClock, now: float, run: RunState, agent: str) -> GaveUp:
    """What was tried in this run and how to spend more."""
    spend: list[str] = []
    if why == "search_budget":
        bigger = more(clock.budget)
        spend += [f"explore run --search-budget {bigger}", f'search-budget = "{bigger}" in [tool.explore]']
    if not escalation.uses_hints(agent):  # only mutate, in a chain or a fleet: no generator reads the code
        spend.append("a generator that reads the code: --agent anthropic (ANTHROPIC_API_KEY) or --agent claude-code")
    elif why == "search_complete":
        spend.append("another generator: --agent with a different one, or a chain such as --agent claude-code,codex")
    return GaveUp(
        why=why,
        search_s=round(clock.spent(now), 3),
        budget_s=round(clock.budget_s, 3),
        budget=clock.budget.text,
        suite_s=round(clock.suite_s, 3),
        iterations=len(run.iterations),
        strategies=[r.strategy for r in run.iterations],
        candidates=sum(len(r.candidates) for r in run.iterations),
        mutants_screened=run.usage.mutate.mutants_screened,
        spend_more=spend,
    )


def tried(g: GaveUp) -> str:
    """`3 iterations (conservative, conservative, exploratory), 7 candidates, 412 mutants screened`."""
    parts = [
        f"{g.iterations} iteration{'s' if g.iterations != 1 else ''}"
        + (f" ({', '.join(g.strategies)})" if g.strategies else ""),
        f"{g.candidates} candidate{'s' if g.candidates != 1 else ''}",
    ]
    if g.mutants_screened:
        parts.append(f"{g.mutants_screened} mutant{'s' if g.mutants_screened != 1 else ''} screened")
    return ", ".join(parts)


def reason(g: GaveUp, clock: SearchClock, generator: str) -> str:
    """The run's stop reason: why it gave up, what it tried, how to spend more."""
    if g.why == "search_budget":
        head = (
            f"gave up: no repair in sight after {g.search_s:.0f}s of search "
            f"(the search budget: {clock.describe()}; --search-budget)"
        )
    else:
        head = (
            f"gave up: {generator}'s search is complete on this commit and found no repair; "
            "asked again it would find the same"
        )
    spend = "; or ".join(g.spend_more) if g.spend_more else "nothing more this generator can do"
    return f"{head}. Tried: {tried(g)}. To spend more: {spend}"
