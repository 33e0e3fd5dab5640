"""Issue 31, point 6: explore's own git runs nothing a candidate planted and never hurts the user's
files, index or branch. Real runs: candidate a plays the trick at confidence 0.99, b is the honest
fix at 0.3 and wins; the user's files, git dir and branch end as the test says."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import GIT_ID, assert_no_debris, make_repo, run_cli
from explore.edges import gitrepo
from test_protected_set import agent, assert_honest_won, run
from test_tamper import FILES, HONEST, pyproject

HOOKS = (
    "post-merge",
    "post-checkout",
    "reference-transaction",
    "pre-commit",
    "post-commit",
    "pre-auto-gc",
    "post-rewrite",
)


def quiet_git(root: Path, *args: str) -> str:
    """The test's own git, which must not run the hooks it planted either."""
    done = subprocess.run(["git", *GIT_ID, *gitrepo.INERT, *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def plant_snippet(marker: Path, victim: Path) -> str:
    """Python run in a candidate's worktree: hooks and an fsmonitor in the shared git dir, each of
    which would note that it ran and empty the user's ignored file."""
    return textwrap.dedent(f"""\
        import stat, subprocess
        common = pathlib.Path(subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True).stdout.strip()).resolve()
        script = "#!/bin/sh\\necho \\"$0\\" >> {marker}\\n: > {victim}\\n"
        for name in {HOOKS!r}:
            hook = common / "hooks" / name
            hook.parent.mkdir(exist_ok=True)
            hook.write_text(script)
            hook.chmod(0o755)
        monitor = common / "fsmonitor.sh"
        monitor.write_text(script)
        monitor.chmod(0o755)
        subprocess.run(["git", "config", "core.fsmonitor", str(monitor)], check=True)
        """)


def test_hooks_and_fsmonitor_in_the_git_dir_never_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject(), ".gitignore": "__pycache__/\n*.log\n"})
    (repo / "notes.log").write_text("the user's notes\n")
    marker = tmp_path / "ran.txt"
    plant = plant_snippet(marker, repo / "notes.log")
    # planted before the run too (as a candidate of an earlier run would have), so that a sandbox
    # restoring the git dir after each candidate does not make this test pass on its own
    subprocess.run([sys.executable, "-c", "import pathlib\n" + plant], cwd=repo, check=True)
    code, summary, err = run(repo, tmp_path, {"exec": plant}, HONEST)
    assert_honest_won(
        code, summary, err, ""
    )  # rejected (empty change, or the guard saw the git dir written): what matters is below
    assert summary["applied"] is True and quiet_git(repo, "rev-parse", "HEAD") == summary["merged_commit"]
    assert not marker.exists(), marker.read_text()
    assert (repo / "notes.log").read_text() == "the user's notes\n"
    assert "return a + b" in (repo / "calc.py").read_text()
    worktrees = quiet_git(repo, "worktree", "list", "--porcelain")
    assert worktrees.count("worktree ") == 1, worktrees


def test_a_rewritten_worktree_git_file_is_rejected_and_the_users_index_and_branch_are_untouched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    start = quiet_git(repo, "rev-parse", "HEAD")
    (repo / "staged.txt").write_text("work in progress\n")
    quiet_git(repo, "add", "staged.txt")
    redirect = textwrap.dedent("""\
        import subprocess
        common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True).stdout.strip()
        pathlib.Path(".git").write_text("gitdir: " + str(pathlib.Path(common).resolve()) + "\\n")
        """)
    trick = {**HONEST, "exec": redirect}  # the fix as well: without the check, a would win at 0.99
    code, summary, err = run(repo, tmp_path, trick, HONEST)
    assert_honest_won(code, summary, err, "rewrote its worktree's .git file")
    assert quiet_git(repo, "diff", "--cached", "--name-only") == "staged.txt"  # still staged
    assert (
        quiet_git(repo, "symbolic-ref", "HEAD") == "refs/heads/main" and quiet_git(repo, "rev-parse", "main") == start
    )
    assert summary["applied"] is False  # a dirty tree: the result stays on the run branch
    assert "return a + b" in quiet_git(repo, "show", f"{summary['branch']}:calc.py")
    assert_no_debris(repo)


def test_an_added_file_the_user_keeps_ignored_is_never_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject(), ".gitignore": "__pycache__/\n*.log\n"})
    (repo / "data.log").write_text("the user's data\n")
    trick = {**HONEST, "write": {".gitignore": "__pycache__/\n", "data.log": "the candidate's data\n"}}
    code, summary, err = run(repo, tmp_path, trick, HONEST)
    assert_honest_won(code, summary, err, "adds data.log, which would replace an untracked or ignored file of yours")
    assert summary["applied"] is True and quiet_git(repo, "rev-parse", "HEAD") == summary["merged_commit"]
    assert (repo / "data.log").read_text() == "the user's data\n"
    assert_no_debris(repo)


def test_a_tracked_symlink_named_explore_is_rejected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    trick = {**HONEST, "exec": f"os.symlink({str(elsewhere)!r}, '.explore')"}
    code, summary, err = run(repo, tmp_path, trick, HONEST)
    assert_honest_won(code, summary, err, "touches .explore")
    assert summary["applied"] is True
    assert (repo / ".explore").is_dir() and not (repo / ".explore").is_symlink()
    assert (repo / ".explore" / "runs" / summary["run_id"] / "state.json").is_file()
    assert not any(elsewhere.iterdir())
    assert_no_debris(repo)


def _side_commit(repo: Path, tmp_path: Path, add: dict[str, str | None]) -> str:
    """A commit on top of main adding files (None: a symlink to /tmp), made in a clone and fetched."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    for name, text in add.items():
        if text is None:
            os.symlink("/tmp", clone / name)
        else:
            (clone / name).write_text(text)
        quiet_git(clone, "add", "-f", name)
    quiet_git(clone, "commit", "-q", "-m", "side")
    quiet_git(repo, "fetch", "-q", str(clone), "HEAD:refs/heads/side")
    return quiet_git(repo, "rev-parse", "side")


@pytest.mark.parametrize(
    "added", [{"data.log": "theirs\n"}, {".explore": None}], ids=["ignored file", "explore folder"]
)
def test_the_fast_forward_refuses_to_replace_what_the_user_keeps_untracked(
    tmp_path: Path, added: dict[str, str | None]
) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": "x = 1\n", ".gitignore": "*.log\n.explore/\n"})
    start = quiet_git(repo, "rev-parse", "HEAD")
    target = _side_commit(repo, tmp_path, added)
    (repo / "data.log").write_text("mine\n")
    (repo / ".explore").mkdir()
    (repo / ".explore" / "history.jsonl").write_text("{}\n")
    info = gitrepo.open_repo(repo)
    applied, why = gitrepo.fast_forward(info, start, target)
    name = next(iter(added))
    assert not applied and f"it adds {name}, which would replace your untracked or ignored file there" in why
    assert quiet_git(repo, "rev-parse", "HEAD") == start
    assert (repo / "data.log").read_text() == "mine\n" and (repo / ".explore" / "history.jsonl").read_text() == "{}\n"
    info.repo.close()


def test_the_fast_forward_goes_ahead_when_nothing_is_in_the_way(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": "x = 1\n", ".gitignore": "*.log\n"})
    start = quiet_git(repo, "rev-parse", "HEAD")
    target = _side_commit(repo, tmp_path, {"new.txt": "new\n"})
    (repo / "data.log").write_text("mine\n")
    info = gitrepo.open_repo(repo)
    assert gitrepo.fast_forward(info, start, target) == (True, "")
    assert quiet_git(repo, "rev-parse", "HEAD") == target and (repo / "new.txt").read_text() == "new\n"
    info.repo.close()


@pytest.mark.parametrize("where", ["core.excludesFile", "XDG default"])
def test_a_file_ignored_only_by_the_global_excludes_is_never_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """No attacker: `worktree-include = [".env"]` copies the user's .env into each worktree; it is
    ignored only by their global excludes file, which stays in force, so the secret stays home."""
    global_config = tmp_path / "gitconfig"
    ignore = tmp_path / "global-ignore" if where == "core.excludesFile" else tmp_path / "xdg" / "git" / "ignore"
    ignore.parent.mkdir(parents=True, exist_ok=True)
    ignore.write_text(".env\n")
    global_config.write_text(f"[core]\n\texcludesFile = {ignore}\n" if where == "core.excludesFile" else "")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject() + 'worktree-include = [".env"]\n'})
    secret = "sk-ant-api03-do-not-commit"
    (repo / ".env").write_text(f"ANTHROPIC_API_KEY={secret}\n")
    assert quiet_git(repo, "status", "--porcelain") == ""  # ignored: the tree is clean
    command = agent(tmp_path, {"a": HONEST})
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            command,
            "--parallel",
            "1",
            "--max-iterations",
            "1",
            "--json",
        ]
    )
    assert code == 0 and summary is not None, err
    assert summary["iterations"][0]["candidates"][0]["files_changed"] == ["calc.py"]
    assert summary["applied"] is True
    assert ".env" not in quiet_git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert (
        secret not in quiet_git(repo, "log", "--all", "-p")
        and (repo / ".env").read_text() == f"ANTHROPIC_API_KEY={secret}\n"
    )
    assert_no_debris(repo)
