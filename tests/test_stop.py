"""Giving up in proportion (decide/stop.py, issue 27.4): the search budget's formula, its clock, the
exhausted-search rule, what the run says, and how `search-budget` is read and refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from explore.decide import stop
from explore.model.candidates import CandidateResult, CandidateStatus, IterationRecord
from explore.model.config import Options, build_options, parse_search_budget
from explore.model.errors import UsageError
from explore.model.runstate import RunState
from explore.model.usage import MutateUsage, Usage


def test_the_default_budget_is_ten_times_the_suite_with_a_30s_floor() -> None:
    assert Options().search_budget is None and Options().search_budget_spec() is None  # unset
    default = stop.budget_for(None, suite_bound=True)  # mutate: its search grows with the suite
    assert default is not None and default.text == "10x" and default.factor == 10 and default.seconds is None
    assert stop.budget_seconds(default, 1.4) == 30.0  # a fast suite still gets a real search
    assert stop.budget_seconds(default, 0.0) == 30.0  # nothing measured
    assert stop.budget_seconds(default, 3.0) == 30.0
    assert stop.budget_seconds(default, 7.0) == 70.0
    assert stop.budget_seconds(default, 20.0) == 200.0  # the 782 s case: 200 s
    assert stop.budget_seconds(parse_search_budget("2.5x"), 100.0) == 250.0
    assert stop.budget_seconds(parse_search_budget("1x"), 1.0) == 30.0  # the floor holds for any factor


def test_a_model_driven_generator_has_a_search_budget_only_when_one_is_set() -> None:
    assert stop.budget_for(None, suite_bound=False) is None  # its time is the model's, not the suite's
    set_ = parse_search_budget("20m")
    assert stop.budget_for(set_, suite_bound=False) == set_ and stop.budget_for(set_, suite_bound=True) == set_


def test_a_duration_is_taken_as_it_is() -> None:
    assert stop.budget_seconds(parse_search_budget("90s"), 500.0) == 90.0
    assert stop.budget_seconds(parse_search_budget("5m"), 0.1) == 300.0
    assert stop.budget_seconds(parse_search_budget("1h"), 0.1) == 3600.0
    assert stop.budget_seconds(parse_search_budget("2s"), 0.1) == 2.0  # no floor: the user said so


def test_the_suite_time_sums_the_tests_and_one_start_up() -> None:
    assert stop.suite_seconds(4.0, 0.6) == pytest.approx(4.6)  # 3 shards of ~1.3 s each still count 4 s
    assert stop.suite_seconds(-1.0, -1.0) == 0.0


@pytest.mark.parametrize(
    ("text", "written"),
    [("10x", "10x"), (" 30X ", "30x"), ("2.5x", "2.5x"), ("10×", "10x"), ("90s", "90s"), ("5m", "5m"), (".5h", "0.5h")],
)
def test_search_budget_is_read_and_written_back_plainly(text: str, written: str) -> None:
    assert parse_search_budget(text).text == written
    assert Options(search_budget=text).search_budget == written


@pytest.mark.parametrize("text", ["", "10", "x", "ten x", "10 minutes", "-5s", "10xs", "1d"])
def test_a_bad_search_budget_says_what_to_write(text: str) -> None:
    with pytest.raises(ValueError, match=r"10x.*90s"):
        parse_search_budget(text)


def test_a_zero_search_budget_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {"search_budget": "0x"})
    assert str(caught.value).startswith("--search-budget 0x: must be more than 0")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('search-budget = "forever"', "search-budget = 'forever' in [tool.explore]"),
        ("search-budget = 30", "search-budget = 30 in [tool.explore]"),
    ],
)
def test_a_bad_search_budget_in_pyproject_names_the_key_and_the_fix(tmp_path: Path, body: str, expected: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.explore]\n{body}\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {})
    message = str(caught.value)
    assert message.startswith(expected) and caught.value.exit_code == 2
    assert "30x" in message or "10x" in message  # says what to write instead


def test_search_budget_from_pyproject_and_the_flag_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.explore]\nsearch-budget = "20x"\n', encoding="utf-8")
    assert build_options(tmp_path, {}).search_budget == "20x"
    assert build_options(tmp_path, {"search_budget": "2m"}).search_budget == "2m"


def test_the_clock_runs_from_its_start_and_restarts_at_a_merge() -> None:
    clock = stop.SearchClock(parse_search_budget("10x"), suite_s=6.1, started=100.0)
    assert clock.budget_s == pytest.approx(61.0) and clock.deadline() == pytest.approx(161.0)
    assert not clock.over(160.9) and clock.over(161.0)
    assert clock.spent(90.0) == 0.0
    clock.exhausted_on = stop.SearchInputs("c1", "conservative", frozenset({"t"}))
    clock.restart(150.0)  # a merged improvement
    assert not clock.over(161.0) and clock.over(211.0)
    assert clock.exhausted_on is None  # a new commit: the old exhausted search says nothing
    assert clock.describe() == "61s (10x the suite's 6.1s)"
    assert (
        stop.SearchClock(parse_search_budget("10x"), 1.2, 0.0).describe() == "30s (10x the suite's 1.2s, at least 30s)"
    )
    assert stop.SearchClock(parse_search_budget("90s"), 1.2, 0.0).describe() == "90s"


def test_nothing_left_only_when_the_next_search_asks_the_same() -> None:
    clock = stop.SearchClock(parse_search_budget("10x"), 1.0, 0.0)
    same = stop.SearchInputs("c1", "conservative", frozenset({"t1", "t2"}))
    assert not clock.nothing_left(same)  # no complete search yet
    clock.exhausted_on = same
    assert clock.nothing_left(stop.SearchInputs("c1", "conservative", frozenset({"t2", "t1"})))
    assert not clock.nothing_left(stop.SearchInputs("c2", "conservative", frozenset({"t1", "t2"})))  # other commit
    assert not clock.nothing_left(stop.SearchInputs("c1", "exploratory", frozenset({"t1", "t2"})))  # other strategy
    assert not clock.nothing_left(stop.SearchInputs("c1", "conservative", frozenset({"t1"})))  # one set aside


def test_more_is_three_times_the_budget_that_ran_out() -> None:
    assert stop.more(parse_search_budget("10x")) == "30x"
    assert stop.more(parse_search_budget("2.5x")) == "7.5x"
    assert stop.more(parse_search_budget("90s")) == "270s"
    assert stop.more(parse_search_budget("5m")) == "900s"


def _run() -> RunState:
    candidate = CandidateResult(id="a", status=CandidateStatus.ok)
    run = RunState(run_id="r1", repo="/repo")
    run.iterations = [
        IterationRecord(n=1, strategy="conservative", candidates=[candidate, candidate.model_copy(update={"id": "b"})]),
        IterationRecord(n=2, strategy="conservative"),
        IterationRecord(n=3, strategy="exploratory", candidates=[candidate]),
    ]
    run.usage = Usage(mutate=MutateUsage(mutants_screened=412))
    return run


def test_over_budget_says_what_was_tried_and_how_to_spend_more() -> None:
    clock = stop.SearchClock(parse_search_budget("10x"), suite_s=6.1, started=0.0)
    gave = stop.account("search_budget", clock, 61.4, _run(), "mutate")
    assert (gave.iterations, gave.candidates, gave.mutants_screened) == (3, 3, 412)
    assert gave.strategies == ["conservative", "conservative", "exploratory"]
    assert (gave.search_s, gave.budget_s, gave.budget, gave.suite_s) == (61.4, 61.0, "10x", 6.1)
    assert gave.spend_more[:2] == ["explore run --search-budget 30x", 'search-budget = "30x" in [tool.explore]']
    assert "--agent anthropic" in gave.spend_more[2]
    text = stop.reason(gave, clock, "mutate")
    assert text == (
        "gave up: no repair in sight after 61s of search (the search budget: 61s (10x the suite's 6.1s); "
        "--search-budget). Tried: 3 iterations (conservative, conservative, exploratory), 3 candidates, "
        "412 mutants screened. To spend more: explore run --search-budget 30x; or "
        'search-budget = "30x" in [tool.explore]; or a generator that reads the code: '
        "--agent anthropic (ANTHROPIC_API_KEY) or --agent claude-code"
    )


def test_a_complete_search_does_not_ask_for_more_time() -> None:
    clock = stop.SearchClock(parse_search_budget("10x"), suite_s=0.3, started=0.0)
    run = _run()
    run.iterations = run.iterations[:1]
    gave = stop.account("search_complete", clock, 4.0, run, "mutate")
    assert not any("--search-budget" in way for way in gave.spend_more)  # time would not help
    text = stop.reason(gave, clock, "mutate")
    assert text.startswith("gave up: mutate's search is complete on this commit and found no repair")
    assert "Tried: 1 iteration (conservative), 2 candidates, 412 mutants screened." in text
    other = stop.account("search_complete", clock, 4.0, run, "my-agent")
    assert other.spend_more and "another generator" in other.spend_more[0]
    assert "--search-budget 30x" in stop.account("search_budget", clock, 31.0, run, "my-agent").spend_more[0]
