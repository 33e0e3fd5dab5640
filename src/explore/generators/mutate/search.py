"""The search: rank mutants (suspiciousness × operator prior), drop duplicates and tried ones,
screen them in rank order under a budget, and combine partial fixes into two-edit mutants
(pairing.py); a prepared mutant and the lazy stream of them are in prepared.py.

Determinism: mutants are screened in a fixed order and the search only ever reads the longest
prefix of that order whose verdicts are all in, so parallel lanes finishing in any order give
the same answer (a time budget that runs out is the one thing that can cut it elsewhere).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from . import pairing
from .edits import Edit, Mutant, Source, make_patch, mutated_sources, normalise_patch
from .localise import Spectrum, Suspect
from .operators import BY_NAME, REGISTRY, mutants_in
from .prepared import Lazy, Prepared
from .regions import Key, Regions
from .screen import Deferred, Job, Slot

FAR = 10**6
MUTANTS_AT_LEAST = 12
"""The mutants the screening budget lets through when the failing tests alone are slow (a
screening budget of a flat minute screened one mutant of networkx's density bug, whose three
failing tests take 36 s: `screening_seconds`)."""


def screening_seconds(flat: float, failing_s: float, lanes: int) -> float:
    """mutate's screening seconds for an iteration: its budget_seconds, or — when the failing tests'
    own time (the baseline's durations) would let fewer than MUTANTS_AT_LEAST mutants through at
    the lanes' pace — the time those take. Every mutant runs the failing tests that reach it first."""
    return max(flat, MUTANTS_AT_LEAST * failing_s / max(lanes, 1))


@dataclass
class Budget:
    mutants: int = 600
    seconds: float = 60.0
    started: float = field(default_factory=time.monotonic)
    screened: int = 0
    by_run: bool = False
    """The seconds are what was left of the run's search budget (shorter than mutate's own)."""
    by_tests: bool = False
    """The seconds were raised for slow failing tests (`screening_seconds`)."""

    @classmethod
    def of(cls, mutants: int, flat: float, failing_s: float | None, lanes: int, deadline: float | None) -> Budget:
        """An iteration's budget: `flat` seconds (budget_seconds), raised for slow failing tests
        (`screening_seconds`; failing_s None: the user set budget_seconds, which holds as given),
        cut to what is left of the run's search budget (`deadline`, monotonic)."""
        wanted = flat if failing_s is None else screening_seconds(flat, failing_s, lanes)
        seconds = wanted if deadline is None else max(0.0, min(wanted, deadline - time.monotonic()))
        return cls(mutants, seconds, by_run=seconds < wanted, by_tests=seconds > flat)

    def left_s(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def exhausted(self) -> bool:
        return self.screened >= self.mutants or self.left_s() <= 0

    def spent(self) -> str:
        """Which budget ended the screening, in words (issue 40: "(budget spent)" said not which)."""
        if self.screened >= self.mutants:
            return f"budget spent: {self.mutants} mutants (mutate's budget_mutants)"
        if self.by_run:
            return "budget spent: the run's search budget (--search-budget)"
        if self.by_tests:
            return f"budget spent: {self.seconds:g}s of screening ({MUTANTS_AT_LEAST} mutants' worth of the failing tests' own time)"
        return f"budget spent: {self.seconds:g}s of screening (mutate's budget_seconds)"


class Search:
    """Everything about one iteration's search that is not a process."""

    def __init__(
        self,
        workdir: Path,
        sources: dict[str, str],
        spectrum: Spectrum,
        suspects: list[Suspect],
        *,
        tried: Iterable[str] = (),
        single_token: bool = False,
        changed: dict[str, set[int]] | None = None,
        max_lines: int = 40,
        tiers: tuple[int, ...] = (1,),
        seen: frozenset[tuple[str, int, int, str, str, str]] = frozenset(),
    ) -> None:
        self.workdir = workdir
        self.sources = sources
        self.spectrum = spectrum
        self.suspects = top_lines(suspects, max_lines)
        self.all_suspects = suspects
        self.reached = {(s.file, s.line) for s in self.suspects}
        """The lines this search (with its deeper stages, deepen.py) made mutants at."""
        self.position = {(s.file, s.line): i for i, s in enumerate(suspects)}
        """Each line's place in the suspects' order: equally scored mutants go in that order (ties.py)."""
        self.seen = seen
        """Mutants (`identity`) an earlier proposal screened at this very commit: they rank after
        every other, as their verdict is known (ties.py, `Searched`)."""
        self.dropped: set[tuple[str, int, int, str, str, str]] = set()
        """Mutants preparation left out (duplicate, tried, unreachable, invalid): nothing to screen."""
        self.tiers = tiers
        """Which operators' tiers `ranked` makes mutants of (operators.py)."""
        top = max((s.score for s in suspects), default=1.0) or 1.0
        self.weight = {(s.file, s.line): s.score / top for s in suspects}
        self.tried = {normalise_patch(p) for p in tried}
        self.single_token = single_token
        self.changed = changed or {}
        self.skipped = {"duplicate": 0, "invalid": 0, "tried": 0, "unreachable": 0, "drops_parameter": 0}
        self._regions: dict[str, Regions] = {}
        self.prepare_s = 0.0
        """Seconds spent generating and preparing mutants (ranking included), for the timing."""

    # --- ranking ---------------------------------------------------------------------------
    def distance(self, file: str, line: int) -> int:
        changed = self.changed.get(file)
        return min(abs(line - c) for c in changed) if changed else FAR

    def ranked(self) -> list[tuple[Mutant, float]]:
        """Mutants at suspicious lines, best first — the line's weight × the operator's prior, that
        prior shared by the choices of an operator that picks from the program (`shared_choices`) —;
        ties by the lines' order (ties.py), operator, then generation order; those an earlier
        proposal screened at this commit (`seen`) last."""
        ops = [op for op in REGISTRY if (op.single_token or not self.single_token) and op.tier in self.tiers]
        by_file: dict[str, set[int]] = {}
        for s in self.suspects:
            by_file.setdefault(s.file, set()).add(s.line)
        found: list[tuple[pairing.Order, Mutant, float]] = []
        for file in sorted(by_file):
            if file not in self.sources:
                continue
            try:
                source = Source(file, self.sources[file])
                mutants = mutants_in(source, by_file[file], ops)
            except (SyntaxError, ValueError, RecursionError):
                self.skipped["invalid"] += 1
                continue
            choices = shared_choices(mutants)
            for seq, m in enumerate(mutants):  # generation order: each operator lists likelier changes first
                score = self.weight.get((m.file, m.line), 0.0) * m.prior / choices.get(site(m), 1)
                near = self.distance(m.file, m.line) if self.single_token and self.changed else 0
                place = self.position.get((m.file, m.line), FAR)
                known = identity(m) in self.seen
                found.append(((known, near, -round(score, 12), place, m.file, m.line, m.operator, seq), m, score))
        found.sort(key=lambda item: item[0])
        return [(m, score) for _, m, score in found]

    def shared_lines(self) -> set[tuple[str, int]]:
        """The searched lines every failing test runs itself (not only at import time)."""
        failing = self.spectrum.failing
        return {
            (s.file, s.line)
            for s in self.suspects
            if failing and failing <= self.spectrum.lines.get((s.file, s.line), frozenset())
        }

    # --- preparation -------------------------------------------------------------------------
    def prepare(self, ranked: Iterable[tuple[Mutant, float]], limit: int) -> Lazy:
        """The first `limit` mutants that parse, differ from every earlier one after
        normalisation, were never tried, keep every parameter in use, and reach a failing test —
        prepared on demand, in rank order, as screening asks for them."""
        seen: set[tuple[tuple[str, Key], ...]] = set()

        def produce() -> Iterator[Prepared]:
            for mutant, score in ranked:
                prepared = self._prepare_one(mutant, score, seen)
                if prepared is None:
                    self.dropped.add(identity(mutant))
                else:
                    yield prepared

        return Lazy(produce(), limit, self._spent)

    def _spent(self, seconds: float) -> None:
        self.prepare_s += seconds

    def regions(self, file: str) -> Regions:
        if file not in self._regions:
            self._regions[file] = Regions(self.sources[file])
        return self._regions[file]

    def _prepare_one(self, mutant: Mutant, score: float, seen: set[tuple[tuple[str, Key], ...]]) -> Prepared | None:
        by_file: dict[str, list[Edit]] = {}
        for file, edit in mutant.edits:
            by_file.setdefault(file, []).append(edit)
        keys: list[tuple[str, Key]] = []
        for file, edits in sorted(by_file.items()):
            try:
                regions = self.regions(file)
                key, dropped = regions.mutated(edits)
            except (SyntaxError, ValueError, RecursionError):
                self.skipped["invalid"] += 1
                return None
            if dropped:
                self.skipped["drops_parameter"] += 1
                return None
            keys.append((file, key))
        joined = tuple(keys)
        if joined in seen:
            self.skipped["duplicate"] += 1
            return None
        seen.add(joined)
        patch = make_patch(mutant, self.sources)
        if self.tried and normalise_patch(patch) in self.tried:
            self.skipped["tried"] += 1
            return None
        covering: set[str] = set()
        for file, line in mutant.lines:
            covering |= self.spectrum.covering(file, line)
        phase1 = sorted(covering & self.spectrum.failing)
        phase2 = sorted(covering & self.spectrum.passing)
        if not phase1:
            self.skipped["unreachable"] += 1
            return None
        files = {str(self.workdir / f): t for f, t in mutated_sources(mutant, self.sources).items()}
        return Prepared(mutant, score, patch, phase1, phase2, files, also=sorted(self.spectrum.failing - covering))


def identity(mutant: Mutant) -> tuple[str, int, int, str, str, str]:
    """One mutant of one tree: where, which operator, and what it writes."""
    return (*site(mutant), mutant.new)


def site(mutant: Mutant) -> tuple[str, int, int, str, str]:
    """Where a mutant's operator chose its replacement: the same place, operator and old text."""
    return (mutant.file, mutant.line, mutant.col, mutant.operator, mutant.old)


def shared_choices(mutants: Iterable[Mutant]) -> dict[tuple[str, int, int, str, str], int]:
    """How many choices share a prior at each site of an operator that picks from the program
    (operators.py, `shares`): one wrong name among eight in scope is one kind of fault, not eight.
    An operator with a fixed small set of alternatives (`<` → `<=`, a constant ± 1) keeps its
    prior for each: each is a likely slip of its own."""
    counts: dict[tuple[str, int, int, str, str], int] = {}
    for m in mutants:
        op = BY_NAME.get(m.operator)
        if op is not None and op.shares:
            counts[site(m)] = counts.get(site(m), 0) + 1
    return counts


def top_lines(suspects: list[Suspect], most: int) -> list[Suspect]:
    """The `most` most suspicious lines, and the lines tied with the last of them (up to twice
    as many in all): cutting a group of equally suspicious lines at `most` would keep or drop a
    line by its number alone. Lines of one function often tie — every statement of a loop that
    every test runs — and the fault may sit at any of them."""
    if len(suspects) <= most or most <= 0:
        return suspects[: max(most, 0)]
    last = suspects[most - 1].score
    end = most
    while end < min(len(suspects), 2 * most) and suspects[end].score == last:
        end += 1
    return suspects[:end]


async def screen_in_order(
    prepared: Lazy | list[Prepared],
    slots: list[Slot],
    budget: Budget,
    job_for: Callable[[Prepared], Job],
    enough: Callable[[list[Prepared]], bool],
) -> list[Prepared]:
    """Screen in rank order on every slot at once; stop when the done prefix is `enough` or the
    budget is spent. Returns the done prefix (what the decision may read). Mutants are prepared
    as the lanes reach them, so the first screens at once."""
    stream = prepared if isinstance(prepared, Lazy) else Lazy.of(prepared)
    done: list[bool] = []
    state = {"next": 0, "prefix": 0}
    async with anyio.create_task_group() as group:
        deadline = anyio.current_time() + max(budget.left_s(), 0.0)

        idle: list[anyio.CancelScope] = []
        working = {"lanes": sum(not (isinstance(s, Deferred) and not s.ready.is_set()) for s in slots)}

        async def lane(slot: Slot) -> None:
            if isinstance(slot, Deferred) and not slot.ready.is_set():
                # takes no mutant before it is free (the prefix would wait on it); ends when the others have
                with anyio.CancelScope() as waiting:
                    idle.append(waiting)
                    await slot.ready.wait()
                if waiting.cancel_called:
                    return
                idle.remove(waiting)
                working["lanes"] += 1
            try:
                await work(slot)
            finally:
                working["lanes"] -= 1
                if not working["lanes"]:
                    for waiting in idle:
                        waiting.cancel()

        async def work(slot: Slot) -> None:
            while True:
                index = state["next"]
                if budget.screened >= budget.mutants or budget.left_s() <= 0:
                    return
                item = stream.at(index)
                if item is None:
                    return
                state["next"] += 1
                done.append(False)
                budget.screened += 1
                job = job_for(item)
                item.verdict = await slot.screen(job)
                if item.also and item.plausible and len(item.fixed) == len(item.phase1):
                    more = await slot.screen(
                        dataclasses.replace(job, phase1=item.also, phase2=[], giveup=len(item.also))
                    )
                    if more.status == "ok":
                        item.verdict.outcomes.update(more.outcomes)
                done[index] = True
                while state["prefix"] < len(done) and done[state["prefix"]]:
                    state["prefix"] += 1
                if enough(stream.items[: state["prefix"]]):
                    group.cancel_scope.cancel()
                    return

        group.cancel_scope.deadline = deadline
        for slot in slots:
            group.start_soon(lane, slot)
    return stream.items[: state["prefix"]]
