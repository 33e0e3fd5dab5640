"""The user's object store as explore trusts it: what explore itself wrote there on purpose, through
one seam (`Store.writing`), and which of its files were last seen holding their ids (`Store.verify`,
after every checkout). What the store holds and how a changed file is told and put back:
objects.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .gitcmd import GIT
from .objects import LOGS, PACKS, Seen, files, loose_holds, pinned


def recover(common_dir: Path, root: Path, rel: str, tree: str, keep: Path) -> None:
    """A loose object that no longer holds its id's content, moved to keep; written again from the
    user's file (in the working tree at root, whose tree is tree) that holds that content."""
    path = common_dir / rel
    keep.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        os.chmod(path, 0o644)
        shutil.move(path, keep)
    sha = rel.removeprefix("objects/").replace("/", "")
    listed = _git(root, common_dir, "ls-tree", "-r", "-z", tree).decode("utf-8", "surrogateescape")
    for line in filter(None, listed.split("\0")):
        meta, _, name = line.partition("\t")
        if meta.split(" ")[2] == sha and (root / name).is_file():
            with store(common_dir).writing():
                store(common_dir).wrote(
                    _git(root, common_dir, "hash-object", "-w", "--no-filters", "--", name).decode().strip()
                )
            return


def _git(root: Path, common_dir: Path, *args: str) -> bytes:
    done = subprocess.run([*GIT, *args], cwd=root, capture_output=True, timeout=300, env=pinned(common_dir))
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} in {root} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return done.stdout


class Store:
    """One object store as explore trusts it (one per store and process: `store`): what explore
    itself wrote there on purpose, and which of its files were last seen holding their ids.

    explore's own git writes the user's store through one seam, `writing`: the blobs and trees of
    a captured change (staging.stage), of the guard's fingerprint of the user's tree, the commits
    it makes (gitrepo.commit_patch, commit_tree, snapshot) and an object it writes again
    (`recover`); each write is recorded (`wrote`, `wrote_tree`) before the lock is let go. Any other
    new file of the store after a candidate's window is not explore's (`foreign`): unless the
    user's own refs, reflogs or index need it (they committed during the run), it is moved to the
    quarantine like a rewritten one. A new loose object must also hold its id, whoever wrote it.

    Reads: explore's checkouts read the store without hashing what they read; `verify` after a
    checkout tells whether a file of the store changed since the last verification (then the
    checkout is not trusted: redo it once the bad files are mended, `mend`) and hashes every loose
    object it has not seen yet (the first call, at the run's first checkout, hashes them all)."""

    def __init__(self, common_dir: Path) -> None:
        self.common_dir = common_dir
        self.lock = threading.RLock()
        self.known: set[str] = set()
        self.pending: dict[str, str | None] = {}
        """Trees explore wrote → the commit they were written against (their objects not listed yet)."""
        self.seen: dict[str, Seen] | None = None
        """The store's files at the last verification, each holding its id (None: never verified)."""
        self.mend: Callable[[list[str]], None] | None = None
        """Puts bad files of the store back or moves them away (set by the run's guard)."""
        self.pack_holds: Callable[[str], bool] | None = None
        """Whether a pack file is byte for byte as first seen (set by the run's guard: objects.Packs)."""
        self.generation = 0
        """How many of explore's writes have ended (`writing`): what a checkout's `begin` notes."""
        self.freshened: dict[str, tuple[Seen, int]] = {}
        """Files of the store that explore's own git changed while it wrote, holding their ids after
        (git freshens the times of an object it writes again, and of the pack that holds it) → what
        they looked like then, and the generation that write ended."""
        self._depth = 0

    def begin(self) -> int:
        """A checkout is about to read the store: the generation to verify it against (`verify`).
        Waits for a write of explore's under way."""
        with self.lock:
            return self.generation

    @contextmanager
    def writing(self) -> Iterator[None]:
        """explore's own writes to the store, recorded before the lock goes; `foreign` waits for them.
        What the store's files looked like before and after is noted: a file that explore's git
        changed in between (it freshens the times of an object it writes again) and that still
        holds its id is explore's doing (`freshened`), not a reason to distrust a later checkout."""
        with self.lock:
            self._depth += 1
            before = files(self.common_dir) if self._depth == 1 and self.seen is not None else None
            try:
                yield
            finally:
                self._depth -= 1
                if before is not None:
                    self.generation += 1
                    self._note(before, files(self.common_dir))

    def _note(self, before: dict[str, Seen], after: dict[str, Seen]) -> None:
        """The files that changed between before and after (one of explore's writes) and that hold
        their ids, when they were as last verified (or as explore's git last left them) before it."""
        for rel, seen in after.items():
            was = before.get(rel)
            if was is None or was == seen or rel.startswith(LOGS) or was[:2] != seen[:2]:
                continue
            trusted = {(self.seen or {}).get(rel), self.freshened.get(rel, (None, 0))[0]}
            if was not in trusted:  # changed before explore wrote: not explore's to explain
                continue
            holds = self.pack_holds(rel) if rel.startswith(PACKS) and self.pack_holds else False
            if holds or (not rel.startswith(PACKS) and loose_holds(self.common_dir / rel, _sha(rel))):
                self.freshened[rel] = (seen, self.generation)

    def wrote(self, *ids: str) -> None:
        with self.lock:
            self.known.update(i for i in ids if i)

    def wrote_tree(self, tree: str, base: str | None = None) -> None:
        """tree (and every object under it that base's tree does not hold) was written by explore."""
        with self.lock:
            if tree and tree not in self.known:
                self.pending[tree] = base

    def owns(self, ids: set[str]) -> set[str]:
        """The ids among ids that explore wrote (its recorded trees expanded when needed)."""
        with self.lock:
            if ids - self.known and self.pending:
                roots, bases = list(self.pending), {b for b in self.pending.values() if b}
                self.pending.clear()
                listed = subprocess.run(
                    [
                        *GIT,
                        f"--git-dir={self.common_dir}",
                        "rev-list",
                        "--objects",
                        "--no-object-names",
                        *roots,
                        "--not",
                        *(f"{b}^{{tree}}" for b in sorted(bases)),
                    ],
                    capture_output=True,
                    timeout=300,
                    env=pinned(self.common_dir),
                )
                self.known.update(roots)
                self.known.update(listed.stdout.decode().split())
            return ids & self.known

    def foreign(self, root: Path, before: dict[str, Seen], after: dict[str, Seen]) -> list[str]:
        """The loose objects new since before that explore did not write (and the user's refs,
        reflogs and index do not need), or that do not hold their id: a candidate's."""
        new = {
            rel: _sha(rel)
            for rel in after
            if rel not in before and rel.startswith("objects/") and not rel.startswith(PACKS)
        }
        if not new:
            return []
        with self.lock:
            bad = {rel for rel, sha in new.items() if not self._holds(rel, after[rel], sha)}
            rest = {sha: rel for rel, sha in new.items() if rel not in bad}
            unknown = set(rest) - self.owns(set(rest))
            if unknown:  # the user committed or staged during the run
                unknown -= _reachable(root, self.common_dir, unknown)
            return sorted(bad | {rest[sha] for sha in unknown})

    def _holds(self, rel: str, seen: Seen, sha: str) -> bool:
        """The loose object at rel holds its id (hashed once per version of the file)."""
        if self.seen is not None and self.seen.get(rel) == seen:
            return True
        return loose_holds(self.common_dir / rel, sha)

    def verify(self, since: int | None = None) -> list[str]:
        """The files of the store a checkout made since the last verification may have read wrong:
        those that do not hold their id (hashed: every loose object new or changed since; mended
        first) and those that changed since (one rewritten and put back in between) — but explore's
        own objects that still hold their ids, and the files a write of explore's that ended before
        the checkout began (since: `begin`'s generation) left as they are now (`freshened`) — and
        the pack files new since (mended: moved out unless the user's refs need them). The first
        call hashes every loose object."""
        with self.lock:
            now = {rel: seen for rel, seen in files(self.common_dir).items() if not rel.startswith(LOGS)}
            last = self.seen or {}
            changed = [rel for rel, seen in last.items() if now.get(rel) != seen]
            hashed = {rel for rel, (seen, _) in self.freshened.items() if now.get(rel) == seen}  # since noted
            bad = [
                rel
                for rel in [*changed, *(rel for rel in now if rel not in last)]
                if rel in now
                and not rel.startswith(PACKS)
                and rel not in hashed
                and not loose_holds(self.common_dir / rel, _sha(rel))
            ]
            # git reads an object from a pack before its loose file, and explore's git writes no pack:
            # one new since the last verification may have served the checkout anything under any id
            added = [rel for rel in now if rel not in last and rel.startswith(PACKS)] if self.seen is not None else []
            if (bad or added) and self.mend is not None:
                self.mend(bad + added)
                now = {rel: seen for rel, seen in files(self.common_dir).items() if not rel.startswith(LOGS)}
            self.seen = {rel: seen for rel, seen in now.items() if rel not in bad or self.mend is not None}
            return sorted({*bad, *added} | {rel for rel in changed if not self._explained(rel, now, since)})

    def _explained(self, rel: str, now: dict[str, Seen], since: int | None) -> bool:
        """rel changed since the last verification by explore's own doing: an object it wrote, or a
        file a write of its that ended before the checkout began left as it is now."""
        if _sha(rel) in self.known:
            return True
        seen, generation = self.freshened.get(rel, (None, 0))
        return since is not None and seen is not None and now.get(rel) == seen and generation <= since


def _sha(rel: str) -> str:
    """The id of the loose object at rel (`objects/ab/cdef…`)."""
    return rel.removeprefix("objects/").replace("/", "")


_STORES: dict[Path, Store] = {}
_STORES_LOCK = threading.Lock()


def store(common_dir: Path) -> Store:
    """The one Store of the object store of the repository whose common git dir is common_dir."""
    key = Path(common_dir).resolve()
    with _STORES_LOCK:
        return _STORES.setdefault(key, Store(key))


def _reachable(root: Path, common_dir: Path, ids: set[str]) -> set[str]:
    """The ids among ids reachable from the user's refs (explore's own left out: a candidate may
    write there), HEAD or index — not reflogs, whose lines a candidate may append to unseen."""
    walk = subprocess.run(
        [*GIT, "rev-list", "--objects", "--no-object-names", *_USER_REFS, "--indexed-objects", "--single-worktree"],
        cwd=root,
        capture_output=True,
        env=pinned(common_dir),
    )
    return ids & set(walk.stdout.decode().split())


_USER_REFS = ("--exclude=refs/explore/*", "--exclude=refs/heads/explore/*", "--all")
