"""Issue 23's acceptance: a candidate reaches nothing but its own worktree. What it writes to the
shared git dir or the user's checkout is detected, put back byte for byte and rejects it; with
the sandbox (bubblewrap) those writes fail inside it. Real git, real agents, real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, make_repo, run_cli
from explore.edges import landlock, sandbox
from explore.model.errors import UsageError
from test_bad_input import ONE_BUG
from test_safety_faults import assert_nothing_left, kill_everything_under, live_processes_in

# Candidate a fixes `add` AND, from inside its worktree, plants a hook in the shared git dir, adds
# an alias to its config, appends to the user's calc.py and creates planted.txt in the user's
# checkout (and, with `elsewhere`, writes ~/.bashrc and a file next to the repository); candidate b
# only fixes `add`. Each attempt's outcome goes to the hypothesis, so a test sees what failed.
AGENT = """\
import json, os, pathlib, subprocess, sys, time
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
cid = os.environ["EXPLORE_CANDIDATE"]
sys.stdin.read()
calc = pathlib.Path("calc.py")
calc.write_text(calc.read_text().replace("return a - b", "return a + b" if cid == "a" else "return b + a", 1))
tries = {}
def attempt(name, action):
    try:
        action()
        tries[name] = "done"
    except Exception as exc:
        tries[name] = type(exc).__name__
if cid == "a":
    common = pathlib.Path(subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                         capture_output=True, text=True, check=True).stdout.strip())
    user = common.parent
    hook = common / "hooks" / "post-commit"
    if "hostile" in plan:
        attempt("hook", lambda: (hook.write_text("#!/bin/sh\\ntouch HOOK_RAN\\n"), hook.chmod(0o755)))
        attempt("alias", lambda: subprocess.run(["git", "config", "--file", str(common / "config"), "alias.planted", "!touch planted"], check=True,
                                                capture_output=True))
        attempt("calc", lambda: open(user / "calc.py", "a").write("# planted\\n"))
        attempt("planted", lambda: (user / "planted.txt").write_text("planted\\n"))
    if "elsewhere" in plan:
        attempt("bashrc", lambda: open(os.path.expanduser("~/.bashrc"), "a").write("echo planted\\n"))
        attempt("other", lambda: (user.parent / "other.txt").write_text("planted\\n"))
    if "daemon" in plan:  # double fork + setsid: it leaves the agent's process group and tree
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                pathlib.Path(plan["daemon"]).write_text(str(os.getpid()))
                time.sleep(2)
                open(user / "calc.py", "a").write("# from the daemon\\n")
                os._exit(0)
            os._exit(0)
        os.wait()
        while not pathlib.Path(plan["daemon"]).exists():
            time.sleep(0.01)
pathlib.Path(os.environ["EXPLORE_RESULT_FILE"]).write_text(json.dumps({"confidence": 0.99 if cid == "a" else 0.3, "hypothesis": json.dumps(tries)}))
"""


def agent(tmp_path: Path, **plan: str) -> str:
    folder = tmp_path / "agent"
    folder.mkdir(exist_ok=True)
    (folder / "agent.py").write_text(AGENT)
    (folder / "plan.json").write_text(json.dumps(plan))
    return f"{sys.executable} {folder / 'agent.py'} {folder / 'plan.json'}"


def guarded(repo: Path) -> dict[str, bytes]:
    """The bytes of the git dir's hooks and config and of the user's files (.explore: explore's own)."""
    found = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_file() and (
            rel == ".git/config" or rel.startswith(".git/hooks/") or not rel.startswith((".git/", ".explore/"))
        ):
            found[rel] = path.read_bytes()
    return found


@pytest.fixture(autouse=True)
def _mode_from_the_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXPLORE_SANDBOX")  # each test's [tool.explore] sandbox decides


def run(repo: Path, command: str) -> tuple[int, dict, str]:
    code, summary, err = run_cli(
        ["run", str(repo), "--parallel", "2", "--max-iterations", "1", "--agent-cmd", command, "--json"]
    )
    assert summary is not None, err[-3000:]
    return code, summary, err


def assert_untouched(repo: Path, start: dict[str, bytes], summary: dict) -> None:
    """Hooks, config and the user's files as they were, but for the merged repair; the user's
    next commit runs no planted hook; no worktree, branch or process of the run is left."""
    now = guarded(repo)
    merged = git(repo, "diff", "--name-only", git(repo, "rev-list", "--max-parents=0", "HEAD"), "HEAD").splitlines()
    assert {k: v for k, v in now.items() if k not in merged} == {k: v for k, v in start.items() if k not in merged}
    for name in merged:  # the merged repair, nothing else
        assert (
            now[name]
            == subprocess.run(["git", "show", f"HEAD:{name}"], cwd=repo, capture_output=True, check=True).stdout
        )
    assert git(repo, "status", "--porcelain") == ""
    git(repo, "commit", "-q", "--allow-empty", "-m", "the user's next commit")
    assert not (repo / "HOOK_RAN").exists()
    assert_nothing_left(repo, repo.parent / "worktrees", keep_branches=(summary["branch"],))


def test_hostile_candidate_without_sandbox_is_rejected_and_undone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ONE_BUG, explore_config='sandbox = "off"\n')
    start = guarded(repo)
    try:
        code, summary, err = run(repo, agent(tmp_path, hostile="yes"))
        assert code == 0, err[-3000:]
        assert "candidates are not sandboxed" in err
        a, b = summary["iterations"][0]["candidates"]
        assert a["status"] == "rejected", a
        for path in (".git/hooks/post-commit", ".git/config", "calc.py", "planted.txt"):
            assert path in a["reason"] and path in a["outside_writes"], (path, a["reason"])
        assert b["status"] == "ok" and summary["iterations"][0]["winner"] == "b", summary["iterations"][0]
        assert summary["applied"] is True and "return b + a" in (repo / "calc.py").read_text()
        report = Path(summary["report"]).read_text()
        assert "Writes outside the worktrees" in report and ".git/hooks/post-commit" in report
        assert_untouched(repo, start, summary)
    finally:
        kill_everything_under(tmp_path / "worktrees", tmp_path / "agent")


def test_hostile_candidate_in_the_sandbox_writes_nothing_outside(tmp_path: Path, bwrap: str) -> None:
    repo = make_repo(tmp_path / "repo", ONE_BUG, explore_config='sandbox = "require"\n')
    start = guarded(repo)
    try:
        code, summary, err = run(repo, agent(tmp_path, hostile="yes"))
        assert code == 0, err[-3000:]
        assert "candidates are sandboxed (bubblewrap" in err
        a, b = summary["iterations"][0]["candidates"]
        tries = json.loads(a["hypothesis"])
        assert set(tries) == {"hook", "alias", "calc", "planted"} and "done" not in tries.values(), (
            tries
        )  # every write failed inside
        assert a["outside_writes"] == [] and b["outside_writes"] == []
        assert a["status"] == b["status"] == "ok" and summary["iterations"][0]["winner"] == "a"
        assert summary["iterations"][0]["candidates"][0]["files_changed"] == ["calc.py"]
        assert summary["applied"] is True and "return a + b" in (repo / "calc.py").read_text()
        assert_untouched(repo, start, summary)
    finally:
        kill_everything_under(tmp_path / "worktrees", tmp_path / "agent")


@pytest.mark.parametrize("mode", ["off", "require"])
def test_a_daemon_dies_with_its_candidate(tmp_path: Path, mode: str, request: pytest.FixtureRequest) -> None:
    """a's agent leaves a double-forked, setsid daemon that would append to the user's calc.py 2 s later."""
    if mode == "require":
        request.getfixturevalue("bwrap")
    repo = make_repo(tmp_path / "repo", ONE_BUG, explore_config=f'sandbox = "{mode}"\n')
    start = guarded(repo)
    try:
        code, summary, err = run(repo, agent(tmp_path, daemon="daemon.pid"))
        assert code == 0, err[-3000:]
        assert not live_processes_in(tmp_path / "agent")  # the daemon is dead before the run ends
        assert summary["iterations"][0]["candidates"][0]["outside_writes"] == []
        assert_untouched(repo, start, summary)
    finally:
        kill_everything_under(tmp_path / "worktrees", tmp_path / "agent")


@pytest.mark.parametrize("mode", ["off", "require"])
def test_writes_to_home_and_other_folders(
    tmp_path: Path, mode: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """a's agent appends to ~/.bashrc (a temporary HOME) and writes a file next to the repository:
    prevented in the sandbox, named in the report without it."""
    if mode == "require":
        request.getfixturevalue("bwrap")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the user's\n")
    monkeypatch.setenv("HOME", str(home))
    repo = make_repo(tmp_path / "repo", ONE_BUG, explore_config=f'sandbox = "{mode}"\n')
    try:
        code, summary, err = run(repo, agent(tmp_path, elsewhere="yes"))
        assert code == 0, err[-3000:]
        a = summary["iterations"][0]["candidates"][0]
        bashrc, other = str(home / ".bashrc"), str(tmp_path / "other.txt")
        if mode == "require":
            assert json.loads(a["hypothesis"]) == {"bashrc": "OSError", "other": "OSError"}
            assert (home / ".bashrc").read_text() == "# the user's\n" and not (tmp_path / "other.txt").exists()
            assert a["outside_writes"] == []
        else:
            assert bashrc in a["outside_writes"] and other in a["outside_writes"], a
            report = Path(summary["report"]).read_text()
            assert bashrc in report and other in report
    finally:
        kill_everything_under(tmp_path / "worktrees", tmp_path / "agent")


def test_require_without_bubblewrap_is_met_by_landlock_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without bubblewrap, `require` runs candidates under Landlock where the kernel offers it;
    without either it is refused, naming the install command."""
    repo = make_repo(tmp_path / "repo", ONE_BUG, explore_config='sandbox = "require"\n')
    bin_dir = tmp_path / "bin"  # a PATH with git and no bwrap
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(
        subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    )
    monkeypatch.setenv("PATH", str(bin_dir))
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", "true", "--json"])
    assert summary is not None, err
    if landlock.abi() > 0:
        assert "candidates are sandboxed (Landlock" in err and summary["sandbox"]["mechanism"] == "landlock", err
        assert summary["sandbox"]["why"] == "bubblewrap is not installed"
    else:
        assert code == 2 and summary["exit_code"] == 2, err
        assert "apt-get install bubblewrap" in summary["error"] and 'sandbox = "require"' in summary["error"]


def test_require_without_bubblewrap_or_landlock_is_refused() -> None:
    with pytest.raises(UsageError) as refused:
        sandbox.choose("require", "bubblewrap is not installed", 0, "the kernel offers no Landlock")
    assert "apt-get install bubblewrap" in str(refused.value) and 'sandbox = "require"' in str(refused.value)
    assert "the kernel offers no Landlock" in str(refused.value)
    unconfined = sandbox.choose("auto", "bubblewrap is not installed", 0, "the kernel offers no Landlock")
    assert unconfined.mechanism == "none" and "candidates are not sandboxed" in unconfined.note
    confined = sandbox.choose("auto", "bubblewrap is not installed", 7, "")
    assert confined.mechanism == "landlock" and confined.note.startswith("candidates are sandboxed (Landlock ABI 7")
