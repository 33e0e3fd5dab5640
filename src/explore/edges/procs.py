"""Child processes: own session, output streamed to a capped log, whole tree killed on the way out.

Every process explore starts goes through `run`, so a cancelled branch (timeout, Ctrl-C) never
orphans a grandchild: the process group is killed and any child that left it is found through
psutil before the parent dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import psutil
from anyio._core._eventloop import get_async_backend
from anyio.abc import Process

from ..decide.redaction import redact, redact_around_cut
from .sandbox import MARKER, Launch
from .sandbox import Confinement as Confinement  # re-exported: run() and its callers take one

DEFAULT_LOG_CAP = 4 * 1024 * 1024
SAMPLE_INTERVAL_S = 0.2


@dataclass
class ProcResult:
    exit_code: int | None
    output_tail: str
    duration_s: float
    oom: bool = False
    peak_rss: int = 0
    log_path: Path | None = None
    truncated_bytes: int = 0


@dataclass
class ProcessTracker:
    """The live process groups of a run, so a signal handler or `clean` can find them."""

    pids: set[int] = field(default_factory=set)

    def kill_all(self, wait: bool = True) -> None:
        """SIGKILL every tracked process tree. wait=False: their owners reap them (an asyncio
        process must be waited for through asyncio, or its watcher warns of an unknown child)."""
        for pid in list(self.pids):
            kill_tree(pid, wait=wait)


class CappedLog:
    """Keeps the head and the tail of a stream, in memory and on disk, with a marker of the cut."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.cap // 2
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        if not self.dropped:
            return redact(bytes(self.head + self.tail).decode("utf-8", errors="replace"))
        head, tail = (bytes(part).decode("utf-8", errors="replace") for part in (self.head, self.tail))
        head, tail = redact_around_cut(head, tail)
        return f"{head}\n[… explore cut {self.dropped} bytes of output here …]\n{tail}"


def tree_of(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def kill_tree(pid: int, wait: bool = True) -> list[psutil.Process]:
    """SIGKILL the process group led by pid and every descendant, even ones that left the group.

    With wait=False the caller reaps: waiting here on our own child would race asyncio's watcher."""
    members = tree_of(pid)
    _kill_group(pid)
    for proc in members:
        try:
            proc.kill()
        except psutil.Error:
            pass
    if wait:
        psutil.wait_procs(members, timeout=2)
    return members


def kill_marked(marker: str) -> list[psutil.Process]:
    """SIGKILL every process whose environment carries this confinement marker (on Linux read
    straight from /proc: a few milliseconds for hundreds of processes, psutil is slower)."""
    needle = f"{MARKER}={marker}".encode()
    if sys.platform.startswith("linux"):
        pids = []
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    if needle in handle.read().split(b"\0"):
                        pids.append(int(name))
            except OSError:
                continue
    else:
        pids = []
        for proc in psutil.process_iter():
            try:
                if proc.environ().get(MARKER) == marker:
                    pids.append(proc.pid)
            except psutil.Error:
                continue
    found = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            proc.kill()
            found.append(proc)
        except psutil.Error:
            continue
    return found


async def wait_gone(members: list[psutil.Process], timeout: float = 2.0) -> None:
    """Until every one of members (processes that are not our children: a killed tree's
    descendants) has ended, at most timeout seconds; our own asyncio child is reaped by asyncio."""
    await _wait_gone(members, timeout)


async def _wait_gone(members: list[psutil.Process], timeout: float = 2.0) -> None:
    with anyio.move_on_after(timeout):
        for proc in members:
            while _alive(proc):
                await anyio.sleep(0.01)


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def tree_rss(pid: int) -> int:
    total = 0
    for proc in _sampled_tree(pid):
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total


_children: tuple[float, dict[int, list[int]]] = (0.0, {})


def _sampled_tree(pid: int) -> list[psutil.Process]:
    """pid's tree for a memory sample. Finding descendants reads every process's parent (all of
    /proc): one such read per sampling tick is shared by every watched job, not made per job."""
    global _children
    if not sys.platform.startswith("linux"):
        return tree_of(pid)
    taken, children = _children
    if time.monotonic() - taken > SAMPLE_INTERVAL_S / 2:
        children = {}
        for parent_of, child in _parents():
            children.setdefault(parent_of, []).append(child)
        _children = (time.monotonic(), children)
    found, stack = [pid], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    members = []
    for member in found:
        try:
            members.append(psutil.Process(member))
        except psutil.Error:
            pass
    return members


def _parents() -> list[tuple[int, int]]:
    """(parent, child) for every live process, from /proc/<pid>/stat."""
    pairs = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    data = stat.read()
            except OSError:
                continue
            fields = data[data.rfind(b")") + 2 :].split(b" ", 2)
            if len(fields) >= 2:
                pairs.append((int(fields[1]), int(name)))
    return pairs


async def run(
    cmd: Sequence[str] | str,
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    log_path: Path | None = None,
    log_cap: int = DEFAULT_LOG_CAP,
    memory_limit: int | None = None,
    tracker: ProcessTracker | None = None,
    die_with_parent: bool = False,
    confine: Confinement | None = None,
) -> ProcResult:
    """Run cmd (a shell string or an argv list) to completion; cancellation kills its tree.

    A missing program is reported as exit code 127 with the shell's wording, as a shell would.
    die_with_parent: the child is SIGKILLed by the kernel when this process dies, even by SIGKILL
    (a Ray worker killed mid-job must not orphan its test run).
    confine: a candidate's process: in its sandbox when there is one; its daemons (found by the
    marker in their environment) are killed with it either way.
    """
    launch = confine.wrap(cmd, env) if confine is not None else Launch(cmd, dict(env or {}), None)
    cmd, marker = launch.cmd, launch.marker
    if die_with_parent:
        cmd = with_parent_death_signal(cmd)
    started = time.monotonic()
    log = CappedLog(log_cap)
    full_env = {**os.environ, **launch.env}
    try:
        process = await _open(cmd, cwd, full_env, stdin is not None, launch.preexec)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        message = f"{cmd if isinstance(cmd, str) else cmd[0]}: command not found ({exc.strerror})\n"
        log.feed(message.encode())
        _write_log(log_path, log)
        return ProcResult(127, message, time.monotonic() - started, log_path=log_path)
    except subprocess.SubprocessError as exc:  # the pre-exec hook (Landlock) refused: never run unconfined
        message = f"explore: the sandbox could not be set up: {exc}\n"
        log.feed(message.encode())
        _write_log(log_path, log)
        return ProcResult(126, message, time.monotonic() - started, log_path=log_path)
    finally:
        launch.close()

    if tracker is not None:
        tracker.pids.add(process.pid)
    oom = False
    peak = 0
    sampling = anyio.CancelScope()  # ended with the process: the group never waits out a sample's sleep
    try:
        async with anyio.create_task_group() as group:
            if stdin is not None:
                group.start_soon(_feed_stdin, process, stdin)
            if memory_limit:

                async def watch_memory() -> None:
                    nonlocal oom, peak
                    with sampling:
                        while process.returncode is None:
                            rss = tree_rss(process.pid)
                            peak = max(peak, rss)
                            if rss > memory_limit:
                                oom = True
                                kill_tree(process.pid, wait=False)
                                return
                            await anyio.sleep(SAMPLE_INTERVAL_S)

                group.start_soon(watch_memory)
            drained = anyio.Event()
            group.start_soon(_drain, process, log, drained)
            await process.wait()
            sampling.cancel()
            # Stragglers in the group still hold the pipe open; they die with the leader (and so
            # does a confined tree's daemon, found when the pipe stays open).
            _kill_group(process.pid)
            if marker is not None:
                with anyio.move_on_after(0.05):
                    await drained.wait()
                if not drained.is_set():
                    kill_marked(marker)

    finally:
        with anyio.CancelScope(shield=True):
            members = kill_tree(process.pid, wait=False)[1:]  # descendants may outlive the leader
            if marker is not None:
                members += kill_marked(marker)  # daemons: they left the tree (setsid, double fork)
            await process.aclose()
            await _wait_gone(members)
            if tracker is not None:
                tracker.pids.discard(process.pid)
            _write_log(log_path, log)
    text = log.text()
    return ProcResult(
        process.returncode if not oom else None,
        text[-8000:],
        time.monotonic() - started,
        oom=oom,
        peak_rss=peak,
        log_path=log_path,
        truncated_bytes=log.dropped,
    )


async def _open(
    cmd: Sequence[str] | str, cwd: Path, env: dict[str, str], stdin: bool, preexec: Callable[[], None] | None
) -> Process:
    """The process started in a session of its own; preexec (Landlock's restriction) in the child
    before exec. `anyio.open_process` has no pre-exec hook, so that case asks anyio's backend, which
    hands its keywords to `subprocess.Popen`."""
    streams: dict[str, Any] = {
        "stdin": subprocess.PIPE if stdin else subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
    }
    if preexec is None:
        return await anyio.open_process(cmd, cwd=cwd, env=env, start_new_session=True, **streams)
    return await get_async_backend().open_process(
        cmd, cwd=cwd, env=env, start_new_session=True, preexec_fn=preexec, **streams
    )


_PDEATHSIG = (
    "import ctypes, os, signal, sys; parent = int(sys.argv[1]); "
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL); "  # PR_SET_PDEATHSIG, kept across exec
    "os.getppid() == parent or os._exit(137); os.execvp(sys.argv[2], sys.argv[2:])"
)


def with_parent_death_signal(cmd: Sequence[str] | str) -> list[str]:
    """cmd behind a tiny exec trampoline that asks Linux to kill it when its parent dies."""
    argv = ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
    return [sys.executable, "-c", _PDEATHSIG, str(os.getpid()), *argv]


async def _drain(process: Process, log: CappedLog, drained: anyio.Event) -> None:
    assert process.stdout is not None
    async for chunk in process.stdout:
        log.feed(chunk)
    drained.set()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _feed_stdin(process: Process, data: bytes) -> None:
    assert process.stdin is not None
    try:
        await process.stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
        pass
    finally:
        await process.stdin.aclose()


def _write_log(path: Path | None, log: CappedLog) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(log.text(), encoding="utf-8")
