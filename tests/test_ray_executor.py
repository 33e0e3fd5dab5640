"""The Ray executor against a real local Ray (one `ray start --head` for the module): the same
outcomes as the local executor, a worker killed mid-job, cancellation, and clear exit-2 errors."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import git
import psutil
import pytest

from conftest import make_repo
from explore.edges import procs
from explore.edges.testing import TestCommand
from explore.edges.worktrees import WorktreePool
from explore.executors import bundle
from explore.executors.jobs import ExecutorName, JobStatus, TestJob
from explore.executors.local import LocalExecutor
from explore.executors.ray import RayExecutor, scratch_root
from explore.model.errors import UsageError

PY = sys.executable
CMD = TestCommand(python=PY)
RUN_ID = f"run-ray-test-{os.getpid()}"  # one per xdist worker: the scratch folder is machine-wide
FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
    # the worker-killing test only acts when its trigger file exists (a patch adds it)
    "tests/test_hooks.py": (
        "import os, pathlib, signal, time\n\n"
        "def test_hook():\n"
        "    marker = pathlib.Path('kill-worker')\n"
        "    if marker.exists():\n"
        "        os.kill(os.getppid(), signal.SIGKILL)\n"
        "    hang = pathlib.Path('hang')\n"
        "    if hang.exists():\n"
        "        pathlib.Path(hang.read_text().strip()).write_text(str(os.getpid()))\n"
        "        time.sleep(600)\n"
    ),
}
FIX = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


def _add_file(name: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


@pytest.fixture(scope="module")
def executor(ray_address: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayExecutor]:
    repo = make_repo(tmp_path_factory.mktemp("ray-repo") / "repo", FILES)
    made = RayExecutor.connect(repo, RUN_ID, address=ray_address)
    try:
        yield made
    finally:
        anyio.run(made.close)
    assert not scratch_root(RUN_ID).exists()


def _commit(executor: RayExecutor) -> str:
    return git.Repo(executor.repo_root).head.commit.hexsha


def _outcomes(result) -> dict[str, str]:
    return {i: o.outcome for i, o in result.run.outcomes.items()}


@pytest.mark.anyio
async def test_a_job_on_ray_has_the_outcomes_of_the_same_job_run_locally(executor: RayExecutor, tmp_path: Path) -> None:
    commit = _commit(executor)
    job = TestJob(command=CMD, id="a-full", commit=commit, patch=FIX, log_name="a.log")
    remote = await executor.run(job, tmp_path / "ray-logs")
    pool = WorktreePool(git.Repo(executor.repo_root), executor.repo_root, tmp_path / "worktrees" / "run")
    local = LocalExecutor(pool=pool, tracker=procs.ProcessTracker(), parallel=1)
    try:
        here = await local.run(job, tmp_path / "local-logs")
    finally:
        pool.remove_all()
    assert remote.status == here.status == JobStatus.ok and remote.executor == ExecutorName.ray
    assert (
        _outcomes(remote)
        == _outcomes(here)
        == {
            "tests/test_calc.py::test_add": "passed",
            "tests/test_calc.py::test_zero": "passed",
            "tests/test_hooks.py::test_hook": "passed",
        }
    )
    assert (
        remote.run.log_path == str(tmp_path / "ray-logs" / "a.log")
        and "3 passed" in Path(remote.run.log_path).read_text()
    )
    assert not any(scratch_root(RUN_ID).rglob("*.log"))  # logs came back; only the worker's tree stays, until close
    unpatched = await executor.run(TestJob(command=CMD, id="base", commit=commit), tmp_path / "ray-logs")
    assert _outcomes(unpatched)["tests/test_calc.py::test_add"] == "failed"


@pytest.mark.anyio
async def test_a_worker_killed_mid_job_makes_the_job_crashed(executor: RayExecutor, tmp_path: Path) -> None:
    job = TestJob(command=CMD, id="b-full", commit=_commit(executor), patch=_add_file("kill-worker", "yes"))
    result = await executor.run(job, tmp_path)
    assert result.status == JobStatus.crashed and result.executor == ExecutorName.ray
    assert result.reason and result.reason.startswith("b-full: the Ray worker died")
    after = await executor.run(
        TestJob(command=CMD, id="c-full", commit=_commit(executor), patch=FIX), tmp_path
    )  # the cluster goes on
    assert after.status == JobStatus.ok


@pytest.mark.anyio
async def test_cancelling_a_job_kills_its_test_run_on_the_worker(executor: RayExecutor, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    job = TestJob(command=CMD, id="d-full", commit=_commit(executor), patch=_add_file("hang", str(pid_file)))
    with anyio.move_on_after(60) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(executor.run, job, tmp_path)
            while not (pid_file.exists() and pid_file.read_text()):  # the test is running on the worker
                await anyio.sleep(0.1)
            group.cancel_scope.cancel()
    assert not scope.cancelled_caught
    test_pid = int(pid_file.read_text())
    gone, alive = psutil.wait_procs([psutil.Process(test_pid)] if psutil.pid_exists(test_pid) else [], timeout=15)
    assert not alive


def test_the_tree_travels_as_a_one_commit_bundle_and_no_ref_is_made(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    refs_before = git.Repo(repo).git.for_each_ref()
    data = bundle.make_bundle(repo, git.Repo(repo).head.commit.hexsha)
    bundle.checkout(data, tmp_path / "out")
    assert (tmp_path / "out" / "calc.py").read_text() == FILES["calc.py"]
    assert git.Repo(tmp_path / "out").git.rev_list("--count", "HEAD") == "1"
    assert git.Repo(repo).git.for_each_ref() == refs_before


def test_an_unreachable_cluster_is_a_usage_error_naming_the_address(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot reach the Ray cluster at 127\.0\.0\.1:1 .*ray start --head"):
        RayExecutor.connect(tmp_path, "x", address="127.0.0.1:1")


def test_without_ray_installed_the_error_says_what_to_install(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['ray'] = None\n"
        "from explore.executors.ray import RayExecutor\n"
        "from explore.model.errors import UsageError\nfrom pathlib import Path\n"
        "try:\n    RayExecutor.connect(Path('.'), 'x')\nexcept UsageError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([PY, "-c", script], capture_output=True, text=True, timeout=60)
    assert "pip install 'explore-runner[ray]'" in done.stdout, done.stderr
