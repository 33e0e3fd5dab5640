"""Issue 6's acceptance: Ctrl-C / SIGTERM mid fan-out, and two runs on one repository.

Synchronisation is by FIFOs only: each blocked agent writes "<candidate> <pid>" to a readiness FIFO
the test reads with a timeout, then blocks opening a FIFO nobody ever writes."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from conftest import git, make_repo, run_cli
from explore.run.state import lock_path
from test_run_e2e import CALC, FIX_ADD, FIX_MUL
from test_safety_faults import assert_nothing_left, kill_everything_under, scripted_agent, write_edits


class Ready:
    """The read end of the readiness FIFO (plus a write end of our own, so it never reads EOF)."""

    def __init__(self, folder: Path) -> None:
        self.path, self.gate = folder / "ready.fifo", folder / "gate.fifo"
        os.mkfifo(self.path)
        os.mkfifo(self.gate)
        self.fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self.keep = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        self.buffer = b""

    def wait(self, count: int, timeout: float = 60.0) -> dict[str, int]:
        """Block until `count` agents said they are ready: {candidate: pid}."""
        lines: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(lines) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"only {len(lines)} of {count} agents became ready: {lines}"
            readable, _, _ = select.select([self.fd], [], [], left)
            if readable:
                self.buffer += os.read(self.fd, 4096)
                *done, self.buffer = self.buffer.split(b"\n")
                lines += done
        return {cid: int(pid) for cid, pid in (line.decode().split() for line in lines)}

    def blocking_test(self) -> str:
        """A test file whose test reports its pid, then blocks until the gate opens."""
        return (
            "import os\n\n"
            "def test_block():\n"
            f"    fd = os.open({str(self.path)!r}, os.O_WRONLY)\n"
            "    os.write(fd, f'test {os.getpid()}\\n'.encode())\n"
            f"    open({str(self.gate)!r}).read()\n"
        )

    def close(self) -> None:
        os.close(self.fd)
        os.close(self.keep)


@contextmanager
def explore_process(args: list[str], tmp_path: Path, name: str = "first"):
    """A real `python -m explore` process with stdout/stderr in files; always reaped."""
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "explore", *args], stdout=stdout, stderr=stderr, text=True)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


BLOCK_ALL = lambda ready: {cid: {"block": [str(ready.path), str(ready.gate)]} for cid in "abc"}  # noqa: E731


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_fan_out_exits_130_within_5s_leaves_nothing_and_resume_completes(
    tmp_path: Path, signum: int
) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    worktrees = tmp_path / "worktrees"
    pidlog = tmp_path / "agents.pids"
    ready = Ready(tmp_path)
    agent = scripted_agent(tmp_path, {**BLOCK_ALL(ready), "pidlog": str(pidlog)})
    try:
        with explore_process(["run", str(repo), "--parallel", "3", "--agent-cmd", agent, "--json"], tmp_path) as proc:
            agents = ready.wait(3)
            assert sorted(agents) == ["a", "b", "c"]
            (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
            listed = git(repo, "worktree", "list", "--porcelain")
            # the user's + a, b, c, and the slot of the baseline's flaky rerun, which runs beside the
            # proposal (issue 40.4) when the agents start before it ends
            assert all(f"/{c}\n" in listed for c in "abc") and listed.count("worktree ") in (4, 5), listed
            sent = time.monotonic()
            proc.send_signal(signum)
            code = proc.wait(timeout=30)
            elapsed = time.monotonic() - sent
        err = (tmp_path / "first.err").read_text()
        assert code == 130, err
        assert elapsed <= 5.0, f"took {elapsed:.1f}s to stop"
        assert "Traceback" not in err
        summary = json.loads((tmp_path / "first.out").read_text().strip().splitlines()[-1])
        assert summary["status"] == "interrupted" and summary["exit_code"] == 130
        assert all(gone(pid) for pid in agents.values()), agents
        state = json.loads(state_file.read_text())
        assert state["status"] == "interrupted" and state["worktrees"] == [] and state["pids"] == []
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(state["branch"],))
        assert git(repo, "rev-parse", "HEAD") == git(
            repo, "rev-list", "--max-parents=0", "HEAD"
        )  # user's branch untouched

        write_edits(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}, "pidlog": str(pidlog)})
        code, summary, err = run_cli(["resume", "--json"], cwd=repo)
        assert code == 0, err[-3000:]
        assert summary["run_id"] == state_file.parent.name and summary["status"] == "succeeded"
        assert "return a + b" in (repo / "calc.py").read_text() and "return a * b" in (repo / "calc.py").read_text()
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(summary["branch"],))
    finally:
        ready.close()
        kill_everything_under(worktrees, repo)


def test_signal_while_tests_run_kills_the_test_processes(tmp_path: Path) -> None:
    """Ctrl-C while the baseline pytest is running (a test blocked on a FIFO): its whole tree dies."""
    ready = Ready(tmp_path)
    files = dict(CALC)
    files["tests/test_block.py"] = ready.blocking_test()
    repo = make_repo(tmp_path / "repo", files)
    worktrees = tmp_path / "worktrees"
    try:
        with explore_process(["run", str(repo), "--agent-cmd", "true"], tmp_path) as proc:
            pids = ready.wait(1)
            proc.send_signal(signal.SIGINT)
            sent = time.monotonic()
            code = proc.wait(timeout=30)
            elapsed = time.monotonic() - sent
        assert code == 130 and elapsed <= 5.0, ((tmp_path / "first.err").read_text(), elapsed)
        assert gone(pids["test"])
        assert_nothing_left(
            repo,
            worktrees,
            keep_branches=tuple(git(repo, "branch", "--list", "--format=%(refname:short)", "explore/*").split()),
        )
    finally:
        ready.close()
        kill_everything_under(worktrees, repo)


def _start_blocked_first_run(tmp_path: Path, ready: Ready) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "repo", CALC)
    return repo, scripted_agent(tmp_path, BLOCK_ALL(ready))


def test_second_concurrent_run_exits_2_and_the_first_is_unharmed(tmp_path: Path) -> None:
    ready = Ready(tmp_path)
    repo, agent = _start_blocked_first_run(tmp_path, ready)
    worktrees = tmp_path / "worktrees"
    try:
        with explore_process(["run", str(repo), "--parallel", "1", "--agent-cmd", agent], tmp_path) as first:
            ready.wait(1)
            lock = json.loads(lock_path(repo).read_text())
            assert lock["pid"] == first.pid
            code, summary, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"])
            assert code == 2, err
            assert summary["status"] == "error" and summary["exit_code"] == 2
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
            assert "another explore run" in err and f"pid {first.pid}" in err
            assert len(list((repo / ".explore" / "runs").iterdir())) == 1  # the second wrote no run
            assert len(git(repo, "branch", "--list", "explore/*").split()) == 1
            # resume is refused too while the first is alive
            code, _, err = run_cli(["resume"], cwd=repo)
            assert code == 2 and "still running" in err and len(err.strip().splitlines()) == 1
            assert first.poll() is None
            first.send_signal(signal.SIGINT)
            assert first.wait(timeout=30) == 130
        assert_nothing_left(
            repo,
            worktrees,
            keep_branches=tuple(git(repo, "branch", "--list", "--format=%(refname:short)", "explore/*").split()),
        )
    finally:
        ready.close()
        kill_everything_under(worktrees, repo)


def test_second_concurrent_run_names_the_first_runs_id(tmp_path: Path) -> None:
    ready = Ready(tmp_path)
    repo, agent = _start_blocked_first_run(tmp_path, ready)
    worktrees = tmp_path / "worktrees"
    try:
        with explore_process(["run", str(repo), "--parallel", "1", "--agent-cmd", agent], tmp_path) as first:
            ready.wait(1)
            (run_dir,) = (repo / ".explore" / "runs").iterdir()
            code, _, err = run_cli(["run", str(repo), "--parallel", "1", "--agent-cmd", agent])
            first.send_signal(signal.SIGINT)
            first.wait(timeout=30)
        assert code == 2 and run_dir.name in err, err
    finally:
        ready.close()
        kill_everything_under(worktrees, repo)


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    files = dict(CALC, **{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"})
    repo = make_repo(tmp_path / "repo", files)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (repo / ".explore").mkdir()
    lock_path(repo).write_text(json.dumps({"pid": dead.pid, "run_id": "20200101-000000-dead", "started": 0.0}))
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "true", "--json"])
    assert code == 0, err
    assert summary["status"] == "succeeded"
    assert not lock_path(repo).exists()


# ---------------------------------------------------------------------------- issue 38's three cases


def once_blocking_test(ready: Ready) -> str:
    """A test that, while the readiness FIFO exists, reports its pid and blocks until the gate opens;
    once the test (the harness) has removed the FIFO, it passes at once."""
    return (
        "import os\n\n"
        "def test_block():\n"
        f"    if not os.path.exists({str(ready.path)!r}):\n"
        "        return\n"
        f"    fd = os.open({str(ready.path)!r}, os.O_WRONLY)\n"
        "    os.write(fd, f'test {os.getpid()}\\n'.encode())\n"
        f"    open({str(ready.gate)!r}).read()\n"
    )


def test_ctrl_c_in_the_baseline_then_resume_measures_the_baseline_and_merges_the_fix(tmp_path: Path) -> None:
    """Issue 38, case 1: Ctrl-C while the baseline runs left a run with no yardstick, and the resumed
    run scored every candidate against nothing (the fixes 0 %, a syntax error 100 %). The resumed run
    measures the baseline first, as a fresh run does, and merges the two fixes."""
    ready = Ready(tmp_path)
    repo = make_repo(tmp_path / "repo", {**CALC, "tests/test_block.py": once_blocking_test(ready)})
    worktrees = tmp_path / "worktrees"
    broken = {"write": {"calc.py": "def add(:\n"}}
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}, "c": broken})
    try:
        with explore_process(["run", str(repo), "--parallel", "3", "--agent-cmd", agent, "--json"], tmp_path) as proc:
            ready.wait(1)
            ready.path.unlink()  # from now on the test passes at once
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=30)
        assert code == 130, (tmp_path / "first.err").read_text()
        (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
        state = json.loads(state_file.read_text())
        assert state["status"] == "interrupted" and not state.get("baselined") and state["baseline_ids"] == []

        code, summary, err = run_cli(["resume", "--json"], cwd=repo)
        assert code == 0, err[-3000:]
        assert summary["status"] == "succeeded" and summary["run_id"] == state_file.parent.name
        assert summary["baseline"]["total"] == 4 and summary["baseline"]["failed"] == 2, summary["baseline"]
        rates = {c["id"]: c for i in summary["iterations"] for c in i["candidates"] if i["n"] == 1}
        assert rates["c"]["status"] == "rejected" and rates["c"]["score"] == 0.0, rates["c"]
        # a fix scored reads 75 % of the measured yardstick; the other may not be tested at all (its whole
        # run stopped once the first's validated rank outranked it: timing), never scored 0 %
        scored = [rates[cid] for cid in "ab" if rates[cid]["reason"] is None]
        assert scored and all(r["pass_rate"] == 75.0 for r in scored), rates
        assert all("not tested" in (rates[cid]["reason"] or "not tested") for cid in "ab"), rates
        assert "return a + b" in (repo / "calc.py").read_text() and "return a * b" in (repo / "calc.py").read_text()
        assert_nothing_left(repo, worktrees, keep_branches=(f"explore/{summary['run_id']}",))
    finally:
        ready.close()
        kill_everything_under(worktrees, repo)


def test_two_checkouts_of_one_repository_share_one_lock_and_the_other_checkouts_commit_stays(tmp_path: Path) -> None:
    """Issue 38, case 3: a run in one checkout, a second checkout of the repository (`git worktree
    add`): a run there is refused, naming the first run and its checkout; a commit the user makes
    there while the first run's candidate works is neither reverted nor blamed on the candidate."""
    repo = make_repo(tmp_path / "repo", CALC)
    second = tmp_path / "second"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(second))
    worktrees = tmp_path / "worktrees"
    ready = Ready(tmp_path)
    agent = scripted_agent(
        tmp_path,
        {
            "a": {"replace": FIX_ADD, "block": [str(ready.path), str(ready.gate)]},
            "2a": {"replace": FIX_MUL},
            "3a": {"replace": FIX_MUL},
        },
    )
    try:
        with explore_process(["run", str(repo), "--parallel", "1", "--agent-cmd", agent, "--json"], tmp_path) as first:
            ready.wait(1)
            (run_dir,) = (repo / ".explore" / "runs").iterdir()
            code, summary, err = run_cli(["run", str(second), "--parallel", "1", "--agent-cmd", agent, "--json"])
            assert code == 2 and summary is not None and summary["status"] == "error", err
            assert run_dir.name in err and str(repo) in err and f"pid {first.pid}" in err, err
            assert not (second / ".explore" / "runs").exists() or not any((second / ".explore" / "runs").iterdir())

            (second / "notes.txt").write_text("mine\n")
            git(second, "add", "notes.txt")
            git(second, "-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m", "user commit")
            mine = git(second, "rev-parse", "HEAD")
            gate = os.open(ready.gate, os.O_WRONLY)  # the candidate goes on
            os.close(gate)
            code = first.wait(timeout=300)
        err = (tmp_path / "first.err").read_text()
        assert code == 0, err[-3000:]
        out = json.loads((tmp_path / "first.out").read_text().strip().splitlines()[-1])
        assert out["status"] == "succeeded" and out["applied"], out
        first_iteration = {c["id"]: c for c in out["iterations"][0]["candidates"]}
        assert first_iteration["a"]["status"] == "ok", first_iteration["a"]
        assert git(repo, "rev-parse", "feature") == mine  # the user's commit stays
        assert git(second, "status", "--porcelain") == ""
        assert (second / "notes.txt").read_text() == "mine\n"
        assert "return a * b" in (repo / "calc.py").read_text()
    finally:
        ready.close()
        kill_everything_under(worktrees, repo, second)
        git(repo, "worktree", "remove", "--force", str(second))
