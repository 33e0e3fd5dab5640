"""Each test job its own home: `$HOME`, `TMPDIR` and the XDG config, data and state folders are
private to the job (a fresh folder under the system's temp, removed when the job ends), so jobs
that run at the same time (shards, candidates, validation, flaky reruns, mutate's coverage run
and screening workers) cannot trample each other's files in the home, and the user's own home
is never touched by the tests.

Seeded from the user's, because the project may need them: the git identity and configuration
(`~/.gitconfig`, `$XDG_CONFIG_HOME/git/`) and pip's configuration (`~/.pip/`, `~/.config/pip/`).
Caches (`XDG_CACHE_HOME`) are private too, as in the sandbox (sandbox.py), where the user's are
read-only: what a job caches (downloads, font caches) is built again by the next. Kept pointing
at the user's: the user site-packages (`PYTHONUSERBASE`) and pyenv's root (`PYENV_ROOT`), so the
same interpreter finds the same packages. What the project shares outside the home (ports,
fixed paths such as /tmp/x) is not isolated.

A job's home is removed on a thread of its own once the job has ended (`remove_later`): deleting
its nine folders cost 20–35 ms on every test job's way back here, with the run waiting. `drain`
waits for those removals: the run's cleanup calls it, and so does the interpreter's exit.
"""

from __future__ import annotations

import atexit
import os
import shutil
import site
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

SEEDED = (".gitconfig", ".config/git", ".pip", ".config/pip")
"""Copied from the user's home (relative to it) when present: git's identity and configuration, pip's configuration."""
PREFIX = "explore-home-"


def _user_config() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def seed(home: Path) -> None:
    """The user's git and pip configuration, copied into home."""
    real = Path.home()
    for name in SEEDED:
        source = (_user_config() / name.removeprefix(".config/")) if name.startswith(".config/") else real / name
        target = home / name
        try:
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
            elif source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        except OSError:
            continue  # unreadable: the job goes without it


def env_for(root: Path) -> dict[str, str]:
    """The environment of a job whose private folders live under root (created here)."""
    home, tmp = root / "home", root / "tmp"
    folders = {
        "HOME": home,
        "TMPDIR": tmp,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    seed(home)
    env = {name: str(path) for name, path in folders.items()}
    env["PYTHONUSERBASE"] = os.environ.get("PYTHONUSERBASE") or site.getuserbase()
    pyenv = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    if Path(pyenv).is_dir():
        env["PYENV_ROOT"] = pyenv
    return env


def create() -> Path:
    """A fresh folder for a job's private home (env_for(root) fills it); remove() it afterwards.
    Its name holds this process's pid, so sweep() can tell a home whose creator died."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))


def sweep() -> list[Path]:
    """Remove the homes left by an explore process that died before it could (killed with
    SIGKILL, the machine's OOM killer): every home under the temp folder whose creator's pid is
    gone. Run at the start of every run."""
    removed: list[Path] = []
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        pid = folder.name.removeprefix(PREFIX).split("-", 1)[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            remove(folder)
            removed.append(folder)
    return removed


def remove(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)


_removing: list[threading.Thread] = []
_lock = threading.Lock()


def remove_later(root: Path) -> None:
    """remove(root) on a thread of its own: the caller goes on at once; `drain` waits for it."""
    thread = threading.Thread(target=remove, args=(root,), name="explore-home-removal", daemon=True)
    with _lock:
        _removing[:] = [t for t in _removing if t.is_alive()]
        _removing.append(thread)
    thread.start()


def drain() -> None:
    """Wait until every home given to remove_later is gone."""
    with _lock:
        pending = list(_removing)
        _removing.clear()
    for thread in pending:
        thread.join()


atexit.register(drain)  # cli/exits.leave runs the atexit handlers before its quick exit


@contextmanager
def private_home() -> Iterator[dict[str, str]]:
    """A job's private home for the time of the `with`: its environment, removed afterwards (on a
    thread of its own: remove_later)."""
    root = create()
    try:
        yield env_for(root)
    finally:
        remove_later(root)
