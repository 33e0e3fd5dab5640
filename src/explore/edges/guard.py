"""What a candidate must never change, fingerprinted before and after it runs, and put back.

Guarded (`guarded_git_paths`, the one list): in the repository's shared git dir, every file but
what NOT_GUARDED names (an allow-list: config, hooks, info/, HEAD, `shallow`, `commondir`,
`objects/info/`… are guarded whether or not a trick was seen there), refs outside explore's own
namespace (loose files under `refs/` and the lines of `packed-refs`); every submodule's `config`, `config.worktree`,
`hooks/` and `info/` under `modules/`; each linked worktree's `config.worktree`; the user's own index (compared entry by entry, flags
included: git rewrites its stat data at will) and `config.worktree`; every config file git reads
outside the repository (`gitconfigs.global_config_paths`: the global `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`,
`GIT_CONFIG_GLOBAL`, the system file) with the global attributes and ignore files; every file one of
these config files includes (`gitconfigs.included`: `include.path`, `includeIf.*.path`); the object store (each loose
object and pack by inode, size and change time: one whose file changed is hashed against its id);
and the user's working tree — tracked and untracked, not ignored, files, as the dirty-tree snapshot
records them (a tree made from a copy of the user's index, so the user's index is never written).

A change is put back byte for byte: git-dir files from the copies kept at the fingerprint, the
working tree from the blobs of the fingerprint's tree (each blob hashed against its id as it is
read), a loose object rewritten under its own id moved to the quarantine and written again from the
user's file that holds its content, when one does; a pack or its index from the copy made when it
was first fingerprinted (objects.Packs, while the store's packs stay under 256 MiB, and only while
candidates are not confined); a pack that appeared, and a loose object that no step of explore wrote
(trust.Store), are moved out (objects.evict), with a ref of explore's namespace that names one. What the restore overwrites or deletes is
first copied to a quarantine folder, so a change the user made themselves is never lost.

Who made a change: `attribution.Watch`; which config files outside the repository: `gitconfigs`.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from explore.edges import checkouts, objects, trust
from explore.edges.gitconfigs import global_config_paths, included
from explore.edges.gitrepo import GIT, object_id

EXPLORE_REFS = ("refs/heads/explore/", "refs/explore/")
"""explore's own ref namespace: its run branches, which it writes while candidates run."""
NOT_GUARDED = (
    "objects",
    "logs",
    "worktrees",
    "modules",
    "lfs",
    "annex",
    "explore-ignores",
    "index",
    "COMMIT_EDITMSG",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "AUTO_MERGE",
    "gc.log",
    "gc.pid",
)
"""What of the shared git dir is not compared file by file: the object store (trust.Store: new
objects, rewritten ones; `objects/info/` is guarded), reflogs (objects.evict), the worktrees' admin
folders (explore's and the candidates' own; each `config.worktree` is guarded), submodules' git dirs
(MODULE_FILES), git-lfs's and git-annex's object caches, explore's own ignore file, the index (compared entry by
entry), and what the user's own commands leave behind as they work (the last commit message,
ORIG_HEAD, FETCH_HEAD, gc's log). Everything else there — config, HEAD, refs, packed-refs, hooks,
info/, `shallow`, `commondir`, a merge or rebase in progress, `objects/info/alternates` and the
commit-graph — is what git reads as the repository's state: guarded, put back byte for byte."""
MODULE_FILES = ("config", "config.worktree")
MODULE_FOLDERS = ("hooks", "info")
"""What is guarded in every submodule's git dir under `modules/` (at any depth)."""
CONFIG_NAMES = ("config", "config.worktree", ".gitconfig")
"""The guarded files that are git config files (their includes are followed: `included`)."""
OWN_FILES = ("index", "config.worktree")
"""What is guarded in the user's own git dir when it is not the shared one (a linked worktree)."""
INDEX = "index"


@dataclass(frozen=True)
class Fingerprint:
    git_files: dict[str, tuple[int, bytes]]
    """Path relative to the common git dir → (mode, content), explore's refs left out."""
    tree: str
    """The tree of the user's working tree (tracked and untracked, not ignored)."""
    elsewhere: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """Files directly in the user's home, ~/.ssh, ~/.config and the repository's parent folder →
    (size, mtime_ns, inode): named when they change, never put back (explore keeps no copy)."""
    objects: dict[str, tuple[int, int, int]] = field(default_factory=dict, compare=False)
    """The object store's files (loose objects, packs and their indexes), relative to the common
    git dir → (inode, size, ctime_ns): a file changed in place or replaced is hashed against its id
    (`Guard.compare`); new objects change nothing that exists, so two fingerprints are equal
    whatever objects were added between them."""


@dataclass(frozen=True)
class Change:
    paths: list[str]
    """What changed, as a person finds it: `.git/hooks/post-commit`, `calc.py`."""
    restored: bool
    """Everything is back as it was (checked by a fresh fingerprint)."""
    quarantine: Path | None = None
    """Where what the restore replaced was copied."""
    elsewhere: list[str] = field(default_factory=list)
    """Files outside the repository that changed (named, not put back)."""


@dataclass
class Guard:
    """The repository whose shared git dir and working tree no candidate may change."""

    root: Path
    git_dir: Path
    """The user's own git dir (its index is the one the working tree is read through)."""
    common_dir: Path
    quarantine_root: Path

    packs_within: Path | None = None
    """Where the packs' copies go (the run's pool folder); a temporary folder when None."""
    packs: objects.Packs | None = field(default=None, repr=False, compare=False)
    """Copies of the store's packs as first fingerprinted (objects.Packs): what a pack is put back from."""
    confined: bool = False
    """Candidates run in a sandbox that keeps them out of the object store: no pack is copied."""
    store: trust.Store = field(init=False, repr=False, compare=False)
    """The store as explore trusts it: what explore wrote there, what was verified (trust.Store)."""
    last_tree: str = field(default="", init=False, repr=False, compare=False)
    """The user's working tree at the last fingerprint: where a rewritten loose object is recovered from."""

    def __post_init__(self) -> None:
        self.store = trust.store(self.common_dir)
        self.store.mend = self.mend
        self.store.pack_holds = self._pack_holds

    def _copied(self, rel: str) -> bool:
        return self.packs is not None and rel in self.packs.kept

    def _pack_holds(self, rel: str) -> bool:
        """The pack file rel is as first fingerprinted (by its copy's digest); any pack, when candidates
        are confined: the kernel keeps them out of the store, and no copy is made."""
        return self.confined or (self.packs is not None and self.packs.holds(rel))

    def fingerprint(self) -> Fingerprint:
        store = objects.files(self.common_dir)
        if self.packs is None:
            self.packs = objects.Packs(self.common_dir, self.packs_within)
        if not self.confined:
            self.packs.keep(store)
        self.last_tree = self._tree()
        return Fingerprint(self._git_files(), self.last_tree, self._elsewhere(), store)

    def mend(self, rels: list[str]) -> None:
        """Files of the store that do not hold their id (trust.Store.verify found them after a
        checkout): a pack put back from its copy, one that appeared moved out (objects.evict); a loose object written again from the user's file
        that holds its content, when there is one (else only moved away); each kept in the quarantine."""
        folder = self.quarantine_root / f"store-{time.strftime('%H%M%S')}"
        tree = self.last_tree or self._tree()
        added = {rel: (0, 0, 0) for rel in rels if rel.startswith(objects.PACKS) and not self._copied(rel)}
        if added:  # a pack that appeared: moved out unless the user's refs need an object only it holds
            objects.evict(self.common_dir, self.root, {}, added, folder / ".git")
        for rel in rels:
            if rel in added:
                continue
            if rel.startswith(objects.PACKS):
                if self.packs is not None:
                    self.packs.put_back(rel, folder / ".git" / rel)
            else:
                trust.recover(self.common_dir, self.root, rel, tree, folder / ".git" / rel)

    def guarded_git_paths(self) -> list[Path]:
        """Every git-dir file a candidate must not change (see the module's docstring): decided here."""
        found = [self.common_dir / name for name in ("config", "config.worktree", "HEAD", "packed-refs")]
        for entry in sorted(os.scandir(self.common_dir), key=lambda e: e.name) if self.common_dir.is_dir() else []:
            if entry.name in NOT_GUARDED:
                continue
            found += _files_under(Path(entry.path)) if entry.is_dir(follow_symlinks=False) else [Path(entry.path)]
        found += _files_under(self.common_dir / "objects" / "info")
        modules = self.common_dir / "modules"
        if modules.is_dir():
            for parent, dirs, names in os.walk(modules):
                here = Path(parent)
                dirs[:] = [d for d in dirs if d != "objects" and d != "refs" and d != "logs"]
                if "HEAD" in names or "config" in names:  # a submodule's git dir
                    found += [here / name for name in MODULE_FILES]
                    found += [f for folder in MODULE_FOLDERS for f in _files_under(here / folder)]
                    dirs[:] = [d for d in dirs if d == "modules"]
        found += sorted((self.common_dir / "worktrees").glob("*/config.worktree"))  # linked worktrees' own config
        found.append(self.git_dir / INDEX)
        if self.git_dir.resolve() != self.common_dir.resolve():
            found += [self.git_dir / name for name in OWN_FILES]
        found += global_config_paths()
        found += included([path for path in found if path.name in CONFIG_NAMES] + global_config_paths())
        return list(dict.fromkeys(found))

    def _elsewhere(self) -> dict[str, tuple[int, int, int]]:
        home = Path(os.path.expanduser("~"))
        guarded = {str(path) for path in global_config_paths()}
        guarded |= {str(path) for path in included([*map(Path, guarded), self.common_dir / "config"])}
        found = {}
        for folder in dict.fromkeys(
            [home, home / ".ssh", home / ".config", home / ".config" / "git", self.root.parent]
        ):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.path in guarded:  # put back like .git/config, not only named
                    continue
                try:
                    if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                        info = entry.stat(follow_symlinks=False)
                        found[entry.path] = (info.st_size, info.st_mtime_ns, info.st_ino)
                except OSError:
                    continue
        return found

    def elsewhere(self, before: Fingerprint, after: Fingerprint) -> list[str]:
        return sorted(
            p
            for p in before.elsewhere.keys() | after.elsewhere.keys()
            if before.elsewhere.get(p) != after.elsewhere.get(p)
        )

    def compare(self, before: Fingerprint, after: Fingerprint) -> list[str]:
        shown = self._shown_git_dir()
        theirs, their_files = self._not_candidates(before, after)
        paths = sorted(
            p if p.startswith("/") else f"{shown}/{p}"
            for p in before.git_files.keys() | after.git_files.keys()
            if p not in theirs and self._differs(p, before.git_files.get(p), after.git_files.get(p))
        )
        paths += [
            f"{shown}/{rel}" for rel in objects.rewritten(self.common_dir, before.objects, after.objects, self.packs)
        ]
        paths += [f"{shown}/{rel}" for rel in objects.added(before.objects, after.objects)]
        foreign = self.store.foreign(self.root, before.objects, after.objects)
        paths += [f"{shown}/{rel}" for rel in foreign]
        paths += [f"{shown}/{ref}" for ref in self._naming(foreign)]
        if before.tree != after.tree:
            paths += sorted(rel for _, _, rel in self._tree_entries(before.tree, after.tree) if rel not in their_files)
        return paths

    def _not_candidates(self, before: Fingerprint, after: Fingerprint) -> tuple[frozenset[str], frozenset[str]]:
        """(git-dir paths, working-tree paths) no candidate changed: another checkout's branch, and
        the user's commits in this checkout with what they changed (edges/checkouts.py decides)."""
        theirs = checkouts.others(self.root, self.common_dir, self.git_dir)
        mine = checkouts.committed_here(
            self.root, self.common_dir, self.git_dir, before.git_files, after.git_files, after.tree
        )
        if mine is None:
            return theirs, frozenset()
        return theirs | mine.git_paths, mine.files

    def drift(self, before: Fingerprint) -> list[str]:
        """What changed since before in the user's tree, hooks and config — no candidate runs now,
        so nothing explains it (explore itself may add to info/exclude and its own refs)."""
        now = self.fingerprint()
        kept = {p: v for p, v in now.git_files.items() if p == "config" or p.startswith("hooks/")}
        old = {p: v for p, v in before.git_files.items() if p == "config" or p.startswith("hooks/")}
        paths = self.compare(Fingerprint(old, before.tree), Fingerprint(kept, now.tree))
        _, committed = self._not_candidates(before, now)  # the user's commits explain their files
        return [p for p in paths if p not in committed]

    def restore(self, before: Fingerprint, after: Fingerprint, label: str) -> Change:
        """Put back what changed between before and after; returns what changed and whether the
        restore holds (a writer still running may undo it)."""
        paths = self.compare(before, after)
        if not paths:
            return Change([], True)
        folder = self.quarantine_root / f"{label}-{time.strftime('%H%M%S')}"
        for n in range(2, 1000):  # two restores within a second keep both copies
            if not folder.exists():
                break
            folder = folder.with_name(f"{label}-{time.strftime('%H%M%S')}-{n}")
        theirs, their_files = self._not_candidates(before, after)
        for rel in sorted(before.git_files.keys() | after.git_files.keys()):
            old, new = before.git_files.get(rel), after.git_files.get(rel)
            if rel not in theirs and self._differs(rel, old, new):
                keep = folder / "outside" / rel.lstrip("/") if rel.startswith("/") else folder / ".git" / rel
                self._put_back(self.common_dir / rel, old, keep)
        for rel in objects.rewritten(self.common_dir, before.objects, after.objects, self.packs):
            if rel.startswith("objects/pack/"):  # from its copy, when the store was small enough to keep one
                if self.packs is not None:
                    self.packs.put_back(rel, folder / ".git" / rel)
            else:
                trust.recover(self.common_dir, self.root, rel, before.tree, folder / ".git" / rel)
        objects.evict(self.common_dir, self.root, before.objects, after.objects, folder / ".git")
        foreign = self.store.foreign(self.root, before.objects, after.objects)  # not explore's: a candidate's
        dangling = self._naming(foreign)
        for rel in foreign:
            objects.move(self.common_dir / rel, folder / ".git" / rel)
        for ref in dangling:  # left, it would name a missing object: the user's fsck and gc would fail
            subprocess.run(
                [*GIT, "update-ref", "--no-deref", "-d", ref], cwd=self.root, env=self._pinned(), capture_output=True
            )
        if before.tree != after.tree:
            for mode, sha, rel in self._tree_entries(before.tree, after.tree):
                if rel in their_files:
                    continue
                self._put_back(
                    self.root / rel, (mode, _blob(self.root, sha, self._pinned())) if sha else None, folder / rel
                )
        held = not self.compare(before, self.fingerprint())
        return Change(paths, held, folder if folder.exists() else None)

    def _differs(self, rel: str, old: tuple[int, bytes] | None, new: tuple[int, bytes] | None) -> bool:
        """A change that counts: the index by its entries and their flags (git rewrites its stat
        data whenever it likes), packed-refs without explore's own refs, anything else byte for byte
        — but a lock file that went away: its owner (the user's `git commit`, held open by an editor
        when the run began) finished; put back, it would lock the user out."""
        if old == new or (rel.endswith(".lock") and new is None):
            return False
        if old is not None and new is not None and Path(rel).name == INDEX:
            return self._entries(old[1]) != self._entries(new[1])
        return _comparable(rel, old) != _comparable(rel, new)

    def _entries(self, index: bytes) -> bytes:
        with tempfile.TemporaryDirectory(prefix="explore-guard-") as folder:
            copy = Path(folder) / "index"
            copy.write_bytes(index)
            return _git(self.root, ["ls-files", "-z", "-s", "-v"], self._pinned({"GIT_INDEX_FILE": str(copy)}))

    def _naming(self, rels: list[str]) -> list[str]:
        """The refs of explore's own namespace (not compared: explore writes them while candidates
        run) that name one of the objects at rels: a candidate's, written beside its objects."""
        ids = {rel.removeprefix("objects/").replace("/", "") for rel in rels}
        if not ids:
            return []
        found = [ref for ref, sha in _explore_refs(self.common_dir).items() if sha in ids]
        return sorted(found)

    # ------------------------------------------------------------------ reading

    def _pinned(self, env: dict[str, str] | None = None) -> dict[str, str]:
        """The guard's git names the repository's dirs itself: a `commondir` or `.git` file a
        candidate planted sends it nowhere else while it reads what to put back."""
        return {
            "GIT_DIR": str(self.git_dir),
            "GIT_COMMON_DIR": str(self.common_dir),
            "GIT_WORK_TREE": str(self.root),
            "GIT_OBJECT_DIRECTORY": str(self.common_dir / "objects"),
            **(env or {}),
        }

    def _shown_git_dir(self) -> str:
        try:
            return str(self.common_dir.relative_to(self.root))
        except ValueError:
            return str(self.common_dir)

    def _git_files(self) -> dict[str, tuple[int, bytes]]:
        found: dict[str, tuple[int, bytes]] = {}
        for path in self.guarded_git_paths():
            rel = Path(os.path.relpath(path, self.common_dir)).as_posix()
            rel = path.as_posix() if rel.startswith("../") else rel  # outside the repository: by its own path
            if rel.startswith(EXPLORE_REFS):  # a lock file is guarded like its neighbours: left, it stops git
                continue
            try:
                info = path.lstat()
                data = os.readlink(path).encode() if stat.S_ISLNK(info.st_mode) else path.read_bytes()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            found[rel] = (info.st_mode, data)
        return found

    def _tree(self) -> str:
        with tempfile.TemporaryDirectory(prefix="explore-guard-") as folder:
            index = Path(folder) / "index"
            if (self.git_dir / "index").exists():
                shutil.copyfile(self.git_dir / "index", index)  # its stat cache: only changed files are read
            env = self._pinned({"GIT_INDEX_FILE": str(index), "GIT_OPTIONAL_LOCKS": "0"})
            with self.store.writing():  # the user's files' blobs: explore's own writes (trust.Store)
                _git(self.root, ["add", "-A"], env)
                tree = _git(self.root, ["write-tree"], env).decode().strip()
                self.store.wrote_tree(tree, "HEAD")
            return tree

    def _tree_entries(self, before: str, after: str) -> list[tuple[int, str | None, str]]:
        """(old mode, old blob or None when the path is new, path) for every path that differs."""
        out = _git(self.root, ["diff-tree", "-r", "-z", "--no-renames", before, after], self._pinned()).decode(
            "utf-8", "surrogateescape"
        )
        parts = out.split("\0")
        entries = []
        for meta, rel in zip(parts[0::2], parts[1::2]):
            old_mode, _, old_sha, _, status = meta.lstrip(":").split(" ")
            if old_mode == "160000":  # a submodule's commit: nothing to write back here
                continue
            entries.append((int(old_mode, 8), None if status == "A" else old_sha, rel))
        return entries

    # ------------------------------------------------------------------ writing

    @staticmethod
    def _put_back(path: Path, old: tuple[int, bytes] | None, keep: Path) -> None:
        """path as it was (old), or gone when it did not exist; its present content kept at keep."""
        if path.is_symlink() or path.is_file():
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, keep, follow_symlinks=False)
            path.unlink()
        elif path.is_dir():
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(path, keep, symlinks=True, dirs_exist_ok=True)
            shutil.rmtree(path)
        if old is None:
            return
        mode, data = old
        path.parent.mkdir(parents=True, exist_ok=True)
        if stat.S_ISLNK(mode):
            os.symlink(data.decode("utf-8", "surrogateescape"), path)
            return
        path.write_bytes(data)
        os.chmod(path, stat.S_IMODE(mode))


def _comparable(rel: str, entry: tuple[int, bytes] | None) -> tuple[int, bytes] | None:
    """packed-refs is compared without explore's own refs (written by explore while candidates run)."""
    if entry is None or rel != "packed-refs":
        return entry
    kept = [
        line for line in entry[1].splitlines(keepends=True) if not any(f" {ns}".encode() in line for ns in EXPLORE_REFS)
    ]
    return entry[0], b"".join(kept)


def _explore_refs(common_dir: Path) -> dict[str, str]:
    """explore's namespace's refs → the ids they name, read from the files (git refuses to list a
    ref whose object is missing): loose refs, then packed-refs' lines that no loose ref overrides."""
    found: dict[str, str] = {}
    try:
        for line in (common_dir / "packed-refs").read_text(errors="replace").splitlines():
            sha, _, ref = line.partition(" ")
            if ref.startswith(EXPLORE_REFS):
                found[ref] = sha
    except OSError:
        pass
    for space in EXPLORE_REFS:
        for path in _files_under(common_dir / space):
            try:
                found[path.relative_to(common_dir).as_posix()] = path.read_text(errors="replace").strip()
            except OSError:
                continue
    return found


def _blob(root: Path, sha: str, env: dict[str, str]) -> bytes:
    """The blob sha, refused (RuntimeError) unless its content hashes to sha: `git cat-file` does
    not check, and a loose object can be rewritten in place."""
    data = _git(root, ["cat-file", "blob", sha], env)
    if object_id(b"blob", data) != sha:
        raise RuntimeError(f"object {sha} in the repository's store does not hold what its id says (rewritten?)")
    return data


def _files_under(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [Path(d) / f for d, _, files in os.walk(folder) for f in files]


def _git(root: Path, args: list[str], env: dict[str, str] | None = None) -> bytes:
    done = subprocess.run([*GIT, *args], cwd=root, env={**os.environ, **(env or {})}, capture_output=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} in {root} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return done.stdout
