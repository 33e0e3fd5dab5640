"""The baseline's flaky rerun, screened in mutate's warm worker: a fresh fork of the worker the
warm-up started runs the baseline's failing tests alone; those that fail there again stay failing,
every other one is rerun in a pytest process of its own, and only a pass there makes it flaky. No
fork when the baseline is sandboxed or sharded, or nothing was warmed (a setup command). A fork
never calls flaky a test every pytest process fails (capture, the sandbox, a shard running in its
worktree, an xfail: review R1-R4), and what its tests start dies with it. A test that hangs in the
rerun is stopped at the per-test limit and the tests after it still run. Real git repositories,
real worktrees, real pytest, real fork workers."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import assert_no_debris, git, make_repo
from explore import generators
from explore.edges import gitrepo, history_io, procs
from explore.edges.testing import TestCommand
from explore.generators.base import RerunRequest, WarmUpRequest
from explore.generators.mutate import MutateGenerator
from explore.model.config import build_options
from explore.model.runstate import RunState
from explore.run import state
from explore.run.repair import run_repair

LIB = "def area(w, h):\n    return w + h\n"
TESTS = "from geo.lib import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\ndef test_square():\n    assert area(2, 2) == 4\n"
FLAKY_ID = "tests/test_flaky.py::test_first_run_fails"


def flaky_test(counter: Path) -> str:
    """A test that fails the first time it runs and passes after (a flake of the environment)."""
    return (
        "from pathlib import Path\n\n\ndef test_first_run_fails():\n"
        f"    counter = Path({str(counter)!r})\n"
        "    runs = len(counter.read_text()) if counter.exists() else 0\n"
        "    counter.write_text('x' * (runs + 1))\n"
        "    assert runs > 0, 'fails on its first run only'\n"
    )


class Noting(MutateGenerator):
    """mutate, noting the pids its warm-up started and each rerun it served."""

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.warmed: list[int] = []
        self.served: list[dict[str, str] | None] = []

    async def warm_up(self, request: WarmUpRequest) -> None:
        await super().warm_up(request)
        self.warmed = self._screener.pids() if self._screener else []

    async def rerun_failing(self, request: RerunRequest) -> dict[str, str] | None:
        found = await super().rerun_failing(request)
        self.served.append(found)
        return found


async def repair(repo: Path, generator: MutateGenerator, monkeypatch: pytest.MonkeyPatch, **flags: Any) -> RunState:
    monkeypatch.setattr(generators, "create", lambda name, options: generator)
    options = build_options(repo, {"agent": "mutate", "parallel": 2, **flags})
    info = gitrepo.open_repo(repo)
    state.ensure_writable(info.root)
    run_id = state.new_run_id()
    state.acquire_lock(info.root, run_id)
    try:
        return await run_repair(info, options, lambda event: None, run_id=run_id)
    finally:
        state.release_lock(info.root, run_id)


def flaky_repo(tmp_path: Path) -> tuple[Path, Path]:
    counter = tmp_path / "flaky-runs"
    files = {"geo/__init__.py": "", "geo/lib.py": LIB, "tests/test_lib.py": TESTS}
    return make_repo(tmp_path / "repo", {**files, "tests/test_flaky.py": flaky_test(counter)}), counter


@pytest.mark.anyio
async def test_the_baseline_reruns_its_failing_tests_in_a_fork_of_the_warm_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, counter = flaky_repo(tmp_path)
    generator = Noting({"parallel": 2})
    run = await repair(repo, generator, monkeypatch)
    assert run.status == "succeeded" and run.flaky == [FLAKY_ID]
    assert len(counter.read_text()) >= 3  # the baseline, the fork, the process that confirms it (and candidates)
    served = generator.served[0]
    assert served is not None and served[FLAKY_ID] == "passed"
    assert served["tests/test_lib.py::test_area"] == "failed"  # the bug is no flake
    folder = state.run_dir(repo, run.run_id)
    fork_log = (folder / "baseline-rerun-1-fork.log").read_text()
    assert "fresh fork of mutate's warm screening worker" in fork_log
    assert any(f"pid {pid}" in fork_log for pid in generator.warmed)
    assert f"passed    {FLAKY_ID}" in fork_log and "failed    tests/test_lib.py::test_area" in fork_log
    assert "baseline-rerun-1.log" in fork_log  # where the process that confirms the pass writes
    report = json.loads((folder / "baseline-rerun-1.report").read_text())
    assert [t["nodeid"] for t in report["tests"]] == [FLAKY_ID]  # the fork's failures need no process
    records = history_io.load(repo / ".explore" / "history.jsonl")
    assert records and all(FLAKY_ID in r.flaky for r in records)
    assert not any(psutil.pid_exists(p) for p in generator.warmed)
    assert_no_debris(repo)


@pytest.mark.anyio
@pytest.mark.parametrize("case", ["sandbox required", "nothing warmed (a setup command)"])
async def test_the_rerun_runs_in_a_pytest_process_when_the_workers_cannot_serve_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, request: pytest.FixtureRequest
) -> None:
    flags: dict[str, Any] = {}
    if case == "sandbox required":
        request.getfixturevalue("bwrap")
        monkeypatch.setenv("EXPLORE_SANDBOX", "require")
        flags["sandbox_writable"] = [str(tmp_path)]  # the flaky test's counter
    else:
        flags["worktree_setup"] = "true"
    repo, counter = flaky_repo(tmp_path)
    generator = Noting({"parallel": 2})
    run = await repair(repo, generator, monkeypatch, **flags)
    assert run.status == "succeeded" and run.flaky == [FLAKY_ID], run.stop_reason
    assert generator.served == ([] if case == "sandbox required" else [None])  # not asked / not ready
    assert not (state.run_dir(repo, run.run_id) / "baseline-rerun-1-fork.log").exists()
    folder = state.run_dir(repo, run.run_id)
    assert (folder / "baseline-rerun-1.report").is_file()  # pytest's own report of the rerun
    assert "warm screening worker" not in (folder / "baseline-rerun-1.log").read_text()
    assert_no_debris(repo)


HANGS = """\
import time
from pathlib import Path


def test_hangs_when_rerun():
    marker = Path({marker!r})
    if marker.exists():
        while True:
            time.sleep(0.05)
    marker.write_text("ran")
    assert False, "fails at the baseline"


def test_after_the_hang():
    pass
"""


@pytest.mark.anyio
async def test_a_test_that_hangs_in_the_rerun_is_stopped_at_the_limit_and_the_next_still_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran-once"
    marker.write_text("ran")  # the baseline ran it: from now on it hangs
    root = make_repo(
        tmp_path / "repo",
        {"geo/__init__.py": "", "geo/lib.py": LIB, "tests/test_hang.py": HANGS.format(marker=str(marker))},
    )
    work = tmp_path / "work"
    git(root, "worktree", "add", "-q", "--detach", str(work), "HEAD")
    commit = git(work, "rev-parse", "HEAD")
    tracker = procs.ProcessTracker()
    generator = MutateGenerator({"parallel": 1})
    ids = ["tests/test_hang.py::test_hangs_when_rerun", "tests/test_hang.py::test_after_the_hang"]
    log = tmp_path / "run" / "baseline-rerun-1.log"
    asked = RerunRequest(ids, commit, 1.5, None, log)
    try:
        assert await generator.rerun_failing(asked) is None  # nothing warmed: the run starts a process
        await generator.warm_up(
            WarmUpRequest(work, commit, TestCommand(python=sys.executable), tmp_path / "w", tracker)
        )
        assert generator._screener is not None
        pids = generator._screener.pids()
        assert await generator.rerun_failing(RerunRequest(ids, "0" * 40, 1.5, None, log)) is None  # another commit
        started = time.monotonic()
        found = await generator.rerun_failing(asked)
        seconds = time.monotonic() - started
        assert found == {ids[0]: "timeout", ids[1]: "passed"}
        assert seconds < 30  # bounded by the 1.5 s limit, not by the worker's guard
        assert generator._screener.pids() == pids  # the worker lives on: the hung fork alone was killed
        text = log.read_text()
        assert f"timeout   {ids[0]}" in text and f"passed    {ids[1]}" in text and "2 fork(s)" in text
    finally:
        await generator.aclose()
        tracker.kill_all()
        git(root, "worktree", "remove", "--force", str(work))
    assert not any(psutil.pid_exists(p) for p in pids)


STDIN = {
    "app/__init__.py": "",
    "app/cli.py": "import sys\n\n\ndef count_lines(stream=None):\n"
    "    stream = sys.stdin if stream is None else stream\n    return sum(1 for _ in stream)\n",
    "tests/test_cli.py": "from app.cli import count_lines\n\n\ndef test_count_lines_of_empty_stdin():\n"
    "    assert count_lines() == 0\n\n\ndef test_count_lines_of_a_list():\n"
    "    assert count_lines(['a\\n', 'b\\n']) == 2\n",
}
WRITES_TMP = """\
import json
from pathlib import Path


def test_settings_saved():
    path = Path({path!r})
    path.write_text(json.dumps({{"a": 1}}))
    assert json.loads(path.read_text()) == {{"a": 1}}
"""
SHARDS = {
    "tests/test_quick.py": "import time\nfrom pathlib import Path\n\n\ndef test_slow_writer():\n"
    "    Path('job.lock').write_text('busy')\n    time.sleep(4)\n    Path('job.lock').unlink()\n",
    "tests/test_slow.py": "from pathlib import Path\n\n\ndef test_needs_lock():\n"
    "    assert Path('job.lock').exists()\n",
}
XFAILS = """\
from pathlib import Path

import pytest


def test_fails_then_xfails():
    counter = Path({counter!r})
    runs = len(counter.read_text()) if counter.exists() else 0
    counter.write_text("x" * (runs + 1))
    if runs:
        pytest.xfail("from its second run on")
    assert False, "fails on its first run"
"""


@pytest.mark.anyio
@pytest.mark.parametrize("case", ["stdin", "sandboxed baseline", "sharded", "xfail"])
async def test_a_test_every_pytest_process_fails_is_never_flaky(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, request: pytest.FixtureRequest
) -> None:
    """Review R1-R4: each passed in the fork (or was mapped to a pass) and the run ended
    `succeeded`, the failure left out as flaky."""
    flags: dict[str, Any] = {"max_iterations": 1}
    monkeypatch.setenv("EXPLORE_SANDBOX", "off")
    files: dict[str, str] = {"app/__init__.py": ""}
    if case == "stdin":  # capture is off in the fork: its stdin is /dev/null, not pytest's
        files = STDIN
        failing = "tests/test_cli.py::test_count_lines_of_empty_stdin"
    elif case == "sandboxed baseline":  # the sandbox's /tmp is read-only, not the fork's
        request.getfixturevalue("bwrap")
        monkeypatch.setenv("EXPLORE_SANDBOX", "auto")
        target = Path("/tmp") / f"explore-rerunfix-{tmp_path.name}.json"
        request.addfinalizer(lambda: target.unlink(missing_ok=True))
        files = {**files, "tests/test_store.py": WRITES_TMP.format(path=str(target))}
        failing = "tests/test_store.py::test_settings_saved"
    elif case == "sharded":  # the fork would run in shard 1's worktree while shard 1 runs there
        files = {**files, **SHARDS}
        failing = "tests/test_slow.py::test_needs_lock"
        flags["shards"] = 2
    else:  # an xfail is no pass
        counter = tmp_path / "xf-runs"
        files = {**files, "tests/test_xf.py": XFAILS.format(counter=str(counter))}
        failing = "tests/test_xf.py::test_fails_then_xfails"
    repo = make_repo(tmp_path / "repo", files)
    generator = Noting({"parallel": 2})
    run = await repair(repo, generator, monkeypatch, **flags)
    assert run.flaky == [] and run.status != "succeeded", (run.status, run.flaky, run.stop_reason)
    assert failing in run.current_failing
    if case in ("sandboxed baseline", "sharded"):
        assert generator.served == []  # the fork is not asked
    else:
        assert generator.served and generator.served[0] is not None  # the fork ran, a process confirmed
        # the fork runs under pytest's capture now (stdin is pytest's, not /dev/null): it fails as pytest does
        assert generator.served[0][failing] == ("failed" if case == "stdin" else "xfailed")
    assert_no_debris(repo)


LEAVES_A_PROCESS = """\
import subprocess


def test_starts_a_server_and_fails():
    server = subprocess.Popen(["sleep", "247"])
    with open({pids!r}, "a") as handle:
        handle.write(f"{{server.pid}}\\n")
    assert False, "fails before it stops its server"
"""


@pytest.mark.anyio
async def test_what_a_forked_test_starts_does_not_outlive_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review R5: a fork child's process group was killed only on timeout."""
    monkeypatch.setenv("EXPLORE_SANDBOX", "off")
    pids = tmp_path / "started"
    repo = make_repo(
        tmp_path / "repo",
        {
            "geo/__init__.py": "",
            "geo/lib.py": LIB,
            "tests/test_lib.py": TESTS,
            "tests/test_server.py": LEAVES_A_PROCESS.format(pids=str(pids)),
        },
    )
    generator = Noting({"parallel": 2})
    run = await repair(repo, generator, monkeypatch, max_iterations=1)
    assert generator.served and generator.served[0] is not None  # the rerun ran in a fork
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) >= 2  # the baseline and the fork, and any screening fork that ran it
    alive = [p for p in started if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    for pid in alive:  # no debris even when it fails
        psutil.Process(pid).kill()
    assert alive == [], run.stop_reason
    assert_no_debris(repo)
