"""scoring: the baseline yardstick, tamper checks, ranking and patch identity — pure."""

from __future__ import annotations

import random

import pytest

from explore.decide.scoring import (
    Ranked,
    Yardstick,
    diff_size,
    drifted,
    is_improvement,
    newly_failing,
    normalise_source,
    pass_rate,
    patch_key,
    rank,
    tamper_reason,
    yardstick_of,
)
from explore.model import config
from explore.model.testfiles import is_test_file
from explore.model.testresults import TestOutcome, TestRun

PATTERNS = list(config.DEFAULT_TEST_PATTERNS)


def run_of(outcomes: dict[str, str], **kwargs) -> TestRun:
    return TestRun(outcomes={i: TestOutcome(id=i, outcome=o) for i, o in outcomes.items()}, **kwargs)


BASELINE = run_of({"t::a": "passed", "t::b": "failed", "t::c": "error", "t::skip": "skipped", "t::x": "xfailed"})


@pytest.fixture
def stick() -> Yardstick:
    return yardstick_of(BASELINE)


# --- yardstick -------------------------------------------------------------------------------


def test_yardstick_leaves_out_skipped_at_baseline(stick: Yardstick) -> None:
    assert stick.ids == frozenset({"t::a", "t::b", "t::c", "t::x"})
    assert stick.skipped == frozenset({"t::skip"})
    counts = stick.counts(BASELINE)
    assert (counts.passed, counts.failed, counts.total) == (2, 2, 4)  # xfailed passes
    assert counts.pass_rate == pytest.approx(50.0)
    assert stick.failing(BASELINE) == ["t::b", "t::c"]


def test_skipped_at_baseline_stays_out_even_when_it_runs_later(stick: Yardstick) -> None:
    later = run_of({"t::a": "passed", "t::b": "passed", "t::c": "passed", "t::x": "xfailed", "t::skip": "failed"})
    counts = stick.counts(later)
    assert (counts.passed, counts.total, counts.pass_rate) == (4, 4, 100.0)
    assert stick.failing(later) == []


def test_vanished_tests_count_as_failing(stick: Yardstick) -> None:
    later = run_of({"t::a": "passed", "t::b": "passed"})  # t::c and t::x vanished
    counts = stick.counts(later)
    assert (counts.passed, counts.failed, counts.total) == (2, 2, 4)
    assert stick.failing(later) == ["t::c", "t::x"]


def test_newly_skipped_counts_as_failing(stick: Yardstick) -> None:
    later = run_of({"t::a": "skipped", "t::b": "passed", "t::c": "passed", "t::x": "passed"})
    assert stick.counts(later).passed == 3
    assert stick.failing(later) == ["t::a"]


def test_a_new_id_counts_only_when_it_fails(stick: Yardstick) -> None:
    """Issue 31: a test that did not exist at the baseline is a regression when it fails, never a pass."""
    later = run_of(
        {
            "t::a": "passed",
            "t::b": "passed",
            "t::c": "passed",
            "t::x": "xpassed",
            "t::new_ok": "passed",
            "t::new_bad": "failed",
        }
    )
    counts = stick.counts(later)
    assert (counts.passed, counts.failed, counts.total) == (4, 1, 5)
    assert counts.pass_rate == pytest.approx(80.0)
    assert stick.failing(later) == ["t::new_bad"]


def test_forty_new_passing_tests_do_not_lift_the_pass_rate(stick: Yardstick) -> None:
    padded = run_of(
        {
            **{o.id: o.outcome for o in BASELINE.outcomes.values()},
            **{f"extra.py::extra.f{k}": "passed" for k in range(40)},
            "test_notes.txt::test_notes.txt": "passed",
        }
    )
    assert stick.counts(padded) == stick.counts(BASELINE)


def test_empty_yardstick_is_green() -> None:
    empty = Yardstick(frozenset(), frozenset())
    assert empty.counts(TestRun()).pass_rate == 100.0


# --- tamper ----------------------------------------------------------------------------------

GREEN = run_of({"t::a": "passed", "t::b": "passed", "t::c": "passed", "t::x": "xfailed"})


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_core.py",
        "tests/helpers/data.json",
        "pkg/test_thing.py",
        "test_top.py",
        "pkg/sub/thing_test.py",
        "conftest.py",
        "pkg/conftest.py",
        "test/unit.py",
    ],
)
def test_test_files_by_pattern(path: str) -> None:
    assert is_test_file(path, PATTERNS)  # their edits are decide/policy's (test_policy.py)


@pytest.mark.parametrize("path", ["src/app.py", "pkg/testing.py", "pkg/contest.py", "README.md", "src/latest.py"])
def test_source_files_are_not_test_files(stick: Yardstick, path: str) -> None:
    assert not is_test_file(path, PATTERNS)
    assert tamper_reason(GREEN, stick) is None


def test_vanished_tests_are_tampering(stick: Yardstick) -> None:
    gone = run_of({"t::a": "passed", "t::b": "passed", "t::x": "xfailed"})
    reason = tamper_reason(gone, stick)
    assert reason is not None and "vanish" in reason and "t::c" in reason


def test_vanished_is_not_checked_without_per_test_results(stick: Yardstick) -> None:
    suite_only = run_of({"<suite>": "passed"}, per_test=False)
    assert tamper_reason(suite_only, stick) is None


def test_newly_skipped_tests_are_tampering(stick: Yardstick) -> None:
    skipping = run_of({"t::a": "passed", "t::b": "skipped", "t::c": "passed", "t::x": "xfailed"})
    reason = tamper_reason(skipping, stick)
    assert reason is not None and "skip" in reason and "t::b" in reason


def test_skipped_at_baseline_may_stay_skipped(stick: Yardstick) -> None:
    still = run_of({"t::a": "passed", "t::b": "passed", "t::c": "passed", "t::x": "xfailed", "t::skip": "skipped"})
    assert tamper_reason(still, stick) is None


def test_collection_errors_and_infra_errors_are_rejected(stick: Yardstick) -> None:
    broken = GREEN.model_copy(update={"collection_errors": ["tests/test_core.py"]})
    reason = tamper_reason(broken, stick)
    assert reason is not None and "collection" in reason and "tests/test_core.py" in reason
    crashed = GREEN.model_copy(update={"infra_error": "the test runner crashed (exit 139)"})
    reason = tamper_reason(crashed, stick)
    assert reason is not None and "exit 139" in reason


def test_a_parametrised_id_that_drifts_between_runs_is_the_same_test() -> None:
    """marshmallow parametrises with the time of day: every run names two tests differently."""
    base = yardstick_of(
        run_of(
            {"t.py::test_dt[01:30:50]": "passed", "t.py::test_dt[11-23 01:30:50]": "passed", "t.py::test_a": "passed"}
        )
    )
    later = run_of(
        {"t.py::test_dt[01:31:07]": "passed", "t.py::test_dt[11-23 01:31:07]": "passed", "t.py::test_a": "passed"}
    )
    assert drifted(base.ids, later) == {
        "t.py::test_dt[01:31:07]": "t.py::test_dt[01:30:50]",
        "t.py::test_dt[11-23 01:31:07]": "t.py::test_dt[11-23 01:30:50]",
    }
    assert tamper_reason(later, base) is None
    counts = base.counts(later)
    assert (counts.passed, counts.total) == (3, 3)
    assert base.failing(later) == []
    assert newly_failing(set(base.ids), later, base) == []


def test_a_drifted_id_keeps_its_outcome() -> None:
    base = yardstick_of(run_of({"t.py::test_dt[1]": "passed", "t.py::test_a": "passed"}))
    later = run_of({"t.py::test_dt[2]": "failed", "t.py::test_a": "passed"})
    assert base.failing(later) == ["t.py::test_dt[1]"]
    assert newly_failing({"t.py::test_dt[1]", "t.py::test_a"}, later, base) == ["t.py::test_dt[1]"]


@pytest.mark.parametrize(
    "later",
    [
        {"t.py::test_dt[a]": "passed"},  # one of two parametrisations gone
        {
            "t.py::test_a": "passed",
            "t.py::test_dt[a]": "passed",
            "t.py::test_dt[c]": "passed",
            "t.py::test_dt[d]": "passed",
        },  # b gone, two new
        {"t.py::test_dt[a]": "passed", "t.py::test_other[b]": "passed"},  # another function's id
    ],
)
def test_a_test_that_truly_vanishes_is_still_tampering(later: dict[str, str]) -> None:
    base = yardstick_of(run_of({"t.py::test_dt[a]": "passed", "t.py::test_dt[b]": "passed"}))
    assert "vanish" in (tamper_reason(run_of(later), base) or "")


def test_newly_failing() -> None:
    later = run_of({"t::a": "failed", "t::b": "passed"})
    assert newly_failing({"t::a", "t::b", "t::gone"}, later) == ["t::a", "t::gone"]


# --- rank ------------------------------------------------------------------------------------


def R(id: str, rate: float = 50.0, new: int = 0, agree: int = 1, conf: float = 0.5, diff: int = 10) -> Ranked:
    return Ranked(id=id, pass_rate=rate, newly_failing=new, agreement=agree, confidence=conf, diff_lines=diff)


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        (R("z", rate=90.0, new=5, agree=1, conf=0.1, diff=100), R("a", rate=80.0, new=0, agree=3, conf=0.9, diff=1)),
        (R("z", new=0, agree=1, conf=0.1, diff=100), R("a", new=1, agree=3, conf=0.9, diff=1)),
        (R("z", agree=2, conf=0.1, diff=100), R("a", agree=1, conf=0.9, diff=1)),
        (R("z", conf=0.8, diff=100), R("a", conf=0.7, diff=1)),
        (R("z", diff=3), R("a", diff=4)),
        (R("a"), R("b")),
    ],
    ids=["pass-rate", "newly-failing", "agreement", "confidence", "diff-size", "id"],
)
def test_rank_order(better: Ranked, worse: Ranked) -> None:
    assert rank([worse, better]) == [better, worse]
    assert rank([better, worse]) == [better, worse]


@pytest.mark.parametrize(("passed", "total"), [(2, 3), (1, 3), (5, 7), (2455, 2456)])
def test_a_bound_on_the_pass_rate_ties_the_measured_rate_it_equals(passed: int, total: int) -> None:
    """A running candidate's cap (the best rate its run can still reach) and a validated rival's rate
    are both pass_rate(): a cap of 66.666…67 once read below a measured 66.6667, and a candidate of
    higher confidence was stopped as outranked (CI, test_safety_faults)."""
    stick = yardstick_of(TestRun(outcomes={f"t{i}": TestOutcome(id=f"t{i}", outcome="failed") for i in range(total)}))
    measured = stick.counts(
        TestRun(
            outcomes={
                f"t{i}": TestOutcome(id=f"t{i}", outcome="passed" if i < passed else "failed") for i in range(total)
            }
        )
    )
    assert measured.pass_rate == pass_rate(passed, total)
    assert (
        rank([R("b", rate=measured.pass_rate, conf=0.8), R("a", rate=pass_rate(passed, total), conf=0.9)])[0].id == "a"
    )


def test_rank_is_deterministic_whatever_the_input_order() -> None:
    candidates = [R("c"), R("a"), R("b", conf=0.6), R("d", rate=60.0), R("e", diff=2)]
    expected = ["d", "b", "e", "a", "c"]
    shuffler = random.Random(7)
    for _ in range(10):
        shuffler.shuffle(candidates)
        assert [r.id for r in rank(candidates)] == expected


def test_is_improvement_is_strict() -> None:
    assert is_improvement(60.0, 50.0)
    assert not is_improvement(50.0, 50.0)
    assert not is_improvement(40.0, 50.0)


def test_diff_size_counts_changed_lines_only() -> None:
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n context\n-old\n+new\n+more\n"
    assert diff_size(patch) == 3
    assert diff_size("") == 0


# --- patch identity --------------------------------------------------------------------------

PY = b"def f(x):\n    return x + 1\n"


def test_comments_and_layout_do_not_change_python_keys() -> None:
    variant = b"# a comment\ndef f( x ):\n\n    return (x+1)  # inline\n"
    assert normalise_source("m.py", PY) == normalise_source("m.py", variant)
    assert patch_key({"pkg/m.py": PY}) == patch_key({"pkg/m.py": variant})


def test_real_change_changes_the_key() -> None:
    assert patch_key({"pkg/m.py": PY}) != patch_key({"pkg/m.py": PY.replace(b"+ 1", b"- 1")})
    assert patch_key({"pkg/m.py": PY}) != patch_key({"pkg/n.py": PY})  # same text, other file
    assert patch_key({"pkg/m.py": PY}) != patch_key({"pkg/m.py": None})  # deleted
    assert patch_key({"pkg/m.py": PY}) != patch_key({"pkg/m.py": PY, "pkg/n.py": PY})
    docstring = b'def f(x):\n    """Twice x."""\n    return x + 1\n'
    assert patch_key({"m.py": docstring}) != patch_key({"m.py": docstring.replace(b"Twice", b"Twice  ")})


def test_python_is_read_in_its_declared_encoding() -> None:
    latin = "# -*- coding: latin-1 -*-\nNAME = 'café'\n"
    assert normalise_source("m.py", latin.encode("latin-1")) != normalise_source("m.py", latin.encode("utf-8"))


def test_unparsable_python_and_every_other_file_compare_byte_for_byte() -> None:
    broken = b"def f(x):\n    return x + + = 1  # note\n"
    assert patch_key({"m.py": broken}) != patch_key({"m.py": broken.replace(b"  # note", b"")})
    for name in ("conf.cfg", "data/expected.json", "notes.txt", "schema.yaml", "m.pyi"):
        assert patch_key({name: b'{"a": 1}\n'}) != patch_key({name: b'{"a":1}\n'}), name
        assert patch_key({name: b'{"a": 1}\n'}) == patch_key({name: b'{"a": 1}\n'})


def test_patch_key_independent_of_dict_order() -> None:
    assert patch_key({"a.py": b"x = 1\n", "b.py": b"y = 2\n"}) == patch_key({"b.py": b"y = 2\n", "a.py": b"x = 1\n"})
