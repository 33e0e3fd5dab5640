"""Whole-suite first runs take turns (decide/first_run), best prospect first: each waiting
candidate is ranked as it would be if it passed every test (its agreement, confidence and diff
size, then the generator's order: scoring.Ranked), so the candidate most likely to win never
waits behind the others. The first run goes alone, with the machine to itself (mutate's first
candidate, screened against the failing tests, usually wins: a second whole suite beside it only
slows it down), then at most the executor's usable slots at once. A waiting candidate that could
not outrank a validated one even passing every test is not run — validation's "cannot beat", before
its run: with affected tests first, the same candidates would have ranked below it.

A candidate whose affected tests all pass (testjobs.prospect) starts its whole run at once, beside
the turns: while it runs, a waiting candidate it outranks waits for its result, and a running
whole-suite first run it outranks — one that cannot beat it even passing every test — is stopped
(issue 40: the fix's whole run waited 28.6 s for a wrong candidate's). A stopped candidate is
"not tested" like one whose turn never came: validation runs its suite should the prospect fail.
So is a running one in which tests it does not fix have failed (explore's plugin writes their ids
beside the run's progress file), once the prospect or the validated best outranks the best pass
rate it can still reach — which validation then holds it to.

Measured on humanize (527 tests, 2 cores under a load of 6): one whole-suite run alone 3.8 s, two
side by side 6.9 s each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Set
from contextlib import contextmanager
from pathlib import Path

import anyio

from ..decide import first_run, scoring
from ..decide.scoring import Ranked
from ..edges import progress

WATCH_S = 1.0
"""How often a running whole-suite first run's failures are read (stop_when_outranked)."""


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
        self.holding: dict[str, Ranked] = {}
        """Each running candidate as it would rank passing every test."""
        self.runs: dict[str, anyio.CancelScope] = {}
        """The scope of each running whole-suite first run (`stoppable`)."""
        self.prospect: Ranked | None = None
        """The best prospect whose whole run is under way, as it ranks passing every test."""
        self.stopped: dict[str, str] = {}
        """Candidates whose whole-suite first run was stopped, with why (who outranks them)."""
        self.caps: dict[str, float] = {}
        """The best pass rate a stopped candidate's run could still have reached (validation's
        "best possible" for it: 100 unless tests it does not fix had failed in it)."""
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

    def held(self, waiting: Ranked) -> bool:
        """A prospect's whole run is under way that outranks waiting even if waiting passes every
        test: waiting's run would matter only if the prospect's fails."""
        return self.prospect is not None and self.prospect.key() > waiting.key()

    def prospect_starts(self, prospect: Ranked) -> list[str]:
        """prospect (as it ranks passing every test) starts its whole run: the running whole-suite
        first runs it outranks are stopped (their `stoppable` scope cancelled), the waiting ones
        it outranks wait for its result. Returns the stopped candidates."""
        self.prospect = prospect
        stopped = [cid for cid, rank in self.holding.items() if cid in self.runs and self.held(rank)]
        for cid in stopped:
            why = f"its whole run was stopped: {prospect.id}'s affected tests all pass"
            self.stop(cid, f"candidate {prospect.id} outranks it even if it passed every test ({why})")
        self._notify()
        return stopped

    def above(self, bound: Ranked) -> Ranked | None:
        """The prospect or the validated best, whichever outranks bound (a running candidate at the
        best its run can still score), or None."""
        for rival in (self.prospect, self.best):
            if rival is not None and rival.id != bound.id and rival.key() > bound.key():
                return rival
        return None

    def stop(self, cid: str, why: str, cap: float = 100.0) -> None:
        """cid's running whole-suite first run can no longer outrank another: stopped (its
        `stoppable` scope cancelled), with why for its "not tested" and the best pass rate it could
        still have reached."""
        if cid in self.runs:
            self.stopped[cid], self.caps[cid] = why, cap
            self.runs[cid].cancel()

    def prospect_ends(self, scored: Ranked | None) -> None:
        """The prospect's whole run is over; scored: its rank when that run is its validated score
        (what the others must beat, as a turn's is), None when it failed or did not validate."""
        if self.prospect is not None and scored is not None:
            self.scored[self.prospect.id] = scored
        self.prospect = None
        self._notify()

    async def stop_when_outranked(
        self, cid: str, marks: Path, failing_now: Set[str], total: int, rank_at: Callable[[float], Ranked]
    ) -> None:
        """While cid's whole-suite first run goes (until cancelled): the tests failing now that fail
        in it too (marks: its progress file) — a flaky rerun could excuse a newly failing test, never
        these — bound the best pass rate it can still reach (rank_at: cid ranked at a pass rate);
        once the prospect or the validated best outranks that, its run is stopped (`stop`)."""
        while True:
            await anyio.sleep(WATCH_S)
            still = len(await anyio.to_thread.run_sync(progress.failed_ids, marks) & failing_now)
            if not still:
                continue
            cap = scoring.pass_rate(total - still, max(1, total))
            rival = self.above(rank_at(cap))
            if rival is not None:
                tests = "test" if still == 1 else "tests"
                why = f"its whole run was stopped: {still} failing {tests} it does not fix"
                self.stop(cid, f"candidate {rival.id} outranks it ({why})", cap)
                return

    @contextmanager
    def stoppable(self, cid: str) -> Iterator[anyio.CancelScope]:
        """The scope of cid's whole-suite first run, which a prospect that outranks it stops
        (`prospect_starts`): `cancelled_caught` then, and cid is in `stopped`."""
        with anyio.CancelScope() as scope:
            self.runs[cid] = scope
            try:
                yield scope
            finally:
                del self.runs[cid]

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
                free = len(self.running) < (self.slots if self.ended else 1)
                if free and first == cid and not self.held(prospect):
                    self.running.add(cid)
                    self.holding[cid] = prospect
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
        it was not, or it failed). A prospect's whole run took no turn: its validated rank, scored
        as the candidate ended, replaces the one `prospect_ends` gave."""
        if cid not in self.running:
            if scored is not None and cid in self.scored:
                self.scored[cid] = scored
                self._notify()
            return
        self.running.discard(cid)
        self.holding.pop(cid, None)
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
