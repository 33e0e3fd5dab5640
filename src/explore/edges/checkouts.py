"""Whose ref is it: the branches other checkouts of the repository have out.

A repository may have several checkouts (`git worktree add`), all sharing one set of refs. What
changes a branch another checkout has out — the user committing there, a run of explore there —
is that checkout's doing, never a candidate's: the guard (edges/guard.py) leaves those refs (and
the main checkout's `HEAD`, when the run is in a linked checkout) out of what it compares and puts
back. explore's own worktrees are not "other checkouts": a candidate's worktree that took a branch
is the candidate's doing.

In the run's own checkout, a commit of the user's is told from a candidate's write by the reflog
git writes with every update of a branch: every unsandboxed candidate process carries explore's
candidate identity as its committer (`sandbox.CANDIDATE_IDENTITY`, set where its environment is
made), which git records in each reflog entry. The checkout's branch moved from old to
new through reflog entries none of which is a candidate's is the user's (or explore's own) doing
(`committed_here`); a branch moved without a reflog entry for each step (a ref file written by
hand), or through one a candidate wrote, is a candidate's. A process that clears its environment
escapes this, as it escapes the daemon marker: without the sandbox, nothing is a boundary against
a hostile candidate (README "What it does not cover").
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .gitrepo import GIT
from .sandbox import CANDIDATE_EMAIL
from .worktrees import default_root

ZERO = "0" * 40


@dataclass(frozen=True)
class Committed:
    """The user committed in the run's own checkout: its branch moved from old to new, and with it
    the checkout's index and the files the commits changed (`files`: those that hold new's content)."""

    git_paths: frozenset[str]
    """Relative to the common git dir: the branch's loose ref, packed-refs when it holds it, the index."""
    files: frozenset[str]


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


def committed_here(
    root: Path,
    common_dir: Path,
    git_dir: Path,
    before: Mapping[str, tuple[int, bytes]],
    after: Mapping[str, tuple[int, bytes]],
    after_tree: str,
) -> Committed | None:
    """The user's (or explore's) commits on the checkout's own branch between two fingerprints of
    its git files (`guard.Fingerprint.git_files`), None when the branch did not move or a candidate
    moved it (see the module's docstring)."""
    heads = _branch(git_dir / "HEAD")
    if not heads:
        return None
    ref = heads[0]
    old, new = _ref_value(before, ref), _ref_value(after, ref)
    if old == new or new is None or not _moved_by_user(common_dir / "logs" / ref, old or ZERO, new):
        return None
    paths = {ref, Path(os.path.relpath(git_dir / "index", common_dir)).as_posix()}
    if (before.get("packed-refs") or (0, b""))[1] != (after.get("packed-refs") or (0, b""))[1]:
        paths.add("packed-refs")
    files: set[str] = set()
    if old is not None:
        changed = set(_names(root, old, new))
        files = changed - set(_names(root, after_tree, new))  # what holds the commit's content now
    return Committed(frozenset(paths), frozenset(files))


def _ref_value(files: Mapping[str, tuple[int, bytes]], ref: str) -> str | None:
    """The commit ref names in a fingerprint: its loose file, else its line in packed-refs."""
    if ref in files:
        return files[ref][1].decode(errors="replace").strip() or None
    for line in (files.get("packed-refs") or (0, b""))[1].decode(errors="replace").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and not line.startswith(("#", "^")):
            return sha
    return None


def _moved_by_user(log: Path, old: str, new: str) -> bool:
    """The reflog holds an unbroken chain of entries from old to new, none written by a candidate."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    want = new
    for line in reversed(lines):
        head, _, _ = line.partition("\t")
        parts = head.split(" ", 2)
        if len(parts) < 3 or parts[1] != want or f"<{CANDIDATE_EMAIL}>" in parts[2]:
            return False
        if parts[0] == old:
            return True
        want = parts[0]
    return False


def _names(root: Path, a: str, b: str) -> list[str]:
    done = subprocess.run(
        [*GIT, "diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b], cwd=root, capture_output=True, timeout=300
    )
    return [n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n] if done.returncode == 0 else []
