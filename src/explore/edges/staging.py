"""A candidate's worktree staged as it is on disk, in explore's own index (edges/worktrees).

git's own staging trusts the worktree's git: `add -A` skips a file flagged skip-worktree or
assume-unchanged in the index, and records a folder holding a repository of its own as one gitlink,
whatever files (a `conftest.py`) it holds. Here the index is explore's (never the candidate's), read
afresh from the commit explore checked out, and a nested repository is staged as the files it holds
(its `.git` and generated files left out), so that what is captured, checked, tested and committed is
what pytest will find on disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from .trust import Store


class Reading(Protocol):
    """explore's git in the worktree, with explore's index (WorktreePool._reading, bound to it)."""

    def __call__(self, *args: str, stdin: bytes | None = None) -> bytes: ...


def stage(
    reading: Reading, path: Path, base: str, excluding: tuple[str, str], store: Store
) -> tuple[str, tuple[str, ...]]:
    """The index made what the worktree at path holds against base, its tree written (what it
    writes to the user's object store is recorded in store as explore's own: trust.Store);
    returns (the tree, the folders that hold a repository of their own, whose files were staged as files)."""
    with store.writing():
        nested = _stage(reading, path, base, excluding)
        tree = reading("write-tree").decode().strip()
        store.wrote_tree(tree, base)
    return tree, nested


def _stage(reading: Reading, path: Path, base: str, excluding: tuple[str, str]) -> tuple[str, ...]:
    reading("read-tree", "--reset", base)  # the stat data of files as explore checked them out
    others = reading(*excluding, "ls-files", "-z", "--others", "--exclude-standard", "--directory").decode(
        errors="surrogateescape"
    )
    nested = tuple(
        sorted(repo for entry in others.split("\0") if entry.endswith("/") for repo in repos_in(path, entry))
    )
    reading(*excluding, "add", "-A", "--", ".", *(f":(exclude,literal){n}" for n in nested))
    for folder in nested:
        stage_files(reading, path, folder)
    return nested


def repos_in(worktree: Path, folder: str) -> list[str]:
    """The folders at or under folder (an untracked folder of the worktree) that hold a git
    repository of their own (a `.git` folder or file), relative to the worktree."""
    found = []
    for parent, dirs, names in os.walk(worktree / folder):
        if ".git" in dirs or ".git" in names:
            found.append(Path(parent).relative_to(worktree).as_posix())
            dirs[:] = []
    return found


def stage_files(reading: Reading, path: Path, folder: str) -> None:
    """The files under folder (a nested repository: git sees one gitlink) staged as files, its
    `.git` and generated files left out."""
    entries: list[str] = []

    def blob(*args: str, stdin: bytes | None = None) -> str:
        return reading("hash-object", "-w", *args, stdin=stdin).decode().strip()

    for parent, dirs, names in os.walk(path / folder):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
        for name in sorted(names):
            if name == ".git" or name.endswith((".pyc", ".pyo")):
                continue
            full = Path(parent) / name
            rel = full.relative_to(path).as_posix()
            if full.is_symlink():
                entries.append(f"120000 {blob('--stdin', stdin=os.readlink(full).encode())}\t{rel}")
            elif full.is_file():
                mode = "100755" if os.access(full, os.X_OK) else "100644"
                entries.append(f"{mode} {blob('--no-filters', '--', rel)}\t{rel}")
    if entries:
        reading("update-index", "--index-info", stdin=("\n".join(entries) + "\n").encode())
