"""Issue 40.6: a big suite reads true — a rate with a failure left is never printed as 100.0 %, a
candidate left untested is said so once, and a search that stops says which budget stopped it."""

from __future__ import annotations

from explore.cli.live import Display
from explore.generators.mutate.search import Budget
from explore.model.candidates import CandidateResult, CandidateStatus
from explore.model.events import BaselineFinished, CandidateEvent, Merged, Phase, note_text, result_text
from explore.model.testresults import Counts, percent


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
