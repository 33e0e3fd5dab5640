"""A pool of git worktrees per run, outside the work tree, reused across iterations with a reset.

Creating a worktree right after removing one is slow on some file systems while a reset is
cheap, so each run keeps its worktrees (one per slot) until it ends, and resets them to the
run's current commit before every use: never a stale base.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import git

from ..model.errors import SetupFailed
from . import gitrepo, procs, staging, trust
from .sandbox import Confinement


def default_root(repo_root: Path) -> Path:
    """A cache folder outside the work tree, where test discovery cannot see worktrees."""
    base = os.environ.get("EXPLORE_WORKTREES_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "explore", "worktrees"
    )
    digest = hashlib.sha1(str(repo_root).encode()).hexdigest()[:10]
    return Path(base) / f"{repo_root.name}-{digest}"


REMOVERS = 8
"""Threads that remove the run's worktrees at its end, side by side (the removal waits on the disk,
not the cores: three 5,000-entry trees took 3.9 s one after another, 1.2 s side by side, at load 11)."""
ADMIN_FILES = ("commondir", "gitdir", "config.worktree", "info/sparse-checkout")
"""The files of a worktree's admin folder that say where the repository is and how git reads the
worktree: explore puts them back as git wrote them (WorktreePool._restore_admin)."""


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _read_capped(argv: list[str], cwd: Path, limit: int | None, env: dict[str, str] | None = None) -> bytes | None:
    """A command's stdout in chunks; None (the command killed) once it passes limit bytes."""
    chunks: list[bytes] = []
    size = 0
    with subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as proc:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(1 << 16):
            size += len(chunk)
            if limit is not None and size > limit:
                proc.kill()
                return None
            chunks.append(chunk)
        if proc.wait() != 0:
            raise subprocess.CalledProcessError(proc.returncode, argv)
    return b"".join(chunks)


def _stamp(path: Path) -> tuple[int, int, int, int]:
    """(inode, size, ctime, mtime) of path; all 0 when it is not there. A write changes the ctime,
    which no process can set back."""
    try:
        info = path.lstat()
    except OSError:
        return (0, 0, 0, 0)
    return (info.st_ino, info.st_size, info.st_ctime_ns, info.st_mtime_ns)


class DiskFull(SetupFailed):
    """Free disk under the floor: no new worktree."""


@dataclass(frozen=True)
class SetupOutcome:
    """What `worktree_setup` did in one worktree: the one outcome every caller reads (the baseline's
    and each candidate's worktree, a test job's slot, a reproduce sample, a Ray worker's checkout)."""

    command: str
    exit_code: int | None
    """None when the command did not end by itself (killed)."""
    output_tail: str
    log_path: Path

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def reason(self) -> str:
        return f"worktree_setup `{self.command}` failed with exit {self.exit_code}: {self.output_tail.strip()[-300:]}"

    def check(self) -> None:
        """SetupFailed (an infrastructure escalation, exit 3) unless the command succeeded."""
        if not self.ok:
            raise SetupFailed(self.reason)


async def run_setup(
    command: str,
    path: Path,
    log_path: Path,
    *,
    tracker: procs.ProcessTracker | None = None,
    confine: Confinement | None = None,
    die_with_parent: bool = False,
) -> SetupOutcome:
    """Run `worktree_setup` in the worktree at path (its output in log_path); never raises for a
    failing command: the caller decides what a failure costs (see `SetupOutcome.check`)."""
    done = await procs.run(
        command, path, log_path=log_path, tracker=tracker, confine=confine, die_with_parent=die_with_parent
    )
    return SetupOutcome(command=command, exit_code=done.exit_code, output_tail=done.output_tail, log_path=log_path)


class Captured(NamedTuple):
    """A candidate's change as captured from its worktree."""

    files: list[str]
    """The paths it changes (ignored and generated files left out)."""
    review: str
    """Its diff as text whatever `.gitattributes` says (`--text`): what the checks read."""
    links: dict[str, str]
    """Symlinks it adds or changes → where they point."""
    added: list[str]
    """The paths it adds (not in the commit it starts from)."""
    patch: bytes | None = None
    """The binary git diff, held in memory from before its tests ran (what a winner's commit is
    built from); None when it is over max-patch-size."""
    tree: str = ""
    """The git tree of the change: what its tests ran on."""
    binary: tuple[str, ...] = ()
    """The files whose change git sees as binary (named in the report)."""
    nested: tuple[str, ...] = ()
    """Folders of the change that hold a git repository of their own (a `.git` folder or file): git
    would record each as a bare gitlink; their files are captured as the files they are (listed in
    `files` and `added`, in the patch and the tree), and the folders are named here."""


@dataclass
class WorktreePool:
    repo: git.Repo
    repo_root: Path
    root: Path
    """The run's folder of worktrees: <pool root>/<run id>."""
    include: list[str] = field(default_factory=list)
    disk_floor: int = 0
    keep_ignored: bool = False
    """Set when a worktree_setup command ran: its ignored output survives resets."""
    _git_admin: threading.Lock = field(default_factory=threading.Lock)
    _ignores: str | None = None
    """gitrepo.ignores_text, read at the first use (_excluding)."""
    created: dict[str, Path] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    """Slot → its `.git` file as git wrote it (`gitdir: <its folder in the git dir>`). explore's own
    git commands in a worktree name that folder (`--git-dir`) and never read the `.git` file, which
    a candidate can rewrite; `intact` tells whether it did."""
    admin_files: dict[str, dict[str, bytes | None]] = field(default_factory=dict)
    """Slot → the files of its admin folder that tell git where and how to work (ADMIN_FILES), as
    git wrote them: put back before explore's git touches the worktree again."""
    bases: dict[str, str] = field(default_factory=dict)
    """Slot → the commit explore checked out there: what a change is read against (never its HEAD)."""
    own: dict[Path, tuple[int, int, int, int] | bytes] = field(default_factory=dict)
    """explore's own files in the pool folder as its git last left them — each worktree's index by
    (inode, size, ctime, mtime), the reader git dir's files by content: without a sandbox a candidate
    can write the pool folder, and an index whose stat data lies hides a file from the capture, a
    reader config with a filter rewrites what is captured. One that changed is not used (`_own`)."""

    def path_for(self, slot: str) -> Path:
        return self.root / slot

    def acquire(self, slot: str, commit: str) -> tuple[Path, bool]:
        """The slot's worktree at commit, clean; (path, created now)."""
        path = self.path_for(slot)
        self.root.mkdir(parents=True, exist_ok=True)
        self._reader(commit)
        store = trust.store(Path(self.repo.common_dir))
        fresh = slot not in self.created or not os.path.lexists(path / ".git")
        if fresh:
            free = shutil.disk_usage(self.root.parent if self.root.parent.exists() else self.repo_root).free
            if free < self.disk_floor:
                raise DiskFull(
                    f"only {free / 2**30:.2f} GiB free where worktrees live ({self.root.parent}); "
                    f"explore needs {self.disk_floor / 2**30:.2f} GiB (disk-floor) to start a worktree"
                )
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)
                self.repo.git.worktree("prune")
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._git_admin:  # concurrent `worktree add` races on .git/worktrees
                began = store.begin()  # what the checkout is verified against (_trusted)
                self.repo.git.worktree("add", "--detach", "--force", str(path), commit)
            self.created[slot] = path
            self.links[slot] = (path / ".git").read_text(encoding="utf-8")
            self.admin_files[slot] = {name: _read(self._admin(path) / name) for name in ADMIN_FILES}
        else:
            began = store.begin()
            self._restore_link(slot)
            self._restore_admin(slot)
            self.git_in(
                path, "update-ref", "--no-deref", "HEAD", commit
            )  # detached again, whatever a candidate wrote there
            # its index as the candidate left it is not trusted (flags that hide a file, stat data
            # that lies): read afresh from the commit, every file written again
            (self._admin(path) / "index").unlink(missing_ok=True)
            self.git_in(path, "reset", "--hard", "--quiet", commit)
            # -x: no candidate's ignored output (bytecode, builds) leaks into the next one —
            # unless worktree_setup made ignored files the project needs.
            # -ff: a repository a candidate made inside its worktree goes too
            self.git_in(path, "clean", "-ffdq" if self.keep_ignored else "-ffdxq")
        self._trusted(path, commit, began)
        self._copy_includes(path)
        self.bases[slot] = commit
        shutil.copyfile(self._admin(path) / "index", self._index(path))  # explore's own, outside its reach
        self.own[self._index(path)] = _stamp(self._index(path))
        return path, fresh

    def _trusted(self, path: Path, commit: str, began: int) -> None:
        """The checkout at path read only objects that held their ids (trust.Store.verify): when
        a file of the store changed meanwhile (an unconfined process rewrote it), it is checked out
        again from scratch once the store is mended; SetupFailed when the store keeps changing.
        Checked and checked out again under the store's lock: explore's own writes (other candidates'
        captures, which freshen the objects they write again) wait, so only an unconfined process can
        make it change again — six candidates capturing at once kept an honest one's checkout from
        ever verifying (test_tamper under CI load). began: the store's generation when the checkout
        began (trust.Store.begin): explore's own writes that ended before it explain what they changed."""
        store = trust.store(Path(self.repo.common_dir))
        with store.lock:
            for _ in range(3):
                if not store.verify(began):
                    return
                began = store.begin()  # checked out again under the lock: no write of explore's overlaps
                (self._admin(path) / "index").unlink(missing_ok=True)
                self.git_in(path, "reset", "--hard", "--quiet", commit)
                self.git_in(path, "clean", "-ffdq" if self.keep_ignored else "-ffdxq")
            if not store.verify(began):
                return
        raise SetupFailed(f"the repository's object store kept changing while explore checked out {commit[:10]}")

    def settle(self, path: Path) -> None:
        """The worktree's HEAD detached at the commit explore checked out, its index read from it,
        and no reflog or ORIG_HEAD of what the candidate's git did: a commit or `git add` of the
        candidate's lives in its own object store (sandbox.Confinement.store), which the user's git
        cannot read — left in the worktree's HEAD, index or reflog, it made the user's `git fsck`
        and `git gc` fail until the worktree went. Its files stay as they are: they are the change
        (capture_patch reads them through explore's own index)."""
        base = self.bases.get(path.name)
        if base is None:
            return
        admin = self._admin(path)
        self._restore_admin(path.name)
        self.git_in(path, "update-ref", "--no-deref", "HEAD", base)
        self.git_in(path, "read-tree", base)
        for name in ("logs/HEAD", "ORIG_HEAD"):
            (admin / name).unlink(missing_ok=True)

    def intact(self, path: Path) -> bool:
        """The worktree's `.git` file is the one git wrote, and its HEAD is detached as explore left it
        (a candidate that points either at the user's branch or git dir is caught here)."""
        link = path / ".git"
        try:
            head = (self._admin(path) / "HEAD").read_text(encoding="utf-8").strip()
            return (
                not link.is_symlink()
                and link.read_text(encoding="utf-8") == self.links[path.name]
                and not head.startswith("ref:")
            )
        except (OSError, KeyError, ValueError):
            return False

    def _restore_link(self, slot: str) -> None:
        link = self.path_for(slot) / ".git"
        if link.is_symlink() or link.is_dir():
            shutil.rmtree(link) if link.is_dir() and not link.is_symlink() else link.unlink()
        link.write_text(self.links[slot], encoding="utf-8")

    def _restore_admin(self, slot: str) -> None:
        """The slot's admin folder's pointers and configuration as git wrote them (a candidate
        outside a sandbox may have rewritten `commondir`, or planted a `config.worktree` that
        defines a filter or an fsmonitor), and no lock file there: explore's git is the only one
        that works in the folder, and not now — one left (`index.lock`, `HEAD.lock`) would make
        every git command of explore's in the worktree fail."""
        admin = self._admin(self.path_for(slot))
        for lock in admin.rglob("*.lock") if admin.is_dir() else []:
            if lock.is_file() or lock.is_symlink():
                lock.unlink()
        for name, data in self.admin_files.get(slot, {}).items():
            target = admin / name
            if target.is_symlink() or target.is_dir():
                shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()
            if data is None:
                target.unlink(missing_ok=True)
            elif _read(target) != data:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)

    def _index(self, path: Path) -> Path:
        """explore's own index of the worktree at path: in the pool's folder, which no candidate
        may write (sandbox.py), never the admin folder's, which its git writes."""
        return self.root / f".{path.name}.index"

    def _admin(self, path: Path) -> Path:
        """The worktree's own folder in the git dir, as git named it when explore created it."""
        return Path(self.links[path.name].removeprefix("gitdir:").strip())

    def _argv(self, path: Path, *args: str) -> list[str]:
        return [*gitrepo.GIT, f"--git-dir={self._admin(path)}", f"--work-tree={path}", *args]

    def git_in(self, path: Path, *args: str) -> bytes:
        """git in the worktree at path, through explore's record of its git dir (never its `.git` file)."""
        argv = self._argv(path, *args)
        done = subprocess.run(argv, cwd=path, capture_output=True, timeout=600, env=gitrepo.worktree_env())
        if done.returncode != 0:
            raise git.GitCommandError(argv, done.returncode, done.stderr)
        return done.stdout

    def _read_argv(self, path: Path, *args: str) -> list[str]:
        """explore's git reading what a candidate left at path (gitrepo.worktree_git): explore's own
        git dir (never the worktree's admin folder, its `config.worktree` or its index, nor the
        shared config as a candidate may have left it), explore's own index of the worktree."""
        return gitrepo.worktree_git(self._reader(), path, *args)

    def _reader(self, commit: str = "") -> Path:
        """explore's git dir for reading worktrees (gitrepo.reader_dir), made at the run's first
        checkout, before any candidate ran."""
        folder = self.root / ".reader"
        if (folder / "HEAD").is_file():  # no GitPython here: its cat-file process is not for threads
            kept = {path: data for path, data in self.own.items() if isinstance(data, bytes)}
            for path in {p for p in folder.rglob("*") if p.is_file() or p.is_symlink()} - kept.keys():
                path.unlink()  # a file explore did not write there (`commondir`, `config.worktree`…)
            for path, data in kept.items():
                if _read(path) != data:
                    path.unlink(missing_ok=True)
                    path.write_bytes(data)
            return folder
        common = Path(self.repo.common_dir).resolve()
        head = commit or next(iter(self.bases.values()), "") or self.repo.head.commit.hexsha
        made = gitrepo.reader_dir(folder, common, head)
        self.own.update({path: path.read_bytes() for path in made.rglob("*") if path.is_file()})
        return made

    def _reading(self, path: Path, *args: str, stdin: bytes | None = None) -> bytes:
        argv = self._read_argv(path, *args)
        done = subprocess.run(
            argv, cwd=path, input=stdin, capture_output=True, timeout=600, env=self._reading_env(path)
        )
        self.own[self._index(path)] = _stamp(self._index(path))
        if done.returncode != 0:
            raise git.GitCommandError(argv, done.returncode, done.stderr)
        return done.stdout

    def _reading_env(self, path: Path) -> dict[str, str]:
        index = self._index(path)
        env = gitrepo.worktree_env(index, Path(self.repo.common_dir).resolve() / "objects")
        if index in self.own and _stamp(index) != self.own[index]:  # not as explore's git left it: read afresh
            index.unlink(missing_ok=True)
            base = self.bases.get(path.name, "HEAD")
            argv = self._read_argv(path, "read-tree", base)  # no stat data: every file is hashed again
            subprocess.run(argv, cwd=path, capture_output=True, timeout=600, env=env, check=True)
            self.own[index] = _stamp(index)
        elif not index.exists():  # a worktree the pool did not check out (reproduce's own)
            shutil.copyfile(self._admin(path) / "index", index)
        return env

    def _copy_includes(self, path: Path) -> None:
        for pattern in self.include:
            for source in sorted(self.repo_root.glob(pattern)):
                if ".git" in source.relative_to(self.repo_root).parts:
                    continue
                target = path / source.relative_to(self.repo_root)
                if source.is_dir():
                    shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
                elif source.is_file():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target)

    def _excluding(self) -> tuple[str, str]:
        """explore's ignore rules (the user's global excludes file and generated files): what they
        ignore is never part of a patch, and is gone when a candidate's tests run. Where the user's
        global excludes file is, git is asked once a run (it was asked three times per candidate);
        the file explore writes them to is checked, and written again if changed, at every use."""
        if self._ignores is None:
            self._ignores = gitrepo.ignores_text(self.repo)
        return "-c", f"core.excludesFile={gitrepo.ignores_file(self.repo, self._ignores)}"

    def ignored(self, path: Path) -> frozenset[str]:
        """The ignored entries of a worktree (an ignored folder as one entry)."""
        listed = self._reading(
            path, *self._excluding(), "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
        )
        return frozenset(filter(None, listed.decode(errors="surrogateescape").split("\0")))

    def scrub(self, path: Path, keep: frozenset[str] = frozenset()) -> None:
        """Leave exactly the tracked tree of the change plus the user's include set: the ignored
        files a candidate (or its test run) made are removed before its tests run — a
        self-ignoring folder (its own .gitignore says `*`) must not patch what the tests import.
        keep: the ignored entries present before the candidate ran (worktree_setup's output);
        without a worktree_setup every ignored file goes, and the includes are copied afresh."""
        if self.keep_ignored:
            for entry in sorted(self.ignored(path) - keep):
                target = path / entry
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    target.unlink(missing_ok=True)
        else:
            self._reading(path, *self._excluding(), "clean", "-fdXq")
        self._copy_includes(path)

    def tree_of(self, path: Path) -> str:
        """The git tree the worktree holds now, as capture_patch would see it."""
        return self._stage(path)[0]

    def _stage(self, path: Path) -> tuple[str, tuple[str, ...]]:
        """explore's index of path made what is on disk (staging.stage); (its tree, the nested repositories)."""
        self._restore_admin(path.name)
        reading = functools.partial(self._reading, path)
        store = trust.store(Path(self.repo.common_dir))
        return staging.stage(reading, path, self.bases.get(path.name, "HEAD"), self._excluding(), store)

    def capture_patch(self, path: Path, patch_file: Path, max_bytes: int | None = None) -> Captured:
        """The candidate's change as a binary-safe patch (ignored and generated files left out, the
        user's global excludes file kept in force), held in memory from now on (patch_file is a
        copy for people), and its tree id: what is tested and, for a winner, committed. Read from
        the files on disk through explore's own index of the worktree, against the commit explore
        checked out there: nothing the candidate's git says (its index and its flags, its HEAD, its
        admin folder) hides a file. Binary files are named first (numstat); the patch and its text
        review are read in chunks and given up past max_bytes (patch None), never loaded whole."""
        tree, nested = self._stage(path)
        base = self.bases.get(path.name, "HEAD")
        raw = self._reading(
            path, "-c", "core.quotePath=false", "diff", "--cached", "--no-renames", "--raw", "-z", base
        ).decode(errors="surrogateescape")
        numstat = self._reading(
            path, "-c", "core.quotePath=false", *gitrepo.DIFF_ARGS, "--cached", "--no-renames", "--numstat", "-z", base
        )
        env = self._reading_env(path)
        patch = _read_capped(
            self._read_argv(path, *gitrepo.DIFF_ARGS, "--cached", "--binary", base), path, max_bytes, env
        )
        review = (
            _read_capped(self._read_argv(path, *gitrepo.DIFF_ARGS, "--cached", "--text", base), path, max_bytes, env)
            if patch is not None
            else None
        )
        binary = tuple(
            line.split("\t", 2)[2]
            for line in numstat.decode(errors="surrogateescape").split("\0")
            if line.startswith("-\t-\t")
        )
        fields = raw.split("\0")
        files, links, added = [], {}, []
        for meta, name in zip(fields[0::2], fields[1::2]):
            _, new_mode, _, _, status = meta.split(" ")
            files.append(name)
            if new_mode == "120000":
                links[name] = os.readlink(path / name)
            if status == "A":
                added.append(name)
        if patch is None or review is None:
            return Captured(files, "", links, added, None, tree, binary, nested)
        patch = patch if not patch or patch.endswith(b"\n") else patch + b"\n"
        patch_file.parent.mkdir(parents=True, exist_ok=True)
        patch_file.write_bytes(patch)
        return Captured(files, review.decode("utf-8", errors="replace"), links, added, patch, tree, binary, nested)

    def remove_all(self) -> None:
        """Remove every worktree of the run, whatever state it is in: their folders, then git's record
        of them (`.git/worktrees/<name>`) in one `git worktree prune` — not a `git worktree remove`
        per worktree, a git process each at the end of every run. A record that outlives the prune
        (a candidate locked its worktree) is removed as `worktree remove --force --force` would."""
        admins = [self._admin(path) for path in self.created.values() if path.name in self.links]
        folders = list(self.created.values())
        if folders:  # side by side: one after another, five 1,500-file worktrees took 18 s under load
            with ThreadPoolExecutor(max_workers=min(len(folders), REMOVERS)) as removers:
                list(removers.map(functools.partial(shutil.rmtree, ignore_errors=True), folders))
        self.created.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        try:
            self.root.parent.rmdir()  # the repository's folder, once no run of it has worktrees
        except OSError:
            pass
        try:
            with self._git_admin:
                self.repo.git.worktree("prune")
        except git.GitCommandError:
            pass
        records = Path(self.repo.common_dir).resolve() / "worktrees"
        for admin in admins:
            if admin.resolve().parent == records and admin.is_dir():
                shutil.rmtree(admin, ignore_errors=True)
