"""Issue 38 point 2: what a candidate wrote into the user's checkout (the sandbox off) is put back on
every way a fan-out can end short — SIGINT, SIGTERM, SIGHUP, an error of explore's own inside the
fan-out, the candidates' agents lost (killed under it) — before the process exits, and the run's state
and report name what was put back.

One scenario for all five: three candidates, a writes the user's calc.py and blocks, b and c block
(FIFOs, no sleeps); the test then stops the run its way. SIGHUP is the terminal closing: the run's
stdin, stdout and stderr are a pseudo-terminal, its controlling one, whose master the test closes (the
kernel hangs it up, then signals the run; every later write to it fails)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import git, make_repo
from test_run_e2e import CALC
from test_safety_faults import assert_nothing_left, kill_everything_under, scripted_agent
from test_safety_signals import Ready, explore_process

WAYS = ["SIGINT", "SIGTERM", "SIGHUP", "exception", "agents-lost"]

CONTROLLING = (
    "import os, sys; os.close(os.open(os.ttyname(0), os.O_RDWR)); "  # a session leader's first tty: its own
    "os.execv(sys.executable, [sys.executable, '-m', 'explore', *sys.argv[1:]])"
)


@contextmanager
def on_a_terminal(args: list[str], tmp_path: Path) -> Iterator[tuple[subprocess.Popen, list[int]]]:
    """`explore ARGS` in a session of its own on a pseudo-terminal (its controlling terminal); the
    list holds the master's fd: close it to hang the terminal up. What it prints is drained to
    tmp_path/first.err."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", CONTROLLING, *args], stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    held, stop = [master], threading.Event()

    def drain() -> None:
        with (tmp_path / "first.err").open("wb") as log:
            while not stop.is_set():
                if select.select([master], [], [], 0.1)[0]:
                    try:
                        log.write(os.read(master, 65536))
                    except OSError:
                        return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield proc, held
    finally:
        stop.set()
        reader.join()
        for fd in held:
            os.close(fd)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        (tmp_path / "first.out").write_text("")


def hang_up(held: list[int]) -> None:
    os.close(held.pop())


@pytest.mark.parametrize("way", WAYS)
def test_a_write_into_the_users_checkout_is_put_back_on_every_way_out(
    tmp_path: Path, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    original = (repo / "calc.py").read_text()
    worktrees = tmp_path / "worktrees"
    ready = Ready(tmp_path)
    release_c = tmp_path / "c.fifo"
    os.mkfifo(release_c)
    block = [str(ready.path), str(ready.gate)]
    agent = scripted_agent(
        tmp_path,
        {
            "1a": {"write": {str(repo / "calc.py"): "def add(a, b):\n    return 5\n"}, "block": block},
            "1b": {"block": block},
            "1c": {"block": [str(ready.path), str(release_c)]},  # released by the test: no change, rejected
        },
    )
    if way == "exception":
        monkeypatch.setenv("EXPLORE_FAULT_AT", "candidate-finished")
        monkeypatch.setenv("EXPLORE_FAULT_SIGNAL", "raise")
    parallel = 1 if way == "agents-lost" else 3  # several lost at once would be replayed one by one: a blocks again
    args = ["run", str(repo), "--parallel", str(parallel), "--max-iterations", "1", "--agent-cmd", agent, "--json"]
    try:
        with on_a_terminal(args, tmp_path) if way == "SIGHUP" else explore_process(args, tmp_path) as started:
            proc, terminal = started if way == "SIGHUP" else (started, [])
            agents = ready.wait(parallel)
            assert (repo / "calc.py").read_text() != original  # a's write landed in the user's checkout
            if way == "SIGHUP":
                hang_up(terminal)
            elif way.startswith("SIG"):
                proc.send_signal(getattr(signal, way))
            elif way == "exception":
                os.close(os.open(release_c, os.O_WRONLY))  # c ends: its `finished` event raises
            else:
                for pid in agents.values():
                    os.kill(pid, signal.SIGKILL)
            code = proc.wait(timeout=120)
        err = (tmp_path / "first.err").read_text()
        # the user's checkout is as it was when the process is gone
        assert (repo / "calc.py").read_text() == original, err[-3000:]
        assert git(repo, "status", "--porcelain") == ""
        (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
        state = json.loads(state_file.read_text())
        out = (tmp_path / "first.out").read_text().strip().splitlines()
        summary = json.loads(out[-1]) if out else {}
        report = (state_file.parent / "report.md").read_text()
        if way == "agents-lost":  # a crashed candidate, checked as it left: the run goes on and ends
            assert code in (1, 3), err[-3000:]
            (a,) = [c for c in summary["iterations"][0]["candidates"] if c["id"] == "a"]
            assert "wrote outside its worktree: calc.py" in a["reason"], a
            assert "wrote outside its worktree: calc.py" in report
        else:  # cut short: the state and the report name what was put back
            assert state["restored"] == ["calc.py"], state.get("restored")
            assert state["status"] == "interrupted", state["status"]
            assert "restored what a candidate had written outside its worktree: calc.py" in report, report[:2000]
        if way.startswith("SIG"):
            assert code == 130 and "Traceback" not in err, err[-3000:]
            assert way == "SIGHUP" or summary["status"] == "interrupted"  # a hung-up terminal shows no summary
            assert state["stop_reason"].startswith("interrupted by a signal"), state["stop_reason"]
        elif way == "exception":  # a bug of explore's own: its traceback, and resume goes on from the state
            assert code == 1 and "FaultInjected" in err, err[-3000:]
            assert "stopped by an error of explore's own (FaultInjected" in state["stop_reason"], state["stop_reason"]
        assert state["worktrees"] == [] and state["pids"] == []
        assert_nothing_left(repo, worktrees, keep_branches=(state["branch"],))
    finally:
        ready.close()
        kill_everything_under(worktrees, repo)


def test_a_hung_up_terminal_is_told_from_a_live_one_a_pipe_and_a_file(tmp_path: Path) -> None:
    """What SIGHUP's handler moves to /dev/null (run/signals._hung_up): only a hung-up terminal. 0.0 s."""
    from explore.run.signals import _hung_up

    master, slave = pty.openpty()
    read, write = os.pipe()
    with (tmp_path / "f").open("w") as file:
        try:
            assert not _hung_up(slave) and not _hung_up(write) and not _hung_up(file.fileno())
            os.close(master)  # the terminal closed: the kernel hangs its other side up
            master = -1
            assert _hung_up(slave)
        finally:
            for fd in (master, slave, read, write):
                if fd >= 0:
                    os.close(fd)
