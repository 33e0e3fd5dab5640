"""A mutant's timeout, calibrated on the unmutated code before screening starts: generous for
honest mutants, short for the ones that loop forever."""

from __future__ import annotations

from .screen import Job, Slot, Verdict
from .search import Search

MAX_MUTANT_TIMEOUT = 30.0
"""The longest timeout a mutant gets, and its timeout until calibrated (or mutant_timeout set)."""
HUNG_ONLY_TIMEOUT = 5.0
"""A mutant's timeout when every test it would run hangs on the unmutated code."""
CALIBRATE_FROM = 50
"""The calibration run uses the widest of the first this many prepared mutants."""


async def calibrate(slot: Slot, phase1: list[str], phase2: list[str], hung: frozenset[str] = frozenset()) -> float:
    """A mutant's timeout from the unmutated code's run of the most tests any mutant gets:
    generous for honest mutants, short for the ones that loop forever. Tests that overran their
    limit in the last run are left out: they would only measure the hang the search must fix."""
    phase1, phase2 = [t for t in phase1 if t not in hung], [t for t in phase2 if t not in hung]
    if not phase1 and not phase2:
        return HUNG_ONLY_TIMEOUT
    longest = (MAX_MUTANT_TIMEOUT - 0.5) / 8  # a run that lasts longer gives the longest timeout anyway
    verdict = await slot.screen(Job({}, phase1, phase2, longest, stop=False))
    return timeout_from(verdict)


def timeout_from(verdict: Verdict) -> float:
    """Eight times the tests' own time, plus once what the rest of the round trip cost (importing
    and collecting them: a mutant that cannot be swapped in pays it again), plus half a second."""
    tests = verdict.tests_s if verdict.tests_s is not None and verdict.status == "ok" else verdict.duration_s
    return round(min(MAX_MUTANT_TIMEOUT, max(0.75, 8 * tests + max(verdict.duration_s - tests, 0.0) + 0.5)), 2)


def widest_tests(search: Search) -> tuple[list[str], list[str]]:
    """The failing and passing tests of the most suspicious line (of the first CALIBRATE_FROM)
    that the most tests run: a mutant there is screened against them all."""
    spectrum = search.spectrum
    widest = max(
        (spectrum.covering(s.file, s.line) for s in search.suspects[:CALIBRATE_FROM]), key=len, default=frozenset()
    )
    return sorted(widest & spectrum.failing), sorted(widest & spectrum.passing)
