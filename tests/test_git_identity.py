"""The identity explore commits with (gitrepo.identity_env): the user's, as git itself reads it —
the environment first, then the repository's config over the global one (includes honoured) —
else `explore <explore@localhost>`; read in one git process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest

from explore.edges.gitrepo import identity_env


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> git.Repo:
    (tmp_path / "included").write_text("[user]\n\temail = included@example.org\n")
    (tmp_path / "global").write_text(f"[user]\n\tname = Global Name\n[include]\n\tpath = {tmp_path / 'included'}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    return git.Repo(tmp_path / "repo")


def test_the_global_config_and_its_includes(repo: git.Repo) -> None:
    assert identity_env(repo) == {
        "GIT_AUTHOR_NAME": "Global Name",
        "GIT_AUTHOR_EMAIL": "included@example.org",
        "GIT_COMMITTER_NAME": "Global Name",
        "GIT_COMMITTER_EMAIL": "included@example.org",
    }


def test_the_repository_config_wins_and_the_environment_over_both(
    repo: git.Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.git.config("user.name", "Local Name")
    assert identity_env(repo)["GIT_AUTHOR_NAME"] == "Local Name"
    assert identity_env(repo)["GIT_AUTHOR_EMAIL"] == "included@example.org"
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env@example.org")
    assert identity_env(repo)["GIT_COMMITTER_EMAIL"] == "env@example.org"
    assert identity_env(repo)["GIT_COMMITTER_NAME"] == "Local Name"


def test_no_identity_anywhere_is_explores(repo: git.Repo, tmp_path: Path) -> None:
    (tmp_path / "global").write_text("")
    env = identity_env(repo)
    assert (env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"]) == ("explore", "explore@localhost")
