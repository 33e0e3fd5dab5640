"""Issue 40.3: mutate's per-test coverage of a big suite without a tracer on the whole baseline. Without
sys.monitoring (Python < 3.12) coverage.py's trace function slows every test; a baseline of
focus.TRACE_MOST tests or more stops tracing before its first test, and propose measures the failing
tests' own files alone. Real pytest runs of the plugin, a real proposal (fork workers, screening)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import git, make_repo
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand, run_tests
from explore.generators.base import ProposalRequest
from explore.generators.mutate import MutateGenerator, focus, localise

PROJECT = {
    "shop.py": "def total(prices, discount):\n    subtotal = sum(prices)\n    if subtotal > 100:\n"
    "        subtotal = subtotal - discount\n    return subtotal\n",
    "tests/test_shop.py": "from shop import total\n\n\ndef test_small():\n    assert total([10, 20], 5) == 30\n\n\n"
    "def test_at_threshold():\n    assert total([60, 40], 5) == 95\n\n\n"
    "def test_big():\n    assert total([100, 50], 10) == 140\n",
    "tests/test_other.py": "from shop import total\n\n\ndef test_empty():\n    assert total([], 5) == 0\n",
}
FAILING = ["tests/test_shop.py::test_at_threshold"]
SHOP = {"tests/test_shop.py::test_small", "tests/test_shop.py::test_big", *FAILING}
no_monitoring = pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+: sys.monitoring records every baseline")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    repo = make_repo(tmp_path / "repo", PROJECT)
    work = tmp_path / "scratch"
    git(repo, "worktree", "add", "--detach", str(work))
    yield repo, work
    git(repo, "worktree", "remove", "--force", str(work))


def measured_tests(result: dict) -> set[str]:
    return {t for info in result["trace"]["files"].values() for ts in info["contexts"].values() for t in ts}


@no_monitoring
@pytest.mark.anyio
async def test_a_big_suites_baseline_runs_untraced_and_propose_measures_the_failing_tests_files(
    scratch: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, work = scratch
    head = git(repo, "rev-parse", "HEAD")
    generator = MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 60}})
    monkeypatch.setattr(focus, "TRACE_MOST", 4)  # this 4-test suite counts as big
    monkeypatch.setattr(focus, "CONTRAST_FLOOR_S", 0.0)  # the contrast bounded by the failing test's 1 s alone
    run_dir = tmp_path / "run"
    command = TestCommand(python=sys.executable)
    baseline = TestCommand(python=sys.executable, extra_env=generator.baseline_env(run_dir, head, []))
    # the loop's baseline, mutate's plugin riding along
    run = await run_tests(baseline, work, tmp_path / "logs" / "base.log")
    result = run_dir / "mutate-baseline" / "coverage-run.json"
    carried = json.loads(result.read_text())
    assert carried == {"status": "skipped", "reason": focus.BIG_REASON} and focus.too_big(result)
    request = ProposalRequest(
        repo_root=repo,
        scratch=work,
        current_commit=head,
        base_commit=head,
        n=1,
        iteration=1,
        strategy=load_strategies()["conservative"],
        failing=[o for o in run.outcomes.values() if o.outcome == "failed"],
        passing=sorted(run.passing()),
        test_command=command,
        run_dir=run_dir,
        durations={FAILING[0]: 1.0, "tests/test_shop.py::test_big": 1.0, "tests/test_shop.py::test_small": 1.5}
        | {"tests/test_other.py::test_empty": 0.1},
    )
    assert [t.id for t in request.failing] == FAILING
    proposal = await generator.propose(request)
    assert proposal.plans and "-    if subtotal > 100:\n+    if subtotal >= 100:\n" in proposal.plans[0].patch
    # its own run: test_shop.py alone, and of its passing tests test_big (1 s) within 2 x the failing test's 1 s
    measured = json.loads((run_dir / "mutate" / "coverage-run.json").read_text())
    assert measured_tests(measured) - {localise.IMPORT_TIME} == SHOP - {"tests/test_shop.py::test_small"}
    assert git(work, "status", "--porcelain") == ""


def test_the_focus_is_the_failing_tests_files_with_their_passing_tests(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    for name in ("test_a.py", "test_b.py", "-p.py"):
        (tmp_path / "tests" / name).write_text("")
    (tmp_path / "-x.py").write_text("")
    passing = ["tests/test_a.py::test_ok", "tests/test_b.py::test_ok", "tests/test_a.py::TestX::test_y[1]"]
    found = focus.focus(["tests/test_a.py::TestX::test_z[2]"], passing, tmp_path)
    assert found.files == ["tests/test_a.py"] and found.left_out == []
    assert found.contrast == ["tests/test_a.py::test_ok", "tests/test_a.py::TestX::test_y[1]"]
    # a failing id that names no file (a collection error), or one pytest would read as an option: the whole suite
    for odd in ("<collection>", "tests/gone.py::t", "-x.py::t"):
        assert focus.focus(["tests/test_a.py::t", odd], passing, tmp_path) == focus.Focus([], passing)
    assert focus.focus([], passing, tmp_path) == focus.Focus([], passing)


def test_the_contrast_is_the_failing_tests_classes_first_then_the_cheapest_within_a_time_bound() -> None:
    failing = ["t.py::TestA::test_bad[1]", "t.py::test_bad"]
    passing = ["t.py::TestA::test_slow", "t.py::TestB::test_quick", "t.py::TestA::test_bad[2]", "t.py::test_mid"]
    seconds = {"t.py::TestA::test_bad[1]": 2.0, "t.py::test_bad": 1.0, "t.py::TestA::test_slow": 4.0}
    seconds |= {"t.py::TestB::test_quick": 0.1, "t.py::TestA::test_bad[2]": 1.5, "t.py::test_mid": 0.5}
    # bound max(5, 2 x 3 s) = 6 s: the failing tests' scopes (TestA, the module) cheapest first — 0.5 + 1.5 + 4.0
    assert focus.contrast(failing, passing, seconds) == [
        "t.py::TestA::test_slow",
        "t.py::TestA::test_bad[2]",
        "t.py::test_mid",
    ]
    seconds["t.py::TestA::test_slow"] = 9.0  # over the bound: the cheapest of the rest still fit
    assert focus.contrast(failing, passing, seconds) == [
        "t.py::TestB::test_quick",
        "t.py::TestA::test_bad[2]",
        "t.py::test_mid",
    ]
    del seconds["t.py::test_mid"]  # a test without a recorded time: nothing to bound by, all of them
    assert focus.contrast(failing, passing, seconds) == passing


REPORTED = {
    "shop.py": "import threading\n\n\ndef total(prices):\n    return sum(prices)\n\n\n"
    "def note(when):\n    return when.upper()\n\n\n"
    "def in_thread(prices):\n    out = []\n    worker = threading.Thread(target=lambda: out.append(total(prices)))\n"
    "    worker.start()\n    worker.join()\n    return out[0]\n",
    "conftest.py": "import shop\n\n\ndef pytest_runtest_logreport(report):\n    shop.note(report.when)\n",
    "tests/test_shop.py": "from shop import in_thread, total\n\n\ndef test_sum():\n    assert total([1, 2]) == 3\n\n\n"
    "def test_fails():\n    assert total([1]) == 2\n\n\n"
    "def test_thread():\n    assert in_thread([3]) == 3\n\n\n"
    "def test_after_thread():\n    assert total([4]) == 4\n",
}


@no_monitoring
def test_pytests_own_work_between_a_tests_phases_runs_untraced(tmp_path: Path) -> None:
    """Before 3.12 the tracer runs only during each test's setup, call and teardown (_lines.Pauser):
    project code pytest runs between them — here a conftest's logreport hook — is no test's line.
    Fails without the pause: `note`'s body (line 9) is recorded under every test. A thread a test
    starts keeps the tracer on from then on, its lines and the later tests' recorded."""
    repo = make_repo(tmp_path / "repo", REPORTED)
    result = tmp_path / "run" / "coverage-run.json"
    env = {**os.environ, **localise.coverage_env(None, tmp_path / "run", "baseline", result)}
    env["PYTHONPATH"] = os.pathsep.join([str(repo), env["PYTHONPATH"]])
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", localise.PLUGIN_NAME]
    subprocess.run(cmd, cwd=repo, env=env, capture_output=True, timeout=300)
    raw = json.loads(result.read_text())
    assert raw["tracer"] == "coverage"
    lines = {int(n): set(ts) for n, ts in raw["trace"]["files"]["shop.py"]["contexts"].items()}
    tests = {f"tests/test_shop.py::test_{name}" for name in ("sum", "fails", "thread", "after_thread")}
    assert lines[5] == tests  # total's body, in the thread too
    threaded = {"tests/test_shop.py::test_thread", "tests/test_shop.py::test_after_thread"}
    assert lines.get(9, set()) <= threaded  # note's body, run by pytest's reporting: traced only once a thread was
    assert lines[14] == {"tests/test_shop.py::test_thread"}  # the thread's lambda
