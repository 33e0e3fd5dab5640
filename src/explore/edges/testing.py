"""Run a test command in a directory and read per-test results (pytest-json-report or JUnit XML).

Tells a test failure apart from an infrastructure failure: a missing command, a crashed runner,
collection errors, pytest's exit codes 2–4, nothing collected.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from ..decide import witness
from ..decide.redaction import scrub_file
from ..model import testids
from ..model.testresults import PASSING, Outcome, TestOutcome, TestRun
from . import homes, outcomes, procs, seal, witness_io

log = logging.getLogger("explore.testing")

SUITE_ID = "<suite>"
"""The single pseudo-test of a custom command that reports only its exit code."""

PLUGIN_DIR = Path(__file__).parents[1] / "pytest_plugin"
"""Holds explore_pytest_plugin.py (per-test limit, subtest record); put on PYTHONPATH, loaded with -p."""
PLUGIN = "explore_pytest_plugin"
OPENED_ENV = "EXPLORE_RECORD_OPENED"
"""Set for the baseline: the plugin records the files the tests open (their data)."""
HARD_EXIT = 86
"""The plugin's exit code when a test ignored the time limit (kept in step with the plugin)."""
BASELINE_TEST_TIMEOUT = 30.0
"""Seconds per test in the baseline, when nothing is configured: a hang shows within a minute."""
TEST_TIMEOUT_FLOOR = 10.0
TEST_TIMEOUT_FACTOR = 5.0
HANG_FLOOR = 2.0
"""After a test has hung, each further test of the run gets TEST_TIMEOUT_FACTOR times the slowest
passing test (this run's, or the baseline's), at least this many seconds, at most the limit."""
HANG_BUDGET = 40.0
"""Seconds the hung tests of one run may take before the floor drops to an eighth of HANG_FLOOR."""


@dataclass(frozen=True)
class Hangs:
    """What explore's plugin knows of a run's hangs, carried into the process that continues the
    run (after a hard timeout ended one): how many tests hung, the seconds they took, and the
    slowest passing test's seconds (seeded from the baseline's)."""

    hung: int = 0
    spent_s: float = 0.0
    slowest_pass_s: float = 0.0

    def arg(self) -> str:
        return f"{self.hung},{self.spent_s:.3f},{self.slowest_pass_s:.3f}"

    @classmethod
    def parse(cls, text: str) -> Hangs | None:
        try:
            hung, spent, slowest = text.split(",")
            return cls(int(hung), float(spent), float(slowest))
        except ValueError:
            return None


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
    test_timeout: float | None = None
    """Seconds per test (pytest only, through explore's plugin); None: only the whole-run limits."""
    slowest_pass_s: float = 0.0
    """The baseline's slowest passing test: after a hang, the lowered limit is never under
    TEST_TIMEOUT_FACTOR times it, so a test that passed at the baseline is not cut (see Hangs)."""
    hang_floor: float = HANG_FLOOR

    @property
    def is_pytest(self) -> bool:
        return self.shell is None

    def describe(self) -> str:
        return self.shell if self.shell else f"{self.python} -m pytest"


def find_python(configured: str | None, root: Path | None = None) -> str:
    """`--python` or `[tool.explore] python` (a relative path: from the repository root, else from
    here; a bare name: on PATH), else the active virtual environment's, else PATH's, else ours."""
    if configured:
        if os.sep in configured and not os.path.isabs(configured):
            for base in filter(None, (root, Path.cwd())):
                if (base / configured).exists():
                    return str((base / configured).absolute())
        return configured
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        candidate = Path(venv) / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    return shutil.which("python") or shutil.which("python3") or sys.executable


def has_module(python: str, module: str) -> bool:
    """Whether the interpreter imports module: seen on disk in its virtual environment's own
    site-packages (no process), else asked of the interpreter (`python -c "import module"`: 13–45 ms
    before every baseline here)."""
    if _in_venv(python, module):
        return True
    try:
        done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _in_venv(python: str, module: str) -> bool:
    """module (a package or a single file) in the site-packages of the virtual environment python
    belongs to (`<venv>/bin/python`), for the Python version its pyvenv.cfg names: that folder is
    always on the interpreter's sys.path."""
    venv = Path(os.path.abspath(python)).parent.parent  # not resolved: a venv's python is a symlink
    try:
        config = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    found = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+)\.(\d+)", config, re.MULTILINE)
    if found is None:
        return False
    site_packages = venv / "lib" / f"python{found[1]}.{found[2]}" / "site-packages"
    return (site_packages / module / "__init__.py").is_file() or (site_packages / f"{module}.py").is_file()


def make_command(
    test_cmd: str | None,
    junit_xml: str | None,
    python: str | None,
    extra_env: dict[str, str] | None = None,
    test_timeout: float | None = BASELINE_TEST_TIMEOUT,
    root: Path | None = None,
    slowest_pass_s: float = 0.0,
) -> TestCommand:
    if test_cmd:
        return TestCommand(shell=test_cmd, junit_xml=junit_xml, extra_env=extra_env or {})
    interpreter = find_python(python, root)
    return TestCommand(
        python=interpreter,
        json_report=has_module(interpreter, "pytest_jsonreport"),
        extra_env=extra_env or {},
        test_timeout=test_timeout,
        slowest_pass_s=slowest_pass_s,
    )


def slowest_pass(run: TestRun) -> float:
    """Seconds of the run's slowest passing test (0 when none passed)."""
    return max((o.duration_s for o in run.outcomes.values() if o.outcome in PASSING), default=0.0)


def derived_test_timeout(baseline: TestRun) -> float:
    """The per-test limit after the baseline: a multiple of its slowest passing test, with a floor."""
    return round(max(TEST_TIMEOUT_FLOOR, TEST_TIMEOUT_FACTOR * slowest_pass(baseline)), 1)


def isolation_env(workdir: Path) -> dict[str, str]:
    """Put the worktree's own code first on sys.path: an editable install of the user's checkout
    must not shadow the candidate's files. explore's pytest plugin comes after it."""
    paths = [str(workdir / "src")] if (workdir / "src").is_dir() else []
    paths += [str(workdir), str(PLUGIN_DIR)]
    existing = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join(paths + ([existing] if existing else []))}


def with_isolation(workdir: Path, extra_env: dict[str, str]) -> dict[str, str]:
    """extra_env over the isolation of workdir; a PYTHONPATH in extra_env comes after the
    worktree's own paths, never instead of them (a shard runs in a worktree of its own)."""
    isolated = isolation_env(workdir)
    env = {**isolated, **extra_env}
    if extra_env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join([isolated["PYTHONPATH"], extra_env["PYTHONPATH"]])
    return env


async def run_tests(
    command: TestCommand,
    workdir: Path,
    log_path: Path,
    *,
    select: list[str] | None = None,
    tracker: procs.ProcessTracker | None = None,
    memory_limit: int | None = None,
    log_cap: int = procs.DEFAULT_LOG_CAP,
    ignore: list[str] | None = None,
    die_with_parent: bool = False,
    only: list[str] | None = None,
    confine: procs.Confinement | None = None,
) -> TestRun:
    """Run the suite (or the selected pytest ids) in workdir; the caller bounds it in time.
    ignore: test files left out (pytest --ignore), for the shard that runs "everything else";
    only: the only test files collected (explore's plugin), for the other shards;
    die_with_parent: the run dies with this process (a Ray worker), see procs.run.

    A test that ignored the per-test limit ended its pytest process: it counts as `timeout`, and
    the suite runs again without it so the other tests still count."""
    # a custom command's tools may keep envs in $HOME
    private: AbstractContextManager[dict[str, str]] = homes.private_home() if command.is_pytest else nullcontext({})
    with private as home:
        limits = _Limits(tracker, memory_limit, log_cap, ignore or [], die_with_parent, only, confine, home)
        return await _run_with_reruns(command, workdir, log_path, select, limits)


async def _run_with_reruns(
    command: TestCommand, workdir: Path, log_path: Path, select: list[str] | None, limits: _Limits
) -> TestRun:
    """Until no test ignores the limit: each run ends at a new stuck test or completes, so there
    are at most as many runs as tests, and the hangs' state goes on from one to the next."""
    hung: dict[str, TestOutcome] = {}
    hangs = Hangs(slowest_pass_s=command.slowest_pass_s)
    run = await _run_once(command, workdir, log_path, select, [], limits, hangs)
    attempt, last_log = 0, log_path
    while run.exit_code == HARD_EXIT and not run.oom:
        stuck = {i: o for i, o in run.outcomes.items() if o.outcome == "timeout"}
        if not stuck.keys() - hung.keys():
            break
        hung.update(stuck)
        hangs = carried_hangs(last_log, hangs)
        attempt += 1
        last_log = log_path.with_name(f"{log_path.stem}-rest-{attempt}{log_path.suffix}")
        duration = run.duration_s
        run = await _run_once(command, workdir, last_log, select, sorted(hung), limits, hangs)
        run.duration_s += duration
    if hung:
        run.outcomes = {**run.outcomes, **hung}
        if run.exit_code in (0, 5, HARD_EXIT) and not run.oom:
            run.exit_code = 1  # failing tests, and not "nothing collected" when every test hung
            run.infra_error = _collection_errors(run)
    return run


def _collection_errors(run: TestRun) -> str | None:
    """The infrastructure error of a run whose test files did not import, naming the first five."""
    return f"collection errors in {', '.join(run.collection_errors[:5])}" if run.collection_errors else None


@dataclass(frozen=True)
class _Limits:
    tracker: procs.ProcessTracker | None
    memory_limit: int | None
    log_cap: int
    ignore: list[str]
    die_with_parent: bool
    only: list[str] | None = None
    confine: procs.Confinement | None = None
    home: dict[str, str] = field(default_factory=dict)
    """The job's private HOME, TMPDIR and XDG folders (homes.py); empty for a custom command."""


def _killed_by_watchdog(exit_code: int | None, record: Path) -> bool:
    """Whether a pytest process that died of a signal was ended by the plugin's watchdog (outside
    the process, it records the stuck test before it kills)."""
    if exit_code is None or 0 <= exit_code <= 128 or not record.exists():
        return False
    return '"kind": "hard_timeout"' in record.read_text(encoding="utf-8", errors="replace")


def carried_hangs(log_path: Path, before: Hangs) -> Hangs:
    """The hangs' state the plugin wrote with the hard timeout that ended the run logged at
    log_path (its record beside the log), else before."""
    record = log_path.with_suffix(".record")
    found = before
    if record.exists():
        for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and entry.get("kind") == "hard_timeout":
                found = Hangs.parse(str(entry.get("hangs", ""))) or found
    return found


async def _run_once(
    command: TestCommand,
    workdir: Path,
    log_path: Path,
    select: list[str] | None,
    deselect: list[str],
    limits: _Limits,
    hangs: Hangs,
) -> TestRun:
    report = log_path.with_suffix(".report")
    record = log_path.with_suffix(".record")
    for stale in (report, record, record.with_name(f"{record.name}.stack")):
        stale.unlink(missing_ok=True)
    env = {**limits.home, **with_isolation(workdir, command.extra_env)}
    key = seal.new_key() if command.is_pytest and command.json_report else None
    calls = witness_io.beside(log_path) if command.is_pytest else None
    if calls:
        env.update(calls.env())
    if command.is_pytest:
        argv = [
            command.python or sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rN",
            "-q",
            *plugin_args(command.test_timeout, record, hangs, command.hang_floor),
        ]
        here = os.path.realpath(workdir)  # as the tests see their tree: the process's cwd is resolved
        argv += [testids.localise(i, here) for i in select or []]
        argv += [f"--ignore={path}" for path in limits.ignore]
        if deselect:  # exactly these ids (pytest's --deselect takes every id it prefixes)
            ids = [testids.localise(i, here) for i in deselect]
            argv.append(f"--explore-deselect={deselect_listing(log_path.with_suffix('.deselect'), ids)}")
        if limits.only is not None:
            listing = log_path.with_suffix(".only")
            listing.parent.mkdir(parents=True, exist_ok=True)
            listing.write_text("".join(f"{path}\n" for path in limits.only), encoding="utf-8")
            argv.append(f"--explore-only={listing}")
        if key:
            plugin_dir = seal.install(log_path.with_suffix(".seal"))
            env.update(
                {**seal.env(key, plugin_dir), "PYTHONPATH": os.pathsep.join([env["PYTHONPATH"], str(plugin_dir)])}
            )
            argv[3:3] = ["-p", seal.PLUGIN]
        if command.json_report:
            # --json-report-omit takes several values: it must come after the test ids.
            argv += [
                "--json-report",
                f"--json-report-file={report}",
                "--json-report-omit",
                "log",
                "streams",
                "warnings",
            ]
        else:
            argv += [f"--junit-xml={report}"]
        cmd: list[str] | str = argv
    else:
        cmd = (command.shell or "").replace("{junit}", shlex.quote(str(report)))
        if command.junit_xml:
            (workdir / command.junit_xml).unlink(missing_ok=True)  # never score a stale report
    log.debug("tests: %s (log %s)", cmd if isinstance(cmd, str) else shlex.join(cmd), log_path)
    result = await procs.run(
        cmd,
        workdir,
        env=env,
        log_path=log_path,
        tracker=limits.tracker,
        memory_limit=limits.memory_limit,
        log_cap=limits.log_cap,
        die_with_parent=limits.die_with_parent,
        confine=limits.confine,
    )
    run = TestRun(exit_code=result.exit_code, log_path=str(log_path), duration_s=result.duration_s)
    if result.oom:
        run.oom = True
        run.infra_error = f"the test run exceeded its memory cap (peak {result.peak_rss // 2**20} MiB)"
        return run
    if command.is_pytest and _killed_by_watchdog(run.exit_code, record):
        run.exit_code = HARD_EXIT  # a test stuck in C code: the plugin's watchdog had to SIGKILL it

    junit = (
        report if "{junit}" in (command.shell or "") else (workdir / command.junit_xml if command.junit_xml else None)
    )
    # The report is read once: to check its seal, and for its outcomes unless the scrub changed it.
    sealed = seal.read(report) if key is not None and report.exists() else None
    forged = key is not None and report.exists() and not (sealed is not None and seal.verified(sealed, key))
    for written in (report, junit, record):
        if written is not None and scrub_file(written) and written == report:  # a test may print the
            sealed = None  # environment: outcomes carry no credential (the scrubbed file is read again)
    if command.is_pytest:
        if command.json_report and report.exists():
            outcomes.read_json_report(report, run, sealed)
        elif report.exists():
            outcomes.read_junit(report, run, workdir)
        if record.exists():
            outcomes.fold_record(record, run)
        if calls:
            run.unconfirmed = witness.contradicted(
                run.outcomes, witness_io.read(calls), ids_are_nodeids=command.json_report
            )
            calls.path.unlink(missing_ok=True)
    else:
        if junit is not None and junit.exists():
            outcomes.read_junit(junit, run, workdir)
        elif result.exit_code not in (126, 127):
            run.per_test = False
            outcome: Outcome = "passed" if result.exit_code == 0 else "failed"
            run.outcomes[SUITE_ID] = TestOutcome(id=SUITE_ID, outcome=outcome, message=result.output_tail[-2000:])
    run.infra_error = classify_infra(command, result, run)
    if forged:
        run.outcomes.clear()
        run.infra_error = "its JSON report was not written by pytest: it lacks this run's seal (a forged report)"
    return outcomes.with_tree_ids(run, workdir)


def deselect_listing(path: Path, ids: list[str]) -> Path:
    """The file `--explore-deselect` reads: the node ids a run leaves out, one a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    return path


def plugin_args(
    test_timeout: float | None, record: Path, hangs: Hangs | None = None, floor: float = HANG_FLOOR
) -> list[str]:
    """pytest arguments loading explore's plugin (PLUGIN_DIR must be on PYTHONPATH: isolation_env):
    the per-test limit, lowered after a hang (at least floor; HANG_BUDGET), from the state hangs."""
    limit = (
        [
            f"--explore-test-timeout={test_timeout:g}",
            f"--explore-hang-floor={floor:g}",
            f"--explore-hang-budget={HANG_BUDGET:g}",
            f"--explore-hangs={(hangs or Hangs()).arg()}",
        ]
        if test_timeout
        else []
    )
    return ["-p", PLUGIN, f"--explore-record={record}", *limit]


def classify_infra(command: TestCommand, result: procs.ProcResult, run: TestRun) -> str | None:
    """Why this run says nothing about the code, or None when it is an ordinary test result."""
    tail = result.output_tail
    code = result.exit_code
    if code in (126, 127):
        return f"test command not found or not executable: {command.describe()} — {tail.strip().splitlines()[-1] if tail.strip() else ''}"
    if command.is_pytest:
        if "No module named pytest" in tail:
            return f"pytest is not installed in {command.python} (No module named pytest); install it there, or choose another with --python or [tool.explore] python"
        if run.collection_errors:
            return _collection_errors(run)
        if code == 5:
            return "no tests collected"
        if code in (2, 3, 4):
            return f"pytest exited with {code} ({ {2: 'interrupted', 3: 'internal error', 4: 'usage error'}[code] }): {_last_line(tail)}"
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
