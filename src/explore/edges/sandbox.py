"""Where a candidate's processes run: a sandbox that writes only the candidate's own worktree —
bubblewrap where it works, else Landlock (landlock.py: Linux ≥ 5.13, unprivileged, nothing to
install) — or, without either, the plain machine. Outside bubblewrap's PID namespace a marker in
their environment lets explore find the daemons they leave behind.

    probe(mode) once per run ──► Sandbox ──confine(worktree, files)──► Confinement ──wrap(cmd, env)──► argv, env

Inside the sandbox the whole file system is read-only except: the worktree; the candidate's files
folder (prompt, result file, test reports); its private temp and cache folders, and whatever
private HOME, TMPDIR or XDG folders the job's own environment names. The worktree's git admin dir
(its HEAD, index, `config.worktree`) and the shared git dir with its object store are read-only:
git in the worktree reads (status, diff, log) but a candidate writes no object, ref, index or
config that explore's own git or the user's would later trust (issue 37). The network stays.
bubblewrap: `--unshare-pid --die-with-parent`, every process of the candidate dies with it,
daemons included; Landlock (applied in the child between fork and exec, `landlock.Ruleset`): the
marker finds them.

A candidate's generator (its agent, command) and worktree setup run git with an object store of
their own in every mode (`GIT_OBJECT_DIRECTORY`, the private folder's `objects/`) and the user's
store as a read-only alternate (`GIT_ALTERNATE_OBJECT_DIRECTORIES`): what an agent commits, stashes,
adds or repacks lands there, never in the user's store — read-only by convention without a sandbox
(the guard still detects and undoes a process that writes the store's files by path), by the kernel
with one. explore never reads that store: it captures a candidate's change from the files on disk
(edges/worktrees). Test runs keep git's own environment: a project's tests that make repositories of
their own and call git with a scrubbed environment would not find their objects.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, NamedTuple

from ..model.errors import UsageError
from . import landlock

Mode = Literal["auto", "require", "off"]
Mechanism = Literal["bubblewrap", "landlock", "none"]
INSTALL = "apt-get install bubblewrap (Debian, Ubuntu) or dnf install bubblewrap (Fedora)"
MARKER = "EXPLORE_CONFINED"
"""Set in every confined process's environment (a value per process tree): how its daemons are found."""
CANDIDATE_EMAIL = "candidate@explore.invalid"
CANDIDATE_IDENTITY = {"GIT_COMMITTER_NAME": "explore candidate", "GIT_COMMITTER_EMAIL": CANDIDATE_EMAIL}
"""The committer every unsandboxed candidate process carries: what git writes into a reflog for
it, so the guard tells a candidate's ref update from the user's (edges/checkouts.py)."""
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
    """The run's choice, made once: bubblewrap at `bwrap`, Landlock, or none (and why)."""

    bwrap: str | None
    note: str
    """The run header's line: whether candidates are sandboxed, and how."""
    extra: tuple[Path, ...] = ()
    """`sandbox-writable`: more paths a confined process may write."""
    mechanism: Mechanism = "none"
    why: str = ""
    """Why this mechanism and not a stronger one (bubblewrap missing, Landlock refused, `off`)."""

    @property
    def confined(self) -> bool:
        return self.mechanism != "none"

    def confine(self, workdir: Path, *files: Path, own_store: bool = False) -> Confinement:
        """A process of the candidate whose worktree is workdir; files: its own folders outside
        the worktree (prompt and result files, logs and reports). own_store: its git writes an
        object store of its own (the candidate's generator and setup: see the module's docstring)."""
        return Confinement(
            self.bwrap,
            (workdir, *files, *self.extra),
            (),
            workdir.parent / f"{workdir.name}.private",
            self.mechanism,
            shared_store(workdir) if own_store else None,
        )


def shared_store(workdir: Path) -> Path | None:
    """The object store of the repository whose linked worktree is workdir (its `.git` file names
    its admin folder, whose `commondir` names the shared git dir); None when workdir is no linked
    worktree. Read when a candidate's process starts: a `.git` a candidate rewrote misleads only
    its own processes' reads (its writes go to its own store whatever this says)."""
    try:
        link = (workdir / ".git").read_text(encoding="utf-8")
        admin = (workdir / link.removeprefix("gitdir:").strip()).resolve()
        common = (admin / (admin / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, ValueError):
        return None
    return common / "objects" if (common / "objects").is_dir() else None


class Launch(NamedTuple):
    """How to start one confined process."""

    cmd: Sequence[str] | str
    env: dict[str, str]
    marker: str | None
    """What its daemons are found by (None in bubblewrap, whose PID namespace takes them down)."""
    preexec: Callable[[], None] | None = None
    """Run in the child between fork and exec (Landlock's restriction); close() after the start."""
    close: Callable[[], None] = lambda: None
    """Releases what the start needed in this process (Landlock's ruleset)."""


@dataclass(frozen=True)
class Confinement:
    bwrap: str | None
    writable: tuple[Path, ...]
    readonly: tuple[Path, ...]
    """Read-only again inside a writable folder (bubblewrap only)."""
    private: Path
    """Its private temp and cache folders live here (in the sandbox: outside it, /tmp and ~/.cache are read-only)."""
    mechanism: Mechanism = "none"
    store: Path | None = None
    """The user's object store, when the candidate's git writes its own (`objects`) and reads the
    user's as an alternate: set for a candidate's generator and setup (`Sandbox.confine`)."""

    @property
    def objects(self) -> Path:
        """The candidate's own object store: everything its git writes lands here."""
        return self.private / "objects"

    def with_writable(self, *paths: str) -> Confinement:
        """The same, with more paths writable (a named agent's own state, e.g. ~/.claude)."""
        return replace(self, writable=(*self.writable, *(Path(p).expanduser() for p in paths)))

    def wrap(self, cmd: Sequence[str] | str, env: Mapping[str, str] | None) -> Launch:
        """How to start cmd confined: argv, environment, the daemons' marker, Landlock's pre-exec hook."""
        env = {**(env or {}), **self._git_store()}
        if self.mechanism == "none" or (self.mechanism == "bubblewrap" and not self.bwrap):
            marker = uuid.uuid4().hex  # a candidate's git writes its reflog entries as a candidate
            return Launch(cmd, {**env, **CANDIDATE_IDENTITY, MARKER: marker}, marker)
        for key, sub in (("TMPDIR", "tmp"), ("XDG_CACHE_HOME", "cache")):  # /tmp and ~/.cache are read-only in here
            env.setdefault(key, str(self.private / sub))
        own = [Path(env[key]) for key in PRIVATE_ENV if key in env and _private(Path(env[key]))]
        for folder in own:
            folder.mkdir(parents=True, exist_ok=True)
        writable = [path for path in dict.fromkeys([*self.writable, *own, self.objects]) if path.exists()]
        if self.mechanism == "landlock":
            marker = uuid.uuid4().hex
            ruleset = landlock.Ruleset([str(path) for path in writable])
            return Launch(cmd, {**env, MARKER: marker}, marker, ruleset.enter, ruleset.close)
        assert self.bwrap is not None
        argv = ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        wrapped = [self.bwrap, *_BASE]
        for path in writable:
            wrapped += ["--bind", str(path), str(path)]
        for path in self.readonly:
            if path.exists():
                wrapped += ["--ro-bind", str(path), str(path)]
        return Launch([*wrapped, "--", *argv], env, None)

    def _git_store(self) -> dict[str, str]:
        """The candidate's git writes objects to its own store and reads the user's as an alternate
        (nothing when the worktree's store is not known: git would find no object)."""
        if self.store is None:
            return {}
        self.objects.mkdir(parents=True, exist_ok=True)
        return {"GIT_OBJECT_DIRECTORY": str(self.objects), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.store)}


def _private(path: Path) -> bool:
    """Not the user's home, the root, or a folder holding either: a job's own folder."""
    home = Path.home().resolve()
    resolved = path.resolve()
    return resolved != Path("/") and resolved != home and not home.is_relative_to(resolved)


@functools.cache
def probe(mode: Mode, extra: tuple[str, ...] = ()) -> Sandbox:
    """The sandbox this machine offers (once per run: cached): bubblewrap when it works, else
    Landlock; `require` without either is a usage error that names the install command."""
    writable = tuple(Path(p).expanduser() for p in extra)
    if mode == "off":
        why = 'sandbox = "off"'
        return Sandbox(
            None,
            f"candidates are not sandboxed ({why}): writes outside their worktree are detected and undone",
            mechanism="none",
            why=why,
        )
    found, why_not_bwrap = _bubblewrap()
    if found is not None:
        return Sandbox(
            found,
            f"candidates are sandboxed (bubblewrap: read-only but for their worktree; {found})",
            writable,
            "bubblewrap",
        )
    version, why_not_landlock = _landlock()
    return choose(mode, why_not_bwrap, version, why_not_landlock, writable)


def choose(
    mode: Mode, why_not_bwrap: str, landlock_abi: int, why_not_landlock: str, writable: tuple[Path, ...] = ()
) -> Sandbox:
    """Without a working bubblewrap: Landlock when it works (landlock_abi > 0), else none — or, for
    `require`, the usage error."""
    if landlock_abi > 0:
        return Sandbox(
            None,
            f"candidates are sandboxed (Landlock ABI {landlock_abi}: read-only but for their worktree, "
            f"home and temp folder; {why_not_bwrap})",
            writable,
            "landlock",
            why_not_bwrap,
        )
    why = f"{why_not_bwrap}, and {why_not_landlock}"
    if mode == "require":
        raise UsageError(
            f'sandbox = "require", but {why}; install bubblewrap ({INSTALL}), or set sandbox = "auto" or "off" '
            "in [tool.explore]"
        )
    return Sandbox(
        None,
        f"candidates are not sandboxed: {why}; writes outside their worktree are detected and undone",
        mechanism="none",
        why=why,
    )


def _bubblewrap() -> tuple[str | None, str]:
    """bwrap when it is installed and works, else (None, why not)."""
    if not sys.platform.startswith("linux"):
        return None, f"no sandbox for {sys.platform} yet"
    found = shutil.which("bwrap")
    if found is None:
        return None, "bubblewrap is not installed"
    try:
        done = subprocess.run([found, *_BASE, "--", "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap does not work here: {exc}"
    if done.returncode != 0:
        return None, f"bwrap does not work here: {done.stderr.strip()[-300:] or f'exit {done.returncode}'}"
    return found, ""


def _landlock() -> tuple[int, str]:
    """The Landlock ABI when a process restricted by it runs here (`/bin/sh -c :` restricted, tried once), else
    (0, why not)."""
    try:
        version = landlock.abi()
    except (OSError, AttributeError) as exc:
        return 0, f"Landlock cannot be asked here: {exc}"
    if version < 1:
        return 0, "the kernel offers no Landlock (Linux 5.13 or later, landlock in the lsm= boot list)"
    try:
        ruleset = landlock.Ruleset([])
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", ":"], capture_output=True, text=True, timeout=30, preexec_fn=ruleset.enter
            )
        finally:
            ruleset.close()
    except (OSError, subprocess.SubprocessError) as exc:
        return 0, f"Landlock does not work here: {exc}"
    if done.returncode != 0:
        return 0, f"Landlock does not work here: {done.stderr.strip()[-300:] or f'exit {done.returncode}'}"
    return version, ""
