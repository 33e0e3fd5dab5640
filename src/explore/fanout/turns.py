"""Whole-suite first runs take turns (decide/first_run): the generator's best-ranked waiting
candidate first, so the candidate most likely to win never waits behind the others; the first run
alone, with the machine to itself (mutate's first candidate, screened against the failing tests,
usually wins: a second whole suite beside it would only slow it down), then at most the
executor's usable slots at once. Once a candidate's whole suite has passed every test, the ones
still waiting are not run (nothing can beat it: validation's "cannot beat 100%", before their run).

Measured on humanize (527 tests, 2 cores under a load of 6): one whole-suite run alone 3.8 s, two
side by side 6.9 s each.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from ..decide import scoring


class Turns:
    """The turns of one fan-out's whole-suite first runs (never read outside the fan-out)."""

    def __init__(self, order: Sequence[str], slots: int, floor: float) -> None:
        self.rank = {cid: k for k, cid in enumerate(order)}
        """The generator's order (plan order): a candidate's rank among the waiting ones."""
        self.slots = max(1, slots)
        self.floor = floor
        """The best pass rate a whole-suite first run has found so far (at least the current one)."""
        self.waiting: list[str] = []
        self.running: set[str] = set()
        self.ended = 0
        """Whole-suite first runs over: until the first one is, it runs alone."""
        self._changed = anyio.Event()

    @property
    def candidates(self) -> int:
        return len(self.rank)

    def unbeatable(self) -> bool:
        """No candidate can improve on what a whole-suite first run found: every test passed."""
        return not scoring.is_improvement(100.0, self.floor)

    async def take(self, cid: str) -> bool:
        """Wait for cid's turn: True when it is (give it back with `give_back`); False when a
        candidate's whole suite passed every test meanwhile (cid's is not run)."""
        self.waiting.append(cid)
        try:
            while True:
                if self.unbeatable():
                    return False
                first = min(self.waiting, key=lambda c: self.rank.get(c, len(self.rank)))
                if len(self.running) < (self.slots if self.ended else 1) and first == cid:
                    self.running.add(cid)
                    return True
                await self._changed.wait()
        finally:
            self.waiting.remove(cid)
            self._notify()

    def give_back(self, cid: str, pass_rate: float | None) -> None:
        """cid's turn is over; pass_rate: what its whole suite found, when that run is its
        validated score (None: it was not, or it failed)."""
        if cid not in self.running:
            return
        self.running.discard(cid)
        self.ended += 1
        if pass_rate is not None:
            self.floor = max(self.floor, pass_rate)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
