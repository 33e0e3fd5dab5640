"""The run's two refs — its hidden ref under refs/explore/runs/ and its branch explore/<id> — move
together (applying.move_run, one `git update-ref --stdin` transaction): both or neither, so a run
stopped at any point never has them disagree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import git
import pytest

from conftest import make_repo
from explore.edges import gitrepo
from explore.run.applying import move_run
from test_run_e2e import CALC


def commit_on(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    subprocess.run(["git", "add", name], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", name], cwd=repo, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def setup(tmp_path: Path) -> tuple[git.Repo, Any, str, str]:
    root = make_repo(tmp_path / "repo", CALC)
    repo = gitrepo.inert(git.Repo(root))
    first = repo.head.commit.hexsha
    second = commit_on(root, "second.txt")
    run: Any = SimpleNamespace(run_id="20261125-000000-abcd", branch="explore/20261125-000000-abcd")
    move_run(repo, run, first)
    return repo, run, first, second


def refs(repo: git.Repo, run: Any) -> tuple[str | None, str | None]:
    return gitrepo.ref_commit(repo, gitrepo.run_ref(run.run_id)), gitrepo.branch_commit(repo, run.branch)


def test_both_refs_move_and_the_hidden_one_is_checked(setup: tuple[git.Repo, Any, str, str]) -> None:
    repo, run, first, second = setup
    assert refs(repo, run) == (first, first)
    with pytest.raises(git.GitCommandError):
        move_run(repo, run, second, old=second)  # the hidden ref is not at `old`: nothing moves
    assert refs(repo, run) == (first, first)
    move_run(repo, run, second, old=first)
    assert refs(repo, run) == (second, second)


def test_a_branch_git_cannot_lock_leaves_the_hidden_ref_where_it_was(setup: tuple[git.Repo, Any, str, str]) -> None:
    repo, run, first, second = setup
    lock = Path(repo.git_dir) / "refs" / "heads" / f"{run.branch}.lock"
    lock.write_text("")  # another git process holds the branch
    try:
        with pytest.raises(git.GitCommandError):
            move_run(repo, run, second, old=first)
    finally:
        lock.unlink()
    assert refs(repo, run) == (first, first)


def test_a_run_without_a_branch_moves_its_hidden_ref(setup: tuple[git.Repo, Any, str, str]) -> None:
    repo, run, first, second = setup
    move_run(repo, SimpleNamespace(run_id=run.run_id, branch=None), second, old=first)
    assert refs(repo, run) == (second, first)
