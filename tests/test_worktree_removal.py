"""The end of a run's worktrees (WorktreePool.remove_all): their folders and git's record of them go,
whatever a candidate left — a worktree it locked, a `.git` file it rewrote, files it made read-only —
and the user's own worktree stays."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import git

from conftest import assert_no_debris, make_repo
from explore.edges.worktrees import WorktreePool
from test_run_e2e import CALC


def records(repo: Path) -> list[str]:
    folder = repo / ".git" / "worktrees"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_every_worktree_and_its_record_go_whatever_the_candidates_did(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    mine = tmp_path / "my-worktree"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(mine)], cwd=repo, check=True)
    pool = WorktreePool(git.Repo(repo), repo, tmp_path / "worktrees" / "run")
    head = pool.repo.head.commit.hexsha
    locked, rewritten, sealed = (pool.acquire(slot, head)[0] for slot in ("a", "b", "c"))
    subprocess.run(["git", "worktree", "lock", str(locked)], cwd=repo, check=True)
    (rewritten / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    (sealed / "made").mkdir()
    (sealed / "made" / "output.txt").write_text("x")
    os.chmod(sealed / "made" / "output.txt", stat.S_IRUSR)
    assert len(records(repo)) == 4

    pool.remove_all()

    assert not (tmp_path / "worktrees").exists()
    listed = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert listed.count("worktree ") == 2 and str(mine) in listed  # the user's own one stays
    assert records(repo) == [mine.name]
    assert (repo / ".git" / "HEAD").read_text().startswith("ref: refs/heads/")  # the rewritten link led nowhere
    subprocess.run(["git", "worktree", "remove", str(mine)], cwd=repo, check=True)
    assert_no_debris(repo)
