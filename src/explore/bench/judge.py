"""Judge a case's result independently of what explore said: re-run the tests on the final tree.

The judge never reads explore's state: it exports the user's branch with `git archive`, runs
the visible suite and the case's hidden checks itself, diffs against the initial commit for
test edits, and looks for debris (worktrees, empty explore/* branches, stray processes).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..model.testfiles import CONVENTIONS, is_test_file
from .corpus import Case
from .results import Verdict

PYTEST_TIMEOUT = 180.0


def is_test_path(path: str) -> bool:
    """Test files by the usual conventions: under a tests/ folder, test_*.py, *_test.py, conftest.py."""
    return is_test_file(path, CONVENTIONS)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=explore-bench", "-c", "user.email=bench@localhost", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@dataclass
class Counts:
    passed: int = 0
    total: int = 0
    exit_code: int | None = None

    @property
    def green(self) -> bool:
        return self.exit_code == 0 and self.total > 0 and self.passed == self.total


def run_pytest(cwd: Path, args: list[str], python: str, pythonpath: Path) -> Counts:
    """Run pytest and count from its JUnit XML (skips count as neither passed nor total)."""
    xml = Path(tempfile.mkdtemp(prefix="bench-junit-")) / "r.xml"
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        proc = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junit-xml={xml}", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=PYTEST_TIMEOUT,
        )
        counts = Counts(exit_code=proc.returncode)
        if xml.is_file():
            for suite in ET.parse(xml).getroot().iter("testsuite"):
                tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
                bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
                counts.total += tests - skipped
                counts.passed += tests - skipped - bad
        return counts
    except subprocess.TimeoutExpired:
        return Counts(exit_code=None)
    finally:
        shutil.rmtree(xml.parent, ignore_errors=True)


def _raw_diff(repo: Path, old: str, new: str) -> str:
    """The diff exactly as git prints it (no stripping: a trailing blank context line matters)."""
    return subprocess.run(
        ["git", "diff", "--binary", old, new], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def export_tree(repo: Path, commit: str, dest: Path) -> None:
    """The committed tree at commit, without .git: what a person would check out."""
    data = subprocess.run(["git", "archive", "--format=tar", commit], cwd=repo, check=True, capture_output=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


def find_debris(repo: Path, initial: str, scratch: Path, worktrees_dir: Path | None) -> list[str]:
    """What a finished run should not have left behind."""
    debris: list[str] = []
    listing = git(repo, "worktree", "list", "--porcelain")
    paths = [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")]
    debris += [f"worktree {p}" for p in paths if Path(p).resolve() != repo.resolve()]
    for line in git(
        repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/explore/"
    ).splitlines():
        name, sha = line.split()
        if sha == initial:
            debris.append(f"branch {name} holds nothing")
    if worktrees_dir is not None and worktrees_dir.is_dir():
        for leftover in worktrees_dir.rglob("*"):
            if leftover.is_file():
                debris.append(f"files left in {leftover.parent}")
                break
    debris += [f"process {pid}" for pid in stray_processes(scratch)]
    if git(repo, "status", "--porcelain", "--untracked-files=no"):
        debris.append("uncommitted changes in the work tree")
    return debris


def stray_processes(scratch: Path) -> list[int]:
    """Processes (not ours) running in, or naming, the scratch folder."""
    root, me = str(scratch.resolve()), os.getpid()
    found: list[int] = []
    for proc in psutil.process_iter(["pid", "cwd", "cmdline"]):
        try:
            if proc.info["pid"] == me:
                continue
            cwd = proc.info.get("cwd") or ""
            cmd = " ".join(proc.info.get("cmdline") or [])
            if cwd.startswith(root) or root in cmd:
                found.append(proc.info["pid"])
        except (psutil.Error, OSError):
            continue
    return found


def judge(
    repo: Path,
    initial: str,
    case: Case,
    python: str,
    branch: str | None = None,
    scratch: Path | None = None,
    worktrees_dir: Path | None = None,
) -> Verdict:
    """Judge the tree at the tip of the user's branch (default: HEAD) against the initial commit."""
    final = git(repo, "rev-parse", branch or "HEAD")
    changed = [f for f in git(repo, "diff", "--name-only", initial, final).splitlines() if f]
    verdict = Verdict(
        changed_files=changed,
        tests_touched=[f for f in changed if is_test_path(f)],
        diff=_raw_diff(repo, initial, final) if changed else "",
    )
    workdir = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    try:
        project = workdir / "project"
        export_tree(repo, final, project)
        suite = run_pytest(project, [], python, project)
        verdict.suite_passed, verdict.suite_total = suite.passed, suite.total
        verdict.plausible = suite.green
        if case.checks is not None:
            shutil.copytree(case.checks, workdir / "checks")
            config = ["-c", "pyproject.toml"] if (project / "pyproject.toml").is_file() else []
            checks = run_pytest(project, ["../checks", *config, "--rootdir", "."], python, project)
            verdict.checks_passed, verdict.checks_total = checks.passed, checks.total
            verdict.checks_green = checks.green
        verdict.correct = verdict.plausible and not verdict.tests_touched and verdict.checks_green is not False
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    verdict.debris = find_debris(repo, initial, scratch or repo.parent, worktrees_dir)
    return verdict
