"""What runs leave on disk, for `explore status` and `explore clean`."""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path
from typing import Any

import git
import psutil

from ..edges import gitrepo
from ..edges.procs import kill_tree
from ..edges.worktrees import default_root
from ..model.runstate import ENDED, RunState
from . import applying, state


def _dir_size(path: Path) -> int:
    total = 0
    if path.is_dir():
        for item in path.rglob("*"):
            try:
                if item.is_file() and not item.is_symlink():
                    total += item.stat().st_size
            except OSError:
                pass
    return total


def describe(info: gitrepo.RepoInfo, run: RunState) -> dict[str, Any]:
    alive = run.status == "running" and state.pid_alive(run.pid or -1)
    return {
        "run_id": run.run_id,
        "status": run.status if run.status != "running" or alive else "dead",
        "phase": str(run.phase),
        "iterations": len(run.iterations),
        "baseline_pass_rate": run.baseline.pass_rate,
        "pass_rate": run.current.pass_rate,
        "branch": run.branch if run.branch and gitrepo.branch_commit(info.repo, run.branch) else None,
        "applied": run.application is not None,
        "merged_commit": run.merged_commit,
        "worktree_bytes": sum(_dir_size(Path(p)) for p in run.worktrees),
        "stop_reason": run.stop_reason,
    }


def _explore_worktrees(repo: git.Repo, known: set[str], runs: Collection[str] = ()) -> list[str]:
    """Worktrees registered in git that belong to explore runs: recorded in their state, or in the
    folder of one of `runs` (`<pool>/<run id>/<slot>`: made after the state's last checkpoint, by a
    run killed before the next one)."""
    found = []
    for block in repo.git.worktree("list", "--porcelain").split("\n\n"):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("worktree "):
            continue
        path = lines[0][len("worktree ") :]
        if path in known or Path(path).parent.name in runs:
            found.append(path)
    return found


AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """`30m`, `12h`, `7d`, `2w` (a bare number is days) → seconds."""
    import re

    from ..model.errors import UsageError

    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not found:
        raise UsageError(f"--older-than {text!r}: give an age such as 30m, 12h, 7d or 2w")
    return float(found.group(1)) * AGE_UNITS[found.group(2) or "d"]


def prune(info: gitrepo.RepoInfo, older_than: float, dry_run: bool = False, now: float | None = None) -> list[str]:
    """Runs that ended (or died) more than older_than seconds ago: their folder, their hidden ref,
    and their branch while it still points at their result (a branch you moved is yours)."""
    import time

    now = time.time() if now is None else now
    actions = []
    for run in state.all_runs(info.root):
        if run.started_at > now - older_than or (run.status == "running" and state.pid_alive(run.pid or -1)):
            continue
        days = (now - run.started_at) / 86400
        actions.append(f"run {run.run_id} ({run.status}, started {days:.1f} days ago)")
        if dry_run:
            continue
        tip = applying.run_tip(info.repo, run)
        if run.branch and gitrepo.branch_commit(info.repo, run.branch) in (tip, run.merged_commit, run.base_commit):
            gitrepo.delete_branch(info.repo, run.branch)
        gitrepo.delete_ref(info.repo, gitrepo.run_ref(run.run_id))
        shutil.rmtree(state.run_dir(info.root, run.run_id), ignore_errors=True)
    return actions


def clean(info: gitrepo.RepoInfo, dry_run: bool = False) -> list[str]:
    """Worktrees, processes and run branches with nothing merged left by dead runs; stale locks;
    hidden refs of runs whose folder is gone."""
    actions: list[str] = []
    runs = state.all_runs(info.root)
    holder = state.read_lock(info.root)
    live = {holder.get("run_id")} if holder and state.pid_alive(holder.get("pid", -1), holder.get("started")) else set()
    dead = [r for r in runs if r.run_id not in live and not (r.status == "running" and state.pid_alive(r.pid or -1))]
    known = {p for r in dead for p in r.worktrees}
    for path in _explore_worktrees(info.repo, known, {r.run_id for r in dead}):
        actions.append(f"worktree {path}")
        if not dry_run:
            _kill_inside(path)  # processes the run started after its last checkpoint (not in its state)
            try:
                info.repo.git.worktree("remove", "--force", "--force", path)
            except git.GitCommandError:
                shutil.rmtree(path, ignore_errors=True)
    for path in sorted(known):
        if Path(path).exists() and f"worktree {path}" not in actions:
            actions.append(f"worktree folder {path}")
            if not dry_run:
                shutil.rmtree(path, ignore_errors=True)
    dead_ids = {r.run_id for r in dead}
    pools = {Path(p).parent for p in known if Path(p).parent.name in dead_ids}
    pools |= {default_root(info.root) / r for r in dead_ids}  # killed before its first worktree was recorded
    for pool in sorted(pools):
        if pool.exists():  # the run's pool folder: explore's own index files of its worktrees
            actions.append(f"worktree folder {pool}")
            if not dry_run:
                shutil.rmtree(pool, ignore_errors=True)
    prunable = info.repo.git.worktree("prune", "--dry-run", "--verbose")
    if prunable.strip():
        actions.append("stale worktree records (git worktree prune)")
        if not dry_run:
            info.repo.git.worktree("prune")
    for run in dead:
        for pid in run.pids:
            if _is_ours(pid, run):
                actions.append(f"process {pid} of run {run.run_id}")
        if not dry_run:
            kill_strays(run)
        # A branch still at the run's base holds nothing (resume recreates it); one that moved
        # holds merged work, even when the state file never learnt of it.
        if run.branch and gitrepo.branch_commit(info.repo, run.branch) == run.base_commit:
            actions.append(f"branch {run.branch} (nothing merged)")
            if not dry_run:
                gitrepo.delete_branch(info.repo, run.branch)
                gitrepo.delete_ref(info.repo, gitrepo.run_ref(run.run_id))
        if run.status == "running":
            actions.append(f"mark run {run.run_id} as interrupted")
            if not dry_run:
                state.save(info.root, ended_by_death(run))
    known_runs = {r.run_id for r in runs}
    for ref in info.repo.git.for_each_ref("--format=%(refname)", gitrepo.RUNS_NAMESPACE).split():
        if ref.removeprefix(gitrepo.RUNS_NAMESPACE) not in known_runs:
            actions.append(f"ref {ref} (its run folder is gone)")
            if not dry_run:
                gitrepo.delete_ref(info.repo, ref)
    if holder and not live:
        actions.append(f"stale lock of run {holder.get('run_id')} (pid {holder.get('pid')})")
        if not dry_run:
            state.lock_path(info.root).unlink(missing_ok=True)
    return actions


def rollback(info: gitrepo.RepoInfo, run_id: str, to: int | None) -> str:
    """Point the run branch at the commit of an earlier iteration, recorded in state for resume."""
    from ..model.errors import UsageError

    run = state.load(info.root, run_id)
    if run.status == "running" and state.pid_alive(run.pid or -1):
        raise UsageError(f"run {run_id} is still running (pid {run.pid}); stop it first")
    merged = [(r.n, r.commit) for r in run.iterations if r.commit]
    target_n = to if to is not None else (merged[-2][0] if len(merged) > 1 else 0)
    if target_n < 0 or target_n > len(run.iterations):
        raise UsageError(f"--to {target_n} is not an iteration of run {run_id} (0–{len(run.iterations)})")
    commit = run.base_commit
    for n, sha in merged:
        if n <= target_n:
            commit = sha
    branch = run.branch or f"explore/{run_id}"
    rolled = run.model_copy(
        update={
            "branch": branch,
            "current_commit": commit,
            "merged_commit": None if commit == run.base_commit else commit,
            "iterations": [r for r in run.iterations if r.n <= target_n],
            "status": "interrupted" if run.status in ENDED else run.status,
            "stop_reason": f"rolled back to iteration {target_n}; `explore resume {run_id}` continues from there",
        }
    )
    applying.move_run(info.repo, rolled, commit)
    state.save(info.root, rolled)
    return f"{branch} now at {commit[:10]} (iteration {target_n}); continue with: explore resume {run_id}"


def ended_by_death(run: RunState) -> RunState:
    """A run whose process died, as `clean` records it: interrupted, resumable, nothing running."""
    return run.model_copy(
        update={
            "status": "interrupted",
            "stop_reason": "its process died; `explore resume` continues",
            "worktrees": [],
            "pids": [],
        }
    )


def kill_strays(run: RunState) -> None:
    """Process trees a dead run left running in its worktrees."""
    for pid in run.pids:
        if _is_ours(pid, run):
            kill_tree(pid)


def _kill_inside(folder: str) -> None:
    """Every process tree working inside folder (a dead run's worktree)."""
    me = psutil.Process().pid
    for proc in psutil.process_iter(["pid", "cwd"]):
        cwd = proc.info.get("cwd") or ""
        if proc.info["pid"] != me and (cwd == folder or cwd.startswith(folder + "/")):
            kill_tree(proc.info["pid"])


def _is_ours(pid: int, run: RunState) -> bool:
    """A recorded pid is only killed when it still runs inside one of the run's worktrees."""
    try:
        cwd = psutil.Process(pid).cwd()
    except psutil.Error:
        return False
    return any(cwd.startswith(p) for p in run.worktrees)
