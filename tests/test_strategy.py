"""strategy: loading strategy files (built-in and the repo's own) and the pure selection."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import make_repo, run_cli
from explore.decide.history import Detection
from explore.decide.strategy import NAMES, Choice, Strategy, parse, select
from explore.edges.strategy_io import load_strategies
from explore.model.errors import UsageError
from test_run_e2e import CALC


@pytest.fixture(scope="module")
def builtins() -> dict:
    return load_strategies()


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# --- loading ---------------------------------------------------------------------------------


def test_builtins_present_with_their_shapes_and_triggers(builtins: dict) -> None:
    assert set(NAMES) <= set(builtins)
    assert builtins["conservative"].shape == "variations"
    assert builtins["aggressive"].shape == "batched"
    assert builtins["exploratory"].shape == "distinct"
    assert builtins["surgical"].shape == "minimal"
    assert builtins["conservative"].trigger.max_iteration == 2
    assert builtins["aggressive"].trigger.min_pass_rate == 80.0
    assert builtins["exploratory"].trigger.min_iteration == 3
    assert builtins["surgical"].trigger.regression_drop == 10.0
    assert builtins["surgical"].mutation.single_token is True
    assert builtins["exploratory"].mutation.distinct_lines is True
    for name in NAMES:
        assert builtins[name].name == name
        assert builtins[name].guidance, name
        assert builtins[name].source.endswith(f"{name}.toml")


def test_repo_dir_overrides_by_name_and_adds(tmp_path: Path) -> None:
    repo_dir = tmp_path / ".explore" / "strategies"
    override = write(
        repo_dir,
        "mine.toml",
        """\
        name = "conservative"
        description = "the team's own"
        [trigger]
        max_iteration = 5
        [prompt]
        guidance = "Be careful."
        """,
    )
    write(
        repo_dir,
        "bold.toml",
        """\
        description = "new strategy named after its file"
        [candidates]
        shape = "distinct"
        """,
    )
    found = load_strategies([repo_dir])
    assert set(NAMES) | {"bold"} == set(found)
    assert found["conservative"].description == "the team's own"
    assert found["conservative"].trigger.max_iteration == 5
    assert found["conservative"].guidance == "Be careful."
    assert found["conservative"].source == str(override)
    assert found["bold"].name == "bold"
    assert found["bold"].shape == "distinct"
    # the others are still the built-ins
    assert found["surgical"].source.endswith("surgical.toml")
    assert str(repo_dir) not in found["surgical"].source


def test_missing_extra_dir_is_ignored(tmp_path: Path, builtins: dict) -> None:
    assert set(load_strategies([tmp_path / "absent"])) == set(builtins)


@pytest.mark.parametrize(
    "text",
    [
        "name = [unclosed\n",  # not TOML
        '[trigger]\nmax_iteration = "soon"\n',  # TOML, wrong type
    ],
)
def test_invalid_strategy_file_is_a_usage_error_naming_it(tmp_path: Path, text: str) -> None:
    bad = write(tmp_path / "strategies", "broken.toml", text)
    with pytest.raises(UsageError) as caught:
        load_strategies([tmp_path / "strategies"])
    assert str(bad) in str(caught.value)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ('[trigger]\nmax_iteration = "soon"\n', ["trigger.max_iteration", "valid integer", "'soon'"]),
        ("[trigger]\nmax_iteraton = 5\n", ["trigger.max_iteraton", "unknown key", "[trigger] allows max_iteration,"]),
        ('nmae = "x"\n', ["nmae: unknown key", "a strategy file allows name, description, trigger"]),
        ('[candidates]\nshape = "batchd"\n', ["candidates.shape", "'variations'", "'batchd'"]),
        ('[tests]\nmode = "sometimes"\n', ["tests.mode", "'affected-then-full'", "'full'", "'sometimes'"]),
        ('candidates = "batched"\n', ["candidates:", "'batched'"]),
        ('[prompt]\nguidance = 3\n[mutation]\nmax_edits = "two"\n', ["prompt.guidance", "mutation.max_edits"]),
        ("name = [unclosed\n", ["not TOML", "line 1"]),
    ],
    ids=[
        "wrong-type",
        "unknown-key",
        "unknown-top-level-key",
        "unknown-shape",
        "unknown-mode",
        "table-as-value",
        "two-fields",
        "not-toml",
    ],
)
def test_a_bad_strategy_file_names_the_file_and_the_field(tmp_path: Path, text: str, needles: list[str]) -> None:
    bad = write(tmp_path / "strategies", "broken.toml", text)
    with pytest.raises(UsageError) as caught:
        load_strategies([tmp_path / "strategies"])
    message = str(caught.value)
    assert message.startswith(f"invalid strategy file {bad}: ") and "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)


def test_the_parsed_tables_are_typed(builtins: dict) -> None:
    surgical, conservative = builtins["surgical"], builtins["conservative"]
    assert surgical.tests.mode == "full" and not surgical.progressive
    assert conservative.tests.mode == "auto" and conservative.progressive
    assert parse("", "inline", "plain") == Strategy(name="plain", source="inline")  # every table defaulted
    assert parse('[prompt]\ntemplate = "T"\n', "x", "y").template == "T"


def test_explore_run_refuses_a_bad_repo_strategy_file_in_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    bad = write(repo / ".explore" / "strategies", "bold.toml", '[candidates]\nshape = "bold"\n')
    code, _, err = run_cli(["run", str(repo), "--agent", "mutate"])
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(bad) in lines[0] and "candidates.shape" in lines[0] and "'bold'" in lines[0]
    assert not (repo / ".explore" / "runs").exists()


# --- select ----------------------------------------------------------------------------------

QUIET = Detection()


@pytest.mark.parametrize("iteration", [1, 2])
def test_first_iterations_are_conservative(builtins: dict, iteration: int) -> None:
    similar = Detection(similarity=0.95)
    choice = select(builtins, iteration, 95.0, similar)
    assert choice.name == "conservative"
    assert choice.reason


def test_high_pass_rate_with_similar_failures_is_aggressive_from_iteration_3(builtins: dict) -> None:
    similar = Detection(similarity=0.9)
    assert select(builtins, 3, 85.0, similar).name == "aggressive"
    # not when the failures differ, not at or below 80%
    assert select(builtins, 3, 85.0, Detection(similarity=0.2)).name == "conservative"
    assert select(builtins, 3, 80.0, similar).name == "conservative"
    assert select(builtins, 3, 50.0, similar).name == "conservative"


def test_stuck_from_iteration_3_is_exploratory(builtins: dict) -> None:
    stuck = Detection(stuck=["tests/test_a.py::test_x"], similarity=0.9)
    assert select(builtins, 2, 50.0, stuck).name == "conservative"
    choice = select(builtins, 3, 50.0, stuck)
    assert choice.name == "exploratory"
    assert "tests/test_a.py::test_x" in choice.reason
    # stuck wins over aggressive
    assert select(builtins, 4, 95.0, stuck).name == "exploratory"


def test_regression_is_surgical_whatever_else_holds(builtins: dict) -> None:
    regressed = Detection(regression=True, regression_drop=25.0, stuck=["t::a"], similarity=0.9)
    for iteration in (1, 2, 3, 7):
        choice = select(builtins, iteration, 90.0, regressed)
        assert choice.name == "surgical"
        assert "25.0" in choice.reason


def test_forced_strategy_overrides_every_trigger(builtins: dict) -> None:
    regressed = Detection(regression=True, regression_drop=25.0, stuck=["t::a"])
    for name in NAMES:
        choice = select(builtins, 5, 90.0, regressed, forced=name)
        assert choice == Choice(name, choice.reason)
        assert choice.reason
    assert select(builtins, 5, 90.0, regressed, forced="auto").name == "surgical"


def test_no_trigger_falls_back_to_conservative_with_a_reason(builtins: dict) -> None:
    choice = select(builtins, 6, 40.0, QUIET)
    assert choice.name == "conservative"
    assert choice.reason


def test_thresholds_come_from_the_strategy_files(tmp_path: Path) -> None:
    folder = tmp_path / "strategies"
    write(folder, "conservative.toml", "[trigger]\nmax_iteration = 4\n")
    write(folder, "aggressive.toml", "[trigger]\nmin_pass_rate = 50.0\nmin_similarity = 0.3\n")
    write(folder, "exploratory.toml", "[trigger]\nmin_iteration = 6\n")
    found = load_strategies([folder])
    assert select(found, 4, 95.0, Detection(similarity=0.9)).name == "conservative"
    assert select(found, 5, 60.0, Detection(similarity=0.4)).name == "aggressive"
    assert select(found, 5, 40.0, Detection(stuck=["t::a"])).name == "conservative"
    assert select(found, 6, 40.0, Detection(stuck=["t::a"])).name == "exploratory"


def test_surgical_regression_threshold_comes_from_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "strategies"
    write(folder, "surgical.toml", "[trigger]\nregression_drop = 5.0\n")
    found = load_strategies([folder])
    dropped_six = Detection(regression=False, regression_drop=6.0)  # what history.detect gives by default
    assert select(found, 4, 70.0, dropped_six).name == "surgical"


# --- the switches auto makes (issue 17) --------------------------------------------------------


def test_failures_at_distinct_locations_are_aggressive_from_iteration_1(builtins: dict) -> None:
    spread = Detection(locations=["call:available", "call:order_total"])
    for iteration in (1, 2, 5):
        choice = select(builtins, iteration, 40.0, spread)
        assert choice.name == "aggressive"
        assert "2 distinct locations" in choice.reason
    # one location (one cause, however many tests) stays conservative
    assert select(builtins, 1, 40.0, Detection(locations=["call:windows"])).name == "conservative"
    # stuck and regression still come first
    assert select(builtins, 3, 40.0, Detection(locations=spread.locations, stuck=["t::a"])).name == "exploratory"
    assert select(builtins, 1, 40.0, Detection(locations=spread.locations, regression_drop=30.0)).name == "surgical"


def test_tests_stuck_since_an_earlier_run_are_exploratory_from_iteration_1(builtins: dict) -> None:
    carried = Detection(stuck=["t::a"], carried=["t::a"])
    for iteration in (1, 2):
        choice = select(builtins, iteration, 40.0, carried)
        assert choice.name == "exploratory"
        assert "earlier run" in choice.reason
    # stuck within this run only: not before iteration 3
    assert select(builtins, 1, 40.0, Detection(stuck=["t::a"])).name == "conservative"


def test_min_locations_comes_from_the_aggressive_file(tmp_path: Path) -> None:
    folder = tmp_path / "strategies"
    write(folder, "aggressive.toml", "[trigger]\nmin_locations = 3\n")
    found = load_strategies([folder])
    assert select(found, 1, 40.0, Detection(locations=["a", "b"])).name == "conservative"
    assert select(found, 1, 40.0, Detection(locations=["a", "b", "c"])).name == "aggressive"
    write(folder, "aggressive.toml", "[trigger]\nmin_pass_rate = 80.0\n")  # no min_locations: the rule is off
    assert select(load_strategies([folder]), 1, 40.0, Detection(locations=["a", "b", "c"])).name == "conservative"
