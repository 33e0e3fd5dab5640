"""Whose ref is it: the branches other checkouts of the repository have out.

A repository may have several checkouts (`git worktree add`), all sharing one set of refs. What
changes a branch another checkout has out — the user committing there, a run of explore there —
is that checkout's doing, never a candidate's: the guard (edges/guard.py) leaves those refs (and
the main checkout's `HEAD`, when the run is in a linked checkout) out of what it compares and puts
back. explore's own worktrees are not "other checkouts": a candidate's worktree that took a branch
is the candidate's doing.
"""

from __future__ import annotations

import os
from pathlib import Path

from .worktrees import default_root


def others(root: Path, common_dir: Path, git_dir: Path) -> frozenset[str]:
    """Paths relative to the common git dir (`refs/heads/feature`, `HEAD`) that belong to a checkout
    of the repository other than root and explore's worktrees."""
    theirs: set[str] = set()
    if git_dir.resolve() != common_dir.resolve():  # root is a linked checkout: the main one is another
        theirs.add("HEAD")
        theirs.update(_branch(common_dir / "HEAD"))
    explore_base = default_root(root).parent.resolve()
    linked = common_dir / "worktrees"
    try:
        names = sorted(os.listdir(linked))
    except OSError:
        names = []
    for name in names:
        folder = linked / name
        if folder.resolve() == git_dir.resolve():
            continue
        where = _checkout_of(folder)
        if where is None or where == root.resolve() or where.is_relative_to(explore_base):
            continue
        theirs.update(_branch(folder / "HEAD"))
    return frozenset(theirs)


def _branch(head: Path) -> list[str]:
    """The ref a HEAD file names (`ref: refs/heads/x`), none when detached or unreadable."""
    try:
        text = head.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return []
    return [text.removeprefix("ref: ").strip()] if text.startswith("ref: refs/") else []


def _checkout_of(folder: Path) -> Path | None:
    """The checkout a linked worktree's admin folder belongs to (its `gitdir` file names the
    checkout's `.git` file)."""
    try:
        pointer = (folder / "gitdir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return Path(pointer).parent.resolve() if pointer else None
