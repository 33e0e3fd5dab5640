"""`.explore/` on disk: atomic state files, the per-repository lock, run folders."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from ..edges.gitrepo import GIT
from ..model.errors import LockedError, UsageError
from ..model.runstate import RunState


def explore_dir(root: Path) -> Path:
    return root / ".explore"


def runs_dir(root: Path) -> Path:
    return explore_dir(root) / "runs"


def run_dir(root: Path, run_id: str) -> Path:
    return runs_dir(root) / run_id


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def atomic_write(path: Path, text: str) -> None:
    """Temp file, fsync, rename: a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_FIRED: set[str] = set()


def fault_point(name: str) -> None:
    """Fault injection for the crash-safety tests: `EXPLORE_FAULT_AT=name` makes the process
    SIGKILL itself here, the way a power cut or the OOM killer would; with
    `EXPLORE_FAULT_SIGNAL=SIGINT|SIGTERM|SIGHUP` it sends itself that signal instead (once), the way
    Ctrl-C, a cancelled CI job or a closed terminal would reach it in that phase; with `raise`, it
    raises `FaultInjected` there, the way a bug of explore's own would surface in that step."""
    if os.environ.get("EXPLORE_FAULT_AT") != name or name in _FIRED:
        return
    _FIRED.add(name)
    chosen = os.environ.get("EXPLORE_FAULT_SIGNAL", "SIGKILL")
    if chosen == "raise":
        raise FaultInjected(f"fault injected at {name} (EXPLORE_FAULT_AT)")
    if chosen not in ("SIGKILL", "SIGINT", "SIGTERM", "SIGHUP"):
        raise ValueError(f"EXPLORE_FAULT_SIGNAL={chosen}: SIGKILL, SIGINT, SIGTERM, SIGHUP or raise")
    os.kill(os.getpid(), getattr(signal, chosen))


class FaultInjected(RuntimeError):
    """An error `fault_point` raised on purpose (EXPLORE_FAULT_SIGNAL=raise): none of explore's own."""


def save(root: Path, state: RunState) -> None:
    atomic_write(run_dir(root, state.run_id) / "state.json", state.model_dump_json(indent=2))
    fault_point(f"saved:{state.phase}")


def load(root: Path, run_id: str) -> RunState:
    path = run_dir(root, run_id) / "state.json"
    if not path.exists():
        raise UsageError(f"no run {run_id!r} in {runs_dir(root)} (see `explore status`)")
    return RunState.model_validate_json(path.read_text(encoding="utf-8"))


def all_runs(root: Path) -> list[RunState]:
    states = []
    folder = runs_dir(root)
    if folder.is_dir():
        for path in sorted(folder.glob("*/state.json")):
            try:
                states.append(RunState.model_validate_json(path.read_text(encoding="utf-8")))
            except ValueError:
                continue
    return states


def ensure_writable(root: Path) -> None:
    folder = explore_dir(root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write {folder}: {exc.strerror}; make it writable or run where you can write") from exc


LOCK_NAME = "explore-lock"


def lock_path(root: Path) -> Path:
    """The repository's one lock, in its common git dir: every checkout of the repository
    (`git worktree add`) shares it, so two runs in two checkouts queue like two runs in one."""
    return common_git_dir(root) / LOCK_NAME


def common_git_dir(root: Path) -> Path:
    """`git rev-parse --git-common-dir` of the checkout at root (its own `.git` when it is no
    linked worktree); root's `.explore/` when root is no git checkout at all."""
    done = subprocess.run(
        [*GIT, "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return explore_dir(root)
    return Path(done.stdout.strip())


def pid_alive(pid: int, started: float | None = None) -> bool:
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return started is None or abs(proc.create_time() - started) < 1.0
    except psutil.Error:
        return False


def acquire_lock(root: Path, run_id: str) -> None:
    """One run per repository, whichever of its checkouts it runs in; a lock left by a dead process
    is taken over."""
    path = lock_path(root)
    me = {"pid": os.getpid(), "run_id": run_id, "started": psutil.Process().create_time(), "checkout": str(root)}
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(path)
            if holder and pid_alive(holder.get("pid", -1), holder.get("started")):
                where = holder.get("checkout") or str(root)
                other = "" if where == str(root) else ", another checkout of this repository"
                raise LockedError(
                    f"another explore run ({holder.get('run_id')}, pid {holder.get('pid')}) is working on {where}{other}; "
                    f"wait for it, or stop it and run `explore clean` in {where}"
                ) from None
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as handle:
            json.dump(me, handle)
        return
    raise LockedError(f"could not take the lock {path}; remove it if no explore run is active")


def read_lock(root: Path) -> dict[str, Any] | None:
    return _holder(lock_path(root))


def release_lock(root: Path, run_id: str) -> None:
    path = lock_path(root)  # one `git rev-parse` at the run's end, not one to read and one to remove
    holder = _holder(path)
    if holder and holder.get("run_id") == run_id:
        path.unlink(missing_ok=True)


def _holder(path: Path) -> dict[str, Any] | None:
    try:
        holder = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None
