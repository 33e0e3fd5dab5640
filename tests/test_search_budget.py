"""Giving up in proportion (issue 27.4), end to end: real git repositories, real explore processes,
mutate. A failure no mutant can fix ends within the default search budget and says so; a tiny
budget set in `[tool.explore]` stops a search that could go on, and says how to spend more."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_no_debris, make_repo, run_cli

GREET = {
    "greet.py": """\
        def greet():
            return "hello"
        """,
    "tests/test_greet.py": """\
        from greet import greet


        def test_greet():
            assert greet() == "Hello, world!"


        def test_arithmetic():
            assert 1 + 1 == 2
        """,
}

STEPS = "\n".join(f"    v = v * {k % 7 + 2} + {k} - (v // {k + 3})" for k in range(40))
LABEL = {
    # 40 lines of arithmetic that the failing test runs and no mutation can turn into the label it wants
    "label.py": f"def label(n):\n    v = n\n{STEPS}\n    return 'value ' + str(v)\n",
    "tests/test_label.py": """\
        from label import label


        def test_label():
            assert label(3) == "Label: 3"


        def test_label_is_text():
            assert isinstance(label(1), str)
        """,
}


def test_a_failure_no_mutant_can_fix_ends_within_the_default_budget_and_says_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", GREET)
    code, summary, err = run_cli(["run", str(root), "--agent", "mutate", "--json"])
    assert summary is not None, err
    assert code == 1 and summary["status"] == "failed" and summary["exit_code"] == 1
    gave = summary["gave_up"]
    assert gave is not None, summary["stop_reason"]
    # the default: 10x the suite's time as this run measured it, at least 30 s
    assert gave["budget"] == "10x" and gave["budget_s"] == pytest.approx(max(30.0, 10 * gave["suite_s"]), abs=0.01)
    assert gave["search_s"] <= gave["budget_s"]  # within the default budget
    # mutate searched everything once: it stops at once instead of asking the same again
    assert gave["why"] == "search_complete" and len(summary["iterations"]) == 1
    assert summary["iterations"][0]["search_complete"] is True
    assert "search complete" in summary["iterations"][0]["generator_note"]
    assert gave["iterations"] == 1 and gave["strategies"] == ["conservative"] and gave["mutants_screened"] >= 1
    reason = summary["stop_reason"]
    assert reason.startswith("gave up: mutate's search is complete on this commit and found no repair")
    assert "Tried: 1 iteration (conservative), 0 candidates" in reason and "--agent anthropic" in reason
    assert "gave up: mutate's search is complete" in err  # the live view's last line says it too
    report = Path(summary["report"]).read_text()
    assert "## Gave up" in report and "What was tried: 1 iteration (conservative)" in report
    assert "To spend more:\n- a generator that reads the code" in report
    assert summary["remaining_failures"] == ["tests/test_greet.py::test_greet"]
    assert_no_debris(root)


def test_a_tiny_search_budget_stops_the_search_and_says_how_to_spend_more(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", LABEL, explore_config='search-budget = "1s"\n')
    code, summary, err = run_cli(["run", str(root), "--agent", "mutate", "--json"])
    assert summary is not None, err
    assert code == 1 and summary["status"] == "failed"
    gave = summary["gave_up"]
    assert gave is not None, summary["stop_reason"]
    assert gave["why"] == "search_budget" and gave["budget"] == "1s" and gave["budget_s"] == 1.0
    assert gave["search_s"] >= 1.0
    assert len(summary["iterations"]) == 1  # the first iteration always runs; none starts past the budget
    assert "budget spent: the run's search budget" in summary["iterations"][0]["generator_note"]  # which one
    assert gave["spend_more"][:2] == ["explore run --search-budget 3s", 'search-budget = "3s" in [tool.explore]']
    reason = summary["stop_reason"]
    assert reason.startswith("gave up: no repair in sight after ")
    assert (
        "(the search budget: 1s; --search-budget)" in reason
        and "To spend more: explore run --search-budget 3s" in reason
    )
    report = Path(summary["report"]).read_text()
    assert "## Gave up" in report and "over the search budget of 1s" in report
    assert "- explore run --search-budget 3s" in report
    assert_no_debris(root)


def test_a_bad_search_budget_flag_is_refused_naming_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", GREET)
    code, summary, err = run_cli(["run", str(root), "--search-budget", "lots", "--json"])
    assert code == 2 and summary is not None and summary["exit_code"] == 2
    assert summary["error"].startswith("--search-budget lots: 'lots' is not a search budget")
    assert "10x" in summary["error"] and "90s" in summary["error"]
    assert not (root / ".explore" / "runs").exists()  # refused before anything was written
