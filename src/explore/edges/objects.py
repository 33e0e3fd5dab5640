"""The user's object store, trusted only as far as it checks: `git cat-file` serves a loose object
without hashing it, so one rewritten in place under its own id would be read as the commit's
content (a weakened test checked out, committed, merged). The guard (guard.py) records every file
of the store by inode, size and change time — a write in place changes the change time, a
replacement the inode, and neither can be set back — and hashes only the files that changed: a
loose object must still inflate to its id; a pack is never rewritten by git, so one that changed
counts whatever it holds. A rewritten loose object is moved away and written again from the
user's file that holds its content, when the user's tree has one (trust.recover). A pack (and its index) is put
back from the copy `Packs` made of it before any candidate ran — while the store's packs together
stay under PACK_COPY_CAP; a pack of a larger store is named, never put back. When candidates are
confined (bubblewrap, Landlock) the kernel keeps them out of the store and no copy is made.

Candidates' git writes an object store of its own (sandbox.py), so nothing a candidate does should
add a file to the user's store either; explore's own git adds loose objects only, each recorded
(trust.Store): a loose object no step of explore wrote is a candidate's (`Store.foreign`), as is a pack
that appears while candidates run (`added`): it is moved to the quarantine (`evict`)
unless an object only it holds is reachable from the user's refs, reflogs or index (a fetch of the
user's own kept its refs). A reflog that appeared for a ref that is not there (a candidate's branch
or stash, its ref put back by the guard; its commits in the candidate's own store) goes with it:
left, it would make `git fsck` and `git gc` fail on the user's repository.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import weakref
import zlib
from pathlib import Path

from .gitcmd import GIT

Seen = tuple[int, int, int]
"""(inode, size, ctime_ns) of one file of the store."""
PACKS = "objects/pack/"
LOGS = "logs/"
EXPLORE_LOGS = ("logs/refs/heads/explore/", "logs/refs/explore/")
"""The reflogs of explore's own refs (guard.EXPLORE_REFS)."""


def files(common_dir: Path) -> dict[str, Seen]:
    """The store's files (loose objects, packs and their indexes), relative to the common git dir,
    and the reflogs of refs outside explore's namespace (`logs/refs/…`, named only: see `evict`)."""
    found = _reflogs(common_dir)
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
            if not read_by_git(folder.name, entry.name):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[f"objects/{folder.name}/{entry.name}"] = (info.st_ino, info.st_size, info.st_ctime_ns)
    return found


PACK_FILES = (".idx", ".pack", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes")
"""The endings of the files git reads as a pack's (it loads every `*.idx` of the pack folder, whatever
the name before it, and the files of the same stem beside it)."""
HEX = frozenset("0123456789abcdef")


def read_by_git(folder: str, name: str) -> bool:
    """Whether git ever reads the file `objects/<folder>/<name>` as part of the store: a loose object
    is read only at its id's path (two hex digits, then 38 — 62 with SHA-256); a file of the pack
    folder when it ends as a pack's files do, or is the multi-pack index. What the store check leaves
    out is only what git never reads as an object, whoever wrote it: git's own temporary files
    (`tmp_obj_*`, `tmp_pack_*`, `tmp_idx_*`, none with a pack's ending), lock files, and any other
    name; a pack named like a temporary file (`tmp_pack_x.idx`) is read, and counts."""
    if folder == "pack":
        return name.endswith(PACK_FILES) or name == "multi-pack-index"
    return len(folder) == 2 and len(name) in (38, 62) and HEX.issuperset(folder + name)


def rewritten(
    common_dir: Path, before: dict[str, Seen], after: dict[str, Seen], packs: Packs | None = None
) -> list[str]:
    """The files there before that changed since and no longer hold what their id says (a pack
    counts as changed unless it is byte for byte its copy in packs; a loose object removed counts
    too). New files count for nothing: a new object changes nothing that exists."""
    bad = []
    for rel, seen in before.items():
        if after.get(rel) == seen or rel.startswith(LOGS):
            continue
        folder, _, name = rel.removeprefix("objects/").partition("/")
        if rel not in after:
            bad.append(rel)
        elif folder == "pack":
            if packs is None or not packs.holds(rel):
                bad.append(rel)
        elif not loose_holds(common_dir / rel, folder + name):
            bad.append(rel)
    return bad


def added(before: dict[str, Seen], after: dict[str, Seen]) -> list[str]:
    """The pack files (a pack, its index, reverse index, bitmap, keep file…) that appeared since before."""
    return sorted(rel for rel in after if rel.startswith(PACKS) and rel not in before)


def evict(common_dir: Path, root: Path, before: dict[str, Seen], after: dict[str, Seen], keep: Path) -> list[str]:
    """Move to keep (the quarantine's copy of the git dir) the reflogs that appeared since before
    for refs that are not there now, then the packs that appeared since before (see the module's
    docstring); the files moved, relative to the common git dir. Call it once the refs are back."""
    moved = []
    for rel in sorted(rel for rel in after if rel.startswith(LOGS) and rel not in before):
        if not _ref_exists(root, rel.removeprefix("logs/")):
            move(common_dir / rel, keep / rel)
            moved.append(rel)
    packs: dict[str, list[str]] = {}
    for rel in added(before, after):
        packs.setdefault(rel.rsplit(".", 1)[0], []).append(rel)
    for stem, rels in packs.items():
        index = common_dir / f"{stem}.idx"
        ids = _pack_ids(index) if index.exists() else []
        for rel in rels:
            move(common_dir / rel, keep / rel)
        if _needed(root, ids):  # the user's: put back as it was
            for rel in rels:
                move(keep / rel, common_dir / rel)
        else:
            moved += rels
    return moved


def _needed(root: Path, ids: list[str]) -> bool:
    """Some of ids (a pack's objects, moved out of the store) is found nowhere else in the store and
    is reachable from the user's refs, reflogs, HEAD or index; True when git cannot tell."""
    if not ids:
        return False
    done = subprocess.run(
        [*GIT, "cat-file", "--batch-check"], cwd=root, input="\n".join(ids).encode() + b"\n", capture_output=True
    )
    gone = {line.split(b" ")[0].decode() for line in done.stdout.splitlines() if line.endswith(b" missing")}
    if done.returncode != 0:
        return True
    if not gone:
        return False
    # this checkout only: a candidate's worktree HEAD may name a commit in the candidate's own store
    walk = subprocess.run(
        [*GIT, "rev-list", "--objects", "--all", "--reflog", "--indexed-objects", "--single-worktree"],
        cwd=root,
        capture_output=True,
    )
    if walk.returncode != 0:
        return True
    return any(line[:40].decode() in gone for line in walk.stdout.splitlines())


def _pack_ids(index: Path) -> list[str]:
    """The object ids a pack's index lists (`git show-index`); none when it is not a readable index."""
    try:
        with index.open("rb") as handle:
            done = subprocess.run([*GIT, "show-index"], stdin=handle, capture_output=True, timeout=300)
    except OSError:
        return []
    return [line.split(b" ")[1].decode() for line in done.stdout.splitlines() if b" " in line]


def _ref_exists(root: Path, ref: str) -> bool:
    done = subprocess.run([*GIT, "show-ref", "--verify", "--quiet", ref], cwd=root, capture_output=True)
    return done.returncode == 0


def move(source: Path, target: Path) -> None:
    """source moved to target (its folders made)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(source, target)


def _reflogs(common_dir: Path) -> dict[str, Seen]:
    found: dict[str, Seen] = {}
    base = common_dir / "logs" / "refs"
    for parent, _, names in os.walk(base):
        for name in names:
            path = Path(parent) / name
            rel = path.relative_to(common_dir).as_posix()
            if rel.startswith(EXPLORE_LOGS) or name.endswith(".lock"):
                continue
            try:
                info = path.lstat()
            except OSError:
                continue
            found[rel] = (info.st_ino, info.st_size, info.st_ctime_ns)
    return found


PACK_COPY_CAP = 256 * 2**20
"""The packs of a store up to this size in all are copied once, to be put back byte for byte."""


class Packs:
    """Copies of the store's pack files as they were when first seen, in a folder made under
    `within` (the run's pool folder, which `explore clean` removes after a kill -9; the system's
    temporary folder when None), gone with this object or at exit: what a pack rewritten in place
    is put back from."""

    def __init__(self, common_dir: Path, within: Path | None = None) -> None:
        self.common_dir = common_dir
        self.within = within
        self.folder: Path | None = None
        self.kept: dict[str, Path] = {}
        self.digests: dict[str, str] = {}
        """Each copied pack file's SHA-256, held in memory: without a sandbox a candidate can write the
        copies' folder too, and a copy rewritten with its pack would make the forged pack look kept."""
        self.lock = threading.Lock()

    def keep(self, seen: dict[str, Seen]) -> None:
        """Copy every pack file of seen (a fingerprint's store) not copied yet, while they fit the cap."""
        new = [rel for rel in seen if rel.startswith("objects/pack/") and rel not in self.kept]
        if not new:
            return
        with self.lock:
            total = sum(size for rel, (_, size, _) in seen.items() if rel.startswith("objects/pack/"))
            if total > PACK_COPY_CAP:
                return
            if self.folder is None:
                if self.within is not None:
                    self.within.mkdir(parents=True, exist_ok=True)
                self.folder = Path(tempfile.mkdtemp(prefix=".packs-", dir=self.within))
                weakref.finalize(self, shutil.rmtree, self.folder, True)
            for rel in new:
                copy = self.folder / rel.rsplit("/", 1)[1]
                try:
                    shutil.copyfile(self.common_dir / rel, copy)
                    self.digests[rel] = _digest(copy)
                except OSError:
                    continue
                self.kept[rel] = copy

    def holds(self, rel: str) -> bool:
        """The pack file rel is byte for byte as first seen (by the digest held in memory)."""
        try:
            return rel in self.digests and _digest(self.common_dir / rel) == self.digests[rel]
        except OSError:  # the pack is gone
            return False

    def put_back(self, rel: str, keep: Path) -> bool:
        """The pack file rel as it was first seen (what is there now moved to keep); False without a copy."""
        copy = self.kept.get(rel)
        try:
            if copy is None or _digest(copy) != self.digests.get(rel):  # the copy itself was rewritten
                return False
        except OSError:
            return False
        path = self.common_dir / rel
        keep.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):
            shutil.move(path, keep)
        shutil.copyfile(copy, path)
        os.chmod(path, 0o444)
        return True


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def loose_holds(path: Path, sha: str) -> bool:
    """The loose object file at path inflates to an object whose id is sha."""
    try:
        return hashlib.sha1(zlib.decompress(path.read_bytes())).hexdigest() == sha
    except (OSError, zlib.error):
        return False


def pinned(common_dir: Path) -> dict[str, str]:
    """The environment of explore's git on the store: the shared git dir named, so that a
    `commondir` a candidate planted in it sends git nowhere else."""
    return {**os.environ, "GIT_COMMON_DIR": str(common_dir)}
