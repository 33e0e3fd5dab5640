"""Issue 27 point 3: a suite of many hanging tests is bounded. After the first hang, each further
test's limit is 5x the slowest passing test (at least the floor, at most the limit), carried into
the process that goes on after a hard timeout; no hung test goes missing, each keeps its stack."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import psutil
import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.edges.outcomes import stuck_at
from explore.edges.testing import HANG_BUDGET, HANG_FLOOR, Hangs, TestCommand, plugin_args, run_tests

LOOPS = 9
DEAF = 7
"""More than six: before, the seventh test that ignored the limit, and every test after it, went missing."""


def _loops(deaf: bool) -> str:
    """A passing test of 0.1 s, LOOPS looping tests (deaf: DEAF tests that ignore the soft limit,
    so only the watchdog ends them, one process each), then a passing test of 0.3 s."""
    body = (
        "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n"
        if deaf
        else "    i = 0\n    while i != -1:\n        i += 2\n"
    )
    loops = "".join(f"\n\ndef test_loop_{n}():\n{body}" for n in range(DEAF if deaf else LOOPS))
    return (
        "import signal\nimport time\n\n\ndef test_first():\n    time.sleep(0.1)\n"
        + loops
        + "\n\ndef test_slow_after():\n    time.sleep(0.3)\n"
    )


def _children(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(marker in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.mark.anyio
async def test_after_a_hang_the_limit_is_lowered_to_a_multiple_of_the_slowest_pass(tmp_path: Path) -> None:
    """Soft hangs, one process: the first waits the full 2 s, the eight others 5 x 0.1 s; the
    0.3 s test after them still passes (under its lowered limit of 0.5 s)."""
    repo = make_repo(tmp_path / "repo", {"tests/test_loops.py": _loops(deaf=False)})
    command = TestCommand(python=sys.executable, test_timeout=2.0, hang_floor=0.2)
    run = await run_tests(command, repo, tmp_path / "run.log")
    outcomes = {i.split("::")[1]: o for i, o in run.outcomes.items()}
    loops = [outcomes[f"test_loop_{n}"] for n in range(LOOPS)]
    assert [o.outcome for o in loops] == ["timeout"] * LOOPS
    assert outcomes["test_first"].outcome == outcomes["test_slow_after"].outcome == "passed"
    assert run.infra_error is None and run.exit_code == 1
    assert 1.9 < loops[0].duration_s < 4 and "lowered" not in loops[0].message
    for hung in loops[1:]:
        assert 0.45 < hung.duration_s < 1.9, hung  # 5 x the 0.1 s pass, not the 2 s limit
        lowered = re.search(r"limit of ([\d.]+)s, lowered from 2s after \d+ hung", hung.message)
        assert lowered and 0.5 <= float(lowered.group(1)) < 1.5, hung.message  # 5 x the first test's time
    for hung in loops:  # each keeps its stack: where it was stuck
        assert "tests/test_loops.py:" in hung.longrepr and "while i != -1:" in hung.longrepr
        assert re.fullmatch(r"tests/test_loops\.py:\d+ `(while i != -1:|i \+= 2)`", stuck_at(hung.longrepr))
    assert sum(o.duration_s for o in loops) < 2 + 8 * 1.5  # against 9 x 2 s before


@pytest.mark.anyio
async def test_hard_hangs_carry_the_lowered_limit_and_none_goes_missing(tmp_path: Path) -> None:
    """Seven tests that ignore the signal end seven processes (there used to be at most six: the
    rest went missing). Each process after the first starts lowered, from the state the hard
    timeout recorded; every hung test is `timeout` with its stack, the test after them passes."""
    repo = make_repo(tmp_path / "repo", {"tests/test_loops.py": _loops(deaf=True)})
    command = TestCommand(python=sys.executable, test_timeout=1.5, hang_floor=0.2)
    run = await run_tests(command, repo, tmp_path / "run.log")
    outcomes = {i.split("::")[1]: o for i, o in run.outcomes.items()}
    loops = [outcomes[f"test_loop_{n}"] for n in range(DEAF)]
    assert [o.outcome for o in loops] == ["timeout"] * DEAF
    assert outcomes["test_first"].outcome == outcomes["test_slow_after"].outcome == "passed"
    assert run.infra_error is None and run.exit_code == 1
    assert "ignored the signal" in loops[0].message and "lowered" not in loops[0].message
    for hung in loops[1:]:
        lowered = re.search(r"limit of ([\d.]+)s, lowered from 1.5s after \d+ hung", hung.message)
        assert lowered and 0.5 <= float(lowered.group(1)) < 1.5, hung.message
        assert hung.duration_s < 1.5 + 1.0  # the lowered limit and its grace (1 s), not the first's (1.5 s + 2 s)
    for n, hung in enumerate(loops):
        assert "in test_loop_" in hung.longrepr  # where it was stuck: `while True:` or `pass`, as below
        assert re.fullmatch(
            rf"/.+/tests/test_loops\.py:\d+ in test_loop_{n} `(while True:|pass)`", stuck_at(hung.longrepr)
        )
    assert (tmp_path / f"run-rest-{DEAF}.log").exists() and not (tmp_path / f"run-rest-{DEAF + 1}.log").exists()
    assert not _children(str(repo))


@pytest.mark.anyio
async def test_a_candidate_that_hangs_one_test_is_still_judged_by_the_baselines_times(tmp_path: Path) -> None:
    """After the baseline, runs (candidates, validation) start from its slowest passing test: a
    candidate that makes one test hang pays the limit once, and a test that took 0.3 s at the
    baseline and 1 s now still gets 5 x 0.3 s after the hang. Without that seed, this run's own
    passes (none yet) would leave it the floor, and it would be cut."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "tests/test_c.py": "import time\n\n\ndef test_hangs_now():\n    while True:\n        pass\n\n\n"
            "def test_slower_now():\n    time.sleep(1.0)\n"
        },
    )
    seeded = TestCommand(python=sys.executable, test_timeout=2.0, hang_floor=0.2, slowest_pass_s=0.3)
    run = await run_tests(seeded, repo, tmp_path / "seeded.log")
    assert run.outcomes["tests/test_c.py::test_hangs_now"].outcome == "timeout"
    assert run.outcomes["tests/test_c.py::test_slower_now"].outcome == "passed"
    unseeded = await run_tests(
        TestCommand(python=sys.executable, test_timeout=2.0, hang_floor=0.2), repo, tmp_path / "unseeded.log"
    )
    cut = unseeded.outcomes["tests/test_c.py::test_slower_now"]
    assert cut.outcome == "timeout" and "limit of 0.2s, lowered from 2s" in cut.message


def test_the_plugin_arguments_carry_the_state() -> None:
    args = plugin_args(30.0, Path("r.record"), Hangs(3, 12.5, 0.25))
    assert args[-4:] == [
        "--explore-test-timeout=30",
        f"--explore-hang-floor={HANG_FLOOR:g}",
        f"--explore-hang-budget={HANG_BUDGET:g}",
        "--explore-hangs=3,12.500,0.250",
    ]
    assert Hangs.parse(Hangs(3, 12.5, 0.25).arg()) == Hangs(3, 12.5, 0.25)
    assert Hangs.parse("garbage") is None
    assert not any("hang" in a for a in plugin_args(None, Path("r.record")))  # no limit, nothing lowered


ODD = (1, 3, 5, 7, 9, 11, 13, 15, 17)


def test_nine_looping_tests_a_baseline_within_a_minute_and_a_repair(tmp_path: Path) -> None:
    """Acceptance (issue 27.3): a bug makes all nine tests loop forever. The baseline (its time as
    the run's own JSON reports it) ends far within 9 x the limit: the first hang waits the limit,
    the others a lowered one; the nine are `timeout`, each with the stack where it was stuck;
    `--agent mutate` repairs it. A 6 s limit, not the default 30 s: the mechanism is the same and CI
    waits 30 s less per hang (the default's value is test_limit_options')."""
    tests = "from loops import count_to\n" + "".join(
        f"\n\ndef test_count_to_{k}():\n    assert count_to({k}) == {k}\n" for k in ODD
    )
    repo = make_repo(
        tmp_path / "repo",
        {
            "loops.py": """\
            def count_to(n):
                \"\"\"How many steps of one from 0 reach n.\"\"\"
                i, steps = 0, 0
                while i != n:
                    i += 2
                    steps += 1
                return steps
            """,
            "tests/test_loops.py": tests,
        },
        # the search settles 3 mutants past the first full fix, not 40: mutants that still loop take
        # their whole timeout, and it spent mutate's whole 60 s on them after finding the fix (86 s of
        # CI's time in this one test)
        explore_config="\n[tool.explore.mutate]\npatience = 3\n",
    )
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--test-timeout", "6", "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded"
    baseline_s = summary["iterations"][0]["timing"]["baseline"]
    assert 6 <= baseline_s < 9 * 6, err  # the first hang waits the full 6 s, the others a lowered limit
    hung = {h["test"]: h for h in summary["baseline_timeouts"]}
    assert sorted(hung) == sorted(f"tests/test_loops.py::test_count_to_{k}" for k in ODD)
    for entry in hung.values():
        assert re.fullmatch(r"loops\.py:[45] `(while i != n:|i \+= 2)`", entry["stuck_at"]), entry
        assert "in count_to" in entry["stack"] or "loops.py:" in entry["stack"]
        assert "ExploreTestTimeout" in entry["message"]
    assert sum("lowered from 6s" in h["message"] for h in hung.values()) == len(ODD) - 1
    assert "9 test(s) overran the per-test limit (outcome timeout)" in err
    assert "i += 1" in (repo / "loops.py").read_text() and summary["final"]["pass_rate"] == 100.0
    report = Path(summary["report"]).read_text()
    assert "## Hung at the baseline (9: outcome timeout)" in report
    assert_no_debris(repo)
    assert not _children(str(repo)) and not _children(str(tmp_path / "worktrees"))
