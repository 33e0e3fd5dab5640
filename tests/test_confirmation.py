"""The final confirmation's verdict (confirmation.py): pure, over two runs and the yardstick."""

from __future__ import annotations

from explore.decide.scoring import yardstick_of
from explore.fanout.confirmation import disagreements, reason
from explore.model.testresults import TestOutcome, TestRun


def run_of(outcomes: dict[str, str]) -> TestRun:
    return TestRun(outcomes={i: TestOutcome(id=i, outcome=o) for i, o in outcomes.items()})


BASELINE = yardstick_of(run_of({"t::a": "failed", "t::b": "passed", "t::skip": "skipped"}))


def test_runs_that_agree_test_for_test_have_no_reason() -> None:
    scored = run_of({"t::a": "passed", "t::b": "passed", "t::new": "passed"})
    assert disagreements(scored, run_of({"t::a": "passed", "t::b": "passed"}), BASELINE) == ([], [])
    assert reason([], []) is None


def test_a_test_that_fails_only_unsharded_is_named() -> None:
    scored = run_of({"t::a": "passed", "t::b": "passed"})
    confirmed = run_of({"t::a": "passed", "t::b": "failed", "t::skip": "failed"})  # skipped at baseline: not counted
    worse, better = disagreements(scored, confirmed, BASELINE)
    assert (worse, better) == (["t::b"], [])
    assert "t::b passed when scored, fail there" in (reason(worse, better) or "")


def test_a_vanished_test_and_a_new_failing_one_disagree_too() -> None:
    scored = run_of({"t::a": "passed", "t::b": "passed"})
    confirmed = run_of({"t::a": "passed", "t::new": "failed"})
    assert disagreements(scored, confirmed, BASELINE) == (["t::b", "t::new"], [])


def test_a_test_that_passes_only_unsharded_disagrees_as_well() -> None:
    scored = run_of({"t::a": "failed", "t::b": "passed"})
    worse, better = disagreements(scored, run_of({"t::a": "passed", "t::b": "passed"}), BASELINE)
    assert (worse, better) == ([], ["t::a"]) and "t::a failed when scored, pass there" in (reason(worse, better) or "")
