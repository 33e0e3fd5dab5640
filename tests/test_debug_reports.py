"""Debug reports by topic on the README's two-iteration demo: written per iteration, numbered on
across runs, and with --commit-reports carried by the run branch's commits."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import assert_no_debris, git, run_cli
from explore.cli.demo import create_demo
from explore.decide.scoring import RULES
from explore.model.testresults import TestOutcome
from explore.run import debug_reports


def test_reports_dir_writes_one_report_per_iteration_by_topic(tmp_path: Path) -> None:
    """The default mode (the whole suite first, as it always is for the demo): which candidates the
    winner outranks before their turn depends on when each finished generating, so the report's
    "why the winner won" is checked to name every other candidate that passed its tests or was left
    untested, with the rule the winner beat it on."""
    target = create_demo(tmp_path / "demo")
    code, summary, err = run_cli(
        ["run", "--agent", "mutate", "--strategy", "conservative", "--reports-dir", "debug", "--json"], cwd=target
    )
    assert code == 0, err
    assert len(summary["iterations"]) == 2
    reports = sorted((target / "debug").rglob("*.md"))
    assert [p.relative_to(target).as_posix() for p in reports] == [
        "debug/assertion_pricing/001_test_discount_from_ten.md",
        "debug/assertion_pricing/002_test_discount_from_ten.md",
    ]
    first, second = (p.read_text() for p in reports)
    assert "### `tests/test_pricing.py::test_line_total`" in first and "assert 254 == 1000" in first
    assert "### a — ok, 71.4%: merged" in first and "Hypothesis: arithmetic at pricing.py" in first
    won = second.split("## Why the winner won\n\n", 1)[1].split("\n", 1)[0]
    winner = summary["iterations"][1]["winner"]
    others = [c["id"] for c in summary["iterations"][1]["candidates"] if c["status"] == "ok" and c["id"] != winner]
    assert others and all(re.search(rf"\b{cid} on ({'|'.join(RULES)})\b", won) for cid in others), won
    assert "iteration 1, a (ok, 71.4%)" in second and "001_test_discount_from_ten.md" in second
    assert git(target, "status", "--porcelain") == ""  # local reports never make the tree dirty
    assert_no_debris(target)
    code, _, err = run_cli(["run", "--agent", "mutate", "--reports-dir", "debug"], cwd=target)
    assert code == 0 and not list((target / "debug").rglob("003_*.md"))  # green: no iteration, no report


def test_commit_reports_puts_them_in_the_run_branchs_commits(tmp_path: Path) -> None:
    target = create_demo(tmp_path / "demo")
    code, summary, err = run_cli(
        ["run", "--agent", "mutate", "--reports-dir", "debug", "--commit-reports", "--no-apply", "--json"], cwd=target
    )
    assert code == 0, err
    branch = summary["branch"]
    for n, iteration in enumerate(summary["iterations"], start=1):
        files = git(target, "show", "--name-only", "--format=%s", iteration["commit"]).splitlines()
        assert files[0].startswith(f"explore: iteration {n} (")
        assert f"debug/assertion_pricing/00{n}_test_discount_from_ten.md" in files and "pricing.py" in files
    assert git(target, "rev-parse", branch) == summary["iterations"][-1]["commit"] == summary["merged_commit"]
    assert not (target / "debug").exists()  # on the branch, not in your tree
    assert_no_debris(target)


def _failing(*pairs: tuple[str, str]) -> list[TestOutcome]:
    return [TestOutcome(id=i, outcome="failed", message=m) for i, m in pairs]


def test_topic_comes_from_the_failures() -> None:
    assert debug_reports.topic(_failing(("tests/test_db.py::t", "Failed: Timeout >5.0s"))) == "test_timeout"
    assert (
        debug_reports.topic(_failing(("tests/test_a.py::t", "ModuleNotFoundError: No module named 'x'")))
        == "import_errors"
    )
    assert (
        debug_reports.topic(
            _failing(
                ("tests/test_pricing.py::t", "AssertionError: assert 1 == 2"),
                ("tests/test_pricing.py::u", "assert 0 == 1"),
            )
        )
        == "assertion_pricing"
    )
    assert debug_reports.topic(_failing(("tests/test_io.py::t", "KeyError: 'x'"))) == "keyerror_io"
    assert debug_reports.topic(_failing(("tests/test_io.py::t", "exit code 2"))) == "failures_io"


def test_numbers_count_on_from_the_highest() -> None:
    assert debug_reports.next_number([]) == 1
    assert debug_reports.next_number(["001_a.md", "007_b.md", "notes.md"]) == 8


def test_the_report_labels_a_tie_with_the_rule_that_decided() -> None:
    from explore.model.candidates import CandidateResult, CandidateStatus, IterationRecord
    from explore.model.runstate import RunState
    from explore.run import reports

    def cand(cid: str, rate: float, confidence: float) -> CandidateResult:
        return CandidateResult(id=cid, status=CandidateStatus.ok, pass_rate=rate, confidence=confidence)

    record = IterationRecord(
        n=1,
        strategy="conservative",
        winner="a",
        commit="abc1234567",
        candidates=[cand("a", 100.0, 0.9), cand("b", 100.0, 0.5), cand("c", 80.0, 0.9)],
    )
    text = reports.markdown(RunState(run_id="r", repo="/x", iterations=[record]))
    assert "| a | ok | 100.0% | 0.90 |" in text and "| merged |" in text
    assert "tied, lost on confidence" in text and "did not improve the pass rate" not in text
    assert "lower pass rate than the winner" in text


def test_the_winner_outranks_the_untested_ones_as_they_would_rank_passing_every_test() -> None:
    """Whole suite first: a passed every test, b and c were not tested (a outranks them even at
    100 %), d was tested and scored less. The report says on which rule a beats each: the untested
    ones as they would rank passing every test, never by the 0.0 % no run measured."""
    from explore.model.candidates import CandidateResult, CandidateStatus, IterationRecord
    from explore.model.runstate import RunState

    why = "not tested: candidate a outranks it even if it passed every test"

    def cand(cid: str, confidence: float, rate: float = 100.0, tested: bool = True) -> CandidateResult:
        return CandidateResult(
            id=cid,
            status=CandidateStatus.ok,
            pass_rate=rate if tested else 0.0,
            confidence=confidence,
            tested=tested,
            validated=tested,
            reason=None if tested else why,
            diff_lines=2,
        )

    def why_won(*candidates: CandidateResult) -> str:
        record = IterationRecord(
            n=1, strategy="conservative", winner="a", commit="abc12345", candidates=list(candidates), pass_rate=100.0
        )
        text = debug_reports.markdown(RunState(run_id="r", repo="/x"), record, [], "assertion_calc")
        assert not re.search(r"(?<![\d.])0\.0%", text) and all(
            f"### {c.id} — ok, {why}\n" in text for c in candidates if not c.tested
        )
        assert "not tested: not tested" not in text
        return text.split("## Why the winner won\n\n", 1)[1].split("\n", 1)[0]

    a, d = cand("a", 0.9), cand("d", 0.9, 80.0)
    b, c = cand("b", 0.5, tested=False), cand("c", 0.8, tested=False)
    assert why_won(a, b, c, d).endswith(
        "Candidate a (100.0%) came first; it beat d on pass rate; it outranks b on confidence, c on confidence"
        " even had they passed every test, so they were not tested."
    )
    assert why_won(a, b).endswith(
        "Candidate a (100.0%) came first; it outranks b on confidence even had it passed every test, so it was not tested."
    )


def test_commit_reports_without_a_folder_is_bad_usage(tmp_path: Path) -> None:
    from conftest import make_repo

    repo = make_repo(tmp_path / "repo", {"tests/test_ok.py": "def test_ok():\n    assert True\n"})
    code, _, err = run_cli(["run", "--commit-reports"], cwd=repo)
    assert code == 2 and "commit-reports" in err and "reports-dir" in err, err


def test_the_report_says_how_much_of_the_run_no_phase_holds() -> None:
    """Issue 40.6: the phases of a networkx run added up to 174.5 s of its 192.0 s and the report
    left the 17.5 s for the reader to find; it now says them (fails without: '192.0s' alone)."""
    from explore.model.candidates import IterationRecord, PhaseTiming
    from explore.model.runstate import RunState
    from explore.run import reports

    timing = PhaseTiming(baseline=60.0, propose=20.5, fanout=80.0, validation=13.0, merge=1.0)
    record = IterationRecord(n=1, strategy="conservative", timing=timing)
    text = reports.markdown(RunState(run_id="r", repo="/x", iterations=[record], duration_s=192.0))
    assert "- **Duration:** 192.0s (174.5s in the phases below; 17.5s in none: the steps between phases)" in text
    assert "- **Duration:** 3.0s\n" in reports.markdown(RunState(run_id="r", repo="/x", duration_s=3.0)) + "\n"
