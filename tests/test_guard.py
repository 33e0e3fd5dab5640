"""guard: what no candidate may change — fingerprinted, compared, put back byte for byte, and
attributed — on real git repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import GIT_ID, git, make_repo
from explore.edges import attribution, guard

FILES = {"calc.py": "def add(a, b):\n    return a + b\n", "run.sh": "#!/bin/sh\necho hi\n"}


def repo_with_guard(tmp_path: Path) -> tuple[Path, guard.Guard]:
    repo = make_repo(tmp_path / "repo", FILES)
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("calc.py")
    (repo / "notes.txt").write_text("the user's untracked notes\n")
    git(repo, "add", "run.sh", "link")
    git(repo, "commit", "-qm", "exec bit and a link")
    git(repo, "update-ref", "refs/heads/explore/run-1", "HEAD")
    git(repo, "pack-refs", "--all")
    return repo, guard.Guard(repo, repo / ".git", repo / ".git", tmp_path / "quarantine")


def test_every_kind_of_change_is_named_and_put_back_byte_for_byte(tmp_path: Path) -> None:
    repo, watched = repo_with_guard(tmp_path)
    index = (repo / ".git" / "index").read_bytes()
    before = watched.fingerprint()
    (repo / ".git" / "hooks" / "post-commit").write_text("#!/bin/sh\ntouch HOOK\n")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[alias]\n\tplanted = !touch x\n")
    git(repo, "branch", "planted")
    (repo / "calc.py").write_text("changed\n")
    (repo / "run.sh").chmod(0o644)
    (repo / "link").unlink()
    (repo / "link").write_text("no longer a link\n")
    (repo / "notes.txt").unlink()
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "planted.txt").write_text("planted\n")
    after = watched.fingerprint()
    paths = watched.compare(before, after)
    assert paths == sorted([".git/config", ".git/hooks/post-commit", ".git/refs/heads/planted"]) + sorted(
        ["calc.py", "link", "new/deep/planted.txt", "notes.txt", "run.sh"]
    )
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and change.paths == paths
    assert watched.fingerprint() == before
    assert (repo / "calc.py").read_text() == FILES["calc.py"] and os.access(repo / "run.sh", os.X_OK)
    assert (repo / "link").is_symlink() and os.readlink(repo / "link") == "calc.py"
    assert (repo / "notes.txt").read_text() == "the user's untracked notes\n"
    assert (
        not (repo / "new" / "deep" / "planted.txt").exists() and not (repo / ".git" / "hooks" / "post-commit").exists()
    )
    assert "planted" not in git(repo, "branch", "--list")
    assert (repo / ".git" / "index").read_bytes() == index  # read through a copy: the user's index is never written
    kept = change.quarantine
    assert (
        kept is not None
        and (kept / "calc.py").read_text() == "changed\n"
        and (kept / ".git" / "hooks" / "post-commit").exists()
    )


def test_every_config_file_git_reads_outside_the_repository_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The global and system config, and the global attributes file, are restored like .git/config
    (not only named as a file of the home that changed)."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(tmp_path / "system-gitconfig"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    (home / ".gitconfig").write_text("[user]\n\tname = Me\n")
    repo, watched = repo_with_guard(tmp_path)
    before = watched.fingerprint()
    with (home / ".gitconfig").open("a") as config:
        config.write("[core]\n\tfsmonitor = touch planted\n")
    (home / ".config" / "git" / "attributes").write_text("* filter=evil\n")
    (tmp_path / "system-gitconfig").write_text("[core]\n\thooksPath = /tmp/planted\n")
    after = watched.fingerprint()
    planted = sorted(
        [str(home / ".gitconfig"), str(home / ".config" / "git" / "attributes"), str(tmp_path / "system-gitconfig")]
    )
    assert watched.compare(before, after) == planted
    assert watched.elsewhere(before, after) == []  # restored, so not merely named
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and watched.fingerprint() == before
    assert (home / ".gitconfig").read_text() == "[user]\n\tname = Me\n"
    assert not (home / ".config" / "git" / "attributes").exists() and not (tmp_path / "system-gitconfig").exists()
    assert (
        change.quarantine is not None
        and "fsmonitor" in (change.quarantine / "outside" / str(home / ".gitconfig").lstrip("/")).read_text()
    )


def test_a_pack_rewritten_in_place_or_replaced_is_put_back(tmp_path: Path) -> None:
    repo, watched = repo_with_guard(tmp_path)
    git(repo, "gc", "-q")
    pack = next((repo / ".git" / "objects" / "pack").glob("*.pack"))
    index = pack.with_suffix(".idx")
    original = pack.read_bytes(), index.read_bytes()
    before = watched.fingerprint()
    os.chmod(pack, 0o644)
    with pack.open("r+b") as handle:  # in place (the same inode), in its checksum: git reads on
        handle.seek(len(original[0]) - 20)  # (a corrupt object would fail the fingerprint's own git add)
        handle.write(b"\0" * 20)
    index.unlink()  # replaced: a new inode under the same name, naming the pack's new checksum (else
    index.write_bytes(original[1][:-40] + b"\0" * 20 + original[1][-20:-1] + b"\0")  # git refuses the pack)
    after = watched.fingerprint()
    assert sorted(watched.compare(before, after)) == sorted(f".git/objects/pack/{p.name}" for p in (pack, index))
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and watched.compare(before, watched.fingerprint()) == []
    assert (pack.read_bytes(), index.read_bytes()) == original
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


def test_a_pack_rewritten_with_its_copy_is_named_never_taken_as_kept(tmp_path: Path) -> None:
    """Without a sandbox the packs' copies (in the pool folder) can be written too: the pack and its
    copy rewritten alike. The pack is judged by the digest held in memory, and a copy that no longer
    has it is never put back."""
    repo, watched = repo_with_guard(tmp_path)
    git(repo, "gc", "-q")
    pack = next((repo / ".git" / "objects" / "pack").glob("*.pack"))
    before = watched.fingerprint()
    assert watched.packs is not None
    index = pack.with_suffix(".idx")
    forged = {  # its checksum zeroed, and the index naming it (else git refuses the pack)
        pack: pack.read_bytes()[:-20] + b"\0" * 20,
        index: index.read_bytes()[:-40] + b"\0" * 20 + index.read_bytes()[-20:-1] + b"\0",
    }
    for path, data in forged.items():
        os.chmod(path, 0o644)
        path.write_bytes(data)
        watched.packs.kept[f"objects/pack/{path.name}"].write_bytes(data)
    after = watched.fingerprint()
    assert sorted(watched.compare(before, after)) == sorted(f".git/objects/pack/{p.name}" for p in forged)
    assert not watched.restore(before, after, "iteration-1-a").restored


def test_explores_own_refs_and_ignored_files_are_not_guarded(tmp_path: Path) -> None:
    repo, watched = repo_with_guard(tmp_path)
    before = watched.fingerprint()
    git(repo, "update-ref", "refs/heads/explore/run-1", "HEAD~1")  # loose over the packed one
    git(repo, "update-ref", "refs/heads/explore/run-2", "HEAD")
    git(repo, "update-ref", "-d", "refs/heads/explore/run-1")  # rewrites packed-refs without it
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "calc.pyc").write_bytes(b"\0")
    assert watched.compare(before, watched.fingerprint()) == []


def test_a_lock_file_that_appears_is_removed_and_one_that_goes_is_never_put_back(tmp_path: Path) -> None:
    """A lock file is guarded like its neighbours (a candidate's `index.lock` or branch lock left, git
    fails until someone removes it): one that appears is named and removed, kept in the quarantine.
    One that was there and went (the user's `git commit`, its editor open when the run began) is no
    change: put back, it would lock the user out."""
    repo, watched = repo_with_guard(tmp_path)
    editing = repo / ".git" / "index.lock"
    editing.write_bytes(b"the user's commit, its editor open\n")
    before = watched.fingerprint()
    editing.unlink()  # the user's commit went through
    (repo / ".git" / "refs" / "heads" / "main.lock").write_text("left by a candidate\n")
    after = watched.fingerprint()
    assert watched.compare(before, after) == [".git/refs/heads/main.lock"]
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and change.quarantine is not None
    assert (change.quarantine / ".git" / "refs" / "heads" / "main.lock").exists()
    assert not list((repo / ".git").rglob("*.lock"))
    git(repo, "commit", "-q", "--allow-empty", "-m", "the user's next commit")


def test_files_in_home_and_next_to_the_repository_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    repo, watched = repo_with_guard(tmp_path)
    before = watched.fingerprint()
    with (home / ".bashrc").open("a") as rc:
        rc.write("echo planted\n")
    (tmp_path / "next-to-it.txt").write_text("x\n")
    (home / ".cache" / "tool").mkdir(parents=True)  # a folder's own content is not watched
    after = watched.fingerprint()
    assert watched.elsewhere(before, after) == sorted([str(home / ".bashrc"), str(tmp_path / "next-to-it.txt")])
    assert watched.compare(before, after) == []


@pytest.mark.anyio
async def test_one_suspect_is_the_culprit_several_are_replayed(tmp_path: Path) -> None:
    repo, watched = repo_with_guard(tmp_path)
    watch = await attribution.Watch.start(watched, "iteration-1")
    watch.enter("a")
    watch.enter("b")
    (repo / "planted.txt").write_text("x\n")
    assert await watch.leave("a") is None  # b ran too: no telling which
    assert watch.ambiguous == {"a", "b"} and not (repo / "planted.txt").exists()
    assert await watch.leave("b") is None  # put back already: b's own check is clean
    for cid in sorted(watch.ambiguous):  # the replay: one at a time
        watch.forget(cid)
        watch.enter(cid)
        if cid == "a":
            (repo / "planted.txt").write_text("x\n")
        change = await watch.leave(cid)
        assert (change is not None) == (cid == "a")
    assert change is None and not watch.ambiguous and not (repo / "planted.txt").exists()


def test_a_config_file_an_include_names_is_put_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's global config includes a file by a relative path, and the repository's config
    one under a condition (`includeIf`), which itself includes another: a candidate that plants an
    fsmonitor in any of them has it put back, like .git/config."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    (home / ".gitconfig").write_text("[include]\n\tpath = .gitconfig.local\n")
    (home / ".gitconfig.local").write_text("[user]\n\tname = Me\n")
    repo, watched = repo_with_guard(tmp_path)
    work = tmp_path / "work.gitconfig"
    work.write_text("[include]\n\tpath = ~/deeper.gitconfig\n")
    (home / "deeper.gitconfig").write_text("")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f'[includeIf "gitdir:/elsewhere/"]\n\tpath = {work}\n')
    before = watched.fingerprint()
    planted = [home / ".gitconfig.local", work, home / "deeper.gitconfig"]
    for path in planted:
        with path.open("a") as config:
            config.write("[core]\n\tfsmonitor = touch planted\n")
    after = watched.fingerprint()
    assert watched.compare(before, after) == sorted(str(path) for path in planted)
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and watched.fingerprint() == before
    assert (home / ".gitconfig.local").read_text() == "[user]\n\tname = Me\n" and (
        home / "deeper.gitconfig"
    ).read_text() == ""


def test_a_pack_and_a_branch_a_candidate_added_go_with_their_reflog(tmp_path: Path) -> None:
    """A candidate's git writes its own store (sandbox.py): a pack that appears in the user's store
    was written there by path, and a branch it made names a commit the user's store lacks. Both go
    (to the quarantine), the branch's reflog with them: `git fsck` and `git gc` stay clean."""
    repo, watched = repo_with_guard(tmp_path)
    objects = repo / ".git" / "objects"
    own = {
        **os.environ,
        "GIT_OBJECT_DIRECTORY": str(tmp_path / "own"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects),
    }
    (tmp_path / "own").mkdir()
    before = watched.fingerprint()
    planted = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=repo,
            input=b"planted\n",
            env=own,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(  # a pack written straight into the user's store
        ["git", "pack-objects", "-q", str(objects / "pack" / "pack")],
        cwd=repo,
        input=f"{planted}\n".encode(),
        env=own,
        check=True,
        capture_output=True,
    )
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    mine = (
        subprocess.run(
            ["git", *GIT_ID, "commit-tree", tree, "-p", "HEAD", "-m", "candidate"],
            cwd=repo,
            env=own,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(
        ["git", "update-ref", "-m", "branch: Created", "refs/heads/mine", mine], cwd=repo, env=own, check=True
    )
    assert (repo / ".git" / "logs" / "refs" / "heads" / "mine").exists()
    after = watched.fingerprint()
    paths = watched.compare(before, after)
    assert ".git/refs/heads/mine" in paths and sum(p.startswith(".git/objects/pack/pack-") for p in paths) == 2, paths
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and change.quarantine is not None
    assert not list((objects / "pack").glob("*.pack")) and list(
        (change.quarantine / ".git" / "objects" / "pack").glob("*.pack")
    )
    assert subprocess.run(["git", "cat-file", "-e", planted], cwd=repo).returncode != 0
    assert not (repo / ".git" / "logs" / "refs" / "heads" / "mine").exists()
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "gc", "-q"], cwd=repo, check=True, capture_output=True)


def test_a_repack_of_the_users_own_objects_is_never_moved_out(tmp_path: Path) -> None:
    """The user's own `git repack -d` while candidates run: loose objects gone into a new pack. The
    guard names it, but the pack holds objects the user's refs need that nothing else holds: it stays."""
    repo, watched = repo_with_guard(tmp_path)
    before = watched.fingerprint()
    git(repo, "repack", "-d", "-q")
    after = watched.fingerprint()
    assert any(p.startswith(".git/objects/pack/") for p in watched.compare(before, after))
    watched.restore(before, after, "iteration-1-a")
    assert list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


def test_every_file_git_reads_as_the_repositorys_state_is_guarded(tmp_path: Path) -> None:
    """Issue 37's tricks beyond the named files: a shallow boundary, a `commondir` that sends the
    user's git to another repository, an alternate object store, a merge left in progress — each
    outside the list of files the guard named before. The guard's list is what it leaves out."""
    repo, watched = repo_with_guard(tmp_path)
    elsewhere = make_repo(tmp_path / "elsewhere", FILES) / ".git"  # the candidate's: its hooks, its refs
    head = git(repo, "rev-parse", "HEAD")
    before = watched.fingerprint()
    planted = {
        "shallow": f"{head}\n",
        "commondir": f"{elsewhere}\n",
        "objects/info/alternates": f"{elsewhere / 'objects'}\n",
        "MERGE_HEAD": f"{head}\n",
        "rebase-merge/head-name": "refs/heads/main\n",
    }
    for rel, text in planted.items():
        (repo / ".git" / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / ".git" / rel).write_text(text)
    after = watched.fingerprint()
    assert sorted(watched.compare(before, after)) == sorted(f".git/{rel}" for rel in planted)
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and not any((repo / ".git" / rel).exists() for rel in planted)
    start = watched.fingerprint()
    (repo / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    git(repo, "commit", "-qam", "the user's own commit: not a candidate's change")
    assert watched.compare(start, watched.fingerprint()) == []
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
