"""Run a test command in a directory and read per-test results (pytest-json-report or JUnit XML).

Tells a test failure apart from an infrastructure failure: a missing command, a crashed runner,
collection errors, pytest's exit codes 2–4, nothing collected.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from . import procs, seal
from .models import TestOutcome, TestRun
from .redaction import scrub_file

log = logging.getLogger("explore.testing")

SUITE_ID = "<suite>"
"""The single pseudo-test of a custom command that reports only its exit code."""


@dataclass
class TestCommand:
    """How to run the suite: pytest through an interpreter, or a user's shell command."""

    __test__ = False

    python: str | None = None
    """Interpreter for the default pytest command (None for a custom command)."""
    shell: str | None = None
    """A custom `--test-cmd`, run through the shell; may hold a `{junit}` placeholder."""
    junit_xml: str | None = None
    """Where the custom command writes JUnit XML, relative to its working directory."""
    json_report: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def is_pytest(self) -> bool:
        return self.shell is None

    def describe(self) -> str:
        return self.shell if self.shell else f"{self.python} -m pytest"


def find_python(configured: str | None) -> str:
    """`[tool.explore] python`, else the active virtual environment's, else PATH's, else ours."""
    if configured:
        return configured
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        candidate = Path(venv) / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    return shutil.which("python") or shutil.which("python3") or sys.executable


def has_module(python: str, module: str) -> bool:
    try:
        done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def make_command(
    test_cmd: str | None, junit_xml: str | None, python: str | None, extra_env: dict[str, str] | None = None
) -> TestCommand:
    if test_cmd:
        return TestCommand(shell=test_cmd, junit_xml=junit_xml, extra_env=extra_env or {})
    interpreter = find_python(python)
    return TestCommand(python=interpreter, json_report=has_module(interpreter, "pytest_jsonreport"), extra_env=extra_env or {})


def isolation_env(workdir: Path) -> dict[str, str]:
    """Put the worktree's own code first on sys.path: an editable install of the user's checkout
    must not shadow the candidate's files."""
    paths = [str(workdir / "src")] if (workdir / "src").is_dir() else []
    paths.append(str(workdir))
    existing = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join(paths + ([existing] if existing else []))}


async def run_tests(
    command: TestCommand,
    workdir: Path,
    log_path: Path,
    *,
    select: list[str] | None = None,
    tracker: procs.ProcessTracker | None = None,
    memory_limit: int | None = None,
    log_cap: int = procs.DEFAULT_LOG_CAP,
) -> TestRun:
    """Run the suite (or the selected pytest ids) in workdir; the caller bounds it in time."""
    report = log_path.with_suffix(".report")
    report.unlink(missing_ok=True)
    env = {**isolation_env(workdir), **command.extra_env}
    key = seal.new_key() if command.is_pytest and command.json_report else None
    if command.is_pytest:
        argv = [command.python or sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rN", "-q", *(select or [])]
        if key:
            plugin_dir = seal.install(log_path.with_suffix(".seal"))
            env.update({seal.ENV: key, "PYTHONPATH": os.pathsep.join([env["PYTHONPATH"], str(plugin_dir)])})
            argv[3:3] = ["-p", seal.PLUGIN]
        if command.json_report:
            # --json-report-omit takes several values: it must come after the test ids.
            argv += ["--json-report", f"--json-report-file={report}", "--json-report-omit", "log", "streams", "warnings"]
        else:
            argv += [f"--junit-xml={report}"]
        cmd: list[str] | str = argv
    else:
        cmd = (command.shell or "").replace("{junit}", shlex.quote(str(report)))
        if command.junit_xml:
            (workdir / command.junit_xml).unlink(missing_ok=True)  # never score a stale report
    log.debug("tests: %s (log %s)", cmd if isinstance(cmd, str) else shlex.join(cmd), log_path)
    result = await procs.run(cmd, workdir, env=env, log_path=log_path, tracker=tracker, memory_limit=memory_limit, log_cap=log_cap)
    run = TestRun(exit_code=result.exit_code, log_path=str(log_path), duration_s=result.duration_s)
    if result.oom:
        run.oom = True
        run.infra_error = f"the test run exceeded its memory cap (peak {result.peak_rss // 2**20} MiB)"
        return run

    junit = report if "{junit}" in (command.shell or "") else (workdir / command.junit_xml if command.junit_xml else None)
    forged = key is not None and report.exists() and not seal.verify(report, key)
    for written in (report, junit):
        if written is not None:
            scrub_file(written)  # a test may print the environment: outcomes carry no credential
    if command.is_pytest:
        if command.json_report and report.exists():
            _read_json_report(report, run)
        elif report.exists():
            _read_junit(report, run, workdir)
    else:
        if junit is not None and junit.exists():
            _read_junit(junit, run, workdir)
        elif result.exit_code not in (126, 127):
            run.per_test = False
            outcome = "passed" if result.exit_code == 0 else "failed"
            run.outcomes[SUITE_ID] = TestOutcome(id=SUITE_ID, outcome=outcome, message=result.output_tail[-2000:])
    run.infra_error = classify_infra(command, result, run)
    if forged:
        run.outcomes.clear()
        run.infra_error = "its JSON report was not written by pytest: it lacks this run's seal (a forged report)"
    return run


def classify_infra(command: TestCommand, result: procs.ProcResult, run: TestRun) -> str | None:
    """Why this run says nothing about the code, or None when it is an ordinary test result."""
    tail = result.output_tail
    code = result.exit_code
    if code in (126, 127):
        return f"test command not found or not executable: {command.describe()} — {tail.strip().splitlines()[-1] if tail.strip() else ''}"
    if command.is_pytest:
        if "No module named pytest" in tail:
            return f"pytest is not installed in {command.python} (No module named pytest); install it there or set [tool.explore] python"
        if run.collection_errors:
            return f"collection errors in {', '.join(run.collection_errors[:5])}"
        if code == 5:
            return "no tests collected"
        if code in (2, 3, 4):
            return f"pytest exited with {code} ({ {2: 'interrupted', 3: 'internal error', 4: 'usage error'}[code]}): {_last_line(tail)}"
        if code not in (0, 1):
            return f"the test runner crashed (exit {code}): {_last_line(tail)}"
        if not run.outcomes and code != 0:
            return f"pytest failed without reporting any test: {_last_line(tail)}"
    elif run.per_test and not run.outcomes and code not in (0, None):
        return f"the test command failed without reporting any test (exit {code}): {_last_line(tail)}"
    return None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _read_json_report(path: Path, run: TestRun) -> None:
    data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    for collector in data.get("collectors", []):
        if collector.get("outcome") == "failed" and collector.get("nodeid"):
            run.collection_errors.append(collector["nodeid"])
    for test in data.get("tests", []):
        nodeid = test["nodeid"]
        outcome = test.get("outcome", "failed")
        message, longrepr = "", ""
        for phase in ("setup", "call", "teardown"):
            stage = test.get(phase) or {}
            if stage.get("outcome") == "failed":
                if outcome == "passed":  # a teardown error after a passing call
                    outcome = "error"
                crash = stage.get("crash") or {}
                message = message or crash.get("message", "")
                longrepr = longrepr or str(stage.get("longrepr", ""))
                if phase == "setup":
                    outcome = "error"
            elif stage.get("outcome") == "skipped" and not message:
                message = str(stage.get("longrepr", ""))[-300:]
        if outcome not in ("passed", "failed", "error", "skipped", "xfailed", "xpassed"):
            outcome = "failed"
        run.outcomes[nodeid] = TestOutcome(
            id=nodeid,
            outcome=outcome,
            message=message,
            longrepr=longrepr[-6000:],
            file=nodeid.split("::", 1)[0],
            markers=[k for k in test.get("keywords", []) if k and k.isidentifier()][:20],
        )


def _read_junit(path: Path, run: TestRun, workdir: Path) -> None:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        run.collection_errors.append(f"unreadable JUnit XML {path.name}: {exc}")
        return
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        file = case.get("file")
        test_id = (_pytest_id(classname, name, workdir) if classname else None) or f"{classname}::{name}"
        outcome, message, longrepr = "passed", "", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                message, longrepr = child.get("message", "") or "", (child.text or "")[-6000:]
            elif child.tag == "skipped":
                outcome = "skipped"
                message = child.get("message", "") or ""
        if not classname and outcome == "error":
            run.collection_errors.append(name)
        run.outcomes[test_id] = TestOutcome(id=test_id, outcome=outcome, message=message, longrepr=longrepr, file=file)


def _pytest_id(classname: str, name: str, workdir: Path) -> str | None:
    """Rebuild a pytest node id from pytest's own JUnit XML (dotted module path + classes)."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = Path(*parts[:cut]).with_suffix(".py")
        if (workdir / candidate).is_file():
            return "::".join([candidate.as_posix(), *parts[cut:], name])
    return None
