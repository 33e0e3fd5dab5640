"""Issue 37, point 5: the user's object store afterwards holds what it held before plus what explore
wrote there on purpose (trust.Store), and what explore's checkouts read from it holds its id.
Real git, a real pool of linked worktrees and the run's guard, no `explore run` (the run-level
attack is test_repo_integrity's store test, sandbox on and off)."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import zlib
from pathlib import Path

import git as gitpython

from conftest import git, make_repo
from explore.edges import guard, objects, trust
from explore.edges.worktrees import WorktreePool

TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FILES = {"calc.py": "def add(a, b):\n    return a - b\n", "tests/test_calc.py": TEST}


def setup(tmp_path: Path) -> tuple[Path, WorktreePool, guard.Guard]:
    repo = make_repo(tmp_path / "repo", FILES)
    pool = WorktreePool(gitpython.Repo(repo), repo, tmp_path / "worktrees" / "run")
    fence = guard.Guard(repo, repo / ".git", repo / ".git", tmp_path / "quarantine", packs_within=pool.root)
    return repo, pool, fence


def unconfined(worktree: Path, *args: str, data: bytes = b"") -> str:
    """git as a candidate without a sandbox runs it once it dropped explore's GIT_* variables: the
    worktree's `.git` leads it to the user's store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", *args], cwd=worktree, input=data, env=env, capture_output=True, check=True)
    return done.stdout.decode().strip()


def test_a_loose_object_a_candidate_wrote_goes_and_explores_own_stay(tmp_path: Path) -> None:
    repo, pool, fence = setup(tmp_path)
    path, _ = pool.acquire("a", git(repo, "rev-parse", "HEAD"))
    before = fence.fingerprint()
    smuggled = unconfined(path, "hash-object", "-w", "--stdin", data=b"smuggled by a\n")
    tree = unconfined(path, "mktree", data=f"100644 blob {smuggled}\tx\n".encode())
    kept = unconfined(path, "-c", "user.name=a", "-c", "user.email=a@b", "commit-tree", tree, "-m", "kept")
    unconfined(path, "update-ref", "refs/explore/runs/kept", kept)  # explore's namespace: not compared
    (path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    captured = pool.capture_patch(path, tmp_path / "a.patch")  # explore's own writes, in the same window
    git(repo, "commit", "-q", "--allow-empty", "-m", "the user's own commit meanwhile")
    after = fence.fingerprint()
    rel = f"objects/{smuggled[:2]}/{smuggled[2:]}"
    named = fence.compare(before, after)
    assert f".git/{rel}" in named and ".git/refs/explore/runs/kept" in named and len(named) == 4, named
    change = fence.restore(before, after, "iteration-1-a")
    assert change.restored and change.quarantine is not None and (change.quarantine / ".git" / rel).exists()
    assert subprocess.run(["git", "cat-file", "-e", smuggled], cwd=repo).returncode != 0
    assert git(repo, "for-each-ref", "refs/explore/") == ""  # no ref left naming a missing object
    assert git(repo, "cat-file", "-t", captured.tree) == "tree" and git(repo, "cat-file", "-t", "HEAD") == "commit"
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
    pool.remove_all()


def test_a_forged_loose_object_of_the_users_commit_never_reaches_a_checkout(tmp_path: Path) -> None:
    """Between two windows (sandbox off, a process of a candidate that outlived it) a loose object of
    the user's commit is rewritten in place under its own id with a weakened test. The next checkouts
    — a new worktree and a reused one — hold the user's test: the object is mended from the user's
    file first (its forged copy kept in the quarantine)."""
    repo, pool, fence = setup(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    fence.fingerprint()
    a, _ = pool.acquire("a", head)  # the run's first checkout: every loose object hashed once
    blob = git(repo, "rev-parse", "HEAD:tests/test_calc.py")
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    weak = TEST.replace("== 5", "== add(2, 3)").encode()
    for slot in ("b", "a"):
        os.chmod(loose, 0o644)
        loose.write_bytes(zlib.compress(b"blob %d\0" % len(weak) + weak))
        path, _ = pool.acquire(slot, head)
        assert (path / "tests" / "test_calc.py").read_text() == TEST, slot
        assert objects.loose_holds(loose, blob)
    assert list((tmp_path / "quarantine").glob(f"store-*/.git/objects/{blob[:2]}/{blob[2:]}"))
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
    pool.remove_all()


def test_a_pack_named_like_gits_temporary_files_counts_and_goes(tmp_path: Path) -> None:
    """git loads every `objects/pack/*.idx`, whatever comes before the ending: a candidate's pack
    named like git's temporary files (`tmp_pack_…`) was left out of the store's listing (it skipped
    every `tmp_*` and `*.lock` name) and stayed, readable, in the user's store. Only names git never
    reads as an object are left out now: git's own temporaries (no pack ending) and lock files."""
    repo, pool, fence = setup(tmp_path)
    path, _ = pool.acquire("a", git(repo, "rev-parse", "HEAD"))
    before = fence.fingerprint()
    own = {
        "GIT_OBJECT_DIRECTORY": str(tmp_path / "own"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(repo / ".git/objects"),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | own
    run = functools.partial(subprocess.run, cwd=path, env=env, capture_output=True, check=True)
    (tmp_path / "own").mkdir()  # the candidate's git writes its own store, as sandbox.py has it
    smuggled = run(["git", "hash-object", "-w", "--stdin"], input=b"smuggled by a\n").stdout.decode().strip()
    packs = repo / ".git" / "objects" / "pack"
    run(["git", "pack-objects", "-q", str(packs / "tmp_pack_x")], input=f"{smuggled}\n".encode())
    inert = [packs / "tmp_pack_Ab12Cd", repo / ".git" / "objects" / smuggled[:2] / "tmp_obj_Ab12Cd"]
    for path_ in inert:  # what git's own writers leave for a moment; git never reads them
        path_.parent.mkdir(exist_ok=True)
        path_.write_bytes(b"half written\n")
    assert git(repo, "cat-file", "-t", smuggled) == "blob"  # the user's git reads the smuggled pack
    named = fence.compare(before, fence.fingerprint())
    assert sorted(p.rsplit("/", 1)[1].split("-")[0] for p in named) == ["tmp_pack_x", "tmp_pack_x"], named
    change = fence.restore(before, fence.fingerprint(), "iteration-1-a")
    assert change.restored and subprocess.run(["git", "cat-file", "-e", smuggled], cwd=repo).returncode != 0
    pool.remove_all()


def test_explores_own_writes_freshen_the_users_objects_without_distrusting_a_later_checkout(tmp_path: Path) -> None:
    """git freshens the times of an object it writes again, and of the pack that holds it: every
    capture of a candidate's change (`add -A` over the whole tree) did so to the user's objects, and
    the store's check took each such file for one rewritten and put back — the next checkout of every
    worktree was done twice (seen in 36 checkouts over ten runs of test_whole_first and test_tamper).
    A write through explore's one seam that ended before a checkout began explains what it changed,
    when the file still holds its id; nothing else does: a write overlapping the checkout, a file
    touched by another process, a file rewritten while explore wrote."""
    repo, pool, fence = setup(tmp_path)
    git(repo, "gc", "-q")  # packed, as a cloned repository is
    loose = hashed(repo, b"the user's loose object\n")
    head = git(repo, "rev-parse", "HEAD")
    fence.fingerprint()  # the packs' copies, before any candidate runs
    store = trust.store(repo / ".git")
    pool.acquire("a", head)  # the run's first checkout: the store verified
    pack = next(p for p in (repo / ".git/objects/pack").iterdir() if p.suffix == ".pack")
    rel = f"objects/{loose[:2]}/{loose[2:]}"
    stamps = [(p.stat().st_ino, p.stat().st_ctime_ns) for p in (pack, repo / ".git" / rel)]

    def again() -> None:  # explore's own git writing the user's objects again (a capture does)
        with store.writing():
            git(repo, "hash-object", "-w", "calc.py")
            hashed(repo, b"the user's loose object\n")

    overlapping = store.begin()
    again()
    assert [(p.stat().st_ino, p.stat().st_ctime_ns) for p in (pack, repo / ".git" / rel)] != stamps  # freshened
    assert store.verify(store.begin()) == []  # a checkout after the write: nothing to distrust
    again()
    assert store.verify(overlapping) == [rel, f"objects/pack/{pack.name}"]  # it overlapped: checked out again
    os.utime(repo / ".git" / rel)  # another process (a candidate's git, unsandboxed) freshens it
    assert store.verify(store.begin()) == [rel]
    with store.writing():  # rewritten while explore writes: not explore's doing
        os.chmod(repo / ".git" / rel, 0o644)
        (repo / ".git" / rel).write_bytes(zlib.compress(b"blob 4\0weak"))
        git(repo, "hash-object", "-w", "calc.py")
    assert rel in store.verify(store.begin())
    pool.remove_all()


def test_a_pack_a_candidate_adds_never_serves_a_checkout(tmp_path: Path) -> None:
    """git reads an object from a pack before its loose file, without hashing it: a pack a candidate
    (sandbox off) adds, whose index claims the id of the user's test for a weakened one, served the
    next checkout of another worktree, and the store's check trusted it (it looked at changed files
    and new loose objects). A pack new since the last verification is moved out (unless the user's
    refs need an object only it holds) before the checkout is done again."""
    repo, pool, fence = setup(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    fence.fingerprint()
    pool.acquire("a", head)  # the run's first checkout: the store verified
    blob = git(repo, "rev-parse", "HEAD:tests/test_calc.py")
    weak = TEST.replace("== 5", "== add(2, 3)")
    forge_pack(repo / ".git" / "objects" / "pack", blob, weak.encode(), tmp_path / "own")
    assert git(repo, "cat-file", "blob", blob) == weak.strip()  # what git serves now under the test's id
    path, _ = pool.acquire("b", head)
    assert (path / "tests" / "test_calc.py").read_text() == TEST
    assert git(repo, "cat-file", "blob", blob) == TEST.strip()
    assert list((tmp_path / "quarantine").glob("store-*/.git/objects/pack/*.idx"))
    pool.remove_all()


def forge_pack(folder: Path, sha: str, content: bytes, scratch: Path) -> None:
    """A pack in folder holding content as a blob, its index naming it sha (another blob's id)."""
    scratch.mkdir()
    env = {**os.environ, "GIT_OBJECT_DIRECTORY": str(scratch)}
    run = functools.partial(subprocess.run, capture_output=True, check=True, env=env, cwd=folder.parents[2])
    real = run(["git", "hash-object", "-w", "--stdin"], input=content).stdout.decode().strip()
    stem = run(["git", "pack-objects", "-q", str(scratch / "pack")], input=f"{real}\n".encode()).stdout.decode()
    index = (scratch / f"pack-{stem.strip()}.idx").read_bytes()  # v2: header, fan-out, one id, crc, offset, sums
    fanout = b"".join((0 if i < int(sha[:2], 16) else 1).to_bytes(4, "big") for i in range(256))
    body = index[:8] + fanout + bytes.fromhex(sha) + index[8 + 1024 + 20 : -20]
    (folder / f"pack-{stem.strip()}.pack").write_bytes((scratch / f"pack-{stem.strip()}.pack").read_bytes())
    (folder / f"pack-{stem.strip()}.idx").write_bytes(body + hashlib.sha1(body).digest())


def hashed(repo: Path, data: bytes) -> str:
    """data written to the store of repo as a blob (`git hash-object -w`); its id."""
    done = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data, capture_output=True, check=True
    )
    return done.stdout.decode().strip()
