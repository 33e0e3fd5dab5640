"""Whole-suite first runs take turns (decide/first_run), best prospect first: each waiting
candidate is ranked as it would be if it passed every test (its agreement, confidence and diff
size, then the generator's order: scoring.Ranked), so the candidate most likely to win never
waits behind the others. The first run goes alone, with the machine to itself (mutate's first
candidate, screened against the failing tests, usually wins: a second whole suite beside it only
slows it down), then at most the executor's usable slots at once. A waiting candidate that could
not outrank a validated one even passing every test is not run — validation's "cannot beat", before
its run: with affected tests first, the same candidates would have ranked below it.

Measured on humanize (527 tests, 2 cores under a load of 6): one whole-suite run alone 3.8 s, two
side by side 6.9 s each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio

from ..decide import first_run
from ..decide.scoring import Ranked


@contextmanager
def off_the_clock(deadline: anyio.CancelScope | None) -> Iterator[None]:
    """deadline (a candidate's --branch-timeout scope) suspended inside the block — a wait for the
    others (its whole-suite turn, its twin's tests) is not the candidate's own time — and moved on
    by the time spent there when it ends."""
    if deadline is None:
        yield
        return
    saved, asked = deadline.deadline, anyio.current_time()
    deadline.deadline = math.inf
    try:
        yield
    finally:
        deadline.deadline = saved + (anyio.current_time() - asked)


class Turns:
    """The turns of one fan-out's whole-suite first runs (never read outside the fan-out)."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self.candidates = 0
        """How many candidates the fan-out has (what decide/first_run weighs the rounds by)."""
        self.standing: dict[str, float] = {}
        """Each candidate's confidence, as planned until it is realised: whether the best prospect
        stands above the others."""
        self.scored: dict[str, Ranked] = {}
        """Each validated result of a whole-suite first run, until it is withdrawn."""
        self.waiting: dict[str, Ranked] = {}
        """Each waiting candidate as it would rank passing every test."""
        self.running: set[str] = set()
        self.ended = 0
        """Whole-suite first runs over: until the first one is, it runs alone."""
        self._changed = anyio.Event()

    def first_wins(self) -> float:
        """How often the best prospect is taken to win (decide/first_run.first_wins)."""
        return first_run.first_wins(self.standing.values())

    @property
    def best(self) -> Ranked | None:
        """The best-ranked validated result of a whole-suite first run not withdrawn (the first
        given back among equals)."""
        return max(self.scored.values(), key=Ranked.key, default=None)

    def beaten(self, prospect: Ranked) -> bool:
        """The validated best outranks prospect even if prospect passes every test."""
        return self.best is not None and self.best.key() >= prospect.key()

    async def take(
        self,
        prospect: Ranked,
        deadline: anyio.CancelScope | None = None,
        waits: Callable[[list[str]], None] | None = None,
    ) -> bool:
        """Wait for the turn of prospect's candidate: True when it comes (give it back with
        `give_back`); False when a validated candidate outranks it whatever its run would find.
        deadline: the candidate's --branch-timeout scope, suspended while it waits (the others'
        whole suites are not its own time) and moved on by the time waited. waits: told once, with
        the candidates whose runs are under way, when the turn does not come at once."""
        with off_the_clock(deadline):
            return await self._take(prospect, waits)

    async def _take(self, prospect: Ranked, waits: Callable[[list[str]], None] | None) -> bool:
        cid = prospect.id
        self.waiting[cid] = prospect
        try:
            while True:
                if self.beaten(prospect):
                    return False
                first = max(self.waiting.values(), key=Ranked.key).id
                if len(self.running) < (self.slots if self.ended else 1) and first == cid:
                    self.running.add(cid)
                    return True
                if waits is not None:
                    waits(sorted(self.running))
                    waits = None
                await self._changed.wait()
        finally:
            del self.waiting[cid]
            self._notify()

    def give_back(self, cid: str, scored: Ranked | None) -> None:
        """cid's turn is over; scored: its rank when its whole suite is its validated score (None:
        it was not, or it failed)."""
        if cid not in self.running:
            return
        self.running.discard(cid)
        self.ended += 1
        if scored is not None:
            self.scored[cid] = scored
        self._notify()

    def withdraw(self, cid: str) -> None:
        """cid's validated result no longer counts (it was rejected after its turn: it wrote outside
        its worktree; or it runs again): it outranks nobody any more."""
        if self.scored.pop(cid, None) is not None:
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
