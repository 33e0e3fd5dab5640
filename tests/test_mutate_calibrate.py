"""A mutant's timeout: from the tests' recorded times at once, measured by one worker while the
others already screen; and a fork worker gives a child that collects afresh the seconds the
worker's own collection took. Scripted slots for the order of things, a real worker for the time."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from conftest import make_repo
from explore.generators.mutate import calibrate as calibrate_module
from explore.generators.mutate import localise
from explore.generators.mutate.calibrate import (
    HUNG_ONLY_TIMEOUT,
    MAX_MUTANT_TIMEOUT,
    aside,
    from_durations,
    widened,
    widest_tests,
)
from explore.generators.mutate.localise import IMPORT_TIME, Spectrum
from explore.generators.mutate.prepared import Prepared
from explore.generators.mutate.screen import Job, Screener, Verdict
from explore.generators.mutate.search import Budget, Search, screen_in_order
from test_mutate_search import SOURCE, ScriptedSlot, make_search


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_timeout_from_recorded_durations_is_eight_times_their_sum_plus_half_a_second() -> None:
    durations = {"f": 0.1, "p1": 0.05, "p2": 0.05, "slow": 10.0}
    assert from_durations(durations, ["f"], ["p1", "p2"]) == pytest.approx(8 * 0.2 + 0.5)
    assert from_durations(durations, ["f"], []) == 1.3
    assert from_durations({"f": 0.001}, ["f"], []) == 0.75  # the floor
    assert from_durations(durations, ["slow"], []) == MAX_MUTANT_TIMEOUT
    assert from_durations(durations, ["f", "slow"], [], frozenset({"slow"})) == 1.3  # a hang measures nothing
    assert from_durations(durations, ["slow"], [], frozenset({"slow"})) == HUNG_ONLY_TIMEOUT
    assert from_durations(durations, ["f", "unknown"], []) is None  # a test not timed: calibrate instead
    assert from_durations({"f": 0.0}, ["f"], []) is None  # a run that timed nothing


def test_the_calibration_runs_the_tests_of_the_mutants_screened_first_not_an_import_time_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inflection: its `import re` line runs under every test at import time and is suspicious to a
    small degree; the calibration ran all 455 tests for it while the mutants screened needed one.
    Now the widest of the mutants screened first decides; a later mutant of a wider line gets its
    own tests' recorded timeout when that is the larger."""
    passing = frozenset(f"p{i}" for i in range(9))
    lines = {("m.py", 2): frozenset({IMPORT_TIME}), ("m.py", 3): frozenset({"f1", "p0"})}
    spectrum = Spectrum(lines, frozenset({"f1"}), passing)
    search = Search(tmp_path, {"m.py": SOURCE}, spectrum, localise.rank(spectrum))
    ranked = [m for m, _ in search.ranked()]
    first = ranked.index(next(m for m in ranked if m.line == 2))  # line 3's mutants come first
    assert first > 0 and widest_tests(search, ranked) == (["f1"], sorted(passing))
    monkeypatch.setattr(calibrate_module, "CALIBRATE_FROM", first)
    assert widest_tests(search, ranked) == (["f1"], ["p0"])  # was every test: line 2 is a suspect
    durations = {"f1": 0.1, **dict.fromkeys(passing, 0.5)}
    measured = frozenset({"f1", "p0"})
    assert widened(1.2, ["f1"], ["p0"], measured, durations) == 1.2  # what the calibration ran
    assert widened(1.2, ["f1"], sorted(passing), measured, durations) == MAX_MUTANT_TIMEOUT  # 8 x 4.6 s: capped
    assert widened(1.2, ["f1"], ["p1"], measured, durations) == pytest.approx(8 * 0.6 + 0.5)
    assert widened(9.0, ["f1"], ["p1"], measured, durations) == 9.0  # never below the calibrated one
    assert widened(1.2, ["f1"], ["unknown"], measured, durations) == MAX_MUTANT_TIMEOUT  # a time not recorded


class CalibratingSlot(ScriptedSlot):
    """A scripted slot whose calibration run (stop=False) lasts until the test lets it end."""

    def __init__(self, fixes: set[str]) -> None:
        super().__init__(fixes)
        self.let_go = anyio.Event()
        self.calibrating = anyio.Event()
        self.cancelled = False

    async def screen(self, job: Job) -> Verdict:
        if job.stop:
            return await super().screen(job)
        self.calibrating.set()
        try:
            await self.let_go.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        return Verdict("ok", {t: "passed" for t in job.phase1 + job.phase2}, duration_s=0.3, tests_s=0.1)


class YieldingSlot(ScriptedSlot):
    """A scripted slot that lets the other lanes run between its answers, as a real one does."""

    async def screen(self, job: Job) -> Verdict:
        await anyio.lowlevel.checkpoint()
        return await super().screen(job)


def job_for(timeout: dict[str, float]) -> object:
    def make(item: Prepared) -> Job:
        return Job(item.files, item.phase1, item.phase2, timeout["s"])

    return make


@pytest.mark.anyio
async def test_screening_starts_on_the_other_slots_while_the_first_calibrates(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    calibrating, other = CalibratingSlot(set()), YieldingSlot(set())
    timeout, steps = {"s": 2.5}, dict[str, float]()
    seen: list[float] = []

    def make(item: Prepared) -> Job:
        seen.append(timeout["s"])
        return Job(item.files, item.phase1, item.phase2, timeout["s"])

    async with aside([calibrating, other], ["f1"], ["p1"], frozenset(), timeout, steps, 0.0) as slots:
        first = await screen_in_order(search.prepare(search.ranked(), 2), slots, Budget(), make, lambda done: False)
        assert len(first) == 2 and len(other.asked) == 2 and calibrating.asked == []  # the first is still measuring
        assert seen == [2.5, 2.5] and "calibrated_s" not in steps
        calibrating.let_go.set()
        rest = await screen_in_order(search.prepare(search.ranked(), 40), slots, Budget(), make, lambda done: False)
    assert timeout["s"] == pytest.approx(8 * 0.1 + 0.5) and "calibrated_s" in steps  # the worker adds collecting
    assert calibrating.asked  # it joined once measured, under the measured timeout
    assert seen[-1] == timeout["s"] and len(rest) == len(calibrating.asked) + len(other.asked) - 2


class CrashingCalibration(ScriptedSlot):
    """A scripted slot whose worker is lost during the calibration run (stop=False)."""

    async def screen(self, job: Job) -> Verdict:
        if job.stop:
            return await super().screen(job)
        return Verdict("crash", duration_s=0.05, error="worker lost")


@pytest.mark.anyio
async def test_a_calibration_whose_worker_crashed_keeps_the_recorded_timeout(tmp_path: Path) -> None:
    """The recorded durations' timeout stays: a lost worker measured nothing (it gave 8 x 0.05 s +
    0.5 s before, timing out every honest mutant of a slow test screened after it)."""
    search = make_search(tmp_path)
    timeout, steps = {"s": 16.0}, dict[str, float]()
    async with aside(
        [CrashingCalibration(set()), YieldingSlot(set())], ["f1"], ["p1"], frozenset(), timeout, steps, 0.0
    ) as slots:
        await screen_in_order(search.prepare(search.ranked(), 4), slots, Budget(), job_for(timeout), lambda done: False)
    assert timeout["s"] == 16.0 and "calibrated_s" in steps


@pytest.mark.anyio
async def test_a_search_that_ends_first_cancels_the_calibration(tmp_path: Path) -> None:
    search: Search = make_search(tmp_path)
    calibrating, other = CalibratingSlot(set()), ScriptedSlot(set())
    timeout, steps = {"s": 2.5}, dict[str, float]()
    with anyio.fail_after(10):  # the calibration would never end by itself
        async with aside([calibrating, other], ["f1"], ["p1"], frozenset(), timeout, steps, 0.0) as slots:
            done = await screen_in_order(
                search.prepare(search.ranked(), 3), slots, Budget(), job_for(timeout), lambda done: False
            )  # type: ignore[arg-type]
            await calibrating.calibrating.wait()
    assert len(done) == 3 and len(other.asked) == 3 and calibrating.asked == []
    assert calibrating.cancelled and timeout["s"] == 2.5 and "calibrated_s" not in steps


SLOW_TESTS = """import time

from lib import LIMIT

time.sleep(2.0)  # a slow import: collecting this file takes two seconds


def test_limit():
    assert LIMIT == 11
"""


@pytest.mark.anyio
async def test_a_child_that_collects_afresh_gets_the_workers_collection_time(tmp_path: Path) -> None:
    """The mutated file is one the worker's pytest start-up imported (a conftest's import): the
    child runs a whole fresh pytest, collecting the slow file again; its timeout covers only the
    tests' own time (recorded durations), so without the worker's collection time on top it
    would be killed before its first test."""
    root = make_repo(
        tmp_path / "repo",
        {"lib.py": "LIMIT = 10\n", "conftest.py": "import lib  # noqa: F401\n", "tests/test_slow.py": SLOW_TESTS},
    )
    fixed = {str(root / "lib.py"): "LIMIT = 11\n"}
    async with Screener("fork", sys.executable, root, tmp_path / "run", 1) as screener:
        assert screener.collects()
        verdict = await screener.slots[0].screen(Job(fixed, ["tests/test_slow.py::test_limit"], [], 1.5))
    assert verdict.status == "ok" and not verdict.swapped
    assert verdict.outcomes == {"tests/test_slow.py::test_limit": "passed"}
