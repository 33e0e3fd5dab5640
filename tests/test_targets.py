"""Target tests, the pure part: selection by id and pattern, --since, the gate and the merge guard."""

from __future__ import annotations

import pytest

from explore.decide import targets
from explore.decide.history import HistoryRecord
from explore.decide.scoring import outside_targets_reason
from explore.model.config import Options, build_options
from explore.model.errors import UsageError
from explore.model.testresults import TestOutcome, TestRun

BASELINE = [
    "tests/test_calc.py::test_add",
    "tests/test_calc.py::test_add_many[1-2]",
    "tests/test_calc.py::TestMul::test_mul",
    "tests/test_env.py::test_needs_token",
    "tests/unit/test_text.py::test_upper",
]


def run_of(**outcomes: str) -> TestRun:
    ids = {key.replace("__", "::"): value for key, value in outcomes.items()}
    return TestRun(outcomes={i: TestOutcome(id=i, outcome=o) for i, o in ids.items()})  # type: ignore[arg-type]


def test_ids_match_exactly_or_as_file_class_or_folder() -> None:
    assert targets.select(BASELINE, ["tests/test_calc.py::test_add"], []) == ["tests/test_calc.py::test_add"]
    # a parametrised id is matched as written, not as a glob character class
    assert targets.select(BASELINE, ["tests/test_calc.py::test_add_many[1-2]"], []) == [
        "tests/test_calc.py::test_add_many[1-2]"
    ]
    assert targets.select(BASELINE, ["tests/test_calc.py::TestMul"], []) == ["tests/test_calc.py::TestMul::test_mul"]
    assert targets.select(BASELINE, ["./tests/test_env.py"], []) == ["tests/test_env.py::test_needs_token"]
    assert targets.select(BASELINE, ["tests/unit/"], []) == ["tests/unit/test_text.py::test_upper"]
    # an id is no glob and no mere prefix of another name
    with pytest.raises(UsageError):
        targets.select(BASELINE, ["tests/test_calc.py::test_*"], [])
    with pytest.raises(UsageError):
        targets.select(BASELINE, ["tests/test_calc.py::test_ad"], [])


def test_patterns_are_globs_over_node_ids_and_union_with_ids() -> None:
    assert targets.select(BASELINE, [], ["*::test_add*"]) == [
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_add_many[1-2]",
    ]
    assert targets.select(BASELINE, ["tests/test_env.py::test_needs_token"], ["tests/unit/*"]) == [
        "tests/test_env.py::test_needs_token",
        "tests/unit/test_text.py::test_upper",
    ]


def test_selectors_matching_nothing_are_named_in_one_usage_error() -> None:
    with pytest.raises(UsageError) as caught:
        targets.select(BASELINE, ["tests/test_calc.py::test_add", "tests/test_nope.py::test_x"], ["*::test_zzz*"])
    message = str(caught.value)
    assert "'tests/test_nope.py::test_x'" in message and "'*::test_zzz*'" in message and "test_add'" not in message
    assert "5 tests ran" in message and "ids look like tests/test_calc.py::" in message
    assert caught.value.exit_code == 2


def test_went_red_is_failing_now_and_passing_then() -> None:
    then = run_of(a="passed", b="failed", c="passed", d="skipped", e="xfailed")
    # a passed then (red now), b failed then too, d was skipped, n is new, e's xfail counts as passing
    assert targets.went_red(["a", "b", "d", "e", "n"], then) == ["a", "e"]
    assert targets.went_red([], then) == []


def test_since_last_green_is_the_latest_green_record_with_a_commit() -> None:
    records = [
        HistoryRecord(run_id="r1", n=0, pass_rate=100, commit="aaa", green=True),
        HistoryRecord(run_id="r2", n=0, pass_rate=100, commit="bbb", green=True),
        HistoryRecord(run_id="r3", n=0, pass_rate=50, commit="ccc", green=False, failing=["x"]),
        HistoryRecord(run_id="r4", n=0, pass_rate=100, commit=None, green=True),
    ]
    assert targets.since_ref("last-green", records) == "bbb"
    assert targets.since_ref("v1.2", records) == "v1.2"
    with pytest.raises(UsageError, match="no green run is recorded"):
        targets.since_ref("last-green", records[2:])


def test_without_targets_nothing_changes() -> None:
    failing = ["a", "b"]
    assert targets.to_repair(failing, None) == failing
    assert targets.blocking(failing, None, []) == failing
    assert targets.preexisting(failing, None) == []
    assert targets.protected(["a", "b", "c"], None, [], []) == frozenset()


def test_with_targets_only_they_are_repaired_and_only_they_or_regressions_block() -> None:
    baseline_ids, baseline_failing, chosen = (
        ["t1", "t2", "env", "other", "flaky"],
        ["t1", "t2", "env", "flaky"],
        ["t1", "t2"],
    )
    pre = targets.preexisting(sorted(set(baseline_failing) - {"flaky"}), chosen)
    assert pre == ["env"]
    assert targets.to_repair(["env", "t1", "t2"], chosen) == ["t1", "t2"]
    assert targets.blocking(["env", "t2"], chosen, pre) == ["t2"]
    assert targets.blocking(["env"], chosen, pre) == []  # every target passes: the run succeeds
    assert targets.blocking(["env", "other"], chosen, pre) == ["other"]  # a regression outside the targets
    assert targets.protected(baseline_ids, chosen, pre, ["flaky"]) == frozenset({"other"})
    assert targets.blocking(["env"], [], pre) == []  # --since found nothing that went red


def test_a_candidate_breaking_a_protected_test_has_a_reason() -> None:
    protected = frozenset({"other", "third"})
    assert outside_targets_reason(run_of(t1="passed", other="passed", third="passed", env="failed"), protected) is None
    reason = outside_targets_reason(run_of(t1="passed", other="failed", env="failed"), protected)
    assert (
        reason is not None
        and "breaks 2 test(s) outside the targets" in reason
        and "other" in reason
        and "third" in reason
    )
    assert outside_targets_reason(run_of(t1="failed"), frozenset()) is None


def test_options_take_patterns_from_pyproject_and_flags(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.explore]\ntests = "tests/test_calc.py::*"\nsince = "last-green"\n')
    options = build_options(tmp_path, {"tests": None, "test_ids": None})
    assert options.tests == ["tests/test_calc.py::*"] and options.since == "last-green" and options.has_targets()
    options = build_options(tmp_path, {"tests": ["*add*"], "test_ids": ["tests/test_env.py"]})
    assert options.tests == ["*add*"] and options.test_ids == ["tests/test_env.py"]
    assert not Options().has_targets()
