"""procs: real child processes — exit codes, capped logs, whole-tree kill on cancel, memory cap."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import anyio
import psutil
import pytest

from explore.edges import procs
from explore.edges.procs import CappedLog, ProcessTracker

PY = sys.executable


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def gone_or_zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# --- CappedLog -------------------------------------------------------------------------------


def test_capped_log_keeps_everything_under_the_cap() -> None:
    log = CappedLog(100)
    log.feed(b"hello ")
    log.feed(b"world")
    assert log.text() == "hello world"
    assert log.dropped == 0


def test_capped_log_keeps_head_and_tail_with_a_marker() -> None:
    log = CappedLog(20)
    for i in range(10):
        log.feed(f"<{i}:abcdefgh>".encode())  # 12 bytes each, 120 in all
    assert log.dropped == 120 - 20
    assert log.text() == (
        "<0:abcdefg"  # the first cap // 2 bytes
        + f"\n[… explore cut {log.dropped} bytes of output here …]\n"
        + ":abcdefgh>"  # the last cap // 2 bytes
    )


def test_capped_log_one_big_chunk() -> None:
    log = CappedLog(8)
    log.feed(b"0123456789ABCDEF")
    assert log.head == bytearray(b"0123")
    assert log.tail == bytearray(b"CDEF")
    assert log.dropped == 8
    assert log.text().startswith("0123\n[") and log.text().endswith("]\nCDEF")


@pytest.mark.parametrize("kept", [6, 7, 12, 26])
def test_capped_log_redacts_a_key_the_cut_split(monkeypatch: pytest.MonkeyPatch, kept: int) -> None:
    key = "sk-ant-0123456789abcdefghij"  # 27 characters
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    log = CappedLog(60)  # keeps the first 30 and the last 30 bytes
    # the head ends with the first `kept` characters of a key, the tail starts with the last `kept` of another
    log.feed(b"h" * (30 - kept) + key.encode() + b"m" * 200 + key.encode() + b"t" * (30 - kept))
    text = log.text()
    assert "[redacted]" in text and "explore cut" in text
    for size in range(6, len(key) + 1):  # no piece of the key long enough to mean anything is left
        assert not any(key[i : i + size] in text for i in range(len(key) - size + 1)), (size, text)


def test_capped_log_tolerates_split_utf8() -> None:
    log = CappedLog(6)
    log.feed("ééééééé".encode())  # 14 bytes, cuts inside characters
    assert "cut" in log.text()


# --- run: exit codes and output --------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("code", [0, 1, 3, 42])
async def test_exit_codes_are_exact(tmp_path: Path, code: int) -> None:
    result = await procs.run([PY, "-c", f"import sys; print('bye'); sys.exit({code})"], tmp_path)
    assert result.exit_code == code
    assert result.output_tail == "bye\n"
    assert not result.oom
    assert result.duration_s > 0


@pytest.mark.anyio
async def test_shell_string_and_env_and_cwd(tmp_path: Path) -> None:
    result = await procs.run('echo "$EXPLORE_T_VAR in $(pwd)"; exit 5', tmp_path, env={"EXPLORE_T_VAR": "hi"})
    assert result.exit_code == 5
    assert result.output_tail == f"hi in {tmp_path}\n"


@pytest.mark.anyio
async def test_stderr_is_merged_and_stdin_fed(tmp_path: Path) -> None:
    code = "import sys; data = sys.stdin.read(); print('out', data); print('err', file=sys.stderr)"
    result = await procs.run([PY, "-c", code], tmp_path, stdin=b"payload")
    assert result.exit_code == 0
    assert "out payload" in result.output_tail
    assert "err" in result.output_tail


@pytest.mark.anyio
async def test_no_stdin_means_devnull(tmp_path: Path) -> None:
    result = await procs.run([PY, "-c", "import sys; print(repr(sys.stdin.read()))"], tmp_path)
    assert result.output_tail == "''\n"


@pytest.mark.anyio
async def test_missing_program_is_127(tmp_path: Path) -> None:
    log_path = tmp_path / "logs" / "missing.log"
    result = await procs.run([str(tmp_path / "no-such-program"), "--flag"], tmp_path, log_path=log_path)
    assert result.exit_code == 127
    assert "command not found" in result.output_tail
    assert "command not found" in log_path.read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_missing_program_in_shell_string_is_127(tmp_path: Path) -> None:
    result = await procs.run("explore-no-such-command-xyz --version", tmp_path)
    assert result.exit_code == 127
    assert "explore-no-such-command-xyz" in result.output_tail


@pytest.mark.anyio
async def test_output_goes_to_the_log(tmp_path: Path) -> None:
    log_path = tmp_path / "sub" / "run.log"
    tracker = ProcessTracker()
    result = await procs.run(
        [PY, "-c", "for i in range(3): print('line', i)"], tmp_path, log_path=log_path, tracker=tracker
    )
    assert log_path.read_text(encoding="utf-8") == "line 0\nline 1\nline 2\n"
    assert result.log_path == log_path
    assert result.truncated_bytes == 0
    assert tracker.pids == set()  # forgotten once finished


@pytest.mark.anyio
async def test_big_output_is_capped_head_and_tail(tmp_path: Path) -> None:
    log_path = tmp_path / "big.log"
    body = """\
        import sys
        sys.stdout.write("FIRST-LINE\\n")
        for i in range(16000):
            sys.stdout.write(f"{i:06d} " + "x" * 57 + "\\n")  # 65 bytes a line, ~1 MB
        sys.stdout.write("LAST-LINE\\n")
        """
    result = await procs.run([PY, str(script(tmp_path, "big.py", body))], tmp_path, log_path=log_path, log_cap=10_000)
    total = len("FIRST-LINE\n") + 16000 * 65 + len("LAST-LINE\n")
    assert result.exit_code == 0
    assert result.truncated_bytes == total - 10_000
    text = log_path.read_text(encoding="utf-8")
    assert text.startswith("FIRST-LINE\n000000 ")
    assert text.endswith("LAST-LINE\n")
    assert f"cut {total - 10_000} bytes" in text
    assert len(text.encode()) < 10_000 + 200
    assert result.output_tail.endswith("LAST-LINE\n")
    assert len(result.output_tail) <= 8000


# --- cancellation kills the whole tree -------------------------------------------------------

SPAWNER = """\
    import os, subprocess, sys, time
    in_group = subprocess.Popen(["sleep", "60"])
    left_group = subprocess.Popen(["sleep", "60"], start_new_session=True)
    with open(sys.argv[1], "w") as ready:
        ready.write(f"{os.getpid()} {in_group.pid} {left_group.pid}\\n")
    time.sleep(60)
    """


async def read_line(fifo: Path) -> str:
    """Wait (without polling) for the child to write one line into the FIFO."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = b""
        with anyio.fail_after(10):
            while not data.endswith(b"\n"):
                await anyio.wait_readable(fd)
                chunk = os.read(fd, 1024)
                if not chunk:
                    raise AssertionError(f"writer closed without a full line: {data!r}")
                data += chunk
        return data.decode()
    finally:
        os.close(fd)


@pytest.mark.anyio
async def test_cancellation_kills_grandchildren(tmp_path: Path) -> None:
    fifo = tmp_path / "ready.fifo"
    os.mkfifo(fifo)
    spawner = script(tmp_path, "spawner.py", SPAWNER)
    tracker = ProcessTracker()
    result: list[procs.ProcResult] = []
    pids: list[int] = []
    started = anyio.current_time()
    with anyio.move_on_after(30) as scope:
        async with anyio.create_task_group() as group:

            async def run_it() -> None:
                result.append(await procs.run([PY, str(spawner), str(fifo)], tmp_path, tracker=tracker))

            group.start_soon(run_it)
            pids.extend(int(p) for p in (await read_line(fifo)).split())
            assert all(psutil.pid_exists(p) for p in pids)
            assert tracker.pids == {pids[0]}
            scope.deadline = anyio.current_time()  # time is up: move on now
    assert scope.cancelled_caught
    assert result == []
    assert anyio.current_time() - started < 15
    try:
        assert len(pids) == 3  # the spawner, a grandchild in its group, one that left the group
        for pid in pids:
            assert gone_or_zombie(pid), psutil.Process(pid).as_dict(["pid", "name", "status", "cmdline"])
        assert tracker.pids == set()
    finally:  # leave nothing behind even when the assertions fail
        for pid in pids:
            if not gone_or_zombie(pid):
                psutil.Process(pid).kill()


@pytest.mark.anyio
async def test_process_tracker_kill_all(tmp_path: Path) -> None:
    proc = await anyio.open_process(["sleep", "60"], start_new_session=True)
    try:
        tracker = ProcessTracker({proc.pid})
        tracker.kill_all()
        with anyio.fail_after(5):  # `sleep 60` ends only when killed
            code = await proc.wait()
        assert code != 0  # -9, or 255 when psutil reaped it before asyncio's child watcher could
        assert gone_or_zombie(proc.pid)
    finally:
        await proc.aclose()


# --- memory cap ------------------------------------------------------------------------------

HOG = """\
    import time
    chunks = []
    for _ in range(40):
        chunks.append(b"\\x01" * 10_000_000)  # written, so resident
        time.sleep(0.02)
    time.sleep(30)
    print("survived")
    """


@pytest.mark.anyio
async def test_memory_limit_kills_and_reports_oom(tmp_path: Path) -> None:
    cap = 100 * 2**20
    with anyio.fail_after(20):
        result = await procs.run([PY, str(script(tmp_path, "hog.py", HOG))], tmp_path, memory_limit=cap)
    assert result.oom is True
    assert result.exit_code is None
    assert result.peak_rss > cap
    assert "survived" not in result.output_tail
    assert result.duration_s < 15


@pytest.mark.anyio
async def test_memory_limit_leaves_a_small_process_alone(tmp_path: Path) -> None:
    result = await procs.run([PY, "-c", "print('small')"], tmp_path, memory_limit=500 * 2**20)
    assert result.oom is False
    assert result.exit_code == 0
    assert result.output_tail == "small\n"


@pytest.mark.anyio
async def test_a_process_under_a_memory_limit_is_done_when_it_ends_not_at_the_next_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory watcher sampled every 0.2 s and the run waited for its sleep: every test job
    ended up to 0.2 s after its process (a cachetools floor's baseline took 0.86, 1.07 or 1.28 s).
    With a sample an hour apart, the run still returns as the process ends."""
    monkeypatch.setattr(procs, "SAMPLE_INTERVAL_S", 3600.0)
    with anyio.fail_after(60):  # a bound on a hang, not a timing: without the fix this waits an hour
        result = await procs.run([PY, "-c", "print('done')"], tmp_path, memory_limit=500 * 2**20)
    assert result.exit_code == 0 and result.output_tail == "done\n"
