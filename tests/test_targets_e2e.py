"""Issue 12's target tests end to end: real git, real pytest processes, mutate or a scripted agent."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo, run_cli, write_files
from test_run_e2e import scripted_agent

CALC_OK = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
CALC_BUG = CALC_OK.replace("return a + b", "return a - b")
PROJECT = {
    "calc.py": CALC_BUG,
    "tests/test_calc.py": """\
        from calc import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_add_negative():
            assert add(-2, -3) == -5


        def test_add_zero():
            assert add(0, 0) == 0


        def test_mul():
            assert mul(2, 3) == 6
        """,
    # unrelated to the bug: fails wherever SERVICE_TOKEN is not set
    "tests/test_env.py": """\
        import os


        def test_needs_token():
            assert os.environ.get("SERVICE_TOKEN"), "SERVICE_TOKEN is not set"
        """,
}
ADD_TESTS = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]
ENV_TEST = "tests/test_env.py::test_needs_token"


def fixer(tmp_path: Path) -> list[str]:
    """A scripted agent that makes the add fix: cheaper than mutate (no coverage, no screening) where
    the point is which tests are targets, not how the fix is found."""
    agent = scripted_agent(tmp_path, {"a": {"replace": {"calc.py": ["return a - b", "return a + b"]}}})
    return ["--agent-cmd", agent, "--parallel", "1"]


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERVICE_TOKEN", raising=False)


def test_named_targets_are_repaired_and_an_unrelated_failure_is_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PROJECT)
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json", "--", *ADD_TESTS])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded"
    assert summary["targets"] == ADD_TESTS
    assert summary["preexisting_failures"] == [ENV_TEST] == summary["remaining_failures"]
    assert summary["applied"] is True and "return a + b" in (repo / "calc.py").read_text()
    assert "left alone" in summary["stop_reason"]
    report = Path(summary["report"]).read_text()
    assert "## Targets (2)" in report and f"`{ADD_TESTS[0]}` — passes" in report
    assert "## Pre-existing failures (not targets, left alone)" in report and f"`{ENV_TEST}` — still failing" in report
    assert_no_debris(repo)


def test_a_candidate_that_fixes_the_targets_but_breaks_a_third_test_is_not_merged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PROJECT)
    # candidate a fixes add (both targets) and breaks mul: +2 -1 in pass rate, still never merged
    agent = scripted_agent(
        tmp_path, {"a": {"write": {"calc.py": CALC_OK.replace("a * b", "a ** b")}, "confidence": 0.9}}
    )
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent-cmd",
            agent,
            "--parallel",
            "1",
            "--max-iterations",
            "1",
            "--tests",
            "tests/test_calc.py::test_add*",
            "--json",
        ]
    )
    assert code == 1, err
    assert summary is not None and summary["status"] == "failed" and summary["merged_commit"] is None
    assert summary["targets"] == [*ADD_TESTS, "tests/test_calc.py::test_add_zero"]
    (candidate,) = summary["iterations"][0]["candidates"]
    assert candidate["status"] == "rejected" and candidate["pass_rate"] > summary["baseline"]["pass_rate"]
    assert "outside the targets" in candidate["reason"] and "tests/test_calc.py::test_mul" in candidate["reason"]
    assert (repo / "calc.py").read_text() == CALC_BUG
    # the agent was told of the target failures only
    prompt = next((repo / ".explore" / "runs").rglob("candidate-a/prompt.md")).read_text()
    assert ADD_TESTS[0] in prompt and "test_needs_token" not in prompt
    assert_no_debris(repo)


def test_since_picks_exactly_the_tests_that_went_red_after_ref(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {**PROJECT, "calc.py": CALC_OK})
    good = git(repo, "rev-parse", "HEAD")
    # a green run (the token set) is recorded in .explore/history.jsonl: what `last-green` finds
    monkeypatch.setenv("SERVICE_TOKEN", "t")
    code, summary, err = run_cli(["run", str(repo), *fixer(tmp_path), "--json"])
    assert code == 0 and summary is not None and summary["iterations"] == [], err
    monkeypatch.delenv("SERVICE_TOKEN")
    # then the bug, and a new test that has never passed
    write_files(repo, {"calc.py": CALC_BUG, "tests/test_new.py": "def test_unfinished():\n    assert False, 'to do'\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the bug and a new test")
    for since in (good, "last-green"):
        code, summary, err = run_cli(["run", str(repo), *fixer(tmp_path), "--since", since, "--no-apply", "--json"])
        assert code == 0, err
        assert summary is not None and summary["status"] == "succeeded", summary
        # red now and green at REF: the add tests; the token test failed at REF too (no token now), the new one did not exist
        assert summary["targets"] == ADD_TESTS
        assert summary["preexisting_failures"] == [ENV_TEST, "tests/test_new.py::test_unfinished"]
        assert summary["merged_commit"] and summary["applied"] is False
        assert_no_debris(repo)


def test_since_with_nothing_red_after_ref_succeeds_without_repairing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PROJECT)
    code, summary, err = run_cli(["run", str(repo), *fixer(tmp_path), "--since", "HEAD", "--json"])
    assert code == 0, err
    assert summary is not None and summary["targets"] == [] and summary["iterations"] == []
    assert summary["preexisting_failures"] == [*ADD_TESTS, ENV_TEST]


def assert_refused(repo: Path, args: list[str], *needles: str) -> None:
    code, summary, err = run_cli(["run", str(repo), *fixer(repo.parent), "--json", *args])
    assert code == 2, err
    assert summary is not None and summary["status"] == "error" and summary["exit_code"] == 2
    assert "Traceback" not in err
    for needle in needles:
        assert needle in summary["error"], (needle, summary["error"])
    # nothing left: no run folder, no run branch
    runs = repo / ".explore" / "runs"
    assert not runs.exists() or not any(runs.iterdir())
    assert (
        subprocess.run(
            ["git", "branch", "--list", "explore/*"], cwd=repo, capture_output=True, text=True
        ).stdout.strip()
        == ""
    )
    assert_no_debris(repo)


def test_targets_that_match_nothing_unknown_refs_and_no_green_run_are_usage_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PROJECT)
    assert_refused(
        repo,
        ["--", "tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"],
        "'tests/test_calc.py::test_sub'",
        "5 tests ran",
    )
    assert_refused(repo, ["--tests", "*::test_nothing*"], "'*::test_nothing*'")
    assert_refused(repo, ["--since", "no-such-branch"], "'no-such-branch' is not a commit")
    assert_refused(repo, ["--since", "last-green"], "no green run is recorded")


def test_resume_keeps_the_targets_chosen_at_the_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", PROJECT)
    monkeypatch.setenv("EXPLORE_FAULT_AT", "saved:iterating")  # SIGKILLed right after the baseline's checkpoint
    code, _, err = run_cli(
        ["run", str(repo), *fixer(tmp_path), "--tests", "*::test_add", "--tests", "*::test_add_negative"]
    )
    assert code == -9, err
    monkeypatch.delenv("EXPLORE_FAULT_AT")
    code, summary, err = run_cli(["resume", "--path", str(repo), "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded"
    assert summary["targets"] == ADD_TESTS and summary["preexisting_failures"] == [ENV_TEST]
    assert_no_debris(repo)
