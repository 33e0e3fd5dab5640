"""Issue 40.6: a big suite never goes quiet. A running pytest writes how far it has gone (explore's
plugin, EXPLORE_PROGRESS beside the job's log), the run reads it every few seconds (run/progress)
and the display shows it: in the live view's header, and as periodic lines when piped."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import anyio
import git
import pytest
from rich.console import Console

from conftest import make_repo
from explore.cli.live import Display
from explore.edges import procs, progress
from explore.edges.testing import TestCommand
from explore.edges.worktrees import WorktreePool
from explore.executors.jobs import JobStatus, TestJob
from explore.executors.local import LocalExecutor
from explore.model.events import Event, TestsProgress
from explore.run import progress as watching

PEEK = """\
import os


def test_one():
    pass


def test_two():
    assert os.environ["EXPLORE_PROGRESS"] == "", "fails: an x"


def test_sees_its_own_progress():
    with open(os.environ["EXPLORE_PROGRESS"], "rb") as source:
        assert source.read() == b"4\\n.x", "collected 4, two done before this one, the second failed"


def test_four():
    pass
"""


@pytest.mark.anyio
async def test_a_running_pytest_appends_each_test_to_its_progress_file(tmp_path: Path) -> None:
    """The third test reads the file while the run goes: the count, a dot and an x (the second
    test failed), written as each test ended (fails without: no such variable, no file; a dot for
    the failed test before issue 40.1's stop on a failure)."""
    repo = make_repo(tmp_path / "repo", {"tests/test_peek.py": PEEK})
    pool = WorktreePool(git.Repo(repo), repo, tmp_path / "worktrees" / "run")
    executor = LocalExecutor(pool=pool, tracker=procs.ProcessTracker(), parallel=1)
    commit = git.Repo(repo).head.commit.hexsha
    try:
        job = TestJob(id="peek", command=TestCommand(python=sys.executable), commit=commit, log_name="tests.log")
        done = await executor.run(job, tmp_path / "logs")
    finally:
        pool.remove_all()
    assert done.status == JobStatus.ok and done.run.exit_code == 1, done.log
    outcomes = {i.rsplit("::", 1)[-1]: o.outcome for i, o in done.run.outcomes.items()}
    assert outcomes == {
        "test_one": "passed",
        "test_two": "failed",
        "test_sees_its_own_progress": "passed",
        "test_four": "passed",
    }
    assert progress.read(tmp_path / "logs" / "tests.progress") == (4, 4)
    assert progress.failures(tmp_path / "logs" / "tests.progress") == 1
    assert progress.failed_ids(tmp_path / "logs" / "tests.progress") == {"tests/test_peek.py::test_two"}


@pytest.mark.anyio
async def test_the_run_reads_the_jobs_shards_together_every_few_seconds(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "iteration-1" / "candidate-a").mkdir(parents=True)
    (run_dir / "baseline.shard-1.progress").write_bytes(b"1200\n" + b"." * 700)
    (run_dir / "baseline.shard-2.progress").write_bytes(b"1321\n" + b"." * 500)
    (run_dir / "iteration-1" / "candidate-a" / "tests.progress").write_bytes(b"2521\n" + b"." * 2521)  # over
    (run_dir / "iteration-1" / "candidate-a" / "affected.progress").write_bytes(b"")  # not collected yet
    seen: list[Event] = []
    heard = anyio.Event()

    def emit(event: Event) -> None:
        seen.append(event)
        heard.set()

    async with anyio.create_task_group() as group:
        group.start_soon(watching.watch, run_dir, emit, 0.05)
        await heard.wait()
        group.cancel_scope.cancel()
    assert seen == [TestsProgress("baseline", 1200, 2521)]
    assert watching.label("iteration-2/candidate-b/tests") == "[b] full suite"


def test_piped_progress_is_a_line_every_few_seconds_and_live_it_is_in_the_header(capsys) -> None:
    display = Display("lines")
    display.handle(TestsProgress("baseline", 1200, 2521))
    display.handle(TestsProgress("baseline", 1300, 2521))  # within PROGRESS_EVERY_S: not printed
    display.handle(TestsProgress("[a] full suite", 10, 2521))
    err = capsys.readouterr().err
    assert "baseline: 1,200/2,521 tests run" in err and "1,300" not in err, err
    assert "[a] full suite: 10/2,521 tests run" in err, err
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(display.view)
    assert "baseline: 1,300/2,521 tests run" in console.export_text()


def test_how_far_a_job_went_sums_its_shards(tmp_path: Path) -> None:
    """What a baseline over its limit says of itself (issue 39 point 8): tests run, collected, failed."""
    (tmp_path / "baseline.shard-1.progress").write_bytes(b"1200\n" + b"." * 690 + b"x" * 10)
    (tmp_path / "baseline.shard-2.progress").write_bytes(b"1003\n" + b".x" * 250)
    (tmp_path / "baseline-rerun-1.progress").write_bytes(b"3\n...")  # another job
    (tmp_path / "since.progress").write_bytes(b"")  # not collected yet
    assert progress.of_job(tmp_path, "baseline") == (1200, 2203, 260)
    assert progress.of_job(tmp_path, "baseline-rerun-1") == (3, 3, 0)
    assert progress.of_job(tmp_path, "since") is None and progress.of_job(tmp_path, "resume-1") is None
