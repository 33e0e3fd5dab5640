"""Prepared mutants: one ready to screen (its patch and the tests that decide it), and the
stream of them in rank order, prepared only as far as screening reads it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import overload

from .edits import Mutant
from .screen import Verdict


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


class Lazy:
    """Prepared mutants in rank order, made only as far as someone reads: screening can start on
    the first while the rest wait. Reads like a list; `len()` prepares them all."""

    def __init__(self, source: Iterator[Prepared], limit: int, spent: Callable[[float], None] | None = None) -> None:
        self._source: Iterator[Prepared] | None = source
        self.limit = limit
        self.items: list[Prepared] = []
        self._spent = spent
        """Told the seconds each preparation took (the search's `prepare_s`)."""

    @classmethod
    def of(cls, items: list[Prepared]) -> Lazy:
        return cls(iter(items), len(items))

    def at(self, index: int) -> Prepared | None:
        """The index-th prepared mutant, preparing up to it; None past the end."""
        while len(self.items) <= index and self._source is not None and len(self.items) < self.limit:
            started = time.monotonic()
            item = next(self._source, None)
            if self._spent is not None:
                self._spent(time.monotonic() - started)
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

    @overload
    def __getitem__(self, index: int) -> Prepared: ...
    @overload
    def __getitem__(self, index: slice) -> list[Prepared]: ...
    def __getitem__(self, index: int | slice) -> Prepared | list[Prepared]:
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
