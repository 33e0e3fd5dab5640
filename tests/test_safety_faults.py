"""Issue 6's and issue 38's acceptance: `explore run` stopped at many points (EXPLORE_FAULT_AT) by
SIGKILL, SIGINT or SIGTERM (EXPLORE_FAULT_SIGNAL) — each phase by each signal —; after each stop
nothing is left behind (after a kill, once `explore clean` ran), and `explore resume` ends where an
uninterrupted run ends. The stops come in chains: one run, each resume stopped again at a later point."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

from conftest import built_once, git, make_repo
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

KILL, INT, TERM = "SIGKILL", "SIGINT", "SIGTERM"

# Where each phase of a run is reached: the run's own step (a checkpoint, a candidate's event, the
# baseline's rerun, the apply), where EXPLORE_FAULT_AT stops it (EXPLORE_FAULT_SIGNAL: how).
PHASES = {
    "baseline": "saved:baseline",
    "flaky-rerun": "baseline-rerun",  # the baseline's failing tests rerun alone (flaky?)
    "propose": "saved:iteration-1-propose",
    "fan-out": "saved:iteration-1-scored-c",  # c scored, a and b still testing
    "validation": "candidate-full",  # a candidate's whole-suite run
    "merge": "merged-before-save",  # the commit on the run's branch, the state not yet saved
    "apply": "apply",  # the run is over, the user's branch not yet moved
}
SIGNALS = (KILL, INT, TERM)


def rotated(k: int) -> list[tuple[str, str]]:
    """Chain k's stop in each phase: phase i by SIGNALS[(i + k) % 3], so the three chains stop every
    phase once by each signal (the 7 × 3 matrix in 21 stops, not 21 runs)."""
    return [(point, SIGNALS[(i + k) % 3]) for i, point in enumerate(PHASES.values())]


def _inserted(steps: list[tuple[str, str]], after: str, *extra: str) -> list[tuple[str, str]]:
    """SIGKILL at the extra points (issue 6's kill -9 bar), right after the step at `after`."""
    at = next(i for i, (point, _) in enumerate(steps) if point == after) + 1
    return [*steps[:at], *((point, KILL) for point in extra), *steps[at:]]


# One run stopped again and again, each `explore resume` stopped at a later point, until the last one
# ends it: every stop is checked where it happens, and the end against one uninterrupted run. A resume
# measures a baseline never finished again (so the baseline's points are reached again), redoes an
# iteration cut before its merge, and adopts a merge made just before a kill. The first step is a new
# run (`explore run`); saved:start and branch-created exist only there.
CHAINS = {
    "rotation-0": _inserted(rotated(0), "merged-before-save", "saved:iteration-2-propose"),
    "rotation-1": [
        ("saved:start", KILL),
        *_inserted(
            _inserted(rotated(1), "saved:iteration-1-propose", "saved:iteration-1-fanout"),
            "merged-before-save",
            "saved:iteration-2-scored-a",
        ),
    ],
    "rotation-2": [
        ("branch-created", KILL),
        *_inserted(rotated(2), "merged-before-save", "saved:iteration-2-scored-b"),
    ],
    # saved:iterating comes before the baseline's last flaky rerun, which runs beside the first
    # proposal (issue 40.4): a new run's first stop, not one after that rerun's
    "after-merges": [("saved:iterating", KILL), ("saved:iteration-1-merged", KILL), ("saved:iteration-2-merged", KILL)],
    "after-iterations": [("saved:iteration-1-done", KILL), ("saved:iteration-2-done", KILL)],
}
NO_CLEAN = "saved:iteration-1-scored-c"
"""Killed mid fan-out with candidates' processes orphaned, `resume` runs without `clean` first: it
kills the strays itself (the next step finds none of the agents' pids alive)."""


@pytest.fixture(scope="module")
def reference_tree(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The uninterrupted run: its final tree and how many commits it added. One run for the session,
    whichever workers run the chains (built_once: a module fixture ran it once per worker)."""

    def reference(tmp: Path) -> str:
        repo = make_repo(tmp / "repo", CALC)
        agent = scripted_agent(tmp, EDITS)
        done = cli(
            ["run", str(repo), *RUN_ARGS, "--agent-cmd", agent, "--json"],
            cwd=tmp,
            env={"EXPLORE_WORKTREES_DIR": str(tmp / "wt")},
        )
        assert done.returncode == 0, done.stderr
        return json.dumps(
            {
                "tree": git(repo, "rev-parse", "main^{tree}"),
                "commits": int(git(repo, "rev-list", "--count", "main")),
                "subjects": subjects(repo),
                "iterations": winners(json.loads(done.stdout.strip().splitlines()[-1])),
            }
        )

    found = json.loads(built_once("safety-reference", tmp_path_factory, reference))
    return {**found, "iterations": [tuple(pair) for pair in found["iterations"]]}  # JSON made them lists


def subjects(repo: Path) -> list[str]:
    """The commit subjects on main, iteration and strategy kept, the winner's letter left out: which of
    two fixes of equal pass rate wins iteration 1 depends on which suite ends first (a stopped loser)."""
    return [
        re.sub(r"candidate [a-z]+:", "candidate ?:", s) for s in git(repo, "log", "--format=%s", "main").splitlines()
    ]


def winners(summary: dict) -> list[tuple[int, bool]]:
    """Each iteration and whether it merged a winner (its letter left out, as in `subjects`)."""
    return [(i["n"], i["winner"] is not None) for i in summary["iterations"]]


def test_the_chains_cover_each_phase_by_each_signal() -> None:
    """The matrix the chains run (pure: no run)."""
    stops = {(point, how) for steps in CHAINS.values() for point, how in steps}
    assert {(point, how) for point in PHASES.values() for how in SIGNALS} <= stops
    firsts = {steps[0][0] for steps in CHAINS.values()}
    assert {"saved:start", "branch-created"} <= firsts  # reached only by a new run
    for steps in CHAINS.values():  # one stop per point and process; a merged iteration is not redone
        points = [point for point, _ in steps]
        assert len(points) == len(set(points))
        for n in (1, 2):
            after = {"merged-before-save", f"saved:iteration-{n}-merged", f"saved:iteration-{n}-done"}
            assert len(after & set(points)) <= 1


@pytest.mark.timeout(900)  # a chain is up to 11 explore processes in a row: 150 s at load 11 on 2 cores
@pytest.mark.parametrize("chain", list(CHAINS))
def test_a_run_stopped_at_every_phase_by_every_signal_resumes_to_the_uninterrupted_result(
    tmp_path: Path, chain: str, reference_tree: dict
) -> None:
    """Issue 6's kill -9 bar and issue 38's matrix: each stop exits 130 (a signal) or is killed; after
    it nothing of the run is left but its branch (a kill: once `explore clean` ran, whose dry run changes
    nothing), the user's branch, refs and tree are as they were; the last resume ends with the
    uninterrupted run's tree, commits, iterations and exit 0."""
    repo = make_repo(tmp_path / "repo", CALC)
    worktrees = tmp_path / "worktrees"
    pidlog = tmp_path / "agents.pids"
    agent = scripted_agent(tmp_path, {**EDITS, "pidlog": str(pidlog)})
    start, refs = git(repo, "rev-parse", "main"), git(repo, "for-each-ref", "refs/heads/main", "refs/tags/")
    adopted: str | None = None
    adopting, dry_run = False, True
    pids: list[int] = []
    try:
        for n, (point, how) in enumerate(CHAINS[chain]):
            where = f"step {n} ({point}, {how})"
            args = ["run", str(repo), *RUN_ARGS, "--agent-cmd", agent, "--json"] if n == 0 else ["resume", "--json"]
            done = cli(args, cwd=repo, env={"EXPLORE_FAULT_AT": point, "EXPLORE_FAULT_SIGNAL": how})
            if adopting:  # the step after a kill between the merge's commit and its state
                assert "adopting" in done.stderr, f"{where}: {done.stderr[-3000:]}"
                adopting = False
            (state_file,) = (repo / ".explore" / "runs").glob("*/state.json")
            state = json.loads(state_file.read_text())
            pids.append(state["pid"])
            if how == KILL:
                assert done.returncode == -signal.SIGKILL, f"{where}: never reached: {done.stderr[-3000:]}"
                if point == "merged-before-save":
                    assert state["merged_commit"] is None, where  # iteration 1's merge: the state never heard of it
                    adopted = git(repo, "rev-parse", f"refs/explore/runs/{state_file.parent.name}")
                    adopting = True
                if point == NO_CLEAN:
                    status = cli(["status", "--json"], cwd=repo)
                    (row,) = json.loads(status.stdout)["runs"]
                    assert row["status"] == "dead" and state["worktrees"], (where, row)
                else:
                    _clean_after_a_kill(repo, worktrees, pidlog, state, where, dry_run)
                    dry_run = False  # the first kill's dry run is checked; the others' clean alone
            else:
                assert done.returncode == 130, f"{where}: {done.stderr[-3000:]}"
                assert "Traceback" not in done.stderr, where
                assert json.loads(done.stdout.strip().splitlines()[-1])["status"] == "interrupted", where
                assert state["status"] == "interrupted" and state["worktrees"] == [] and state["pids"] == [], where
                assert_nothing_left(repo, worktrees, pidlog, keep_branches=(state["branch"],))
                assert not list(Path(tempfile.gettempdir()).glob(f"{homes.PREFIX}{state['pid']}-*")), where
            # the user's tree and refs as they were
            assert git(repo, "rev-parse", "main") == start and git(repo, "status", "--porcelain") == "", where
            assert git(repo, "for-each-ref", "refs/heads/main", "refs/tags/") == refs, where

        resumed = cli(["resume", "--json"], cwd=repo)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert "Traceback" not in resumed.stderr
        summary = json.loads(resumed.stdout.strip().splitlines()[-1])
        run_id = state_file.parent.name
        assert summary["run_id"] == run_id and summary["status"] == "succeeded", summary
        assert summary["final"]["pass_rate"] == 100.0
        # the same result as without the stops, on the user's branch; merged work not redone
        assert git(repo, "rev-parse", "main^{tree}") == reference_tree["tree"]
        assert int(git(repo, "rev-list", "--count", "main")) == reference_tree["commits"]
        assert subjects(repo) == reference_tree["subjects"]
        assert winners(summary) == reference_tree["iterations"]
        assert "## Iteration 2" in Path(summary["report"]).read_text()
        if adopted is not None:  # built on the adopted commit, not a redo
            assert git(repo, "rev-parse", "main^") == adopted
        # applied: no visible branch; the run's result stays under its hidden ref (for undo)
        assert git(repo, "rev-parse", f"refs/explore/runs/{run_id}") == git(repo, "rev-parse", "main")
        assert git(repo, "branch", "--list", "explore/*") == ""
        assert git(repo, "status", "--porcelain") == ""
        assert_nothing_left(repo, worktrees, pidlog, keep_branches=(f"explore/{run_id}",))
        assert cli(["clean"], cwd=repo).stdout.strip() == "nothing to clean"
        # no private home of any process of the chain, the killed ones' too (swept by the next start)
        left = [h for pid in pids for h in Path(tempfile.gettempdir()).glob(f"{homes.PREFIX}{pid}-*")]
        assert not left, left
    finally:
        kill_everything_under(worktrees, repo)


def _clean_after_a_kill(repo: Path, worktrees: Path, pidlog: Path, state: dict, where: str, dry_run: bool) -> None:
    """`explore clean` removes all a kill left but the run's branch when it holds merged work (the
    first time in a chain, its dry run first: it lists what it would remove, and changes nothing; a
    second clean finds nothing)."""
    if dry_run:
        before = (git(repo, "worktree", "list"), git(repo, "branch", "--list", "explore/*"), lock_path(repo).exists())
        dry = cli(["clean", "--dry-run"], cwd=repo)
        assert dry.returncode == 0, f"{where}: {dry.stderr}"
        assert "would remove" in dry.stdout and "stale lock" in dry.stdout, (where, dry.stdout)
        after = (git(repo, "worktree", "list"), git(repo, "branch", "--list", "explore/*"), lock_path(repo).exists())
        assert after == before, where
    cleaned = cli(["clean"], cwd=repo)
    assert cleaned.returncode == 0 and "Traceback" not in cleaned.stderr, f"{where}: {cleaned.stderr}"
    merged = {state["branch"]} if state.get("merged_commit") else set()
    assert_nothing_left(repo, worktrees, pidlog, keep_branches=tuple(merged))
    if dry_run:
        assert cli(["clean"], cwd=repo).stdout.strip() == "nothing to clean", where


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
