"""A mutant's timeout, from the unmutated code's times before screening starts: generous for
honest mutants, short for the ones that loop forever. The tests' times of the run that found the
failures give it at no cost (`from_durations`); without them, one run of the widest tests does
(`calibrate`)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from itertools import islice

import anyio

from .edits import Mutant
from .screen import Deferred, Job, Slot, Verdict
from .search import Search

MAX_MUTANT_TIMEOUT = 30.0
"""The longest timeout a mutant gets, and its timeout until calibrated (or mutant_timeout set)."""
HUNG_ONLY_TIMEOUT = 5.0
"""A mutant's timeout when every test it would run hangs on the unmutated code."""
ASIDE_FROM_S = 2.0
"""A calibration whose tests took at least this long in the recorded run runs beside screening
(humanize: the whole suite, 1.7 s, for mutants of 8 tests); a cheaper one runs first, alone, as
its measurement is then undisturbed (beside screening on two loaded cores it measured twice the
time, and a looping mutant cost that much more)."""
CALIBRATE_FROM = 50
"""The calibration run uses the widest of the first this many mutants to be screened."""


async def calibrate(
    slot: Slot,
    phase1: list[str],
    phase2: list[str],
    hung: frozenset[str] = frozenset(),
    round_trip: bool = True,
    keep: float | None = None,
) -> float:
    """A mutant's timeout from the unmutated code's run of the most tests any mutant gets:
    generous for honest mutants, short for the ones that loop forever. Tests that overran their
    limit in the last run are left out: they would only measure the hang the search must fix.
    keep: the timeout already in use, kept when the calibration's worker crashed (lost, killed:
    its run measured nothing, and a second or so would time out every honest mutant after it)."""
    phase1, phase2 = [t for t in phase1 if t not in hung], [t for t in phase2 if t not in hung]
    if not phase1 and not phase2:
        return HUNG_ONLY_TIMEOUT
    longest = (MAX_MUTANT_TIMEOUT - 0.5) / 8  # a run that lasts longer gives the longest timeout anyway
    verdict = await slot.screen(Job({}, phase1, phase2, longest, stop=False))
    if verdict.status == "crash" and keep is not None:
        return keep
    return timeout_from(verdict, round_trip)


def from_durations(
    durations: Mapping[str, float], phase1: list[str], phase2: list[str], hung: frozenset[str] = frozenset()
) -> float | None:
    """A mutant's timeout from the recorded seconds of the most tests any mutant gets, as
    `timeout_from` makes it from a run of them: eight times their time plus half a second. What
    a run of them adds beyond their time (collecting them again, for a mutant that cannot be
    swapped in) the fork worker adds itself: it measured it, collecting them first. None when a
    test's time is unknown or none is timed (a run that reports no times): calibrate instead."""
    tests = [t for t in (*phase1, *phase2) if t not in hung]
    if not tests:
        return HUNG_ONLY_TIMEOUT
    if any(t not in durations for t in tests) or not any(durations[t] > 0 for t in tests):
        return None
    return round(min(MAX_MUTANT_TIMEOUT, max(0.75, 8 * sum(durations[t] for t in tests) + 0.5)), 2)


@asynccontextmanager
async def aside(
    slots: list[Slot],
    phase1: list[str],
    phase2: list[str],
    hung: frozenset[str],
    timeout: dict[str, float],
    steps: dict[str, float],
    started: float,
) -> AsyncIterator[list[Slot]]:
    """The slots to screen on while the first of them calibrates: screening starts at once on the
    others under timeout["s"] (from the recorded durations), which the calibration then replaces
    for every mutant screened after it. A search that ends first cancels it (it ends that worker:
    a cancelled request leaves it out of step). The calibration is what today's machine takes for
    those tests, where the recorded durations may carry a tracer's cost (the baseline's coverage)."""
    deferred = Deferred(slots[0])

    async def measure() -> None:
        try:
            timeout["s"] = await calibrate(deferred.slot, phase1, phase2, hung, round_trip=False, keep=timeout["s"])
            steps["calibrated_s"] = time.monotonic() - started
        finally:
            deferred.ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(measure)
        yield [deferred, *slots[1:]]
        group.cancel_scope.cancel()


def timeout_from(verdict: Verdict, round_trip: bool = True) -> float:
    """Eight times the tests' own time, plus once what the rest of the round trip cost (importing
    and collecting them: a mutant that cannot be swapped in pays it again; not when the fork
    worker gives a child that time itself: round_trip False), plus half a second."""
    tests = verdict.tests_s if verdict.tests_s is not None and verdict.status == "ok" else verdict.duration_s
    rest = max(verdict.duration_s - tests, 0.0) if round_trip else 0.0
    return round(min(MAX_MUTANT_TIMEOUT, max(0.75, 8 * tests + rest + 0.5)), 2)


def widest_tests(search: Search, mutants: Iterable[Mutant]) -> tuple[list[str], list[str]]:
    """The failing and passing tests of the mutant (of the first CALIBRATE_FROM to be screened)
    that the most tests run: it is screened against them all. The mutants screened first, not the
    most suspicious lines: a module-level line every test runs at import time (inflection's
    `import re`, suspicious to a small degree) made the calibration run the whole suite — 455
    tests, 2.6 s of a 4.7 s screening at load 7 — while every mutant screened needed one test. A
    mutant past these whose tests reach further gets a timeout of its own (`widened`)."""
    spectrum = search.spectrum
    reach = (frozenset().union(*(spectrum.covering(f, n) for f, n in m.lines)) for m in islice(mutants, CALIBRATE_FROM))
    widest = max(reach, key=len, default=frozenset())
    return sorted(widest & spectrum.failing), sorted(widest & spectrum.passing)


def widened(
    timeout: float,
    phase1: list[str],
    phase2: list[str],
    measured: frozenset[str],
    durations: Mapping[str, float],
    hung: frozenset[str] = frozenset(),
) -> float:
    """A mutant's timeout: the calibrated one, or for a mutant that runs a test the calibration did
    not, the larger of it and its own tests' recorded one (`from_durations`; the longest timeout
    when one of their times is unknown), so an honest mutant of a wider line is never cut short."""
    if measured.issuperset(phase1) and measured.issuperset(phase2):
        return timeout
    recorded = from_durations(durations, phase1, phase2, hung)
    return max(timeout, MAX_MUTANT_TIMEOUT if recorded is None else recorded)
