"""Issue 38: the guard restores only what a candidate wrote. A commit the user makes in the run's
own checkout while unsandboxed candidates run is told from a candidate's by the reflog git writes
(every unsandboxed candidate process commits as explore's candidate identity): the user's commit,
its files and the index stay; a candidate's commit, or a ref file written by hand, is put back.
Real git repositories, the guard's own fingerprints; one real run for the whole path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from conftest import git, make_repo
from explore.edges import guard
from explore.edges.sandbox import CANDIDATE_IDENTITY
from test_run_e2e import FIX_ADD
from test_safety_faults import assert_nothing_left, kill_everything_under, scripted_agent

RUN = [sys.executable, "-m", "explore", "run"]
ONE_BUG = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def guarded_repo(tmp_path: Path) -> tuple[Path, guard.Guard]:
    repo = make_repo(tmp_path / "repo", {**ONE_BUG, "README.md": "readme\n"})
    git(repo, "pack-refs", "--all")  # main packed: the commit writes its loose ref
    return repo, guard.Guard(repo, repo / ".git", repo / ".git", tmp_path / "quarantine")


def commit(repo: Path, env: dict[str, str] | None = None) -> str:
    (repo / "README.md").write_text("the user's readme\n")
    subprocess.run(["git", "commit", "-qam", "my own work"], cwd=repo, check=True, env={**os.environ, **(env or {})})
    return git(repo, "rev-parse", "main")


def test_a_user_commit_in_the_runs_checkout_is_kept_a_candidates_write_beside_it_put_back(tmp_path: Path) -> None:
    repo, watched = guarded_repo(tmp_path)
    before = watched.fingerprint()
    mine = commit(repo)
    (repo / "planted.txt").write_text("a candidate's write\n")
    after = watched.fingerprint()
    assert watched.compare(before, after) == ["planted.txt"]
    change = watched.restore(before, after, "iteration-1-a")
    assert change.restored and change.paths == ["planted.txt"] and not (repo / "planted.txt").exists()
    assert git(repo, "rev-parse", "main") == mine and (repo / "README.md").read_text() == "the user's readme\n"
    assert git(repo, "status", "--porcelain") == ""  # index and files agree with the user's commit


def test_a_commit_a_candidate_makes_in_the_users_checkout_is_put_back(tmp_path: Path) -> None:
    repo, watched = guarded_repo(tmp_path)
    start = git(repo, "rev-parse", "main")
    before = watched.fingerprint()
    commit(repo, CANDIDATE_IDENTITY)  # what an unsandboxed candidate's git writes
    change = watched.restore(before, watched.fingerprint(), "iteration-1-a")
    assert change.restored and ".git/refs/heads/main" in change.paths and "README.md" in change.paths
    assert git(repo, "rev-parse", "main") == start and (repo / "README.md").read_text() == "readme\n"


def test_a_branch_moved_without_its_reflog_is_put_back(tmp_path: Path) -> None:
    """A ref file written by hand (no reflog entry for the move) is not the user's commit."""
    repo, watched = guarded_repo(tmp_path)
    start = git(repo, "rev-parse", "main")
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, check=True)
    other = git(repo, "rev-parse", "main")
    subprocess.run(["git", "update-ref", "--no-deref", "-m", "back", "refs/heads/main", start], cwd=repo, check=True)
    before = watched.fingerprint()
    (repo / ".git" / "refs" / "heads" / "main").write_text(other + "\n")
    change = watched.restore(before, watched.fingerprint(), "iteration-1-a")
    assert change.paths == [".git/refs/heads/main"] and git(repo, "rev-parse", "main") == start


def test_a_commit_during_the_fan_out_stays_and_the_run_does_not_move_the_branch(tmp_path: Path) -> None:
    """Unsandboxed, the user commits in the run's own checkout while candidate a runs: the commit,
    its file and the index stay, no candidate is blamed, and the run leaves its result on its
    branch saying why (the user's branch moved) instead of fast-forwarding over the commit."""
    repo = make_repo(tmp_path / "repo", {**ONE_BUG, "README.md": "readme\n"}, explore_config='sandbox = "off"\n')
    ready, gate = tmp_path / "ready", tmp_path / "gate"
    os.mkfifo(ready)
    os.mkfifo(gate)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD, "block": [str(ready), str(gate)]}})
    mine: list[str] = []

    def user() -> None:
        with open(ready) as fifo:  # candidate a is running
            fifo.readline()
        mine.append(commit(repo))
        with open(gate, "w"):  # let a go on
            pass

    helper = threading.Thread(target=user, daemon=True)
    helper.start()
    try:
        done = subprocess.run(
            [*RUN, str(repo), "--parallel", "1", "--max-iterations", "1", "--agent-cmd", agent, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "EXPLORE_SANDBOX": "off"},
        )
        helper.join(timeout=10)
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert mine and git(repo, "rev-parse", "main") == mine[0], done.stderr[-3000:]
        assert (repo / "README.md").read_text() == "the user's readme\n" and git(repo, "status", "--porcelain") == ""
        (a,) = summary["iterations"][0]["candidates"]
        assert a["status"] == "ok" and not a.get("outside_writes"), a
        assert summary["applied"] is False and "main has moved since the run started" in done.stderr, done.stderr[
            -3000:
        ]
        assert "return a + b" in git(repo, "show", f"{summary['branch']}:calc.py")
        assert_nothing_left(repo, tmp_path / "worktrees", keep_branches=(summary["branch"],))
    finally:
        kill_everything_under(tmp_path / "worktrees", repo)
