"""The search: rank mutants (suspiciousness × operator prior), drop duplicates and tried ones,
screen them in rank order under a budget, and combine partial fixes into two-edit mutants.

Determinism: mutants are screened in a fixed order and the search only ever reads the longest
prefix of that order whose verdicts are all in, so parallel lanes finishing in any order give
the same answer (a time budget that runs out is the one thing that can cut it elsewhere).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from .edits import Mutant, Source, make_patch, mutated_sources, normalise_patch, overlaps
from .localise import Spectrum, Suspect
from .operators import REGISTRY, mutants_in
from .regions import Regions
from .screen import Job, Slot, Verdict

FAR = 10**6


@dataclass
class Budget:
    mutants: int = 600
    seconds: float = 60.0
    started: float = field(default_factory=time.monotonic)
    screened: int = 0

    def left_s(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def exhausted(self) -> bool:
        return self.screened >= self.mutants or self.left_s() <= 0


@dataclass
class Prepared:
    """A mutant ready to screen: its patch and the tests that decide it."""

    mutant: Mutant
    score: float
    patch: str
    phase1: list[str]
    phase2: list[str]
    files: dict[str, str]
    verdict: Verdict | None = None
    also: list[str] = field(default_factory=list)
    """Failing tests that do not reach the mutated lines: run only once the mutant fixes every
    test of phase1 (a fix can make them pass all the same), so that it can count as full."""

    @property
    def fixed(self) -> list[str]:
        return self.verdict.fixed(self.phase1 + self.also) if self.verdict else []

    @property
    def broken(self) -> list[str]:
        return self.verdict.broken(self.phase2) if self.verdict else []

    @property
    def plausible(self) -> bool:
        """Fixes at least one failing test and breaks none of the passing tests it can reach."""
        return self.verdict is not None and self.verdict.status == "ok" and bool(self.fixed) and not self.broken


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
    ) -> None:
        self.workdir = workdir
        self.sources = sources
        self.spectrum = spectrum
        self.suspects = top_lines(suspects, max_lines)
        self.all_suspects = suspects
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
        """Mutants at suspicious lines, best first; ties by file, line, operator, then generation order."""
        ops = [op for op in REGISTRY if (op.single_token or not self.single_token) and op.tier in self.tiers]
        by_file: dict[str, set[int]] = {}
        for s in self.suspects:
            by_file.setdefault(s.file, set()).add(s.line)
        found: list[tuple[tuple, Mutant, float]] = []
        for file in sorted(by_file):
            if file not in self.sources:
                continue
            try:
                source = Source(file, self.sources[file])
                mutants = mutants_in(source, by_file[file], ops)
            except (SyntaxError, ValueError, RecursionError):
                self.skipped["invalid"] += 1
                continue
            for seq, m in enumerate(mutants):  # generation order: each operator lists likelier changes first
                score = self.weight.get((m.file, m.line), 0.0) * m.prior
                near = self.distance(m.file, m.line) if self.single_token and self.changed else 0
                found.append(((near, -round(score, 12), m.file, m.line, m.operator, seq), m, score))
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
        seen: set[tuple] = set()

        def produce() -> Iterator[Prepared]:
            for mutant, score in ranked:
                prepared = self._prepare_one(mutant, score, seen)
                if prepared is not None:
                    yield prepared

        return Lazy(produce(), limit, self)

    def regions(self, file: str) -> Regions:
        if file not in self._regions:
            self._regions[file] = Regions(self.sources[file])
        return self._regions[file]

    def _prepare_one(self, mutant: Mutant, score: float, seen: set[tuple]) -> Prepared | None:
        by_file: dict[str, list] = {}
        for file, edit in mutant.edits:
            by_file.setdefault(file, []).append(edit)
        keys: list[tuple] = []
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

    def combine(self, screened: list[Prepared], top_singles: int = 12, limit: int = 300) -> list[tuple[Mutant, float]]:
        """Two-edit mutants. With partial fixes: pairs whose fixed tests differ (a fix of two
        defects in one candidate). Without: pairs making the same change at two lines first
        (`>` → `>=` twice: one mistake repeated), then pairs of the best singles."""
        partial = [p for p in screened if p.plausible]
        alive = [p for p in screened if p.verdict and p.verdict.status == "ok"]
        if len(partial) >= 2:
            candidates = list(itertools.combinations(partial, 2))
        else:
            groups: dict[tuple, list[Prepared]] = {}
            for p in alive:
                key = self._change_key(p.mutant)
                if key is not None:
                    groups.setdefault(key, []).append(p)
            candidates = [pair for group in groups.values() for pair in itertools.combinations(group[:10], 2)]
            candidates += list(itertools.combinations(alive[:top_singles], 2))
        pairs: dict[tuple, tuple[tuple, Mutant, float]] = {}
        position = {id(p): i for i, p in enumerate(screened)}
        for a, b in candidates:
            if a.mutant.lines == b.mutant.lines or overlaps(
                [e for _, e in a.mutant.edits], [e for _, e in b.mutant.edits]
            ):
                continue
            gain = len(set(a.fixed) | set(b.fixed))
            if partial and gain <= max(len(a.fixed), len(b.fixed)):
                continue
            combo = pair_of(a.mutant, b.mutant)
            first, second = combo.parts
            analogous = self._change_key(first) is not None and self._change_key(first) == self._change_key(second)
            score = a.score + b.score
            key = (
                -gain,
                not analogous,
                -round(score, 12),
                position[id(a)] + position[id(b)],
                first.file,
                first.line,
                first.col,
                second.file,
                second.line,
                second.col,
                combo.operator,
                first.new,
                second.new,
            )
            pairs.setdefault(combo.edits, (key, combo, score))
        ordered = sorted(pairs.values(), key=lambda item: item[0])
        return [(m, s) for _, m, s in ordered[:limit]]

    def pairs_at_top(
        self, screened: list[Prepared], lines: int = 3, per_line: int = 30, limit: int = 3000
    ) -> list[tuple[Mutant, float]]:
        """Second-order mutants at the most suspicious lines: every two screened singles that
        ran (no crash, no timeout) at the `lines` best lines, at one line or two, whose edits do
        not overlap; best summed score first. For a search where no single edit fixed anything."""
        alive = [p for p in screened if p.verdict and p.verdict.status == "ok" and len(p.mutant.lines) == 1]
        top = sorted({p.mutant.lines[0] for p in alive}, key=lambda fl: (-self.weight.get(fl, 0.0), fl))[:lines]
        chosen = [
            p
            for line in top
            for p in sorted((q for q in alive if q.mutant.lines[0] == line), key=lambda q: -q.score)[:per_line]
        ]
        pairs: dict[tuple, tuple[tuple, Mutant, float]] = {}
        for a, b in itertools.combinations(chosen, 2):
            if overlaps([e for _, e in a.mutant.edits], [e for _, e in b.mutant.edits]):
                continue
            combo = pair_of(a.mutant, b.mutant)
            first, second = combo.parts
            key = (
                -round(a.score + b.score, 12),
                first.file,
                first.line,
                first.col,
                second.line,
                second.col,
                combo.operator,
                first.new,
                second.new,
            )
            pairs.setdefault(combo.edits, (key, combo, a.score + b.score))
        ordered = sorted(pairs.values(), key=lambda item: item[0])
        return [(m, s) for _, m, s in ordered[:limit]]

    def _change_key(self, mutant: Mutant) -> tuple | None:
        """(operator, replaced text, new text) of a one-edit mutant: equal for the same change."""
        if len(mutant.edits) != 1:
            return None
        file, edit = mutant.edits[0]
        return (mutant.operator, self.sources[file][edit.start : edit.end], edit.text)


def pair_of(a: Mutant, b: Mutant) -> Mutant:
    """The two-edit mutant made of two singles (in source order)."""
    first, second = sorted((a, b), key=lambda m: (m.file, m.line, m.col, m.operator, m.new))
    return Mutant(
        file=first.file,
        line=first.line,
        col=first.col,
        operator=f"{first.operator}+{second.operator}",
        family="combination",
        prior=first.prior * second.prior,
        old=first.old,
        new=first.new,
        single_token=first.single_token and second.single_token,
        edits=tuple(sorted(first.edits + second.edits, key=lambda fe: (fe[0], fe[1]))),
        parts=(first, second),
    )


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


class Lazy:
    """Prepared mutants in rank order, made only as far as someone reads: screening can start on
    the first while the rest wait. Reads like a list; `len()` prepares them all."""

    def __init__(self, source: Iterator[Prepared], limit: int, search: Search | None = None) -> None:
        self._source: Iterator[Prepared] | None = source
        self.limit = limit
        self.items: list[Prepared] = []
        self._search = search

    @classmethod
    def of(cls, items: list[Prepared]) -> Lazy:
        return cls(iter(items), len(items))

    def at(self, index: int) -> Prepared | None:
        """The index-th prepared mutant, preparing up to it; None past the end."""
        while len(self.items) <= index and self._source is not None and len(self.items) < self.limit:
            started = time.monotonic()
            item = next(self._source, None)
            if self._search is not None:
                self._search.prepare_s += time.monotonic() - started
            if item is None:
                self._source = None
            else:
                self.items.append(item)
        return self.items[index] if index < len(self.items) else None

    def __len__(self) -> int:
        self.at(self.limit)
        return len(self.items)

    def __iter__(self) -> Iterator[Prepared]:
        index = 0
        while (item := self.at(index)) is not None:
            yield item
            index += 1

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            return list(self)[index]
        item = self.at(index)
        if item is None:
            raise IndexError(index)
        return item

    def __bool__(self) -> bool:
        return self.at(0) is not None


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

        async def lane(slot: Slot) -> None:
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
