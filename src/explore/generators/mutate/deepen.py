"""The search past its first answer: when nothing screened so far fixes a single failing test,
mutate widens, one stage after another, until its time allowance is spent — rather than stopping
after a fixed count of mutants while most of its seconds are left.

The stages, each screened in rank order with the ranking and the screening worker of the first
pass (search.py, screen.py), each only while nothing plausible has turned up:

1. the second-tier operators (ops_compound) at the lines already searched;
2. every operator at the suspicious lines the first pass left out;
3. second-order mutants: two edits (at one line or two) among the singles that ran at the most
   suspicious lines, after every single edit (pairing.py).

Before those, a search the strategy keeps to single-token edits widens (`widen`) when none of them
fixes every failing test: every operator's mutants at the same lines, smallest first but not only.
"""

from __future__ import annotations

from collections.abc import Callable

from . import pairing
from .edits import Mutant
from .localise import Suspect
from .operators import TIERS
from .prepared import Prepared
from .screen import Job, Slot
from .search import Budget, Search, screen_in_order

UNBOUNDED = 10**9
"""The count of mutants no longer binds while deepening: the seconds do."""


def _stage(search: Search, suspects: list[Suspect], tiers: tuple[int, ...], tried: list[str]) -> Search:
    return Search(
        search.workdir,
        search.sources,
        search.spectrum,
        suspects,
        tried=tried,
        changed=search.changed,
        max_lines=len(suspects),
        tiers=tiers,
    )


async def deepen(
    search: Search,
    screened: list[Prepared],
    tried: list[str],
    slots: list[Slot],
    budget: Budget,
    job_for: Callable[[Prepared], Job],
    settle: Callable[[list[tuple[Mutant, float]]], Callable[[list[Prepared]], bool]],
) -> tuple[list[Prepared], list[Prepared]]:
    """(singles, pairs) screened by the stages above; the caller calls it only when `screened`
    holds no plausible mutant."""
    budget.mutants = max(budget.mutants, budget.screened + UNBOUNDED)
    singles: list[Prepared] = []
    pairs: list[Prepared] = []
    searched = {(s.file, s.line) for s in search.suspects}
    rest = [s for s in search.all_suspects if (s.file, s.line) not in searched]
    stages = [(search.suspects, (2,)), (rest, TIERS)]
    for suspects, tiers in stages:
        if budget.left_s() <= 0 or any(p.plausible for p in singles):
            return singles, pairs
        if not suspects:
            continue
        stage = _stage(search, suspects, tiers, [*tried, *(p.patch for p in screened + singles)])
        ranked = stage.ranked()
        singles += await screen_in_order(stage.prepare(ranked, UNBOUNDED), slots, budget, job_for, settle(ranked))
        _account(search, stage)
        search.reached |= stage.reached
    if budget.left_s() <= 0 or any(p.plausible for p in singles):
        return singles, pairs
    ranked = pairing.at_top(screened + singles, search.weight)
    stage = _stage(search, search.suspects, TIERS, [*tried, *(p.patch for p in screened + singles)])
    pairs = await screen_in_order(stage.prepare(ranked, UNBOUNDED), slots, budget, job_for, settle(ranked))
    _account(search, stage)
    return singles, pairs


def _account(search: Search, stage: Search) -> None:
    """A stage's preparation time and skipped mutants count as the search's own."""
    search.prepare_s += stage.prepare_s
    for reason, count in stage.skipped.items():
        if reason != "tried":
            search.skipped[reason] = search.skipped.get(reason, 0) + count


async def widen(
    search: Search,
    screened: list[Prepared],
    tried: list[str],
    slots: list[Slot],
    budget: Budget,
    job_for: Callable[[Prepared], Job],
    settle: Callable[[list[tuple[Mutant, float]]], Callable[[list[Prepared]], bool]],
) -> list[Prepared]:
    """Smallest first, not smallest only: when no single-token edit fixes every failing test, the rest of the budget
    screens every operator's mutants (the single-token ones already screened left out)."""
    wide = Search(
        search.workdir,
        search.sources,
        search.spectrum,
        search.suspects,
        tried=[*tried, *(p.patch for p in screened)],
        single_token=False,
        changed=search.changed,
        max_lines=len(search.suspects),
    )
    ranked = wide.ranked()
    found = await screen_in_order(
        wide.prepare(ranked, budget.mutants - budget.screened), slots, budget, job_for, settle(ranked)
    )
    _account(search, wide)  # the single-token mutants screened already ("tried") are not news
    return found
