"""Issue 6's acceptance: `explore run` SIGKILLed at many points (EXPLORE_FAULT_AT); after each,
`explore clean` leaves nothing behind and `explore resume` ends where an uninterrupted run ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

from conftest import git, make_repo
from explore.edges import homes
from explore.run.state import lock_path
from test_run_e2e import CALC, FIX_ADD, FIX_MUL

# A scripted agent, as an external coding agent's varying answers would be: what it does is chosen
# by the candidate letter. Every start appends its pid to `pidlog`, so the tests can prove that no
# agent outlives the run. `block` makes it say it is ready on one FIFO, then wait forever on another.
AGENT = """\
import binascii, json, os, pathlib, sys
edits = json.loads(pathlib.Path(sys.argv[1]).read_text())
cid = os.environ["EXPLORE_CANDIDATE"]
if edits.get("pidlog"):
    with open(edits["pidlog"], "a") as log:
        log.write(f"{os.getpid()}\\n")
sys.stdin.read()
action = edits.get(os.environ["EXPLORE_ITERATION"] + cid, edits.get(cid))  # "2a": candidate a of iteration 2 only
if action is None:
    sys.exit(0)
if action.get("say"):
    print(action["say"], flush=True)
for name, (old, new) in action.get("replace", {}).items():
    path = pathlib.Path(name)
    path.write_text(path.read_text().replace(old, new, 1))
for name, text in action.get("write", {}).items():
    pathlib.Path(name).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(name).write_text(text)
for name, data in action.get("write_hex", {}).items():
    pathlib.Path(name).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(name).write_bytes(binascii.unhexlify(data))
if "confidence" in action:
    pathlib.Path(os.environ["EXPLORE_RESULT_FILE"]).write_text(json.dumps({"confidence": action["confidence"]}))
if action.get("block"):
    ready, gate = action["block"]
    fd = os.open(ready, os.O_WRONLY)
    os.write(fd, f"{cid} {os.getpid()}\\n".encode())
    os.close(fd)
    open(gate).read()  # nobody ever writes this FIFO: blocks until killed
sys.exit(action.get("exit", 0))
"""


def scripted_agent(tmp_path: Path, edits: dict) -> str:
    """The agent command; rewrite `edits.json` (write_edits) to change its answers, e.g. before a resume."""
    (tmp_path / "agent.py").write_text(AGENT)
    write_edits(tmp_path, edits)
    return f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'edits.json'}"


def write_edits(tmp_path: Path, edits: dict) -> None:
    (tmp_path / "edits.json").write_text(json.dumps(edits))


def cli(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explore", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def live_processes_in(*folders: Path, pids: tuple[int, ...] = ()) -> list[str]:
    """Non-zombie processes that are one of `pids`, or whose working directory or command line is
    inside one of the folders (the run's worktrees, the repo)."""
    marks = [str(f) for f in folders]
    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid", "cwd", "cmdline", "status"]):
        info = proc.info
        if info["pid"] == me or info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cwd, cmdline = info["cwd"] or "", " ".join(info["cmdline"] or [])
        if info["pid"] in pids or any(cwd.startswith(m) for m in marks) or any(m in cmdline for m in marks):
            found.append(f"{info['pid']} {cwd} {cmdline[:200]}")
    return found


def logged_pids(path: Path) -> tuple[int, ...]:
    return tuple(int(line) for line in path.read_text().split()) if path.exists() else ()


def assert_nothing_left(
    repo: Path, worktrees: Path, pidlog: Path | None = None, keep_branches: tuple[str, ...] = ()
) -> None:
    """No worktree but the main one, no lock, no process of the run, no explore/* branch without merged work."""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1, git(repo, "worktree", "list")
    assert not lock_path(repo).exists(), lock_path(repo).read_text()
    assert not worktrees.exists() or not any(p.is_file() for p in worktrees.rglob("*")), sorted(worktrees.rglob("*"))[
        :10
    ]
    leftovers = live_processes_in(worktrees, pids=logged_pids(pidlog) if pidlog else ())
    assert not leftovers, leftovers
    start = git(repo, "rev-list", "--max-parents=0", "HEAD")
    keep_branches += tuple(
        f"explore/runs/{name.removeprefix('explore/')}" for name in keep_branches if name
    )  # their hidden refs
    for line in git(
        repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/explore/", "refs/explore/"
    ).splitlines():
        name, sha = line.split()
        assert name in keep_branches or sha != start, f"{name} holds no merged work"


def kill_everything_under(*folders: Path) -> None:
    """Test hygiene: whatever a failed test left running under its folders."""
    for entry in live_processes_in(*folders):
        try:
            os.kill(int(entry.split()[0]), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# ---------------------------------------------------------------------------- the fault matrix

# c makes no change (rejected at once, so it is scored while a and b still run their tests).
# Different confidences: the winner of iteration 1 is a whatever order the runs end in (two fixes
# that differ only by letter would be decided by whichever suite validated first).
EDITS = {"a": {"replace": FIX_ADD, "confidence": 0.9}, "b": {"replace": FIX_MUL, "confidence": 0.8}}
RUN_ARGS = ["--parallel", "3", "--max-iterations", "5"]

FAULT_POINTS = [
    pytest.param("saved:start"),
    pytest.param("branch-created"),  # the run branch exists, the state saved before it must own it
    pytest.param("saved:baseline"),
    pytest.param("saved:iterating"),
    pytest.param("saved:iteration-1-propose"),
    pytest.param("saved:iteration-1-fanout"),
    pytest.param("saved:iteration-1-scored-c"),  # mid fan-out: a and b still testing
    pytest.param("merged-before-save"),  # iteration 1: commit on the branch, state not yet
    "saved:iteration-1-merged",
    "saved:iteration-1-done",
    "saved:iteration-2-propose",
    "saved:iteration-2-scored-a",  # a makes no change in iteration 2: scored while b tests
    "saved:iteration-2-scored-b",
    "saved:iteration-2-merged",
    pytest.param("saved:iteration-2-done"),
    "baseline-rerun",  # the baseline's failing tests rerun alone (flaky?)
    "candidate-full",  # a candidate's whole-suite run: its validation
    "apply",  # the run is over, the user's branch not yet moved
]


@pytest.fixture(scope="module")
def reference_tree(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The uninterrupted run: its final tree and how many commits it added."""
    tmp = tmp_path_factory.mktemp("reference")
    repo = make_repo(tmp / "repo", CALC)
    agent = scripted_agent(tmp, EDITS)
    done = cli(
        ["run", str(repo), *RUN_ARGS, "--agent-cmd", agent, "--json"],
        cwd=tmp,
        env={"EXPLORE_WORKTREES_DIR": str(tmp / "wt")},
    )
    assert done.returncode == 0, done.stderr
    return {
        "tree": git(repo, "rev-parse", "main^{tree}"),
        "commits": int(git(repo, "rev-list", "--count", "main")),
        "subjects": git(repo, "log", "--format=%s", "main").splitlines(),
        "iterations": [(i["n"], i["winner"]) for i in json.loads(done.stdout.strip().splitlines()[-1])["iterations"]],
    }


@pytest.mark.parametrize("fault", FAULT_POINTS)
def test_sigkill_then_clean_then_resume_ends_like_an_uninterrupted_run(
    tmp_path: Path, fault: str, reference_tree: dict
) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    worktrees = tmp_path / "worktrees"
    pidlog = tmp_path / "agents.pids"
    agent = scripted_agent(tmp_path, {**EDITS, "pidlog": str(pidlog)})
    try:
        killed = cli(
            ["run", str(repo), *RUN_ARGS, "--agent-cmd", agent, "--json"], cwd=tmp_path, env={"EXPLORE_FAULT_AT": fault}
        )
        assert killed.returncode == -signal.SIGKILL, f"the fault point {fault} was never reached: {killed.stderr}"
        (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
        run_id = state_file.parent.name
        # the dry run lists, and changes nothing
        before = (
            git(repo, "worktree", "list"),
            git(repo, "branch", "--list", "explore/*"),
            lock_path(repo).exists(),
        )
        dry = cli(["clean", "--dry-run"], cwd=repo)
        assert dry.returncode == 0, dry.stderr
        assert "would remove" in dry.stdout and "stale lock" in dry.stdout
        assert (
            git(repo, "worktree", "list"),
            git(repo, "branch", "--list", "explore/*"),
            lock_path(repo).exists(),
        ) == before

        cleaned = cli(["clean"], cwd=repo)
        assert cleaned.returncode == 0 and "Traceback" not in cleaned.stderr, cleaned.stderr
        state = json.loads(state_file.read_text())
        merged = {state["branch"]} if state.get("merged_commit") else set()
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=tuple(merged))
        assert cli(["clean"], cwd=repo).stdout.strip() == "nothing to clean"

        resumed = cli(["resume", "--json"], cwd=repo)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        summary = json.loads(resumed.stdout.strip().splitlines()[-1])
        assert (
            summary["run_id"] == run_id and summary["status"] == "succeeded" and summary["final"]["pass_rate"] == 100.0
        )
        assert "Traceback" not in resumed.stderr
        # the same result as without the kill, on the user's branch; merged work not redone
        assert git(repo, "rev-parse", "main^{tree}") == reference_tree["tree"]
        assert int(git(repo, "rev-list", "--count", "main")) == reference_tree["commits"]
        # applied: no visible branch; the run's result stays under its hidden ref (for undo)
        assert git(repo, "rev-parse", f"refs/explore/runs/{run_id}") == git(repo, "rev-parse", "main")
        assert git(repo, "branch", "--list", "explore/*") == ""
        assert git(repo, "status", "--porcelain") == ""
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(f"explore/{run_id}",))
    finally:
        kill_everything_under(worktrees, repo)


def test_resume_without_clean_after_a_kill_mid_fan_out_adopts_and_cleans_up(
    tmp_path: Path, reference_tree: dict
) -> None:
    """Killed mid scoring, with candidates' pytest processes orphaned: `resume` alone (no clean
    first) kills the strays, finishes, and leaves nothing; `clean` then finds nothing to do."""
    repo = make_repo(tmp_path / "repo", CALC)
    worktrees = tmp_path / "worktrees"
    pidlog = tmp_path / "agents.pids"
    agent = scripted_agent(tmp_path, {**EDITS, "pidlog": str(pidlog)})
    try:
        killed = cli(
            ["run", str(repo), *RUN_ARGS, "--agent-cmd", agent],
            cwd=tmp_path,
            env={"EXPLORE_FAULT_AT": "saved:iteration-1-scored-c"},
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
        state = json.loads(state_file.read_text())
        assert state["status"] == "running" and state["phase"] == "iteration-1-scored-c"
        assert state["worktrees"], "the state names the worktrees clean and resume must remove"

        status = cli(["status", "--json"], cwd=repo)
        (row,) = json.loads(status.stdout)["runs"]
        assert row["status"] == "dead" and row["run_id"] == state_file.parent.name

        resumed = cli(["resume", state_file.parent.name, "--json"], cwd=repo)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert git(repo, "rev-parse", "main^{tree}") == reference_tree["tree"]
        assert int(git(repo, "rev-list", "--count", "main")) == reference_tree["commits"]
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(f"explore/{state_file.parent.name}",))
        assert cli(["clean"], cwd=repo).stdout.strip() == "nothing to clean"
    finally:
        kill_everything_under(worktrees, repo)


def test_resume_adopts_a_merge_committed_just_before_the_kill(tmp_path: Path, reference_tree: dict) -> None:
    """Between the merge commit and the state write: the commit is adopted, not redone."""
    repo = make_repo(tmp_path / "repo", CALC)
    worktrees = tmp_path / "worktrees"
    agent = scripted_agent(tmp_path, EDITS)
    try:
        killed = cli(
            ["run", str(repo), *RUN_ARGS, "--agent-cmd", agent],
            cwd=tmp_path,
            env={"EXPLORE_FAULT_AT": "merged-before-save"},
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
        run_id = state_file.parent.name
        first_merge = git(repo, "rev-parse", f"explore/{run_id}")
        assert json.loads(state_file.read_text())["merged_commit"] is None  # the state never heard of it
        resumed = cli(["resume", "--json"], cwd=repo)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert "adopting" in resumed.stderr
        summary = json.loads(resumed.stdout.strip().splitlines()[-1])
        assert git(repo, "rev-parse", "main^{tree}") == reference_tree["tree"]
        assert git(repo, "rev-parse", "main^") == first_merge  # built on the adopted commit, not a redo
        assert int(git(repo, "rev-list", "--count", "main")) == reference_tree["commits"]
        assert summary["merged_commit"] == git(repo, "rev-parse", "main")
        assert_nothing_left(repo, worktrees, keep_branches=(f"explore/{run_id}",))
    finally:
        kill_everything_under(worktrees, repo)


@pytest.mark.parametrize("fault", ["merged-before-save", "saved:iteration-1-merged", "saved:iteration-2-merged"])
def test_a_kill_right_after_a_merge_keeps_that_iterations_record(
    tmp_path: Path, fault: str, reference_tree: dict
) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    agent = scripted_agent(tmp_path, EDITS)
    try:
        killed = cli(["run", str(repo), *RUN_ARGS, "--agent-cmd", agent], cwd=tmp_path, env={"EXPLORE_FAULT_AT": fault})
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        resumed = cli(["resume", "--json"], cwd=repo)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        summary = json.loads(resumed.stdout.strip().splitlines()[-1])
        assert git(repo, "rev-parse", "main^{tree}") == reference_tree["tree"]
        assert [(i["n"], i["winner"]) for i in summary["iterations"]] == reference_tree["iterations"], resumed.stderr[
            -3000:
        ]
        assert git(repo, "log", "--format=%s", "main").splitlines() == reference_tree["subjects"]
        assert "## Iteration 2" in Path(summary["report"]).read_text()
    finally:
        kill_everything_under(tmp_path / "worktrees", repo)


# ---------------------------------------------------------------------------- each phase, each signal

# Where each phase of a run is reached: the run's own step (a checkpoint, a candidate's event, the
# rerun, the apply), where EXPLORE_FAULT_SIGNAL makes it signal itself. SIGKILL at each is in
# FAULT_POINTS above (saved:baseline, baseline-rerun, saved:iteration-1-propose,
# saved:iteration-1-scored-c, candidate-full, merged-before-save, apply).
PHASES = {
    "baseline": "saved:baseline",
    "flaky-rerun": "baseline-rerun",
    "propose": "saved:iteration-1-propose",
    "fan-out": "saved:iteration-1-scored-c",  # a and b still testing
    "validation": "candidate-full",
    "merge": "merged-before-save",
    "apply": "apply",
}


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", list(PHASES))
def test_a_signal_in_each_phase_exits_130_leaves_nothing_and_resume_ends_like_an_uninterrupted_run(
    tmp_path: Path, phase: str, signame: str, reference_tree: dict
) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    worktrees = tmp_path / "worktrees"
    pidlog = tmp_path / "agents.pids"
    agent = scripted_agent(tmp_path, {**EDITS, "pidlog": str(pidlog)})
    start, refs = git(repo, "rev-parse", "main"), git(repo, "for-each-ref", "refs/heads/main", "refs/tags/")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "explore", "run", str(repo), *RUN_ARGS, "--agent-cmd", agent, "--json"],
            cwd=tmp_path,
            env={**os.environ, "EXPLORE_FAULT_AT": PHASES[phase], "EXPLORE_FAULT_SIGNAL": signame},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 130, err[-3000:]
        assert "Traceback" not in err
        assert json.loads(out.strip().splitlines()[-1])["status"] == "interrupted"
        (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
        state = json.loads(state_file.read_text())
        assert state["status"] == "interrupted" and state["worktrees"] == [] and state["pids"] == []
        # the user's tree and refs as they were; nothing of the run's left but its branch
        assert git(repo, "rev-parse", "main") == start and git(repo, "status", "--porcelain") == ""
        assert git(repo, "for-each-ref", "refs/heads/main", "refs/tags/") == refs
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(state["branch"],))
        assert not list(Path(tempfile.gettempdir()).glob(f"{homes.PREFIX}{proc.pid}-*"))

        resumed = cli(["resume", "--json"], cwd=repo)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        summary = json.loads(resumed.stdout.strip().splitlines()[-1])
        assert summary["run_id"] == state_file.parent.name and summary["status"] == "succeeded"
        assert git(repo, "rev-parse", "main^{tree}") == reference_tree["tree"]
        assert int(git(repo, "rev-list", "--count", "main")) == reference_tree["commits"]
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(f"explore/{state_file.parent.name}",))
    finally:
        kill_everything_under(worktrees, repo)


def test_scoring_against_a_baseline_never_measured_is_an_internal_error() -> None:
    """The seam into scoring (run/transitions.yardstick) refuses a run whose baseline was not measured
    to its end, whatever its counts say; a state file from before `baselined` counts as measured when
    it holds a baseline test, and as not measured (so resume measures it) when it holds none."""
    from explore.model.errors import InternalError
    from explore.model.runstate import RunState
    from explore.run import transitions

    unmeasured = RunState(run_id="r", repo="/x")
    with pytest.raises(InternalError, match="never measured"):
        transitions.yardstick(unmeasured)
    old = json.loads(unmeasured.model_dump_json())
    del old["baselined"]
    assert not RunState.model_validate(old).baselined
    old["baseline_ids"] = ["tests/test_calc.py::test_add"]
    measured = RunState.model_validate(old)
    assert measured.baselined and transitions.yardstick(measured).ids == {"tests/test_calc.py::test_add"}
    skipped_only = RunState.model_validate({**old, "baseline_ids": [], "baseline_skipped": ["t.py::test_s"]})
    assert skipped_only.baselined  # a suite whose every test is skipped was measured: nothing to repair
