"""Issue 39.3: explore's per-test limit is invisible to the code under test.

tqdm's performance tests skip themselves when a 0.2 s sleep costs 0.1 ms of CPU; the limit's watchdog
thread, polling every 0.1 s, cost 137-205 us of it, so 7 tests that pass under plain pytest were
skipped with the limit on. cookiecutter's freeze_time (freezegun, autouse) patched the clock the limit
read, and a test failed at once with the limit's timeout. Each suite here is run under plain pytest
and under explore's limit: the outcomes are the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from conftest import make_repo
from explore.edges.testing import TestCommand, run_tests

QUIET = {
    "tests/test_quiet.py": """\
        import os
        import threading
        import time


        def test_a_sleep_costs_no_cpu():  # tqdm's tests_perf.py skips past 1e-4 s
            spent = []
            for _ in range(3):  # the least of three: a busy machine's odd wake-up aside
                start = time.process_time()
                time.sleep(0.2)
                spent.append(time.process_time() - start)
            assert min(spent) < 1e-4, spent


        def test_one_thread():
            assert threading.active_count() == 1, threading.enumerate()
            assert len(os.listdir("/proc/self/task")) == 1
        """,
}

FROZEN = {
    "tests/conftest.py": """\
        import sys
        import time

        import pytest

        FROZEN = 1.3e9
        NAMES = ("time", "monotonic", "perf_counter", "monotonic_ns", "perf_counter_ns")


        @pytest.fixture(autouse=True)
        def freeze_time():
            # what freezegun does: the time module's clocks, and every loaded module's reference to them
            real = {name: getattr(time, name) for name in NAMES}
            fake = {name: (lambda: FROZEN) if not name.endswith("_ns") else (lambda: int(FROZEN * 1e9)) for name in NAMES}
            undo = []
            for module in list(sys.modules.values()):
                for attribute in dir(module) if module is not None else ():
                    try:
                        value = getattr(module, attribute)
                    except Exception:
                        continue
                    for name in NAMES:
                        if value is real[name]:
                            setattr(module, attribute, fake[name])
                            undo.append((module, attribute, value))
            yield
            for module, attribute, value in undo:
                setattr(module, attribute, value)
        """,
    "tests/test_frozen.py": """\
        import time


        def test_time_stands_still():
            time.sleep(0.3)
            assert time.monotonic() == time.perf_counter() == time.time() == 1.3e9


        def test_after():
            assert time.time() == 1.3e9
        """,
}


def _plain(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, capture_output=True, text=True
    )


def _watchdogs(tmp_path: Path) -> list[psutil.Process]:
    """The watchdog processes of this test's runs (their record lies under tmp_path): those of the
    tests that other xdist workers run at the same time are not this one's."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if any("_explore_watchdog" in part for part in cmdline) and any(str(tmp_path) in p for p in cmdline):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.mark.anyio
@pytest.mark.parametrize("suite", [QUIET, FROZEN], ids=["cpu-and-threads", "frozen-clock"])
async def test_a_suite_reads_as_under_plain_pytest(tmp_path: Path, suite: dict[str, str]) -> None:
    """Before: the CPU test failed (a watchdog thread's wake-ups), the thread count read 2, and with
    the clock frozen the first test failed at once with `ExploreTestTimeout` (the limit read the
    patched time.monotonic)."""
    repo = make_repo(tmp_path / "repo", suite)
    plain = _plain(repo)
    assert plain.returncode == 0, plain.stdout  # every test passes under plain pytest here
    run = await run_tests(TestCommand(python=sys.executable, test_timeout=30.0), repo, tmp_path / "run.log")
    assert {i: o.outcome for i, o in run.outcomes.items()} == dict.fromkeys(run.outcomes, "passed")
    assert len(run.outcomes) == 2 and run.exit_code == 0
    assert not _watchdogs(tmp_path)


@pytest.mark.anyio
async def test_a_frozen_clock_does_not_stop_the_limit(tmp_path: Path) -> None:
    """A test that loops with the clock frozen still ends at the limit, and the next one runs."""
    files = dict(FROZEN)
    files["tests/test_frozen.py"] += "\n\n        def test_loops():\n            while True:\n                pass\n"
    repo = make_repo(tmp_path / "repo", files)
    run = await run_tests(TestCommand(python=sys.executable, test_timeout=1.0), repo, tmp_path / "run.log")
    outcomes = {i.split("::")[1]: o.outcome for i, o in run.outcomes.items()}
    assert outcomes == {"test_time_stands_still": "passed", "test_after": "passed", "test_loops": "timeout"}


@pytest.mark.anyio
async def test_a_test_stuck_in_c_code_is_ended_from_outside(tmp_path: Path) -> None:
    """sum() over itertools.repeat holds the GIL and never looks at signals: no handler, and no
    thread of the test process, can run. Before, the in-process watchdog thread waited for the GIL
    as long as the job's own limit; the watchdog process ends it at the hard limit, the test is a
    timeout with the stack where it was stuck, and the rest of the suite runs."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "tests/test_c.py": """\
                import itertools


                def test_stuck():
                    sum(itertools.repeat(0, 10**13))


                def test_after():
                    pass
                """,
        },
    )
    run = await run_tests(TestCommand(python=sys.executable, test_timeout=1.0), repo, tmp_path / "run.log")
    stuck, after = run.outcomes["tests/test_c.py::test_stuck"], run.outcomes["tests/test_c.py::test_after"]
    assert (stuck.outcome, after.outcome) == ("timeout", "passed")
    assert "ignored the signal" in stuck.message and "in test_stuck" in stuck.longrepr
    assert run.exit_code == 1 and run.infra_error is None
    assert not _watchdogs(tmp_path)
