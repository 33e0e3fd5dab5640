"""config: defaults < [tool.explore] in pyproject.toml < flags; errors are UsageErrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from explore.model import config
from explore.model.config import DEFAULT_TEST_PATTERNS, Options, build_options, read_repo_config
from explore.model.errors import UsageError

ALL_FLAGS_UNSET = {
    "parallel": None,
    "max_iterations": None,
    "strategy": None,
    "agent": None,
    "test_cmd": None,
    "branch_timeout": None,
    "target_pass_rate": None,
    "no_apply": None,
}


@pytest.fixture(autouse=True)
def _no_sandbox_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXPLORE_SANDBOX")  # conftest sets it for the e2e tests: the defaults are checked here


def test_sandbox_mode_from_pyproject_then_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyproject(tmp_path, '[tool.explore]\nsandbox = "require"\nsandbox-writable = ["~/.claude"]\n')
    options = build_options(tmp_path, {})
    assert options.sandbox == "require" and options.sandbox_writable == ["~/.claude"]
    monkeypatch.setenv("EXPLORE_SANDBOX", "OFF")
    assert build_options(tmp_path, {}).sandbox == "off"
    monkeypatch.setenv("EXPLORE_SANDBOX", "sometimes")
    with pytest.raises(UsageError, match="sandbox"):
        build_options(tmp_path, {})


def pyproject(root: Path, body: str) -> Path:
    path = root / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    options = build_options(tmp_path, ALL_FLAGS_UNSET)
    assert options == Options()
    assert options.parallel == 3
    assert options.max_iterations == 10
    assert options.strategy == "auto"
    assert options.agent == "auto"
    assert options.test_cmd is None
    assert options.branch_timeout == 600.0
    assert options.target_pass_rate == 100.0
    assert options.no_apply is False
    assert options.allow_test_edits is False
    assert options.no_progress_limit == 3
    assert options.test_patterns == DEFAULT_TEST_PATTERNS
    assert options.test_patterns is not DEFAULT_TEST_PATTERNS  # a copy, not the shared list


def test_pyproject_without_tool_explore(tmp_path: Path) -> None:
    pyproject(tmp_path, "[project]\nname = 'x'\n")
    assert read_repo_config(tmp_path) == {}
    assert build_options(tmp_path, {}) == Options()


def test_tool_explore_with_dashes_or_underscores(tmp_path: Path) -> None:
    pyproject(
        tmp_path,
        """\
[tool.explore]
max-iterations = 4
branch_timeout = 30
target-pass-rate = 90.5
test_cmd = "make test"
no-apply = true
strategies-dir = "ops/strategies"
test-patterns = ["spec/**"]
strategy = "  Surgical "

[tool.explore.mutate]
max-mutants = 5
""",
    )
    options = build_options(tmp_path, {})
    assert options.max_iterations == 4
    assert options.branch_timeout == 30.0
    assert options.target_pass_rate == 90.5
    assert options.test_cmd == "make test"
    assert options.no_apply is True
    assert options.strategies_dir == "ops/strategies"
    assert options.test_patterns == ["spec/**"]
    assert options.strategy == "surgical"
    assert options.mutate == {"max-mutants": 5}
    assert options.parallel == 3  # untouched keys keep their defaults


def test_flags_win_over_the_file_and_none_means_not_given(tmp_path: Path) -> None:
    pyproject(tmp_path, "[tool.explore]\nparallel = 2\nmax-iterations = 7\nagent = 'mutate'\n")
    options = build_options(tmp_path, {**ALL_FLAGS_UNSET, "parallel": 5, "agent": "command", "agent_cmd": "aider"})
    assert options.parallel == 5
    assert options.agent == "command"
    assert options.agent_cmd == "aider"
    assert options.max_iterations == 7  # flag not given: the file's value


def test_unknown_key_names_it_and_lists_allowed_keys(tmp_path: Path) -> None:
    path = pyproject(tmp_path, "[tool.explore]\nparalel = 2\n")
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {})
    message = str(caught.value)
    assert "paralel" in message
    assert str(path) in message
    for allowed in ("parallel", "max-iterations", "target-pass-rate", "test-cmd", "allow-test-edits"):
        assert allowed in message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("parallel = 0", "parallel"),
        ("parallel = -3", "parallel"),
        ("target-pass-rate = 150", "target-pass-rate"),
        ("target_pass_rate = -1", "target_pass_rate = -1"),  # named as written
        ("max-iterations = 0", "max-iterations"),
        ("branch-timeout = 0", "branch-timeout"),
        ("parallel = 'many'", "parallel"),
        ("no-progress-limit = 0", "no-progress-limit"),
    ],
)
def test_invalid_value_names_the_key(tmp_path: Path, body: str, key: str) -> None:
    pyproject(tmp_path, f"[tool.explore]\n{body}\n")
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {})
    assert key in str(caught.value)
    assert caught.value.exit_code == 2


def test_a_config_error_names_the_file_the_key_and_the_value(tmp_path: Path) -> None:
    pyproject(tmp_path, '[tool.explore]\nparallel = "three"\n')
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {})
    assert str(caught.value).startswith(f"parallel = 'three' in [tool.explore] of {tmp_path / 'pyproject.toml'}: ")
    with pytest.raises(UsageError) as flag:
        build_options(tmp_path, {"parallel": 0})  # the flag wins and is named as a flag
    assert str(flag.value) == "--parallel 0: must be at least 1"


def test_invalid_flag_value_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="parallel"):
        build_options(tmp_path, {"parallel": 0})
    with pytest.raises(UsageError, match="target-pass-rate"):
        build_options(tmp_path, {"target_pass_rate": 100.5})


def test_large_parallel_is_kept_for_the_cli_to_cap(tmp_path: Path) -> None:
    """The issue asks to cap an absurd --parallel and say so (the CLI does: test_bad_input)."""
    assert build_options(tmp_path, {"parallel": config.MAX_PARALLEL + 1}).parallel == config.MAX_PARALLEL + 1


@pytest.mark.parametrize(
    "body",
    ["[tool.explore\nparallel = 2\n", "[tool.explore]\nparallel = \n", "[tool.explore]\nparallel = 2\nparallel = 3\n"],
)
def test_broken_toml_is_a_usage_error(tmp_path: Path, body: str) -> None:
    path = pyproject(tmp_path, body)
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {})
    assert str(path) in str(caught.value)


def test_tool_explore_not_a_table(tmp_path: Path) -> None:
    pyproject(tmp_path, "[tool]\nexplore = 3\n")
    with pytest.raises(UsageError, match="must be a table"):
        build_options(tmp_path, {})


def test_tool_not_a_table_is_a_usage_error(tmp_path: Path) -> None:
    pyproject(tmp_path, "tool = 3\n")
    with pytest.raises(UsageError):
        build_options(tmp_path, {})


def test_unknown_dashed_key_is_named_as_written(tmp_path: Path) -> None:
    pyproject(tmp_path, "[tool.explore]\nmax-iteration = 4\n")
    with pytest.raises(UsageError) as caught:
        build_options(tmp_path, {})
    assert "'max-iteration'" in str(caught.value)
