"""The order of lines tied at a score: which of equally suspicious lines the search reaches first.

A spectrum ties many lines — every line run at import time scores the same, as does every line of
a function every test runs — and the search keeps only the first lines of the ranking (search.py,
`top_lines`). Cutting a tie by file and line number alone screened the same first 80 lines of a
1,656-line module in every iteration. So within a score:

1. lines an earlier proposal already searched go last (`Searched`: the search rotates through a
   tie over the iterations instead of starting it over) — except, at the same commit, a line the
   last proposal left with mutants unscreened: it keeps its place and the mutants already screened
   there go after every other (search.py, `seen`), so the next proposal goes on with the line's
   others (networkx's density line screened `3` → `4` in a minute's budget, and the next
   iteration went to other lines of its tie, never to `3` → `2`, the fix);
2. then the lines closest to the failing tests (`closeness`): a line a failing traceback names; a
   line that writes a value a failing assertion got; a line of a function on a failing traceback;
   a line a failing test runs itself; last, a line run only at import time;
3. then file and line, as before.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...decide import parsing
from .edits import Mutant
from .localise import IMPORT_TIME, Spectrum, Suspect, literal_lines
from .prepared import Prepared
from .search import Search, identity

CRASH, VALUE, FRAME, RUN, IMPORT = range(5)
"""Closeness tiers, nearest first."""


def _functions(tree: ast.AST) -> list[tuple[int, int]]:
    return [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    ]


def closeness(spectrum: Spectrum, sources: dict[str, str]) -> dict[tuple[str, int], int]:
    """Each measured line's tier (CRASH … IMPORT); lines of files not in `sources` get RUN or
    IMPORT from the spectrum alone."""
    framed: set[tuple[str, int]] = set()
    valued: set[tuple[str, int]] = set()
    crashes: dict[str, list[int]] = {}
    for file, line in spectrum.crash_lines:
        crashes.setdefault(file, []).append(line)
    for file, text in sources.items():
        try:
            tree = parsing.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        valued |= literal_lines(file, tree, spectrum.asserted)
        for start, end in _functions(tree):  # every function (nested too) a failing traceback passes through
            if any(start <= line <= end for line in crashes.get(file, ())):
                framed.update((file, n) for n in range(start, end + 1))
    tiers: dict[tuple[str, int], int] = {}
    for place, tests in spectrum.lines.items():
        if place in spectrum.crash_lines:
            tiers[place] = CRASH
        elif place in valued:
            tiers[place] = VALUE
        elif place in framed:
            tiers[place] = FRAME
        elif tests & spectrum.failing:
            tiers[place] = RUN
        else:
            tiers[place] = IMPORT if IMPORT_TIME in tests else RUN
    return tiers


@dataclass
class Searched:
    """How many proposals searched each line, kept by the generator across its proposals: a line is
    known by its file, number and text, so a line whose text changed (a merge) counts as new."""

    counts: dict[tuple[str, int, str], int] = field(default_factory=dict)
    commit: str = ""
    mutants: set[tuple[str, int, int, str, str, str]] = field(default_factory=set)
    """The mutants (search.identity) screened with a verdict at `commit`."""
    unfinished: set[tuple[str, int, str]] = field(default_factory=set)
    """The lines the last proposal searched, at `commit`, with mutants left."""

    def seen(self, commit: str) -> frozenset[tuple[str, int, int, str, str, str]]:
        """The mutants earlier proposals screened at this very commit (none after a merge: the tree
        changed, and a verdict with it)."""
        return frozenset(self.mutants) if commit and commit == self.commit else frozenset()

    @staticmethod
    def _key(file: str, line: int, sources: dict[str, str]) -> tuple[str, int, str]:
        lines = sources.get(file, "").splitlines()
        return (file, line, lines[line - 1].strip() if 0 < line <= len(lines) else "")

    def times(self, file: str, line: int, sources: dict[str, str], commit: str = "") -> int:
        """Proposals that searched the line; at the commit of the last, not that one if it left
        mutants there (the next goes on with them: `seen`)."""
        key = self._key(file, line, sources)
        unfinished = bool(commit) and commit == self.commit and key in self.unfinished
        return self.counts.get(key, 0) - unfinished

    def add(
        self,
        places: Iterable[tuple[str, int]],
        sources: dict[str, str],
        screened: Iterable[Prepared] = (),
        commit: str = "",
        unfinished: Iterable[tuple[str, int]] = (),
    ) -> None:
        if commit != self.commit:
            self.commit, self.mutants = commit, set()
        self.mutants |= {identity(p.mutant) for p in screened if p.verdict is not None}
        self.unfinished = {self._key(file, line, sources) for file, line in unfinished}
        for file, line in set(places):
            key = self._key(file, line, sources)
            self.counts[key] = self.counts.get(key, 0) + 1


def order(
    suspects: list[Suspect],
    spectrum: Spectrum,
    sources: dict[str, str],
    searched: Searched | None = None,
    commit: str = "",
) -> list[Suspect]:
    """`suspects` (scores unchanged) in search order: by score, then within a tie the lines searched
    by fewer earlier proposals, then the closest to the failing tests, then file and line."""
    tiers = closeness(spectrum, sources)
    out = []
    for s in suspects:
        seen = searched.times(s.file, s.line, sources, commit) if searched is not None else 0
        key = (-round(s.score, 12), seen, tiers.get((s.file, s.line), RUN), s.file, s.line)
        out.append(Suspect(key, s.file, s.line, s.score))
    return sorted(out)


def searched_lines(
    search: Search, ranked: list[tuple[Mutant, float]], screened: list[Prepared]
) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(searched, unfinished): the lines this proposal searched — those it screened a mutant at, and
    those it reached that have no mutant of the first pass at all (a line the budget cut off
    before its mutants ran is not searched: the next proposal takes it first again) —, and of
    those the lines where mutants of the first pass are left (neither screened now or before at
    this commit, nor left out by preparation)."""
    ran = {identity(p.mutant) for p in screened if p.verdict is not None}
    done = {place for p in screened if p.verdict is not None for place in p.mutant.lines}
    with_mutants = {place for m, _ in ranked for place in m.lines}
    over = ran | search.dropped | search.seen
    left = {place for m, _ in ranked if identity(m) not in over for place in m.lines}
    return done | {place for place in search.reached if place not in with_mutants}, done & left
