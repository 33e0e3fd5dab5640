"""The user's object store, trusted only as far as it checks: `git cat-file` serves a loose object
without hashing it, so one rewritten in place under its own id would be read as the commit's
content (a weakened test checked out, committed, merged). The guard (guard.py) records every file
of the store by inode, size and change time — a write in place changes the change time, a
replacement the inode, and neither can be set back — and hashes only the files that changed: a
loose object must still inflate to its id; a pack is never rewritten by git, so one that changed
counts whatever it holds. A rewritten loose object is moved away and written again from the
user's file that holds its content, when the user's tree has one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zlib
from pathlib import Path

from .gitrepo import GIT

Seen = tuple[int, int, int]
"""(inode, size, ctime_ns) of one file of the store."""


def files(common_dir: Path) -> dict[str, Seen]:
    """The store's files (loose objects, packs and their indexes), relative to the common git dir."""
    found: dict[str, Seen] = {}
    base = common_dir / "objects"
    try:
        folders = [e for e in os.scandir(base) if e.is_dir(follow_symlinks=False) and e.name != "info"]
    except OSError:
        return found
    for folder in folders:
        try:
            entries = list(os.scandir(folder.path))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("tmp_") or entry.name.endswith(".lock"):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[f"objects/{folder.name}/{entry.name}"] = (info.st_ino, info.st_size, info.st_ctime_ns)
    return found


def rewritten(common_dir: Path, before: dict[str, Seen], after: dict[str, Seen]) -> list[str]:
    """The files there before that changed since and no longer hold what their id says (a pack
    counts as changed whatever it holds; a loose object removed counts too). New files count for
    nothing: a new object changes nothing that exists."""
    bad = []
    for rel, seen in before.items():
        if after.get(rel) == seen:
            continue
        folder, _, name = rel.removeprefix("objects/").partition("/")
        if folder == "pack" or rel not in after or not loose_holds(common_dir / rel, folder + name):
            bad.append(rel)
    return bad


def recover(common_dir: Path, root: Path, rel: str, tree: str, keep: Path) -> None:
    """A loose object that no longer holds its id's content, moved to keep; written again from the
    user's file (in the working tree at root, whose tree is tree) that holds that content."""
    path = common_dir / rel
    keep.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        os.chmod(path, 0o644)
        shutil.move(path, keep)
    sha = rel.removeprefix("objects/").replace("/", "")
    listed = _git(root, "ls-tree", "-r", "-z", tree).decode("utf-8", "surrogateescape")
    for line in filter(None, listed.split("\0")):
        meta, _, name = line.partition("\t")
        if meta.split(" ")[2] == sha and (root / name).is_file():
            _git(root, "hash-object", "-w", "--no-filters", "--", name)
            return


def loose_holds(path: Path, sha: str) -> bool:
    """The loose object file at path inflates to an object whose id is sha."""
    try:
        return hashlib.sha1(zlib.decompress(path.read_bytes())).hexdigest() == sha
    except (OSError, zlib.error):
        return False


def _git(root: Path, *args: str) -> bytes:
    done = subprocess.run([*GIT, *args], cwd=root, capture_output=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} in {root} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return done.stdout
