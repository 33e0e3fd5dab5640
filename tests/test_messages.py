"""Issue 28, point 7: help in groups with examples, -V, one way to name the repository, NO_COLOR,
and the small messages a new user met."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_repo
from explore.cli.live import RunView, make_console

CORPUS = Path(__file__).parents[1] / "benchmarks" / "cases"


def explore(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explore", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_run_and_bench_help_come_in_groups_with_examples() -> None:
    run = explore("run", "--help").stdout
    for heading in (
        "What to repair:",
        "How to repair:",
        "How tests run:",
        "The result:",
        "Talking to you:",
        "Examples:",
    ):
        assert heading in run, heading
    assert (
        run.index("--tests PATTERN")
        < run.index("How to repair:")
        < run.index("--agent TEXT")
        < run.index("How tests run:")
    )
    assert "explore run -- tests/test_x.py::test_y" in run
    bench = explore("bench", "--help").stdout
    assert "What to measure:" in bench and "Examples:" in bench and "explore bench --compare" in bench


def test_dash_capital_v_prints_the_version() -> None:
    done = explore("-V")
    assert done.returncode == 0 and done.stdout.startswith("explore, version ")


def test_no_color_drops_bold_and_dim_too(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setenv("NO_COLOR", "1")
    make_console(file=out, force_terminal=True).print("[bold]b[/bold] [dim]d[/dim] [red]r[/red]")
    assert out.getvalue() == "b d r\n"
    monkeypatch.delenv("NO_COLOR")
    styled = io.StringIO()
    make_console(file=styled, force_terminal=True).print("[bold]b[/bold]")
    assert "\x1b[1m" in styled.getvalue()


def test_run_takes_the_repository_as_path_or_as_path_option(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"tests/test_ok.py": "def test_ok():\n    assert True\n"})
    done = explore("run", "--path", str(repo), "--json", cwd=tmp_path)
    assert done.returncode == 0 and '"status":"succeeded"' in done.stdout, done.stderr
    both = explore("run", str(repo), "--path", str(tmp_path), cwd=tmp_path)
    assert both.returncode == 2 and "two repositories named" in both.stderr


def test_bench_names_an_unknown_case() -> None:
    done = explore("bench", str(CORPUS), "--case", "no_such_case")
    assert (
        done.returncode == 2 and "--case no_such_case: no such case in" in done.stderr and "prime_sieve" in done.stderr
    )


def test_the_live_header_says_baseline_before_any_iteration() -> None:
    out = io.StringIO()
    make_console(file=out, width=100).print(RunView())
    assert out.getvalue().splitlines()[0] == "explore baseline"
