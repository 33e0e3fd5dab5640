"""A candidate's first test job: its affected tests (an estimate, then the whole suite for the best
in validation), or the whole suite at once, which is then its validation and, run as one job on
its exact tree, its final confirmation (issue 27.1/5) — pure.

On the real-library suites most of a run is pytest's start-up (interpreter, imports, collection,
plugins: 0.3–2 s), so the affected tests of a candidate cost nearly as much as its whole suite, and
the would-be winner paid that start-up twice. The figures are what the run knows: the current
run's per-test seconds, one test process's measured overhead, how many candidates share how
many slots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .shard_plan import file_of

WORST_FACTOR = 2.0
"""The whole suite in one process may cost at most this many times the affected selection's run.
When no candidate turns out to improve, affected-first would have run no whole suite at all: this
bounds what whole-first costs then (each candidate at most twice its affected run), while when one
does, whole-first saves the winner's validation run (start-up plus the suite) and often the runs
of the others (fanout/turns). A larger factor would run the whole suite for every candidate of a
suite whose affected share is small, where affected-first rarely pays for more than one whole run."""


def selected_seconds(selection: Iterable[str], durations: Mapping[str, float]) -> float:
    """The test seconds of a selection (test files and test ids) by the current run's per-test
    durations; a test no longer there or never timed counts 0."""
    chosen = set(selection)
    return sum(seconds for test, seconds in durations.items() if test in chosen or file_of(test) in chosen)


def whole_is_cheap(test_s: float, selected_s: float, overhead_s: float, candidates: int, slots: int) -> bool:
    """Whether the whole suite is cheap enough to be every candidate's first (and, for the winner,
    only) test run, with test_s its tests' seconds, selected_s the affected selection's, overhead_s
    one test process's start-up and end, and `candidates` sharing `slots` (rounds = candidates /
    slots, at least 1). Both must hold:

    - no slower when a candidate wins: rounds × whole ≤ rounds × affected + one whole run (the
      winner's validation, which whole-first does not pay);
    - bounded when none does: whole ≤ WORST_FACTOR × affected.
    """
    rounds = max(1.0, candidates / max(1, slots))
    whole = overhead_s + max(test_s, 0.0)
    affected = overhead_s + min(max(selected_s, 0.0), max(test_s, 0.0))
    if affected <= 0:
        return True
    return rounds * whole <= rounds * affected + whole and whole <= WORST_FACTOR * affected


FIRST_WINS = 0.75
"""How often the best prospect's first run is taken to win (mutate's candidates are screened
against the failing tests, and its best-ranked one usually wins): `best_is_worth_whole` risks one
whole run that does not win against FIRST_WINS / (1 - FIRST_WINS) = 3 times the affected runs
it saves when it does."""


def best_is_worth_whole(
    test_s: float, selected_s: float, overhead_s: float, candidates: int, slots: int, wins: float = FIRST_WINS
) -> bool:
    """When the whole suite is too dear to be every candidate's first run (`whole_is_cheap`),
    whether it is worth being the best prospect's, run alone, with the others' affected tests after
    it only if it does not win (fanout/testjobs). When it wins, its run is its validation and
    confirmation and the others need not run: that saves rounds × affected (affected-first pays
    them and then the same whole run). When it does not, it has cost whole − affected more than its
    affected tests would have. Worth it while that loss is at most FIRST_WINS / (1 - FIRST_WINS)
    times the saving: on dateutil (4.7 s suite, 3 candidates on 2 slots, 1.3 s affected runs) it is;
    on a 20-minute suite whose affected tests take 10 s it never is. wins: how often the best
    prospect is taken to win (`first_wins`: FIRST_WINS when it stands above the others)."""
    rounds = max(1.0, candidates / max(1, slots))
    whole = overhead_s + max(test_s, 0.0)
    affected = overhead_s + min(max(selected_s, 0.0), max(test_s, 0.0))
    wins = min(max(wins, 0.0), 0.99)
    return whole - affected <= wins / (1.0 - wins) * rounds * affected


def first_wins(standing: Iterable[float]) -> float:
    """How often the best prospect is taken to win, from the candidates' standing (their planned
    confidence): FIRST_WINS when one stands above the others; when k share the top, 1/k — the
    first of equals is no better a bet than the others (issue 40: of three scripted candidates of
    the same confidence, the wrong one ran a 28.6 s suite first while the right one's affected
    tests took 0.7 s)."""
    values = list(standing)
    if not values:
        return FIRST_WINS
    top = max(values)
    tied = sum(1 for value in values if value >= top)
    return FIRST_WINS if tied == 1 else 1.0 / tied
