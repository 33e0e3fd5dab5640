"""Issue 12: every test bounded — explore's own pytest plugin, outcome `timeout`, the derived limit."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import psutil
import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.edges.outcomes import TIMEOUT_MARK
from explore.edges.testing import (
    HARD_EXIT,
    TEST_TIMEOUT_FACTOR,
    TestCommand,
    derived_test_timeout,
    make_command,
    run_tests,
)
from explore.model.config import build_options
from explore.model.testresults import TestOutcome, TestRun

HANGS = {
    "tests/test_hang.py": """\
        import signal


        def test_before():
            assert True


        def test_loop():
            while True:
                pass


        def test_deaf():
            signal.signal(signal.SIGALRM, signal.SIG_IGN)  # ignores the soft limit: the watchdog ends it
            while True:
                pass


        def test_deaf_neighbour():  # its id starts with test_deaf's: still run when test_deaf is left out
            assert True


        def test_after():
            assert 1 == 2


        def test_last():
            assert True
        """,
}


def _pytest_children(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(marker in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.mark.anyio
@pytest.mark.parametrize("json_report", [True, False], ids=["json-report", "junit"])
async def test_a_looping_test_is_a_timeout_and_the_rest_still_counts(tmp_path: Path, json_report: bool) -> None:
    repo = make_repo(tmp_path / "repo", HANGS)
    command = TestCommand(python=sys.executable, json_report=json_report, test_timeout=1.0)
    run = await run_tests(command, repo, tmp_path / "run.log")
    outcomes = {i.split("::")[1]: o for i, o in run.outcomes.items()}
    assert {k: o.outcome for k, o in outcomes.items()} == {
        "test_before": "passed",
        "test_loop": "timeout",
        "test_deaf": "timeout",
        "test_deaf_neighbour": "passed",
        "test_after": "failed",
        "test_last": "passed",
    }
    assert run.infra_error is None and run.exit_code == 1
    assert "ExploreTestTimeout" in outcomes["test_loop"].message
    assert (
        "test_hang.py" in outcomes["test_loop"].longrepr and "while True" in outcomes["test_loop"].longrepr
    )  # where it was stuck
    assert "test_deaf" in outcomes["test_deaf"].longrepr and "ignored the signal" in outcomes["test_deaf"].message
    assert 0.9 < outcomes["test_loop"].duration_s < 10
    assert sorted(run.failing()) == sorted(
        i for i in run.outcomes if i.endswith(("test_loop", "test_deaf", "test_after"))
    )
    assert (tmp_path / "run-rest-1.log").exists()  # the suite ran again without the deaf test
    assert not _pytest_children(str(repo))


@pytest.mark.anyio
async def test_without_a_limit_a_soft_hang_is_not_cut(tmp_path: Path) -> None:
    """The limit is what stops the loop: the same run without it is cut only by the caller."""
    import anyio

    repo = make_repo(tmp_path / "repo", {"tests/test_h.py": "def test_loop():\n    while True:\n        pass\n"})
    with anyio.move_on_after(4) as scope:
        await run_tests(TestCommand(python=sys.executable, test_timeout=None), repo, tmp_path / "run.log")
    assert scope.cancelled_caught
    run = await run_tests(TestCommand(python=sys.executable, test_timeout=1.0), repo, tmp_path / "run2.log")
    assert [o.outcome for o in run.outcomes.values()] == ["timeout"]


@pytest.mark.anyio
@pytest.mark.parametrize("theirs", [1, 60])
async def test_the_projects_own_pytest_timeout_keeps_working(tmp_path: Path, theirs: int) -> None:
    """pytest-timeout owns SIGALRM while its timer runs: the shorter limit stops the test either way."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "pytest.ini": f"[pytest]\ntimeout = {theirs}\n",
            "test_p.py": "def test_loop():\n    while True:\n        pass\n\n\ndef test_ok():\n    pass\n",
        },
    )
    run = await run_tests(
        TestCommand(python=sys.executable, test_timeout=1.0 if theirs > 1 else 30.0), repo, tmp_path / "run.log"
    )
    assert run.outcomes["test_p.py::test_loop"].outcome == "timeout"
    assert ("pytest-timeout" if theirs == 1 else "ignored the signal") in run.outcomes["test_p.py::test_loop"].message
    assert run.outcomes["test_p.py::test_ok"].outcome == "passed"


def test_derived_limit_has_a_floor_and_follows_the_slowest_passing_test() -> None:
    def run(*durations: tuple[str, float]) -> TestRun:
        return TestRun(
            outcomes={f"t{n}": TestOutcome(id=f"t{n}", outcome=o, duration_s=d) for n, (o, d) in enumerate(durations)}
        )

    assert derived_test_timeout(run()) == 10.0
    assert derived_test_timeout(run(("passed", 0.2), ("passed", 1.0))) == 10.0
    assert derived_test_timeout(run(("passed", 4.0), ("failed", 30.0), ("timeout", 30.0))) == 20.0


def test_limit_options(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {}, explore_config="test-timeout = 7\n")
    assert build_options(tmp_path / "r", {}).test_timeout == 7
    assert build_options(tmp_path / "r", {"test_timeout": 3.5}).test_timeout == 3.5
    assert make_command(None, None, sys.executable, test_timeout=7).test_timeout == 7
    assert (
        make_command("make test", None, None, test_timeout=7).test_timeout is None
    )  # a custom command keeps the whole-run limits only
    code, _, err = run_cli(["run", str(tmp_path / "r"), "--test-timeout", "0"])
    assert code == 2 and "test_timeout" in err.replace("-", "_")


def test_a_looping_bug_is_reported_within_a_minute_and_repaired(tmp_path: Path) -> None:
    """Acceptance: the baseline names the test `timeout` (rerun alone with a generous limit first,
    issue 39.7: it hangs again), mutate repairs it, exit 0, no process left behind. A 3 s limit, not
    the default 30 s (whose rerun alone waits 90 s): the mechanism is the same."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "walk.py": """\
            def steps_to(n):
                \"\"\"How many steps of one from 0 reach n.\"\"\"
                i, steps = 0, 0
                while i != n:
                    i -= 1
                    steps += 1
                return steps


            def double(x):
                return 2 * x
            """,
            "tests/test_walk.py": """\
            from walk import double, steps_to


            def test_steps():
                assert steps_to(3) == 3


            def test_zero():
                assert steps_to(0) == 0


            def test_double():
                assert double(4) == 8
            """,
        },
        # the search settles 3 mutants past the first full fix (the first one screened), not 40: the
        # mutants that still loop each take their whole timeout (10 s of mutate's 13 s before)
        explore_config="\n[tool.explore.mutate]\npatience = 3\n",
    )
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--test-timeout", "3", "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded"
    assert re.search(r"[\d.]+s baseline: 2/3 passed", err), err
    assert "overran the per-test limit (outcome timeout): tests/test_walk.py::test_steps" in err
    assert summary["final"]["pass_rate"] == 100.0 and "i -= 1" not in (repo / "walk.py").read_text()
    assert_no_debris(repo)
    assert not _pytest_children(str(repo)) and not _pytest_children(str(tmp_path / "worktrees"))


def test_the_plugins_constants_are_explores() -> None:
    """The plugin runs in the project's interpreter and imports nothing of explore: the constants
    both sides read (the hard-timeout exit code, the timeout's mark, the lowering factor) are kept
    in step by this test."""
    plugin = (Path(__file__).parents[1] / "src/explore/pytest_plugin/_explore_test_limit.py").read_text()
    assert f"HARD_EXIT = {HARD_EXIT}" in plugin
    assert f'MARK = "{TIMEOUT_MARK}"' in plugin
    assert f"FACTOR = {TEST_TIMEOUT_FACTOR}" in plugin


LOCKED = {
    "tests/test_locked.py": """\
        import gc
        import threading
        import time

        LOCK = threading.Lock()


        class Holder:
            def __init__(self):
                self.me = self  # a cycle: only the garbage collector frees it

            def __del__(self):
                with LOCK:  # waits for the stuck test below, which holds the lock forever
                    pass


        def test_stuck():
            gc.collect()
            with LOCK:
                for _ in range(600):  # garbage the next collection would free, running __del__
                    Holder()
                while True:
                    try:
                        time.sleep(0.05)
                    except BaseException:  # ignores the soft limit
                        pass


        def test_after():
            assert True
        """,
}


@pytest.mark.anyio
async def test_the_watchdog_fires_when_a_del_would_wait_on_the_stuck_tests_lock(tmp_path: Path) -> None:
    """Issue 30: formatting the stuck stack in the dying process ran a garbage collection, whose
    __del__ waited on the lock the stuck test held: the hard limit never fired. Now the run ends
    within the hard limit (1 s + 2 s grace) and a few seconds, the test `timeout`, its stack read
    from faulthandler's file, with source lines added outside the process."""
    import time

    import anyio

    repo = make_repo(tmp_path / "repo", LOCKED)
    started = time.monotonic()
    with anyio.fail_after(60):  # before: hung for good
        run = await run_tests(TestCommand(python=sys.executable, test_timeout=1.0), repo, tmp_path / "run.log")
    assert time.monotonic() - started < 3 + 20  # the hard limit, then two pytest start-ups (a loaded machine's)
    stuck = run.outcomes["tests/test_locked.py::test_stuck"]
    assert stuck.outcome == "timeout" and "ignored the signal" in stuck.message
    assert "in test_stuck" in stuck.longrepr and "time.sleep(0.05)" in stuck.longrepr
    assert "_give_up" not in stuck.longrepr  # the watchdog's own thread is left out
    assert run.outcomes["tests/test_locked.py::test_after"].outcome == "passed"
    assert not _pytest_children(str(repo))
