"""Issue 28: the end of a run — `explore apply` into a dirty tree, the change shown, `explore undo`,
no visible branch once applied. Real git, real runs through the CLI with a scripted agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import assert_no_debris, git, make_repo, run_cli
from test_run_e2e import CALC, FIX_ADD, FIX_MUL, scripted_agent


def explore(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explore", *args], cwd=repo, capture_output=True, text=True, timeout=300
    )


def tree_bytes(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file()
        and ".git" not in p.relative_to(repo).parts
        and ".explore" not in p.relative_to(repo).parts
        and "__pycache__" not in p.parts
    }


def dirty_run(tmp_path: Path) -> tuple[Path, str, dict]:
    """A repo whose mul the user fixed without committing, plus an untracked file; explore repairs add."""
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    (repo / "calc.py").write_text((repo / "calc.py").read_text().replace("return a + b", "return a * b"))
    (repo / "notes.txt").write_text("my untracked notes\n")
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent-cmd",
            scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}}),
            "--parallel",
            "1",
            "--json",
        ]
    )
    assert code == 0 and summary is not None and summary["applied"] is False, err
    assert f"take it with: explore apply {summary['run_id']}" in err
    return repo, start, summary


def test_apply_brings_the_repair_into_a_dirty_tree_and_undo_takes_it_out(tmp_path: Path) -> None:
    repo, start, summary = dirty_run(tmp_path)
    mine = (repo / "calc.py").read_bytes()
    staged = git(repo, "diff", "--cached")
    done = explore(repo, "apply")
    assert done.returncode == 0, done.stderr
    assert "working tree, uncommitted" in done.stdout and f"explore undo {summary['run_id']}" in done.stdout
    source = (repo / "calc.py").read_text()
    assert "return a + b" in source and "return a * b" in source  # the fix and the user's own edit, both
    assert (repo / "notes.txt").read_text() == "my untracked notes\n"
    assert (
        git(repo, "rev-parse", "HEAD") == start and git(repo, "diff", "--cached") == staged
    )  # nothing committed or staged
    assert git(repo, "log", "--format=%s", "main") == "initial"  # no snapshot commit on the branch
    assert (
        git(repo, "status", "--porcelain", "--", "calc.py", "notes.txt") == "M calc.py\n?? notes.txt"
    )  # unstaged, untracked
    assert git(repo, "branch", "--list", "explore/*") == ""
    again = explore(repo, "apply", summary["run_id"])
    assert again.returncode == 2 and "already applied" in again.stderr
    (repo / "later.txt").write_text("mine\n")  # the branch moves after the apply: undo refuses, changes nothing
    git(repo, "add", "later.txt")
    git(repo, "commit", "-q", "-m", "later")
    applied = (repo / "calc.py").read_bytes()
    moved = explore(repo, "undo")
    assert moved.returncode == 2 and "main moved since the repair of run" in moved.stderr, moved.stderr
    assert "nothing undone" in moved.stderr and (repo / "calc.py").read_bytes() == applied
    git(repo, "reset", "-q", "HEAD^")  # the commit taken back (later.txt stays, untracked)
    (repo / "later.txt").unlink()

    back = explore(repo, "undo")
    assert back.returncode == 0, back.stderr
    assert (repo / "calc.py").read_bytes() == mine and (repo / "notes.txt").read_text() == "my untracked notes\n"
    assert git(repo, "rev-parse", "HEAD") == start
    assert_no_debris(repo)


def test_apply_stops_on_a_conflict_with_the_tree_byte_identical(tmp_path: Path) -> None:
    repo, start, summary = dirty_run(tmp_path)
    calc = repo / "calc.py"
    calc.write_text(
        calc.read_text().replace("return a - b", "return b - a  # mine")
    )  # the very line the repair changes
    before, status = tree_bytes(repo), git(repo, "status", "--porcelain")
    done = explore(repo, "apply", summary["run_id"])
    assert done.returncode == 2, done.stderr
    assert "conflicts with your changes in calc.py" in done.stderr and "nothing was changed" in done.stderr
    assert "git stash" in done.stderr
    assert tree_bytes(repo) == before and git(repo, "status", "--porcelain") == status
    assert git(repo, "rev-parse", "HEAD") == start


def test_an_applied_run_leaves_no_branch_shows_its_diff_and_undo_restores_the_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}})
    done = subprocess.run(
        [sys.executable, "-m", "explore", "run", str(repo), "--agent-cmd", agent, "--parallel", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    run_id, result = summary["run_id"], summary["merged_commit"]
    assert summary["applied"] is True and git(repo, "rev-parse", "HEAD") == result
    # no visible branch; the result lives under a ref `git branch` does not list
    assert git(repo, "branch", "--list", "explore/*") == "" and git(repo, "branch", "-a").split() == ["*", "main"]
    assert summary["branch"] == f"refs/explore/runs/{run_id}" and git(repo, "rev-parse", summary["branch"]) == result
    # the change: in the JSON, in the report, and at the very end of stderr, with the command that undoes it
    assert summary["diff"] == git(repo, "diff", start, result) + "\n"
    assert "-    return a - b\n+    return a + b" in summary["diff"] and "+    return a * b" in summary["diff"]
    err = done.stderr.rstrip("\n").splitlines()
    opening = next(line for line in err[:3] if "generator:" in line)  # among the run's first lines
    assert "generator: command (your agent command" in opening and "auto: --agent-cmd is given" in opening
    assert err[-len(summary["diff"].splitlines()) :] == summary["diff"].splitlines()
    assert f"undo it with: explore undo {run_id}" in done.stderr and "changed 1 file (+2 -2): calc.py" in done.stderr
    report = Path(summary["report"]).read_text()
    assert "## Change" in report and "+    return a * b" in report and f"explore undo {run_id}" in report
    assert (repo / ".explore" / "runs" / run_id / "repair.diff").read_text() == summary["diff"]

    back = explore(repo, "undo")
    assert back.returncode == 0 and f"main back at {start[:10]}" in back.stdout, back.stderr
    assert git(repo, "rev-parse", "HEAD") == start and "return a - b" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    assert explore(repo, "undo", run_id).returncode == 2  # nothing applied any more
    forth = explore(repo, "apply", run_id)
    assert forth.returncode == 0 and "fast-forwarded main" in forth.stdout, forth.stderr
    assert git(repo, "rev-parse", "HEAD") == result and git(repo, "branch", "--list", "explore/*") == ""

    (repo / "README.md").write_text("mine\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "my own work on top")
    mine = git(repo, "rev-parse", "HEAD")
    refused = explore(repo, "undo", run_id)
    assert refused.returncode == 2 and "you committed on top of the run's result (1 commit(s)" in refused.stderr
    assert "git revert" in refused.stderr and git(repo, "rev-parse", "HEAD") == mine
    assert_no_debris(repo)


def test_apply_after_the_branch_moved_refuses_and_says_how_to_take_it(tmp_path: Path) -> None:
    """Issue 38: the user's branch moved after the run started (a commit of theirs): the repair was
    tested on the run's start, not on it — apply refuses (exit 2), changes nothing, and the merge it
    names takes the repair."""
    repo = make_repo(tmp_path / "repo", CALC)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--parallel", "2", "--no-apply", "--json"])
    assert code == 0 and summary["branch"] == f"explore/{summary['run_id']}", err
    (repo / "README.md").write_text("mine\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "my own work meanwhile")
    mine, before = git(repo, "rev-parse", "HEAD"), tree_bytes(repo)
    done = explore(repo, "apply")
    assert done.returncode == 2, done.stderr
    assert "main moved since the run started: 1 commit(s) on top of" in done.stderr, done.stderr
    assert "nothing was changed" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert (
        git(repo, "rev-parse", "HEAD") == mine
        and tree_bytes(repo) == before
        and git(repo, "status", "--porcelain") == ""
    )
    merge = f"git merge refs/explore/runs/{summary['run_id']}"
    assert merge in done.stderr
    git(repo, *merge.split()[1:], "-q", "--no-edit")  # as it says
    assert "return a + b" in (repo / "calc.py").read_text() and (repo / "README.md").read_text() == "mine\n"


def test_apply_and_undo_refuse_plainly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    nothing = explore(repo, "apply")
    assert nothing.returncode == 2 and "no run here has a result to apply" in nothing.stderr
    unknown = explore(repo, "undo", "no-such-run")
    assert unknown.returncode == 2 and "no run 'no-such-run'" in unknown.stderr


def test_clean_older_than_prunes_old_runs_and_orphan_refs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--agent-cmd",
            scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}}),
            "--parallel",
            "1",
            "--max-iterations",
            "1",
            "--no-apply",
            "--json",
        ]
    )
    assert code == 1 and summary["branch"], err
    run_id = summary["run_id"]
    git(
        repo, "update-ref", "refs/explore/runs/gone-run", summary["merged_commit"]
    )  # a run whose folder was removed by hand
    young = explore(repo, "clean", "--older-than", "1d")
    assert young.returncode == 0 and "ref refs/explore/runs/gone-run (its run folder is gone)" in young.stdout
    assert run_id not in young.stdout and git(repo, "branch", "--list", "explore/*") == f"explore/{run_id}"
    bad = explore(repo, "clean", "--older-than", "soon")
    assert bad.returncode == 2 and "--older-than 'soon'" in bad.stderr
    dry = explore(repo, "clean", "--older-than", "0s", "--dry-run")
    assert f"would remove run {run_id}" in dry.stdout and (repo / ".explore" / "runs" / run_id).is_dir()
    done = explore(repo, "clean", "--older-than", "0s")
    assert done.returncode == 0 and f"removed run {run_id}" in done.stdout, done.stderr
    assert git(repo, "branch", "--list", "explore/*") == "" and git(repo, "for-each-ref", "refs/explore/") == ""
    assert not (repo / ".explore" / "runs" / run_id).exists()
    assert explore(repo, "clean").stdout.strip() == "nothing to clean"


def test_the_demo_shows_its_change_and_leaves_nothing_behind(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-m", "explore", "demo", "--json"], capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "+    return price_cents * quantity" in summary["diff"] and "+    if quantity >= 10:" in summary["diff"]
    assert done.stderr.rstrip("\n").splitlines()[-1] == summary["diff"].rstrip("\n").splitlines()[-1]
    assert "changed 1 file (+2 -2): pricing.py" in done.stderr
    assert list(temp.iterdir()) == []  # the demo project is gone
    # and nothing says it stayed: no report path, no command to run in it
    assert summary["report"] is None and f"report: {temp}" not in done.stderr and "explore undo" not in done.stderr
    assert "report: none kept (the demo project is removed as explore ends" in done.stderr
    assert done.stderr.count("the demo project is removed as explore ends") == 1, done.stderr  # said once
    worktrees = tmp_path / "worktrees"  # EXPLORE_WORKTREES_DIR (conftest): not even an empty folder per repository
    assert not worktrees.exists() or list(worktrees.iterdir()) == []
