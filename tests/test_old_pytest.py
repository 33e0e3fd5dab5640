"""Issue 30: a project that pins an old pytest (4.6) is repaired as any other. explore's plugin
and mutate's worker run in the project's interpreter and adapt to the pytest they find (hook
argument names, config attributes, options pytest 4.6 does not know). The venv is real: built
by the test from the oldest Python on the machine that pytest 4.6.11 runs on, pytest from the
package index."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import assert_no_debris, built_once, make_repo, run_cli, venv_of
from explore.edges.testing import TestCommand, run_tests

OLD_PYTEST = "pytest==4.6.11"
PYTHONS = ("3.8", "3.9", "3.7")
"""pytest 4.6 imports on these; not on 3.10 and later (its assertion rewriting predates them)."""


@pytest.fixture(scope="module")
def old_pytest(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The python of a fresh venv holding pytest 4.6 (and nothing else: no json report, no coverage)."""
    python = built_once("pytest46", tmp_path_factory, lambda folder: venv_of(PYTHONS, (OLD_PYTEST,), folder))
    version = subprocess.run([python, "-m", "pytest", "--version"], capture_output=True, text=True, timeout=60)
    assert "4.6.11" in version.stdout + version.stderr
    return python


CALC = {
    "calc.py": "def half(x):\n    return x * 2\n\n\ndef double(x):\n    return x + x\n",
    "tests/test_calc.py": "from calc import double, half\n\n\ndef test_half():\n    assert half(8) == 4\n\n\ndef test_double():\n    assert double(3) == 6\n",
    "tests/test_more.py": "from calc import double\n\n\ndef test_double_zero():\n    assert double(0) == 0\n",
}


def test_a_project_on_pytest_4_6_is_repaired_by_mutate(tmp_path: Path, old_pytest: str) -> None:
    """Acceptance: exit 0. Before, every run escalated `infrastructure` within seconds (the plugin's
    `collection_path` hook argument is unknown to pytest < 7)."""
    repo = make_repo(tmp_path / "repo", CALC, python=old_pytest)
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded" and summary["final"]["pass_rate"] == 100.0
    assert "x * 2" not in (repo / "calc.py").read_text()
    assert_no_debris(repo)


@pytest.mark.anyio
async def test_shards_and_limits_work_on_pytest_4_6(tmp_path: Path, old_pytest: str) -> None:
    """The plugin's other features on 4.6: a shard's `--explore-only`, the soft limit and the watchdog."""
    repo = make_repo(
        tmp_path / "repo",
        {
            **CALC,
            "tests/test_hang.py": (
                "import signal\n\n\ndef test_loop():\n    while True:\n        pass\n\n\n"
                "def test_deaf():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n"
            ),
        },
        python=old_pytest,
    )
    command = TestCommand(python=old_pytest, json_report=False, test_timeout=1.0)
    shard = await run_tests(command, repo, tmp_path / "shard.log", only=["tests/test_more.py"])
    assert shard.infra_error is None and sorted(shard.outcomes) == ["tests/test_more.py::test_double_zero"]
    run = await run_tests(command, repo, tmp_path / "run.log")
    assert run.infra_error is None
    assert {i: o.outcome for i, o in run.outcomes.items()} == {
        "tests/test_calc.py::test_half": "failed",
        "tests/test_calc.py::test_double": "passed",
        "tests/test_more.py::test_double_zero": "passed",
        "tests/test_hang.py::test_loop": "timeout",
        "tests/test_hang.py::test_deaf": "timeout",
    }
    assert "in test_deaf" in run.outcomes["tests/test_hang.py::test_deaf"].longrepr


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_python_flag_wins_over_the_config_and_a_relative_path_is_the_repositorys(
    tmp_path: Path, old_pytest: str
) -> None:
    """`--python PATH` beside `[tool.explore] python` (issue 30: "No such option"); a relative
    configured path names the repository's own interpreter (`.venv/bin/python`), wherever explore
    is started from: the tests then run in worktrees elsewhere."""
    repo = make_repo(tmp_path / "repo", {**CALC, ".gitignore": "__pycache__/\n.venv/\n"}, python=".venv/bin/python")
    code, _, err = run_cli(
        ["run", str(repo), "--agent", "mutate", "--python", old_pytest, "--max-iterations", "1"], cwd=tmp_path
    )
    assert code == 0, err
    assert f"baseline: running {old_pytest} -m pytest" in err
    assert "x * 2" not in (repo / "calc.py").read_text()
    venv_python = repo / ".venv" / "bin" / "python"  # the repository's own interpreter, named relatively
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text(f'#!/bin/sh\nexec "{old_pytest}" "$@"\n')
    venv_python.chmod(0o755)
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "HEAD~1"], check=True)
    code, _, err = run_cli(["run", str(repo), "--agent", "mutate", "--max-iterations", "1"], cwd=tmp_path)
    assert code == 0, err
    assert f"baseline: running {venv_python} -m pytest" in err
    assert_no_debris(repo)
