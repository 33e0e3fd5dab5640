"""history: stuck / regression / trend / similarity detection, and the jsonl store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explore.decide import history
from explore.decide.history import HistoryRecord
from explore.edges import history_io
from explore.model.candidates import IterationRecord
from explore.model.runstate import RunState


def rec(n: int, rate: float, failing: list[str] = (), run_id: str = "r1", flaky: list[str] = ()) -> HistoryRecord:
    return HistoryRecord(run_id=run_id, n=n, pass_rate=rate, failing=list(failing), flaky=list(flaky))


# --- stuck -----------------------------------------------------------------------------------


def test_stuck_needs_three_consecutive_records() -> None:
    records = [rec(0, 50, ["t::a", "t::b"]), rec(1, 60, ["t::a", "t::b"])]
    assert history.stuck_tests(records) == []
    records.append(rec(2, 70, ["t::a", "t::c"]))
    assert history.stuck_tests(records) == ["t::a"]


def test_stuck_is_about_the_latest_records_only() -> None:
    # t::a failed three times, then passed once: no longer stuck.
    records = [rec(0, 50, ["t::a"]), rec(1, 50, ["t::a"]), rec(2, 50, ["t::a"]), rec(3, 100, [])]
    assert history.stuck_tests(records) == []
    # a gap breaks the streak
    records = [rec(0, 50, ["t::b"]), rec(1, 50, []), rec(2, 50, ["t::b"]), rec(3, 50, ["t::b"])]
    assert history.stuck_tests(records) == []


def test_stuck_counts_across_runs_and_is_sorted() -> None:
    records = [
        rec(2, 40, ["t::z", "t::a"], run_id="yesterday"),
        rec(0, 40, ["t::a", "t::z"], run_id="today"),
        rec(1, 45, ["t::z", "t::a", "t::new"], run_id="today"),
    ]
    assert history.stuck_tests(records) == ["t::a", "t::z"]


def test_stuck_excludes_flaky_tests() -> None:
    records = [rec(i, 50, ["t::a", "t::flaky"]) for i in range(3)]
    assert history.stuck_tests(records, flaky=frozenset({"t::flaky"})) == ["t::a"]
    assert history.detect(records, [], flaky=frozenset({"t::flaky"})).stuck == ["t::a"]


def test_stuck_threshold_is_configurable() -> None:
    records = [rec(i, 50, ["t::a"]) for i in range(4)]
    assert history.stuck_tests(records, threshold=4) == ["t::a"]
    assert history.stuck_tests(records[:3], threshold=4) == []
    assert history.stuck_tests(records[:2], threshold=2) == ["t::a"]


# --- regression ------------------------------------------------------------------------------


def test_regression_drop_is_points_lost_against_the_previous_record() -> None:
    assert history.regression_drop([]) == 0.0
    assert history.regression_drop([rec(0, 90)]) == 0.0
    assert history.regression_drop([rec(0, 90), rec(1, 75)]) == pytest.approx(15.0)
    assert history.regression_drop([rec(0, 10), rec(1, 90), rec(2, 85)]) == pytest.approx(5.0)
    assert history.regression_drop([rec(0, 50), rec(1, 80)]) == 0.0


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [(90.0, 79.0, True), (90.0, 80.0, False), (90.0, 85.0, False), (50.0, 100.0, False), (100.0, 0.0, True)],
)
def test_detect_regression_is_a_drop_of_more_than_ten_points(before: float, after: float, expected: bool) -> None:
    detection = history.detect([rec(0, before), rec(1, after)], [])
    assert detection.regression is expected
    assert detection.regression_drop == pytest.approx(max(0.0, before - after))


def test_a_regression_names_the_commits_on_either_side_of_the_drop() -> None:
    good, bad = rec(0, 100, run_id="monday"), rec(0, 60, run_id="tuesday")
    good.commit, bad.commit = "c0ffee", "badbad"
    assert history.detect([good, bad], []).regressed == ("c0ffee", "badbad")
    assert history.detect([bad, good], []).regressed is None  # a rise is no regression
    assert history.detect([good, bad], [], regression_points=50.0).regressed is None  # nor a drop under the threshold
    bad.commit = "c0ffee"
    assert history.detect([good, bad], []).regressed is None  # same code: the drop came from elsewhere (flaky, env)


def test_a_result_not_applied_closes_the_run_on_the_baseline_and_the_next_run_sees_no_drop() -> None:
    """A run that merged 40 → 90 on its own ref but did not apply it: the user's branch still holds
    40, so the next run's baseline of 40 is no regression (it was one, wrongly, before)."""
    from explore.model.testresults import Counts

    run = RunState(
        run_id="r1",
        repo="/r",
        status="failed",
        base_commit="abc",
        start_commit="abc",
        current_commit="def",
        baseline=Counts(passed=2, failed=3, total=5, pass_rate=40.0),
        baseline_failing=["t::c", "t::a", "t::b"],
    )
    closing = history.branch_record(run)
    assert closing is not None and closing.branch
    assert (closing.pass_rate, closing.failing, closing.commit) == (40.0, ["t::a", "t::b", "t::c"], "abc")
    assert history.branch_record(run.model_copy(update={"applied": True})) is None  # the branch holds the result
    assert history.branch_record(run.model_copy(update={"current_commit": "abc"})) is None  # nothing merged
    ran = [rec(0, 40.0), rec(1, 90.0), closing]
    assert not history.detect([*ran, rec(0, 40.0, run_id="r2")], []).regression
    assert history.detect([*ran[:2], rec(0, 40.0, run_id="r2")], []).regression  # what the history read before


def test_detect_regression_points_threshold_is_a_parameter() -> None:
    records = [rec(0, 90), rec(1, 84)]
    assert not history.detect(records, []).regression
    assert history.detect(records, [], regression_points=5.0).regression


# --- trend -----------------------------------------------------------------------------------


def test_trend() -> None:
    assert history.trend([]) == "flat"
    assert history.trend([rec(0, 50)]) == "flat"
    assert history.trend([rec(0, 50), rec(1, 60), rec(2, 70)]) == "improving"
    assert history.trend([rec(0, 70), rec(1, 60), rec(2, 50)]) == "worsening"
    assert history.trend([rec(0, 50), rec(1, 90), rec(2, 50)]) == "flat"
    # only the last `window` records count
    assert history.trend([rec(0, 100), rec(1, 10), rec(2, 20), rec(3, 30)]) == "improving"
    assert history.trend([rec(0, 100), rec(1, 10), rec(2, 20), rec(3, 30)], window=4) == "worsening"
    assert history.detect([rec(0, 10), rec(1, 20)], []).trend == "improving"


# --- similarity ------------------------------------------------------------------------------


def test_failure_similarity_high_for_alike_low_for_different() -> None:
    alike = [
        "Traceback ...\nKeyError: 'name'",
        "Traceback ...\nKeyError: 'name'",
        "Traceback ...\nKeyError: 'nam'",
    ]
    different = [
        "AssertionError: assert 3 == 4",
        "ZeroDivisionError: division by zero",
        "ModuleNotFoundError: No module named 'yaml'",
    ]
    high = history.failure_similarity(alike)
    low = history.failure_similarity(different)
    assert 0.9 < high <= 1.0
    assert 0.0 <= low < 0.5
    assert history.failure_similarity(["same", "same"]) == pytest.approx(1.0)


def test_failure_similarity_uses_last_line_and_needs_two_messages() -> None:
    assert history.failure_similarity([]) == 0.0
    assert history.failure_similarity(["only one"]) == 0.0
    # different first lines, same last line
    assert history.failure_similarity(["foo\nbar\nValueError: x", "completely other\nValueError: x"]) == pytest.approx(
        1.0
    )
    # empty messages don't crash
    assert 0.0 <= history.failure_similarity(["", "", "ValueError"]) <= 1.0
    assert history.detect([], ["E: a", "E: a"]).similarity == pytest.approx(1.0)


# --- store -----------------------------------------------------------------------------------


def test_load_missing_file_is_empty(tmp_path: Path) -> None:
    assert history_io.load(tmp_path / "nope.jsonl") == []


def recorded_run(
    explore_dir: Path, run_id: str = "r1", flaky: list[str] = (), iterations: list[list[str]] = ()
) -> None:
    """A run's state in explore_dir/runs/, as `explore run` leaves it: what makes its records plausible."""
    run = RunState(
        run_id=run_id,
        repo="/r",
        base_commit="abc",
        start_commit="abc",
        current_commit="abc",
        flaky=list(flaky),
        iterations=[
            IterationRecord(n=i + 1, strategy="conservative", failed_tests=f) for i, f in enumerate(iterations)
        ],
    )
    (explore_dir / "runs" / run_id).mkdir(parents=True, exist_ok=True)
    (explore_dir / "runs" / run_id / "state.json").write_text(run.model_dump_json())


def test_append_then_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / ".explore" / "history.jsonl"  # parent folder created on demand
    recorded_run(tmp_path / ".explore", flaky=["t::f"], iterations=[[]])
    first = HistoryRecord(
        run_id="r1", n=0, pass_rate=50.0, failing=["t::a"], flaky=["t::f"], strategy=None, commit="abc"
    )
    second = HistoryRecord(run_id="r1", n=1, pass_rate=100.0, strategy="conservative", green=True)
    history_io.append(path, first)
    history_io.append(path, second)
    assert history_io.load(path) == [first, second]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_load_skips_damaged_lines(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    recorded_run(tmp_path, iterations=[[]])
    good = HistoryRecord(run_id="r1", n=0, pass_rate=40.0, failing=["t::a"])
    later = HistoryRecord(run_id="r1", n=1, pass_rate=60.0)
    path.write_text(
        good.model_dump_json()
        + "\n"
        + '{"run_id": "r1", "n": 1, "pass_ra\n'  # a run killed mid-write
        + json.dumps({"run_id": "r1"})
        + "\n"  # valid JSON, not a record
        + "[1, 2]\n"
        + "\n",
        encoding="utf-8",
    )
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe garbage\n")
    history_io.append(path, later)
    assert history_io.load(path) == [good, later]


def test_records_no_recorded_run_could_have_written_are_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "history.jsonl"
    recorded_run(tmp_path, flaky=["t::f"], iterations=[["t::a"]])
    honest = [
        HistoryRecord(run_id="r1", n=0, pass_rate=0.0, failing=["t::a", "t::b"], flaky=["t::f"], commit="abc"),
        HistoryRecord(run_id="r1", n=1, pass_rate=50.0, failing=["t::a"], commit="abc"),
    ]
    planted = [
        (HistoryRecord(run_id="r9", n=0, pass_rate=0.0, flaky=["t::a", "t::b"]), "run 'r9' is not recorded"),
        (HistoryRecord(run_id="r1", n=0, pass_rate=0.0, flaky=["t::a"]), "flaky tests run r1 never found: t::a"),
        (HistoryRecord(run_id="r1", n=1, pass_rate=50.0, failing=["t::a"]), "a second record for iteration 1"),
        (HistoryRecord(run_id="r1", n=2, pass_rate=50.0), "run r1 has no iteration 2"),
        (
            HistoryRecord(run_id="r1", n=1, pass_rate=50.0, failing=["t::z"]),
            "failing tests that are not iteration 1 of run r1's",
        ),
        (HistoryRecord(run_id="../r1", n=0, pass_rate=0.0), "is not recorded"),
        (HistoryRecord(run_id="r1", n=0, pass_rate=0.0, commit="f00d"), "commit f00d is none of run r1's"),
        (
            HistoryRecord(run_id="r1", n=1, pass_rate=0.0, failing=["t::z"], branch=True),
            "a branch record that is not run r1's baseline at its end",
        ),
    ]
    for record in honest + [p for p, _ in planted]:
        history_io.append(path, record)
    with caplog.at_level("WARNING", logger="explore.history"):
        assert history_io.load(path) == honest
    for _, why in planted:
        assert any(why in message for message in caplog.messages), why


def test_validated_is_pure_and_asks_for_each_run_once() -> None:
    run = RunState(run_id="r1", repo="/r", base_commit="abc", start_commit="abc", current_commit="abc")
    asked: list[str] = []

    def recorded(run_id: str) -> RunState | None:
        asked.append(run_id)
        return run if run_id == "r1" else None

    good = HistoryRecord(run_id="r1", n=0, pass_rate=40.0, failing=["t::a"], commit="abc")
    stray = HistoryRecord(run_id="r9", n=0, pass_rate=0.0)
    lines = [good.model_dump_json(), "{not json", stray.model_dump_json(), stray.model_dump_json()]
    records, ignored = history.validated(lines, recorded)
    assert records == [good]
    assert ignored == [(stray.model_dump_json(), "run 'r9' is not recorded in .explore/runs/")] * 2
    assert asked == ["r1", "r9"]


def test_a_failing_test_unmoved_two_iterations_running_is_set_aside() -> None:
    streaks = history.unmoved_streaks({}, ["t::env", "t::bug"], ["t::env", "t::bug"])
    assert history.to_set_aside(streaks, []) == []  # one iteration is not enough
    streaks = history.unmoved_streaks(streaks, ["t::env"], ["t::env", "t::bug"])  # t::bug moved
    assert streaks == {"t::env": 2}
    assert history.to_set_aside(streaks, []) == ["t::env"]
    assert history.to_set_aside(streaks, ["t::env"]) == []  # never twice


def test_streaks_restart_when_a_test_moves_or_passes() -> None:
    streaks = history.unmoved_streaks({"t::a": 1, "t::b": 1}, ["t::a", "t::b"], ["t::a"])  # t::b passes now
    assert streaks == {"t::a": 2}
    assert history.unmoved_streaks(streaks, [], ["t::a"]) == {}  # an edit moved it: start again


def test_earlier_runs_set_aside_is_remembered() -> None:
    records = [
        history.HistoryRecord(run_id="r1", n=1, pass_rate=50.0, set_aside=["t::env"]),
        history.HistoryRecord(run_id="r2", n=0, pass_rate=50.0),
    ]
    assert history.set_aside_before(records) == {"t::env"}


# --- carried over from an earlier run, failure locations ---------------------------------------


def test_stuck_tests_whose_streak_began_in_an_earlier_run_are_carried() -> None:
    first_run = [
        rec(0, 40, ["t::a"], run_id="first"),
        rec(1, 40, ["t::a"], run_id="first"),
        rec(2, 40, ["t::a"], run_id="first"),
    ]
    # the first run alone: stuck, but within one run
    assert history.detect(first_run, []).stuck == ["t::a"]
    assert history.detect(first_run, []).carried == []
    # the second run's baseline: the window spans both runs
    second = [*first_run, rec(0, 40, ["t::a"], run_id="second")]
    assert history.detect(second, []).carried == ["t::a"]
    # a test the first run repaired is not carried
    repaired = [*first_run[:2], rec(2, 100, [], run_id="first"), rec(0, 40, ["t::b"], run_id="second")]
    assert history.detect(repaired, []).carried == []


ASSERTION = """def test_total():
>       assert order_total(10, 10) == 85.0
E       assert 100 == 85.0
E        +  where 100 = order_total(10, 10)

tests/test_pricing.py:5: AssertionError"""

RAISED = """def test_stock():
>       assert available(5, 2) == 3
tests/test_stock.py:3: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def available(on_hand, reserved):
>       return max(0, reserved - on_hand) / 0
E       ZeroDivisionError: division by zero

stock.py:4: ZeroDivisionError"""


def test_failure_location_is_the_innermost_source_frame_else_the_function_the_test_line_calls() -> None:
    assert history.failure_location(RAISED) == "stock.py:4"
    assert (
        history.failure_location(RAISED.replace("stock.py:4: ZeroDivisionError", "stock.py:4: in available"))
        == "stock.py:available"
    )
    assert history.failure_location(ASSERTION) == "call:order_total"
    # builtins and pytest helpers are not locations; a report with nothing to go on has none
    assert history.failure_location(">       assert len(sorted(xs)) == 2\nE  assert 1 == 2") is None
    assert history.failure_location(">       with pytest.raises(ValueError):\nE  Failed") is None
    assert history.failure_location("assert 1 == 2") is None


def test_frames_outside_the_project_are_no_failure_location() -> None:
    """Issue 30: explore's own plugin (a timed-out test's stack) and site-packages were named as
    where failures point. pytest names files outside the rootdir by absolute paths."""
    plugin = (
        "/work/src/explore/pytest_plugin/explore_pytest_plugin.py:171: in _alarm\n    raise ExploreTestTimeout(...)\n"
    )
    library = "/venv/lib/python3.11/site-packages/requests/api.py:59: in get\n"
    stuck = RAISED.replace(
        "stock.py:4: ZeroDivisionError", "stock.py:4: in available\n" + plugin + library + "E   ExploreTestTimeout"
    )
    assert history.failure_location(stuck) == "stock.py:available"
    assert history.failure_location(ASSERTION + "\n" + plugin) == "call:order_total"


def test_detect_counts_distinct_locations_of_the_reports() -> None:
    same = [ASSERTION, ASSERTION.replace("10, 10", "20, 20")]
    assert history.detect([], [], reports=same).locations == ["call:order_total"]
    spread = history.detect([], [], reports=[ASSERTION, RAISED, "no traceback"])
    assert spread.locations == ["call:order_total", "stock.py:4"]
