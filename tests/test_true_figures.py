"""Issue 40.6: a big suite reads true — a rate with a failure left is never printed as 100.0 %, a
candidate left untested is said so once, and a search that stops says which budget stopped it."""

from __future__ import annotations

from explore.cli.live import Display
from explore.decide import stop, suite_time
from explore.edges.testing import derived_test_timeout
from explore.generators.mutate.search import Budget
from explore.model.candidates import CandidateResult, CandidateStatus
from explore.model.events import BaselineFinished, CandidateEvent, Merged, Phase, note_text, result_text
from explore.model.testresults import Counts, TestOutcome, TestRun, percent


def test_a_rate_with_a_failure_left_is_never_printed_as_100_percent() -> None:
    """networkx: "2455/2456 passed (100.0%)" and "100.0% → 100.0%" for a run that fixed one failure."""
    nearly = 100.0 * 2455 / 2456
    assert percent(nearly) == "99.9%" and percent(100.0) == "100.0%" and percent(87.25) == "87.2%"
    assert percent(100.0 * 1 / 3000) == "0.1%" and percent(0.0) == "0.0%"
    counts = Counts(passed=2455, failed=1, total=2456, pass_rate=nearly)
    assert note_text(BaselineFinished(counts=counts)) == "baseline: 2455/2456 passed (99.9%)"
    assert note_text(Merged(candidate="a", before=100.0 * 2454 / 2456, after=100.0, commit="0123456789abc")) == (
        "merged candidate a: 99.9% → 100.0% (0123456789)"
    )
    result = CandidateResult(id="a", status=CandidateStatus.ok, pass_rate=nearly, tested=True)
    assert result_text(result) == "ok 99.9%"


def test_an_untested_candidate_is_said_once(capsys) -> None:
    """Its turn refused ("not tested: …"), then finished with the same words: one line."""
    why = "not tested: candidate a outranks it even if it passed every test"
    untested = CandidateResult(id="b", status=CandidateStatus.ok, tested=False, reason=why, progress=why)
    display = Display("lines")
    display.candidates(["a", "b"])
    display.candidate(CandidateEvent("b", Phase.not_tested, "candidate a outranks it even if it passed every test"))
    display.candidate(CandidateEvent("b", Phase.finished, result=untested))
    display.candidates(["a", "b"])  # the next iteration's b may say it again
    display.candidate(CandidateEvent("b", Phase.not_tested, "candidate a outranks it even if it passed every test"))
    err = capsys.readouterr().err
    assert err.count("[b] not tested: candidate a outranks it") == 2, err


def test_a_spent_budget_says_which() -> None:
    assert Budget(mutants=5, seconds=60.0, screened=5).spent() == "budget spent: 5 mutants (mutate's budget_mutants)"
    assert Budget(mutants=600, seconds=0.0).spent() == "budget spent: 0s of screening (mutate's budget_seconds)"
    assert Budget(mutants=600, seconds=2.0, by_run=True).spent() == (
        "budget spent: the run's search budget (--search-budget)"
    )


def _timed_run(factor: float, only: int | None = None) -> TestRun:
    """Three passing tests and a failing one, their seconds times factor (a tracer's slowdown)."""
    plain = {
        "t.py::a": ("passed", 4.0),
        "t.py::b": ("passed", 1.0),
        "t.py::c": ("passed", 0.5),
        "t.py::d": ("failed", 2.0),
    }
    picked = list(plain.items())[: only or len(plain)]
    return TestRun(
        outcomes={i: TestOutcome(id=i, outcome=o, duration_s=s * factor) for i, (o, s) in picked}  # type: ignore[arg-type]
    )


def test_budget_and_limit_after_a_coverage_baseline_equal_a_plain_ones() -> None:
    """networkx: "10x the suite's 114.0s" for a 60.6 s suite and a per-test limit of 43-103 s after
    mutate's baseline (coverage.py's tracer) against 10-20 s after a plain one. The first plain whole
    run of the suite times it from then on; a candidate's affected tests do not."""
    plain, traced = _timed_run(1.0), _timed_run(2.6)
    ids = sorted(plain.outcomes)
    budget = stop.budget_for(None, suite_bound=True)
    assert budget is not None

    def figures(timed: suite_time.SuiteTime) -> tuple[float, float]:
        return stop.budget_seconds(budget, stop.suite_seconds(timed.test_s, 0.5)), derived_test_timeout(timed.run)

    after_plain = figures(suite_time.SuiteTime(plain, traced=False))
    baseline = suite_time.SuiteTime(traced, traced=True)
    assert figures(baseline) != after_plain  # what the run said before (200 s and 52 s, not 80 s and 20 s)
    affected = _timed_run(1.0, only=2)  # the ranked candidate ran only its affected tests
    assert suite_time.settled(baseline, [affected], ids) is None
    runs = suite_time.plain_runs({"a": affected, "b": plain, "c": plain}, ranking=["a"])
    assert runs == [affected, plain]  # the ranked first; a twin's run once
    timed = suite_time.settled(baseline, runs, ids)
    assert timed is not None and not timed.traced and figures(timed) == after_plain == (80.0, 20.0)
    assert suite_time.settled(timed, [traced], ids) is None  # plain once: stays so
