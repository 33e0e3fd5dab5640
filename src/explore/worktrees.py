"""A pool of git worktrees per run, outside the work tree, reused across iterations with a reset.

Creating a worktree right after removing one is slow on some file systems while a reset is
cheap, so each run keeps its worktrees (one per slot) until it ends, and resets them to the
run's current commit before every use: never a stale base.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

import git

from . import gitrepo
from .errors import SetupFailed


def default_root(repo_root: Path) -> Path:
    """A cache folder outside the work tree, where test discovery cannot see worktrees."""
    base = os.environ.get("EXPLORE_WORKTREES_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "explore", "worktrees"
    )
    digest = hashlib.sha1(str(repo_root).encode()).hexdigest()[:10]
    return Path(base) / f"{repo_root.name}-{digest}"


class DiskFull(SetupFailed):
    """Free disk under the floor: no new worktree."""


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
    created: dict[str, Path] = field(default_factory=dict)

    def path_for(self, slot: str) -> Path:
        return self.root / slot

    def acquire(self, slot: str, commit: str) -> tuple[Path, bool]:
        """The slot's worktree at commit, clean; (path, created now)."""
        path = self.path_for(slot)
        fresh = slot not in self.created or not (path / ".git").exists()
        if fresh:
            free = shutil.disk_usage(self.root.parent if self.root.parent.exists() else self.repo_root).free
            if free < self.disk_floor:
                raise DiskFull(f"only {free / 2**30:.2f} GiB free where worktrees live ({self.root.parent}); "
                               f"explore needs {self.disk_floor / 2**30:.2f} GiB (disk-floor) to start a worktree")
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)
                self.repo.git.worktree("prune")
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._git_admin:  # concurrent `worktree add` races on .git/worktrees
                self.repo.git.worktree("add", "--detach", "--force", str(path), commit)
            self.created[slot] = path
        else:
            wt = git.Repo(path)
            wt.git.reset("--hard", "--quiet", commit)
            # -x: no candidate's ignored output (bytecode, builds) leaks into the next one —
            # unless worktree_setup made ignored files the project needs.
            wt.git.clean("-fdq" if self.keep_ignored else "-fdxq")
            wt.close()
        self._copy_includes(path)
        return path, fresh

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

    def capture_patch(self, path: Path, patch_file: Path) -> list[str]:
        """The candidate's change as a binary-safe patch (ignored and generated files left out);
        returns the files it changes."""
        wt = git.Repo(path)
        try:
            excludes = f"core.excludesFile={gitrepo.ignores_file(self.repo)}"
            wt.git.execute(["git", "-c", excludes, "add", "-A"])
            patch: bytes = wt.git.execute(["git", "diff", "--cached", "--binary", "HEAD"], strip_newline_in_stdout=False, stdout_as_string=False)
            names = wt.git.execute(["git", "-c", "core.quotePath=false", "diff", "--cached", "--no-renames", "--name-only", "-z", "HEAD"]).split("\0")
            wt.git.reset("--quiet")
        finally:
            wt.close()
        patch_file.parent.mkdir(parents=True, exist_ok=True)
        patch_file.write_bytes(patch if not patch or patch.endswith(b"\n") else patch + b"\n")
        return [name for name in names if name]

    def remove_all(self) -> None:
        """Remove every worktree of the run, whatever state it is in."""
        for path in list(self.created.values()):
            try:
                with self._git_admin:
                    self.repo.git.worktree("remove", "--force", "--force", str(path))
            except git.GitCommandError:
                shutil.rmtree(path, ignore_errors=True)
        self.created.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        try:
            self.repo.git.worktree("prune")
        except git.GitCommandError:
            pass
