"""The suite's own time as the search budget and the per-test limit read it (issue 40.6): a plain
run's, never one a tracer slowed. A baseline that recorded the generator's per-test coverage (mutate:
coverage.py's tracer on Python < 3.12 took 1.6–2.6× the plain suite on networkx) times the suite
only until a plain run of the whole suite has been measured — a candidate's whole run, in the first
iteration that has one; from then on that run times it, for the budget and the limit alike.

Pure: the runs are handed in; the loop (run/loop) applies what this decides."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..model.testresults import TestRun


@dataclass(frozen=True)
class SuiteTime:
    """The run the suite is timed by, and whether a tracer ran in it (then the figures are provisional)."""

    run: TestRun
    traced: bool

    @property
    def test_s(self) -> float:
        """Its tests' seconds, summed over shards (more cores do not shrink a budget)."""
        return sum(outcome.duration_s for outcome in self.run.outcomes.values())


def is_whole(run: TestRun, ids: Iterable[str]) -> bool:
    """The run holds every test of the baseline (not only a candidate's affected tests)."""
    return all(i in run.outcomes for i in ids)


def settled(known: SuiteTime, runs: Iterable[TestRun], ids: Iterable[str]) -> SuiteTime | None:
    """The suite timed by the first plain whole run of `runs` in place of a traced measure; None
    when nothing changes (already plain, or no run of `runs` is whole). runs: the plain runs an
    iteration measured, the best first."""
    if not known.traced:
        return None
    wanted = list(ids)
    whole = next((run for run in runs if wanted and is_whole(run, wanted)), None)
    return SuiteTime(whole, traced=False) if whole is not None else None


def plain_runs(runs: Mapping[str, TestRun], ranking: Iterable[str]) -> list[TestRun]:
    """An iteration's candidate runs (none traced), the ranked ones first in rank order."""
    order = [*ranking, *(cid for cid in runs if cid not in set(ranking))]
    seen: set[int] = set()
    found: list[TestRun] = []
    for cid in order:
        run = runs.get(cid)
        if run is not None and id(run) not in seen:  # a twin's run is its original's
            seen.add(id(run))
            found.append(run)
    return found
