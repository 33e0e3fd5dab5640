"""Issue 8's acceptance: a runaway candidate never takes the machine down — memory, output, disk.

Every run here is a real `python -m explore` process, watched from a thread of the test: the
explore process's own RSS (never its children's) is sampled every 50 ms, and every descendant it
ever had is remembered, so the end of each test can check that all of them are gone.

Safety: the allocating test stops allocating at ~900 MB by itself (and only heartbeats after
that), so even if the cap failed nothing here could take more than ~1 GB; the cap kills it at
512 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import psutil

from conftest import assert_no_debris, make_repo, run_cli
from test_run_e2e import scripted_agent

EXPLORE_RSS_LIMIT = 200 * 2**20
CAP = 512 * 2**20

CALC = {
    "calc.py": """\
        def add(a, b):
            return a - b
        """,
    "tests/test_calc.py": """\
        from calc import add


        def test_add():
            assert add(2, 3) == 5


        def test_identity():
            assert add(0, 0) == 0
        """,
}
FIX_ADD = {"calc.py": ["return a - b", "return a + b"]}


class Watch(threading.Thread):
    """Samples a running explore process: its own RSS, and every descendant it ever had."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.interval = interval
        self.peak_rss = 0
        self.samples = 0
        self.seen: dict[int, psutil.Process] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.peak_rss = max(self.peak_rss, self.process.memory_info().rss)
                self.samples += 1
                for child in self.process.children(recursive=True):
                    self.seen.setdefault(child.pid, child)
            except psutil.Error:
                return
            self.done.wait(self.interval)

    def leftovers(self) -> list[psutil.Process]:
        """Descendants still alive (zombies reaped by init do not count) after a grace of 3 s."""
        alive = [p for p in self.seen.values() if _alive(p)]
        _gone, alive = psutil.wait_procs(alive, timeout=3)
        return [p for p in alive if _alive(p)]


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def run_watched(
    args: list[str], cwd: Path | None = None, during=None, timeout: float = 120
) -> tuple[int, dict | None, str, Watch]:
    """`python -m explore ARGS` with a Watch on it; `during(process)` runs while it does."""
    process = subprocess.Popen(
        [sys.executable, "-m", "explore", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watch = Watch(process.pid)
    watch.start()
    try:
        if during is not None:
            during(process)
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        watch.done.set()
        watch.join()
    summary = None
    if out.strip():
        try:
            summary = json.loads(out.strip().splitlines()[-1])
        except ValueError:
            pass
    return process.returncode, summary, err, watch


def candidates(summary: dict) -> dict[str, dict]:
    return {c["id"]: c for c in summary["iterations"][0]["candidates"]}


# ----------------------------------------------------------------------------------- memory

GROW_SAFE = "def grow():\n    return 0\n"
GROW_RUNAWAY = """\
import time

import psutil

LOG = {log!r}


def grow():
    # ~1 GB/s: a 50 MB chunk every ~50 ms, each byte written. Never more than 18 chunks (~900 MB)
    # even if nothing stopped it; after that only a heartbeat, so the moment it dies is known.
    chunks = []
    me = psutil.Process()
    started = time.time()
    with open(LOG, "a", buffering=1) as log:
        while time.time() - started < 20:
            step = time.time()
            if len(chunks) < 18:
                chunks.append(b"\\x01" * (50 << 20))
            log.write(f"{{time.time():.4f}} {{me.memory_info().rss}}\\n")
            time.sleep(max(0.0, 0.05 - (time.time() - step)))
        log.write("SURVIVED\\n")
    return 0
"""


def test_runaway_memory_is_killed_at_the_cap_and_another_candidate_wins(tmp_path: Path) -> None:
    files = {
        **CALC,
        "mem.py": GROW_SAFE,
        "tests/test_mem.py": "from mem import grow\n\n\ndef test_grow():\n    assert grow() == 0\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    log = tmp_path / "grow.log"
    agent = scripted_agent(
        tmp_path,
        {
            "a": {"replace": FIX_ADD, "write": {"mem.py": GROW_RUNAWAY.format(log=str(log))}, "confidence": 0.9},
            "b": {"replace": FIX_ADD, "confidence": 0.5},
            "c": {"write": {"notes.py": "# nothing to see\n"}, "confidence": 0.1},
        },
    )
    code, summary, err, watch = run_watched(
        [
            "run",
            str(repo),
            "--agent-cmd",
            agent,
            "--parallel",
            "3",
            "--branch-memory",
            "512M",
            "--branch-timeout",
            "60",
            "--json",
        ]
    )
    assert code == 0, err
    by_id = candidates(summary)
    assert by_id["a"]["status"] == "oom", by_id["a"]
    assert "memory" in (by_id["a"]["reason"] or ""), by_id["a"]
    assert summary["iterations"][0]["winner"] == "b" and summary["final"]["pass_rate"] == 100.0
    assert "return a + b" in (repo / "calc.py").read_text() and "chunks" not in (repo / "mem.py").read_text()

    lines = log.read_text().splitlines()
    assert "SURVIVED" not in lines, "the runaway test was never killed"
    beats = [(float(t), int(rss)) for t, rss in (line.split() for line in lines)]
    # The kill may come before the test logs an RSS over the cap (between a chunk and its line):
    # then it crossed after the last line, and that line must be within two chunks of the cap.
    over = [t for t, rss in beats if rss > CAP]
    crossed = over[0] if over else beats[-1][0]
    assert over or beats[-1][1] > CAP - 100 * 2**20, f"killed at {beats[-1][1] / 2**20:.0f} MiB, far under the cap"
    last = beats[-1][0]
    peak = max(rss for _t, rss in beats)
    when = (
        f"killed {last - crossed:.2f}s (+ <= one 50 ms step) after its log showed it over the cap"
        if over
        else "killed in the very step that crossed the cap (before it could log an RSS over 512 MiB)"
    )
    print(
        f"last beat at +{last - beats[0][0]:.2f}s, {when}; "
        f"runaway peak {peak / 2**20:.0f} MiB, explore's own peak RSS {watch.peak_rss / 2**20:.0f} MiB over {watch.samples} samples"
    )
    assert last - crossed <= 1.0, f"killed {last - crossed:.2f}s after crossing 512 MiB (peak {peak / 2**20:.0f} MiB)"
    assert peak < 1000 * 2**20

    assert watch.samples > 10
    assert watch.peak_rss < EXPLORE_RSS_LIMIT, f"explore itself peaked at {watch.peak_rss / 2**20:.0f} MiB"
    assert not watch.leftovers()
    assert_no_debris(repo)


# ----------------------------------------------------------------------------------- output

NOISY_PYPROJECT = (
    '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-s"\n\n'  # output straight to explore's pipe
    f'[tool.explore]\npython = "{sys.executable}"\n'
)
SHOUT_LOUD = """\
import sys


def shout():
    block = (b"y" * 1023 + b"\\n") * 1024  # 1 MiB
    for _ in range(200):
        sys.stdout.buffer.write(block)
    sys.stdout.buffer.flush()
    return "ok"
"""


def test_200_mb_of_output_is_capped_in_the_logs_and_in_explores_memory(tmp_path: Path) -> None:
    files = {
        **CALC,
        "pyproject.toml": NOISY_PYPROJECT,
        "noisy.py": 'def shout():\n    return "ok"\n',
        "tests/test_noisy.py": 'from noisy import shout\n\n\ndef test_shout():\n    assert shout() == "ok"\n',
    }
    repo = make_repo(tmp_path / "repo", files)
    agent = scripted_agent(
        tmp_path,
        {
            "a": {"replace": FIX_ADD, "write": {"noisy.py": SHOUT_LOUD}, "confidence": 0.9},
            "b": {"replace": FIX_ADD, "confidence": 0.5},
        },
    )
    code, summary, err, watch = run_watched(["run", str(repo), "--agent-cmd", agent, "--parallel", "2", "--json"])
    assert code == 0, err
    assert summary["final"]["pass_rate"] == 100.0
    run_dir = repo / ".explore" / "runs" / summary["run_id"]
    logs = sorted(run_dir.rglob("*.log"))
    noisy = [p for p in logs if "candidate-a" in p.parts[-2]]
    assert noisy, logs
    cut = [p for p in noisy if "explore cut" in p.read_text(errors="replace")]
    assert cut, f"no capped log among {noisy}"
    sizes = {str(p.relative_to(run_dir)): p.stat().st_size for p in logs}
    print(f"logs {sizes}; explore's own peak RSS {watch.peak_rss / 2**20:.0f} MiB over {watch.samples} samples")
    assert max(sizes.values()) <= 5 * 2**20, sizes
    assert sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file()) <= 20 * 2**20
    assert watch.peak_rss < EXPLORE_RSS_LIMIT, f"explore itself peaked at {watch.peak_rss / 2**20:.0f} MiB"
    assert not watch.leftovers()
    assert_no_debris(repo)


# ----------------------------------------------------------------------------------- disk


def test_disk_floor_escalates_as_infrastructure_naming_free_disk(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC, explore_config='disk-floor = "100000T"\n')
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}})
    code, summary, err, watch = run_watched(["run", str(repo), "--agent-cmd", agent, "--json"])
    assert code == 3, err
    assert summary["status"] == "escalated" and summary["escalation"]["category"] == "infrastructure"
    reason = summary["escalation"]["reason"]
    assert "free" in reason and "disk" in reason, reason
    assert summary["iterations"] == [] and summary["merged_commit"] is None
    assert not (tmp_path / "worktrees").exists() or not any((tmp_path / "worktrees").rglob("*.py"))
    assert not watch.leftovers()
    assert_no_debris(repo)


HANDSHAKE_AGENT = """\
import os, pathlib, sys
sys.stdin.read()
with open({ready!r}, "w") as fifo:  # blocks until the test is listening
    fifo.write("ready")
with open({go!r}) as fifo:  # blocks until the test has looked
    fifo.read()
path = pathlib.Path("calc.py")
path.write_text(path.read_text().replace("return a - b", "return a + b"))
"""


def _open_with_timeout(path: Path, mode: str, timeout: float = 60) -> str | None:
    """Open a FIFO end (blocking until the other end opens) and read or write it, in a thread."""
    result: list[str] = []

    def work() -> None:
        with open(path, mode) as fifo:
            if "r" in mode:
                result.append(fifo.read())
            else:
                fifo.write("go")
                result.append("")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    return result[0] if result else None


def test_status_json_shows_worktree_bytes_while_a_run_holds_worktrees(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    ready, go = tmp_path / "ready.fifo", tmp_path / "go.fifo"
    os.mkfifo(ready)
    os.mkfifo(go)
    (tmp_path / "agent.py").write_text(HANDSHAKE_AGENT.format(ready=str(ready), go=str(go)))
    agent = f"{sys.executable} {tmp_path / 'agent.py'}"
    seen: dict = {}

    def during(process: subprocess.Popen) -> None:
        try:
            assert _open_with_timeout(ready, "r") == "ready", "the agent never started"
            code, listing, err = run_cli(["status", "--path", str(repo), "--json"])
            seen.update(code=code, listing=listing, err=err)
        finally:
            if _open_with_timeout(go, "w", timeout=10) is None:  # let the agent go on whatever happened
                process.kill()

    code, summary, err, watch = run_watched(
        ["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--json"], during=during
    )
    assert code == 0, err
    assert seen["code"] == 0, seen["err"]
    listing = seen["listing"]
    (row,) = listing["runs"]
    assert row["run_id"] == summary["run_id"] and row["status"] == "running"
    assert row["worktree_bytes"] > 0 and listing["worktree_bytes"] == row["worktree_bytes"]
    # at least the work tree's files (one worktree at this point, plus its bytecode caches)
    own = sum(
        p.stat().st_size for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts and ".explore" not in p.parts
    )
    assert own <= row["worktree_bytes"] < 2**20, (own, row["worktree_bytes"])
    # once the run has ended its worktrees are gone, and so are their bytes
    code, after, _err = run_cli(["status", "--path", str(repo), "--json"])
    assert code == 0 and after["worktree_bytes"] == 0 and after["runs"][0]["worktree_bytes"] == 0
    assert not watch.leftovers()
    assert_no_debris(repo)
