"""Screening runs a test as pytest runs it, output capture included: a mutant that "fixes" a test in
screening fixes it as a candidate too (tqdm: `sys.stdout → sys.argv` fixed a test in a screening
that ran with `-s`, and scored affected 0/3 as a candidate). Real worker processes, real pytest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_repo
from explore.generators.mutate.screen import Job, Screener

TESTS = """\
import sys


def test_output_is_captured():
    assert sys.stdout is not sys.__stdout__


def test_output_is_not_captured():
    assert sys.stdout is sys.__stdout__
"""
IDS = ["tests/test_io.py::test_output_is_captured", "tests/test_io.py::test_output_is_not_captured"]


def pytest_outcomes(repo: Path) -> dict[str, str]:
    """What the project's own pytest says of each test (its configuration as it is)."""
    report = repo / "report.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--json-report",
            f"--json-report-file={report}",
        ],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    return {t["nodeid"]: t["outcome"] for t in json.loads(report.read_text())["tests"]}


@pytest.mark.anyio
@pytest.mark.parametrize("design", ["fork", "fresh"])
@pytest.mark.parametrize("addopts", ["", "-s", "--capture=sys"])
async def test_screening_captures_output_as_the_projects_pytest_does(design: str, addopts: str, tmp_path: Path) -> None:
    ini = '[tool.pytest.ini_options]\npythonpath = ["."]\n' + (f'addopts = "{addopts}"\n' if addopts else "")
    repo = make_repo(tmp_path / "repo", {"tests/test_io.py": TESTS, "pyproject.toml": ini})
    expected = pytest_outcomes(repo)
    captured = addopts != "-s"
    assert expected[IDS[0]] == ("passed" if captured else "failed")  # the test does depend on capture
    assert expected[IDS[1]] == ("failed" if captured else "passed")
    async with Screener(design, sys.executable, repo, tmp_path / "run", 1) as screener:
        verdict = await screener.slots[0].screen(Job({}, IDS, [], 60.0, stop=False))
    assert verdict.status == "ok" and verdict.outcomes == expected
