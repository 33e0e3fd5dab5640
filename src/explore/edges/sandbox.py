"""Where a candidate's processes run: a bubblewrap sandbox that writes only the candidate's own
worktree, or — without one — the plain machine, with a marker in their environment that lets
explore find the daemons they leave behind.

    probe(mode) once per run ──► Sandbox ──confine(worktree, files)──► Confinement ──wrap(cmd, env)──► argv, env

Inside the sandbox the whole file system is read-only except: the worktree; the candidate's files
folder (prompt, result file, test reports); its private temp and cache folders, and whatever
private HOME, TMPDIR or XDG folders the job's own environment names; the worktree's git admin dir
(its HEAD and index) and the shared object store (content-addressed: a new object changes nothing
that exists) — so `git add` and `git commit` work inside the worktree while the shared hooks,
config and refs stay read-only. The network stays. `--unshare-pid --die-with-parent`: every
process of the candidate dies with it, daemons included.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from ..model.errors import UsageError

Mode = Literal["auto", "require", "off"]
INSTALL = "apt-get install bubblewrap (Debian, Ubuntu) or dnf install bubblewrap (Fedora)"
MARKER = "EXPLORE_CONFINED"
"""Set in every confined process's environment (a value per process tree): how its daemons are found."""
PRIVATE_ENV = (
    "HOME",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
)
"""Folders a job's environment may point at its own private copies of: writable inside."""
_BASE = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent"]


@dataclass(frozen=True)
class Sandbox:
    """The run's choice, made once: bubblewrap at `bwrap`, or none (and why)."""

    bwrap: str | None
    note: str
    """The run header's line: whether candidates are sandboxed."""
    extra: tuple[Path, ...] = ()
    """`sandbox-writable`: more paths a confined process may write."""

    def confine(self, workdir: Path, *files: Path) -> Confinement:
        """A process of the candidate whose worktree is workdir; files: its own folders outside
        the worktree (prompt and result files, logs and reports)."""
        writable, readonly = [workdir, *files, *self.extra], []
        if self.bwrap:
            admin, common = _git_dirs(workdir)
            if admin is not None and common is not None:
                writable += [admin, common / "objects"]
                readonly += [admin / "commondir", admin / "gitdir", common / "objects" / "info"]
        return Confinement(self.bwrap, tuple(writable), tuple(readonly), workdir.parent / f"{workdir.name}.private")


@dataclass(frozen=True)
class Confinement:
    bwrap: str | None
    writable: tuple[Path, ...]
    readonly: tuple[Path, ...]
    """Read-only again inside a writable folder (the admin dir's pointers, the object store's alternates)."""
    private: Path
    """Its private temp and cache folders live here (in the sandbox: outside it, /tmp and ~/.cache are read-only)."""

    def with_writable(self, *paths: str) -> Confinement:
        """The same, with more paths writable (a named agent's own state, e.g. ~/.claude)."""
        return replace(self, writable=(*self.writable, *(Path(p).expanduser() for p in paths)))

    def wrap(
        self, cmd: Sequence[str] | str, env: Mapping[str, str] | None
    ) -> tuple[Sequence[str] | str, dict[str, str], str | None]:
        """(the command to start, its environment, the marker its daemons are found by — None in the
        sandbox, whose PID namespace takes every process down with it)."""
        env = dict(env or {})
        if not self.bwrap:
            marker = uuid.uuid4().hex
            return cmd, {**env, MARKER: marker}, marker
        for key, sub in (("TMPDIR", "tmp"), ("XDG_CACHE_HOME", "cache")):  # /tmp and ~/.cache are read-only in here
            env.setdefault(key, str(self.private / sub))
        own = [Path(env[key]) for key in PRIVATE_ENV if key in env and _private(Path(env[key]))]
        for folder in own:
            folder.mkdir(parents=True, exist_ok=True)
        argv = [self.bwrap, *_BASE]
        for path in dict.fromkeys([*self.writable, *own]):
            if path.exists():
                argv += ["--bind", str(path), str(path)]
        for path in self.readonly:
            if path.exists():
                argv += ["--ro-bind", str(path), str(path)]
        argv += ["--", *(["/bin/sh", "-c", cmd] if isinstance(cmd, str) else cmd)]
        return argv, env, None


def _private(path: Path) -> bool:
    """Not the user's home, the root, or a folder holding either: a job's own folder."""
    home = Path.home().resolve()
    resolved = path.resolve()
    return resolved != Path("/") and resolved != home and not home.is_relative_to(resolved)


def _git_dirs(workdir: Path) -> tuple[Path | None, Path | None]:
    """A linked worktree's admin dir (.git/worktrees/NAME) and the common git dir it points to."""
    dotgit = workdir / ".git"
    try:
        text = dotgit.read_text(encoding="utf-8") if dotgit.is_file() else ""
    except OSError:
        return None, None
    if not text.startswith("gitdir:"):
        return None, None
    admin = (workdir / text.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (admin / (admin / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return admin, None
    return admin, common


@functools.cache
def probe(mode: Mode, extra: tuple[str, ...] = ()) -> Sandbox:
    """Whether bubblewrap works here (once per run: cached); `require` without it is a usage error
    that names the install command."""
    writable = tuple(Path(p).expanduser() for p in extra)
    if mode == "off":
        return Sandbox(
            None,
            'candidates are not sandboxed (sandbox = "off"): writes outside their worktree are detected and undone',
        )
    found = shutil.which("bwrap") if sys.platform.startswith("linux") else None
    why = None
    if found is None:
        why = (
            f"bubblewrap is not installed ({INSTALL})"
            if sys.platform.startswith("linux")
            else f"no sandbox for {sys.platform} yet"
        )
    else:
        try:
            done = subprocess.run([found, *_BASE, "--", "true"], capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                why = f"bwrap does not work here: {done.stderr.strip()[-300:] or f'exit {done.returncode}'}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = f"bwrap does not work here: {exc}"
    if why is None:
        return Sandbox(
            found, f"candidates are sandboxed (bubblewrap: read-only but for their worktree; {found})", writable
        )
    if mode == "require":
        raise UsageError(
            f'sandbox = "require", but {why}; install it, or set sandbox = "auto" or "off" in [tool.explore]'
        )
    return Sandbox(None, f"candidates are not sandboxed: {why}; writes outside their worktree are detected and undone")
