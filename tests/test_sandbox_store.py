"""Issue 37, points 5 and 8: a candidate's git writes an object store of its own, with the user's
as a read-only alternate — sandbox off, bubblewrap, Landlock alike; Landlock is entered in the
child between fork and exec (no launcher). Real git, a real linked worktree, real processes through
edges/procs, no explore run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from conftest import git, make_repo
from explore.edges import landlock, objects, procs, sandbox

MECHANISMS = ["none", "bubblewrap", "landlock"]

# what an agent does with git in its worktree: write an object, commit, repack (git gc's core), read back
AGENT_GIT = (
    "echo written by the candidate | git hash-object -w --stdin && "
    "echo 'def add(a, b):\n    return a + b' > calc.py && "
    "git -c user.name=a -c user.email=a@b commit -qam 'the fix' && "
    "git repack -a -d -q && git cat-file -e HEAD && git cat-file -e HEAD~1 && echo ALL-READ"
)


def box(mechanism: str) -> sandbox.Sandbox:
    if mechanism == "none":
        return sandbox.probe("off")
    if mechanism == "landlock":
        if landlock.abi() < 1:
            pytest.skip("the kernel offers no Landlock")
        return sandbox.choose("auto", "bubblewrap left out by the test", landlock.abi(), "")
    found = sandbox.probe("auto")
    if found.mechanism != "bubblewrap":
        pytest.skip("no working bubblewrap here")
    return found


def worktree(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    path = tmp_path / "pool" / "a"
    git(repo, "worktree", "add", "-q", "--detach", str(path))
    return repo, path


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_candidates_git_writes_its_own_store_never_the_users(tmp_path: Path, mechanism: str) -> None:
    repo, path = worktree(tmp_path)
    found = box(mechanism)
    confine = found.confine(path, tmp_path / "files", own_store=True)
    store = objects.files(repo / ".git")
    done = anyio.run(lambda: procs.run(AGENT_GIT, path, confine=confine))
    after = objects.files(repo / ".git")  # the same files, the same content (git may freshen a file's times)
    assert {rel: seen[:2] for rel, seen in after.items()} == {rel: seen[:2] for rel, seen in store.items()}
    assert objects.rewritten(repo / ".git", store, after) == []
    assert confine.store == (repo / ".git" / "objects").resolve()
    written = done.output_tail.split()[0]  # the object it wrote, whatever the sandbox let it do next
    assert (confine.objects / written[:2] / written[2:]).exists() or "ALL-READ" in done.output_tail, done.output_tail
    if mechanism == "none":  # no sandbox: its commit and repack went to its own store, reading the user's through it
        assert "ALL-READ" in done.output_tail and list((confine.objects / "pack").glob("*.pack")), done.output_tail
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=repo, check=True)
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


def test_test_runs_keep_gits_own_environment(tmp_path: Path) -> None:
    """A project's tests that make repositories of their own see no object directory of explore's."""
    _, path = worktree(tmp_path)
    confine = sandbox.probe("off").confine(path, tmp_path / "files")
    done = anyio.run(lambda: procs.run("echo store=${GIT_OBJECT_DIRECTORY:-unset}", path, confine=confine))
    assert "store=unset" in done.output_tail


def test_landlock_is_entered_in_the_child_and_a_refusal_never_runs_the_command(tmp_path: Path) -> None:
    if landlock.abi() < 1:
        pytest.skip("the kernel offers no Landlock")
    _, path = worktree(tmp_path)
    outside = tmp_path / "outside.txt"
    confine = box("landlock").confine(path, tmp_path / "files")
    done = anyio.run(lambda: procs.run(f"echo in > inside.txt; echo out > {outside}; echo $$", path, confine=confine))
    assert (path / "inside.txt").exists() and not outside.exists(), done.output_tail
    # the command itself is the child: no launcher process in between
    assert "python" not in " ".join(str(a) for a in confine.wrap(["true"], None).cmd)

    class Refused(landlock.Ruleset):
        def enter(self) -> None:
            raise OSError("refused by the test")

    refusing = Refused([str(path)])
    ran = tmp_path / "ran.txt"
    launch = sandbox.Launch(["sh", "-c", f"touch {ran}"], dict(os.environ), None, refusing.enter, refusing.close)
    with pytest.raises(subprocess.SubprocessError):
        subprocess.run(list(launch.cmd), env=launch.env, preexec_fn=launch.preexec, check=False)
    refusing.close()
    assert not ran.exists()


def test_a_commit_in_its_own_store_leaves_nothing_the_users_git_cannot_read(tmp_path: Path) -> None:
    """Sandbox off, the agent commits and adds in its worktree: its objects are in its own store, so
    the worktree's HEAD, index and reflog named objects the user's git cannot read — `git fsck` (and
    `git gc`) in the user's repository failed while the worktree lived. Once settled, they hold
    nothing of its store; its change stays on disk, and the slot is reused as before."""
    import git as gitpython

    from explore.edges.worktrees import WorktreePool

    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    base = git(repo, "rev-parse", "HEAD")
    pool = WorktreePool(gitpython.Repo(repo), repo, tmp_path / "worktrees" / "run")
    try:
        path, _ = pool.acquire("a", base)
        confine = sandbox.probe("off").confine(path, tmp_path / "files", own_store=True)
        done = anyio.run(lambda: procs.run(AGENT_GIT, path, confine=confine))
        assert "ALL-READ" in done.output_tail, done.output_tail
        fsck = ["git", "fsck", "--strict", "--no-dangling"]
        before = subprocess.run(fsck, cwd=repo, capture_output=True, text=True)
        assert before.returncode != 0, before  # what the user met: the worktree names objects of another store
        pool.settle(path)
        subprocess.run(fsck, cwd=repo, check=True, capture_output=True)
        assert "return a + b" in (path / "calc.py").read_text()
        assert pool.capture_patch(path, tmp_path / "a.diff").files == ["calc.py"]
        again, fresh = pool.acquire("a", base)
        assert (again, fresh) == (path, False) and "return a - b" in (path / "calc.py").read_text()
    finally:
        pool.remove_all()
